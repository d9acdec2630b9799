"""Negative controls (issue 42, item 6): the law on the `control:` links of the registry, deliberately broken, the
criterion a control passes with, and the coverage count the scorecard shows."""
import pytest

from shallowflow import verdicts as C
from shallowflow.verdicts import controls

REGISTRY = """source: {seed: x.txt, title: A test source}
targets:
  T:
    chapter: book/ch
    checks:
      a: {book: pass, smoke: pass, control: [T/a-control]}
      a-control: {book: pass, smoke: pass}
      b: {book: pass, smoke: undecided, control: "tests/test_null_x.py::test_untrained_fails_b"}
      c: {book: pass, smoke: pass}
  E:
    kind: exact
    chapter: book/ch
    checks:
      identity: {book: pass, smoke: pass}
  O:
    chapter: book/other
    checks:
      d: {book: pass, smoke: pass}
"""

NULL_TESTS = '''def test_untrained_fails_b():
    assert True
'''


@pytest.fixture
def registry(tmp_path, monkeypatch):
    (tmp_path / "verdicts").mkdir()
    (tmp_path / "verdicts" / "999.yml").write_text(REGISTRY)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_null_x.py").write_text(NULL_TESTS)
    monkeypatch.setenv("SHALLOWFLOW_ROOT", str(tmp_path))
    return tmp_path


def _problems(registry, old=None, new=None):
    path = registry / "verdicts" / "999.yml"
    if old is not None:
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new))
    return C.validate_registry(C.load_registry(), root=registry)


def test_the_committed_kind_of_links_hold(registry):
    assert _problems(registry) == []


@pytest.mark.parametrize("old, new, says", [
    ("control: [T/a-control]", "control: [T/missing]", "T/a: control T/missing is not a registered check of 999"),
    ("control: [T/a-control]", "control: [T/a]", "T/a: a check cannot be its own control"),
    ("control: [T/a-control]", "control: [O/d]", "T/a: control O/d is computed by another chapter"),
    ("a-control: {book: pass, smoke: pass}", "a-control: {book: fail, smoke: pass, cause: scale, decide: x}",
     "T/a: control T/a-control is registered 'fail' at book scale"),
    ("test_null_x.py::test_untrained_fails_b", "test_null_x.py::test_no_such_test",
     "T/b: control tests/test_null_x.py::test_no_such_test is not a test function"),
    ("tests/test_null_x.py::test_untrained_fails_b", "../outside.py::test_untrained_fails_b",
     "is not a test function of the checkout's tests/"),
    ("control: [T/a-control]", "control: 3", "T/a: `control:` must be a check id, a test"),
])
def test_a_broken_control_link_is_refused_naming_the_check(registry, old, new, says):
    assert any(says in p for p in _problems(registry, old, new)), _problems(registry)


def test_a_control_passes_only_when_the_deciding_criterion_rejects_its_measurement():
    crit = C.below(0.1)
    control = C.rejected_by(crit)
    assert control.text == "fails: < 0.1"
    assert control(0.5) and control([0.05, 0.5])  # the false case: not every value inside the window
    assert not control(0.01) and not control([0.01, 0.02])  # the criterion accepts the false case: no control
    assert not control(float("nan")) and not control([])  # a measurement that did not happen proves nothing


def test_coverage_counts_deciding_checks_and_leaves_out_exact_identities_and_the_controls_themselves(registry):
    cov = controls.coverage(C.load_registry())["999"]
    # deciding: T/a, T/b, T/c, O/d (E is exact, T/a-control is a control)
    assert cov == {"deciding": 4, "controlled": 2, "missing": ["T/c", "O/d"]}


def test_every_control_in_the_committed_registry_names_a_check_or_test_that_exists():
    problems = [p for p in C.validate_registry(C.load_registry()) if "control" in p]
    assert problems == []
