"""ADLER, Gauss-Newton and the fixed-rate step (shallowflow.deep.optim) against hand computations, and the vision
models (shallowflow.deep.vision)."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from shallowflow.deep import optim as dopt
from shallowflow.deep import vision


def _linear(seed=0, n=20, d=7):
    g = torch.Generator().manual_seed(seed)
    Phi = torch.randn(n, d, generator=g, dtype=torch.float64)
    y = torch.randn(n, 1, generator=g, dtype=torch.float64)
    model = torch.nn.Linear(d, 1, bias=False).double()
    with torch.no_grad():
        model.weight.copy_(torch.randn(1, d, generator=g, dtype=torch.float64))
    return Phi, y, model


def _mse(y):
    return lambda out: 0.5 * ((out - y) ** 2).sum(1).mean()


def test_adler_least_squares_step_is_exact_line_search():
    # h(w) = 1/(2n) ||Phi w - y||^2 is quadratic and F is linear: eta = G^T G / (G^T Q G) with Q = Phi^T Phi / n,
    # the exact minimiser of h(w - eta G); with eps = 0 the step must match it to rounding
    Phi, y, model = _linear()
    w0 = model.weight.detach().numpy().ravel().copy()
    A, b, n = Phi.numpy(), y.numpy().ravel(), Phi.shape[0]
    G = A.T @ (A @ w0 - b) / n
    Q = A.T @ A / n
    eta_hand = (G @ G) / (G @ Q @ G)
    opt = dopt.Adler(model, eps=0.0)
    loss = opt.step(lambda: (Phi, _mse(y)))
    assert math.isclose(float(loss), 0.5 * np.mean((A @ w0 - b) ** 2), rel_tol=1e-12)
    assert opt.history[0]["eta"] == pytest.approx(eta_hand, rel=1e-12)
    assert opt.history[0]["eta_hat"] == pytest.approx(eta_hand, rel=1e-12)  # first step: eta_hat = eta_0
    np.testing.assert_allclose(model.weight.detach().numpy().ravel(), w0 - eta_hand * G, rtol=1e-12, atol=1e-14)
    # exact line search: the directional derivative at the new point is zero
    w1 = w0 - eta_hand * G
    assert abs(G @ (A.T @ (A @ w1 - b) / n)) < 1e-12 * (G @ G)
    assert opt.passes == {"forward": 1, "backward": 1, "jvp": 1}


def test_adler_quadratic_and_eps_and_geometric_average():
    # quadratic h(w) = 1/2 w^T diag(c) w, written as F(w) = sqrt(c) * w with the loss 1/2 ||z||^2 (batch of one)
    c = torch.tensor([1.0, 4.0, 9.0], dtype=torch.float64)

    class Scaled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64))

        def forward(self, x):
            return (c.sqrt() * self.w)[None, :] * x

    model, x = Scaled(), torch.ones(1, 1, dtype=torch.float64)
    eps, beta = 1e-3, 0.9
    opt = dopt.Adler(model, beta=beta, eps=eps)
    s = cc = 0.0
    for _ in range(4):
        w = model.w.detach().clone()
        G = c * w
        eta = float((G @ G) / ((G * c * G).sum() + eps * (G @ G)))  # v^T Q v = sum c G^2 here
        s, cc = beta * s + math.log(eta), beta * cc + 1
        eta_hat = math.exp(s / cc)
        opt.step(lambda: (x, lambda z: 0.5 * (z ** 2).sum(1).mean()))
        assert opt.history[-1]["eta"] == pytest.approx(eta, rel=1e-12)
        assert opt.history[-1]["eta_hat"] == pytest.approx(eta_hat, rel=1e-12)
        torch.testing.assert_close(model.w.detach(), w - eta_hat * G, rtol=1e-12, atol=1e-14)


def test_constant_rate_average_is_exact():
    s = c = 0.0
    for _ in range(300):
        s, c, eh = dopt.geometric_mean_update(s, c, 0.0125, 0.99)
        assert eh == pytest.approx(0.0125, rel=1e-12)
    s = c = 0.0
    for _ in range(300):
        s, c, eh = dopt.arithmetic_mean_update(s, c, 0.0125, 0.99)
        assert eh == pytest.approx(0.0125, rel=1e-12)


def test_cross_entropy_quadratic_form_matches_autograd_and_is_psd():
    g = torch.Generator().manual_seed(3)
    for C in (2, 5, 20):
        out = 3 * torch.randn(9, C, generator=g, dtype=torch.float64)
        v = torch.randn(9, C, generator=g, dtype=torch.float64)
        y = torch.randint(0, C, (9,), generator=g)
        closed = dopt.cross_entropy_quadratic_form(out, v)
        auto = dopt.output_quadratic_form(lambda z: F.cross_entropy(z, y), out, v)
        assert float(closed) == pytest.approx(float(auto), rel=1e-10)
        assert float(closed) >= 0


def test_gauss_newton_literal_and_per_example_by_hand():
    Phi, y, model = _linear(seed=1)
    A, b, n = Phi.numpy(), y.numpy().ravel(), Phi.shape[0]
    w0 = model.weight.detach().numpy().ravel().copy()
    r = A @ w0 - b
    G = A.T @ r / n
    v = A @ G  # output-space directional derivative
    lit = dopt.GaussNewton(model, eps=1e-10, variant="literal")
    lit.step(lambda: (Phi, _mse(y)))
    assert lit.history[0]["eta"] == pytest.approx(1.0 / (G @ G + 1e-10), rel=1e-10)
    _, _, model2 = _linear(seed=1)
    pe = dopt.GaussNewton(model2, eps=0.0)
    pe.step(lambda: (Phi, _mse(y)))
    # per example l_i = 1/2 r_i^2, grad l_i = r_i: v^T Q v = (1/n) sum (r_i v_i)^2
    eta = (G @ G) / (np.sum((r * v) ** 2) / n)
    assert pe.history[0]["eta"] == pytest.approx(eta, rel=1e-10)


def test_fixed_rate_is_sgd():
    Phi, y, model = _linear(seed=2)
    ref = torch.nn.Linear(7, 1, bias=False).double()
    ref.load_state_dict(model.state_dict())
    opt, sgd = dopt.FixedRate(model, 0.05), torch.optim.SGD(ref.parameters(), lr=0.05)
    for _ in range(3):
        opt.step(lambda: (Phi, _mse(y)))
        sgd.zero_grad()
        _mse(y)(ref(Phi)).backward()
        sgd.step()
    torch.testing.assert_close(model.weight, ref.weight, rtol=1e-13, atol=1e-15)
    assert opt.passes == {"forward": 3, "backward": 3, "jvp": 0}


@pytest.mark.parametrize("kind", vision.MODELS)
@pytest.mark.parametrize("act", sorted(vision.ACTIVATIONS))
def test_vision_models_shapes_and_adler_runs(kind, act):
    model = vision.build(kind, act, classes=10, width=4, vit_dim=8, seed=0)
    x = torch.randn(5, 1, 8, 8)
    assert model(x).shape == (5, 10)
    y = torch.arange(5)
    opt = dopt.Adler(model, quadratic_form="cross_entropy")
    before = [p.detach().clone() for p in model.parameters()]
    loss = opt.step(lambda: (x, lambda o: F.cross_entropy(o, y)))
    assert torch.isfinite(loss) and opt.history[0]["vQv"] >= 0 and opt.history[0]["eta"] > 0
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
    # same seed, same initialisation
    again = vision.build(kind, act, classes=10, width=4, vit_dim=8, seed=0)
    assert all(torch.equal(a, b) for a, b in zip(before, again.parameters()))


def test_validation_errors():
    _, _, model = _linear()
    with pytest.raises(ValueError, match="beta"):
        dopt.Adler(model, beta=1.0)
    with pytest.raises(ValueError, match="eps"):
        dopt.Adler(model, eps=-1e-3)
    with pytest.raises(ValueError, match="variant"):
        dopt.GaussNewton(model, variant="full")
    with pytest.raises(ValueError, match="lr"):
        dopt.FixedRate(model, 0.0)
    with pytest.raises(TypeError, match="nn.Module"):
        dopt.Adler(list(model.parameters()))
    with pytest.raises(ValueError, match="closure"):
        dopt.Adler(model).step(None)
    with pytest.raises(ValueError, match="inputs, loss_fn"):
        dopt.Adler(model).step(lambda: torch.zeros(()))
    with pytest.raises(ValueError, match="unknown method"):
        dopt.make("adam", model)
    with pytest.raises(ValueError, match="activation"):
        vision.build("cnn", "gelu", 10)
    with pytest.raises(ValueError, match="model"):
        vision.build("mlp", "relu", 10)
    with pytest.raises(ValueError, match="patch"):
        vision.TinyViT(image=9, patch=2)
