"""Every verdict explains itself: causes of failing checks, invalid runs, target verdicts, the
scorecard's JSON and the errata generated from the registry."""
import json

import jsonschema
import pytest
import torch

from shallowflow import verdicts as C
from shallowflow.engine import metrics


REGISTRY = """source: {seed: x.txt, title: A test source}
targets:
  T:
    title: a target
    chapter: book/ch
    checks:
      a: {book: pass, smoke: pass}
      b: {book: fail, smoke: fail, cause: erratum, evidence: [T/shown], why: 'the source prints y where x is meant: {measured} against {T/shown}'}
      shown: {book: pass, smoke: pass}
  U:
    chapter: book/ch
    checks:
      c: {book: fail, smoke: undecided}
  F:
    illustration: 'a copied diagram'
  M:
    chapter: book/ch
    checks:
      d: {book: pass, smoke: pass}
      e: {book: fail, smoke: fail, cause: method, evidence: [M/d], why: 'finite step: at a smaller step {M/d}'}
  S:
    chapter: book/ch
    checks:
      g: {book: fail, smoke: fail, cause: scale, decide: params/paper/ch.yml, evidence: [S/trend], why: 'needs the thesis width `m = 1000`: {S/trend}'}
      trend: {book: pass, smoke: pass}
  L:
    chapter: book/ch
    checks:
      h: {book: fail, smoke: fail, cause: erratum, refutes: true, evidence: [L/counterexample], in-scope: [L/in-scope], why: 'a counterexample'}
      counterexample: {book: pass, smoke: pass}
      in-scope: {book: pass, smoke: pass}
"""


@pytest.fixture
def registry(tmp_path, monkeypatch):
    (tmp_path / "verdicts").mkdir()
    (tmp_path / "verdicts" / "999.yml").write_text(REGISTRY)
    (tmp_path / "params" / "paper").mkdir(parents=True)
    (tmp_path / "params" / "paper" / "ch.yml").write_text("width: 1000\n")
    monkeypatch.setenv("SHALLOWFLOW_ROOT", str(tmp_path))
    return tmp_path


def _edit(registry, old, new):
    path = registry / "verdicts" / "999.yml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _run(profile="book", e_value=1.0, shown=0.0, in_scope=1.0, trend=0.6):
    c = C.Claims("999", "book/ch", profile)
    c.check("T/a", "x small", 0.0, C.below(1.0))
    c.check("T/b", "y small", 2.0, C.below(1.0))
    c.check("T/shown", "the source's y is x", shown, C.below(1.0))
    c.check("U/c", "z small", 2.0, C.below(1.0))
    c.check("M/d", "w small", 0.0, C.below(1.0))
    c.check("M/e", "v small", e_value, C.below(1.0))
    c.check("S/g", "u small", 2.0, C.below(1.0))
    c.check("S/trend", "u falls toward 1 as the width doubles (u at 2m / u at m)", trend, C.below(1.0, strict=True))
    c.check("L/h", "the lemma", 2.0, C.below(1.0))
    c.check("L/counterexample", "a case where the lemma fails", 1.0, C.is_true())
    c.check("L/in-scope", "the counterexample satisfies the lemma's hypotheses", in_scope, C.is_true())
    return c


def test_failing_check_without_cause_fails_the_chapter(registry):
    problems = _run().mismatches()
    assert any("999:U/c fails without a registered cause" in p for p in problems)
    assert not any("T/b" in p or "M/e" in p for p in problems)
    with pytest.raises(C.VerdictMismatch, match="U/c fails without a registered cause"):
        _run().finish()


def test_expected_failure_at_any_compared_scale_needs_a_cause(registry):
    _edit(registry, "c: {book: fail, smoke: undecided}", "c: {book: pass, smoke: fail}")
    assert any("U/c fails without a registered cause" in p for p in _run("smoke").mismatches())
    assert any("U/c fails without a registered cause" in p for p in _run("book").mismatches())


def test_why_is_generated_from_the_measurement_and_shown_beside_the_check(registry):
    c = _run()
    row = {r["check"]: r for r in c.rows()}
    assert row["T/b"]["why"] == ("erratum: the source prints y where x is meant: 2 against 0 "
                                 "[evidence holds: T/shown]")
    assert row["M/e"]["why"] == "method: finite step: at a smaller step 0 [evidence holds: M/d]"
    assert row["T/a"]["why"] == ""
    assert "why: erratum: the source prints y" in c.report()
    html = c._repr_html_()
    assert "<tr class='sf-why'><td colspan='8'><div class='sf-wrap'><b>why</b>: erratum: the source prints y" in html
    assert "id='check-999-t-b'" in html and 'overflow-x:auto' in html


def test_target_verdicts_follow_the_proved_causes(registry):
    c = _run()
    assert c.target_verdict("T") == "reproduced, source erratum shown"
    assert c.target_verdict("M") == "reproduced, book deviation shown"
    assert c.target_verdict("U") == "not reproduced"
    assert c.target_verdict("S") == "undecided at this scale"
    assert c.target_verdict("L") == "source claim false (erratum shown)"
    assert C.target_verdict([], {"illustration": "copied"}) == "illustration"
    assert C.target_verdict([]) == "not attempted"
    assert C.target_verdict(["pass", "pass"]) == "reproduced"
    assert C.target_verdict(["pass", "fail"]) == "partly"


def test_a_cause_whose_evidence_fails_excuses_nothing_and_fails_the_book_build(registry):
    c = _run(shown=5.0)  # the erratum's demonstration does not hold
    with pytest.raises(C.VerdictMismatch, match="T/b: its registered cause erratum is not proved: its evidence "
                                                "T/shown does not hold"):
        c.finish()
    assert c.target_verdict("T") == "partly"  # T/shown itself failed, unexplained
    s = _run("smoke", shown=5.0)  # at smoke scale the same failure leaves the erratum unproved: no excuse
    assert not any("not proved" in p for p in s.mismatches())
    assert s.checks_of("T")[1].evidence_status == "unverified"


def test_a_method_cause_without_evidence_makes_its_target_undecided(registry):
    _edit(registry, "cause: method, evidence: [M/d], why: 'finite step: at a smaller step {M/d}'",
          "cause: method, why: 'finite step'")
    c = _run()
    assert c.target_verdict("M") == "undecided at this scale"
    problems = C.validate_registry(C.load_registry())
    assert any("999:M/e: cause method names no evidence" in p for p in problems)


def test_a_broken_evidence_link_fails_the_chapter(registry):
    _edit(registry, "evidence: [T/shown]", "evidence: [T/nowhere]")
    with pytest.raises(C.VerdictMismatch, match="evidence T/nowhere is not a registered check of 999"):
        _run().finish()
    _edit(registry, "evidence: [T/nowhere]", "evidence: [U/c]")  # a check registered to fail proves nothing
    with pytest.raises(C.VerdictMismatch, match="evidence U/c is registered 'fail' at book scale"):
        _run().finish()


def test_evidence_in_another_chapter_is_settled_by_the_scorecard(registry):
    _edit(registry, "  L:\n    chapter: book/ch\n", "  L:\n    chapter: book/ch\n")
    _edit(registry, "counterexample: {book: pass, smoke: pass}",
          "counterexample: {book: pass, smoke: pass, chapter: book/other}")
    c = C.Claims("999", "book/ch", "book")
    for cid, v in [("T/a", 0.0), ("T/b", 2.0), ("T/shown", 0.0), ("U/c", 2.0), ("M/d", 0.0), ("M/e", 1.0),
                   ("S/g", 2.0), ("L/h", 2.0), ("L/in-scope", 0.0)]:
        c.check(cid, "x", v, C.below(1.0))
    c.save()
    assert {x.id: x.evidence_status for x in c.checks}["L/h"] == "pending"
    other = C.Claims("999", "book/other", "book")
    other.check("L/counterexample", "a case where the lemma fails", 0.0, C.is_true())  # does not hold
    other.save()
    rows = C.scorecard("book")
    lh = next(x for r in rows for x in r["checks"] if x["id"] == "L/h")
    assert lh["evidence_status"] == "unverified" and "L/counterexample does not hold" in lh["evidence_reason"]
    assert any("L/h: its registered cause erratum is not proved" in p for p in C.scorecard_problems(rows, "book"))
    assert {r["target"]: r for r in rows}["L"]["chapters"] == ["book/ch", "book/other"]


def test_scale_is_a_claim_its_evidence_a_trend_that_holds(registry):
    """Issue 42, item 5: a book-scale failure of cause scale names evidence that more scale would decide (a trend
    toward the criterion, computed and holding like any cause's) or what the book cannot have (`needs:`)."""
    assert _run().target_verdict("S") == "undecided at this scale"
    with pytest.raises(C.VerdictMismatch, match="S/g: its registered cause scale is not proved: its evidence S/trend "
                                                "does not hold"):
        _run(trend=1.2).finish()  # u does not fall with the width: nothing says more scale would decide
    _edit(registry, "evidence: [S/trend], why: 'needs the thesis width `m = 1000`: {S/trend}'",
          "why: 'needs the thesis width `m = 1000`'")
    problems = C.validate_registry(C.load_registry())
    assert any("S/g: cause scale names no evidence that more scale would decide" in p for p in problems)
    _edit(registry, "why: 'needs the thesis width `m = 1000`'",
          "needs: 'the thesis data, which no offline package ships', why: 'needs the thesis data'")
    assert not [p for p in C.validate_registry(C.load_registry()) if "S/g" in p]
    _edit(registry, "g: {book: fail, smoke: fail, cause: scale, decide: params/paper/ch.yml, needs: 'the thesis data, "
          "which no offline package ships',", "g: {book: pass, smoke: fail, cause: scale, decide: params/paper/ch.yml,")
    assert not [p for p in C.validate_registry(C.load_registry()) if "S/g" in p]  # the book scale decides the smoke's


def test_registry_law_refuses_typed_numbers_and_incomplete_causes(registry):
    assert not [p for p in C.validate_registry(C.load_registry()) if "U/c" not in p]
    _edit(registry, "why: 'finite step: at a smaller step {M/d}'", "why: 'at lr = 1e-4 it passes (0.93)'")
    problems = C.validate_registry(C.load_registry())
    assert any("M/e: its why types numbers ['1e-4', '(0.93)']" in p for p in problems)
    assert C.typed_numbers("the thesis's `m = 1000` at {measured}, {T/a.criterion}") == []
    _edit(registry, "decide: params/paper/ch.yml", "decide: params/paper/none.yml")
    _edit(registry, "evidence: [L/counterexample]", "evidence: [L/counterexample], refutes: true")
    problems = C.validate_registry(C.load_registry())
    assert any("S/g: cause scale needs `decide:`" in p for p in problems)
    _edit(registry, "c: {book: fail, smoke: undecided}", "c: {book: fail, smoke: undecided, cause: not-reproduced, why: w}")
    problems = C.validate_registry(C.load_registry(), schema_of=lambda ch: {"width": None})
    assert any("U/c: not-reproduced needs `tried:`" in p for p in problems)
    _edit(registry, "cause: not-reproduced, why: w}", "cause: not-reproduced, why: w, tried: [book, {widht: 3}]}")
    problems = C.validate_registry(C.load_registry(), schema_of=lambda ch: {"width": None})
    assert any("U/c: tried names ['widht']" in p for p in problems)


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
    from shallowflow.engine.models import Params

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
    assert doc["sources"]["999"]["counts"] == {"reproduced, source erratum shown": 1,
                                               "reproduced, book deviation shown": 1,
                                               "source claim false (erratum shown)": 1,
                                               "undecided at this scale": 1, "not reproduced": 1, "illustration": 1}
    checks = {c["id"]: c for t in doc["targets"] for c in t["checks"]}
    assert checks["T/b"]["evidence"] == ["T/shown"] and checks["T/b"]["evidence_status"] == "verified"
    path = C.write_scorecard_json(rows, C.load_registry(), "book")
    assert json.loads(path.read_text())["profile"] == "book"
    bad = dict(doc, targets=[dict(doc["targets"][0], verdict="sort of")])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, C.SCORECARD_SCHEMA)


def test_scorecard_html_has_summary_and_filters(registry):
    _run().save()
    html = C.scorecard_html(C.scorecard("book"), C.load_registry())
    assert "sf-summary" in html and "sf-filter-source" in html and "data-verdict='not reproduced'" in html
    # the negative controls of the deciding checks, counted per source (none named in this registry)
    assert "<th>deciding checks with a negative control</th>" in html and "<td>0 of 1</td>" in html  # T/a: the rest are evidence or fail


def test_errata_come_from_source_causes_only(registry):
    rows = C.errata()
    assert [(r["target"], r["check"], r["cause"]) for r in rows] == [("T", "b", "erratum"), ("L", "h", "erratum")]
    assert rows[0]["why"] == "the source prints y where x is meant: {measured} against (T/shown not measured in this run)"
    _run().save()
    rows = C.errata(profile="book")
    assert rows[0]["why"] == "the source prints y where x is meant: 2 against 0" and rows[0]["evidence_status"] == "verified"


def test_committed_registry_obeys_its_law():
    """Every expected failure has a cause proved by registered evidence (or is undecided at a stated scale, or
    lists what was tried), and no why types a measured number."""
    from shallowflow import executor as X

    def schema_of(docname):
        try:
            return X.schema(docname.split("/", 1)[1])[0]
        except Exception:
            return None

    reg = C.load_registry()
    problems = C.validate_registry(reg, schema_of=schema_of)
    assert not problems, f"{len(problems)} registry problems:\n" + "\n".join(problems[:60])
    bad = [key for key, entry in reg["targets"].items() if entry.get("illustration") and entry.get("checks")]
    assert not bad, f"targets both illustration and checked: {bad}"


def test_not_run_at_a_scale_is_explicit(registry):
    """A check registered `not-run` at smoke scale must not run there, and is not missed when absent."""
    _edit(registry, "d: {book: pass, smoke: pass}", "d: {book: pass, smoke: not-run}")
    c = C.Claims("999", "book/ch", "smoke")
    for cid, v in [("T/a", 0.0), ("T/b", 2.0), ("T/shown", 0.0), ("U/c", 2.0), ("M/e", 2.0), ("S/g", 2.0),
                   ("L/h", 2.0), ("L/counterexample", 0.0)]:
        c.check(cid, "x", v, C.below(1.0))
    assert not any("M/d" in p for p in c.mismatches())  # not computed at smoke scale: not missing
    assert c.checks_of("M")[0].evidence_status == "unverified"  # so M/e's method cause is unproved there
    c.check("M/d", "w small", 0.0, C.below(1.0))
    assert any("M/d ran at smoke scale" in p for p in c.mismatches())


def test_scorecard_target_not_run_at_this_scale(registry):
    path = registry / "verdicts" / "999.yml"
    path.write_text(path.read_text() + "  R:\n    chapter: book/ch\n    checks:\n      t: {book: pass, smoke: not-run}\n")
    _run("smoke").save()
    rows = {r["target"]: r["verdict"] for r in C.scorecard("smoke")}
    assert rows["R"] == "not run at this scale" and rows["F"] == "illustration"
    rows = {r["target"]: r["verdict"] for r in C.scorecard("book")}
    assert rows["R"] == "not run"  # registered at book scale, no record: the scorecard page refuses it


def test_every_target_function_is_where_the_api_reference_documents_it():
    """A target's `function` names the module that defines it (the API reference documents a function under its
    defining module; a name re-exported elsewhere leaves the scorecard's link dangling; the site check found 004 P4)."""
    import importlib

    wrong = []
    for key, entry in C.load_registry()["targets"].items():
        fn = entry.get("function")
        if not fn:
            continue
        mod, _, name = fn.rpartition(".")
        obj = getattr(importlib.import_module(mod), name, None)
        if obj is None or getattr(obj, "__module__", mod) != mod:
            wrong.append(f"{key}: {fn} is defined in {getattr(obj, '__module__', 'nowhere')}")
    assert not wrong, "\n".join(wrong)


# ---------------------------------------------------------------------------------------------
# the law of referee-grade verdicts (issue 42): refutations in scope, independent evidence, decidable checks
def test_a_refutation_stands_only_with_in_scope_checks_that_hold(registry):
    assert _run().target_verdict("L") == "source claim false (erratum shown)"
    c = _run(in_scope=0.0)  # the counterexample lies outside the source's stated hypotheses
    assert c.target_verdict("L") == "partly"
    with pytest.raises(C.VerdictMismatch, match="L/h: its registered cause erratum is not proved: its evidence "
                                                "L/in-scope does not hold"):
        c.finish()
    _edit(registry, ", in-scope: [L/in-scope]", "")
    problems = C.validate_registry(C.load_registry())
    assert any("999:L/h: `refutes: true` needs `in-scope:" in p for p in problems)
    assert _run().target_verdict("L") == "reproduced, source erratum shown"  # without scope checks: no refutation


def test_evidence_that_is_the_failing_measurement_under_another_name_proves_nothing(registry):
    """A registry pairing a check with its own complement (the same values, the opposite threshold) or the same
    ratios under a monotone map: the cause is unverified and the book build fails."""
    drifts = [0.21, 0.34, 0.55, 0.89]
    for shown in (drifts, [1.0 - d for d in drifts], [1.0 / d for d in drifts], [3.0 * d for d in drifts]):
        c = C.Claims("999", "book/ch", "book")
        c.check("T/a", "x small", 0.0, C.below(1.0))
        c.check("T/b", "the drifts are numerical", drifts, C.below(0.1))
        c.check("T/shown", "the drifts are not numerical", shown, C.above(0.1))
        c.settle()
        b = c.checks_of("T")[1]
        assert b.evidence_status == "unverified" and "own measured values" in b.evidence_reason, (shown, b)
    independent = C.Claims("999", "book/ch", "book")
    independent.check("T/a", "x small", 0.0, C.below(1.0))
    independent.check("T/b", "the drifts are numerical", drifts, C.below(0.1))
    independent.check("T/shown", "halving the step halves the drift", [0.49, 0.52, 0.47, 0.55], C.above(0.1))
    assert independent.settle().checks_of("T")[1].evidence_status == "verified"
    assert C.same_measurement([0.0], [1.0]) == ""  # a failing flag beside a passing one is no complement
    assert C.same_measurement([2.5], [2.5]) == "equal"


def test_a_check_that_cannot_pass_or_cannot_fail_at_its_run_count_is_refused(registry):
    c = C.Claims("999", "book/ch", "book")
    flags = [True, True, True]
    low, _ = metrics.typical_share(flags)
    a = c.check("T/a", "typical", low, C.above(0.5), outcomes=metrics.share_outcomes(len(flags)))
    assert a.decidable == "cannot pass" and a.units == 3
    assert any("T/a is registered pass at book scale, but it cannot pass at its 3 units" in p for p in c.mismatches())
    ok = C.Claims("999", "book/ch", "book").check("T/a", "typical", 0.6, C.above(0.5),
                                                   outcomes=metrics.share_outcomes(10))
    assert ok.decidable == "yes"
    never = C.Claims("999", "book/ch", "book").check("T/a", "typical", 0.6, C.above(0.0),
                                                      outcomes=metrics.share_outcomes(10))
    assert never.decidable == "cannot fail"


def test_exact_identities_and_the_books_findings_are_counted_apart(registry):
    assert C.target_verdict(["pass"], {"kind": "exact"}) == "verified (exact)"
    assert C.target_verdict(["pass"], {"kind": "finding"}) == "finding (this book)"
    assert C.target_verdict(["pass", "fail"], {"kind": "exact"}) == "partly"
    from shallowflow.verdicts.report import summary_label

    label, stats = summary_label(["reproduced", "verified (exact)", "finding (this book)", "not reproduced"])
    assert stats["decided"] == 2 and stats["exact"] == 1 and stats["findings"] == 1
    _edit(registry, "  U:\n    chapter: book/ch", "  U:\n    kind: obvious\n    chapter: book/ch")
    assert any("999:U: kind 'obvious' is not one of" in p for p in C.validate_registry(C.load_registry()))
