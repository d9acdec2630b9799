"""001, chapter *local-pl*: Experiment 2 / Fig. 6 (asymptotic local-PL curvature on orthogonal data),
Conjecture 1, Proposition 1, Lemma 7 along the runs and Lemma 8 (extinction), on the exact
canonical-basis reduction :func:`.reductions.orthogonal_gd` (O(n p) per step, whatever d)."""
from __future__ import annotations

import math

import numpy as np
import torch

from shallowflow.engine import data as datasets
from shallowflow.engine import checkpoint, metrics, progress
from shallowflow.engine.config import DTYPE
from shallowflow.params import PROFILE, Bool, Float, Int, Ints, Rule, Str, array_bytes, gd_work
from shallowflow import verdicts as C

from . import reductions as RD
from . import theory as T

SCHEMA = {
    "profile": PROFILE,
    "ns": Ints("dataset sizes n (orthogonal data: each n at most d)", low=20, high=20000, min_len=2),
    "d": Int("ambient dimension, at least every n (enters only through the norms of w_j(0))", low=2, high=10**6),
    "seeds": Ints("stated protocol: the runs' seeds s, the same at every n (run s at n draws its initialisation from "
                  "generator seed 1000 n + s; a seed whose initialisation misses the event I is rejected and reported, "
                  "not replaced)", low=0, high=999, min_len=1),
    "data": Str("data per run: fixed (one data set per n, seed 20000 + n, the authors' code) or fresh (each run its own, "
                "seed 100003 + its generator seed)", choices=("fixed", "fresh")),
    "eps": Float("epsilon of the width rule", low=1e-4, high=0.5),
    "lr": Float("GD step", low=1e-3, high=2, low_open=True),
    "horizon_mult": Float("horizon in units of t_n (stated protocol: 1.5)", low=0.1, high=100),
    "stop_factor": Float("early stop at L < stop_factor / (2n) (stated: 1e-6)", low=1e-30, high=1),
    "final_ns": Ints("authors' final protocol (10x epochs, w x 0.01): n values", low=20, high=20000, min_len=2),
    "final_seeds": Ints("authors' final protocol: the runs' seeds s (generator seed 1000 n + s, as the stated protocol)",
                        low=0, high=999, min_len=1),
    "first_layer": Str("first-layer law", choices=("gauss", "uniform")),
    "boot": Int("bootstrap resamples for slope intervals", low=0, high=100000),
    "level": Float("level of the printed intervals (bootstrap slopes, means over runs)", low=0.5, high=0.999, low_open=True),
    "resume": Bool("keep each finished n (its runs, each seeded by itself, one per protocol) on disk and read it back when the "
                   "same parameters run again with the same package code (shallowflow.engine.checkpoint): an interrupted paper run "
                   "resumes where it stopped with identical numbers; off in the book and smoke profiles"),
}


def _protocols(P):
    """(n, D, p, runs, steps + 1) of every run_n call: the stated protocol, then the authors' final one."""
    for ns, seeds, mult in ((P.ns, P.seeds, P.horizon_mult), (P.final_ns, P.final_seeds, 10 * P.horizon_mult)):
        for n in ns:
            p = T.width_rule(n, P.eps)
            yield n, P.d, p, len(seeds), T.epochs_rule(n, p, P.lr, mult) + 1


def memory_estimate(P) -> float:
    """Bytes at the largest n: the data (runs x n x D with fresh data), the runs' initialisations (p x D each, and
    their first n coordinates), the state (a few runs x p x n arrays) and the recorded loss and mu (runs x steps);
    plus the loss and mu every earlier n keeps."""
    kept = sum(array_bytes(R, K, copies=2) for n, D, p, R, K in _protocols(P))
    return kept + max(array_bytes(R if P.data == "fresh" else 1, n, D) + array_bytes(R, p, D, copies=2) + array_bytes(R, p, n, copies=10)
                      for n, D, p, R, K in _protocols(P))


def work_estimate(P) -> float:
    """The initialisations (runs x p x D draws) and every GD step of every run
    (about 10 operations per neuron and point, the tracking included)."""
    return sum(gd_work(R, p, 1, D, 1) + 10 * gd_work(R, p, n, 0, K) for n, D, p, R, K in _protocols(P))


NAMES = ("ns", "d", "seeds", "eps", "lr", "horizon_mult", "final_ns", "final_seeds", "data")
RULES = (Rule(("d", "ns", "final_ns"), lambda P: P.d >= max(list(P.ns) + list(P.final_ns)),
              "orthogonal inputs x_i = |x_i| e_i need d >= n for every n of ns and final_ns"),
         Rule(("seeds",), lambda P: len(set(P.seeds)) == len(P.seeds), "seeds must be distinct"),
         Rule(("final_seeds",), lambda P: len(set(P.final_seeds)) == len(P.final_seeds), "final_seeds must be distinct"),Rule.memory(NAMES, memory_estimate, what="the data, the initialisations and the runs"),
         Rule.work(NAMES, work_estimate, what="the runs (stated and final protocols)"))


def generator_seeds(n, seeds):
    """The generator seed of run s at n: 1000 n + s (distinct across n, so the runs of different n share no draws)."""
    return [1000 * n + int(s) for s in seeds]


def orthogonal_data(n, d, gen_seeds, data="fixed"):
    """Orthogonal App-B data x_i = s_i e_i, one row per run: the norms s (R, n) and labels y (R, n).  ``fixed``:
    one data set per n (seed 20000 + n, the authors' code); ``fresh``: run r's own (seed 100003 + gen_seeds[r]),
    so a run's numbers are the same alone or in any batch."""
    keys = [20_000 + n] * len(gen_seeds) if data == "fixed" else [100_003 + g for g in gen_seeds]
    draws = {k: datasets.weakly_interacting_draw(n, d, k, orthogonal=True) for k in dict.fromkeys(keys)}
    s = torch.stack([draws[k][0][torch.arange(n), torch.arange(n)] for k in keys])
    y = torch.stack([draws[k][1] for k in keys])
    return s, y


def conditioned_seeds(n, p, d, seeds, data="fixed", first_layer="gauss", w_factor=1.0):
    """The seeds whose App-B initialisation satisfies the event I on their data (the authors resample until
    it holds; the book keeps the seeds it was given and reports the others): (kept, rejected)."""
    gs = generator_seeds(n, seeds)
    s, y = orthogonal_data(n, d, gs, data)
    a, Wn, off = RD.orthogonal_init(gs, p, n, d, first_layer=first_layer, w_factor=w_factor)
    ok = metrics.well_initialised(a, Wn * s[:, None, :], y).tolist()
    return [v for v, o in zip(seeds, ok) if o], [v for v, o in zip(seeds, ok) if not o]


def run_n(n, P, protocol="stated"):
    """All runs at one n: returns the Exp-2 measures and the Lemma 7/8, Prop. 1 diagnostics."""
    d = P.d
    p = T.width_rule(n, P.eps)
    wf, mult, given = (1.0, P.horizon_mult, P.seeds) if protocol == "stated" else (0.01, 10 * P.horizon_mult, P.final_seeds)
    seeds, rejected = conditioned_seeds(n, p, d, list(given), P.data, P.first_layer, wf)
    if not seeds:
        raise ValueError(f"n = {n} ({protocol} protocol): every seed of {list(given)} misses the event I; give other seeds")
    gs = generator_seeds(n, seeds)
    s, y = orthogonal_data(n, d, gs, P.data)  # (R, n) each
    a0, Wn, off = RD.orthogonal_init(gs, p, n, d, first_layer=P.first_layer, w_factor=wf)
    Z0 = Wn * s[:, None, :]
    R_ = len(seeds)
    epochs = T.epochs_rule(n, p, P.lr, mult)
    wrong0 = (a0[:, :, None] * y[:, None, :] < 0)
    right0 = ~wrong0
    # prev: the previous iterate (orthogonal_gd makes a new Z every step, so no copy is kept); prev_act = prev > 0,
    # kept from the step before instead of recomputed
    st = dict(t_ext=torch.full((R_,), -1, dtype=torch.int64), prev=Z0.clone(), prev_act=Z0 > 0,
              mono_viol=torch.zeros(R_, dtype=torch.int64),
              react=torch.zeros(R_, dtype=torch.int64), resid_ext=torch.full((R_,), float("nan"), dtype=DTYPE),
              v64=torch.zeros(R_, dtype=torch.int64), n64=torch.zeros(R_, dtype=torch.int64))
    cxm, cxp, cyp = s.amin(-1), s.amax(-1), y.abs().amax(-1)  # per run (R,)
    # Lemma 8's time t_n = 2n / (C_y^- C_x^- Delta) max_{j,i} <w_j(0)|x_i>_+ (001:717), per run, and the step that
    # reaches it (the first k with k lr >= t_n); (47)'s first line is read there, or at the last step where t_n lies
    # beyond the run (``tn_reached`` says which)
    t_l8 = lemma8_tn(n, y, s, a0, Wn, off, Z0)
    k_tn_full = torch.ceil(t_l8 / P.lr).to(torch.int64)
    k_tn = torch.clamp(k_tn_full, max=epochs)
    st["grows_tn"] = torch.zeros(R_, dtype=torch.bool)
    cbar = (((a0 ** 2 - (Wn ** 2).sum(-1) - off) / p).sum(-1)).clamp_min(0)  # (R,) >= max_i (1/p) sum_j delta_j 1_ji
    kappa64 = 2 * math.pi * math.sqrt(2 / 3) * cxp ** 2 / cxm * cyp * math.sqrt(p / n)  # (R,)

    def track(k, a, Z, r, L, mu, alive, pos=None):
        act = Z > 0 if pos is None else pos  # pos: orthogonal_gd's Z > 0, a new array every step
        prev, prev_act = st["prev"], st["prev_act"]
        before = st["t_ext"] < 0
        if bool(before.any()):
            wrong_active = (act & wrong0).flatten(1).any(1)
            newly = before & ~wrong_active
            st["t_ext"][newly] = k
            st["resid_ext"][newly] = ((r - y).abs() / y.abs()).amax(-1)[newly]
            good = right0 & prev_act
            # where good, prev > 0, so prev.abs() is prev: the same test, one array pass less
            dec = (good & (Z < prev - 1e-12 * prev)).flatten(1).any(1)
            st["mono_viol"] += (dec & before).to(torch.int64)
        else:  # every run extinct: no run is newly extinct and the monotonicity count adds (dec & before) = 0
            newly = before
        # prev <= 0 is ~(prev > 0): prev had a finite loss, so it holds no NaN
        st["react"] += (act & ~prev_act).flatten(1).sum(1)
        after = ~before | newly
        bound = kappa64 * (1 - r / y).abs().amax(-1) + 2 / n * cxp ** 2 * cbar
        st["v64"] += (after & alive & (mu > bound * (1 + 1e-9))).to(torch.int64)
        st["n64"] += (after & alive).to(torch.int64)
        st["prev"], st["prev_act"] = Z, act
        at = k_tn == k
        if bool(at.any()):
            st["grows_tn"][at] = lemma8_first_line(Z0, Z, right0)[at]

    run = RD.orthogonal_gd(a0, Z0, off, y, s, P.lr, epochs, stop_abs=P.stop_factor / (2 * n), track=track)
    L = run.loss
    k_end = run.stopped_at
    # every run stopped (frozen) before some k_tn: the loop ended early, and the frozen state is the state at k_tn
    late = k_tn > int(k_end.max())
    if bool(late.any()):
        st["grows_tn"][late] = lemma8_first_line(Z0, run.Z, right0)[late]
    tn_reached = k_tn_full <= k_end  # t_n inside the run (not beyond its horizon or its early stop)
    idx = torch.arange(R_)
    # mu(t_inf): per-epoch decay over the last (up to) 100 epochs, per unit time
    w = torch.clamp(k_end, max=100).clamp_min(1)
    mu_last = torch.log(L[idx, k_end - w] / L[idx, k_end]) / (w * P.lr)
    mu_avg = torch.log(L[:, 0] / L[idx, k_end]) / (k_end.clamp_min(1) * P.lr)
    act = (run.Z > 0).to(DTYPE)
    cover = ((run.a ** 2)[:, :, None] * act).sum(1) / p
    mu_low = 2 / n * cover.amin(-1)
    mu_upp = 16 / n * cover.amax(-1)
    lam = RD.ortho_M_lambda_min(run.a, run.Z, s ** 2)
    mu_spec = 2 / n * lam
    mu_exact = run.mu[idx, k_end]
    # Lemma 7 at every iterate (orthogonal: ||X^T X - D|| = 0)
    # recomputed cheaply from the recorded mu and the final bounds is not enough: use the exact per-step check below
    t_fit = metrics.first_below(L / L[:, :1], 1e-2, torch.arange(L.shape[1]))
    finite = torch.isfinite(L).all(1) & torch.isfinite(run.Z).flatten(1).all(1)
    never = st["t_ext"] < 0  # a wrongly signed pair still active at the end: no extinction time
    st["resid_ext"][never] = float("inf")
    return dict(n=n, p=p, epochs=epochs, seeds=seeds, rejected=rejected, generator_seeds=gs, never_extinct=never, mu_last=mu_last, mu_avg=mu_avg, mu_low=mu_low, mu_upp=mu_upp,
                mu_spec=mu_spec, mu_exact=mu_exact, stopped=k_end, converged=L[idx, k_end] < P.stop_factor / (2 * n),
                t_ext=st["t_ext"] * P.lr, mono=st["mono_viol"], grows_tn=st["grows_tn"], tn_reached=tn_reached, react=st["react"], resid_ext=st["resid_ext"],
                v64=st["v64"], n64=st["n64"], t_fit=t_fit.to(DTYPE) * P.lr, t_l8=t_l8, finite=finite,
                loss=L, mu=run.mu, lemma7=lemma7_violations(run, a0, Wn, off, s, y, p, n))


def lemma8_tn(n, y, s, a0, Wn, off, Z0):
    """Lemma 8's time t_n = 2n / (C_y^- C_x^- Delta) max_{j,i} <w_j(0)|x_i>_+ (001:717) per run: C_y^- = min_i |y_i|,
    C_x^- = min_i ||x_i||, Delta = min_j |a_j(0)|^2 - ||w_j(0)||^2 (assumption 2, 001:711)."""
    delta = (a0 ** 2 - (Wn ** 2).sum(-1) - off).amin(-1)
    return 2 * n / (y.abs().amin(-1) * s.amin(-1) * delta) * torch.clamp_min(Z0, 0).flatten(1).amax(1)


def lemma8_first_line(Z0, Zt, right0):
    """(47)'s first line per run (001:719): a_j(0) y_i > 0 implies <w_j(t)|x_i>_+ >= <w_j(0)|x_i>_+, with Z = <w_j|x_i>
    (R, p, n) at 0 and at t and ``right0`` = a_j(0) y_i > 0; True where no correctly signed pair's positive part fell
    below its start (relative tolerance 1e-12 for the rounding of the float64 steps)."""
    z0 = torch.clamp_min(Z0, 0)
    dec = right0 & (torch.clamp_min(Zt, 0) < z0 - 1e-12 * z0)
    return ~dec.flatten(1).any(1)


def lemma7_violations(run, a0, Wn, off, s, y, p, n):
    """Lemma 7 at the final iterate of every run, with norm(w_j)^2 from the reduction (orthogonal data; s (R, n))."""
    act = (run.Z > 0).to(DTYPE)
    nw = ((run.Z / s[:, None, :]) ** 2).sum(-1) + off
    up = 2 / n * s.amax(-1) ** 2 * (((run.a ** 2 + nw)[:, :, None] * act).sum(1) / p).amax(-1)
    lo = 2 / n * s.amin(-1) ** 2 * (((run.a ** 2)[:, :, None] * act).sum(1) / p).amin(-1)
    idx = torch.arange(run.a.shape[0])
    mu = run.mu[idx, run.stopped_at]
    return ((mu > up * (1 + 1e-9)) | (mu < lo * (1 - 1e-9))).to(torch.int64)


#: Fig. 6: the log-log slope of Lemma 7's upper bound mu_upp against n (:func:`slopes`), -1/2 within 0.05
FIG6_SLOPE_UPP = C.within(-0.55, -0.45)


def lemma8_criterion(eps: float):
    """Lemma 8 holds "with probability at least 1 - epsilon on the initialization" (001:717): the lower end of the
    Wilson interval of the share of runs showing a part of the lemma, against 1 - epsilon (the chapter's ``eps``,
    the epsilon of the width rule the same runs are sized by)."""
    return C.above(1.0 - eps)


def lemma8_flags(rows) -> dict:
    """Per run, over ``rows`` (:func:`run_n`'s results): ``before_tn``, every wrongly signed pair extinct by
    t_n ((47), second line); ``monotone``, no correctly signed pre-activation decreased before T_ext ((47),
    first line, read along the path: the lemma states it at t_n only); ``grows_tn``, (47)'s first line at Lemma 8's t_n,
    or at the run's last step where t_n lies beyond it (:func:`lemma8_first_line`); ``short``, extinction before half
    the fitting time t_fit (a run never extinct fails all but ``monotone`` and ``grows_tn``)."""
    ext = torch.cat([~r["never_extinct"] for r in rows])
    t_ext = torch.cat([r["t_ext"].to(DTYPE) for r in rows])
    before = ext & (t_ext <= torch.cat([r["t_l8"] for r in rows]))
    short = ext & (t_ext < 0.5 * torch.cat([r["t_fit"] for r in rows]))
    return dict(before_tn=before, monotone=torch.cat([r["mono"] == 0 for r in rows]),
                grows_tn=torch.cat([r["grows_tn"] for r in rows]), short=short)


def lemma8_share(flags, level: float = 0.95):
    """The lower end of the share's Wilson interval (a :class:`~shallowflow.engine.metrics.ShareEnd`, which knows
    its run count) and its description."""
    s = metrics.share_interval(flags, level)
    return metrics.ShareEnd(s["low"], s["n"], level, "low"), metrics.describe_share(flags, level)


MEASURES = ("mu_last", "mu_avg", "mu_low", "mu_upp", "mu_spec")


def slopes(rows, boot, seed=0, level=0.95):
    """Log-log slope of each measure against n (every run a point), with bootstrap intervals at ``level``."""
    x = np.concatenate([[r["n"]] * len(r["seeds"]) for r in rows]).astype(float)
    out = {}
    for m in MEASURES:
        v = np.concatenate([r[m].numpy() for r in rows])
        good = np.isfinite(v) & (v > 0)
        out[m] = T.loglog_slope(x[good], v[good], boot=boot, seed=seed, level=level) + (int((~good).sum()),)
    return out


def level_slope(rows, level, lr, boot=0, interval=0.95):
    """Stopping-level dependence: <mu> = log(L0/L(t_level)) / t_level at the first step with L/L0 <= level, for
    every run that reaches it, and its log-log slope against n.  Returns (slope, interval, reached, total)."""
    xs, vs, total = [], [], 0
    for r in rows:
        L = r["loss"]
        hit = L / L[:, :1] <= level
        total += L.shape[0]
        for i in range(L.shape[0]):
            k = int(torch.nonzero(hit[i])[0]) if bool(hit[i].any()) else -1
            if k > 0:
                xs.append(r["n"])
                vs.append(float(torch.log(L[i, 0] / L[i, k])) / (k * lr))
    if len(set(xs)) < 2:
        return math.nan, (math.nan, math.nan), len(xs), total
    sl, ci = T.loglog_slope(np.array(xs, float), np.array(vs), boot=boot, level=interval)
    return sl, ci, len(xs), total


def _runs(P, protocol, ns, label):
    """:func:`run_n` at every n; with ``P.resume`` each n is one chunk of :func:`shallowflow.engine.checkpoint.resumable`
    under every parameter of the run (an interrupted run resumes at the n it had not finished)."""
    if not getattr(P, "resume", False):
        return [run_n(n, P, protocol) for n in progress.each(ns, label, unit="n")]
    key = {k: v for k, v in sorted(vars(P).items()) if k not in ("profile", "resume")}
    return checkpoint.resumable("weakly-interacting/local-pl", key, [(protocol, int(n)) for n in ns],
                                lambda c: run_n(c[1], P, c[0]))


def run_local_pl(P):
    """Experiment 2 / Fig 6: the local-PL curvature against n under the stated and the authors' final
    protocol, with bootstrapped log-log slopes (all n, the paper's n range)."""
    stated = _runs(P, "stated", P.ns, "Fig 6, stated protocol")
    final = _runs(P, "final", P.final_ns, "Fig 6, final protocol")
    paper = [r for r in stated if 1000 <= r["n"] <= 2000]
    if len(paper) < 2:  # reduced scales: the two largest n stand in for the paper's range
        paper = sorted(stated, key=lambda r: r["n"])[-2:]
    lv = P.level
    return dict(stated=stated, final=final, slopes=slopes(stated, P.boot, level=lv), slopes_final=slopes(final, P.boot, level=lv),
                slopes_paper=slopes(paper, P.boot, level=lv), paper_ns=[r["n"] for r in paper], level=lv)


def findings(claims, res):
    ok = claims.passed
    sl = res["slopes"]
    sf = res["slopes_final"]
    sp = res["slopes_paper"]
    return "\n".join([
        f"- Stated protocol on the paper's range n = {res['paper_ns']}: slope of <mu_inf> {sp['mu_avg'][0]:.3f} "
        f"({res['level']:.0%} bootstrap {sp['mu_avg'][1][0]:.2f} to {sp['mu_avg'][1][1]:.2f}), of mu(t_inf) {sp['mu_last'][0]:.3f}, of "
        f"mu_spec {sp['mu_spec'][0]:.3f} ({'inside' if ok('Fig6/slope-avg') else 'outside'} [-0.65, -0.40] for <mu_inf>).",
        f"- Stated protocol on the whole grid: slope of <mu_inf> {sl['mu_avg'][0]:.3f} ({res['level']:.0%} bootstrap {sl['mu_avg'][1][0]:.2f} to "
        f"{sl['mu_avg'][1][1]:.2f}), of mu(t_inf) {sl['mu_last'][0]:.3f}, of mu_spec {sl['mu_spec'][0]:.3f}; "
        f"Conjecture 1's -1/2 is {'supported' if ok('Conj1/slope-spec') else 'not supported'} by the spectral estimator.",
        f"- Authors' final protocol (10x epochs, w x 0.01): slope of <mu_inf> {sf['mu_avg'][0]:.3f}, of mu(t_inf) "
        f"{sf['mu_last'][0]:.3f}, of mu_spec {sf['mu_spec'][0]:.3f}: the averaged estimator depends on the protocol, "
        f"the spectral one {'much less' if abs(sf['mu_spec'][0] - sl['mu_spec'][0]) < abs(sf['mu_avg'][0] - sl['mu_avg'][0]) else 'as much'}.",
        f"- Lemma 8: extinction {'happened before' if ok('Lemma8/before-tn') else 'was not shown to happen before'} the "
        f"lemma's t_n with probability at least 1 - eps (the Wilson lower end of the share of runs); Proposition 1's bound (64) {'held' if ok('Prop1/bound64') else 'was violated'} after extinction.",
    ])
