"""Negative controls: a check decides its target for the right reason only if the same measurement, on a case where
the claim is false (a known saddle, non-orthogonal data, an unbalanced start, an untrained network), fails the same
criterion.  A registered check names its controls with ``control: [ref, ...]``, each one of

- ``T/name``: a check of the same source and chapter that computes the measurement on the false case and passes
  when the deciding check's criterion rejects it (:func:`~shallowflow.verdicts.criteria.rejected_by`), registered
  to pass wherever the deciding check is;
- ``tests/<file>.py::<test>``: a null-scenario test that the test command runs, which feeds the chapter's own
  criterion a false case (built by the package's own functions) and asserts that the criterion rejects it.

:func:`control_problems` is the law on those links (run by :func:`~shallowflow.verdicts.law.validate_registry`);
:func:`coverage` counts, per source, the checks that decide a target and how many of them name a control.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

PASS = "pass"


def rejects(criterion, measured) -> bool:
    """Whether ``criterion`` (a deciding check's) rejects a negative control's measurement. A measurement that did
    not happen (empty, or not finite) proves nothing, and is refused: AssertionError, as in a null-scenario test."""
    import numpy as np

    values = np.asarray(measured, dtype=float).reshape(-1)
    assert values.size and np.isfinite(values).all(), f"a control must measure something: {measured!r}"
    return not criterion(measured)


def refs(reg: dict) -> list[str]:
    """The controls a registered check names (a one-string ``control:`` is a list of one)."""
    c = (reg or {}).get("control")
    if c is None:
        return []
    return [str(c)] if isinstance(c, str) else [str(x) for x in c] if isinstance(c, list) else [repr(c)]


@functools.lru_cache(maxsize=64)
def _test_functions(path: str, stamp: int) -> frozenset:
    try:
        tree = ast.parse(Path(path).read_text())
    except (OSError, SyntaxError, ValueError):
        return frozenset()
    return frozenset(n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and n.name.startswith("test"))


def test_exists(root: Path, ref: str) -> bool | None:
    """Whether ``tests/<file>.py::<test>`` names a test function of the checkout (None where the checkout has no
    tests folder: an installed copy cannot tell)."""
    if not (root / "tests").is_dir():
        return None
    file, _, name = ref.partition("::")
    path = (root / file).resolve()
    if not name or not file.startswith("tests/") or not file.endswith(".py") or not path.is_file() \
            or (root / "tests").resolve() not in path.parents:
        return False
    return name in _test_functions(str(path), path.stat().st_mtime_ns)


def control_problems(registry: dict, source: str, target: str, name: str, reg: dict, root: Path,
                     chapter_of, registered) -> list[str]:
    """Every way the ``control:`` links of check ``target/name`` of ``source`` break the law."""
    problems, cid = [], f"{source}:{target}/{name}"
    raw = (reg or {}).get("control")
    if raw is not None and not (isinstance(raw, str) or (isinstance(raw, list) and raw)):
        return [f"{cid}: `control:` must be a check id, a test (tests/<file>.py::<test>) or a list of them"]
    passing = [p for p in ("book", "smoke") if (reg or {}).get(p) == PASS]
    for ref in refs(reg):
        if "::" in ref:
            if test_exists(root, ref) is False:
                problems.append(f"{cid}: control {ref} is not a test function of the checkout's tests/")
            continue
        other = registered(registry, source, ref)
        if other is None:
            problems.append(f"{cid}: control {ref} is not a registered check of {source}")
            continue
        if ref == f"{target}/{name}":
            problems.append(f"{cid}: a check cannot be its own control")
        if chapter_of(registry, source, ref) != chapter_of(registry, source, f"{target}/{name}"):
            problems.append(f"{cid}: control {ref} is computed by another chapter (a control runs beside its check)")
        for p in passing:
            if other.get(p) != PASS:
                problems.append(f"{cid}: control {ref} is registered {other.get(p)!r} at {p} scale, where the check "
                                "it controls passes: the control must reject the false case there too")
    return problems


def deciding(registry: dict):
    """The checks that decide a target: registered to pass at book scale, of a target that is not an exact identity
    (``kind: exact``), and not themselves another check's control, evidence or in-scope check. Yields
    (source, target, name, reg)."""
    helpers = set()
    for key, entry in registry.get("targets", {}).items():
        source = key.split(":", 1)[0]
        for reg in (entry.get("checks") or {}).values():
            for ref in refs(reg or {}) + [str(e) for e in ((reg or {}).get("evidence") or [])] \
                    + [str(e) for e in ((reg or {}).get("in-scope") or [])]:
                helpers.add(f"{source}:{ref}")
    for key, entry in registry.get("targets", {}).items():
        source, target = key.split(":", 1)
        if entry.get("kind") == "exact":
            continue
        for name, reg in (entry.get("checks") or {}).items():
            if (reg or {}).get("book") == PASS and f"{key}/{name}" not in helpers:
                yield source, target, name, reg or {}


def coverage(registry: dict) -> dict:
    """Per source: {"deciding": n, "controlled": k, "missing": [check ids without a control]}."""
    out: dict = {}
    for source, target, name, reg in deciding(registry):
        row = out.setdefault(source, {"deciding": 0, "controlled": 0, "missing": []})
        row["deciding"] += 1
        if refs(reg):
            row["controlled"] += 1
        else:
            row["missing"].append(f"{target}/{name}")
    return out
