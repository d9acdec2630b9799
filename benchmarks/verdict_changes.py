"""Which target verdicts a change of the registry moves: per source counts before and after, and every target
whose verdict changed, with its failing checks' causes after.

    python benchmarks/verdict_changes.py REV            # the registry at git revision REV against the working tree
    python benchmarks/verdict_changes.py REV --old-rule # REV's verdicts by the rule before evidence-linked causes

Verdicts are predicted from the registry alone (:func:`shallowflow.verdicts.registered_verdicts`): a build
whose chapters agree with the registry reaches exactly these (the site test compares them).  ``--old-rule``
reads REV with the rule of the book before causes needed evidence (87f56a9): a target whose failing checks
were all registered ``erratum``/``convention`` read "reproduced, source erratum shown", whatever proved it.
"""
from __future__ import annotations

import argparse
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

from shallowflow import verdicts as V


def registry_at(rev: str) -> dict:
    root = V.repo_root()
    files = subprocess.run(["git", "ls-tree", "--name-only", rev, "verdicts/"], cwd=root, capture_output=True,
                           text=True, check=True).stdout.split()
    tmp = Path(tempfile.mkdtemp())
    for f in files:
        if f.endswith(".yml"):
            (tmp / Path(f).name).write_text(subprocess.run(["git", "show", f"{rev}:{f}"], cwd=root,
                                                           capture_output=True, text=True, check=True).stdout)
    return V.load_registry(tmp)


def old_rule(registry: dict, profile: str = "book") -> dict[str, str]:
    out = {}
    for key, entry in registry["targets"].items():
        checks = [c or {} for c in (entry.get("checks") or {}).values() if (c or {}).get(profile, V.NOT_RUN) != V.NOT_RUN]
        failing = [c for c in checks if c.get(profile) != V.PASS]
        if entry.get("checks") and not checks:
            out[key] = "not run at this scale"
        elif not checks:
            out[key] = "illustration" if entry.get("illustration") else "not attempted"
        elif not failing:
            out[key] = "reproduced"
        elif all(c.get("cause") in V.SOURCE_CAUSES for c in failing):
            out[key] = "reproduced, source erratum shown"
        else:
            out[key] = "not reproduced" if len(failing) == len(checks) else "partly"
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rev")
    ap.add_argument("--old-rule", action="store_true")
    ap.add_argument("--profile", default="book")
    args = ap.parse_args()
    before_reg, after_reg = registry_at(args.rev), V.load_registry()
    before = old_rule(before_reg, args.profile) if args.old_rule else V.registered_verdicts(before_reg, args.profile)
    after = V.registered_verdicts(after_reg, args.profile)
    for source in sorted(after_reg["sources"]):
        b = Counter(v for k, v in before.items() if k.startswith(source + ":"))
        a = Counter(v for k, v in after.items() if k.startswith(source + ":"))
        print(f"{source}: before {dict(b)}\n     after  {dict(a)}")
    print(f"all: before {dict(Counter(before.values()))}\n     after  {dict(Counter(after.values()))}")
    print("\nchanged targets (before -> after; the failing checks' causes after):")
    for key in sorted(set(before) | set(after)):
        if before.get(key) != after.get(key):
            entry = after_reg["targets"].get(key) or {}
            causes = ", ".join(f"{n}: {(c or {}).get('cause', '?')}" for n, c in (entry.get("checks") or {}).items()
                               if (c or {}).get(args.profile) == V.FAIL)
            print(f"  {key}: {before.get(key, '(new)')} -> {after.get(key, '(removed)')}  [{causes}]")


if __name__ == "__main__":
    main()
