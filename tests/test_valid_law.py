"""Every check says whether trained runs stand behind it.

A run whose loss or parameters went non-finite never counts as evidence (``Claims.check(valid=...)``).
That rule only protects a check that passes its runs' flags, so every check of every chapter passes
``valid=`` explicitly: the runs' flags (:func:`shallowflow.engine.metrics.finite_runs` or a mask derived from
them) when the measured values come from trained runs, or ``NO_TRAINING`` when they do not (an exact
identity, a closed form, a draw at initialisation).  A literal ``valid=None`` is refused too: it reads
as an omission, not a decision.
"""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("*/*.py"))
LIBRARY = sorted((ROOT / "lib" / "shallowflow" / "experiments").rglob("*.py"))


def _is_check_call(node: ast.Call) -> bool:
    """``<anything>.check(...)`` with a check id ('TARGET/name') among its first two arguments."""
    if not (isinstance(node.func, ast.Attribute) and node.func.attr == "check"):
        return False
    for a in node.args[:2]:
        if isinstance(a, ast.Constant) and isinstance(a.value, str) and "/" in a.value:
            return True
        if isinstance(a, ast.JoinedStr):  # f"Fig3/{name}"
            return True
        if isinstance(a, ast.Name) and a.id in ("id", "cid", "check_id"):
            return True
    return False


def missing_valid(path: Path) -> list[str]:
    """The check calls of one file that do not pass ``valid=`` (or pass a literal None)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    bad = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _is_check_call(node)):
            continue
        kws = {k.arg: k.value for k in node.keywords}
        if None in kws:  # **kw forwarded by a wrapper: its callers are checked
            continue
        v = kws.get("valid")
        first = node.args[0] if node.args else None
        label = first.value if isinstance(first, ast.Constant) else ast.unparse(first) if first is not None else "?"
        if v is None:
            bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: {label} has no valid=")
        elif isinstance(v, ast.Constant) and v.value is None:
            bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: {label} passes valid=None (say NO_TRAINING)")
    return bad


def test_the_law_sees_check_calls():
    """The parser finds the calls it polices (a law that finds nothing proves nothing)."""
    calls = sum(isinstance(n, ast.Call) and _is_check_call(n)
                for p in CHAPTERS for n in ast.walk(ast.parse(p.read_text())))
    assert calls > 500


def test_the_law_catches_an_omission(tmp_path):
    f = tmp_path / "book" / "x.py"
    f.parent.mkdir()
    f.write_text('claims.check("T/a", "c", 1.0, crit)\nclaims.check("T/b", "c", 1.0, crit, valid=None)\n'
                 'claims.check("T/c", "c", 1.0, crit, valid=C.NO_TRAINING)\nclaims.check("T/d", "c", 1.0, crit, valid=ok)\n')
    global ROOT
    old, ROOT = ROOT, tmp_path
    try:
        assert [b.split(": ", 1)[1] for b in missing_valid(f)] == ["T/a has no valid=",
                                                                  "T/b passes valid=None (say NO_TRAINING)"]
    finally:
        ROOT = old


@pytest.mark.parametrize("path", CHAPTERS + LIBRARY, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_check_passes_valid(path):
    bad = missing_valid(path)
    assert not bad, f"{len(bad)} checks without an explicit valid=:\n" + "\n".join(bad)
