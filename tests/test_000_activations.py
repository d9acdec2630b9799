"""000 activations, Fig3.4/alignment-tighter: a seed of align_seeds reads the same variances whether its runs come from
the chapter's main grid (the seed is also in seeds) or are trained for the check alone (a seed's numbers are the same
alone or in a batch)."""
from types import SimpleNamespace

import numpy as np

from shallowflow.experiments.brisbois_thesis import activations as A


def test_alignment_order_is_the_same_from_the_grid_and_alone():
    base = dict(width=20, lr=1e-2, steps=400, rich_scales=[1e-6, 1e-2], lazy_scale=1.0, snap_every=50)
    out = {}
    for seeds in ([0, 1], [0]):
        P = SimpleNamespace(**base, seeds=seeds, align_seeds=[0, 1])
        out[tuple(seeds)] = A.alignment_order(P, A.run(P))
    a, b = out[(0, 1)], out[(0,)]
    assert a["seeds"] == b["seeds"]
    assert np.allclose(a["variances"], b["variances"], rtol=0, atol=1e-12, equal_nan=True)
    assert np.array_equal(a["flags"], b["flags"]) and np.array_equal(a["valid"], b["valid"])


def test_fig37_runs_are_the_same_from_the_grid_and_alone():
    """Fig. 3.7's shares: a seed of fig37_seeds reads the same measures whether its Sigmoid run comes from the main grid
    (the seed is also in seeds) or is trained for the checks alone."""
    base = dict(width=20, lr=1e-2, steps=3000, rich_scales=[1e-6, 1e-2], lazy_scale=1.0, snap_every=50, align_seeds=[0])
    out = {}
    for seeds in ([0, 1], [0]):
        P = SimpleNamespace(**base, seeds=seeds, fig37_seeds=[0, 1, 2])
        out[tuple(seeds)] = A.fig37_runs(P, A.run(P))
    a, b = out[(0, 1)], out[(0,)]
    assert a["seeds"] == b["seeds"] == [0, 1, 2]
    for k in ("one_dir", "fits", "ratio", "chord"):
        assert np.allclose(a[k], b[k], rtol=0, atol=1e-12, equal_nan=True), k
    for k in ("valid", "one_dir_flags", "simultaneous_flags", "straight_flags", "both_flags"):
        assert np.array_equal(a[k], b[k]), k
    assert (a["fits"] > 0).all()  # the runs learned: the comparison is between trained measures
