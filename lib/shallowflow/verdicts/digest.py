"""What a chapter's numbers depend on, as a digest: the key that ties a recorded run (a paper-scale claims record) to
the code that made it.

:func:`chapter_digest` hashes, each on its own, the chapter's notebook (``book/<chapter>.py``), every module of the
package that the notebook imports, directly or through the modules it imports (the engine, the chapter's experiment
module, the verdict machinery; not the presentation: the site and its plots, the executor, the CLI), the chapter's
profile (``params/<profile>/<chapter>.yml``) and the registry entries of its targets. A record whose digest differs
from the current one is *stale*; :func:`changed` names the parts that differ, so a page can say what changed.
"""
from __future__ import annotations

import ast
import hashlib
import json
from pathlib import Path

from ..engine import codegraph
from .registry import repo_root

#: sub-packages and modules that present or schedule results but compute none of a chapter's numbers
PRESENTATION = ("shallowflow.site", "shallowflow.executor", "shallowflow.run", "shallowflow.engine.progress",
                "shallowflow.verdicts.scorecard", "shallowflow.verdicts.report", "shallowflow.verdicts.paper",
                "shallowflow.verdicts.digest", "shallowflow.verdicts.quotes")


#: fields of a check's registry entry that change none of its numbers, its verdict or its causes: a `control:` link
#: names the test (or check) that shows the criterion rejects a false case; adding one must not stale a paper record
UNKEYED = frozenset({"control"})


def _closure(start: tuple[str, ...]) -> tuple[str, ...]:
    """The package's modules the notebook's imports reach (the import graph of :mod:`shallowflow.engine.codegraph`,
    the one the checkpoints are keyed by), the presentation left out."""
    return codegraph.closure(start, leave_out=PRESENTATION)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _file_sha(path: Path) -> str:
    try:
        return _sha(path.read_bytes())
    except OSError:
        return "missing"


def chapter_digest(chapter: str, profile: str = "paper", root: Path | None = None) -> dict:
    """``{"parts": {name: sha}, "digest": sha}`` for ``chapter`` (``part/name``) run at ``profile``."""
    from .registry import load_registry

    root = root or repo_root()
    notebook = root / "book" / f"{chapter}.py"
    parts = {f"book/{chapter}.py": _file_sha(notebook)}
    try:
        tree = ast.parse(notebook.read_text(encoding="utf-8"))
        start = tuple(sorted(codegraph.imports(tree, "__notebook__", False)))
    except (OSError, SyntaxError, ValueError):
        start = ()
    pkg = codegraph.PACKAGE_DIR
    for name in _closure(start):
        path = codegraph.module_file(name)
        parts[f"lib/{path.relative_to(pkg.parent).as_posix()}"] = _file_sha(path)
    profile_file = root / "params" / profile / f"{chapter}.yml"
    parts[f"params/{profile}/{chapter}.yml"] = _file_sha(profile_file) if profile_file.exists() else "none"
    docname = f"book/{chapter}"
    registry = load_registry(root / "verdicts")
    entries = {}
    for key, entry in sorted(registry.get("targets", {}).items()):
        checks = {n: {k: v for k, v in (c or {}).items() if k not in UNKEYED}
                  for n, c in (entry.get("checks") or {}).items()
                  if (c or {}).get("chapter", entry.get("chapter")) == docname}
        if checks:
            entries[key] = checks  # the checks this chapter computes, with their registered verdicts and causes
    parts["verdicts (this chapter's checks)"] = _sha(json.dumps(entries, sort_keys=True, default=str).encode())
    total = _sha(json.dumps(parts, sort_keys=True).encode())
    return dict(parts=parts, digest=total)


def changed(recorded: dict | None, current: dict) -> list[str]:
    """The parts whose digest differs between a recorded digest and the current one (every part when the record
    has none: it was made before records were keyed)."""
    if not recorded or not isinstance(recorded.get("parts"), dict):
        return ["the record carries no digest (made before records were keyed to their code)"]
    old, new = recorded["parts"], current["parts"]
    return sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
