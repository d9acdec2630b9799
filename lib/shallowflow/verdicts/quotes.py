"""The source's own words beside every verdict: each target's ``claim:`` and ``scope:`` quotes, found verbatim.

A registry target quotes what it tests::

    Lemma5:
      claim:                       # the source's sentence(s) the verdict tests, verbatim
        - {line: 484, text: "If p >= ..., then ..."}
      scope:                       # the hypotheses under which the source states it, verbatim
        - {line: 120, text: "Assumption 2 ..."}
      parts:                       # the claim's parts, each decided by at least one of the target's checks
        - {part: "necessity on orthogonal data", checks: [necessary-orthogonal]}

``line`` is the 1-based line of the seed text (``shared/seeds/<seed>``, the registry's ``source.seed``) on which
the quote begins; a quote of another source (the synthesis) names it with ``seed: "000"``. A quote is verbatim
when, with every run of white space read as one space, it is a substring of the seed text that begins on that
line (PDF text breaks sentences across lines; nothing else is forgiven).
"""
from __future__ import annotations

import bisect
import functools
import re
from pathlib import Path

QUOTE_KEYS = ("claim", "scope")
_WS = re.compile(r"\s+")


def seeds_dir(root: Path | None = None) -> Path:
    """``shared/seeds`` beside the checkout (where the project's sources are laid), else inside it."""
    from .registry import repo_root

    root = root or repo_root()
    for base in (root.parent / "shared", root / "shared"):
        if (base / "seeds").is_dir():
            return base / "seeds"
    return root.parent / "shared" / "seeds"


@functools.lru_cache(maxsize=16)
def _normalised(path: str) -> tuple[str, tuple[int, ...]]:
    """The seed text with white space collapsed, and for each line the offset in it where that line starts."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    out, starts, pos = [], [], 0
    for line in text.splitlines():
        starts.append(pos)
        piece = _WS.sub(" ", line).strip()
        if piece:
            out.append(piece + " ")
            pos += len(piece) + 1
    return "".join(out), tuple(starts)


def normalise(text: str) -> str:
    return _WS.sub(" ", str(text)).strip()


def quote_lines(seed_path: Path, text: str) -> list[int]:
    """Every 1-based line of the seed on which ``text`` (white space collapsed) begins; empty when it is absent."""
    flat, starts = _normalised(str(seed_path))
    needle = normalise(text)
    if not needle:
        return []
    lines, at = [], flat.find(needle)
    while at >= 0:
        lines.append(bisect.bisect_right(starts, at))
        at = flat.find(needle, at + 1)
    return lines


def seed_of(registry: dict, source: str, quote: dict) -> str | None:
    """The seed file a quote is from: its own ``seed:`` key (a source key such as "000"), else its target's source."""
    key = str(quote.get("seed", source))
    meta = registry.get("sources", {}).get(key) or {}
    return meta.get("seed")


def quote_problems(registry: dict, sources: tuple[str, ...] | None = None, root: Path | None = None,
                   require: bool = False) -> list[str]:
    """Every quote that is malformed or not found verbatim where it says; with ``require``, every target without a
    ``claim:`` (and, for a target with checks, without a ``scope:``) too. Empty when the seeds are not laid out."""
    problems = []
    seeds = seeds_dir(root)
    for key, entry in registry.get("targets", {}).items():
        source, target = key.split(":", 1)
        if sources is not None and source not in sources:
            continue
        if require and not entry.get("claim"):
            problems.append(f"{source}:{target} quotes no `claim:` (the source's sentence it tests)")
        if require and entry.get("checks") and not entry.get("scope"):
            problems.append(f"{source}:{target} quotes no `scope:` (the hypotheses the source states it under)")
        for field in QUOTE_KEYS:
            quotes = entry.get(field) or []
            if not isinstance(quotes, list):
                problems.append(f"{source}:{target}: `{field}:` must be a list of {{line, text}}")
                continue
            for q in quotes:
                if not isinstance(q, dict) or not isinstance(q.get("line"), int) or not str(q.get("text", "")).strip():
                    problems.append(f"{source}:{target}: a `{field}:` quote needs an integer `line` and a `text`: {q!r}")
                    continue
                seed = seed_of(registry, source, q)
                if seed is None:
                    problems.append(f"{source}:{target}: `{field}:` quote names an unknown source {q.get('seed')!r}")
                    continue
                path = seeds / seed
                if not path.is_file():
                    continue  # the sources are not laid beside this checkout: nothing to compare with
                found = quote_lines(path, q["text"])
                if not found:
                    problems.append(f"{source}:{target}: `{field}:` quote not found verbatim in {seed}: "
                                    f"{normalise(q['text'])[:80]!r}")
                elif q["line"] not in found:
                    problems.append(f"{source}:{target}: `{field}:` quote begins on line {found[0]} of {seed}, "
                                    f"not {q['line']}")
        checks = set((entry.get("checks") or {}))
        for part in entry.get("parts") or []:
            names = (part or {}).get("checks") if isinstance(part, dict) else None
            if not isinstance(names, list) or not names:
                problems.append(f"{source}:{target}: a part names no checks: {part!r}")
                continue
            missing = [n for n in names if n not in checks]
            if missing:
                problems.append(f"{source}:{target}: part {part.get('part')!r} names checks it does not have: {missing}")
    return problems


def main(argv: list[str] | None = None) -> int:
    """``python -m shallowflow.verdicts.quotes [SOURCE ...]``: print every quote problem of those sources."""
    import sys

    from .registry import load_registry

    args = sys.argv[1:] if argv is None else argv
    problems = quote_problems(load_registry(), tuple(args) or None, require=True)
    for p in problems:
        print(p)
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
