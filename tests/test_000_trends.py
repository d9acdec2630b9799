"""Trends 'as lambda decreases' compare consecutive scales, never two seeds of one scale (non-orthogonal C.30-C.35)."""
from shallowflow.experiments.brisbois_thesis import non_orthogonal as N


def test_per_scale_takes_the_median_over_seeds_and_orders_by_decreasing_lambda():
    # two seeds at each of two scales: epochs grow as lambda falls (100 -> 300), the seeds differ (80, 120; 250, 350)
    T = [80.0, 120.0, 250.0, 350.0]
    scales = [1.0, 1.0, 1e-6, 1e-6]
    assert N.per_scale(T, scales, [3, 0, 2, 1]) == [100.0, 300.0]
    ratios = [b / a for a, b in zip(*(lambda v: (v, v[1:]))(N.per_scale(T, scales, range(4))))]
    assert min(ratios) == 3.0  # run by run the smallest 'consecutive' ratio was 120/80 within lambda = 1 or 250/120 < 1


def test_one_seed_per_scale_keeps_the_runs_values():
    assert N.per_scale([5.0, 7.0, 9.0], [2.0, 1.0, 0.5], [2, 0, 1]) == [5.0, 7.0, 9.0]
