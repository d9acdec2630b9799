"""Issue 41 item 3: every criterion kind says how far a measurement sits inside or outside it, in its own units
(n/a where it has no margin), every check table has a margin column, and a report page lists its closest calls."""
import math

import pytest

from shallowflow.verdicts import criteria as C
from shallowflow.verdicts.checks import Claims
from shallowflow.verdicts.scorecard import closest_calls, verdict_table_html


@pytest.mark.parametrize("criterion, measured, margin, scale", [
    (C.above(1.35), 1.383, 0.033, 1.35),  # 002 Theorem 1's tightest check of issue 41
    (C.above(1.35), [1.9, 1.383, 2.0], 0.033, 1.35),  # the worst value decides
    (C.above(0.5, strict=True), 0.3, -0.2, 0.5),
    (C.below(0.05), [0.01, 0.04], 0.01, 0.05),
    (C.below(1e-12, strict=False), 3e-12, -2e-12, 1e-12),
    (C.within(0.95, 1.05), [0.99, 1.04], 0.01, 0.1),
    (C.within(0.95, 1.05), 0.9, -0.05, 0.1),
    (C.close_to(2.0, rtol=1e-3), 2.0015, 0.0005, 0.002),
    (C.close_to(2.0, atol=0.1), 1.95, 0.05, 0.1),
    (C.rejected_by(C.above(0.5)), 0.2, 0.3, 0.5),  # a control: inside when the deciding criterion rejects
])
def test_margin_in_the_criterions_units(criterion, measured, margin, scale):
    assert criterion.margin(measured) == pytest.approx(margin, abs=1e-12)
    assert criterion.relative_margin(measured) == pytest.approx(margin / scale, rel=1e-9)
    assert (criterion.margin(measured) > 0) == criterion(measured) or criterion.margin(measured) == 0
    word = "inside" if margin > 0 else "outside"
    assert word in criterion.margin_text(measured)


def test_no_margin_says_n_a():
    assert C.is_true().margin(True) is None and C.is_true().margin_text(True) == "n/a"
    custom = C.Criterion("interval contains 1", lambda v: v > 0)
    assert custom.margin_text([1.0, 2.0]) == "n/a" and custom.relative_margin(1.0) is None
    assert C.below(1.0).margin_text(float("nan")) == "n/a"  # no finite value: no margin
    assert C.above(0.0).relative_margin(1.0) is None  # a zero bound has no scale to compare with


def test_a_check_records_its_margin_and_the_table_shows_it():
    cl = Claims("999", "book/x/y", profile="custom")
    cl.check("A/close", "x", 1.383, C.above(1.35), valid=None)
    cl.check("A/far", "x", 10.0, C.above(1.35), valid=None)
    cl.check("A/yes", "x", True, C.is_true(), valid=None)
    cl.check("A/bad", "x", [1.0, 2.0], C.below(3.0), valid=[True, False])
    by = {c.id: c for c in cl.checks}
    assert by["A/close"].margin_text.startswith("0.033 inside") and by["A/yes"].margin_text == "n/a"
    assert by["A/bad"].margin is None and by["A/bad"].margin_text == "n/a (invalid runs)"
    html = verdict_table_html(cl.rows())
    assert "<th>margin</th>" in html
    assert html.count("class='sf-col-margin'") == html.count("class='sf-check'") == 4
    assert "margin 0.033 inside" in cl.report()
    rows = [dict(id=c.id, verdict=c.verdict, margin_rel=c.margin_rel) for c in cl.checks]
    assert [c["id"] for c in closest_calls(rows)] == ["A/close", "A/far"]  # passing, with a margin, closest first
    assert all(math.isfinite(c["margin_rel"]) for c in closest_calls(rows))


def test_an_infinite_bound_has_no_margin():
    assert C.below(float("inf")).margin(11.6) is None and C.below(float("inf")).margin_text(11.6) == "n/a"
