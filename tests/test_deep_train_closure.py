"""deep.train: PerRunSGD steps on the gradient the loop already computed (no closure: one forward and backward
pass per step, not two), with the same numbers as when a closure recomputes it; an optimizer that needs a
closure still gets one; DeepFCN.forward_features is forward and features from one pass."""
import torch

from shallowflow.deep import models
from shallowflow.deep import train as dtrain


def _setup():
    g = torch.Generator().manual_seed(3)
    X = torch.randn(6, 5, generator=g, dtype=torch.float64)
    y = torch.tensor([0, 1, 2, 0, 1, 2])
    return X, y, models.DeepFCN(5, 8, 3, classes=3, seeds=[0, 1], device="cpu")


class _WithClosure(dtrain.PerRunSGD):
    needs_closure = True  # the loop's old behaviour: the closure recomputes the gradient before the step


def _run(opt_cls):
    X, y, m = _setup()
    calls = []

    def objective(step):
        calls.append(step)
        return dtrain.loss_per_run(m(X), y, "ce")

    hist = dtrain.train(m.parameters(), objective, opt_cls(m.parameters(), lr=[0.1, 0.05]), 6)
    return hist, calls, [p.detach().clone() for p in m.parameters()]


def test_per_run_sgd_evaluates_the_objective_once_per_step_with_identical_numbers():
    hist, calls, params = _run(dtrain.PerRunSGD)
    assert calls == list(range(7))  # one evaluation per step (and the last), none inside the optimizer
    hist2, calls2, params2 = _run(_WithClosure)
    assert len(calls2) == 7 + 6  # the closure's extra evaluation before each of the 6 steps
    assert torch.equal(hist.loss, hist2.loss)
    assert all(torch.equal(a, b) for a, b in zip(params, params2))


def test_forward_features_is_forward_and_features():
    X, _, m = _setup()
    out, feats = m.forward_features(X)
    assert torch.equal(out, m(X))
    assert all(torch.equal(a, b) for a, b in zip(feats, m.features(X)))
