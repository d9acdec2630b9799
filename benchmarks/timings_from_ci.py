"""Refresh ``params/timings.json`` from the log of a fresh-clone ``.ci/run``.

    python benchmarks/timings_from_ci.py CI_LOG COMMIT [NOTE]

``shallowflow run --all --profile P`` prints one line per page, ``<seconds> s  <chapter>``, measured on the CI
machine's two workers; this reads those of the smoke and the book edition and writes them, with the commit and the
note, as the chapters' measured execution times (the build's task order and ``shallowflow run ... --estimate``'s
book-scale basis read them).  Nothing is written unless both editions are complete in the log.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

LINE = re.compile(r"^\s+([0-9.]+) s\s+(\S+)\s*$")
START = re.compile(r"shallowflow run --all --profile (\w+)")


def parse(text: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    edition = None
    for line in text.splitlines():
        m = START.search(line)
        if m:
            edition = m.group(1)
            out[edition] = {}
            continue
        m = LINE.match(line)
        if edition and m:
            out[edition][m.group(2)] = float(m.group(1))
        elif line.startswith("executed "):
            edition = None
    return out


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    log, commit, note = Path(argv[0]), argv[1], (argv[2] if len(argv) > 2 else "")
    try:
        found = parse(log.read_text(errors="replace"))
    except OSError as e:
        print(f"timings_from_ci: cannot read {log}: {e.strerror}", file=sys.stderr)
        return 1
    root = Path(__file__).resolve().parents[1]
    path = root / "params" / "timings.json"
    old = json.loads(path.read_text())
    for edition in ("book", "smoke"):
        missing = sorted(set(old.get(edition, {})) - set(found.get(edition, {})))
        if missing:
            print(f"timings_from_ci: the log's {edition} edition lacks {len(missing)} chapters ({', '.join(missing[:3])}"
                  f"{', ...' if len(missing) > 3 else ''}): nothing written", file=sys.stderr)
            return 1
    about = (f"Execution time (s) of each chapter per edition, measured on the 2-core CI machine (two workers) by the "
             f"fresh-clone .ci/run of {commit} (book and smoke){'; ' + note if note else ''}. Used to start the longest "
             "chapters first (shallowflow.site.build.longest_first) and as the book-scale basis of `shallowflow run "
             "... --estimate`; no result depends on it. Written by benchmarks/timings_from_ci.py.")
    data = {"about": about, **{e: dict(sorted(found[e].items())) for e in ("book", "smoke")}}
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(path)
    print(f"wrote {path.relative_to(root)}: {len(found['book'])} book and {len(found['smoke'])} smoke chapters")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
