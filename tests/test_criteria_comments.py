"""Site safety without a site build (stop 48): a module attribute holding a verdicts ``Criterion`` (``C.above``,
``C.below``, ``C.within``, ...) that carries an attribute doc (a ``#:`` comment above it or beside it, or a string
below it: what Sphinx's autodoc documents) in a module that book/appendix/api.md documents BEFORE
``shallowflow.verdicts.criteria``'s own automodule makes ``sphinx.ext.viewcode`` key criteria.py's source page to
that module (the value's ``__module__`` is criteria), and criteria's [docs] links then point at anchors the API page
lacks (tests/site/test_module_anchors.py, after a full build). Comment such constants with a plain ``#``."""
from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import sys
from pathlib import Path

from sphinx.pycode import ModuleAnalyzer

from shallowflow.verdicts.criteria import Criterion

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "book" / "appendix" / "api.md"
CRITERIA = "shallowflow.verdicts.criteria"


def documented_before_criteria(text: str) -> list[str]:
    """The modules whose automodule comes before verdicts.criteria's in the API page, in its order."""
    order = re.findall(r"^\.\. automodule::\s*(\S+)", text, flags=re.M)
    assert CRITERIA in order, f"{API.relative_to(ROOT)} has no automodule of {CRITERIA}"
    return order[:order.index(CRITERIA)]


def offenders(modname: str, source: str, module, filename: str) -> list[str]:
    """``file:line: name`` for each module attribute of ``source`` with an attribute doc whose value in
    ``module`` is a Criterion."""
    docs = ModuleAnalyzer.for_string(source, modname).find_attr_docs()
    names = {name for (ns, name) in docs if ns == ""}
    lines = {}
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, ast.AnnAssign) else []
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name):
                    lines.setdefault(n.id, node.lineno)
    return [f"{modname}:{lines.get(name, '?')} ({filename}): {name} = a Criterion "
            f"({getattr(module, name).text!r}) with a #: (attribute) doc"
            for name in sorted(names, key=lambda n: lines.get(n, 0))
            if isinstance(getattr(module, name, None), Criterion)]


def test_no_criterion_before_criteria_carries_an_attribute_doc():
    before = documented_before_criteria(API.read_text(encoding="utf-8"))
    assert before, "no module is documented before verdicts.criteria: nothing to check"
    found = []
    for modname in before:
        module = importlib.import_module(modname)
        path = Path(module.__file__)
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path  # an install elsewhere
        found += offenders(modname, path.read_text(encoding="utf-8"), module, str(shown))
    assert not found, ("a Criterion-valued module attribute documented (#:) before verdicts.criteria in the API page "
                       "breaks criteria.py's [docs] links; comment it with a plain # instead:\n" + "\n".join(found))


STOP48 = '''"""A chapter module as early_alignment/spurious.py and staircase.py were at stop 48."""
from shallowflow import verdicts as C

EXPONENTIAL_TAIL = C.above(1e4)  # Lem7/exponential-tail: a plain comment is fine
#: S5-limit/dominated-no-zero-neuron: min |a_j| of the dominated limit (local_min_test's min_abs_a) over the
#: balancedness bound min_j sqrt(a_j(0)^2 - |w_j(0)|^2) (:func:`dominated_bound`): Lemma 1 keeps |a_j| above it
DOMINATED_NO_ZERO = C.above(1 - 1e-6)
#: E4/figure3-descent: the largest loss rise between consecutive animation frames over L(0)
FIGURE3_DESCENT = C.below(1e-12)
STEP_SIZE_LEVELS = C.below(1e-3)  #: E3/step-size: the plateau levels at lr and lr / 2 match
#: a documented constant that is not a Criterion is fine
PLATEAU_WIDTH = 3
'''


def test_it_catches_stop_48s_case(tmp_path, monkeypatch):
    path = tmp_path / "stop48_spurious.py"
    path.write_text(STOP48, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("stop48_spurious", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "stop48_spurious", module)
    spec.loader.exec_module(module)
    api = ("```{eval-rst}\n.. automodule:: stop48_spurious\n   :members:\n\n"
           f".. automodule:: {CRITERIA}\n   :members: Criterion\n```\n")
    assert documented_before_criteria(api) == ["stop48_spurious"]
    found = offenders("stop48_spurious", STOP48, module, path.name)
    assert [f.split(" = ")[0] for f in found] == [
        "stop48_spurious:7 (stop48_spurious.py): DOMINATED_NO_ZERO", "stop48_spurious:9 (stop48_spurious.py): "
        "FIGURE3_DESCENT", "stop48_spurious:10 (stop48_spurious.py): STEP_SIZE_LEVELS"], found
    # the same module documented after criteria's automodule is not at risk
    assert documented_before_criteria(api.replace("stop48_spurious", "x").replace(
        f".. automodule:: {CRITERIA}", f".. automodule:: {CRITERIA}\n\n.. automodule:: stop48_spurious")) == ["x"]
