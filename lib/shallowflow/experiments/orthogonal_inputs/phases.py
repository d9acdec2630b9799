"""003 (orthogonal inputs), chapter `phases`: Fact 1, Lemmas 2-4 and Phase 2's logistic ODE measured on
gradient-descent trajectories of an orthonormal benchmark.

The runs are an :class:`~shallowflow.experiments.orthogonal_inputs.theory.Ensemble` trained by
:func:`shallowflow.engine.monitor.segmented_descent`; the quantities of the lemmas (u_+, u_-, alignments, norms,
||grad L||^2) are reduced per snapshot by :class:`OrthoSummaries`, and the states at the first time a
quantity crosses a threshold (the t_2 and t_3 of Lemmas 3 and 4) are captured as the crossing is seen.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch

from ... import verdicts as C
from ...engine.config import DTYPE
from ...engine.models import Params
from ...engine.monitor import Segmented, flat_snapshots, gradients, segmented_descent
from ...engine import data as datasets
from ...params import Float, Floats, Int, Ints, PROFILE, Str, Rule, STEP_BUDGET, ensemble_bytes, gd_work
from .theory import Constants, Ensemble, NET, constants, make_ensemble, phase_times, unit


class OrthoSummaries:
    """The numbers the lemmas are about, for snapshots a (S, R, m), W (S, R, m, d) of an ensemble.

    loss, grad_sq (||grad L||^2), loss_plus (the positive labels' part of L), u_plus / u_minus
    (sum of ||w_j||^2 over S_{+,1} / S_{-,1}), du_plus (the exact gradient-flow derivative of u_+ at the
    state: sum_{S+} 2 <w_j, a_j D_j>), step_sq (sum_{S+} ||dL/dw_j||^2, so that one GD step of size dt
    changes u_+ by dt * (du_plus + dt * step_sq)), cos_plus / cos_minus (min over S_{+,1} of cos(w_j, D_+), over S_{-,1}
    of cos(w_j, -D_-)), dot_plus / dot_minus (min over S_{+,1} of <w_j, D_+>, over S_{-,1} of <w_j, -D_->),
    max_norm (all neurons), max_norm_not_plus (outside S_{+,1}), max_norm_other (outside both sets),
    balance (max_j |a_j^2 - ||w_j||^2|).
    """

    def __init__(self, ens: Ensemble):
        self.ens = ens
        k = ens.k
        self.up = k.d_plus.cpu() / k.norm_plus
        self.um = -k.d_minus.cpu() / k.norm_minus
        self.X = ens.data.X.cpu()
        self.y = ens.data.y.cpu()

    def __call__(self, a: torch.Tensor, W: torch.Tensor, runs: torch.Tensor) -> dict:
        p, lead = flat_snapshots(a, W)
        S = lead[0]
        sp = self.ens.s_plus[runs].repeat(S, 1)
        sm = self.ens.s_minus[runs].repeat(S, 1)
        L, ga, gW = gradients(p, self.X, self.y)
        grad_sq = (ga ** 2).sum(1) + (gW ** 2).sum((1, 2))
        h = NET.forward(p, self.X)
        pos = (self.y > 0).to(DTYPE)
        loss_plus = ((h - self.y) ** 2 * pos).sum(1) / (2 * self.y.numel())
        nrm2 = (p.W ** 2).sum(-1)
        nrm = nrm2.sqrt()
        u_plus = (nrm2 * sp).sum(1)
        u_minus = (nrm2 * sm).sum(1)
        du_plus = (2 * (p.W * (-gW)).sum(-1) * sp).sum(1)
        step_sq = ((gW ** 2).sum(-1) * sp).sum(1)  # sum_{S+} ||grad_w L||^2: GD's extra term in (u'-u)/dt
        dp = p.W @ self.up
        dm = p.W @ self.um
        inf = torch.full_like(dp, math.inf)
        cos_p = torch.where(sp, dp / nrm, inf).amin(1)
        cos_m = torch.where(sm, dm / nrm, inf).amin(1)
        dot_p = torch.where(sp, dp * self.ens.k.norm_plus, inf).amin(1)
        dot_m = torch.where(sm, dm * self.ens.k.norm_minus, inf).amin(1)
        zero = torch.zeros_like(nrm)
        out = dict(loss=L, grad_sq=grad_sq, loss_plus=loss_plus, u_plus=u_plus, u_minus=u_minus,
                   du_plus=du_plus, step_sq=step_sq, cos_plus=cos_p, cos_minus=cos_m, dot_plus=dot_p, dot_minus=dot_m,
                   max_norm=nrm.amax(1), max_norm_not_plus=torch.where(sp, zero, nrm).amax(1),
                   max_norm_other=torch.where(sp | sm, zero, nrm).amax(1),
                   balance=(p.a ** 2 - nrm2).abs().amax(1))
        return {k: v.reshape(lead) for k, v in out.items()}


def exit_times(mon: Segmented) -> tuple[torch.Tensor, torch.Tensor]:
    """(R,) flow times of the first records with L < 0.99 L(0) and with L < 0.99 L(theta_S) (nan: never)."""
    L0 = mon.loss[:, 0]
    return mon.first_time_below(0.99 * L0), mon.first_time_below(0.99 * mon.ens.k.saddle_loss)


def slope_fits(ens: Ensemble, values: torch.Tensor) -> dict:
    """Least-squares slope of ``values`` (R,) against -ln(lambda), one fit per (seed, step size).

    Returns {"slope": (G,), "intercept": (G,), "seed": (G,), "lr": (G,)} over the G groups.
    """
    out = {"slope": [], "intercept": [], "seed": [], "lr": []}
    for lr in ens.lrs.unique().tolist():
        for seed in ens.seeds.unique().tolist():
            idx = ens.index(seed=seed, lr=lr)
            x = -torch.log(ens.lams[idx]).numpy()
            y = values[idx].numpy()
            ok = np.isfinite(y)
            if ok.sum() < 2:
                b, a = float("nan"), float("nan")
            else:
                b, a = np.polyfit(x[ok], y[ok], 1)
            out["slope"].append(b)
            out["intercept"].append(a)
            out["seed"].append(seed)
            out["lr"].append(lr)
    return {"slope": torch.tensor(out["slope"], dtype=DTYPE), "intercept": torch.tensor(out["intercept"], dtype=DTYPE),
            "seed": torch.tensor(out["seed"], dtype=torch.int64), "lr": torch.tensor(out["lr"], dtype=DTYPE)}


# the source's times drawn on the exit-time figure (003 Section 4, Fact 1: the trajectory sits at the second saddle for
# t in [-(1+3 eps)/||D_+|| ln(lambda), -(1-eps)/||D_-|| ln(lambda)]; Section 3.2: "these three phases (which last a time
# -ln(lambda)/||D_-||)"): the exits on the lines -ln(lambda)/||D_+|| and -ln(lambda)/||D_-||, formulas of the data
EXIT_SLOPE = C.below(0.03)  # F1/exit*-slope-*, F1/plateau-slope-*: |fitted slope - theory's| / theory's
F1_SADDLE_GRADIENT = C.below(1e-8)  # F1/saddle-gradient-*: ||grad L(theta_S)||
F1_SADDLE_LOSS = C.below(1e-10)  # F1/saddle-loss-*: |L(theta_S) - (n/2)||D-||^2|
F1_PLATEAU_DISTANCE = C.below(1.0, strict=False)  # F1/plateau-distance-*: max ||theta^t - theta_S|| / lambda^(eps/5)
PHASE_ORDER = C.above(1.0)  # E0/phase-order: every run (at lemma_lams) shows the schematic's order of the phases
SOURCE_EXIT_LINES = {"exit 1": "Fact 1: -ln λ / ||D+||", "exit 2": "Fact 1: -ln λ / ||D-||"}
L2_ALIGNED = C.above(0.0)  # L2/i-align-plus, L2/ii-align-minus: min cosine at t1 minus the bound 1 - 2 lambda^eps
L2_QUANTISED = C.below(1e-2)  # L2/quantisation-*: max distance of the S+,1 (S-,1) directions to D_bar+ (-D_bar-)
L2_SMALL_NORMS = C.below(1.0, strict=False)  # L2/iii-small-norms: max_j ||w_j(t1)|| / (2 c lambda^(1 - r eps))
P2_LOGISTIC = C.below(1e-2)  # P2/logistic: max relative error of du+/dt against the logistic right-hand side
P2_EARLY_RATE = C.below(1e-2)  # P2/early-rate: |d ln u+/dt at the window's start - 2||D+||| / (2||D+||)
L3_OTHERS_SMALL = C.below(1.0, strict=False)  # L3/iii-others-small: max_{j not in S+,1} ||w_j(t2)|| / (2 c lambda^eps)
L3_POSITIVE_LOSS = C.below(1.0, strict=False)  # L3/positive-loss: the positive labels' part of L at t2 / lambda^(eps/5)
L3_SHARPER_EXPONENT = C.below(0.1)  # L3/sharper-exponent: |fitted exponent of L+(t_s) in lambda - 12 eps| / (12 eps)
F1_ESCAPE_CURVATURE = C.below(0.01)  # F1/escape-curvature: |d2L/dt2 along the escape direction + ||D-||| / ||D-||
L3_T2_BOUND = C.below(1.0, strict=False)  # L3/t2-bound: t2 / ((1 + 3 eps)(-ln lambda)/||D+||)
L4_PLUS_FROZEN = C.below(1.0, strict=False)  # L4/iii-plus-frozen: max_{S+,1} ||w_j(t2) - w_j(t3)|| / lambda^(eps/15)
L4_OTHERS_SMALL = C.below(1.0, strict=False)  # L4/iv-others-small: max over neither key set of ||w_j(t3)|| / (3 c lambda^eps)
STEP_SIZE_INDEPENDENT = C.below(0.5)  # F1/step-size-independent: checks whose verdict depends on dt (StepSizes)
L4_T3_BOUND = C.below(1.0, strict=False)  # L4/t3-bound: t3 / ((1 + 3 r eps)(-ln lambda)/||D-||), runs whose bound lies inside the run
L4_DRIFT_DECREASES = C.is_true("every seed")  # L4/drift-decreases: 1 where the S+,1 drift falls as lambda does

SCHEMA = {
    "profile": PROFILE,
    "dataset": Str("the orthonormal benchmark of the lemma checks", choices=("ortho-A", "ortho-B", "ortho-C")),
    "width": Int("number of hidden neurons m", low=1, high=100_000),
    "second_dataset": Str("a second benchmark for the exit-time regression (Fact 1 (d))",
                          choices=("none", "ortho-A", "ortho-B", "ortho-C")),
    "second_width": Int("its width", low=1, high=100_000),
    "lams": Floats("initial scales lambda (w_j = lambda g_j)", low=0, low_open=True, high=1),
    "lemma_lams": Floats("the lambdas at which Lemma 2 and Fact 1 (a)-(c) are evaluated", low=0, low_open=True, high=1),
    "late_lams": Floats("the lambdas at which Lemmas 3 and 4 are evaluated", low=0, low_open=True, high=1),
    "seeds": Ints("one run per seed (and lambda and step size)", low=0, high=2 ** 63 - 1),
    "lrs": Floats("gradient-descent step sizes dt on L (one iteration is dt of flow time)", low=0, low_open=True, high=1),
    "eps": Float("the epsilon of Lemmas 2-4 and Fact 1", low=0, low_open=True, high=1),
    "every": Int("iterations of the smallest step between two recorded states", low=1, high=10_000_000),
    "segment": Int("iterations per kernel call (a multiple of every)", low=1, high=10_000_000),
    "interval_points": Int("states kept across the Fact-1 interval, per run", low=2, high=100_000),
}


@lru_cache(maxsize=None)
def _shape(name: str) -> tuple[int, int, float]:
    """(n, d, ||D_-||) of a benchmark (the horizon of :func:`.theory.phase_times` is a function of ||D_-||)."""
    data = datasets.get(name, device="cpu")
    return data.n, data.d, constants(data).norm_minus


def _steps(name: str, P) -> float:
    """GD iterations :func:`run_phases` runs on benchmark ``name``: the horizon of the smallest lambda
    (1.3 ln(1/lambda) / ||D_-|| + 60 / ||D_-||) at the smallest step, rounded up to a multiple of ``every``."""
    nm = _shape(name)[2]
    horizon = (1.3 * -math.log(min(P.lams)) + 60) / nm
    return math.ceil(horizon / min(P.lrs) / P.every) * P.every


def work_estimate(P) -> float:
    """Work units (:func:`shallowflow.params.gd_work`) of :func:`run_phases`: the lemma ensemble (lams x seeds x
    lrs runs of ``width`` neurons on ``dataset``) to its horizon, every recorded state summarised with a gradient
    and a forward pass (two steps' work every ``every`` iterations), and the second ensemble (same runs at
    ``second_width`` on ``second_dataset``) to its own horizon; every run to the end (runs that fit the data stop
    earlier: an upper estimate)."""
    R = len(P.lams) * len(P.seeds) * len(P.lrs)
    n, d, _ = _shape(P.dataset)
    steps = _steps(P.dataset, P)
    units = gd_work(R, P.width, n, d, steps * (1 + 2 / P.every))
    if P.second_dataset != "none":
        n2, d2, _ = _shape(P.second_dataset)
        units += gd_work(R, P.second_width, n2, d2, _steps(P.second_dataset, P))
    return units


RULES = (Rule(("lemma_lams", "lams"), lambda P: set(P.lemma_lams) <= set(P.lams),
              "every lambda of lemma_lams must be one of lams (its runs are the lemma runs)"),
         Rule(("late_lams", "lams"), lambda P: set(P.late_lams) <= set(P.lams),
              "every lambda of late_lams must be one of lams"),
         Rule.budget(("lams", "lrs"), lambda P: math.log(1 / min(P.lams)) / min(P.lrs), STEP_BUDGET,
                     what="the escape time ln(1/lambda) at the smallest step (a lower estimate)"),
         Rule.at_most("every", "segment", "the states are recorded within a kernel call (every <= segment)"),
         Rule.memory(("interval_points", "width", "lams", "seeds", "lrs"),
                     lambda P: ensemble_bytes(len(P.lams) * len(P.seeds) * len(P.lrs), P.width, 8,
                                              P.segment / P.every + 2 * (P.interval_points + 1)),
                     what="the states of one segment and those kept across the Fact-1 interval"),
         Rule.work(("dataset", "width", "second_dataset", "second_width", "lams", "seeds", "lrs", "every"), work_estimate,
                   what="the lemma and exit-time ensembles (runs x width x horizon / lr)"))


@dataclass
class PhasesRun:
    ens: Ensemble
    mon: Segmented
    second: Ensemble | None
    second_mon: Segmented | None
    eps: float
    lemma_lams: list
    late_lams: list
    times: dict  # phase_times of every run of ens
    interval_iters: torch.Tensor  # (R, Q) iterations across the Fact-1 interval (-1 none)
    t1_iter: torch.Tensor  # (R,)
    seconds: float = 0.0


def run_phases(P) -> PhasesRun:
    """Train the lemma ensemble (and the second exit-time ensemble) with everything the checks need."""
    t0 = time.perf_counter()
    ens = make_ensemble(P.dataset, P.width, P.lams, P.seeds, P.lrs)
    k = ens.k
    T = phase_times(k, ens.lams, P.eps)
    dt_min = float(ens.lrs.min())
    every = {float(lr): P.every for lr in ens.lrs.unique().tolist()}
    # run until every run has left the second saddle and fitted the negative labels
    horizon = float(T["horizon"].max())
    steps = int(math.ceil(horizon / dt_min / P.every)) * P.every
    segment = max(P.every, (P.segment // P.every) * P.every)
    lemma = torch.zeros(ens.runs, dtype=torch.bool)
    for lam in P.lemma_lams:
        lemma[ens.index(lam=lam)] = True
    t1_iter = torch.where(lemma, ens.iteration_at(T["t1"]), torch.full((ens.runs,), -1, dtype=torch.int64))
    q = torch.linspace(0, 1, P.interval_points, dtype=DTYPE)
    t_int = T["fact1_start"][:, None] + q[None, :] * (T["fact1_end"] - T["fact1_start"])[:, None]
    interval_iters = torch.where(lemma[:, None], torch.round(t_int / ens.lrs[:, None]).to(torch.int64),
                                 torch.full_like(t_int, -1, dtype=torch.int64))
    capture = torch.cat([t1_iter[:, None], interval_iters], 1)
    lam = ens.lams
    watch = {"t2": ("u_plus", ens.data.n * k.norm_plus - lam ** (P.eps / 5)),
             "t3": ("u_minus", ens.data.n * k.norm_minus - lam ** (P.eps / 20))}
    mon = segmented_descent(ens, steps, P.every, segment, summarise=OrthoSummaries(ens), capture=capture,
                            watch=watch, stop_below=1e-10 * k.saddle_loss)
    second = second_mon = None
    if P.second_dataset != "none":
        second = make_ensemble(P.second_dataset, P.second_width, P.lams, P.seeds, P.lrs)
        T2 = phase_times(second.k, second.lams, P.eps)
        steps2 = int(math.ceil(float(T2["horizon"].max()) / dt_min / P.every)) * P.every
        second_mon = segmented_descent(second, steps2, P.every, segment, stop_below=1e-10 * second.k.saddle_loss)
    return PhasesRun(ens, mon, second, second_mon, P.eps, list(P.lemma_lams), list(P.late_lams), T,
                     interval_iters, t1_iter, time.perf_counter() - t0)


def timeline(run: PhasesRun) -> dict:
    """Figure 1 (E0) with numbers: per run, the phase boundaries of Section 4.2 in units of -ln(lambda),
    t1 = eps/||D-|| (end of the alignment), t2 = (1 + 3 eps)/||D+|| (Lemma 3: positive labels fitted),
    t3 = (1 + 3 eps r)/||D-|| (Lemma 4: negative labels fitted), and the measured saddle exits (first
    records below 0.99 L(0) and 0.99 L(theta_S)).  ``ordered``: t1 <= exit1 <= t2 <= exit2 <= t3, the order
    in which the schematic places them."""
    T, lam = run.times, run.ens.lams
    unit = -torch.log(lam)
    e1, e2 = exit_times(run.mon)
    out = dict(lam=lam, lr=run.ens.lrs, t1=T["t1"] / unit, t2=T["t2_bound"] / unit, t3=T["t3_bound"] / unit,
               exit1=e1 / unit, exit2=e2 / unit)
    out["ordered"] = ((out["t1"] <= out["exit1"]) & (out["exit1"] <= out["t2"]) & (out["t2"] <= out["exit2"])
                      & (out["exit2"] <= out["t3"]))
    return out


def _tensors(cols: dict) -> dict:
    """Columns of Python numbers as tensors: int64 for integer columns, float64 otherwise."""
    return {x: torch.tensor(v, dtype=torch.int64 if v and all(isinstance(e, int) for e in v) else DTYPE)
            for x, v in cols.items()}


def _rows(run: PhasesRun, lams) -> list[int]:
    return [i for lam in lams for i in run.ens.index(lam=lam)]


def lemma2(run: PhasesRun) -> dict:
    """Lemma 2 at t_1 = -eps ln(lambda) / ||D_-|| for the runs at ``lemma_lams`` (one entry per run).

    cos_plus: min_{S+} <w_bar_j, D_+> / ||D_+||;  cos_minus: min_{S-} <w_bar_j, -D_-> / ||D_-||;
    bound_cos = 1 - 2 lambda^eps;  max_norm: max_j ||w_j||;  bound_norm = 2 c lambda^(1 - r eps);
    quant_plus / quant_minus: max over S+ (S-) of ||w_bar_j - D_bar_+|| (||w_bar_j + D_bar_-||).
    """
    ens, mon, eps, k = run.ens, run.mon, run.eps, run.ens.k
    up, um = unit(k.d_plus.cpu()), unit(-k.d_minus.cpu())
    out = {x: [] for x in ("run", "lam", "lr", "seed", "t1", "cos_plus", "cos_minus", "bound_cos", "max_norm",
                           "bound_norm", "quant_plus", "quant_minus")}
    for i in _rows(run, run.lemma_lams):
        lam = float(ens.lams[i])
        W = mon.state(i, int(run.t1_iter[i])).W[0]
        nr = W.norm(dim=-1)
        wb = W / nr[:, None]
        sp, sm = ens.s_plus[i], ens.s_minus[i]
        out["run"].append(i)
        out["lam"].append(lam)
        out["lr"].append(float(ens.lrs[i]))
        out["seed"].append(int(ens.seeds[i]))
        out["t1"].append(float(run.t1_iter[i]) * float(ens.lrs[i]))
        out["cos_plus"].append(float((wb[sp] @ up).min()))
        out["cos_minus"].append(float((wb[sm] @ um).min()))
        out["bound_cos"].append(1 - 2 * lam ** eps)
        out["max_norm"].append(float(nr.max()))
        out["bound_norm"].append(2 * float(ens.c[i]) * lam ** (1 - k.r * eps))
        out["quant_plus"].append(float((wb[sp] - up).norm(dim=1).max()))
        out["quant_minus"].append(float((wb[sm] - um).norm(dim=1).max()))
    return _tensors(out)


def lemma3(run: PhasesRun) -> dict:
    """Lemma 3 at t_2, the first recorded time with u_+ >= n||D_+|| - lambda^(eps/5), for ``late_lams``.

    t2 and its bound (1 + 3 eps)(-ln lambda)/||D_+||; bar_plus (min_{S+} <w_bar_j, D_+>, the reading with
    w_bar) and printed_plus (min_{S+} <w_j, D_+>, the formula as printed) against bound_i = ||D_+|| -
    lambda^(eps/5); u_plus at t2 and target = n||D_+|| - lambda^(eps/5); max_other = max_{j not in S+} ||w_j||
    against bound_iii = 2 c lambda^eps; loss_plus, the positive labels' part of L at t2, against
    lambda^(eps/5) (the paper: "the loss is of order lambda^(eps/5) on the positive labels at time t_2").
    """
    ens, mon, eps, k = run.ens, run.mon, run.eps, run.ens.k
    up = unit(k.d_plus.cpu())
    X, y = ens.data.X.cpu(), ens.data.y.cpu()
    keys = ("run", "lam", "lr", "seed", "t2", "t2_bound", "bar_plus", "printed_plus", "bound_i", "u_plus", "target",
            "max_other", "bound_iii", "loss_plus")
    out = {x: [] for x in keys}
    for i in _rows(run, run.late_lams):
        lam = float(ens.lams[i])
        it = int(mon.crossings["t2"][i])
        if it < 0:
            raise RuntimeError(f"run {i} (lambda {lam:g}) never reached the Lemma-3 level: train longer")
        p = mon.crossing_states["t2"][i]
        W = p.W[0]
        nr = W.norm(dim=-1)
        sp = ens.s_plus[i]
        h = NET.forward(p, X)[0]
        out["run"].append(i)
        out["lam"].append(lam)
        out["lr"].append(float(ens.lrs[i]))
        out["seed"].append(int(ens.seeds[i]))
        out["t2"].append(it * float(ens.lrs[i]))
        out["t2_bound"].append(float(run.times["t2_bound"][i]))
        out["bar_plus"].append(float(((W[sp] / nr[sp, None]) @ up).min()) * k.norm_plus)
        out["printed_plus"].append(float((W[sp] @ up).min()) * k.norm_plus)
        out["bound_i"].append(k.norm_plus - lam ** (eps / 5))
        out["u_plus"].append(float((nr[sp] ** 2).sum()))
        out["target"].append(ens.data.n * k.norm_plus - lam ** (eps / 5))
        out["max_other"].append(float(nr[~sp].max()))
        out["bound_iii"].append(2 * float(ens.c[i]) * lam ** eps)
        out["loss_plus"].append(float(((h - y) ** 2 * (y > 0)).sum() / (2 * ens.data.n)))
    return _tensors(out)


def lemma4(run: PhasesRun) -> dict:
    """Lemma 4 at t_3, the first recorded time with u_- >= n||D_-|| - lambda^(eps/20), for ``late_lams``.

    t3 and its bound (1 + 3 r eps)(-ln lambda)/||D_-||; bar_minus (min_{S-} <w_bar_j, -D_->) and
    printed_minus (min_{S-} <w_j, -D_->) against bound_i = ||D_-|| - lambda^(eps/14); u_minus and
    target = n||D_-|| - lambda^(eps/20); drift_plus = max_{S+} ||w_j^{t_2} - w_j^{t_3}|| against
    bound_iii = lambda^(eps/15); max_other = max over neither set of ||w_j|| against bound_iv = 3 c lambda^eps;
    t_end, the run's last recorded flow time (iterations x step): where t3's bound lies beyond it, a t3 above the
    bound is never seen (the crossing would come after the run), so L4/t3-bound reads only runs with
    t3_bound <= t_end (:func:`t3_bound_inside`).
    """
    ens, mon, eps, k = run.ens, run.mon, run.eps, run.ens.k
    um = unit(-k.d_minus.cpu())
    keys = ("run", "lam", "lr", "seed", "t3", "t3_bound", "t_end", "bar_minus", "printed_minus", "bound_i", "u_minus",
            "target", "drift_plus", "bound_iii", "max_other", "bound_iv")
    out = {x: [] for x in keys}
    for i in _rows(run, run.late_lams):
        lam = float(ens.lams[i])
        it = int(mon.crossings["t3"][i])
        if it < 0:
            raise RuntimeError(f"run {i} (lambda {lam:g}) never reached the Lemma-4 level: train longer")
        W3 = mon.crossing_states["t3"][i].W[0]
        W2 = mon.crossing_states["t2"][i].W[0]
        nr = W3.norm(dim=-1)
        sp, sm = ens.s_plus[i], ens.s_minus[i]
        out["run"].append(i)
        out["lam"].append(lam)
        out["lr"].append(float(ens.lrs[i]))
        out["seed"].append(int(ens.seeds[i]))
        out["t3"].append(it * float(ens.lrs[i]))
        out["t3_bound"].append(float(run.times["t3_bound"][i]))
        out["t_end"].append(mon.steps * float(ens.lrs[i]))
        out["bar_minus"].append(float(((W3[sm] / nr[sm, None]) @ um).min()) * k.norm_minus)
        out["printed_minus"].append(float((W3[sm] @ um).min()) * k.norm_minus)
        out["bound_i"].append(k.norm_minus - lam ** (eps / 14))
        out["u_minus"].append(float((nr[sm] ** 2).sum()))
        out["target"].append(ens.data.n * k.norm_minus - lam ** (eps / 20))
        out["drift_plus"].append(float((W3[sp] - W2[sp]).norm(dim=1).max()))
        out["bound_iii"].append(lam ** (eps / 15))
        out["max_other"].append(float(nr[~(sp | sm)].max()))
        out["bound_iv"].append(3 * float(ens.c[i]) * lam ** eps)
    return _tensors(out)


def t3_bound_inside(l4: dict) -> torch.Tensor:
    """L4/t3-bound's runs: t3's bound (1 + 3 r eps)(-ln lambda)/||D_-|| at most the run's last recorded time, where a
    t3 above the bound would be seen (beyond the run it could only pass). Boolean, one per row of :func:`lemma4`."""
    return l4["t3_bound"] <= l4["t_end"]


def drift_decreases(l4: dict, lrs, seeds) -> list[tuple[float, float]]:
    """L4/drift-decreases, per step size and seed (in that order): (lr, 1.0) where lemma4's S+,1 drift
    ``drift_plus`` strictly decreases as lambda decreases, (lr, 0.0) where it does not, (lr, nan) with one lambda."""
    dec = []
    for lr in lrs:
        for seed in seeds:
            sel = (l4["lr"] == lr) & (l4["seed"] == seed)
            order = torch.argsort(l4["lam"][sel], descending=True)
            d = l4["drift_plus"][sel][order]
            dec.append((lr, float(bool((d[1:] < d[:-1]).all())) if d.numel() > 1 else float("nan")))
    return dec


def saddle_point(ens: Ensemble, run: int, p: Params) -> Params:
    """theta_S built from a state: the S_{+,1} neurons kept, every other neuron set to 0 (Fact 1, [derived])."""
    sp = ens.s_plus[run]
    return Params(torch.where(sp, p.a[0], torch.zeros_like(p.a[0]))[None],
                  torch.where(sp[:, None], p.W[0], torch.zeros_like(p.W[0]))[None])


def escape_curvature(ens: Ensemble, run: int, theta_s: Params, h: float = 1e-3) -> float:
    """Forward second difference of L along a new neuron (a, w) = t (-1, -D_bar_-)/sqrt(2) at theta_S.

    The neuron used is the first one outside S_{+,1} (it is 0 in theta_S).  L(t) = L_S - ||D_-|| t^2/2
    + t^4/(8n) for t >= 0 [derived], so (L(2h) - 2L(h) + L(0))/h^2 = -||D_-|| + 1.75 h^2/n.
    """
    k = ens.k
    j = int(torch.nonzero(~ens.s_plus[run])[0])
    um = unit(-k.d_minus.cpu())
    X, y = ens.data.X.cpu(), ens.data.y.cpu()

    def L(t):
        a, W = theta_s.a.clone(), theta_s.W.clone()
        a[0, j] = -t / math.sqrt(2)
        W[0, j] = t * um / math.sqrt(2)
        return float(NET.loss(Params(a, W), X, y, "half")[0])

    return (L(2 * h) - 2 * L(h) + L(0.0)) / h ** 2


def fact1(run: PhasesRun) -> dict:
    """Fact 1 for the runs at ``lemma_lams``: theta_S from the state at the middle of the Fact-1 interval.

    grad_norm = ||grad L(theta_S)||; loss_gap = |L(theta_S) - (n/2)||D_-||^2|; curvature (see
    :func:`escape_curvature`); max_dist = max over the interval's recorded states of ||theta^t - theta_S||
    against bound = lambda^(eps/5); dists (Q,) per run for the figure.
    """
    ens, mon, eps, k = run.ens, run.mon, run.eps, run.ens.k
    X, y = ens.data.X.cpu(), ens.data.y.cpu()
    keys = ("run", "lam", "lr", "seed", "grad_norm", "loss_gap", "curvature", "max_dist", "bound")
    out = {x: [] for x in keys}
    dists = []
    for i in _rows(run, run.lemma_lams):
        lam = float(ens.lams[i])
        Q = run.interval_iters[i].tolist()
        th = saddle_point(ens, i, mon.state(i, Q[len(Q) // 2]))
        L, ga, gW = gradients(th, X, y)
        d = torch.tensor([float(((mon.state(i, q).a - th.a) ** 2).sum() + ((mon.state(i, q).W - th.W) ** 2).sum())
                          for q in Q]).sqrt()
        out["run"].append(i)
        out["lam"].append(lam)
        out["lr"].append(float(ens.lrs[i]))
        out["seed"].append(int(ens.seeds[i]))
        out["grad_norm"].append(float(((ga ** 2).sum() + (gW ** 2).sum()).sqrt()))
        out["loss_gap"].append(abs(float(L[0]) - ens.data.n / 2 * k.norm_minus ** 2))
        out["curvature"].append(escape_curvature(ens, i, th))
        out["max_dist"].append(float(d.max()))
        out["bound"].append(lam ** (eps / 5))
        dists.append(d)
    res = _tensors(out)
    res["dists"] = torch.stack(dists) if dists else torch.empty(0)
    return res


def logistic(run: PhasesRun, lams=None) -> dict:
    """Phase 2's ODE du_+/dt = 2||D_+||(1 - u_+/(n||D_+||)) u_+ on the window 1e-6 < u_+ < 0.99 n||D_+||.

    Per run: max_rel (max relative error of the exact gradient-flow derivative of u_+ at the recorded
    states against the right-hand side), max_rel_gd (the same for GD's one-step difference (u_+' - u_+)/dt
    = du_+/dt + dt sum_{S+} ||dL/dw_j||^2), early_rate ((du_+/dt)/u_+ at the first state in the window,
    against 2||D_+||), window (start and end time).
    """
    ens, mon, k = run.ens, run.mon, run.ens.k
    S, ts = mon.summaries, mon.summary_time()
    n = ens.data.n
    rows = _rows(run, lams) if lams is not None else list(range(ens.runs))
    keys = ("run", "lam", "lr", "seed", "max_rel", "max_rel_gd", "early_rate", "t_start", "t_end", "points")
    out = {x: [] for x in keys}
    for i in rows:
        u, du = S["u_plus"][i], S["du_plus"][i]
        du_gd = du + ens.lrs[i] * S["step_sq"][i]
        rhs = 2 * k.norm_plus * (1 - u / (n * k.norm_plus)) * u
        w = (u > 1e-6) & (u < 0.99 * n * k.norm_plus)
        if int(w.sum()) < 3:
            raise RuntimeError(f"run {i}: fewer than 3 recorded states in the Phase-2 window; lower 'every'")
        first = int(torch.nonzero(w)[0])
        out["run"].append(i)
        out["lam"].append(float(ens.lams[i]))
        out["lr"].append(float(ens.lrs[i]))
        out["seed"].append(int(ens.seeds[i]))
        out["max_rel"].append(float(((du - rhs).abs() / rhs)[w].max()))
        out["max_rel_gd"].append(float(((du_gd - rhs).abs() / rhs)[w].max()))
        out["early_rate"].append(float(du[first] / u[first]))
        out["t_start"].append(float(ts[i][w].min()))
        out["t_end"].append(float(ts[i][w].max()))
        out["points"].append(int(w.sum()))
    return _tensors(out)


def positive_loss_at(run: PhasesRun, times: torch.Tensor) -> torch.Tensor:
    """(R,) the positive labels' part of L at the recorded state nearest to each run's time."""
    ts = run.mon.summary_time()
    idx = (ts - times[:, None]).abs().argmin(1)
    return run.mon.summaries["loss_plus"].gather(1, idx[:, None])[:, 0]


def positive_loss_exponents(ens: Ensemble, values: torch.Tensor, lrs, seeds, floor: float = 1e-24) -> tuple:
    """L3/sharper-exponent: per (step size, seed) with at least two runs whose ``values`` (the positive labels' loss
    at a time, :func:`positive_loss_at`) are above ``floor`` (float64's rounding floor is near 1e-29), the slope of
    ln(values) against ln(lambda).  Returns (exponents, their step sizes), float64 tensors."""
    usable = values > floor
    expo = []
    for lr in lrs:
        for seed in seeds:
            idx = [i for i in ens.index(seed=seed, lr=lr) if bool(usable[i])]
            if len(idx) >= 2:
                expo.append((lr, float(np.polyfit(np.log(ens.lams[idx].numpy()), np.log(values[idx].numpy()), 1)[0])))
    return (torch.tensor([e for _, e in expo], dtype=torch.float64),
            torch.tensor([l for l, _ in expo], dtype=torch.float64))


def binding_lambdas(k: Constants, eps: float) -> dict:
    """For each lower bound that can be vacuous, log10 of the lambda below which it says something.

    L2 (i)/(ii): 1 - 2 lambda^eps > 0.  L3 (i) (w_bar reading): ||D_+|| - lambda^(eps/5) > 0.
    L3 (ii): n||D_+|| - lambda^(eps/5) > 0.  L4 (i) (w_bar reading): ||D_-|| - lambda^(eps/14) > 0.
    L4 (ii): n||D_-|| - lambda^(eps/20) > 0.  (A quantity q < 1 gives lambda < q^(1/exponent); q >= 1
    gives every lambda < 1, log10 = 0.)  Also whether Fact 1's interval is non-empty: eps < (r-1)/(r+3).
    """
    def below(q, expo):
        return math.log10(q) / expo if q < 1 else 0.0

    n = k.n
    return dict(L2_i_ii=below(0.5, eps), L3_i=below(k.norm_plus, eps / 5), L3_ii=below(n * k.norm_plus, eps / 5),
                L4_i=below(k.norm_minus, eps / 14), L4_ii=below(n * k.norm_minus, eps / 20),
                fact1_interval_nonempty=float(eps < (k.r - 1) / (k.r + 3)))


def worst_case_frame(table: dict, columns: dict, by=("lam", "lr")):
    """A pandas DataFrame: one row per (lambda, step size), the worst value over seeds of each column.

    columns: {name: "min" | "max" | "first"} (the worst case of a lower-bounded quantity is its min).
    """
    import pandas as pd

    df = pd.DataFrame({k: v.numpy() for k, v in table.items() if k in set(columns) | set(by) and v.ndim == 1})
    out = df.groupby(list(by), sort=False).agg(columns).reset_index()
    return out.sort_values(list(by), ascending=[False] * len(by)).reset_index(drop=True)
