"""shallowflow.deep: models, torch.func measurements, dual kernels and the training loop."""
import math

import numpy as np
import pytest
import torch
from torch.func import functional_call, hessian

from shallowflow.deep import dual, measure, models
from shallowflow.deep import train as dtrain
from shallowflow.engine.train import DivergenceError


def _x(n=6, d=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g, dtype=torch.float64)
    return X * (math.sqrt(d) / X.norm(dim=1, keepdim=True))


def test_normalised_activations_have_zero_mean_unit_variance():
    z = torch.linspace(-14, 14, 400_001, dtype=torch.float64)  # trapezoid rule (ReLU's kink defeats Gauss-Hermite)
    dens = torch.exp(-z * z / 2) / math.sqrt(2 * math.pi)
    for name in models.ACTIVATIONS:
        v = models.activation(name)(z)
        assert abs(float(torch.trapezoid(dens * v, z))) < 1e-9
        assert abs(float(torch.trapezoid(dens * v * v, z)) - 1) < 1e-9
    assert abs(models.TANH_SECOND_MOMENT - 0.394294) < 1e-6


def test_runs_are_independent_of_the_batch_they_are_in():
    a = models.DeepFCN(5, 7, 3, classes=4, seeds=[3, 5], device="cpu")
    b = models.DeepFCN(5, 7, 3, classes=4, seeds=[5], device="cpu")
    X = _x()
    torch.testing.assert_close(a(X)[1], b(X)[0], rtol=0, atol=0)
    assert a(X).shape == (2, 6, 4) and len(a.features(X)) == 3


def test_renormalisation_sets_norms_to_sqrt_width():
    m = models.DeepFCN(5, 9, 4, renormalise=True, device="cpu")
    for h in m.features(_x()):
        torch.testing.assert_close(h.norm(dim=-1), torch.full((1, 6), 3.0, dtype=torch.float64))


@pytest.mark.parametrize("act", ["relu", "tanh"])
def test_ntk_gram_equals_explicit_jacobian(act):
    m = models.DeepFCN(4, 6, 2, classes=3, activation=act, seeds=[1], device="cpu")
    f, params = m.pure()
    p = tuple(w[0] for w in params)
    X = _x(5, 4)
    K = measure.ntk_gram(f, p, X)
    # explicit Jacobian, one output at a time by autograd
    rows = []
    for i in range(5):
        for c in range(3):
            ps = tuple(t.clone().requires_grad_(True) for t in p)
            g = torch.autograd.grad(f(ps, X)[i, c], ps)
            rows.append(torch.cat([t.reshape(-1) for t in g]))
    J = torch.stack(rows)
    torch.testing.assert_close(K, J @ J.T, rtol=1e-12, atol=1e-12)


def test_hvp_and_power_iteration_match_torch_func_hessian():
    m = models.DeepFCN(3, 4, 2, classes=2, activation="tanh", seeds=[0, 1], device="cpu")
    X, y = _x(5, 3), torch.tensor([0, 1, 1, 0, 1])
    names = [n for n, _ in m.named_parameters()]

    def h(params):
        out = functional_call(m, dict(zip(names, params)), (X,))
        return dtrain.loss_per_run(out, y, "mse").sum()

    params = tuple(p.detach() for p in m.parameters())
    flat_sizes = [p.numel() for p in params]
    H = hessian(lambda flat: h(tuple(t.reshape(p.shape) for t, p in zip(flat.split(flat_sizes), params))))(
        torch.cat([p.reshape(-1) for p in params]))
    g = torch.Generator().manual_seed(2)
    v = tuple(torch.randn(p.shape, generator=g, dtype=torch.float64) for p in params)
    Hv = torch.cat([t.reshape(-1) for t in measure.hvp(h, params, v)])
    torch.testing.assert_close(Hv, H @ torch.cat([t.reshape(-1) for t in v]), rtol=1e-10, atol=1e-12)
    # per-run top eigenvalue: the Hessian is block-diagonal over runs
    idx = torch.arange(sum(flat_sizes)).split(flat_sizes)
    run_of = torch.cat([torch.arange(p.shape[0]).repeat_interleave(p[0].numel()) for p in params])
    lam, _ = measure.power_iteration(h, params, iters=300)
    for r in range(2):
        sel = run_of == r
        ev = torch.linalg.eigvalsh(H[sel][:, sel])
        top = ev[ev.abs().argmax()]
        assert abs(float(lam[r]) - float(top)) < 1e-6 * abs(float(top))
    assert len(idx) == len(params)


def test_pl_ratio_on_a_quadratic():
    # f(x) = 1/2 x^T A x: mu(x) = x^T A^2 x / (x^T A x) lies in [lambda_min, lambda_max]
    A = torch.diag(torch.tensor([0.5, 2.0, 3.0], dtype=torch.float64))
    for x in torch.randn(20, 3, dtype=torch.float64):
        f = 0.5 * x @ A @ x
        gsq = (A @ x).square().sum()
        mu = measure.pl_ratio(gsq, f)
        assert 0.5 - 1e-12 <= float(mu) <= 3.0 + 1e-12
    e = torch.tensor([0.0, 1.0, 0.0], dtype=torch.float64)
    assert float(measure.pl_ratio((A @ e).square().sum(), 0.5 * e @ A @ e)) == pytest.approx(2.0, rel=1e-14)
    with pytest.raises(ValueError):
        measure.pl_ratio(torch.tensor(1.0), torch.tensor(0.0))


def test_gram_stats_float64_from_float32_features():
    F = torch.randn(8, 40, dtype=torch.float32)
    s = measure.gram_stats(measure.gram(F), 40.0)
    ev = np.linalg.eigvalsh(F.double().numpy() @ F.double().numpy().T / 40)
    assert s["lmin"].dtype == torch.float64
    assert abs(float(s["lmin"]) - ev[0]) < 1e-12 and abs(float(s["logcond"]) - math.log(ev[-1] / ev[0])) < 1e-10


@pytest.mark.parametrize("act", ["relu", "tanh"])
@pytest.mark.parametrize("renorm", [False, True])
def test_dual_kernel_matches_wide_network(act, renorm):
    X = _x(5, 6, seed=3)
    S0 = X @ X.T / 6
    inf = dual.infinite_width_grams(S0, 3, act, renormalise=renorm)
    assert float(inf[0].diagonal().sub(1).abs().max()) < 1e-6  # unit-variance inputs: diag 1
    with torch.no_grad():
        # one layer, very wide: Monte Carlo error ~ sqrt(2 / width)
        one = models.DeepFCN(6, 200_000, 1, activation=act, renormalise=renorm, seeds=[0], device="cpu")
        G1 = measure.gram(one.features(X)[0])[0] / 200_000
        assert float((G1 - inf[0]).abs().max()) < 0.015
        # three layers at width 3000: the error compounds but stays small
        deep = models.DeepFCN(6, 3000, 3, activation=act, renormalise=renorm, seeds=[1], device="cpu")
        G = [measure.gram(h)[0] / 3000 for h in deep.features(X)]
    for k in range(3):
        assert float((G[k] - inf[k]).abs().max()) < 0.12


def test_dual_scalar_fixed_point_and_lemma24():
    for act in ("relu", "tanh"):
        tol = 1e-12 if act == "relu" else 1e-7  # tanh: 64-node Gauss-Hermite quadrature
        assert abs(float(dual.dual_scalar(torch.tensor(1.0), act)) - 1) < tol
        assert abs(float(dual.dual_scalar(torch.tensor(0.0), act))) < tol
    f = lambda r: dual.dual_scalar(r, "relu")  # noqa: E731
    g = torch.Generator().manual_seed(0)
    for _ in range(20):
        V = torch.randn(6, 4, generator=g, dtype=torch.float64)
        H = dual.to_correlation(V @ V.T + 0.3 * torch.eye(6, dtype=torch.float64))
        delta = torch.linalg.eigvalsh(H)[0]
        assert float(torch.linalg.eigvalsh(f(H))[0]) >= float(dual.lemma24_bound(f, delta)) - 1e-10


def test_training_loop_per_run_sgd_and_divergence():
    m = models.DeepFCN(5, 8, 2, classes=3, seeds=[0, 1], device="cpu")
    X, y = _x(6, 5), torch.tensor([0, 1, 2, 0, 1, 2])
    ref = models.DeepFCN(5, 8, 2, classes=3, seeds=[1], device="cpu")
    opt = dtrain.PerRunSGD(m.parameters(), lr=[0.1, 0.05])
    hist = dtrain.train(m.parameters(), lambda s: dtrain.loss_per_run(m(X), y, "ce"), opt, 5,
                        callback=lambda s, L: {"acc": dtrain.accuracy(m(X), y)}, every=2)
    h2 = dtrain.train(ref.parameters(), lambda s: dtrain.loss_per_run(ref(X), y, "ce"),
                      torch.optim.SGD(ref.parameters(), lr=0.05), 5)
    torch.testing.assert_close(hist.loss[:, 1], h2.loss[:, 0], rtol=1e-12, atol=0)
    assert hist.loss.shape == (6, 2) and [s for s, _ in hist.records["acc"]] == [0, 2, 4, 5]
    big = dtrain.PerRunSGD(m.parameters(), lr=1e200)
    with pytest.raises(DivergenceError, match="step"):
        dtrain.train(m.parameters(), lambda s: dtrain.loss_per_run(m(X), y, "mse"), big, 5)
    with pytest.raises(ValueError):
        dtrain.PerRunSGD(m.parameters(), lr=-1.0)


def test_per_example_grad_sq_matches_loop():
    m = models.DeepFCN(4, 6, 2, classes=3, seeds=[0, 1], device="cpu")
    f, params = m.pure()
    X, y = _x(5, 4), torch.tensor([0, 1, 2, 0, 1])

    def loss_i(p, x, yi):
        out = models.apply(list(p), x[None], "relu")  # (R, 1, C)
        return dtrain.example_loss(out[:, 0], yi.expand(out.shape[0]), "mse").sum()

    got = measure.per_example_grad_sq(loss_i, params, X, y, chunk_size=2)
    for i in range(5):
        ps = tuple(t.clone().requires_grad_(True) for t in params)
        g = torch.autograd.grad(loss_i(ps, X[i], y[i]), ps)
        want = sum(t.reshape(2, -1).square().sum(1) for t in g)
        torch.testing.assert_close(got[:, i], want, rtol=1e-12, atol=1e-14)


def test_validation_errors():
    with pytest.raises(ValueError):
        models.DeepFCN(5, 0, 3)
    with pytest.raises(ValueError):
        models.DeepFCN(5, 4, 3, activation="gelu")
    with pytest.raises(ValueError):
        dual.infinite_width_grams(torch.eye(3, dtype=torch.float64), 0)
    with pytest.raises(ValueError):
        dtrain.loss_per_run(torch.zeros(2, 3), torch.zeros(2, dtype=torch.long), "hinge")
    with pytest.raises(ValueError):
        measure.power_iteration(lambda p: p[0].sum(), (torch.zeros(2),), iters=0)


def test_stream_features_equal_the_module_and_threads_are_restored():
    X = torch.randn(2, 4, 5, dtype=torch.float64)
    m = models.DeepFCN(5, 7, 3, activation="tanh", renormalise=True, seeds=[3, 4], device="cpu")
    with torch.no_grad():
        for a, b in zip(m.features(X), models.stream_features(X, 7, 3, "tanh", True, True, [3, 4], device="cpu")):
            torch.testing.assert_close(a, b, rtol=0, atol=0)
    before = torch.get_num_threads()
    with models.fastest_threads(64, 8) as k:
        assert k in (1, 2) and torch.get_num_threads() == k
    assert torch.get_num_threads() == before


@pytest.mark.parametrize("loss", ["mse", "ce"])
@pytest.mark.parametrize("renorm", [False, True])
def test_fc_per_example_grad_sq_equals_vmap_grad(loss, renorm):
    m = models.DeepFCN(4, 6, 3, classes=3, activation="tanh", renormalise=renorm, seeds=[0, 1], device="cpu")
    _, params = m.pure()
    X = torch.randn(2, 5, 4, dtype=torch.float64)
    y = torch.tensor([[0, 1, 2, 0, 1], [2, 2, 1, 0, 0]])

    def loss_i(p, x, yi):  # x (R, d), yi (R,)
        out = models.apply(list(p), x[:, None, :], "tanh", renormalise=renorm)[:, 0]
        return dtrain.example_loss(out, yi, loss).sum()

    want = measure.per_example_grad_sq(loss_i, params, X, y, x_axis=1)
    got = measure.fc_per_example_grad_sq(params, X, y, loss, "tanh", renormalise=renorm)
    torch.testing.assert_close(got, want, rtol=1e-11, atol=1e-14)
