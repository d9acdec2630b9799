"""000, second half: datasets 1.1.4 (c), 1.2.x, 1.3.x and multi-d; the S-curve fits on synthetic curves with known
parameters; the plateau detector and other measures; parameter validation of the four chapters."""
import math

import numpy as np
import pytest
import torch

from shallowflow.engine import data as D
from shallowflow.experiments.brisbois_thesis import measures, multidimensional, non_orthogonal, quasi_orthogonal
from shallowflow.experiments.brisbois_thesis import s_curves as S
from shallowflow.experiments.brisbois_thesis import ten_point_data
from shallowflow.params import ParameterError, validate


@pytest.mark.parametrize("delta,sign", [(1.0, -1), (10.0, 1), (1e-8, -1), (100.0, 1)])
def test_quasi_orthogonal_inner_product(delta, sign):
    ds = D.brisbois_quasi_orthogonal(delta, sign, device="cpu")
    assert float(ds.X[0] @ ds.X[1]) == pytest.approx(sign * delta, abs=1e-12)
    assert ds.y.tolist() == [-1.0, 1.0]


def test_quasi_orthogonal_figures_inputs():
    assert D.brisbois_quasi_orthogonal(1.0, -1).x1d.tolist() == [-1.0, 2.0]  # Fig 3.25
    assert D.brisbois_quasi_orthogonal(10.0, 1).x1d.tolist() == [4.5, 2.0]  # Fig 3.26
    with pytest.raises(ValueError):
        D.brisbois_quasi_orthogonal(1.0, 0)


def test_alternative_and_nonorthogonal_data():
    ds = D.brisbois_alternative(75.0, device="cpu")
    assert ds.X.tolist() == [[-0.1, 1.0], [10.0, 1.0]] and ds.y.tolist() == [-75.0, 75.0]
    assert float(ds.X[0] @ ds.X[1]) == pytest.approx(0.0, abs=1e-15)
    with pytest.raises(ValueError):
        D.brisbois_alternative(0.0)
    d1, d2, d3 = (D.brisbois_nonorthogonal(w, device="cpu") for w in ("1.3.1", "1.3.2", "1.3.3"))
    assert torch.equal(torch.sign(d1.x1d), d1.y)  # label = sign of x
    assert torch.equal(d1.X, d2.X) and d2.y.sum() == 0 and d2.n == 10
    assert d3.x1d.tolist() == [-2, -1, 0, 1, 2] and d3.y.tolist() == [1, -1, 1, -1, 1]
    with pytest.raises(ValueError):
        D.brisbois_nonorthogonal("1.3.4")


def test_multid_data():
    o = D.brisbois_multid(device="cpu")
    G = o.X @ o.X.T
    assert float((G - torch.diag(torch.diag(G))).abs().max()) < 1e-7
    assert torch.all(o.X[:, -1] == 1)
    a = D.brisbois_multid_nonorthogonal(seed=3, device="cpu")
    b = D.brisbois_multid_nonorthogonal(seed=3, device="cpu")
    c = D.brisbois_multid_nonorthogonal(seed=4, device="cpu")
    assert torch.equal(a.X, b.X) and torch.equal(a.y, b.y) and not torch.equal(a.X, c.X)
    assert torch.all(a.X[:, -1] == 1) and a.X.shape == (5, 5)
    G = a.X @ a.X.T
    assert float((G - torch.diag(torch.diag(G))).abs().max()) > 0.1  # not orthogonal
    big = D.brisbois_multid_nonorthogonal(seed=3, teacher_std=0.1 ** 0.5, device="cpu")
    assert torch.equal(big.X, a.X) and float(big.y.abs().max()) > float(a.y.abs().max())
    with pytest.raises(ValueError):
        D.brisbois_multid_nonorthogonal(teacher="gelu")


def _synthetic(K=0.5, k1=-5.0, k2=30.0, angle=0.6, n=300, form="sigmoid", noise=0.0, seed=0):
    rng = np.random.default_rng(seed)
    u = np.sort(rng.uniform(-1.5, 1.5, n))
    v = S.FORMS[form](u, -K, k1, K, k2) + noise * rng.standard_normal(n)
    R = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
    return np.stack([u, v], 1) @ R.T


@pytest.mark.parametrize("form", ["sigmoid", "tanh"])
def test_scurve_fit_recovers_known_curve(form):
    pts = _synthetic(form=form)
    f = S.fit_scurve(pts, form, k1=-5.0)
    assert f.lsq.r2 > 0.9999
    assert abs(f.lsq.intercept) < 1e-3
    if form == "tanh":  # four tanh parameters are not identifiable (a flat tanh is a linear term): R^2 only
        return
    assert f.procedure.r2 > 0.95
    assert f.lsq.r2 >= f.procedure.r2 - 1e-12
    # the curve's own parameters, up to the symmetry (K1, k1) <-> (K2, k2)
    ks = sorted([f.lsq.k1, f.lsq.k2])
    assert ks[0] == pytest.approx(-5.0, rel=0.05) and ks[1] == pytest.approx(30.0, rel=0.05)
    assert f.lsq.K == pytest.approx(0.5, rel=0.05)
    assert abs(f.lsq.intercept) < 1e-3


def test_procedure_slope_relation():
    pts = _synthetic(angle=0.0, k2=20.0)
    fr = S.scurve_frame(pts, "pca")
    pf = S.procedure_fit(fr, "sigmoid", k1=-5.0)
    # f'(0) = (K1 k1 + K2 k2) / 4 with K1 = -K, K2 = K: k2 = k1 + 4 k / K
    assert pf.K1 == -pf.K2 and pf.k1 == -5.0
    k = (pf.K1 * pf.k1 + pf.K2 * pf.k2) / 4
    assert pf.k2 == pytest.approx(-5.0 + 4 * k / pf.K2)
    with pytest.raises(ValueError):
        S.procedure_fit(fr, "relu")
    with pytest.raises(ValueError):
        S.scurve_frame(pts, "diagonal")


def test_scurve_fit_rejects_a_circle():
    t = np.linspace(0, 2 * np.pi, 200, endpoint=False)
    f = S.fit_scurve(np.stack([np.cos(t), np.sin(t)], 1), "sigmoid")
    assert f.lsq.r2 < 0.5


def test_sigmoid_tanh_identity_forms_agree():
    w = np.linspace(-3, 3, 101)
    # with K1 = -K2 the two forms (3.1) and (3.2) are the same function
    assert np.allclose(S.sig_form(w, -0.7, -5, 0.7, 20), S.tanh_form(w, -0.7, -5, 0.7, 20), atol=1e-14)


def test_thesis_plateaus_counts_two():
    k = torch.arange(0, 10001)
    L = torch.where(k < 3000, torch.ones(1), torch.where(k < 4000, 10 ** (-(k - 3000) / 1000 * 0.3),
                    torch.where(k < 7000, torch.full((1,), 10 ** -0.3), 10 ** (-0.3 - (k - 7000) / 1000 * 3))))
    L = L.double()[None]
    out = measures.thesis_plateaus(L, k, T=torch.tensor([10000]))
    assert int(out["count"][0]) == 2 and int(out["initial"][0]) == 3000


def test_measures_small():
    W = torch.tensor([[[1.0, 1.0], [-2.0, -2.0], [3.0, 3.0]]], dtype=torch.float64)
    assert float(measures.axial_concentration(W)[0]) == pytest.approx(1.0)
    xk, yk = torch.tensor([-1.0, 0.0, 2.0]), torch.tensor([1.0, -1.0, 3.0])
    assert measures.piecewise_linear(xk, yk, torch.tensor([-0.5, 1.0, 5.0])).tolist() == [0.0, 1.0, 3.0]
    assert measures.circular_std(torch.zeros(5)) == pytest.approx(0.0, abs=1e-6)
    slope, r2 = ten_point_data.lnlam_fit([1e-6, 1e-4, 1e-2], [3 * math.log(1e6) + 1, 3 * math.log(1e4) + 1, 3 * math.log(1e2) + 1])
    assert slope == pytest.approx(3.0) and r2 == pytest.approx(1.0)
    g = torch.randn(100, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0)).abs()
    rays = torch.cat([g[:50, :1] * torch.tensor([[1.0, 2, 0, 0, 1]]), -g[50:, :1] * torch.tensor([[0.0, 1, 1, 0, 1]])])
    assert multidimensional.ray_tightness(rays.double()) > 0.999


BASE = {
    "s": (S, dict(profile="book", c=75.0, width=10, width_c=10, init_scale=1e-6, lr=1e-4, steps=2000, merge_step=100,
                  mid_step=200, seeds=[0], label_seeds=[0], widths=[5, 10], scales=[1e-6, 1e-2], k1=-5.0, record_every=10,
                  fit_refine=0, sections=["main", "appendix-c", "sweep"])),
    "q": (quasi_orthogonal, dict(profile="book", width=10, init_scale=1e-6, lr=1e-3, steps=2000, seeds=[0], deltas=[1.0],
                                 delta_a=1.0, delta_b=10.0, snap_every=100, grown_rel=0.05)),
    "n": (non_orthogonal, dict(profile="book", width=10, lr=1e-3, steps=2000, stop_below=1e-10, goal=1e-3,
                               scales=[1.0, 0.1, 1e-2], grid_seeds=[0], fig28_scales=[1e-3], fig28_seeds=[0],
                               fig29_scale=0.1, record_every=10)),
}


@pytest.mark.parametrize("key,name,value", [("s", "merge_step", 5000), ("s", "k1", 0.0), ("s", "lr", -1.0),
                                            ("s", "fit_refine", -1), ("s", "label_seeds", []),
                                            ("q", "delta_b", 0.5), ("q", "snap_every", 1000), ("n", "fig29_scale", 0.5),
                                            ("n", "stop_below", 1e-2), ("n", "scales", [1.0])])
def test_bad_parameters_are_refused(key, name, value):
    mod, good = BASE[key]
    validate(good, mod.SCHEMA, mod.RULES)
    with pytest.raises(ParameterError, match=name):
        validate({**good, name: value}, mod.SCHEMA, mod.RULES)


def test_quasi_run_tiny():
    mod, good = BASE["q"]
    P = validate(good, mod.SCHEMA, mod.RULES)
    run = quasi_orthogonal.run_quasi(P)
    m = quasi_orthogonal.measure(run, quasi_orthogonal.entry(run, "a"))
    assert bool(m["valid"].all()) and m["pred_plus"] == pytest.approx(-0.5) and m["pred_minus"] == pytest.approx(1.0)
