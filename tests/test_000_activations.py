"""000 activations, Fig3.4/alignment-tighter and the typical-run shares of Figs 3.7 and 3.8: a seed of align_seeds (fig37_seeds, fig38_seeds) reads the same variances whether its runs come from
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


def test_fig37_and_fig38_runs_are_the_same_from_the_grid_and_alone():
    """Figs 3.7 and 3.8's shares: a seed of fig37_seeds (fig38_seeds) reads the same measures whether its Sigmoid (Tanh)
    run comes from the main grid (the seed is also in seeds) or is trained for the checks alone."""
    base = dict(width=20, lr=1e-2, steps=3000, rich_scales=[1e-6, 1e-2], lazy_scale=1.0, snap_every=50, align_seeds=[0])
    out = {}
    for seeds in ([0, 1], [0]):
        P = SimpleNamespace(**base, seeds=seeds, fig37_seeds=[0, 1, 2], fig38_seeds=[2, 0, 1])
        res = A.run(P)
        out[tuple(seeds)] = (A.fig37_runs(P, res), A.fig38_runs(P, res))
    flags = (("valid", "one_dir_flags", "simultaneous_flags", "straight_flags", "both_flags"),
             ("valid", "one_dir_flags", "positive_first_flags", "sequential_flags"))
    for i, (a, b) in enumerate(zip(out[(0, 1)], out[(0,)])):
        assert a["seeds"] == b["seeds"] == ([0, 1, 2], [2, 0, 1])[i]
        for k in ("one_dir", "fits", "ratio", "gap", "chord"):
            assert np.allclose(a[k], b[k], rtol=0, atol=1e-12, equal_nan=True), (i, k)
        for k in flags[i]:
            assert np.array_equal(a[k], b[k]), (i, k)
        assert (a["fits"] > 0).all(), i  # the runs learned: the comparison is between trained measures
    # the same seed, Sigmoid and Tanh: different runs (each figure trains its own activation)
    assert not np.allclose(out[(0,)][0]["fits"][0], out[(0,)][1]["fits"][1])
