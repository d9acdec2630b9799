import torch

from shallowflow.engine import metrics
from shallowflow.engine.models import Params


def test_first_below_and_never():
    curve = torch.tensor([[1.0, 0.9, 0.5, 0.1], [1.0, 1.0, 1.0, 1.0]], dtype=torch.float64)
    steps = torch.tensor([0, 10, 20, 30])
    assert metrics.first_below(curve, 0.6, steps).tolist() == [20, -1]
    assert metrics.first_below(curve, torch.tensor([0.95, 1.5]), steps).tolist() == [10, 0]


def test_longest_run_within():
    curve = torch.tensor([[1, .25, .251, .25, 2, .25, .25], [.25] * 7], dtype=torch.float64)
    assert metrics.longest_run_within(curve, 0.25, 0.01).tolist() == [3, 7]


def test_kinks_signed_norms_cosines():
    W = torch.tensor([[[2.0, 1.0], [-0.5, 1.0]]], dtype=torch.float64)
    p = Params(torch.tensor([[3.0, -2.0]], dtype=torch.float64), W)
    torch.testing.assert_close(metrics.kinks(p), torch.tensor([[-0.5, 2.0]], dtype=torch.float64))
    torch.testing.assert_close(metrics.signed_norms(p), torch.tensor([[5 ** .5, -(1.25 ** .5)]], dtype=torch.float64))
    torch.testing.assert_close(metrics.cosines(W, torch.tensor([2.0, 1.0], dtype=torch.float64)),
                               torch.tensor([[1.0, 0.0]], dtype=torch.float64))
    torch.testing.assert_close(metrics.squared_norm(p), torch.tensor([9 + 4 + 5 + 1.25], dtype=torch.float64))
    torch.testing.assert_close(metrics.balancedness(p), torch.tensor([[4.0, 2.75]], dtype=torch.float64))


def test_max_relative_increase():
    c = torch.tensor([[3.0, 2.0, 1.0], [1.0, 1.5, 1.0]], dtype=torch.float64)
    torch.testing.assert_close(metrics.max_relative_increase(c), torch.tensor([-1 / 3, 0.5], dtype=torch.float64))


def test_share_and_mean_intervals_match_closed_forms():
    from scipy import stats
    s = metrics.share_interval([True] * 19 + [False], level=0.95)
    assert (s["k"], s["n"]) == (19, 20) and s["low"] < 0.95 < s["high"] <= 1
    # Wilson at p = 1/2, n = 4, z = 1.96: centre 1/2, half-width z sqrt(1/16 + z^2/64) / (1 + z^2/4)
    z = stats.norm.ppf(0.975)
    w = metrics.share_interval([1, 0, 1, 0])
    assert abs(w["high"] - (0.5 + z * (1 / 16 + z * z / 64) ** 0.5 / (1 + z * z / 4))) < 1e-12
    assert metrics.share_interval([1, 0, 1, 0], level=0.5)["high"] < w["high"]  # a lower level is narrower
    m = metrics.mean_interval([1.0, 2.0, 3.0, float("nan")])
    assert m["n"] == 3 and m["mean"] == 2.0 and abs(m["high"] - (2 + stats.t.ppf(0.975, 2) / 3 ** 0.5)) < 1e-12
    assert "1 run" in metrics.describe_mean([4.0]) and "3 runs" in metrics.describe_mean([1, 2, 3.0])


def test_newcombe_difference_matches_newcombe_1998():
    # Newcombe (1998), Statistics in Medicine 17, Table II example (a): 56/70 - 48/80, method 10: [0.0524, 0.3339]
    low, high = metrics.newcombe_difference(56 / 70, 48 / 80, 70, n2=80)
    assert round(low, 4) == 0.0524 and round(high, 4) == 0.3339
    # the Wilson interval is share_interval's
    s = metrics.share_interval([True] * 7 + [False] * 3)
    assert metrics.wilson(0.7, 10) == (s["low"], s["high"])


def test_wilson_interval_contains_the_share_exactly_at_zero_and_one():
    # rounding put the low end 1e-17 above a share of 0 (and the high end below 1) for 96 of 400 run counts up to 200 (38 of 160 up to 80): a
    # negative error bar stopped 001 threshold's paper run
    for n in range(1, 81):
        for k in range(n + 1):
            low, high = metrics.wilson(k / n, n)
            assert low <= k / n <= high, (k, n)
        assert metrics.wilson(0.0, n)[0] == 0.0 and metrics.wilson(1.0, n)[1] == 1.0
