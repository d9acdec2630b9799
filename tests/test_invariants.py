"""Balancedness (003, Lemma 1) under gradient descent: conserved to O(step^2) per step.

One GD step of size eta on the papers' loss changes a_j^2 - ||w_j||^2 by exactly
eta^2 (<D_j, w_j>^2 - a_j^2 ||D_j||^2) for ReLU without output scaling [derived in the 003 spec],
so the drift accumulated over a fixed flow time T = k eta is O(eta): halving the step halves it.
"""
import torch

from shallowflow.engine import init, metrics, theory
from shallowflow.engine.models import Network
from shallowflow.engine.train import gradient_descent


def test_one_step_changes_balancedness_by_the_exact_second_order_term(toy):
    p = init.balanced([0, 1, 2], 20, toy.d, 0.3, device="cpu")
    net = Network("relu")
    eta = 1e-2
    _, ga, gW = net.gradients(p, toy.X, toy.y, "half")
    # D_j a_j = -dL/dw_j and <D_j, w_j> = -dL/da_j (003, eq. (3))
    D = -gW / p.a.unsqueeze(-1)
    predicted = eta ** 2 * ((D * p.W).sum(-1) ** 2 - p.a ** 2 * (D ** 2).sum(-1))
    after = gradient_descent(p, toy, net, steps=1, lr=eta, loss="half").final
    change = metrics.balancedness(after) - metrics.balancedness(p)
    torch.testing.assert_close(change, predicted, rtol=1e-9, atol=1e-18)
    assert float(predicted.max()) <= 1e-18, "balanced start: the change is never positive"


def test_cumulative_drift_is_first_order_in_the_step(toy):
    p = init.balanced([3], 20, toy.d, 0.3, device="cpu")
    T = 4.0
    drift = []
    for eta in (1e-2, 5e-3):
        q = gradient_descent(p, toy, Network(), steps=int(round(T / eta)), lr=eta).final
        drift.append(float(metrics.balancedness(q).abs().max()))
    assert drift[0] > 0
    assert 1.8 < drift[0] / drift[1] < 2.2, drift


def test_signs_kept_and_drift_small_along_a_toy_run(toy):
    """Lemma 1's consequence a_j = s_j ||w_j|| holds along a GD run up to the O(eta) drift (spec: <= 1e-3 ||w||^2)."""
    p = init.balanced([4], 30, toy.d, 1e-3, device="cpu")
    q = gradient_descent(p, toy, Network(), steps=6000, lr=2e-3).final
    assert bool(((q.a > 0) == (p.a > 0)).all()), "an output weight changed sign"
    drift = metrics.balancedness(q).abs().max()
    assert float(drift) <= 1e-3 * float(metrics.neuron_norms(q).max() ** 2)
