"""Gradients of the two-layer network: autograd, finite differences and the closed form of 003 eq. (3)."""
import itertools

import pytest
import torch

from shallowflow.engine import init, theory
from shallowflow.engine.data import Dataset, orthonormal
from shallowflow.engine.models import Network, Params, flow_time_per_step, loss_factor


def _random(R=3, m=7, d=4, n=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    p = Params(torch.randn(R, m, generator=g, dtype=torch.float64), torch.randn(R, m, d, generator=g, dtype=torch.float64))
    X = torch.randn(n, d, generator=g, dtype=torch.float64)
    y = torch.randn(n, generator=g, dtype=torch.float64)
    return p, X, y


@pytest.mark.parametrize("activation,scaling,loss", list(itertools.product(
    ["relu", "leaky_relu", "sigmoid", "tanh"], ["none", "sqrt", "mean"], ["half", "mean"])))
def test_hand_gradients_match_autograd(activation, scaling, loss):
    net = Network(activation, scaling, leak=0.1)
    p, X, y = _random()
    L, ga, gW = net.gradients(p, X, y, loss)
    a = p.a.clone().requires_grad_(True)
    W = p.W.clone().requires_grad_(True)
    L2 = net.loss(Params(a, W), X, y, loss)
    L2.sum().backward()
    torch.testing.assert_close(L, L2.detach(), rtol=1e-13, atol=0)
    torch.testing.assert_close(ga, a.grad, rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(gW, W.grad, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("activation", ["sigmoid", "tanh", "relu"])
def test_gradients_match_finite_differences(activation):
    net = Network(activation)
    p, X, y = _random(R=1, m=3, d=2, n=4, seed=1)
    _, ga, gW = net.gradients(p, X, y, "half")
    flat = p.flat()[0]
    grad = torch.cat([ga[0], gW[0].reshape(-1)])
    h = 1e-6
    for i in range(flat.numel()):
        e = torch.zeros_like(flat)
        e[i] = h

        def L(v):
            return float(net.loss(Params(v[:3][None], v[3:].reshape(1, 3, 2)), X, y, "half")[0])

        fd = (L(flat + e) - L(flat - e)) / (2 * h)
        assert abs(fd - float(grad[i])) < 1e-7 * max(1.0, abs(fd)), (i, fd, float(grad[i]))


def test_relu_gradient_is_the_papers_closed_form(toy):
    """003 eq. (3): da_j/dt = <D_j, w_j>, dw_j/dt = D_j a_j with D_j = -1/n sum 1{<w_j,x_k> > 0}(h(x_k)-y_k) x_k."""
    p = init.balanced([3], 6, toy.d, 0.7, device="cpu")
    net = Network("relu")
    _, ga, gW = net.gradients(p, toy.X, toy.y, "half")
    r = net.forward(p, toy.X)[0] - toy.y
    act = (p.W[0] @ toy.X.T > 0).double()  # (m, n)
    D = -(act * r) @ toy.X / toy.n  # (m, d)
    torch.testing.assert_close(-ga[0], (D * p.W[0]).sum(1), rtol=1e-13, atol=1e-15)
    torch.testing.assert_close(-gW[0], D * p.a[0, :, None], rtol=1e-13, atol=1e-15)


def test_relu_derivative_at_zero_is_zero():
    net = Network("relu")
    z = torch.tensor([-1.0, 0.0, 1.0], dtype=torch.float64)
    assert net.dsigma(z).tolist() == [0.0, 0.0, 1.0]


def test_loss_conventions_and_time_mapping(toy):
    p = init.balanced([0], 4, toy.d, 1.0, device="cpu")
    net = Network()
    half = net.loss(p, toy.X, toy.y, "half")
    mean = net.loss(p, toy.X, toy.y, "mean")
    torch.testing.assert_close(mean, 2 * half)
    assert loss_factor("half") == 0.5 and loss_factor("mean") == 1.0
    assert flow_time_per_step(1e-3, "mean") == 2e-3 and flow_time_per_step(1e-3, "half") == 1e-3
    with pytest.raises(ValueError, match="loss must be one of"):
        loss_factor("sum")


def test_unknown_activation_is_refused():
    with pytest.raises(ValueError, match="activation must be one of"):
        Network("gelu")


def test_per_run_inputs_broadcast():
    """Per-run datasets (R, n, d) give the same result as the shared one for each run."""
    p, X, y = _random(R=2)
    net = Network("tanh")
    shared = net.gradients(p, X, y)
    per_run = net.gradients(p, X.expand(2, *X.shape), y.expand(2, *y.shape))
    for s, q in zip(shared, per_run):
        torch.testing.assert_close(s, q)


@pytest.mark.parametrize("per_run", [False, True])
def test_evaluate_in_blocks_of_runs_gives_forward_values(per_run):
    """Network.evaluate bounds an evaluation's memory by taking the runs in blocks: the values are forward's
    whatever the block size (one run a block here), bit for bit for per-run inputs, to rounding for shared ones
    (torch folds the runs of a shared input into one matrix product, a block into a smaller one)."""
    net = Network("tanh", "sqrt")
    p, X, _ = _random(R=5, m=6, d=3, n=40)
    if per_run:
        X = torch.randn(5, 40, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    whole = net.forward(p, X)
    for max_bytes in (1, 6 * 40 * 8 * 2, 1e12):
        got = net.evaluate(p, X, max_bytes=max_bytes)
        if per_run:
            assert torch.equal(got, whole)
        else:
            torch.testing.assert_close(got, whole, rtol=1e-14, atol=1e-15)
