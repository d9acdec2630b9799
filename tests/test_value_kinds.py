"""Issue 41 items 1 and 2: every measured value is printed with its kind (a value, a range over runs with their
count, an interval with its level, method and count), read from what the measurement holds; intervals of a bounded
quantity stay inside its bounds."""
import math
import pickle

import numpy as np
import pytest

from shallowflow.engine import metrics
from shallowflow.verdicts import criteria as C
from shallowflow.verdicts.checks import Claims


def claims():
    return Claims("999", "book/x/y", profile="custom")


def test_one_value_is_a_value():
    c = claims().check("A/one", "x", 1.5, C.below(2.0), valid=None)
    assert (c.measured, c.kind, c.count) == ("1.5", "value", 1)


def test_one_value_per_run_is_a_range_over_the_runs():
    c = claims().check("A/range", "x", [1.0, 3.0, 2.0], C.below(4.0), valid=[True, True, True])
    assert c.measured == "1 .. 3 (range over 3 runs)" and c.kind == "range" and c.count == 3


def test_values_that_are_not_one_per_run_say_so():
    c = claims().check("A/cells", "x", [1.0, 3.0], C.below(4.0), valid=[True] * 224)
    assert c.measured == "1 .. 3 (range of 2 values)" and c.kind == "values" and "runs" not in c.measured


@pytest.mark.parametrize("make, method, n", [
    (lambda: metrics.mean_interval([1.3, 1.5, 1.4, 1.45]), "t-interval", 4),
    (lambda: metrics.slope_interval([1, 2, 3, 4, 5], [2.1, 3.9, 6.2, 8.0, 9.9]), "t-interval", 5),
    (lambda: metrics.share_interval([1, 1, 0, 1, 1]), "Wilson interval", 5),
    (lambda: metrics.mean_interval([0.1, 0.87, 0.87], bounds=(0, 1)), "logit-t interval", 3),
])
def test_an_intervals_ends_are_printed_as_an_interval_with_level_method_and_count(make, method, n):
    m = make()
    c = claims().check("A/interval", "x", [m["low"], m["high"]], C.within(-100, 100), valid=[True] * 224)
    assert c.kind == "interval" and c.level == 0.95 and c.count == n
    assert c.measured.startswith("[") and c.measured.endswith(f"(95% {method}, n = {n})"), c.measured
    assert "runs)" not in c.measured  # never read as a range over runs
    one = claims().check("A/low", "x", m["low"], C.above(-100), valid=[True] * 3)
    assert one.kind == "interval end" and one.measured.endswith(f"(lower end of a 95% {method}, n = {n})")


def test_interval_ends_stay_floats_and_pickle():
    m = metrics.mean_interval([1.0, 2.0, 3.0])
    low = pickle.loads(pickle.dumps(m["low"]))
    assert isinstance(low, float) and (low.end, low.n, low.level, low.method) == ("low", 3, 0.95, "t")
    assert type(m["low"] + m["high"]) is float  # two measured numbers combined: not an interval end
    scaled = m["low"] / 2.0  # the same end of the interval of the quantity over a constant (a prediction)
    assert isinstance(scaled, metrics.IntervalEnd) and scaled.end == "low" and scaled == float(m["low"]) / 2
    assert (-m["low"]).end == "high" and (1 - m["low"]).end == "high" and (m["high"] * -3).end == "low"
    ratio = [m["low"] / 4.0, m["high"] / 4.0]
    c = claims().check("A/ratio", "x", ratio, C.above(-10), valid=[True] * 3)
    assert c.kind == "interval" and c.measured.endswith("(95% t-interval, n = 3)")


@pytest.mark.parametrize("values", [[0.1, 0.87, 0.87], [0.999, 0.998, 0.2], [1.0, 0.2, 0.95], [0.0, 0.0, 0.5],
                                    [0.5, 0.5], [1.0, 1.0, 1.0]])
def test_a_bounded_mean_interval_stays_inside_its_bounds(values):
    m = metrics.mean_interval(values, bounds=(0, 1))
    assert 0.0 <= m["low"] <= m["mean"] <= m["high"] <= 1.0, m
    assert m["method"] in ("logit-t", "bounded score")
    t = metrics.mean_interval(values)
    if values == [0.1, 0.87, 0.87]:  # the ADLER cell of issue 41: the t-interval leaves [0, 1]
        assert t["low"] < 0 and t["high"] > 1


def test_a_bounded_mean_refuses_values_outside_its_bounds():
    with pytest.raises(ValueError, match="outside their declared bounds"):
        metrics.mean_interval([0.5, 1.2], bounds=(0, 1))
    with pytest.raises(ValueError, match="bounds"):
        metrics.mean_interval([0.5], bounds=(1, 0))


def test_describe_mean_names_a_bounded_intervals_method():
    text = metrics.describe_mean([0.1, 0.87, 0.87], bounds=(0, 1))
    assert "logit-t interval [" in text
    lo, hi = (float(x) for x in text.split("[")[1].rstrip("])").split(", "))
    assert 0 <= lo <= hi <= 1
    assert metrics.describe_mean([1.0, 2.0, 3.0]) == "2 ± 1 (3 runs; 95% interval [-0.484, 4.48])"  # unchanged


def test_shares_wilson_ends_are_inside_zero_one():
    for k in range(0, 6):
        s = metrics.share_interval([1] * k + [0] * (5 - k))
        assert 0.0 <= s["low"] <= s["share"] <= s["high"] <= 1.0
        assert not math.isnan(s["low"])


def test_the_record_holds_the_kind(tmp_path, monkeypatch):
    cl = claims()
    m = metrics.mean_interval([1.3, 1.5, 1.4])
    cl.check("A/interval", "x", [m["low"], m["high"]], C.within(0, 3), valid=[True] * 3)
    row = {k: getattr(cl.checks[0], k) for k in ("kind", "level", "count", "method")}
    assert row == dict(kind="interval", level=0.95, count=3, method="t")
    assert np.allclose(cl.checks[0].values, [m["low"], m["high"]])


def test_values_equal_to_the_digits_shown_read_as_one():
    c = claims().check("A/same", "x", [0.99999871, 0.99999872, 0.99999870], C.below(2.0), valid=[True] * 3)
    assert c.measured == "0.9999987 (all 3 runs)" and c.kind == "range"


def test_a_chapters_own_interval_can_say_what_it_is():
    lo, hi = metrics.interval_ends(1.49, 2.08, 224, 0.95, "profile")
    c = claims().check("A/own", "x", [lo, hi], C.within(0, 3), valid=[True] * 224)
    assert c.measured == "[1.49, 2.08] (95% profile interval, n = 224)" and c.kind == "interval"
