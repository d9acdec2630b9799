"""Closed forms of source 001 shared by its chapters (width and horizon rules, Lemma 5, the group ODE of
Prop. 2 / Thm 2 with the corrected solution, Lemma 7 and Theorem 1 constants).

Model (eq. 1): h(x) = (1/p) sum_j a_j relu(<w_j, x>), L = 1/(2n) sum_i r_i^2, gradient flow accelerated
by p (eq. 3); gradient descent with step ``lr`` is theta <- theta - lr * p * grad L (App. B)."""
from __future__ import annotations

import math

import numpy as np
from scipy import special, stats


def width_rule(n, eps: float = 0.05, factor: int = 1):
    """App. B: p = factor * floor(log(n/eps) / log(4/3)) + 1 (factor 4: the authors' "EXP1.a" cell)."""
    return factor * int(math.floor(math.log(n / eps) / math.log(4 / 3))) + 1


def t_n(n, p):
    """The phase-transition time scale sqrt(n p)/4 * log(n p) (Thm 2)."""
    return math.sqrt(n * p) / 4 * math.log(n * p)


def epochs_rule(n, p, lr: float = 1.0, mult: float = 1.5):
    """App. B horizon t_inf = mult * t_n, epochs floor(t_inf / lr) + 1 (authors' code)."""
    return int(math.floor(mult * t_n(n, p) / lr)) + 1


# ----------------------------------------------------------------------------------------------
# Lemma 5
def well_init_probability(n_plus: int, n_minus: int, p: int) -> float:
    """Exact P(I) for orthogonal data and Gaussian (rotation-invariant) w with random signs [derived]:
    sum_k Binom(k; p, 1/2) (1 - 2^-k)^n_plus (1 - 2^-(p-k))^n_minus."""
    k = np.arange(p + 1)
    logb = special.gammaln(p + 1) - special.gammaln(k + 1) - special.gammaln(p - k + 1) - p * math.log(2)
    with np.errstate(divide="ignore"):
        lp = n_plus * np.log1p(-np.power(2.0, -k.astype(float))) if n_plus else np.zeros(p + 1)
        lm = n_minus * np.log1p(-np.power(2.0, -(p - k).astype(float))) if n_minus else np.zeros(p + 1)
    return float(np.exp(logb + lp + lm).sum())


def lemma5_p_sufficient(n, eps):
    return int(math.ceil(4 * math.log(n / eps)))


def lemma5_p_necessary(n, eps):
    return int(math.floor(3 * math.log(n / eps) - 2))


def well_init_lower_bound(n, p):
    """The proof's bound P(I) >= 1 - n (3/4)^p."""
    return 1 - n * 0.75 ** p


# ----------------------------------------------------------------------------------------------
# group dynamics (Prop. 2, Thm 2): one group of k orthonormal points, ||x_i|| = 1
def group_rate(k, D, n):
    """c = 2 sqrt(k) norm(D) / n."""
    return 2 * math.sqrt(k) * D / n


def group_solution(t, k, D, n, p, u0, rho0):
    """Exact solution (book's derivation, spec erratum (a)): with c = 2 sqrt(k)norm(D)/n,
    d rho/dt = (c/2)(1 - rho^2) -> rho = tanh(c t/2 + artanh rho0), and u = norm(w)^2 solves
    du/dt = c rho u - 2 u^2/(n p) -> u = E / (1/u0 + (2/(n p)) int_0^t E), E = (cosh(c t/2 + A)/cosh A)^2.
    Returns (u, rho) arrays.  rho0 = 1 is the limit A -> infinity (E = exp(c t))."""
    t = np.asarray(t, dtype=float)
    c = group_rate(k, D, n)
    if rho0 >= 1.0:
        rho = np.ones_like(t)
        # u = u0 e^{ct} / (1 + u0 (2/(np c)) (e^{ct} - 1)), written without overflow
        P = n * p * c / 2
        ect_inv = np.exp(-c * t)
        u = u0 / (ect_inv + (u0 / P) * (1 - ect_inv))
        return u, rho
    A = math.atanh(rho0)
    x = c * t / 2 + A
    rho = np.tanh(x)
    # E = cosh(x)^2/cosh(A)^2 ; int_0^t E = [t/2 + (sinh(2x) - sinh(2A))/(2c)] / cosh(A)^2
    # divide numerator and denominator by cosh(x)^2 to avoid overflow
    logcx = np.logaddexp(x, -x) - math.log(2)
    ch2A = math.cosh(A) ** 2
    inv_E = ch2A * np.exp(-2 * logcx)  # 1/E
    # int_0^t E / E = [t/2 + (sinh 2x - sinh 2A)/(2c)] / cosh(x)^2
    s2x_over = 2 * np.tanh(x)  # sinh(2x)/cosh(x)^2
    integral_over_E = (t / 2) * np.exp(-2 * logcx) + (s2x_over - math.sinh(2 * A) * np.exp(-2 * logcx)) / (2 * c)
    u = 1.0 / (inv_E / u0 + (2 / (n * p)) * integral_over_E)
    return u, rho


def group_solution_paper(t, k, D, n, p, u0, rho0):
    """The paper's eqs. (67)/(69) as printed (argument c t instead of c t/2; (69) taken with rho0 = 1
    elsewhere): rho = tanh(c t + artanh rho0), u = P u0 e^{ct} / (P + u0 (e^{ct} - 1))."""
    t = np.asarray(t, dtype=float)
    c = group_rate(k, D, n)
    rho = np.tanh(c * t + math.atanh(min(rho0, 1 - 1e-16)))
    P = n * p * c / 2
    ect_inv = np.exp(-c * t)
    return u0 / (ect_inv + (u0 / P) * (1 - ect_inv)), rho


def group_loss(u, rho, k, D, n, p):
    """Loss of one group (all its pre-activations positive): (1/(2n)) norm(sqrt(k) D - a w / p)^2 =
    (1/(2n)) [k D^2 - 2 sqrt(k) D u rho / p + u^2 / p^2]."""
    return (k * D ** 2 - 2 * math.sqrt(k) * D * u * rho / p + u ** 2 / p ** 2) / (2 * n)


def group_time_at_fraction(kappa, k, D, n, p, u0, rho0, t_hi=None):
    """The time at which the group's loss equals kappa times its initial plateau k D^2/(2n), by bisection
    on the exact solution (the loss is decreasing)."""
    L0 = k * D ** 2 / (2 * n)
    c = group_rate(k, D, n)
    lo, hi = 0.0, t_hi or 200.0 * math.log(max(n * p, 3.0)) / c
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        u, r = group_solution(np.array([mid]), k, D, n, p, u0, rho0)
        if group_loss(u[0], r[0], k, D, n, p) > kappa * L0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def window_constant_corrected(eps: float) -> float:
    """[derived] log of the ratio kappa(eps)/kappa(1-eps) of the corrected window: the normalised width
    (t(eps) - t(1-eps)) log(np) / t_n tends to (2/norm(D)) * this value."""
    r = ((1 - math.sqrt(eps)) / math.sqrt(eps)) * (math.sqrt(1 - eps) / (1 - math.sqrt(1 - eps)))
    return math.log(r)


def window_constant_paper(eps: float, D: float) -> float:
    """The paper's eq. (12)/(86): (t(eps) - t(1-eps)) / t_n ~ (1/(2norm(D))) log C(eps) / log n, eq. (87)."""
    C = ((1 - math.sqrt(eps)) / (1 + D * (1 - math.sqrt(eps)))) * \
        ((1 + D * (1 - math.sqrt(1 - eps))) / (1 - math.sqrt(1 - eps)))
    return math.log(C) / (2 * D)


# ----------------------------------------------------------------------------------------------
# Theorem 1 / Lemma 7 constants
def theorem1_C(cx_minus, cx_plus, cy_minus):
    """C = (6/5) (C_x^-)^2 C_y^- / C_x^+ of Theorem 1, eq. (6)."""
    return 1.2 * cx_minus ** 2 * cy_minus / cx_plus


def assumption2_bound(cx_minus, cy_minus, cy_plus, n):
    """Right-hand side of Assumption 2, eq. (4): (C_x^-)^2 / (2 sqrt n) * C_y^- / C_y^+."""
    return cx_minus ** 2 / (2 * math.sqrt(n)) * cy_minus / cy_plus


def loglog_slope(x, y, boot: int = 0, groups=None, seed: int = 0, level: float = 0.95):
    """Least-squares slope of log y against log x; with ``boot`` > 0 also a percentile bootstrap interval at
    ``level`` resampling runs within each x (``groups``: the x value of each run)."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    lx, ly = np.log(x), np.log(y)
    slope = float(np.polyfit(lx, ly, 1)[0])
    if not boot:
        return slope, (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    idx_by = [np.flatnonzero(x == v) for v in np.unique(x)]
    out = []
    for _ in range(boot):
        pick = np.concatenate([rng.choice(ix, ix.size) for ix in idx_by])
        out.append(np.polyfit(lx[pick], ly[pick], 1)[0])
    tail = 100 * (1 - level) / 2
    return slope, (float(np.percentile(out, tail)), float(np.percentile(out, 100 - tail)))


def ks_normal_pvalue(v):
    """Kolmogorov-Smirnov p-value of the standardised sample against N(0, 1)."""
    v = np.asarray(v, float)
    z = (v - v.mean()) / v.std(ddof=1)
    return float(stats.kstest(z, "norm").pvalue)


def group_state(t, k, D, n, p, u0, rho0):
    """Numerically stable group state at times t (broadcasting over groups): returns u, rho, and the
    residual quantities q = P - u rho and 1 - rho^2 without cancellation (valid for rho0 in (0, 1])."""
    t = np.asarray(t, dtype=float)
    c = 2 * np.sqrt(k) * D / n
    P = n * p * c / 2
    rho0 = np.asarray(rho0, dtype=float)
    u0 = np.asarray(u0, dtype=float)
    one = rho0 >= 1.0
    A = np.arctanh(np.where(one, 0.5, rho0))
    x = np.where(one, c * t, c * t / 2 + A)
    e2 = np.exp(-2 * x)
    sech2 = 4 * e2 / (1 + e2) ** 2
    one_minus_tanh = 2 * e2 / (1 + e2)
    # general rho0 < 1: 1/u - 1/P = sech^2 x [cosh^2 A/u0 + t/(np) - sinh(2A)/(npc)] - (2/(npc)) (1 - tanh x)
    inv_gap = sech2 * (np.cosh(A) ** 2 / u0 + t / (n * p) - np.sinh(2 * A) / (n * p * c)) - 2 / (n * p * c) * one_minus_tanh
    # rho0 = 1: u = u0 / (e^{-ct} + (u0/P)(1 - e^{-ct})); 1/u - 1/P = e^{-ct} (1/u0 - 1/P)
    inv_gap1 = np.exp(-c * t) * (1 / u0 - 1 / P)
    inv_gap = np.where(one, inv_gap1, inv_gap)
    u = 1 / (1 / P + inv_gap)
    gap = P * u * inv_gap  # P - u
    one_m_rho = np.where(one, 0.0, one_minus_tanh)
    rho = 1 - one_m_rho
    q = gap + u * one_m_rho
    one_m_rho2 = one_m_rho * (1 + rho)
    return u, rho, q, one_m_rho2


MU_CHUNK_BYTES = 2 ** 28  # the group states of one chunk of times: about 13 arrays of (times, groups) float64


def mu_chunk(groups: int) -> int:
    """How many times :func:`group_network_mu` evaluates at once, so that its group states of ``groups`` groups
    fit in :data:`MU_CHUNK_BYTES` (at least one time: a time is one row of every state array)."""
    return max(1, int(MU_CHUNK_BYTES // (13 * 8 * max(int(groups), 1))))


def group_network_mu(t, ks, Ds, n, p, u0s, rho0s):
    """mu(t) of a network of p groups (Prop. 2 / Thm 2), from the exact per-group solution:
    norm(R_j)^2 = (q_j/p)^2 + (u_j/p)^2 (1 - rho_j^2), (v_j^T R_j)^2 = u_j (rho_j sqrt(k)norm(D_j) - u_j/p)^2 and
    mu = 2/(n p) sum_j [(v_j^T R_j)^2 + u_j norm(R_j)^2] / sum_j norm(R_j)^2.  t: (T,), groups: (G,).
    The times are taken a chunk at a time (:func:`mu_chunk`), so memory stays bounded at 2^24 groups."""
    t = np.asarray(t, float)
    size = max(np.size(ks), np.size(Ds), np.size(u0s), np.size(rho0s), 1)
    step = mu_chunk(size)
    return np.concatenate([_group_network_mu(t[i:i + step], ks, Ds, n, p, u0s, rho0s)
                           for i in range(0, t.size, step)]) if t.size else np.zeros(0)


def _group_network_mu(t, ks, Ds, n, p, u0s, rho0s):
    t = np.asarray(t, float)[:, None]
    u, rho, q, omr2 = group_state(t, ks, Ds, n, p, u0s, rho0s)
    R2 = (q / p) ** 2 + (u / p) ** 2 * omr2
    # v_j^T R_j / sqrt(u) = (P rho - u)/p = (rho (P - u) - u (1 - rho))/p, with P - u = q - u (1 - rho)
    one_m_rho = 1 - rho
    gap = q - u * one_m_rho
    vr = (rho * gap - u * one_m_rho) / p
    num = (u * vr ** 2 + u * R2).sum(-1)
    return 2 / (n * p) * num / R2.sum(-1)
