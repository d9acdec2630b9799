"""Source 001: data constructions, initialisations, exact reductions against the dense network and
autograd, closed forms against numerical integration, validation errors."""
import math

import numpy as np
import pytest
import torch
from scipy.integrate import solve_ivp

from shallowflow.engine import data, init, metrics, train
from shallowflow.experiments.weakly_interacting import reductions as RD
from shallowflow.experiments.weakly_interacting import theory as T
from shallowflow.params import ParameterError, validate


def test_app_b_data_and_init():
    X, y = data.weakly_interacting_draw(50, 30, 0)
    nx = X.norm(dim=1)
    assert (nx >= 1).all() and (nx <= 2).all() and (y.abs() >= 1).all() and (y.abs() <= 2).all()
    Xo, yo = data.weakly_interacting_draw(20, 30, 1, orthogonal=True)
    G = Xo @ Xo.T
    assert torch.allclose(G - torch.diag(torch.diagonal(G)), torch.zeros(20, 20, dtype=G.dtype))
    with pytest.raises(ValueError):
        data.weakly_interacting_draw(40, 30, 0, orthogonal=True)
    P = init.asymmetric([0, 1], 7, 30, device="cpu")
    assert (P.a.abs() >= P.W.norm(dim=-1)).all()  # Assumption 1
    P2 = init.asymmetric([0, 1], 7, 30, device="cpu")
    assert torch.equal(P.a, P2.a)
    with pytest.raises(ValueError):
        init.asymmetric([0], 3, 4, first_layer="nope")


def test_bartlett_gram_matches_direct_law():
    n, d = 4, 50
    G, y = data.bartlett_gram(n, d, 4000, seed=3)
    assert torch.allclose(torch.diagonal(G, dim1=1, dim2=2).sqrt().clamp(1, 2), torch.diagonal(G, dim1=1, dim2=2).sqrt())
    cos = G[:, 0, 1] / (G[:, 0, 0] * G[:, 1, 1]).sqrt()
    # cosine of two uniform directions in R^d: mean 0, variance 1/d
    assert abs(float(cos.mean())) < 4 / math.sqrt(d * 4000)
    assert abs(float(cos.var()) * d - 1) < 0.1


def test_group_init():
    X, _ = data.weakly_interacting_draw(6, 8, 0, orthogonal=True)
    y = torch.tensor([1.0, 2.0, -1.0, -1.5, 1.0, 1.2], dtype=torch.float64)
    P = init.group(X, y, 3, [0], norm=0.5, device="cpu")
    Z = P.W @ X.T
    owner = torch.arange(6) // 2
    assert ((Z[0] > 0) == (owner[None, :] == torch.arange(3)[:, None])).all()
    assert torch.allclose(P.a.abs(), P.W.norm(dim=-1)) and torch.allclose(P.W.norm(dim=-1), torch.full((1, 3), 0.5, dtype=torch.float64))
    with pytest.raises(ValueError):
        init.group(X, -y * torch.tensor([1, -1, 1, 1, 1, 1.0], dtype=torch.float64), 3, [0])


def test_gram_and_orthogonal_engines_match_dense_network():
    n, d, p = 8, 30, 5
    X, y = data.weakly_interacting_draw(n, d, 3)
    P = init.asymmetric([0], p, d, device="cpu")
    rg = RD.gram_gd((X @ X.T)[None], y[None], P.a, P.W @ X.T, (P.W ** 2).sum(-1), 0.3, 40, stop_rel=0)
    tr = train.gradient_descent(P, (X, y), RD.NET, steps=40, lr=p * 0.3, engine="torch")
    assert float((rg.loss[0] - tr.loss[0]).abs().max()) < 1e-13
    # mu (eq. 24) against autograd
    a = P.a.clone().requires_grad_()
    W = P.W.clone().requires_grad_()
    h = (a[:, :, None] * torch.relu(W @ X.T)).sum(1) / p
    L = ((y - h) ** 2).sum() / (2 * n)
    ga, gW = torch.autograd.grad(L, (a, W))
    assert abs(float(p * (ga.pow(2).sum() + gW.pow(2).sum()) / L.detach()) - float(rg.mu[0, 0])) < 1e-12
    # one-step balancedness identity (Lemma 1 under GD)
    inc = rg.delta[:, 1:] - rg.delta[:, :-1]
    assert float((inc - rg.delta_step[:, :-1]).abs().max()) < 1e-13
    # orthogonal engine
    Xo, yo = data.weakly_interacting_draw(12, 20, 4, orthogonal=True)
    s = Xo[torch.arange(12), torch.arange(12)]
    P = init.asymmetric([0, 1], 6, 20, device="cpu")
    ro = RD.orthogonal_gd(P.a, P.W[..., :12] * s, None, yo, s, 0.5, 50)
    tr = train.gradient_descent(P, (Xo, yo), RD.NET, steps=50, lr=6 * 0.5, engine="torch")
    assert float((ro.loss - tr.loss).abs().max()) < 1e-13


def test_lambda_min_by_inertia():
    g = torch.Generator().manual_seed(0)
    R_, p, n = 3, 4, 30
    Z = torch.randn(R_, p, n, generator=g, dtype=torch.float64).abs() + 0.1
    a = torch.randn(R_, p, generator=g, dtype=torch.float64)
    s2 = 1 + torch.rand(n, generator=g, dtype=torch.float64)
    F = torch.relu(Z)
    M = (F.transpose(1, 2) @ F + torch.diag_embed(((a ** 2)[:, :, None] * (Z > 0)).sum(1) * s2)) / p
    assert torch.allclose(RD.ortho_M_lambda_min(a, Z, s2), torch.linalg.eigvalsh(M)[:, 0], rtol=1e-10)


def test_group_solution_matches_ode_and_paper_only_at_rho1():
    k, D, n, p, u0 = 50, 1.3, 200, 4, 0.7
    c = T.group_rate(k, D, n)
    ts = np.linspace(0, 300, 7)
    for rho0 in (0.5, 1.0):
        sol = solve_ivp(lambda t, z: [c * z[0] * z[1] - 2 * z[0] ** 2 / (n * p), c / 2 * (1 - z[1] ** 2)], (0, 300),
                        [u0, rho0], t_eval=ts, rtol=1e-12, atol=1e-14)
        u, r = T.group_solution(ts, k, D, n, p, u0, rho0)
        assert np.max(np.abs(u - sol.y[0]) / sol.y[0]) < 1e-8 and np.max(np.abs(r - sol.y[1])) < 1e-8
    up, rp = T.group_solution_paper(ts, k, D, n, p, u0, 0.5)
    assert np.max(np.abs(rp - T.group_solution(ts, k, D, n, p, u0, 0.5)[1])) > 1e-3


def test_lemma5_exact_probability():
    # p = 1: P(I) = 1/2 * 2^-n_plus [n_minus = 0]
    assert abs(T.well_init_probability(1, 0, 1) - 0.25) < 1e-15
    g = torch.Generator().manual_seed(1)
    n_plus, n_minus, p, R_ = 3, 2, 6, 200_000
    a = torch.randint(0, 2, (R_, p), generator=g) * 2.0 - 1
    Z = torch.randn(R_, p, 5, generator=g, dtype=torch.float64)
    y = torch.tensor([1.0] * n_plus + [-1.0] * n_minus, dtype=torch.float64)
    mc = float(metrics.well_initialised(a.double(), Z, y).double().mean())
    assert abs(mc - T.well_init_probability(n_plus, n_minus, p)) < 4 * math.sqrt(0.25 / R_)


def test_rules_and_schema_validation():
    T.width_rule(2500) == 38 or pytest.fail("width rule")
    assert T.width_rule(2500) == 38 and T.epochs_rule(2500, 38) == 1325
    from shallowflow.experiments.weakly_interacting import convergence as CV
    vals = dict(profile="book", ns=[10], d=5.0, seeds=[0, 1], eps=0.05, lr=0.5, max_steps=100, scales=[1.0], scale_seeds=[100],
                kappas=[50.0], cor_n=10, lrs=[0.1, 0.2], horizon=10.0, l12_n=50, l3_ns=[5, 10], l3_draws=20,
                l4_ns=[50], l4_ps=[10, 20], l4_draws=20, l6_ns=[50], l6_ps=[5], l6_draws=10, log_ns=[], resume=False)
    with pytest.raises(ParameterError, match="'ns'"):
        validate(vals, CV.SCHEMA, CV.RULES)  # d < n
    vals["d"] = 100.0
    with pytest.raises(ParameterError, match="Assumption 2"):
        validate(vals, CV.SCHEMA, CV.RULES)  # d = n^2: no seed's data set satisfies Assumption 2
    vals["d"] = 1e5  # about 600 n^2, as the specification chooses d
    validate(vals, CV.SCHEMA, CV.RULES)
    vals["lr"] = 0.0
    with pytest.raises(ParameterError, match="'lr'"):
        validate(vals, CV.SCHEMA, CV.RULES)
