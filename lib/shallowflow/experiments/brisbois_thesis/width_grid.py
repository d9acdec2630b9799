"""000, Section 3.1.2 and Appendix C.2: the width sweeps and the automatic-processing grids -- Fig. 3.3 (loss
against m) and Figs C.9, C.10, C.12 (ReLU, Sigmoid, Tanh summaries over m x alpha x lambda).  Fig. C.27
(Dataset 1.3.2 against m) is checked with the ten-point datasets.

The whole grid (widths x step sizes x scales x activations) is trained by :func:`run_grid` in one pass:
per activation, one :func:`shallowflow.engine.train.gradient_descent_many` call per epoch budget, which batches
every width, step size and scale (widths are grouped, not padded).  Every run stops at L < 0.01 (the
thesis's "zero loss" of its automatic processing) or at its epoch budget; only per-run summaries are kept.
"""
from __future__ import annotations

import numpy as np
import torch

from ...engine import data as datasets
from ... import verdicts as C
from ...engine.models import Network, Params
from ...params import PROFILE, Float, Floats, Int, Ints, Rule, gd_bytes, gd_work
from ...engine.train import gradient_descent_many
from . import common as Cm
from . import theory as T

SCHEMA = {
    "profile": PROFILE,
    "widths": Ints("widths m of the grid", low=1, high=10_000),
    "lrs": Floats("step sizes alpha of the grid (MSE)", low=0, low_open=True, high=1),
    "scales": Floats("initial scales lambda of the grid", low=0, low_open=True, high=1000, min_len=3),
    "budget": Int("epoch budget x alpha (time units) of a run; capped by max_epochs", low=1, high=100_000),
    "max_epochs": Int("largest epoch budget of a run (the thesis's: 3e5)", low=100, high=10_000_000),
    "fig33_scale": Float("lambda of Fig. 3.3", low=0, low_open=True, high=1),
}
RULES = (Rule(("fig33_scale", "scales"), lambda P: any(np.isclose(P.fig33_scale, s) for s in P.scales),
              "fig33_scale must be one of scales"),)


def _groups(P) -> dict[tuple[int, int], list[float]]:
    """The step sizes of every gradient_descent_many call (per activation), keyed by (epochs, record interval):
    the step sizes that share both train together."""
    out: dict[tuple[int, int], list[float]] = {}
    for lr in P.lrs:
        out.setdefault((epochs_for(P, lr), record_every(P, lr)), []).append(lr)
    return out


def _budget_groups(P):
    """(runs per width, epochs, record interval) of every gradient_descent_many call (per activation)."""
    return [(len(P.scales) * len(lrs), steps, rec) for (steps, rec), lrs in _groups(P).items()]


def memory_estimate(P) -> float:
    """One call: every width's ensemble (n = d = 2) with its recorded losses (one per record interval)."""
    return max(sum(gd_bytes(R, m, 2, 2, steps, rec) for m in P.widths) for R, steps, rec in _budget_groups(P))


def work_estimate(P) -> float:
    return len(T.ACTIVATIONS) * sum(gd_work(R, m, 2, 2, steps) for R, steps, _ in _budget_groups(P) for m in P.widths)


NAMES = ("widths", "lrs", "scales", "budget", "max_epochs")
RULES = RULES + (
    Rule(("lrs",), lambda P: any(np.isclose(lr, 1e-3) for lr in P.lrs),
         "lrs must include 1e-3 (Fig. 3.3 and its checks are at alpha 1e-3)"),
    Rule(("scales",), lambda P: any(np.isclose(s, 1e-2) for s in P.scales),
         "scales must include 1e-2 (Fig. 3.3's spread across lambda ends at 1e-2)"),
    Rule.memory(NAMES, memory_estimate, what="the grid's ensembles"),
    Rule.work(NAMES, work_estimate, what="the grid"),
)


def epochs_for(P, lr: float) -> int:
    return int(min(P.max_epochs, round(P.budget / lr)))


RECORD_TIME = 1e-3  # time units (alpha x epochs) between two recorded losses: every epoch at alpha >= 1e-3


def record_every(P, lr: float) -> int:
    """Epochs between two recorded losses of a run at step size ``lr``: RECORD_TIME / lr (at least 1), a function of
    the step size only, so that T, max L and the plateau count of a run are the same under any epoch budget (they
    depended on the budget while the interval was epochs // 30000: a ReLU run at alpha 1e-2 counted 2 plateaus at the
    book's 1e4 epochs and 3 at the paper's 1e5, see tests/test_000_width_grid.py).  Capped at epochs // 100 so that
    the plateau detector keeps its 100 blocks at step sizes far below the grid's."""
    return max(1, min(int(round(RECORD_TIME / lr)), epochs_for(P, lr) // 100))


def summarise(traj, meta: list[dict], threshold: float = 0.01) -> list[dict]:
    """Per run: T (first recorded epoch with L < threshold, -1 if never), the plateau table of Appendix C.1 on
    [0, T] read on the recorded losses themselves (block edges on recorded epochs, :func:`theory.plateaus`), L0,
    max L, final L, valid (finite)."""
    L = traj.loss.numpy()
    rec = int(traj.loss_steps[1] - traj.loss_steps[0]) if traj.loss_steps.numel() > 1 else 1
    Tt = Cm.first_epoch_below(traj, threshold)
    ok = (torch.isfinite(traj.loss).all(1) & torch.isfinite(traj.final.W).flatten(1).all(1)).numpy()
    out = []
    for r, mt in enumerate(meta):
        end = int(Tt[r]) if Tt[r] > 0 else int(traj.loss_steps[-1])
        pl = (T.plateau_summary(L[r], end, every=rec) if ok[r] and end >= 2 * rec
              else dict(count=-1, initial=0, intermediate=0, plateaus=[]))
        out.append(dict(mt, T=int(Tt[r]), L0=float(L[r, 0]), Lmax=float(np.nanmax(L[r])), Lend=float(L[r, -1]),
                        valid=bool(ok[r]), count=pl["count"], initial=pl["initial"], intermediate=pl["intermediate"]))
    return out


def run_grid(P) -> list[dict]:
    """Train the whole grid on Dataset 1.1.0 and return one summary dict per run (act, width, lr, scale, ...).
    Seeds: per width the first one with Assumption 5 (the thesis forced it for ReLU; the same draw serves the
    three activations)."""
    data = datasets.get("brisbois-orthogonal", device="cpu")
    seeds = {m: Cm.assumption5_seeds(data, m, 1)[0] for m in P.widths}
    groups = _groups(P)
    rows = []
    for act in T.ACTIVATIONS:
        for (steps, rec), lrs in sorted(groups.items()):
            params, lr_list, metas = [], [], []
            for m in P.widths:
                combos = Cm.combos(P.scales, [seeds[m]], lrs=lrs)
                params.append(Cm.initial("balanced", [c["seed"] for c in combos], m, data.d, [c["scale"] for c in combos]))
                lr_list.append([c["lr"] for c in combos])
                metas.append([dict(c, act=act, width=m) for c in combos])
            trajs = gradient_descent_many(params, data, Network(act), lr=lr_list, steps=steps, record_every=rec,
                                          stop_below=0.01, on_nonfinite="stop", loss="mean")
            for tr, meta in zip(trajs, metas):
                rows.extend(summarise(tr, meta))
    return rows


#: C.9 / C.10 / C.12: no run of the (m, alpha, lambda) set fails to reach L < 0.01 within its budget (a count);
#: ReLU at lambda <= 1e-4 shows two plateaus, Sigmoid at alpha <= 1e-3 one; Tanh's largest max_t L / L0 stays below
#: 1.05 (stable); ReLU's initial MSE at lambda = 100 over 1e5 (explodes)
ALL_REACH = C.below(0, strict=False)
TWO_PLATEAUS = C.within(2, 2)
ONE_PLATEAU = C.within(1, 1)
STABLE = C.below(1.05, strict=False)
EXPLODES = C.above(1.0)
#: C.9: R^2 of T against ln(1/lambda) over lambda <= 1e-4, the smallest over (m, alpha) (:func:`ln_lambda_r2`);
#: ReLU at lambda = 100: no evidence run reaches L < 0.01 (:func:`no_convergence`); C.10: Sigmoid runs whose loss
#: rises above 1.05 L0 exactly when alpha > 4/m (:func:`crit_disagreements`: the runs that disagree, none)
LN_LAMBDA_R2 = C.above(0.98)
NONE_CONVERGE = C.below(0, strict=False)
NO_DISAGREEMENT = C.below(0, strict=False)


def ln_lambda_r2(small: list[dict], widths, lrs) -> list[float]:
    """C.9, per (m, alpha) of ``widths`` x ``lrs``: R^2 of the line of T (epochs to L < 0.01) against ln(1/lambda)
    over the rows ``small``, nan for a pair with fewer than three runs or a run that never reached L < 0.01."""
    out = []
    for m in widths:
        for lr in lrs:
            rr = sorted([r for r in small if r["width"] == m and np.isclose(r["lr"], lr)], key=lambda r: r["scale"])
            if len(rr) >= 3 and all(r["T"] > 0 for r in rr):
                out.append(Cm.regression(np.log(1 / np.array([r["scale"] for r in rr])), [r["T"] for r in rr])[2])
            else:
                out.append(np.nan)
    return out


def crit_disagreements(rows: list[dict]) -> int:
    """C.10: the rows whose loss rises above 1.05 L0 (unstable) where alpha <= 4/m, or stays below where alpha > 4/m."""
    return sum(1 for r in rows if (r["Lmax"] > 1.05 * r["L0"]) != (r["lr"] > T.sigmoid_alpha_crit(r["width"])))


#: Fig. 3.3: T (epochs to L < 0.01) non-increasing in m within 10% (:func:`nonincreasing`), and the spread of T across
#: m over its spread across lambda below 1 (:func:`marginal_ratio`)
FIG33_WIDTH = C.is_true()
FIG33_MARGINAL = C.below(1.0)


def nonincreasing(x, tol=0.1) -> bool:
    """Fig. 3.3's "smaller m needs more epochs": every T positive (reached) and each no more than (1 + tol) times the
    previous one, the widths in increasing order."""
    x = np.asarray(x, dtype=float)
    return bool(np.all(x > 0) and np.all(x[1:] <= (1 + tol) * x[:-1]))


def marginal_ratio(T_over_m, T_small_scale: float, T_large_scale: float) -> float:
    """Fig. 3.3's "the effect of m is marginal": the spread of T across the widths (max/min) over its spread
    across lambda (T at the smallest scale / T at lambda = 1e-2).  nan unless every run reached L < 0.01
    (T > 0): a run that never fitted has no T, and -1 epochs would make a negative ratio that passes."""
    Tm = np.asarray(T_over_m, dtype=float)
    if Tm.size == 0 or not (np.all(Tm > 0) and T_small_scale > 0 and T_large_scale > 0):
        return float("nan")
    return float((Tm.max() / Tm.min()) / (T_small_scale / T_large_scale))


def no_convergence(relu: list[dict], big: float = 100.0, small: float = 1e-4) -> tuple[float, list[dict], list[dict]]:
    """C.9's "no convergence at lambda = 100", gated: a lambda = 100 run is evidence only when its (m, alpha) trains
    (every run of that width and step at lambda <= ``small`` reached L < 0.01) and it stayed finite.  An untrained
    network "does not converge" too, and an overflowed run is evidence neither way.  Returns (the evidence runs that
    reached L < 0.01, nan when there is no evidence run; the evidence runs; the lambda = 100 runs left out)."""
    trains = {}
    for r in relu:
        if r["scale"] <= small:
            key = (r["width"], r["lr"])
            trains[key] = trains.get(key, True) and r["T"] > 0
    bigs = [r for r in relu if r["scale"] >= big]
    ev = [r for r in bigs if r["valid"] and trains.get((r["width"], r["lr"]), False)]
    out = [r for r in bigs if r not in ev]
    return (float(sum(1 for r in ev if r["T"] > 0)) if ev else float("nan")), ev, out


def select(rows: list[dict], **where) -> list[dict]:
    return [r for r in rows if all(np.isclose(r[k], v, rtol=1e-9, atol=0.0) if isinstance(v, float) else r[k] == v
                                   for k, v in where.items())]


def plan(P) -> None:
    """Dry plan (issue 29 item 6, :func:`shallowflow.params.dry_plan`): the grid's runs as :func:`run_grid` lays them
    out and every lookup the chapter makes in them, without training.  The chapter selects runs with
    :func:`select` (1e-9 relative), while the rules compare with ``np.isclose``'s wider default: a value within
    that gap (``lrs`` [1.00001e-3], ``scales`` holding 1.5e-8 for ``fig33_scale`` 1e-8) passes the rules and finds
    no run; it is refused here, naming the parameters."""
    from ...params import ParameterError, short

    rows = [dict(act=act, width=m, lr=float(lr), scale=float(s)) for act in T.ACTIVATIONS for m in P.widths
            for lr in P.lrs for s in P.scales]
    probe = 60 if 60 in P.widths else P.widths[0]
    for act in T.ACTIVATIONS:
        if not select(rows, act=act, lr=1e-3, scale=float(P.fig33_scale)):
            raise ParameterError(f"parameters 'lrs', 'scales' and 'fig33_scale' are inconsistent (lrs = {short(P.lrs, 40)}, "
                                 f"scales = {short(P.scales, 40)}, fig33_scale = {P.fig33_scale:g}): Fig. 3.3 needs a "
                                 f"run at alpha 1e-3 and lambda fig33_scale (each equal to a grid value to 1e-9 relative)")
        for s in (min(P.scales), 1e-2):
            if not select(rows, act=act, lr=1e-3, scale=s, width=probe):
                raise ParameterError(f"parameters 'lrs' and 'scales' are inconsistent (lrs = {short(P.lrs, 40)}, scales = "
                                     f"{short(P.scales, 40)}): Fig. 3.3's spread across lambda needs runs at alpha 1e-3 and "
                                     f"lambda {s:g} (equal to a grid value to 1e-9 relative)")
    rich: dict = {}  # the rich ReLU runs by width, selected once (a selection per width is quadratic in widths)
    for r in select(rows, act="relu"):
        if r["scale"] <= 1e-4:
            rich.setdefault(r["width"], []).append(r)
    for m in P.widths:  # the C.9 regression per (m, alpha): a list, possibly empty (NaN), never indexed
        for lr in P.lrs:
            [r for r in rich.get(m, ()) if np.isclose(r["lr"], lr)]
    if not [r for r in select(rows, act="tanh") if r["scale"] <= 1e-2]:  # C.12 takes the max over them
        raise ParameterError("parameter 'scales' needs a lambda <= 1e-2 (C.12's Tanh runs)")
    for lr in P.lrs:
        epochs_for(P, lr)
