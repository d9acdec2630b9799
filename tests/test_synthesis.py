"""Core functions added for the synthesis part (book/synthesis): closed forms and invariants."""
import math

import pytest
import torch

from shallowflow.engine import data as D
from shallowflow.engine import init, metrics, theory
from shallowflow.engine.flow import gradient_flow
from shallowflow.engine.models import Network, Params


def _state(seed=0, R=2, m=5, d=3, scale=0.7):
    g = torch.Generator().manual_seed(seed)
    return Params(scale * torch.randn(R, m, generator=g, dtype=torch.float64),
                  scale * torch.randn(R, m, d, generator=g, dtype=torch.float64))


@pytest.mark.parametrize("act", ["relu", "leaky_relu", "sigmoid", "tanh"])
def test_balancedness_rate_is_the_flow_derivative(act):
    p = _state()
    X = torch.randn(4, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    y = torch.tensor([1.0, -0.5, 0.3, 2.0], dtype=torch.float64)
    net = Network(act)
    _, ga, gW = net.gradients(p, X, y)
    expected = -2 * (p.a * ga - (p.W * gW).sum(-1))  # d/dt (a^2 - |w|^2) with d(a, W)/dt = -(ga, gW)
    rate = theory.balancedness_rate(net, p, X, y)
    assert torch.allclose(rate, expected, rtol=1e-12, atol=1e-14)
    if act in ("relu", "leaky_relu"):  # sigma(z) = z sigma'(z): conserved
        assert float(rate.abs().max()) < 1e-15
    else:
        assert float(rate.abs().max()) > 1e-3


def test_relu_flow_conserves_balancedness_tanh_flow_does_not():
    data = D.get("orthogonal-toy", device="cpu")
    p0 = init.unbalanced([0, 1], 8, 2, 0.3, device="cpu")  # b_j(0) != 0: the value itself is conserved
    grid = [2.0 * k for k in range(11)]
    relu = gradient_flow(p0, data, Network("relu"), t_end=20.0, rtol=1e-11, snapshots_t=grid)
    tanh = gradient_flow(p0, data, Network("tanh"), t_end=20.0, rtol=1e-11, snapshots_t=grid)
    assert float(metrics.balancedness_drift(relu.snap_a, relu.snap_W)["relative"].max()) < 1e-8
    assert float(metrics.balancedness_drift(tanh.snap_a, tanh.snap_W)["relative"].min()) > 1e-4


def test_balancedness_drift_and_keep_mask():
    a = torch.tensor([[[1.0, 2.0]], [[1.0, 2.5]]], dtype=torch.float64)  # (S=2, R=1, m=2)
    W = torch.zeros(2, 1, 2, 1, dtype=torch.float64)
    d = metrics.balancedness_drift(a, W)
    assert float(d["absolute"]) == pytest.approx(2.5 ** 2 - 4.0)
    assert float(d["relative"]) == pytest.approx((2.5 ** 2 - 4.0) / 2.5 ** 2)
    assert float(metrics.balancedness_drift(a, W, keep=torch.tensor([[True], [False]]))["absolute"]) == 0.0


def test_escape_rates_orthogonal_closed_form_and_grid():
    toy = D.get("orthogonal-toy", device="cpu")
    e = theory.escape_rates(toy)
    dp, dm = theory.key_directions(toy)
    assert e["plus"] == pytest.approx(float(dp.norm()), rel=1e-9)
    assert e["minus"] == pytest.approx(float(dm.norm()), rel=1e-9)
    assert e["rate"] == pytest.approx(math.sqrt(5) / 2, rel=1e-9)
    data = D.get("brisbois-1.3", which="1.3.2", device="cpu")  # non-orthogonal: compare with a dense grid
    phi = torch.linspace(-math.pi, math.pi, 400_001, dtype=torch.float64)
    U = torch.stack([phi.cos(), phi.sin()], 1)
    G = (torch.clamp_min(U @ data.X.T, 0) * data.y).sum(1) / data.n
    e = theory.escape_rates(data)
    assert e["plus"] == pytest.approx(float(G.max()), rel=1e-4)
    assert e["minus"] == pytest.approx(float(-G.min()), rel=1e-4)


def test_linearised_rate_and_first_phase_drop():
    toy = D.get("orthogonal-toy", device="cpu")
    v = toy.y @ toy.X / toy.n
    assert theory.linearised_escape_rate(toy, "tanh") == pytest.approx(1.25)  # 000 spec: ||v|| = 1.25
    assert theory.linearised_escape_rate(toy, "sigmoid") == pytest.approx(1.25 / 4)
    dp, _ = theory.key_directions(toy)
    # one ReLU neuron along D+ fits the positive point: the loss falls from 1/2 to the saddle's 1/4
    assert theory.first_phase_drop(toy, dp, "relu") == pytest.approx(0.5 - theory.saddle_loss(toy))
    # the linear fit along v: (y.Xv)^2 / (2n |Xv|^2)
    s = toy.X @ v
    assert theory.first_phase_drop(toy, v, "tanh") == pytest.approx(float((toy.y @ s) ** 2 / (4 * (s @ s))))


def test_first_crossing_times_interpolates():
    t = torch.tensor([[0.0, 1.0, 2.0, 3.0]], dtype=torch.float64).expand(2, -1)
    L = torch.tensor([[1.0, 0.8, 0.4, 0.2], [1.0, 1.0, 1.0, 1.0]], dtype=torch.float64)
    out = metrics.first_crossing_times(t, L, torch.tensor([4, 4]), 0.6)
    assert float(out[0]) == pytest.approx(1.5) and math.isnan(float(out[1]))


def test_slope_interval():
    x = torch.arange(6, dtype=torch.float64)
    exact = metrics.slope_interval(x, 2 + 3 * x)
    assert exact["slope"] == pytest.approx(3) and exact["high"] - exact["low"] == pytest.approx(0, abs=1e-9)
    noisy = 2 + 3 * x + torch.tensor([0.1, -0.2, 0.05, 0.1, -0.1, 0.02], dtype=torch.float64)
    f = metrics.slope_interval(x, noisy)
    assert f["low"] < 3 < f["high"] and 0.95 < f["r2"] <= 1
    assert math.isnan(metrics.slope_interval([1.0, 2.0], [1.0, 2.0])["slope"])


def test_correlated_binary():
    ds = D.get("correlated-binary", device="cpu")
    assert ds.X.shape == (10, 64) and set(ds.y.tolist()) <= {-1.0, 1.0} and ds.X.dtype == torch.float64
