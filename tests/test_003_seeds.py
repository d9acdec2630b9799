"""003 (orthogonal inputs): a seed's numbers are the same alone and inside a batch, and the necessity runs'
seed screen reports the seeds it rejects instead of drawing others.
"""
import torch

from shallowflow.experiments.orthogonal_inputs import implicit_bias, remarks
from shallowflow.experiments.orthogonal_inputs.theory import make_ensemble
from shallowflow.engine.models import Network
from shallowflow.engine.train import gradient_descent


def test_toy_sweep_seed_alone_and_in_batch():
    alone = remarks.run_toy_sweep(6, [1e-2], [3], 1e-3, 60)
    batch = remarks.run_toy_sweep(6, [1e-2], [1, 3, 4], 1e-3, 60)
    assert torch.equal(alone.traj.final.W[0], batch.traj.final.W[1])
    assert torch.equal(alone.traj.final.a[0], batch.traj.final.a[1])
    assert torch.equal(alone.traj.loss[0], batch.traj.loss[1])


def test_ortho_ensemble_seed_alone_and_in_batch():
    def final(seeds):
        e = make_ensemble("ortho-B", 9, [1e-4], seeds, [0.05])
        tr = gradient_descent(e.p0, e.data, Network("relu"), steps=300, lr=e.lrs, loss="half")
        return e, tr.final

    (ea, a), (eb, b) = final([4]), final([2, 4])
    assert torch.equal(ea.s_plus[0], eb.s_plus[1]) and torch.equal(a.W[0], b.W[1]) and torch.equal(a.a[0], b.a[1])


def test_necessity_screen_keeps_todays_seeds_and_names_the_rejected():
    keep, rejected = implicit_bias.screen_necessity("ortho-B", 8, list(range(21)))
    assert keep == implicit_bias.necessity_seeds("ortho-B", 8, len(keep))  # the first ones of the old scan
    assert sorted(keep + list(rejected)) == list(range(21)) and all(rejected.values())
    # a seed's verdict does not depend on the other seeds screened with it
    for s in (0, 1, 11):
        k1, r1 = implicit_bias.screen_necessity("ortho-B", 8, [s])
        assert (s in k1) == (s in keep) and r1.get(s) == rejected.get(s)
