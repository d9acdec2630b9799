"""002 (early alignment): Boursier and Flammarion, *Early alignment in two-layer networks training is a
two-edged sword* (arXiv:2401.10791, JMLR 2025).  Source: 002_2857c8c2774dfa04.txt.

The source text lost its mathematics; the formulas used here are tagged as in the book's specification:
[T] in the seed text, [C] from the authors' code (github.com/eboursier/early_alignment), [M] quoted from the
published version's metadata, [R] a reconstruction, [choice] a default of the book.

Conventions (stated once):

- network h(x) = sum_j a_j relu(<w_j, x>), no output factor; a 1-D input x is (x, 1) [T/C];
- loss: the authors' code trains torch's mean squared error L = (1/n) sum_k (h(x_k) - y_k)^2 [C], which is
  also the reading of the stripped eq. (10) [R].  Every run here trains that loss ("mean"); one GD step of
  size lr is lr units of gradient-flow time t of L.  Under the 1/2 convention L/2 the same trajectory takes
  time 2t (:func:`shallowflow.engine.models.flow_time_per_step` gives the mapping);
- with it, -d/dh l(0, y) = 2y, so D_A = (2/n) sum_{k in A} y_k x_k and G(w) = (2/n) sum_k y_k relu(<w, x_k>) [R];
- initialisation eq. (3) [R]: a_j = lambda a~_j / sqrt(m), w_j = lambda w~_j / sqrt(m): balanced (w~ ~ N(0, I),
  a~ = +-norm(w~)), unbalanced (a~ ~ N(0, 1)) or dominated (w~ ~ U[-1, 1]^2, a~ = +-sqrt(2)) [C].

This module holds what several 002 chapters share: the closed forms of the data (OLS, D_A, G, the critical
points on the circle), the initialisation eq. (3), the phase quantities observed on a run
(:func:`phase_monitor`) and the outcome classes of a run (:func:`classify`).  Everything runs on the CPU in
float64; seeds, scales and datasets of equal shape are one ensemble.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import torch

from ...engine import data as datasets
from ...engine import init, metrics
from ... import verdicts as C
from ...engine.config import DTYPE
from ...engine.models import Network, Params, loss_factor
from ...engine.monitor import Monitored


LOSS = "mean"  # the authors' code: torch.nn.MSELoss, (1/n) sum (h - y)^2 [C]


CPU = torch.device("cpu")


TWO_PI = 2 * math.pi


def grad_factor(loss: str = LOSS) -> float:
    """-d/dh l(0, y) / y: 2 for the mean squared error, 1 for the 1/2 convention."""
    return 2.0 * loss_factor(loss)


@dataclass
class OLS:
    """The ordinary-least-squares fit of (X, y) without intercept (the bias is the last input coordinate)."""

    beta: torch.Tensor  # (..., d)
    pred: torch.Tensor  # (..., n) <beta, x_k>
    resid: torch.Tensor  # (..., n) <beta, x_k> - y_k
    loss: torch.Tensor  # (...) in the convention it was computed in


def ols(X: torch.Tensor, y: torch.Tensor, loss: str = LOSS) -> OLS:
    """beta* = (X^T X)^{-1} X^T y for X (n, d) or a batch (N, n, d) [T: "the ordinary least squares estimator"]."""
    beta = torch.linalg.solve(X.transpose(-1, -2) @ X, (X.transpose(-1, -2) @ y.unsqueeze(-1))).squeeze(-1)
    pred = (X @ beta.unsqueeze(-1)).squeeze(-1)
    r = pred - y
    return OLS(beta, pred, r, loss_factor(loss) * (r ** 2).mean(-1))


def key_vector(X: torch.Tensor, y: torch.Tensor, active=None, loss: str = LOSS) -> torch.Tensor:
    """D_A = (c/n) sum_k A_k y_k x_k with c = -d/dh l(0, y)/y [R]; ``active`` (..., n) weights (all ones: D)."""
    n = X.shape[-2]
    w = y if active is None else active.to(X.dtype) * y
    return grad_factor(loss) / n * (w.unsqueeze(-2) @ X).squeeze(-2)


def G(X: torch.Tensor, y: torch.Tensor, U: torch.Tensor, loss: str = LOSS, leak: float = 0.0) -> torch.Tensor:
    """G(u) = (c/n) sum_k y_k sigma(<u, x_k>) for directions U (..., d) [R, eq. (7)]."""
    Z = U @ X.transpose(-1, -2)
    S = torch.where(Z > 0, Z, leak * Z)
    return grad_factor(loss) / X.shape[-2] * (S * y).sum(-1)


def critical_points_2d(X: torch.Tensor, y: torch.Tensor, loss: str = LOSS, tol: float = 1e-12) -> dict:
    """All critical points of G on the circle, for a batch of 2-D datasets X (N, n, 2), y (N, n).

    The 2n directions orthogonal to the x_k cut the circle into 2n arcs (activation cones).  On arc A,
    G(u) = <D_A, u>: its critical point is D_A/norm(D_A) (a maximum, "D_A in S_A") or -D_A/norm(D_A) (a minimum,
    "-D_A in S_A") when that direction lies inside the arc [R, Definition 1].  On a boundary ray the
    minimal-norm subgradient is the point of the segment [D_left, D_right] on the ray's line; the ray is a
    critical point when the tangential derivative changes sign there.  An arc with D_A = 0 is flat.

    Returns per dataset: boundary angles ``b`` (N, 2n) sorted, and for arcs i = [b_i, b_{i+1}] and rays b_i the
    masks ``arc_max``, ``arc_min``, ``flat``, ``ray_max``, ``ray_min``, the vectors ``D`` (arcs) and
    ``D_ray`` (minimal-norm subgradients at the rays), the arc patterns ``active`` (N, 2n, n).
    """
    X = torch.as_tensor(X, dtype=DTYPE)
    y = torch.as_tensor(y, dtype=DTYPE)
    if X.ndim == 2:
        X, y = X[None], y[None]
    N, n, d = X.shape
    if d != 2:
        raise ValueError(f"critical_points_2d needs 2-D inputs, got d = {d}")
    ax = torch.atan2(X[..., 1], X[..., 0])
    b = torch.cat([ax + math.pi / 2, ax - math.pi / 2], 1).remainder(TWO_PI)
    b, _ = torch.sort(b, dim=1)
    b_next = torch.roll(b, -1, dims=1)
    b_next[:, -1] += TWO_PI
    width = b_next - b
    mid = b + width / 2
    Um = torch.stack([torch.cos(mid), torch.sin(mid)], -1)
    active = (Um @ X.transpose(1, 2) > 0).to(DTYPE)
    D = key_vector(X[:, None], y[:, None], active, loss)  # (N, 2n, 2)
    nD = D.norm(dim=-1)
    phi = torch.atan2(D[..., 1], D[..., 0])
    rel = (phi - b).remainder(TWO_PI)
    rel_m = (phi + math.pi - b).remainder(TWO_PI)
    big = nD > tol
    arc_max = big & (rel > 0) & (rel < width)
    arc_min = big & (rel_m > 0) & (rel_m < width)
    Ub = torch.stack([torch.cos(b), torch.sin(b)], -1)
    Tb = torch.stack([-torch.sin(b), torch.cos(b)], -1)
    D_left = torch.roll(D, 1, dims=1)
    dl = (D_left * Tb).sum(-1)
    dr = (D * Tb).sum(-1)
    ray_max = (dl > tol) & (dr < -tol)
    ray_min = (dl < -tol) & (dr > tol)
    G_ray = (D * Ub).sum(-1)
    return dict(b=b, width=width, active=active, D=D, arc_max=arc_max, arc_min=arc_min, flat=~big,
                ray_max=ray_max, ray_min=ray_min, D_ray=G_ray[..., None] * Ub, G_ray=G_ray)


@dataclass
class Critical:
    """One critical point of G on the circle (2-D data)."""

    angle: float  # direction of the critical point
    kind: str  # "max" or "min"
    where: str  # "arc" (interior of a cone) or "ray" (a cone boundary)
    D: torch.Tensor  # the minimal-norm subgradient D^0 there (the extremal vector)
    G: float  # G at the unit direction
    pattern: tuple  # active data points (arcs) / points with <u, x_k> > 0 (rays)


def critical_points(data: datasets.Dataset, loss: str = LOSS) -> list[Critical]:
    """The critical points of G for one 2-D dataset, sorted by angle (see :func:`critical_points_2d`)."""
    X, y = data.X.to(CPU), data.y.to(CPU)
    c = critical_points_2d(X, y, loss)
    out = []
    for i in range(c["b"].shape[1]):
        Di = c["D"][0, i]
        pat = tuple(int(k) for k in torch.nonzero(c["active"][0, i]).flatten())
        if c["arc_max"][0, i] or c["arc_min"][0, i]:
            sgn = 1.0 if c["arc_max"][0, i] else -1.0
            ang = float(torch.atan2(sgn * Di[1], sgn * Di[0]).remainder(TWO_PI))
            out.append(Critical(ang, "max" if sgn > 0 else "min", "arc", Di.clone(), float(sgn * Di.norm()), pat))
        if c["ray_max"][0, i] or c["ray_min"][0, i]:
            u = torch.stack([torch.cos(c["b"][0, i]), torch.sin(c["b"][0, i])])
            patr = tuple(int(k) for k in torch.nonzero((X @ u) > 1e-12).flatten())
            out.append(Critical(float(c["b"][0, i]), "max" if c["ray_max"][0, i] else "min", "ray",
                                c["D_ray"][0, i].clone(), float(c["G_ray"][0, i]), patr))
    return sorted(out, key=lambda z: z.angle)


def flat_arcs(data: datasets.Dataset, loss: str = LOSS) -> list[tuple[float, float]]:
    """The arcs (start, end angles) on which G is identically zero (D_A = 0: all points inactive)."""
    c = critical_points_2d(data.X.to(CPU), data.y.to(CPU), loss)
    return [(float(c["b"][0, i]), float(c["b"][0, i] + c["width"][0, i]))
            for i in range(c["b"].shape[1]) if c["flat"][0, i]]


def grid_extrema(data: datasets.Dataset, points: int = 1_000_000, loss: str = LOSS, flat_tol: float = 1e-15) -> dict:
    """G on a uniform grid of the circle; its strict local maxima and minima (flat stretches excluded)."""
    phi = torch.arange(points, dtype=DTYPE) * (TWO_PI / points)
    U = torch.stack([torch.cos(phi), torch.sin(phi)], -1)
    g = G(data.X.to(CPU), data.y.to(CPU), U, loss)
    left, right = torch.roll(g, 1), torch.roll(g, -1)
    dl, dr = g - left, g - right
    mx = (dl > flat_tol) & (dr > flat_tol)
    mn = (dl < -flat_tol) & (dr < -flat_tol)
    return dict(phi=phi, G=g, argmax=float(phi[torch.argmax(g)]), maxima=phi[mx], minima=phi[mn])


def misalignment(W: torch.Tensor, direction: torch.Tensor) -> torch.Tensor:
    """1 - cos(w_j, direction) computed as 2 sin^2(theta/2) from theta = atan2(norm(w_perp), <w, u>), accurate far
    below float64's 1e-16 resolution of 1 - cos; W (..., m, d), direction (d,) or (..., d)."""
    u = direction / direction.norm(dim=-1, keepdim=True)
    par = (W * u.unsqueeze(-2)).sum(-1) if u.ndim > 1 else W @ u
    perp = (W - par.unsqueeze(-1) * (u.unsqueeze(-2) if u.ndim > 1 else u)).norm(dim=-1)
    theta = torch.atan2(perp, par)
    return 2 * torch.sin(theta / 2) ** 2


def signed_angle(W: torch.Tensor, direction: torch.Tensor) -> torch.Tensor:
    """Signed angle (-pi, pi] from a 2-D direction to each w_j, W (..., m, 2)."""
    d = float(torch.atan2(direction[1], direction[0]))
    ang = torch.atan2(W[..., 1], W[..., 0]) - d
    return torch.atan2(torch.sin(ang), torch.cos(ang))


def angle_distance(a, b) -> torch.Tensor:
    """abs(a - b) on the circle."""
    d = (torch.as_tensor(a, dtype=DTYPE) - torch.as_tensor(b, dtype=DTYPE)).remainder(TWO_PI)
    return torch.minimum(d, TWO_PI - d)


def min_norm_subgradient(X: torch.Tensor, y: torch.Tensor, W: torch.Tensor, zero_tol: float = 0.0,
                         loss: str = LOSS, iterations: int = 300) -> tuple[torch.Tensor, torch.Tensor]:
    """D^0_{w} at h = 0 for every neuron of W (..., m, d): the minimal-norm element of
    {(c/n) sum_k eta_k y_k x_k : eta_k = 1 if <w, x_k> > 0, 0 if < 0, in [0, 1] if = 0} [R, eq. (6)].

    A point counts as "= 0" when abs(cos(w, x_k)) <= zero_tol (GD with sigma'(0) = 0 zigzags around a cone
    boundary instead of sitting on it).  Returns (D (..., m, d), active mask (..., m, n)).
    """
    Xn = X / X.norm(dim=-1, keepdim=True)
    cos = (W / W.norm(dim=-1, keepdim=True).clamp_min(1e-300)) @ Xn.transpose(-1, -2)
    act = cos > zero_tol
    zero = cos.abs() <= zero_tol
    base = key_vector(X, y, act, loss)
    if zero_tol <= 0 or not bool(zero.any()):
        return base, act
    V = grad_factor(loss) / X.shape[-2] * y.unsqueeze(-1) * X  # (n, d)
    Lip = float((V ** 2).sum()) + 1e-300
    eta = torch.zeros_like(cos)
    zf = zero.to(DTYPE)
    for _ in range(iterations):
        Dv = base + (eta * zf) @ V
        eta = ((eta - (Dv @ V.T) * zf / Lip).clamp(0.0, 1.0)) * zf
    return base + (eta * zf) @ V, act


def two_neuron_interpolator(data: datasets.Dataset) -> Params:
    """A balanced 2-neuron network interpolating 3 univariate points with x_1 < x_2 < x_3, positive y_1, y_3
    and small y_2 [T: "a simple two-neurons network can" fit the data]:
    h(x) = u_1 relu(p_1 - x) + u_2 relu(x - p_2) with p_1 = x_2 + delta, p_2 = x_2 - delta, u_1 (p_1 - x_1) = y_1,
    u_2 (x_3 - p_2) = y_3 and delta solving u_1 delta + u_2 delta = y_2 (bisection).  Returns Params (1, 2, 2)."""
    x, y = data.x1d.to(CPU), data.y.to(CPU)
    order = torch.argsort(x)
    (x1, x2, x3), (y1, y2, y3) = x[order].tolist(), y[order].tolist()
    if not (y1 > 0 and y3 > 0 and y2 > 0):
        raise ValueError("the construction needs positive labels")
    hi = min(x3 - x2, x2 - x1)

    def f(dl):
        return dl * (y1 / (x2 - x1 + dl) + y3 / (x3 - x2 + dl)) - y2

    if f(hi) <= 0:
        raise ValueError("y_2 is too large for this two-kink construction")
    lo = 0.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    dl = (lo + hi) / 2
    p1, p2 = x2 + dl, x2 - dl
    u1, u2 = y1 / (p1 - x1), y3 / (x3 - p2)
    dirs = torch.tensor([[-1.0, p1], [1.0, -p2]], dtype=DTYPE)
    u = torch.tensor([u1, u2], dtype=DTYPE)
    kappa = torch.sqrt(u / dirs.norm(dim=1))  # balanced: |a_j| = ||w_j||
    W = kappa[:, None] * dirs
    a = u / kappa
    return Params(a[None], W[None])


def dominated(seeds: Sequence[int], m: int, d: int, scale) -> Params:
    """Dominated initialisation [C]: w~ ~ U[-1, 1]^d, a~ = +-sqrt(d) (so abs(a~) >= norm(w~)), scaled by ``scale``."""
    lam = torch.as_tensor(scale, dtype=DTYPE).reshape(-1)
    lam = lam.expand(len(seeds)) if lam.numel() == 1 else lam
    Ws, As = [], []
    for s in seeds:
        gen = torch.Generator().manual_seed(int(s))
        Ws.append(2 * torch.rand(m, d, generator=gen, dtype=DTYPE) - 1)
        As.append((2.0 * torch.randint(0, 2, (m,), generator=gen).to(DTYPE) - 1.0) * math.sqrt(d))
    return Params(lam[:, None] * torch.stack(As), lam[:, None, None] * torch.stack(Ws))


def initialise(kind: str, seeds: Sequence[int], m: int, d: int, scale) -> Params:
    """Eq. (3): lambda / sqrt(m) times a balanced, unbalanced or dominated draw; ``scale`` is lambda (per run)."""
    lam = torch.as_tensor(scale, dtype=DTYPE).reshape(-1) / math.sqrt(m)
    if kind == "balanced":
        return init.balanced(seeds, m, d, lam, device=CPU)
    if kind == "unbalanced":
        return init.unbalanced(seeds, m, d, lam, device=CPU)
    if kind == "dominated":
        return dominated(seeds, m, d, lam)
    raise ValueError(f"unknown initialisation {kind!r}")


def per_run_data(X: torch.Tensor, y: torch.Tensor, repeats: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-run data (R, n, d), (R, n) from a batch of datasets, each repeated ``repeats`` times consecutively."""
    return X.repeat_interleave(repeats, 0).contiguous(), y.repeat_interleave(repeats, 0).contiguous()


def masked_reduce(values: torch.Tensor, mask: torch.Tensor, how: str) -> torch.Tensor:
    """min/max/median/sum over the neurons of each run restricted to a mask (NaN where the mask is empty)."""
    v = values.to(DTYPE)
    empty = ~mask.any(-1)
    if how == "sum":
        out = torch.where(mask, v, torch.zeros_like(v)).sum(-1)
    elif how == "max":
        out = torch.where(mask, v, torch.full_like(v, -math.inf)).amax(-1)
    elif how == "min":
        out = torch.where(mask, v, torch.full_like(v, math.inf)).amin(-1)
    elif how == "median":
        out = torch.stack([v[r][mask[r]].median() if mask[r].any() else torch.tensor(math.nan, dtype=DTYPE)
                           for r in range(v.shape[0])])
    else:
        raise ValueError(how)
    return torch.where(empty, torch.full_like(out, math.nan), out)


def authors_frames(steps: int) -> list[int]:
    """The authors' snapshot schedule [C]: 0, 1, then it_{k+1} = floor(1.1 it_k) + 1, up to ``steps``."""
    from ...engine.train import geometric_schedule

    return geometric_schedule(steps, 1.1)


def frame_losses(states: Sequence[Params], data: datasets.Dataset, network: Network = Network(),
                 run: int = 0) -> torch.Tensor:
    """The training loss (mean convention) of run ``run`` at each state of an animation."""
    return torch.stack([network.loss(q.select(run), data.X, data.y, LOSS)[0] for q in states])


def largest_frame_rise(losses: torch.Tensor) -> float:
    """E4/figure2-descent and E4/figure3-descent: the largest increase of the loss between consecutive animation
    frames (:func:`frame_losses`), over the first frame's loss (negative when every frame is below the one before).
    The chapters ``spurious`` and ``staircase`` import it from here (it is documented here only)."""
    return float((losses[1:] - losses[:-1]).max() / losses[0])


def neuron_sets(p0: Params, X: torch.Tensor) -> dict:
    """002, Section 4.1.1 [R]: ``S_+`` (a_j(0) > 0, active on some x_k), ``S_0`` (a_j(0) > 0, inactive on all), ``S_-`` (a_j(0) < 0)."""
    Z = p0.W @ X.T
    any_active = (Z > 0).any(-1)
    pos = p0.a > 0
    return dict(plus=pos & any_active, zero=pos & ~any_active, minus=p0.a < 0)


def activation_counts(p: Params, X: torch.Tensor) -> dict:
    """Neurons active on all data points, on none, and on a strict non-empty subset (per run, (R,))."""
    act = (p.W @ X.T) > 0
    allk, nonek = act.all(-1), ~act.any(-1)
    return dict(all=allk, none=nonek, partial=~allk & ~nonek)


def phase_monitor(X, y, sets, p0, beta, D, eps2, eps3, captures, net):
    """The phase quantities of 002, Lemmas 4-7, as a monitor for :func:`shallowflow.engine.monitor.train_monitored`."""
    Xc = X
    plus, minus, zero = sets["plus"], sets["minus"], sets["zero"]
    n0 = metrics.neuron_norms(p0)
    a0 = p0.a.abs()
    bal0 = metrics.balancedness(p0)
    Dn = D / D.norm()
    Xn = X / X.norm(dim=1, keepdim=True)
    state = {"prev": p0.clone(), "prev_norm": n0.clone()}

    def monitor(p, k):
        nrm = metrics.neuron_norms(p)
        out = {}
        out["sum_sq_plus"] = masked_reduce(nrm ** 2, plus, "sum")
        out["beta_err"] = (torch.einsum("rm,rmd->rd", torch.where(plus, p.a, torch.zeros_like(p.a)), p.W) - beta).norm(dim=-1)
        cos_x = (p.W / nrm[..., None].clamp_min(1e-300)) @ Xn.T  # (R, m, n)
        out["pos_margin"] = masked_reduce(cos_x.amin(-1), plus, "min")
        rel = signed_angle(p.W, D)
        mis = misalignment(p.W, D)
        out["misalign_median"] = masked_reduce(mis, plus, "median")
        out["misalign_max"] = masked_reduce(mis, plus, "max")
        spread = masked_reduce(rel, plus, "max") - masked_reduce(rel, plus, "min")
        out["pair_min_cos"] = torch.cos(spread)
        out["neg_norm_ratio"] = masked_reduce(nrm / n0, minus, "max")
        out["neg_norm_step"] = masked_reduce(nrm - state["prev_norm"], minus, "max")
        out["neg_abs_a"] = masked_reduce(p.a.abs(), minus, "max")
        out["a_ratio"] = (p.a.abs() / a0).amax(-1)
        out["h_max"] = net.forward(p, X).abs().amax(-1)
        out["balance_drift"] = (metrics.balancedness(p) - bal0).abs().amax(-1)
        out["max_a_sq"] = (p.a ** 2).amax(-1)
        L, ga, gW = net.gradients(p, X, y, LOSS)
        out["loss"] = L
        out["grad_sq"] = (ga ** 2).sum(-1) + (gW ** 2).sum((-1, -2))
        out["path"] = ((p.a - state["prev"].a) ** 2).sum(-1).add(((p.W - state["prev"].W) ** 2).sum((-1, -2))).sqrt()
        out["sign_flips"] = ((p.a * p0.a) <= 0).sum(-1).to(DTYPE)
        out["zero_moved"] = masked_reduce((p.W - p0.W).abs().amax(-1) + (p.a - p0.a).abs(), zero, "max")
        out["min_norm"] = (nrm ** 2 + p.a ** 2).sqrt().amin(-1)
        for name, hit in (("tau2", out["sum_sq_plus"] >= eps2), ("tau3", out["beta_err"] <= eps3)):
            for r in range(p.runs):
                if bool(hit[r]) and r not in captures[name]:
                    captures[name][r] = (k, p.select(r).clone())
        state["prev"], state["prev_norm"] = p.clone(), nrm
        return out

    return monitor


# Where the source describes what happens "on this example" (a typical behaviour, not a theorem for every
# initialisation), a check measures the share of runs showing it and passes when the lower end of its Wilson
# interval (metrics.share_interval at the chapter's ``level``) is above one half, i.e. when most runs show it at
# that level [the book's reading of "typical"]; the measured value is that lower end.
TYPICAL = C.above(0.5, strict=True)


typical_share = metrics.typical_share  # the core's reading of "typical", re-exported for the chapters


OUTCOMES = ("global", "escaping", "ols", "zero", "other", "invalid")


SUCCESS = ("global", "escaping")


def classify(L: torch.Tensor, L_star: float, L_zero: float, atol: float = 1e-5, global_tol: float = 1e-6) -> list[str]:
    """Final losses -> "global" (L < global_tol), "escaping" (below the OLS loss: L < L* - atol, not yet global),
    "ols" (abs(L - L*) <= atol), "zero" (abs(L - L(zero network)) <= atol) or "other" (any other value).

    A non-finite loss is "invalid": it is neither a success nor a failure, and the checks built on these
    outcomes receive the runs' finiteness flags (``valid=``) so that such a run makes them fail."""
    out = []
    for v in L.tolist():
        if not math.isfinite(v):
            out.append("invalid")
        elif v < global_tol:
            out.append("global")
        elif v < L_star - atol:
            out.append("escaping")
        elif abs(v - L_star) <= atol:
            out.append("ols")
        elif abs(v - L_zero) <= atol:
            out.append("zero")
        else:
            out.append("other")
    return out


def tau_eps(eps: float, lam: float, D_norm: float) -> float:
    """End of the early-alignment phase [R]: tau = eps ln(1/lambda) / norm(D) (flow time of the mean squared error)."""
    return eps * math.log(1 / lam) / D_norm


def series_at_capture(mon: Monitored, captures: dict, name: str, key: str) -> torch.Tensor:
    """A monitored series of each run at that run's capture iteration ``name`` (NaN where never captured)."""
    vals = []
    for r in range(mon.final.runs):
        if r in captures[name]:
            i = int(torch.nonzero(mon.steps_seen == captures[name][r][0])[0])
            vals.append(float(mon.series[key][r, i]))
        else:
            vals.append(math.nan)
    return torch.tensor(vals, dtype=DTYPE)
