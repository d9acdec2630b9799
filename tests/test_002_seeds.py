"""002 (early alignment): a seed's numbers are the same alone and inside a batch.

Every random draw of a run comes from its own seed (``init.*`` draws run r from
``torch.Generator().manual_seed(seeds[r])``, the data are fixed), and every run is trained and observed on
its own, so a reader re-running one seed of a page gets that seed's numbers bit for bit.
"""
from types import SimpleNamespace

import torch

from shallowflow.experiments.early_alignment import alignment, assumption3
from shallowflow.experiments.early_alignment import theory as th
from shallowflow.engine.models import Network
from shallowflow.engine.train import gradient_descent


def _sweep(seeds):
    P = SimpleNamespace(width=20, scales=[1e-2, 1e-3], seeds=seeds, epsilons=[0.5], lr=1e-2, time=3.0,
                        monitor_every=10, eps2=1e-2, eps3=1e-2)
    return alignment.run_sweep(P)


def test_alignment_sweep_seed_alone_and_in_batch():
    alone, batch = _sweep([3]), _sweep([0, 3, 5])
    # run order: scale-major, seed-minor; seed 3 is run 1 of each scale in the batch, run 0 alone
    for i in range(2):
        a, b = i, 3 * i + 1
        assert torch.equal(alone.run.final.W[a], batch.run.final.W[b])
        assert torch.equal(alone.run.final.a[a], batch.run.final.a[b])
        assert torch.equal(alone.run.loss[a], batch.run.loss[b])
        for key, v in alone.at_tau[0.5].items():
            torch.testing.assert_close(v[a], batch.at_tau[0.5][key][b], rtol=0, atol=0, equal_nan=True, msg=key)


def test_unbalanced_contrast_seed_alone_and_in_batch():
    """assumption3's unbalanced contrast: initialise + gradient descent on one dataset, per seed."""
    from shallowflow.engine import data as datasets
    X, y = datasets.assumption3_sample(0.15, 1, seed=900)
    net = Network("relu")

    def final(seeds):
        Xr, yr = th.per_run_data(X, y, len(seeds))
        p0 = th.initialise("unbalanced", seeds, 7, 2, 1e-2)
        return gradient_descent(p0, (Xr, yr), net, steps=200, lr=1e-2, loss=th.LOSS, stop_below=1e-12).final

    a, b = final([2]), final([0, 2, 1])
    assert torch.equal(a.W[0], b.W[1]) and torch.equal(a.a[0], b.a[1])


def test_unbalanced_seeds_is_a_list_of_seeds():
    assert assumption3.SCHEMA["unbalanced_seeds"].kind == "ints"


def test_failure_rates_grid_seed_alone_and_in_batch():
    """failure-rates: a cell's seed list; seed 4's run is the same alone and among others (issue 29)."""
    from shallowflow.experiments.early_alignment import failure_rates
    from shallowflow.engine import data as datasets
    three = datasets.get("ea-three-point", device="cpu")
    alone = failure_rates.run_grid(three, [10], [1e-2, 1.0], lambda m: [4], lr=1e-2, T=2.0)
    batch = failure_rates.run_grid(three, [10], [1e-2, 1.0], lambda m: [0, 4, 7], lr=1e-2, T=2.0)
    assert alone.seeds[10] == [4] and batch.seeds[10] == [0, 4, 7]
    for sc in (1e-2, 1.0):
        assert torch.equal(alone.loss[(10, sc)][0], batch.loss[(10, sc)][1])
        assert alone.outcomes_of(10, sc, [4]) == batch.outcomes_of(10, sc, [4])


def test_assumption3_gd_seed_alone_and_in_batch():
    """assumption3: gd_seeds is a list; seed 2's runs are the same alone and among others."""
    alone = assumption3.a3_gd([0.1], [10], [2], [2], 1e-3, lr=1e-2, T=1.0)
    batch = assumption3.a3_gd([0.1], [10], [2], [0, 2], 1e-3, lr=1e-2, T=1.0)
    a, b = alone[(0.1, 10)], batch[(0.1, 10)]
    # run order: dataset-major, seed-minor
    for d in range(2):
        assert torch.equal(a["loss"][d], b["loss"][2 * d + 1])
