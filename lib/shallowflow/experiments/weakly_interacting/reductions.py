"""Exact reductions of the 001 dynamics, batched over runs (torch, float64), and the dense engine.

Gradient descent is the paper's: theta <- theta - lr * p * grad L for h = (1/p) sum_j a_j relu(<w_j, x>)
and L = 1/(2n) sum_i r_i^2, r = y - h; i.e. a_j += lr/n <relu(V_j), r>, w_j += lr a_j/n X P_j r.

- :func:`orthogonal_gd`: inputs x_i = s_i e_i (canonical basis, the authors' Exp. 2 data): only the
  first n coordinates of each w_j move, so the state is (a (R,p), Z (R,p,n) = <w_j, x_i>) and a step
  costs O(n p), whatever d; norm(w_j)^2 keeps the constant mass of the other d - n coordinates.
- :func:`gram_gd`: any inputs, through their Gram matrix G = X^T X only (V_j = X^T w_j moves as
  dV_j = G dc_j with w_j = w_j(0) + X c_j), O(n^2 p) per step whatever d (Theorem 1 at d = 10^6).
- :func:`dense_gd`: the library's ensemble engine :func:`shallowflow.engine.train.gradient_descent` with
  output scaling 1/p and step p * lr (the engine measured fastest for n ~ 10^3, d ~ 10^2, see
  ``benchmarks/weakly_interacting.md``).

Every engine computes the exact local-PL curvature mu = p norm(grad L)^2 / L (eq. 24) where asked."""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field

import numpy as np
import torch

from shallowflow.engine import init, progress, train
from shallowflow.engine.config import DTYPE
from shallowflow.engine.models import Network
from shallowflow.engine.train import DivergenceError

NET = Network(output_scaling="mean")


# ----------------------------------------------------------------------------------------------
# orthogonal (canonical-basis) engine
def orthogonal_init(seeds, p, n, d, first_layer="gauss", w_factor=1.0, scale=1.0):
    """App-B initialisation restricted to the canonical basis: returns a (R,p), Wn (R,p,n) (coordinates
    1..n of w_j) and off (R,p) = the squared norm of coordinates n+1..d (constant in time)."""
    P = init.asymmetric(seeds, p, d, scale=scale, first_layer=first_layer, w_factor=w_factor, device="cpu")
    Wn = P.W[..., :n].contiguous()
    off = (P.W[..., n:] ** 2).sum(-1)
    return P.a.contiguous(), Wn, off


@dataclass
class OrthoRun:
    a: torch.Tensor
    Z: torch.Tensor  # (R, p, n) pre-activations <w_j, x_i>
    loss: torch.Tensor  # (R, K) recorded every step until stop (then frozen)
    mu: torch.Tensor  # (R, K) exact local-PL curvature (eq. 24)
    stopped_at: torch.Tensor  # (R,)
    extra: dict = field(default_factory=dict)


def ortho_mu(a, Z, r, s2, F=None, act=None, buf=None):
    """Eq. (24) for orthogonal inputs: mu = 2/(n p) sum_j [(relu(Z_j).rbar)^2 + a_j^2 sum_i 1_ji s_i^2 rbar_i^2].

    ``F`` = relu(Z), ``act`` = 1{Z > 0} (as Z's dtype) and ``buf`` (a scratch array of Z's shape) may be given by a
    caller that already holds them (:func:`orthogonal_gd`): the same operations on the same values, bit for bit."""
    R_, p, n = Z.shape
    rb = r / r.norm(dim=-1, keepdim=True)
    if act is None:
        act = (Z > 0).to(Z.dtype)
    if F is None:
        F = torch.clamp_min(Z, 0)
    if buf is None:
        buf = torch.empty_like(Z)
    t1 = torch.mul(F, rb[:, None, :], out=buf).sum(-1) ** 2
    t2 = a ** 2 * torch.mul(act, (s2 * rb ** 2)[:, None, :], out=buf).sum(-1)
    return 2.0 / (n * p) * (t1 + t2).sum(-1)


def orthogonal_gd(a, Z, off, y, s, lr, steps, stop_rel=None, stop_abs=None, track=None, bound64=None):
    """GD on orthogonal data x_i = s_i e_i.  y (n,) or (R, n); s (n,) or (R, n) (a data set per run).  Runs stop (frozen) when
    L < stop_abs (scalar) or L/L0 < stop_rel.  ``track`` (optional): a callable (k, a, Z, r, L, mu, alive)
    called every step for extra measurements; one that declares a keyword ``pos`` is also given pos = Z > 0 (a new
    bool array every step, which it may keep).  Raises DivergenceError on a non-finite loss."""
    a, Z = a.clone(), Z.clone()
    R_, p, n = Z.shape
    y = y.expand(R_, n) if y.dim() == 1 else y
    s2 = s ** 2
    loss = torch.empty(R_, steps + 1, dtype=DTYPE)
    mus = torch.empty(R_, steps + 1, dtype=DTYPE)
    alive = torch.ones(R_, dtype=torch.bool)
    stopped = torch.full((R_,), steps, dtype=torch.int64)
    L0 = None
    # relu(Z), 1{Z > 0} and the (R, p, n) products are computed once per step into buffers allocated once, and
    # shared by the loss, mu and the update (the same operations on the same values as computing each where it is
    # used: bit-identical, tests/test_perf_equal_orthogonal.py); Z itself is a new array every step (``track`` may
    # keep the previous one, and pos)
    F = torch.empty_like(Z)
    track_pos = track is not None and "pos" in inspect.signature(track).parameters
    act = torch.empty_like(Z)
    buf = torch.empty_like(Z)
    for k in progress.each(range(steps + 1), f"GD on orthogonal data ({R_} runs)", "it", progress.DELAY):
        torch.clamp_min(Z, 0, out=F)
        h = torch.mul(a[:, :, None], F, out=buf).sum(1) / p
        r = y - h
        L = (r ** 2).sum(-1) / (2 * n)
        if not bool(torch.isfinite(L).all()):
            bad = int(torch.nonzero(~torch.isfinite(L))[0])
            raise DivergenceError(f"the loss of run {bad} became non-finite at iteration {k} (lr = {lr}): reduce 'lr'",
                                  iteration=k, run=bad)
        if L0 is None:
            L0 = L.clone()
        pos = Z > 0
        act.copy_(pos)
        mu = ortho_mu(a, Z, r, s2, F=F, act=act, buf=buf)
        loss[:, k] = L
        mus[:, k] = mu
        if track is not None:
            if track_pos:
                track(k, a, Z, r, L, mu, alive, pos=pos)
            else:
                track(k, a, Z, r, L, mu, alive)
        stop = torch.zeros_like(alive)
        if stop_abs is not None:
            stop |= L < stop_abs
        if stop_rel is not None:
            stop |= L < stop_rel * L0
        newly = alive & stop
        stopped[newly] = k
        alive &= ~stop
        if k == steps or not bool(alive.any()):
            loss[:, k + 1:] = L[:, None]
            mus[:, k + 1:] = mu[:, None]
            break
        ga = torch.mul(F, r[:, None, :], out=buf).sum(-1) / n
        gZ = torch.mul(a[:, :, None] / n, act, out=buf).mul_((r * s2)[:, None, :])  # d<w_j, x_i> = s_i d w_ji
        m = (lr * alive.to(DTYPE))
        a = a + m[:, None] * ga
        Z = Z + gZ.mul_(m[:, None, None])  # gZ m = m gZ exactly
    return OrthoRun(a=a, Z=Z, loss=loss, mu=mus, stopped_at=stopped)


def ortho_M_lambda_min(a, Z, s2, iters: int = 80):
    """lambda_min of M = (1/p)[F^T F + diag(sum_j a_j^2 1_ji s_i^2)], F = relu(Z) (p x n), for every run,
    by bisection with Sylvester's inertia (Haynsworth): for D = diag, M - lam has no negative eigenvalue
    iff the p x p matrix I + F (D - lam)^-1 F^T has exactly #{d_i < lam} negative eigenvalues.  O(p^2 n)
    per bisection step instead of an n x n eigendecomposition."""
    R_, p, n = Z.shape
    F = torch.clamp_min(Z, 0) / math.sqrt(p)
    Dg = ((a ** 2)[:, :, None] * (Z > 0).to(DTYPE)).sum(1) * s2 / p  # (R, n)
    lo = Dg.amin(-1)  # lambda_min >= min d_i
    hi = lo + (F ** 2).sum((-1, -2)) + 1e-300
    eye = torch.eye(p, dtype=DTYPE)
    for _ in range(iters):
        lam = 0.5 * (lo + hi)
        diff = Dg - lam[:, None]
        diff = torch.where(diff.abs() < 1e-300, torch.full_like(diff, 1e-300), diff)
        K = eye + torch.einsum("rjn,rn,rkn->rjk", F, 1.0 / diff, F)
        neg = (torch.linalg.eigvalsh(K) < 0).sum(-1)
        below = (diff < 0).sum(-1)
        ok = neg == below  # no eigenvalue of M below lam
        lo = torch.where(ok, lam, lo)
        hi = torch.where(ok, hi, lam)
    return 0.5 * (lo + hi)


# ----------------------------------------------------------------------------------------------
# Gram-space engine
def gram_init(G, seeds, p, d, scale=1.0):
    """App-B initialisation in Gram space: V_j(0) = L_c z_j, z_j ~ N(0, I_n/d) (L_c the Cholesky factor
    of G), norm(w_j(0))^2 = norm(z_j)^2 + chi^2_{d-n}/d, a_j = s_j(norm(w_j(0)) + Exp(1)); both layers times
    ``scale``.  G (R, n, n).  Returns a (R,p), V0 (R,p,n), nw0 (R,p) = norm(w_j(0))^2."""
    R_, n, _ = G.shape
    Lc = torch.linalg.cholesky(G)
    As, Zs, Ns = [], [], []
    for seed in seeds:
        rng = np.random.default_rng(int(seed) + 7919)
        z = rng.standard_normal((p, n)) / math.sqrt(d)
        nw = (z ** 2).sum(1) + rng.chisquare(d - n, p) / d
        sgn = rng.choice([-1.0, 1.0], p)
        As.append(sgn * (np.sqrt(nw) + rng.exponential(1.0, p)))
        Zs.append(z)
        Ns.append(nw)
    sc = torch.as_tensor(np.broadcast_to(np.asarray(scale, float), (R_,)).copy(), dtype=DTYPE)
    a = torch.as_tensor(np.array(As), dtype=DTYPE) * sc[:, None]
    V0 = torch.einsum("rnk,rpk->rpn", Lc, torch.as_tensor(np.array(Zs), dtype=DTYPE)) * sc[:, None, None]
    nw0 = torch.as_tensor(np.array(Ns), dtype=DTYPE) * sc[:, None] ** 2
    return a, V0, nw0


@dataclass
class GramRun:
    loss: torch.Tensor  # (R, K)
    mu: torch.Tensor  # (R, K)
    low7: torch.Tensor  # Lemma 7 lower bound (R, K)
    upp7: torch.Tensor  # Lemma 7 upper bound
    rhs6: torch.Tensor  # (C/n) min_i |1 - r_i/y_i| of eq. (6)
    delta: torch.Tensor  # (R, K, p) a_j^2 - ||w_j||^2
    delta_step: torch.Tensor  # (R, K, p) lr^2 (g_a^2 - ||g_w||^2), the predicted one-step change
    sign_flips: torch.Tensor  # (R,) number of (step, neuron) sign changes of a_j
    stopped_at: torch.Tensor
    steps: int
    event: torch.Tensor = None  # (R,) the well-initialisation event I of Lemma 5 at t = 0


def gram_gd(G, y, a, V0, nw0, lr, steps, stop_rel=1e-20, C=None, deltas=True):
    """GD in Gram space for R runs; records the loss, the exact mu (eq. 24), both bounds of Lemma 7,
    the right-hand side of eq. (6) (with constant ``C`` (R,)) and, with ``deltas``, the balancedness of every
    neuron at every step (two (R, steps, p) records, the bulk of a long run's memory; ``deltas=False`` leaves
    ``delta`` and ``delta_step`` None and changes no other number).  lr: scalar or (R,).  Runs stop when
    L/L0 < stop_rel."""
    R_, p, n = V0.shape
    lr_t = torch.as_tensor(np.broadcast_to(np.asarray(lr, float), (R_,)).copy(), dtype=DTYPE)
    diagG = torch.diagonal(G, dim1=1, dim2=2)
    cxm2, cxp2 = diagG.amin(-1), diagG.amax(-1)
    off = torch.linalg.matrix_norm(G - torch.diag_embed(diagG), ord=2)
    a, V = a.clone(), V0.clone()
    c = torch.zeros_like(V0)
    K = steps + 1
    out = {k: torch.full((R_, K), float("nan"), dtype=DTYPE) for k in ("loss", "mu", "low7", "upp7", "rhs6")}
    delta = torch.full((R_, K, p), float("nan"), dtype=DTYPE) if deltas else None
    dstep = torch.full((R_, K, p), float("nan"), dtype=DTYPE) if deltas else None
    flips = torch.zeros(R_, dtype=torch.int64)
    alive = torch.ones(R_, dtype=torch.bool)
    stopped = torch.full((R_,), steps, dtype=torch.int64)
    sign0 = torch.sign(a)
    event = ((V0 > 0) & (a[:, :, None] * y[:, None, :] > 0)).any(1).all(1)
    L0 = None
    for k in progress.each(range(K), f"GD in Gram space ({R_} runs)", "it", progress.DELAY):
        act = (V > 0).to(DTYPE)
        rel = torch.clamp_min(V, 0)
        h = (a[:, :, None] * rel).sum(1) / p
        r = y - h
        L = (r ** 2).sum(-1) / (2 * n)
        if not bool(torch.isfinite(L).all()):
            bad = int(torch.nonzero(~torch.isfinite(L))[0])
            raise DivergenceError(f"the loss of run {bad} became non-finite at iteration {k}: reduce 'lr'",
                                  iteration=k, run=bad)
        if L0 is None:
            L0 = L.clone()
        q = act * r[:, None, :]  # P_j r
        Gq = q @ G  # (R, p, n), G symmetric
        qGq = (q * Gq).sum(-1)  # r^T P_j G P_j r
        ga = (rel * r[:, None, :]).sum(-1) / n
        gw2 = a ** 2 * qGq / n ** 2  # ||g_w||^2
        rn2 = (r ** 2).sum(-1)
        mu = 2.0 / (n * p) * ((rel * r[:, None, :]).sum(-1) ** 2 + a ** 2 * qGq).sum(-1) / rn2
        nw = nw0 + 2 * (c * V0).sum(-1) + (c * (c @ G)).sum(-1)
        cover_a2 = ((a ** 2)[:, :, None] * act).sum(1) / p  # (R, n)
        cover_aw = ((a ** 2 + nw)[:, :, None] * act).sum(1) / p
        out["loss"][:, k] = L
        out["mu"][:, k] = mu
        out["low7"][:, k] = 2.0 / n * (cxm2 - off) * cover_a2.amin(-1)
        out["upp7"][:, k] = 2.0 / n * cxp2 * cover_aw.amax(-1)
        if C is not None:
            out["rhs6"][:, k] = C / n * (1 - r / y).abs().amin(-1)
        if deltas:
            delta[:, k] = a ** 2 - nw
            dstep[:, k] = lr_t[:, None] ** 2 * (ga ** 2 - gw2)
        stop = L < stop_rel * L0
        stopped[alive & stop] = k
        alive &= ~stop
        if k == steps or not bool(alive.any()):
            for key in out:
                out[key][:, k + 1:] = out[key][:, k:k + 1]
            if deltas:
                delta[:, k + 1:] = delta[:, k:k + 1]
                dstep[:, k + 1:] = 0.0
            break
        m = lr_t * alive.to(DTYPE)
        dc = (a[:, :, None] / n) * q
        a = a + m[:, None] * ga
        c = c + m[:, None, None] * dc
        V = V + m[:, None, None] * (dc @ G)
        flips += (torch.sign(a) != sign0).sum(-1)
    return GramRun(loss=out["loss"], mu=out["mu"], low7=out["low7"], upp7=out["upp7"], rhs6=out["rhs6"],
                   delta=delta, delta_step=dstep, sign_flips=flips, stopped_at=stopped, steps=steps, event=event)


# ----------------------------------------------------------------------------------------------
# dense engine (sphere data)
def sphere_batch(n, d, seeds, orthogonal=False):
    """App-B data sets, one per seed, stacked: X (R, n, d), y (R, n)."""
    from shallowflow.engine import data

    Xs, ys = zip(*[data.weakly_interacting_draw(n, d, 100_003 + s, orthogonal) for s in seeds])
    return torch.stack(Xs), torch.stack(ys)


def dense_gd(n, d, p, seeds, lr=1.0, epochs=None, first_layer="gauss", threads=1):
    """App-B Exp. 1: one run per seed (its own data and initialisation), GD with step lr for ``epochs``
    (default: the horizon rule), early stop at L < 1/(2n).  Returns dict with final losses, L0,
    converged flags, finite flags and the time."""
    from . import theory

    epochs = epochs if epochs is not None else theory.epochs_rule(n, p, lr)
    X, y = sphere_batch(n, d, seeds)
    P0 = init.asymmetric(list(seeds), p, d, first_layer=first_layer, device="cpu")
    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        tr = train.gradient_descent(P0, (X, y), NET, steps=epochs, lr=p * lr, engine="torch",
                                    stop_below=1.0 / (2 * n), record_every=max(1, epochs), on_nonfinite="stop")
    finally:
        torch.set_num_threads(old)
    Lend = NET.loss(tr.final, X, y)
    L0 = tr.loss[:, 0]
    finite = torch.isfinite(Lend) & torch.isfinite(tr.final.W).flatten(1).all(1) & ~tr.info["diverged"]
    conv = Lend < 1.0 / (2 * n)
    return dict(L_end=Lend, L0=L0, converged=conv, finite=finite, seconds=tr.seconds, epochs=epochs,
                stopped_at=tr.stopped_at)
