"""000 (Brisbois thesis), first half: closed forms, datasets, measures and parameter validation."""
import math

import numpy as np
import pytest
import torch
from torch.func import grad, hessian, vmap

from shallowflow.engine import data as datasets
from shallowflow.engine import init, metrics, theory
from shallowflow.engine.models import Network
from shallowflow.params import ParameterError, validate
from shallowflow.engine.train import gradient_descent
from shallowflow.experiments.brisbois_thesis import common as Cm
from shallowflow.experiments.brisbois_thesis import theory as T

D110 = datasets.get("brisbois-orthogonal", device="cpu")


@pytest.mark.parametrize("act", T.ACTIVATIONS)
@pytest.mark.parametrize("loss", ["half", "mean"])
def test_gradient_and_hessian_match_autograd(act, loss):
    m = 4
    th = torch.randn(5, m * 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    f = lambda t: T.loss_of_flat(t, D110.X, D110.y, act, m, loss)
    assert torch.allclose(T.gradient(th, D110.X, D110.y, act, m, loss), vmap(grad(f))(th), atol=1e-13, rtol=0)
    assert torch.allclose(T.hessian(th, D110.X, D110.y, act, m, loss), vmap(hessian(f))(th), atol=1e-12, rtol=0)


def test_gradient_matches_the_library_engine():
    p = init.balanced([0, 1], 5, 2, 0.3, device="cpu")
    for act in T.ACTIVATIONS:
        _, ga, gW = Network(act).gradients(p, D110.X, D110.y, loss="mean")
        g = T.gradient(p.flat(), D110.X, D110.y, act, 5, "mean")
        assert torch.allclose(g, torch.cat([ga, gW.reshape(2, -1)], 1), atol=1e-15)


def test_printed_d2_hessian_in_a_first_order():
    th, m = T.d2_example()
    H = T.hessian(th, D110.X, D110.y, "sigmoid", m)[0]
    assert float((H - torch.tensor(T.PRINTED_D2_HESSIAN, dtype=torch.float64)).abs().max()) < 1e-7
    # the 8th-order stencil is exact to ~1e-11 in float64 and ~1e-3 in float32
    assert float((T.fd_hessian(th, D110.X, D110.y, "sigmoid", m)[0] - H).norm()) < 1e-9
    assert float((T.fd_hessian(th, D110.X, D110.y, "sigmoid", m, dtype=torch.float32)[0] - H).norm()) > 1e-5


def test_fd_gradient_is_second_order_accurate():
    th = 0.3 * torch.randn(3, 9, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    g = T.gradient(th, D110.X, D110.y, "tanh", 3)
    assert float((T.fd_gradient(th, D110.X, D110.y, "tanh", 3, h=1e-4) - g).abs().max()) < 1e-8


def test_datasets_1_1_x():
    for v in ("1.1.0", "1.1.1", "1.1.2", "1.1.4"):
        d = datasets.get("brisbois-orthogonal", variant=v, device="cpu")
        assert abs(float(d.X[0] @ d.X[1])) < 1e-15 and d.bias and d.n == 2
    assert datasets.get("brisbois-orthogonal", variant="1.1.1", device="cpu").y.tolist() == [1.0, -1.0]
    assert datasets.get("brisbois-orthogonal", variant="1.1.2", factor=3.0, device="cpu").y.tolist() == [1.0, 3.0]
    assert datasets.get("brisbois-orthogonal", variant="1.1.4", c=2.0, device="cpu").y.tolist() == [-2.0, 2.0]
    with pytest.raises(ValueError, match="variant"):
        datasets.get("brisbois-orthogonal", variant="1.1.3")
    with pytest.raises(ValueError, match="> 0"):
        datasets.get("brisbois-orthogonal", c=0.0)


def test_closed_forms():
    assert T.relu_min_norm(D110) == pytest.approx(math.sqrt(theory.min_norm_interpolator(D110).squared_norm), rel=1e-12)
    lam = 1e-6 / math.sqrt(60)
    first, second = T.phase_epochs(D110, lam, 1e-3, "mean")
    assert first == pytest.approx(math.log(1 / lam) / (2 * math.sqrt(1.25) * 1e-3))
    assert second == pytest.approx(2 * first)
    assert T.plateau_slope(D110, "tanh", "mean") == pytest.approx(1 / (2 * 1.0 * 1.25))
    assert T.plateau_slope(D110, "sigmoid", "half") == pytest.approx(1 / (0.25 * 1.25))
    assert T.sigmoid_alpha_crit(600) == pytest.approx(4 / 600)
    H0 = T.hessian(torch.zeros(1, 9, dtype=torch.float64), D110.X, D110.y, "tanh", 3)[0]
    assert np.allclose(np.sort(torch.linalg.eigvalsh(H0).numpy()), T.tanh_zero_spectrum(D110, 3), atol=1e-12)
    c = T.activation_constants(points=200_001)
    assert c["sigmoid"]["beta"] == pytest.approx(T.STATED_CONSTANTS["sigmoid"]["beta"], rel=1e-6)


def test_plateau_detector():
    t = np.arange(3001)
    curve = np.where(t < 1000, 1.0, np.where(t < 1200, 1.0 - (t - 1000) / 400, np.where(t < 2000, 0.5, 0.5 * np.exp(-(t - 2000) / 50))))
    s = T.plateau_summary(curve, 3000)
    assert s["count"] == 2 and s["initial"] >= 900 and s["intermediate"] >= 700
    assert T.plateau_summary(np.exp(-t / 100.0), 3000)["count"] == 0


def test_axial_variance():
    W = torch.tensor([[1.0, 2.0], [-1.0, -2.0], [2.0, 4.0]], dtype=torch.float64)
    assert float(T.axial_variance(W)) < 1e-15
    assert float(T.axial_variance(torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64))) == pytest.approx(1.0)


def test_assumption5_seeds_and_grid():
    seeds = Cm.assumption5_seeds(D110, 2, 3)
    p = init.balanced(seeds, 2, 2, 1.0, device="cpu")
    sp, sm = theory.key_sets(p, D110)
    assert bool(sp.any(1).all() and sm.any(1).all())
    g = Cm.train_grid(D110, ["sigmoid"], 5, Cm.combos([1e-3, 1e-2], [0], lrs=[1e-2]), 200)
    e = g["sigmoid"]
    assert e.traj.runs == 2 and e.valid().all() and e.runs(scale=1e-2) == [1]
    # the same runs on the torch engine (the GPU path) agree with the kernel
    tt = gradient_descent(e.p0, D110, Network("sigmoid"), steps=200, lr=1e-2, loss="mean", engine="torch")
    assert torch.allclose(tt.loss, e.traj.loss, rtol=1e-10, atol=0)


def test_balancedness_identity_b1():
    from shallowflow.experiments.brisbois_thesis import balancedness_complexity as B
    for act in T.ACTIVATIONS:
        out = B.discrete_identity(act, steps=20)
        assert out["error"] < 1e-13
    assert B.discrete_identity("relu", steps=20)["first_order"] < 1e-15


def test_schemas_reject_bad_values():
    from shallowflow.experiments.brisbois_thesis import activations, width_grid
    good = dict(profile="book", width=60, lr=1e-3, steps=1000, rich_scales=[1e-6, 1e-2], lazy_scale=1.0, seeds=[0], snap_every=100,
                align_seeds=[0], fig37_seeds=[0], fig38_seeds=[0], fig321_seeds=[0], fig321_steps=2000, c13_seeds=[0],
                c13_steps=2000)
    validate(good, activations.SCHEMA, activations.RULES)
    with pytest.raises(ParameterError, match="c13_steps"):
        validate({**good, "c13_steps": 1000}, activations.SCHEMA, activations.RULES)  # not beyond the merged epoch
    with pytest.raises(ParameterError, match="snap_every"):
        validate({**good, "snap_every": 2000}, activations.SCHEMA, activations.RULES)
    with pytest.raises(ParameterError, match="lr"):
        validate({**good, "lr": -1.0}, activations.SCHEMA, activations.RULES)
    wg = dict(profile="book", widths=[10], lrs=[1e-3], scales=[1e-6, 1e-4, 1e-2], budget=10, max_epochs=1000,
              fig33_scale=1e-8,)
    with pytest.raises(ParameterError, match="fig33_scale"):
        validate(wg, width_grid.SCHEMA, width_grid.RULES)
