"""Issue 41, items 1 and 6, at unit scale: intervals a chapter builds itself print as intervals (level, method,
count), never as "range of 2 values"; a figure's axes hold every point its verdict uses."""
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from shallowflow.experiments.weakly_interacting import threshold as TH  # noqa: E402
from shallowflow.site import plots  # noqa: E402
from shallowflow.verdicts.criteria import describe  # noqa: E402


def test_exponent_envelope_prints_as_an_interval():
    text, kind = describe(TH.envelope_ends(dict(lo=0.94, hi=3.64), 3, 0.95))
    assert text == "[0.94, 3.64] (95% threshold-envelope interval, n = 3)"
    assert kind["kind"] == "interval" and kind["count"] == 3


def test_envelope_without_interval_is_not_labelled_one():
    text, kind = describe(TH.envelope_ends(dict(lo=math.nan, hi=math.nan), 0, 0.95))
    assert "interval" not in text and kind["kind"] != "interval"


def test_ratio_interval_counts_the_runs_of_both_fits():
    rows = [dict(converged=np.ones(4)), dict(converged=np.zeros(4))]
    fl = dict(lo=0.9, hi=1.02, gauss=dict(rows=rows), uniform=dict(rows=rows))
    text, kind = describe(TH.ratio_ends(fl, 0.9))
    assert text == "[0.9, 1.02] (90% bootstrap interval, n = 16)"


def test_the_ends_leave_the_criterion_unchanged():
    ends = TH.envelope_ends(dict(lo=0.8, hi=1.6), 3, 0.95)
    crit = TH.exponent_test(1.0, 2.0)
    assert crit(ends) == crit([0.8, 1.6]) is True
    assert crit(TH.envelope_ends(dict(lo=0.8, hi=2.5), 3)) == crit([0.8, 2.5]) is False


def test_hold_points_shows_every_point():
    fig, ax = plt.subplots()
    try:
        ax.plot([10, 20, 45], [30, 80, 300])  # one curve ends early
        xs = np.array([10, 20, 45] + TH.AUTHORS_FIG4["d"], float)
        ys = np.array([30, 80, 300] + TH.AUTHORS_FIG4["N"], float)
        ax.set_xlim(0, 49)  # the limit the page had
        (x0, x1), (y0, y1) = plots.hold_points(ax, np.append(xs, np.nan), np.append(ys, 1.0))
        assert ax.get_xlim() == (x0, x1) and ax.get_ylim() == (y0, y1)
        assert x0 <= xs.min() and x1 > xs.max() and y0 <= ys.min() and y1 > ys.max()
        assert x0 == 0 and y0 == 0
    finally:
        plt.close(fig)
