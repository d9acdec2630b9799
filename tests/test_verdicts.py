"""Every verdict explains itself: causes of failing checks, invalid runs, target verdicts, the
scorecard's JSON and the errata generated from the registry."""
import json

import jsonschema
import pytest
import torch

from shallowflow import claims as C
from shallowflow import metrics


@pytest.fixture
def registry(tmp_path, monkeypatch):
    (tmp_path / "verdicts").mkdir()
    (tmp_path / "verdicts" / "999.yml").write_text(
        "source: {seed: x.txt, title: A test source}\ntargets:\n"
        "  T:\n    title: a target\n    chapter: book/ch\n    checks:\n"
        "      a: {book: pass, smoke: pass}\n"
        "      b: {book: fail, smoke: fail, cause: erratum, why: 'the source prints y where x is meant'}\n"
        "  U:\n    chapter: book/ch\n    checks:\n"
        "      c: {book: fail, smoke: undecided}\n"
        "  F:\n    illustration: 'a copied diagram'\n"
        "  M:\n    chapter: book/ch\n    checks:\n"
        "      d: {book: pass, smoke: pass}\n"
        "      e: {book: fail, smoke: fail, cause: method, why: 'finite step'}\n")
    monkeypatch.setenv("SHALLOWFLOW_ROOT", str(tmp_path))
    return tmp_path


def _run(profile="book", e_value=1.0):
    c = C.Claims("999", "book/ch", profile)
    c.check("T/a", "x small", 0.0, C.below(1.0))
    c.check("T/b", "y small", 2.0, C.below(1.0))
    c.check("U/c", "z small", 2.0, C.below(1.0))
    c.check("M/d", "w small", 0.0, C.below(1.0))
    c.check("M/e", "v small", e_value, C.below(1.0))
    return c


def test_failing_check_without_cause_fails_the_chapter(registry):
    problems = _run().mismatches()
    assert any("999:U/c fails without a registered cause" in p for p in problems)
    assert not any("T/b" in p or "M/e" in p for p in problems)
    with pytest.raises(C.VerdictMismatch, match="U/c fails without a registered cause"):
        _run().finish()


def test_expected_failure_at_smoke_needs_a_cause_too(registry):
    path = registry / "verdicts" / "999.yml"
    path.write_text(path.read_text().replace("c: {book: fail, smoke: undecided}", "c: {book: pass, smoke: fail}") + "\n")
    assert any("U/c fails without a registered cause" in p for p in _run("smoke").mismatches())
    assert not any("U/c" in p and "cause" in p for p in _run("book").mismatches())


def test_cause_is_shown_beside_the_failing_check(registry):
    c = _run()
    row = {r["check"]: r for r in c.rows()}
    assert row["T/b"]["why"] == "erratum: the source prints y where x is meant"
    assert row["T/a"]["why"] == ""
    assert "why: erratum: the source prints y" in c.report()
    assert "<th>why</th>" in c._repr_html_() and "the source prints y" in c._repr_html_()


def test_target_verdicts_with_causes(registry):
    c = _run()
    assert c.target_verdict("T") == "reproduced, source erratum shown"
    assert c.target_verdict("M") == "partly"
    assert c.target_verdict("U") == "not reproduced"
    assert C.target_verdict([], {"illustration": "copied"}) == "illustration"
    assert C.target_verdict([]) == "not attempted"
    assert C.target_verdict(["pass", "pass"]) == "reproduced"


def test_invalid_runs_never_count_as_evidence(registry):
    loss = torch.tensor([[1.0, 0.5], [1.0, float("nan")], [1.0, 0.1]])
    valid = metrics.finite_runs(loss)
    assert valid.tolist() == [True, False, True]
    c = C.Claims("999", "book/ch", "custom")
    # a classification that would pass on every run: the NaN run makes it fail and is named
    chk = c.check("T/a", "every run is classified as failing", torch.ones(3), C.is_true(), valid=valid)
    assert chk.verdict == "fail" and chk.invalid == [1]
    assert "1 of 3 runs invalid" in chk.measured and "runs 1" in chk.measured
    assert not c.passed("T/a")
    ok = c.check("T/b", "same, all finite", torch.ones(3), C.is_true(), valid=torch.ones(3, dtype=torch.bool))
    assert ok.verdict == "pass" and c.passed("T/b")
    with pytest.raises(KeyError):
        c.passed("T/zzz")


def test_finite_runs_checks_parameters_and_several_tensors():
    from shallowflow.models import Params

    W = torch.zeros(3, 2, 2)
    W[2, 0, 1] = float("inf")
    p = Params(a=torch.zeros(3, 2), W=W)
    assert metrics.finite_runs(p, torch.zeros(3)).tolist() == [True, True, False]
    with pytest.raises(ValueError):
        metrics.finite_runs()


def test_scorecard_json_validates_and_counts(registry):
    _run().save()
    rows = C.scorecard("book")
    doc = C.scorecard_json(rows, C.load_registry(), "book")
    jsonschema.validate(doc, C.SCORECARD_SCHEMA)
    assert doc["sources"]["999"]["counts"] == {"reproduced, source erratum shown": 1, "partly": 1,
                                               "not reproduced": 1, "illustration": 1}
    path = C.write_scorecard_json(rows, C.load_registry(), "book")
    assert json.loads(path.read_text())["profile"] == "book"
    bad = dict(doc, targets=[dict(doc["targets"][0], verdict="sort of")])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, C.SCORECARD_SCHEMA)


def test_scorecard_html_has_summary_and_filters(registry):
    _run().save()
    html = C.scorecard_html(C.scorecard("book"), C.load_registry())
    assert "sf-summary" in html and "sf-filter-source" in html and "data-verdict='partly'" in html


def test_errata_come_from_source_causes_only(registry):
    rows = C.errata()
    assert [(r["target"], r["check"], r["cause"]) for r in rows] == [("T", "b", "erratum")]


def test_committed_registry_gives_every_expected_failure_a_cause():
    reg = C.load_registry()
    missing = [f"{key}/{name}" for key, entry in reg["targets"].items()
               for name, c in (entry.get("checks") or {}).items()
               if "fail" in (c.get("book"), c.get("smoke")) and (c.get("cause") not in C.CAUSES or not c.get("why"))]
    assert not missing, f"failing checks without cause/why in verdicts/: {missing}"
    bad = [key for key, entry in reg["targets"].items() if entry.get("illustration") and entry.get("checks")]
    assert not bad, f"targets both illustration and checked: {bad}"


def test_not_run_at_a_scale_is_explicit(registry):
    """A check registered `not-run` at smoke scale must not run there, and is not missed when absent."""
    path = registry / "verdicts" / "999.yml"
    path.write_text(path.read_text().replace("d: {book: pass, smoke: pass}", "d: {book: pass, smoke: not-run}") + "\n")
    c = C.Claims("999", "book/ch", "smoke")
    c.check("T/a", "x small", 0.0, C.below(1.0))
    c.check("T/b", "y small", 2.0, C.below(1.0))
    c.check("U/c", "z small", 2.0, C.below(1.0))
    c.check("M/e", "v small", 2.0, C.below(1.0))
    assert not any("M/d" in p for p in c.mismatches())  # not computed at smoke scale: not missing
    c.check("M/d", "w small", 0.0, C.below(1.0))
    assert any("M/d ran at smoke scale" in p for p in c.mismatches())


def test_scorecard_target_not_run_at_this_scale(registry):
    path = registry / "verdicts" / "999.yml"
    path.write_text(path.read_text() + "  S:\n    chapter: book/ch\n    checks:\n      t: {book: pass, smoke: not-run}\n")
    _run("smoke").save()
    rows = {r["target"]: r["verdict"] for r in C.scorecard("smoke")}
    assert rows["S"] == "not run at this scale" and rows["F"] == "illustration"
    rows = {r["target"]: r["verdict"] for r in C.scorecard("book")}
    assert rows["S"] == "not run"  # registered at book scale, no record: the scorecard page refuses it
