"""The PL results of Chapter 4 and Chapter 6 checked exactly where they can be (thesis Sec. 4.1-4.4, 6.2).

Lemma 1 ([KNS16]) on the PL example x^2 + 3 sin^2 x and on over-parameterised least squares; the
Sec. 4.2 minibatch identity by enumerating every minibatch; the Sec. 4.3 Weyl step along GD of a small
network's tangent kernel (``torch.func.jacrev``); (4.11) on random matrices; Lemma 3's stability bound
(4.12) against leave-one-out retraining of ridge regression; Lemma 11 exactly on least squares and on a
network with L from HVP power iteration; Lemma 22 ([CR17]) on log-cosh objectives.  All float64.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import torch

from ... import verdicts as C
from ...engine.config import DTYPE
from ...deep import data as ddata
from ...deep import measure, models
from ...deep import train as dtrain
from ...params import PROFILE, Int, Ints, Rule, STEP_OVERHEAD, array_bytes

SCHEMA = {
    "profile": PROFILE,
    "lemma1_steps": Int("GD steps on the PL example (the spec: 3000)", low=10, high=100_000),
    "ls_steps": Int("GD steps on least squares (Lemma 1 (b), Lemma 11; the spec: 2000)", low=10, high=100_000),
    "matrix_trials": Int("random matrix pairs for (4.11)", low=10, high=100_000),
    "ridge_datasets": Int("resampled datasets for Lemma 3 (the spec: 20)", low=2, high=1000),
    "net_steps": Int("GD steps of the network check of Lemma 11", low=5, high=10_000),
    "net_width": Int("width of the one-hidden-layer Tanh network of Lemma 11 (the spec: 256)", low=4, high=4096),
    "weyl_steps": Int("GD steps along which the Weyl step is checked", low=2, high=10_000),
    "seeds": Ints("seeds: each draws a least-squares problem; the first also seeds the Weyl and Lemma 11 networks, "
                  "the (4.11) matrix pairs, the ridge data sets, the Lemma 22 problems and the minibatch identity's data "
                  "(offsets 411, 3, 22 keep seed 0's numbers)", low=0),
}


def memory_estimate(P) -> float:
    """The network of Lemma 11 and the Weyl check (width x width-sized Jacobian products, a few copies); the other
    problems are fixed small matrices."""
    return array_bytes(P.net_width, P.net_width, copies=8) + array_bytes(P.matrix_trials, 64, copies=4)


def work_estimate(P) -> float:
    """Per seed: the PL example's and least squares' steps, the matrix pairs, the resampled ridge problems, the
    network's steps and the Weyl steps (an eigenproblem of the network's kernel each)."""
    per_seed = (P.lemma1_steps * STEP_OVERHEAD + P.ls_steps * (STEP_OVERHEAD + 2e4) + P.matrix_trials * 1e6
                + P.ridge_datasets * 1e6 + (P.net_steps + P.weyl_steps) * (STEP_OVERHEAD + 50 * P.net_width ** 2))
    return len(P.seeds) * per_seed


RULES = (Rule.memory(("net_width", "matrix_trials"), memory_estimate, what="the network and the matrix pairs"),
         Rule.work(("lemma1_steps", "ls_steps", "matrix_trials", "ridge_datasets", "net_steps", "net_width",
                    "weyl_steps", "seeds"), work_estimate, what="the chapter"))


# Lemma 1's rate criteria (the chapter's; tests/test_controls_balboni_thesis.py feeds them steps above 2/L)
LEMMA1_RATE = C.below(1e-12, strict=False)  # worst f_(k+1) / f_k minus gamma = 1 - mu/L
LEMMA1_RADIUS = C.below(1, strict=False)  # largest distance of the iterates from x_0 / the radius (4.4)


def kns_example(P, step: float = 1.0) -> dict:
    """Lemma 1 on f(x) = x^2 + 3 sin^2 x (mu = 1/32, L = 8, step 1/8) from 5 starts in [-100, 100] (``step`` / L
    replaces the step: the negative control of tests/test_controls_balboni_thesis.py)."""
    mu, L = 1 / 32, 8.0
    x0 = torch.tensor([-100.0, -37.3, 0.9, 12.5, 100.0], dtype=DTYPE)
    x = x0.clone()
    f = lambda z: z * z + 3 * torch.sin(z) ** 2  # noqa: E731
    fp = lambda z: 2 * z + 3 * torch.sin(2 * z)  # noqa: E731
    worst, dist = 0.0, torch.zeros_like(x)
    finite = torch.ones_like(x, dtype=torch.bool)  # per start: every iterate finite
    for _ in range(P.lemma1_steps):
        fk = f(x)
        xn = x - (fp(x) / L if step == 1.0 else step * fp(x) / L)
        ok = fk > 1e-300
        if ok.any():
            worst = max(worst, float((f(xn)[ok] / fk[ok]).max()))
        x = xn
        finite &= torch.isfinite(x) & torch.isfinite(f(x))
        dist = torch.maximum(dist, (x - x0).abs())
    gamma = 1 - mu / L
    bound = torch.sqrt(2 * f(x0) / L) / (1 - math.sqrt(gamma))
    return {"worst_ratio": worst, "rate": gamma, "dist_over_bound": float((dist / bound).max()), "finite": finite.numpy()}


def _ls_problem(seed: int, m: int = 50, d: int = 200):
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(m, d, generator=g, dtype=DTYPE) / math.sqrt(d)
    b = torch.randn(m, generator=g, dtype=DTYPE)
    return A, b


# Lemma 11's criterion on least squares (the chapter's; tests/test_controls_balboni_thesis.py feeds it a longer step)
LEMMA11_EXACT = C.below(1e-10, strict=False)  # largest f_k / (f_0 prod_i (1 - mu(x_i) / L)) - 1


def least_squares(P, step: float = 1.0) -> dict:
    """Lemma 1 (b) and Lemma 11 on f = 1/2 norm(Ax - b)^2 (A 50 x 200, f* = 0), GD with step 1/L (``step`` / L: a
    step above 1/L, outside both lemmas' hypothesis, is the negative control of tests/test_controls_balboni_thesis.py)."""
    worst1, worst11, dist_ratio = 0.0, -np.inf, 0.0
    finite = []  # per seed: the iterate and the loss stayed finite
    for seed in P.seeds:
        A, b = _ls_problem(seed)
        ev = torch.linalg.eigvalsh(A @ A.T)
        mu, L = float(ev[0]), float(ev[-1])
        x = torch.zeros(A.shape[1], dtype=DTYPE)
        x0 = x.clone()
        f0 = float(0.5 * (A @ x - b).square().sum())
        prod, dist = 1.0, 0.0
        for _ in range(P.ls_steps):
            r = A @ x - b
            fk = 0.5 * float(r @ r)
            gk = A.T @ r
            if fk < 1e-20 * f0:  # below this the residual is float64 round-off
                break
            mu_loc = float(gk @ gk) / (2 * fk)  # (6.2)
            x = x - (gk / L if step == 1.0 else step * gk / L)
            fn = 0.5 * float((A @ x - b).square().sum())
            worst1 = max(worst1, fn / fk)
            prod *= 1 - mu_loc / L
            if f0 * prod > 1e-20 * f0:
                worst11 = max(worst11, fn / (f0 * prod) - 1)  # Lemma 11: f_k <= f_0 prod (1 - mu_i / L)
            dist = max(dist, float((x - x0).norm()))
        finite.append(bool(torch.isfinite(x).all()) and math.isfinite(0.5 * float((A @ x - b).square().sum()))
                      and math.isfinite(prod))
        gamma = 1 - mu / L
        dist_ratio = max(dist_ratio, dist / (math.sqrt(2 * f0 / L) / (1 - math.sqrt(gamma))))
        rate = gamma
    return {"worst_ratio_minus_rate": worst1 - rate, "lemma11_excess": worst11, "dist_over_bound": dist_ratio,
            "finite": np.array(finite)}


def minibatch_identity(n: int = 8, b: int = 3, d: int = 5, seed: int = 0) -> float:
    """Sec. 4.2: E_I[<grad f, grad f_I>] = norm(grad f)^2 over every minibatch of size b (relative error)."""
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g, dtype=DTYPE)
    y = torch.randn(n, generator=g, dtype=DTYPE)
    w = torch.randn(d, generator=g, dtype=DTYPE)
    per = (X @ w - y)[:, None] * X  # per-example gradients of 1/2 (x.w - y)^2
    full = per.mean(0)
    vals = [float(full @ per[list(I)].mean(0)) for I in itertools.combinations(range(n), b)]
    return abs(np.mean(vals) - float(full @ full)) / float(full @ full)


def weyl_along_training(P, seed: int | None = None) -> dict:
    """Sec. 4.3: abs(lambda_min(K_k) - lambda_min(K_0)) <= norm(K_k - K_0)_2 along GD of a small network,
    with K the tangent kernel by ``measure.ntk_gram``; returns the largest excess (must be <= 0).  ``seed``: the
    first of ``P.seeds`` by default."""
    seed = P.seeds[0] if seed is None else seed
    data = ddata.digits(8, seed=seed, device="cpu").normalised()
    model = models.DeepFCN(data.d, 32, 2, 1, "tanh", seeds=[seed], device="cpu")
    f, _ = model.pure()
    target = (data.y.to(DTYPE) - 4.5) / 3
    params = list(model.parameters())
    opt = torch.optim.SGD(params, lr=0.05)
    K0 = lmin0 = None
    excess = -np.inf
    finite = True
    for _ in range(P.weyl_steps + 1):
        ps = tuple(p.detach()[0] for p in params)
        K = measure.ntk_gram(f, ps, data.X)
        lmin = torch.linalg.eigvalsh(K)[0]
        if K0 is None:
            K0, lmin0 = K, lmin
        step_excess = float((lmin - lmin0).abs() - torch.linalg.matrix_norm(K - K0, ord=2))
        finite &= math.isfinite(step_excess)
        excess = max(excess, step_excess)
        opt.zero_grad()
        (0.5 * (model(data.X)[0, :, 0] - target).square().mean()).backward()
        opt.step()
    return {"excess": excess, "K0_lmin": float(lmin0), "finite": np.array([finite])}


def perturbation_411(P) -> dict:
    """(4.11) on random pairs (A, B = A + E) of sizes 2..20: max of abs(s_min(A) - s_min(B)) - norm(E)_op and of
    norm(E)_op - norm(E)_F (both must be <= 0)."""
    g = torch.Generator().manual_seed(411 + P.seeds[0])
    a, b = -np.inf, -np.inf
    for _ in range(P.matrix_trials):
        n = int(torch.randint(2, 21, (1,), generator=g))
        A = torch.randn(n, n, generator=g, dtype=DTYPE)
        E = torch.randn(n, n, generator=g, dtype=DTYPE) * float(10 ** torch.empty(1).uniform_(-4, 0, generator=g))
        sA, sB = torch.linalg.svdvals(A)[-1], torch.linalg.svdvals(A + E)[-1]
        op, fro = torch.linalg.matrix_norm(E, ord=2), torch.linalg.matrix_norm(E)
        a, b = max(a, float((sA - sB).abs() - op)), max(b, float(op - fro))
    return {"weyl_excess": a, "fro_excess": b}


def ridge_stability(P, n: int = 30, d: int = 5, lam: float = 0.5) -> dict:
    """Lemma 3 (4.12) on ridge regression l(w; x, y) = 1/2 (x.w - y)^2 + lam/2 norm(w)^2, solved exactly
    (eps_A = 0): the measured leave-one-out pointwise stability max_i abs(l(w_S; z_i) - l(w_{S minus i}; z_i))
    against 2 G^2 / ((n - 1) mu), mu = lambda_min(X^T X / n) + lam (strong convexity, hence PL), G the largest
    per-example gradient norm at w_S and at every w_{S minus i}.  Returns the largest ratio measured / bound."""
    worst = 0.0
    rng = np.random.default_rng(3 + P.seeds[0])
    for _ in range(P.ridge_datasets):
        X = rng.standard_normal((n, d)) / math.sqrt(d)
        y = X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n)
        solve = lambda Xs, ys: np.linalg.solve(Xs.T @ Xs / len(ys) + lam * np.eye(d), Xs.T @ ys / len(ys))  # noqa: E731
        loss = lambda w, i: 0.5 * (X[i] @ w - y[i]) ** 2 + 0.5 * lam * w @ w  # noqa: E731
        gnorm = lambda w, i: np.linalg.norm((X[i] @ w - y[i]) * X[i] + lam * w)  # noqa: E731
        wS = solve(X, y)
        mu = np.linalg.eigvalsh(X.T @ X / n)[0] + lam
        beta, G = 0.0, max(gnorm(wS, i) for i in range(n))
        for i in range(n):
            keep = np.arange(n) != i
            wi = solve(X[keep], y[keep])
            beta = max(beta, abs(loss(wS, i) - loss(wi, i)))
            G = max(G, max(gnorm(wi, j) for j in range(n)))
        worst = max(worst, beta / (2 * G ** 2 / ((n - 1) * mu)))
    return {"ratio": worst}


def ridge_generalisation(P, n: int = 30, d: int = 5, lam: float = 0.5, delta: float = 0.1, test: int = 20_000) -> dict:
    """Lemma 3 (4.13) on the same ridge regression, one fixed distribution D (a fixed true w, Gaussian inputs and
    noise): for each of ``P.ridge_datasets`` training sets S of n examples, the gap |R_D(w_S) - R_S(w_S)| (R_D on
    ``test`` fresh examples) against sqrt((M^2 + 12 M n beta) / (2 n delta)) with beta the measured leave-one-out
    pointwise stability and M the largest per-example loss seen on S and on the test examples (the squared loss is
    unbounded: M is the smallest range the bound allows on what was drawn). The bound holds with probability at least
    1 - delta: returns the share of sets where the gap exceeds it and the largest gap / bound."""
    rng = np.random.default_rng(11 + P.seeds[0])
    w_true = rng.standard_normal(d)

    def draw(k):
        X = rng.standard_normal((k, d)) / math.sqrt(d)
        return X, X @ w_true + 0.3 * rng.standard_normal(k)

    Xt, yt = draw(test)
    solve = lambda Xs, ys: np.linalg.solve(Xs.T @ Xs / len(ys) + lam * np.eye(d), Xs.T @ ys / len(ys))  # noqa: E731
    losses = lambda w, Xs, ys: 0.5 * (Xs @ w - ys) ** 2 + 0.5 * lam * w @ w  # noqa: E731
    over, ratio = [], []
    for _ in range(P.ridge_datasets):
        X, y = draw(n)
        wS = solve(X, y)
        beta = 0.0
        for i in range(n):
            keep = np.arange(n) != i
            wi = solve(X[keep], y[keep])
            beta = max(beta, abs(losses(wS, X[i:i + 1], y[i:i + 1])[0] - losses(wi, X[i:i + 1], y[i:i + 1])[0]))
        train, held = losses(wS, X, y), losses(wS, Xt, yt)
        M = float(max(train.max(), held.max()))
        gap = abs(float(held.mean()) - float(train.mean()))
        bound = math.sqrt((M ** 2 + 12 * M * n * beta) / (2 * n * delta))
        over.append(gap > bound)
        ratio.append(gap / bound)
    return {"share_over": float(np.mean(over)), "max_ratio": float(max(ratio)), "delta": delta, "sets": len(over)}


LEMMA11_NETWORK_STEPS = C.above(0.95)  # fraction of the network's steps 1/L_k with f_(k+1) <= (1 - mu_k/L_k) f_k
LEMMA11_NETWORK_TRAINS = C.below(1)  # its final / initial loss


def lemma11_network(P, seed: int | None = None, step: float = 1.0) -> dict:
    """Lemma 11 on a one-hidden-layer normalised-Tanh network (MSE, n = 32 digits): steps 1 / L_k with L_k
    the top Hessian eigenvalue by warm-started HVP power iteration; the fraction of steps with
    f_{k+1} <= (1 - mu_k / L_k) f_k.  ``seed``: the first of ``P.seeds`` by default; ``step`` scales the steps to
    ``step`` / L_k (the negative control's longer steps, outside the lemma's hypothesis)."""
    seed = P.seeds[0] if seed is None else seed
    data = ddata.digits(32, seed=seed, device="cpu").normalised()
    model = models.DeepFCN(data.d, P.net_width, 1, 10, "tanh", seeds=[seed], device="cpu")
    params = list(model.parameters())

    def h(ps):
        return dtrain.loss_per_run(models.apply(list(ps), data.X, "tanh"), data.y, "mse").sum()

    v, ok, total = None, 0, 0
    f0 = float(h(tuple(p.detach() for p in params)))
    for _ in range(P.net_steps):
        ps = tuple(p.detach() for p in params)
        f = h(ps)
        g = torch.func.grad(h)(ps)
        lam, v = measure.power_iteration(h, ps, 30 if v is None else 5, v)
        L = float(lam.abs().max())
        mu = float(measure.pl_ratio(measure.sq_norm(g, per_run=False), f))
        with torch.no_grad():
            for p, gi in zip(params, g):
                p.sub_(gi / (L / step))  # L / 1.0 == L: the chapter's steps are unchanged
        fn = h(tuple(p.detach() for p in params))
        if not math.isfinite(float(fn)):
            raise dtrain.DivergenceError(f"the loss became non-finite at step {total + 1}", iteration=total + 1)
        ok += int(float(fn) <= (1 - mu / L) * float(f) * (1 + 1e-12))
        total += 1
    finite = all(bool(torch.isfinite(p).all()) for p in params) and math.isfinite(float(fn))  # else it raised above
    return {"fraction": ok / total, "final_over_initial": float(fn) / f0, "finite": np.array([finite])}


# Lemma 22's criterion (the chapter's; tests/test_controls_balboni_thesis.py feeds it a longer step)
LEMMA22_BOUND = C.below(1e-12, strict=False)  # largest relative excess of f(x_(k+1)) over (B.27)


def lemma22(P, step: float = 1.0) -> dict:
    """Lemma 22 (B.27) with step 1/L on f(x) = log cosh(x) (L = 1, x* = 0, mu = 1) from 0.5, 5, 50 and on
    f(x) = sum_i log cosh(a_i . x) in 2-D (L = lambda_max(A^T A)); the largest relative excess.  ``step`` / L
    replaces the step (above 1/L: outside the lemma, the negative control of tests/test_controls_balboni_thesis.py)."""
    worst = -np.inf
    finite = []  # per problem: every iterate finite
    problems = [(torch.eye(1, dtype=DTYPE), torch.tensor([[v]], dtype=DTYPE)) for v in (0.5, 5.0, 50.0)]
    g = torch.Generator().manual_seed(22 + P.seeds[0])
    for _ in range(3):
        problems.append((torch.randn(4, 2, generator=g, dtype=DTYPE), 10 * torch.randn(1, 2, generator=g, dtype=DTYPE)))
    for A, x in problems:
        L = float(torch.linalg.eigvalsh(A.T @ A)[-1])
        x = x[0]
        for _ in range(P.ls_steps):
            z = A @ x
            f = float(torch.sum(torch.log(torch.cosh(z))))
            if f <= 1e-14:
                break
            grad = A.T @ torch.tanh(z)
            xn = x - (grad / L if step == 1.0 else step * grad / L)
            fn = float(torch.sum(torch.log(torch.cosh(A @ xn))))
            bound = (1 - f / (2 * L * float(x @ x))) * f
            worst = max(worst, (fn - bound) / f)
            x = xn
        finite.append(bool(torch.isfinite(x).all()))
    return {"excess": worst, "finite": np.array(finite)}
