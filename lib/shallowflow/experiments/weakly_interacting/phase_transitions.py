"""001, chapter *phase-transitions*: Theorem 2 / Fig. 2 (phase transitions of the rescaled loss under
group initialisation) with the corrected closed form, validated against the library's Dormand-Prince
gradient flow and gradient descent on the full network, and Proposition 2 (rates n^-alpha)."""
from __future__ import annotations

import math

import numpy as np
import torch

from shallowflow import verdicts as C
from shallowflow.engine import init
from shallowflow.engine.config import DTYPE
from shallowflow.engine.flow import gradient_flow
from shallowflow.params import PROFILE, STEP_BUDGET, Float, Floats, Int, Ints, Rule, array_bytes, gd_work

from . import reductions as RD
from . import theory as T

SCHEMA = {
    "profile": PROFILE,
    "fig_ns": Floats("Fig. 2 / Thm 2: dataset sizes of the closed form (any size)", low=10, high=1e40, min_len=2),
    "eps_window": Float("Thm 2: loss fraction epsilon of the transition window", low=1e-4, high=0.49, low_open=True),
    "flow_n": Int("validation: n = d of the full-network gradient flow (p = 2)", low=4, high=4000),
    "gd_n": Int("validation: n = d of full gradient descent on the canonical basis (p = 2)", low=4, high=10**5),
    "gd_lrs": Floats("validation: GD step sizes", low=1e-3, high=2, low_open=True),
    "t_max": Float("time range in units of the later transition", low=1.0, high=10),
    "prop2_log2n": Ints("Prop. 2: n = 2^k for these k (k divisible by 4)", low=4, high=24, min_len=2),
    "alphas": Floats("Prop. 2: exponents alpha", low=0.5, high=1.0, min_len=2),
    "norms0": Floats("Prop. 2: initial norms ||w_j(0)||", low=1e-3, high=10, low_open=True),
    "seeds": Ints("the random instances: seed s draws the flow validation's positive coefficients (init.group, seed s) and "
                  "Prop. 2's labels and coefficients at n = 2^k (NumPy seed k + 1000000 s); each seed is computed on its own",
                  low=0, high=10**6, min_len=1, max_len=50),
}
RULES = (
    Rule(("prop2_log2n",), lambda P: all(k % 8 == 0 for k in P.prop2_log2n), "k must be a multiple of 8 so that "
         "k_n = n^(2(1-alpha)) is a power of 2 for alpha in multiples of 1/16"),
    Rule(("alphas",), lambda P: all(abs(a * 16 - round(a * 16)) < 1e-9 for a in P.alphas), "alpha must be a multiple of 1/16"),
    Rule.budget(("gd_n", "gd_lrs", "t_max"), lambda P: P.t_max * T.t_n(P.gd_n, 2) / min(P.gd_lrs), STEP_BUDGET,
                what="the GD validation (t_max t_n / lr)"),
)


def _prop2_groups(P):
    """(n, p) of every Prop. 2 case: n = 2^k points in p = n / k_n groups."""
    return [(2 ** kk, 2 ** kk // max(1, int(round(2 ** (kk * 2 * (1 - a)))))) for kk in P.prop2_log2n for a in P.alphas]


def memory_estimate(P) -> float:
    """The largest of: the flow's dense X = I (n x n), the GD validation's per-step records and their closed
    form (about 20 arrays of its step count), Prop. 2's group states (13 arrays of a chunk of its 60 times x p
    groups, T.mu_chunk) beside its data (4 arrays of n)."""
    steps = P.t_max * T.t_n(P.gd_n, 2) / min(P.gd_lrs)
    return max(array_bytes(P.flow_n, P.flow_n, copies=3), array_bytes(steps, copies=20) + array_bytes(P.gd_n, copies=8),
               max(array_bytes(min(60, T.mu_chunk(p)), p, copies=13) + array_bytes(n, copies=4)
                   for n, p in _prop2_groups(P)))


def work_estimate(P) -> float:
    """The flow (about 10^4 evaluations of the n x n network), the GD validation (about 10 operations per point
    and step) and Prop. 2's group states (about 50 per time and group, per initial norm)."""
    gd = sum(10 * gd_work(1, 2, P.gd_n, 0, P.t_max * T.t_n(P.gd_n, 2) / lr) for lr in P.gd_lrs)
    prop2 = sum(50 * 60 * p * len(P.norms0) for n, p in _prop2_groups(P))
    return len(P.seeds) * (1e4 * gd_work(1, 2, P.flow_n, P.flow_n, 1) + prop2) + gd


RULES = RULES + (
    Rule.memory(("flow_n", "gd_n", "gd_lrs", "t_max", "prop2_log2n", "alphas"), memory_estimate,
                what="the validation runs and Prop. 2's group states"),
    Rule.work(("flow_n", "gd_n", "gd_lrs", "t_max", "prop2_log2n", "alphas", "norms0", "seeds"), work_estimate,
              what="the chapter"),
    Rule(("seeds",), lambda P: len(set(P.seeds)) == len(P.seeds), "seeds must be distinct"),
)

NORMS = (1.0, 2.0)  # |y| on group 1 and group 2 (authors' phase_transition.py)
# Theorem 2 (Section 4.2): "the transitions happen at each time t^j = 1/||D_j^inf||" (time in units of t_n),
# the paper's formula at the Fig. 2 norms
SOURCE_THM2_TRANSITION_TIMES = tuple(1.0 / D for D in NORMS)


#: Thm 2: ||w_j||^2 at t_max of the full network's flow over p sqrt(k) ||D_j|| (:func:`run_validation`); Fig. 2: GD at
#: the smallest step matches the closed form (largest relative deviation of the loss)
NORM_GROWTH = C.within(0.9, 1.1)
GD_MATCHES = C.below(1e-3)
CLOSED_FORM = C.below(1e-6)  # Fig2/closed-form-vs-flow: max relative deviation of the flow's loss from the closed form


def loss_curve(tau, n, norms=NORMS, u0=1.0, rho0=1.0, p=None):
    """L_n(tau t_n) of p groups of k = n/p orthonormal points with abs(y) = norms[j] (constant in a group)."""
    p = p or len(norms)
    k = n / p
    t = np.asarray(tau, float) * T.t_n(n, p)
    L = 0.0
    rho0s = np.broadcast_to(np.asarray(rho0, float), (p,))
    u0s = np.broadcast_to(np.asarray(u0, float), (p,))
    for j, D in enumerate(norms):
        u, rho, q, omr2 = T.group_state(t, k, D, n, p, u0s[j], rho0s[j])
        L = L + ((q / p) ** 2 + (u / p) ** 2 * omr2) / (2 * n)
    return L


def rate_peaks(tau, L):
    """The times (midpoints of the grid ``tau``) of the local maxima of the loss's decay rate -dL/dtau: one per
    transition a curve shows (Fig. 2's 'two phase transitions')."""
    tau, L = np.asarray(tau, float), np.asarray(L, float)
    r = -np.diff(L) / np.diff(tau)
    mid = (tau[1:] + tau[:-1]) / 2
    k = np.where((r[1:-1] > r[:-2]) & (r[1:-1] >= r[2:]))[0] + 1
    return mid[k]


def fig2_transitions(P, norms=NORMS, points=1000, u0=lambda n: 1.0):
    """Fig. 2's transitions: for each n of P.fig_ns, the decay-rate peaks of the closed-form loss on the figure's grid
    (``points`` times in [0, t_max]); ``norms`` the groups' abs(y) (equal norms: the control, one transition);
    ``u0(n)`` the initial a_j ||w_j|| (Theorem 2's start: 1 at every n; a start that grows with n is a negative
    control, outside the scope's "norms of a_j and w_j independent of d, n, p")."""
    tau = np.linspace(0, P.t_max, points)
    return [dict(n=float(n), peaks=rate_peaks(tau, loss_curve(tau, n, norms=norms, u0=u0(n)))) for n in P.fig_ns]


#: Thm 2 (and Fig. 2): "each transition of L_n occurs in the time frame which decreases as 1/log(n)" (001:246): a
#: quantity x_n that approaches its limit at that rate keeps x_n log(np) constant in n; its relative spread
#: (max - min) / abs(mean) over the n grid (:func:`relative_spread`) is below 0.1
LOG_RATE = C.below(0.1)


def relative_spread(values, axis=0):
    """(max - min) / abs(mean) along ``axis``: the spread of a quantity that should be constant, relative to its size
    (the absolute value: a negative mean must not turn a large spread into a small one)."""
    v = np.asarray(values, float)
    return (v.max(axis) - v.min(axis)) / np.abs(v.mean(axis))


def later_transition_approach(tr, later=max(SOURCE_THM2_TRANSITION_TIMES)):
    """Fig. 2's later transition against Theorem 2's time: over the n of ``tr`` (:func:`fig2_transitions`) that show
    both transitions (one decay-rate peak on each side of the midpoint of the two times), the distance of the later
    peak to ``later``; returns (ns, distances)."""
    mid = float(np.mean(SOURCE_THM2_TRANSITION_TIMES))
    two = [r for r in tr if [int(np.sum(r["peaks"] < mid)), int(np.sum(r["peaks"] >= mid))] == [1, 1]]
    return [r["n"] for r in two], [abs(float(r["peaks"][-1]) - later) for r in two]


def transition_flags(ns, dist, p=2):
    """Fig2/transition-times' measurement: [the later transition's distance to Theorem 2's time decreases strictly
    over at least two n, the distance times log(np) is constant in n (:func:`relative_spread` within
    :data:`LOG_RATE`): the approach is Theorem 2's O(1/log n), towards the time itself]."""
    if len(dist) < 2:
        return [False, False]
    return [bool(np.all(np.diff(dist) < 0)),
            bool(LOG_RATE(relative_spread(np.asarray(dist) * np.log(np.asarray(ns, float) * p))))]


def scaled_times(ns, eps, u0=lambda n: 1.0):
    """Thm2/times' measurement: ||D|| t(eps)/t_n per n (rows) and norm of :data:`NORMS` (columns), rho0 = 1, from the
    start u0(n) (:func:`fig2_transitions`)."""
    return np.array([[transition_times(n, eps, D, u0=u0(n))[0] * D for D in NORMS] for n in ns])


def transition_times(n, eps, D, p=2, u0=1.0, rho0=1.0):
    """t(eps)/t_n and t(1-eps)/t_n of one group (its loss at eps and 1 - eps of its plateau)."""
    k = n / p
    tn = T.t_n(n, p)
    lo = T.group_time_at_fraction(1 - eps, k, D, n, p, u0, rho0) / tn
    hi = T.group_time_at_fraction(eps, k, D, n, p, u0, rho0) / tn
    return hi, lo


def run_theorem2(P):
    """Theorem 2 / Fig 2: transition times and windows of the rescaled loss under group initialisation (the
    corrected closed forms), the plateau values between transitions, and a three-group case."""
    rows = []
    for n in P.fig_ns:
        r = dict(n=n)
        for j, D in enumerate(NORMS):
            for rho0 in (1.0, 0.5):
                hi, lo = transition_times(n, P.eps_window, D, rho0=rho0)
                r[(D, rho0)] = dict(t_eps=hi, window=(hi - lo) * math.log(n * 2))
        tau_mid = 0.75 * 1.0  # between the transitions at 1/2 and 1
        r["plateaus"] = [float(loss_curve(tau, n)) for tau in (0.25, 0.75, 1.5)]
        rows.append(r)
    # the "at most p parts" claim: p = 3 groups with norms (1, 1, 2) and different rho0: 2 distinct transitions
    n = max(P.fig_ns)
    return dict(rows=rows, three_group_times=three_group_times(n))


def three_group_times(n):
    """Thm 2's "at most p parts": the half-loss times t(1/2)/t_n of p = 3 groups with norms (1, 1, 2) and alignments
    rho0 (1, 0.3, 0.7) at n."""
    return [transition_times(n, 0.5, D, p=3, rho0=r0)[0] for D, r0 in ((1.0, 1.0), (1.0, 0.3), (2.0, 0.7))]


#: Thm 2: the number of distinct transition times of :func:`three_group_times` (:func:`distinct`, tolerance 0.05 t_n)
#: is 2, the number of distinct norms
PARTS = C.close_to(2, atol=0.5)


def distinct(values, tol):
    v = sorted(values)
    return 1 + sum(1 for a, b in zip(v, v[1:]) if b - a > tol)


def orthonormal_groups(n, p=2, norms=NORMS, signs=(1.0, -1.0)):
    """Canonical basis X = I_n and labels abs(y) = norms[j] with sign signs[j] on group j."""
    k = n // p
    y = torch.cat([torch.full((k,), signs[j] * norms[j], dtype=DTYPE) for j in range(p)])
    return torch.eye(n, dtype=DTYPE), y


def run_validation(P):
    """Full-network dynamics against the closed form: the library's Dormand-Prince flow (dense X = I, p = 2)
    at n = P.flow_n, one flow per seed of P.seeds (its own adaptive steps: the same alone or beside other seeds;
    ``flow`` gathers them: deviations as the largest over seeds, flags and norms per seed, the curves of the first
    seed for the figure), and GD on the canonical basis (exact reduction) at n = P.gd_n."""
    flows = [_flow(P, s) for s in P.seeds]
    out = {"flow": dict(flows[0], seeds=list(P.seeds), rel=max(f["rel"] for f in flows),
                        balance_drift=max(f["balance_drift"] for f in flows), rho0=[f["rho0"] for f in flows],
                        final_w2=np.stack([f["final_w2"] for f in flows]), finite=[f["finite"] for f in flows]),
           "flows": flows}
    out.update(_gd_validation(P))
    return out


def _flow(P, seed, start=None):
    """The Dormand-Prince flow of the full network from the group initialisation of ``seed``, against the closed form.
    ``start``: a function of that initialisation (Params) returning another one to start from (a negative control's;
    default the group initialisation itself)."""
    n = P.flow_n
    X, y = orthonormal_groups(n)
    G0 = init.group(X, y, 2, [int(seed)], norm=1.0, device="cpu")  # random positive coefficients: rho0 < 1
    if start is not None:
        G0 = start(G0)
    k = n // 2
    rho0 = [float((G0.W[0, j, j * k:(j + 1) * k] * y[j * k:(j + 1) * k].abs()).sum()
                  / (G0.W[0, j].norm() * y[j * k:(j + 1) * k].norm())) for j in range(2)]
    t_second = T.t_n(n, 2)
    taus = np.linspace(0, P.t_max, 41)
    fl = gradient_flow(G0, (X, y), RD.NET, t_end=float(2 * P.t_max * t_second), snapshots_t=[float(2 * tau * t_second) for tau in taus],
                       rtol=1e-10, engine="torch")
    L_flow = np.array([float(RD.NET.loss(fl.at(float(2 * tau * t_second)), X, y)[0]) for tau in taus])
    L_cf = loss_curve(taus, n, u0=1.0, rho0=rho0)
    return dict(n=n, taus=taus, L_flow=L_flow, L_cf=L_cf, rho0=rho0, rel=float(np.max(np.abs(L_flow - L_cf) / L_cf)),
                       final_w2=(fl.final.W[0] ** 2).sum(-1).numpy(), target=2 * math.sqrt(k) * np.array(NORMS),
                       finite=bool(np.isfinite(L_flow).all()),
                       # Lemma 1 for the flow: change of a_j^2 - norm(w_j)^2 relative to the larger norm(w_j)^2
                       balance_drift=float(((fl.final.a ** 2 - (fl.final.W ** 2).sum(-1)) - (G0.a ** 2 - (G0.W ** 2).sum(-1))).abs().div(
                           torch.maximum((fl.final.W ** 2).sum(-1), (G0.W ** 2).sum(-1))).max()))


def _gd_validation(P, W=None):
    """GD on the canonical basis at n = P.gd_n, every step of P.gd_lrs, against the closed form (deterministic).
    ``W`` (1, 2, n): another first layer to start from (a negative control's; default the aligned start)."""
    out = {}
    n = P.gd_n
    _, y = orthonormal_groups(n)
    k = n // 2
    if W is None:
        W = torch.zeros(1, 2, n, dtype=DTYPE)
        W[0, 0, :k] = 1 / math.sqrt(k)
        W[0, 1, k:] = 1 / math.sqrt(k)  # aligned with D_j: rho0 = 1, ||w_j(0)|| = 1 (the authors' Fig. 2)
    a = torch.tensor([[1.0, -1.0]], dtype=DTYPE)
    tn = T.t_n(n, 2)
    gd = []
    for lr in P.gd_lrs:
        steps = int(P.t_max * tn / lr)
        run = RD.orthogonal_gd(a, W, None, y, torch.ones(n, dtype=DTYPE), lr, steps)
        tau = np.arange(steps + 1) * lr / tn
        cf = loss_curve(tau, n)
        L = run.loss[0].numpy()
        gd.append(dict(lr=lr, rel=float(np.max(np.abs(L - cf) / cf)), tau=tau, L=L, finite=bool(np.isfinite(L).all())))
    out["gd"] = gd
    out["gd_n"] = n
    return out


#: Fig. 2: the log-log slope of GD's deviation from the closed form against lr (:func:`gd_order`) near 1
GD_ORDER = C.within(0.9, 1.1)


def gd_order(gd) -> float:
    """Fig. 2's "the GD deviation is of order lr": the log-log slope of the rows' deviations against their steps."""
    lrs = np.array([g["lr"] for g in gd])
    return float(np.polyfit(np.log(lrs), np.log([g["rel"] for g in gd]), 1)[0])


def run_prop2(P):
    """Prop. 2: per (n, alpha, norm(w(0))): groups of k_n = n^(2(1-alpha)) points with labels U[1, 2] and one
    random sign per group, w_j(0) = positive random combination of its group; mu(t) from the exact solution."""
    rows = []
    for seed, kk in ((s, k) for s in P.seeds for k in P.prop2_log2n):
        n = 2 ** kk
        rng = np.random.default_rng(kk + 1_000_000 * int(seed))
        y = rng.uniform(1.0, 2.0, n)  # |y|; group signs do not enter the group dynamics
        coef = 1.0 - rng.uniform(0.0, 1.0, n)  # u_i in (0, 1]
        for alpha in P.alphas:
            k = int(round(2 ** (kk * 2 * (1 - alpha))))
            p = n // k
            yy = y.reshape(p, k)
            uu = coef.reshape(p, k)
            D = np.sqrt((yy ** 2).mean(1))
            rho0 = np.clip((uu * yy).sum(1) / (np.linalg.norm(uu, axis=1) * np.linalg.norm(yy, axis=1)), 0, 1)
            rho0 = np.where(rho0 > 1 - 1e-12, 1.0, rho0)  # one-point groups: exactly aligned
            for w0 in P.norms0:
                u0 = np.full(p, w0 ** 2)
                c = 2 * np.sqrt(k) * D / n
                cmin = c.min()
                cy_m, cy_p = y.min(), y.max()
                Cc = max(alpha * cy_m, (1 / (2 * cy_m)) ** (1 / alpha))
                t0 = Cc * n ** (3 * alpha - 1) * math.log(Cc * n)
                t_late = 250.0 / cmin  # c_min t = 250: residuals ~ e^-250 (e^-500 for rho0 = 1), no underflow
                # (10) is claimed for t >= t0; t0 is often beyond the time the residual underflows, so the grid
                # starts at min(t0, t_late / 100) (a stronger test) and ends at t_late
                ts = np.geomspace(min(t0, t_late / 100), t_late, 60)
                mu = T.group_network_mu(ts, k, D, n, p, u0, rho0)
                K1 = 2 * cy_m * (w0 ** 2) / (2 + w0 ** 2)
                K2 = 4 * cy_p
                # [derived] mu -> min_j c_j for rho0_j < 1; a one-point group (k = 1) has rho = 1 exactly, its residual
                # lies along D_j and decays twice as fast in L: mu -> 2 c_j there
                pred = float(np.min(c * np.where(rho0 >= 1.0, 2.0, 1.0)))
                rows.append(dict(seed=int(seed), n=n, alpha=alpha, w0=w0, p=p, k=k, t0=t0, t_late=t_late, mu_late=float(mu[-1]), cmin=float(cmin), pred=pred,
                                 ratio=float(mu[-1] / pred), ratio_spec=float(mu[-1] * n ** alpha / (2 * D.min())),
                                 viol=int((((mu * n ** alpha < K1 * (1 - 1e-9)) | (mu * n ** alpha > K2 * (1 + 1e-9))) & ((ts >= t0) | (ts == ts[-1]))).sum()),
                                 finite=bool(np.isfinite(mu).all())))
    return rows


def prop2_slopes(rows):
    """Late-mu log-log slope against n for each (seed, alpha, initial norm)."""
    out = {}
    for key in sorted({(r["seed"], r["alpha"], r["w0"]) for r in rows}):
        sel = [r for r in rows if (r["seed"], r["alpha"], r["w0"]) == key]
        out[key] = float(np.polyfit(np.log([r["n"] for r in sel]), np.log([r["mu_late"] for r in sel]), 1)[0])
    return out


def findings(claims, th, P):
    ok = claims.passed
    r = th["rows"][-1]
    return "\n".join([
        f"- At n = {r['n']:.3g} the rescaled loss has plateaus {', '.join(f'{v:.4f}' for v in r['plateaus'])} at "
        f"t/t_n = 0.25, 0.75, 1.5: the spec's tolerance 1e-3 to Theorem 2's levels 1.25, 0.25, 0 "
        f"{'is met' if ok('Thm2/plateaus') else 'is not met'} at this n; the distance to the levels "
        f"{'decreases' if ok('Thm2/plateaus-converge') else 'does not decrease'} monotonically in n and "
        f"{'shrinks' if ok('Thm2/plateaus-limit') else 'does not shrink'} at least like 1/log(np), so the limit levels of "
        f"Theorem 2 are {'reproduced' if ok('Thm2/plateaus-converge') and ok('Thm2/plateaus-limit') else 'not reproduced'}.",
        f"- The transition window times log(np)/t_n is {r[(1.0, 1.0)]['window']:.4f} for ||D|| = 1: the corrected "
        f"constant {'matches' if ok('Thm2/window-corrected') else 'does not match'}, the paper's eq. (12) constant "
        f"{'matches' if ok('Thm2/window-paper') else 'does not match'}.",
        f"- Proposition 2: late-time slopes {'equal' if ok('Prop2/slope') else 'do not all equal'} -alpha within 0.02.",
    ])
