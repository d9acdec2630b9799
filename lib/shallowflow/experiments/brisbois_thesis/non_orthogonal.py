"""000, Section 3.3 and App. C.3: the non-orthogonal Dataset 1.3.3 (xbar = -2..2, alternate labels), Figs 3.27-3.29
and C.30-C.35: model complexity against lambda, the ReLU run of Fig 3.28 over seeds (it does not converge
reliably at lambda = 1e-6), the Tanh run of Fig 3.29 and the loss curves / interpolators over lambda.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ...engine import data as D
from ...engine import init, metrics, train
from ... import verdicts as C
from ...engine.data import augment_bias
from ...engine.models import Network, Params
from ...params import PROFILE, Float, Floats, Int, Ints, Rule, gd_bytes, gd_work
from . import measures

ACTS = ("relu", "sigmoid", "tanh")

SCHEMA = {
    "profile": PROFILE,
    "width": Int("m", low=2, high=5000),
    "lr": Float("step size alpha (MSE loss)", low=0, low_open=True, high=0.1),
    "steps": Int("epochs (at most; a run stops once L < stop_below)", low=1000, high=10**8),
    "stop_below": Float("a run stops when its loss falls below this", low=0, low_open=True, high=1e-3),
    "goal": Float("converged: final L below this (the thesis's accuracy goal for n = 5)", low=0, low_open=True, high=0.1),
    "scales": Floats("lambda grid of the complexity sweep and of Figs C.30-C.35", low=0, low_open=True, min_len=3),
    "grid_seeds": Ints("seeds of the lambda grid", low=0),
    "fig28_scales": Floats("lambda of Fig 3.28's seed study (ReLU)", low=0, low_open=True, high=100),
    "fig28_seeds": Ints("seeds of Fig 3.28's study", low=0),
    "fig29_scale": Float("lambda of Fig 3.29 (Tanh)", low=0, low_open=True, high=100),
    "record_every": Int("loss recorded every this many epochs", low=1),
}
RULES = (
    Rule(("stop_below", "goal"), lambda P: P.stop_below < P.goal, "runs must be allowed to go below the goal"),
    Rule(("record_every", "steps"), lambda P: P.steps // P.record_every >= 100, "record the loss at least 100 times"),
    Rule(("fig29_scale", "scales"), lambda P: P.fig29_scale in P.scales, "Fig 3.29's lambda must be on the grid"),
)


def _nonorth_runs(P) -> int:
    return 3 * len(P.scales) * len(P.grid_seeds) + len(P.fig28_scales) * len(P.fig28_seeds)


def memory_estimate(P) -> float:
    """Every ensemble (Dataset 1.3.3: n = 5, d = 2) with the loss recorded every record_every epochs."""
    return gd_bytes(_nonorth_runs(P), P.width, 5, 2, P.steps, P.record_every, 2)


def work_estimate(P) -> float:
    return 3 * gd_work(len(P.scales) * len(P.grid_seeds), P.width, 5, 2, P.steps) + \
        gd_work(len(P.fig28_scales) * len(P.fig28_seeds), P.width, 5, 2, P.steps)


NAMES = ("width", "steps", "scales", "grid_seeds", "fig28_scales", "fig28_seeds", "record_every")
RULES = RULES + (Rule.memory(NAMES, memory_estimate, what="the ensembles and their recorded losses"),
                 Rule.work(NAMES, work_estimate, what="the runs"))

RICH, LAZY = 1e-2, 1.0  # the thesis's regimes: lambda <= 1e-2 rich, lambda >= 1 lazy
# the lambda values of the thesis's figures (those on the chapter's grid are used)
FIG_SCALES = {"relu": (10, 2.5, 2, 1, 0.75, 0.5, 0.25, 0.1, 1e-2, 1e-6), "sigmoid": (2, 1, 0.5, 1e-6),
              "tanh": (2.5, 0.5, 0.25, 0.1)}


@dataclass
class Ensemble:
    activation: str
    scales: list
    seeds: list
    traj: train.Trajectory
    initial_norm: torch.Tensor  # ||theta^0|| per run


def _train(act, scales, seeds, P, ds) -> Ensemble:
    sc = [s for s in scales for _ in seeds]
    sd = [d for _ in scales for d in seeds]
    p = init.balanced(sd, P.width, 2, sc)
    n0 = metrics.squared_norm(p).sqrt().cpu()
    tr = train.gradient_descent(p, ds, Network(act), steps=P.steps, lr=P.lr, loss="mean", snapshots=[0, P.steps],
                                record_every=P.record_every, stop_below=P.stop_below, on_nonfinite="stop")
    return Ensemble(act, sc, sd, tr, n0)


def run_nonorthogonal(P) -> dict:
    """The lambda grid for the three activations (grid seeds) and Fig 3.28's ReLU seed study, on Dataset 1.3.3,
    MSE loss, balanced init; a run stops once L < stop_below (its parameters are then final), a run whose
    loss stops being finite is frozen and flagged."""
    ds = D.brisbois_nonorthogonal("1.3.3")
    grid = {act: _train(act, P.scales, P.grid_seeds, P, ds) for act in ACTS}
    fig28 = _train("relu", P.fig28_scales, P.fig28_seeds, P, ds)
    return dict(data=ds, grid=grid, fig28=fig28)


def paper_cost(P, paper: dict, sample: int = 200) -> dict:
    """What a run at ``paper``'s values (the paper profile: "millions" of epochs, its seeds) would cost with this
    book's kernel on this machine: each training call (the three activations' lambda grids, Fig 3.28's study) timed
    over ``sample`` epochs, its per-epoch time multiplied by the paper's epoch budget (an upper bound: runs stop once
    converged).  Seconds per part and in all."""
    import time
    from types import SimpleNamespace

    ds = D.brisbois_nonorthogonal("1.3.3")
    Q = SimpleNamespace(**{**paper, "steps": sample, "stop_below": 0.0, "record_every": sample})

    def per_epoch(act, scales, seeds) -> float:
        t0 = time.perf_counter()
        _train(act, scales, seeds, Q, ds)
        return (time.perf_counter() - t0) / sample

    out = {act: per_epoch(act, paper["scales"], paper["grid_seeds"]) * paper["steps"] for act in ACTS}
    out["fig28"] = per_epoch("relu", paper["fig28_scales"], paper["fig28_seeds"]) * paper["steps"]
    out["total"] = sum(out.values())
    return out


def per_scale(values, scales, runs) -> list[float]:
    """The median of ``values`` over the given runs at each of their scales, from the largest lambda to the smallest.

    Trends "as lambda decreases" compare consecutive scales, never two seeds of one scale (with several grid seeds a
    ratio of consecutive runs would otherwise measure the spread between seeds)."""
    by: dict = {}
    for i in runs:
        by.setdefault(float(scales[i]), []).append(float(values[i]))
    return [float(np.median(by[k])) for k in sorted(by, reverse=True)]


def summary(e: Ensemble, data, goal: float) -> dict:
    """Per run: validity, convergence (final L < goal), final norm, norm ratio to the initial one, plateau count
    (thesis detector, T = epochs to L < 0.01), kinks of h in [-2, 2] (ReLU), total variation of h' on [-2, 2],
    sup distance to the piecewise-linear interpolant of the data, h at the data."""
    tr = e.traj
    L = tr.loss
    valid = measures.finite_runs(L, tr.final)
    last = L[:, -1]
    conv = valid & (last < goal)
    norm = metrics.squared_norm(tr.final).sqrt()
    T = measures.epochs_to(L, tr.loss_steps, 0.01)
    pl = measures.thesis_plateaus(L.nan_to_num(1.0), tr.loss_steps, T)["count"]
    net = Network(e.activation)
    x = torch.linspace(-2, 2, 2001, dtype=torch.float64)
    fin = Params(tr.final.a.nan_to_num(0.0), tr.final.W.nan_to_num(0.0))
    h = net.forward(fin, augment_bias(x))  # (R, G)
    dx = float(x[1] - x[0])
    dh = torch.diff(h, dim=1) / dx
    tv = torch.diff(dh, dim=1).abs().sum(1)
    pl_interp = measures.piecewise_linear(data.x1d.cpu(), data.y.cpu(), x)
    sup = (h - pl_interp).abs().amax(1)
    kinks = metrics.kinks_of_function(fin, (-2.0, 2.0), min_jump=1e-2, merge_tol=0.05) if e.activation == "relu" else None
    hx = net.forward(fin, data.X.cpu())
    return dict(valid=valid, converged=conv, last=last, norm=norm, ratio=norm / e.initial_norm, plateaus=pl,
                T=T, tv=tv, sup=sup, kinks=kinks, h_data=hx, stopped=tr.stopped_at, grid_h=h, x=x)


#: Figs 3.28 / C.30-C.34: the fraction of runs that reach the loss goal (:func:`summary`'s ``converged``) is one;
#: C.31: at the smallest converged lambda, at most n = 5 kinks of h in [-2, 2] (Dataset 1.3.3 has five points)
#: Fig. 3.27: "gradient vanishing often occurs" for very small lambda: the share of rich runs (lambda <= RICH, every
#: activation) not converged within the budget (:func:`unconverged_share`), above 0
VANISHING = C.above(0.0, strict=True)


def unconverged_share(converged: dict, scales: dict, rich: float = RICH) -> float:
    """Fig. 3.27/vanishing's measurement: over the activations (``converged[act]``: per-run flags of :func:`summary`,
    ``scales[act]``: per-run lambda), the share of runs with lambda <= ``rich`` that did not converge."""
    return float(np.mean([not bool(converged[a][i]) for a in converged for i, lam in enumerate(scales[a]) if lam <= rich]))


ALL_CONVERGED = C.within(1, 1)
FEW_KINKS = C.below(5, strict=False)
#: C.31: "the final interpolator becomes simpler with a decreasing lambda" (000:2211), read start to end as C.33/C.35:
#: ReLU kinks at the smallest converged lambda over those at the largest (:func:`kink_ratio`), below 1
RELU_SIMPLER = C.below(1.0)


def kink_ratio(ks) -> float:
    """C.31/simpler's measurement: ``ks`` per-scale kink counts from the largest lambda to the smallest
    (:func:`per_scale`); the last over the first (nan with fewer than two scales or no kink at the largest)."""
    return float(ks[-1]) / float(ks[0]) if len(ks) >= 2 and ks[0] > 0 else float("nan")


def off_spurious(s: dict, runs, x0: int, n: int) -> int:
    """Fig. 3.28: among the runs ``runs`` of :func:`summary` ``s`` that did not converge, those NOT at the spurious
    stationary point of early alignment: final L within 1e-2 of 1/n (one point of label +-1 unfitted, h = 0 there,
    the rest fitted) with abs(h(x_x0)) < 0.05."""
    L_sp = 1.0 / n
    stuck = [i for i in runs if not bool(s["converged"][i])]
    return sum(1 for i in stuck if not (abs(float(s["last"][i]) - L_sp) < 1e-2 and abs(float(s["h_data"][i, x0])) < 0.05))


#: Fig. 3.28: every seed that does not converge sits at the spurious point (:func:`off_spurious`: none elsewhere)
AT_SPURIOUS = C.below(1)
#: Figs 3.28 / 3.29: saddle-to-saddle dynamics, at least two plateaus of the thesis's detector (:func:`summary`'s
#: ``plateaus``)
SADDLE_TO_SADDLE = C.above(2)


#: C.30 / C.32 / C.34: "the loss progressively exhibits phases of slow convergence as lambda decreases" (000:2211),
#: :func:`slower_as_lambda_falls` (1 when it holds).  The smallest ratio of consecutive epochs to L < 0.01 at least 1
#: alone ("do not decrease") passed a flat timeline, with no slow phase at any lambda (the lazy end of C.30's figure,
#: lambda in {2.5, 2, 1}: every run below 0.01 within the first 1000 epochs): a finding of the controls round
SLOWER = C.is_true()


def slowdown_ratios(Ts) -> list[float]:
    """``Ts``, epochs to L < 0.01 per lambda from the largest lambda to the smallest (:func:`per_scale`): each one's
    ratio to the one before it."""
    return [b / a for a, b in zip(Ts, Ts[1:])]


def slower_as_lambda_falls(Ts) -> float:
    """C.30 / C.32 / C.34's reading of ``Ts`` (as :func:`slowdown_ratios`): 1 when the epochs never fall from one lambda
    to the next smaller one and the smallest lambda needs more than the largest, else 0; nan with fewer than two
    lambdas (nothing to compare)."""
    if len(Ts) < 2:
        return float("nan")
    return float(min(slowdown_ratios(Ts)) >= 1.0 and Ts[-1] > Ts[0])


#: C.33 / C.35: a simpler interpolator as lambda decreases: the total variation of h' on [-2, 2] (:func:`summary`'s
#: ``tv``) at the smallest converged lambda over that at the largest (:func:`tv_ratio`) below 1
SIMPLER = C.below(1.0)


def tv_ratio(tv) -> float:
    """``tv`` per lambda from the largest to the smallest (:func:`per_scale`): the last over the first (nan with fewer
    than two lambdas)."""
    return tv[-1] / tv[0] if len(tv) >= 2 else float("nan")


def zero_loss(goal: float):
    """Fig. 3.29, C.30: the final loss below the loss goal."""
    return C.below(goal)


def breakpoint_deviation(e: Ensemble, data, rel: float = 0.05) -> torch.Tensor:
    """Per run: the largest distance of a grown neuron's breakpoint -w_2/w_1 (inside [-2.5, 2.5]) from the nearest
    data abscissa; grown = norm(w_j) > rel * max."""
    W = e.traj.final.W
    k = metrics.kinks(e.traj.final)
    g = measures.grown(W, rel) & (k.abs() <= 2.5)
    xs = data.x1d.cpu()
    d = (k[..., None] - xs).abs().amin(-1)
    return torch.where(g, d, torch.zeros_like(d)).amax(1)


def findings(claims, S28, P) -> str:
    def say(cid, yes, no):
        return yes if claims.passed(cid) else no
    lam = P.fig28_scales
    fr = [f"{float(S28['converged'][i].double().mean()):.0%} at lambda = {l:g}" for l, i in S28["by_scale"]]
    return "\n".join([
        "- Fig 3.28 (ReLU, m = %d) converges for %s of %d seeds each." % (P.width, ", ".join(fr), len(P.fig28_seeds)),
        "- " + say("Fig3.28/stuck-at-spurious", "Every seed that does not converge sits at L = 1/n with the point "
                   "xbar = 0 unfitted (h(0) ~ 0): the spurious stationary point of early alignment.",
                   "Not every non-converged seed sits at the spurious point L = 1/n."),
        "- " + say("Fig3.27/rich-constant", "The complexity is constant over the rich regime for every activation "
                   "that converges there", "The complexity is not constant over the converged rich runs")
        + "; " + say("Fig3.27/lazy-linear", "in the lazy regime it stays at the initial norm (linear in lambda).",
                     "in the lazy regime it leaves the initial norm by more than 15%."),
        "- " + say("C.31/simpler", "The ReLU interpolator has no more kinks as lambda decreases.",
                   "The ReLU interpolator does not get simpler monotonically as lambda decreases."),
    ])
