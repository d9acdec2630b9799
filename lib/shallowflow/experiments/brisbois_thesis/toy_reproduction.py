"""000, Section 2.4.3: the thesis's reproduction of [5]'s toy (Figs 2.7, 2.8), the final interpolator
against the initial scale (Fig. 2.9) and the phase-timing check T1 (the timeline of Fig. 2.6).

ReLU, m = 60, balanced initialisation, full-batch GD with step 1e-3 on the mean squared error (the
loss of the thesis's experiments, the spec's section 2.2), Dataset 1.1.0 (= [5]'s toy) and, for T1,
Dataset 1.1.4 with c = 1.  The thesis gives no seeds; the book takes the first seeds whose draw has
non-empty S_{+,1} and S_{-,1} (Assumption 5, which the thesis forced for ReLU).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ...engine import data as datasets
from ...engine import metrics
from ... import verdicts as C
from ...params import PROFILE, Float, Floats, Int, Ints, Rule, Str, array_bytes, gd_bytes, gd_work
from . import common as Cm
from . import theory as T

SCHEMA = {
    "profile": PROFILE,
    "width": Int("number of hidden neurons m", low=1, high=10_000),
    "init_scale": Float("lambda = init_scale / sqrt(width) (Figs 2.7, 2.8)", low=0, low_open=True, high=10),
    "lr": Float("GD step size alpha on the MSE", low=0, low_open=True, high=1),
    "steps": Int("GD epochs", low=1, high=10_000_000),
    "seeds": Ints("one run per seed (Fig. 2.9 and T1: the first kept seed); a seed whose draw violates Assumption 5 "
                  "is rejected and named, not replaced", low=0, high=10_000, max_len=1000),
    "loss": Str("the loss GD minimises: mean (MSE, 1/n sum r^2, the experiments' and the book's reading) or half "
                "(the 1/(2n) loss of Appendix D; the predictions follow it)", choices=("mean", "half")),
    "panels": Ints("epochs of the panels of Fig. 2.8 (the final one is added)", low=0),
    "interp_scales": Floats("lambda of the three interpolators of Fig. 2.9", low=0, low_open=True, high=10, min_len=2),
    "timing_scales": Floats("lambda of the T1 runs on Dataset 1.1.4 (c = 1)", low=0, low_open=True, high=1, min_len=2),
    "fit_every": Int("epochs between snapshots used to time the label fits", low=1, high=10_000),
    "level": Float("level of the Wilson intervals of the shares of runs (Fig. 2.7: the typical curve)", low=0.5,
                   high=0.999, low_open=True),
}
RULES = (
    Rule(("panels", "steps"), lambda P: max(P.panels) <= P.steps, "every panel must be <= steps"),
    Rule(("fit_every", "steps"), lambda P: P.fit_every <= P.steps, "fit_every must be <= steps"),
    Cm.assumption5_rule("seeds", "width"), Cm.assumption5_rule("seeds", "width", "1.1.4"),
)


def _toy_calls(P):
    """(runs, record_every, snapshots) of the three ensembles: Figs 2.7/2.8, Fig. 2.9, T1."""
    fits = P.steps // P.fit_every + 1
    return [(len(P.seeds), 1, fits + len(P.panels) + 1), (len(P.interp_scales), 10, 1), (len(P.timing_scales), 10, fits)]


def memory_estimate(P) -> float:
    """The three ensembles with their snapshots (Dataset 1.1.0: n = d = 2), and the fit-epoch outputs of the
    largest (snapshots x runs x m x n, three arrays)."""
    calls = _toy_calls(P)
    return sum(gd_bytes(R, P.width, 2, 2, P.steps, rec, S) for R, rec, S in calls) + \
        max(array_bytes(S, R, P.width, 2, copies=3) for R, rec, S in calls)


def work_estimate(P) -> float:
    return sum(gd_work(R, P.width, 2, 2, P.steps) + 10 * gd_work(R * S, P.width, 2, 2, 0) for R, rec, S in _toy_calls(P))


NAMES = ("width", "steps", "seeds", "panels", "interp_scales", "timing_scales", "fit_every")
RULES = RULES + (Rule.memory(NAMES, memory_estimate, what="the runs and their snapshots"),
                 Rule.work(NAMES, work_estimate, what="the runs"))


#: T1: measured / predicted label-fit epochs, every seed and label (Dataset 1.1.0) and every rich lambda (1.1.4)
#: the epochs the thesis reads off its Fig. 2.8 (000_5bec2764affd87f0.txt, Section 2.2, the text on Figs 2.7-2.8):
#: "at Epoch 4000, we observe the end of the alignment phase; at Epochs 8000 and 15000, the model has reached the
#: positive and negative label data res[pectively]" (m = 60, alpha = 1e-3, lambda = 1e-6/sqrt(60))
SOURCE_FIG28_EPOCHS = {"end of alignment": 4000, "positive label fitted": 8000, "negative label fitted": 15000}
T1_RATIO = C.within(0.8, 1.1)
#: T1/slope: measured / predicted negative-fit epochs per unit ln(1/lambda) (Dataset 1.1.4)
T1_SLOPE = C.within(0.95, 1.05)
#: Fig. 2.7, read run by run (:func:`run_flags`), then as a share of runs against ``Cm.TYPICAL``: the first epoch
#: with L < 0.99 L(0), the epochs spent on the intermediate plateau (:func:`plateau_epochs`), the first epochs
#: with L < 1e-6 and L < 1e-10 (never: inf)
FIG27_INITIAL_PLATEAU = C.above(4000)
FIG27_INTERMEDIATE_PLATEAU = C.above(3000)
FIG27_BELOW_1E6 = C.below(20_000, strict=False)
FIG27_BELOW_1E10 = C.below(30_000, strict=False)
#: Fig. 2.8: the largest orientation error of the grown neurons (:func:`orientation_errors`) at the end of alignment
#: (epoch 4000), once aligned (epoch 8000) and at the end; the distinct directions at epoch 4000; the label errors
#: |h(x_k) - y_k| at the fit epochs; the largest |a_j - s_j ||w_j|| | at the end (:func:`balance_error`)
FIG28_ALIGNED_4000 = C.below(0.1)
FIG28_TWO_DIRECTIONS = C.within(2, 2)
FIG28_ALIGNED = C.below(0.01)
FIG28_LABEL_REACHED = C.below(0.1)
FIG28_FINAL_BREAKPOINTS = C.below(1e-3)
FIG28_BALANCED = C.below(1e-8)
#: Fig. 2.9: the breakpoint counts are non-increasing as lambda decreases
FIG29_SIMPLER = C.is_true()  # Fig2.9/simpler: fig29_simpler(...)


def fig29_at_most_n(data):
    """Fig. 2.9 at lambda <= 1e-6: at most n breakpoints (n: the data's number of points)."""
    return C.below(data.n, strict=False)


def run_flags(values, criterion) -> list[bool]:
    """Fig. 2.7's per-run reading of a criterion: one flag per run's value (shared by :func:`Cm.typical_share`)."""
    return [criterion(np.array([v])) for v in values]


def plateau_epochs(traj, lf: float) -> np.ndarray:
    """Per run: the recorded epochs with L in [0.45 lf, 0.55 lf] (the intermediate plateau, one label fitted: L = lf/2),
    times the recording interval."""
    L = traj.loss.numpy()
    return ((L >= 0.45 * lf) & (L <= 0.55 * lf)).sum(1) * int(traj.loss_steps[1] - traj.loss_steps[0])


def balance_error(p, p0) -> torch.Tensor:
    """Per run: the largest |a_j - s_j ||w_j|| | of parameters p, s_j the output signs of the initial draw p0."""
    return (p.a - metrics.signs(p0) * p.W.norm(dim=-1)).abs().amax(1)


@dataclass
class ToyResult:
    data: datasets.Dataset
    scale: float
    ens: Cm.Ensemble  # Figs 2.7/2.8 runs (one per seed)
    fits: torch.Tensor  # (R, n) fit epochs
    interp: Cm.Ensemble  # Fig. 2.9 runs (one per lambda, first seed)
    interp_kinks: torch.Tensor  # (len(interp_scales),)
    timing_data: datasets.Dataset
    timing: Cm.Ensemble  # T1 runs on 1.1.4
    timing_fits: torch.Tensor  # (len(timing_scales), n)
    rejected: dict  # seed -> why it was not run (Assumption 5 on Dataset 1.1.0)


def run(P) -> ToyResult:
    """Figs 2.7-2.9 and T1: the 1.1.0 toy trained by GD (MSE) over Assumption-5 seeds, fitted saddle exits,
    the final interpolators at the Fig 2.9 scales, and the Dataset 1.1.4 timing runs over the T1 scales."""
    data = datasets.get("brisbois-orthogonal", device="cpu")
    seeds, rejected = Cm.assumption5_split(data, P.width, P.seeds)
    scale = P.init_scale / math.sqrt(P.width)
    snaps = sorted(set(range(0, P.steps + 1, P.fit_every)) | set(P.panels) | {P.steps})
    ens = Cm.train_grid(data, ["relu"], P.width, Cm.combos([scale], seeds, lrs=[P.lr]), P.steps, snapshots=snaps,
                        loss=P.loss)["relu"]
    fits = Cm.fit_epochs(ens.traj, data, "relu")
    interp = Cm.train_grid(data, ["relu"], P.width, Cm.combos(P.interp_scales, seeds[:1], lrs=[P.lr]), P.steps,
                           snapshots=[P.steps], record_every=10, loss=P.loss)["relu"]
    kinks = metrics.kinks_of_function(interp.traj.final, (float(data.x1d.min()), float(data.x1d.max())))
    d4 = datasets.get("brisbois-orthogonal", variant="1.1.4", device="cpu")
    s4 = Cm.assumption5_split(d4, P.width, P.seeds)[0][:1]
    timing = Cm.train_grid(d4, ["relu"], P.width, Cm.combos(P.timing_scales, s4, lrs=[P.lr]), P.steps,
                           snapshots=range(0, P.steps + 1, P.fit_every), record_every=10, loss=P.loss)["relu"]
    return ToyResult(data, scale, ens, fits, interp, kinks, d4, timing, Cm.fit_epochs(timing.traj, d4, "relu"), rejected)


def orientation_errors(p, scale: float, data) -> torch.Tensor:
    """Per run: the largest distance of a neuron's kink -w_2/w_1 from its group's target (-1/x of the
    data point its sign fits: D_plus for s = +1, -D_minus for s = -1), over neurons with ‖w_j‖ >= 10 lambda; nan for
    a run where no neuron has grown (an untrained or a lazy network has no kink to read: it never aligned)."""
    dp, dm, _ = T.key_vectors(data)
    tgt_plus, tgt_minus = float(-dp[1] / dp[0]), float(-dm[1] / dm[0])
    k = metrics.kinks(p)
    s = metrics.signs(p)
    big = metrics.neuron_norms(p) >= 10 * scale
    dev = torch.where(s > 0, (k - tgt_plus).abs(), (k - tgt_minus).abs())
    worst = torch.where(big, dev, torch.zeros_like(dev)).amax(-1)
    return torch.where(big.any(-1), worst, torch.full_like(worst, float("nan")))


def fig29_simpler(kinks, residuals) -> bool:
    """Fig. 2.9 in the thesis's words, ``kinks`` (breakpoints of h on [x_1, x_2]) and ``residuals`` (largest
    |h(x_k) - y_k| of each run) ordered by decreasing lambda: the three networks are interpolators (the caption,
    line 1121: "Final interpolator"; each residual within FIG28_LABEL_REACHED, the chapter's "label reached"), and
    the model is simpler as lambda decreases (line 1116: "For larger initialization scale, they retrieve more complex
    resulting models"): breakpoints non-increasing from the largest lambda to the smallest, and fewer at the
    smallest than at the largest.  Untrained networks, which interpolate nothing, and equal counts at every lambda
    both fail."""
    k, r = np.asarray(kinks, dtype=float), np.asarray(residuals, dtype=float)
    return bool(FIG28_LABEL_REACHED(r) and np.all(np.diff(k) <= 0) and k[-1] < k[0])


def h_at(p, data) -> torch.Tensor:
    """h(x_k) of ReLU networks p, (R, n)."""
    return torch.einsum("rm,rmn->rn", p.a, torch.clamp_min(p.W @ data.X.cpu().T, 0.0))
