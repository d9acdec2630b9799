"""000, Section 3.2: quasi-orthogonal data (Datasets 1.2.x), ReLU, Figs 3.25, 3.26 and the delta sweep.

x_1 = (-0.5 + sign * delta / 2, 1), y_1 = -1 and x_2 = (2, 1), y_2 = 1, so <x_1, x_2> = sign * delta.  The thesis
claims the phases of [5] survive "for delta of order lambda" and, for all tested delta with one input on each
side of 0, the loss profile and the alignment directions D_+/- = y_k x_k (orientations -1/xbar_k) persist.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ...engine import data as D
from ...engine import init, metrics, train
from ... import verdicts as C
from ...engine.models import Network
from ...params import PROFILE, Float, Floats, Int, Ints, Rule, array_bytes, gd_bytes, gd_work
from . import measures

SCHEMA = {
    "profile": PROFILE,
    "width": Int("m", low=2, high=5000),
    "init_scale": Float("lambda", low=0, low_open=True, high=1.0),
    "lr": Float("step size alpha (MSE loss)", low=0, low_open=True, high=0.1),
    "steps": Int("epochs", low=1000, high=10**7),
    "seeds": Ints("one run per seed and dataset", low=0),
    "deltas": Floats("|<x_1, x_2>| of the sweep (sign -: x_1 stays negative)", low=0, min_len=1, high=1000),
    "delta_a": Float("delta of Fig 3.25 (sign -)", low=0, high=1000),
    "delta_b": Float("delta of Fig 3.26 (sign +: both inputs positive when > 1)", low=1, low_open=True, high=1000),
    "snap_every": Int("epochs between stored parameters", low=1),
    "grown_rel": Float("a neuron has grown when ||w_j|| exceeds this fraction of the largest", low=0, low_open=True,
                       high=1.0),
}
RULES = (
    Rule(("snap_every", "steps"), lambda P: P.snap_every <= P.steps // 10, "store at least ten snapshots"),
    Rule(("delta_a",), lambda P: P.delta_a > 0, "Fig 3.25's delta must be > 0"),
)


def memory_estimate(P) -> float:
    """One ensemble of seeds x (2 + deltas) runs (n = d = 2) with a snapshot every snap_every epochs and the loss
    every snap_every / 10."""
    R = len(P.seeds) * (2 + len(P.deltas))
    return gd_bytes(R, P.width, 2, 2, P.steps, max(1, P.snap_every // 10), P.steps // P.snap_every + 1) + \
        array_bytes(P.steps // P.snap_every + 1, R, P.width, copies=4)


def work_estimate(P) -> float:
    return gd_work(len(P.seeds) * (2 + len(P.deltas)), P.width, 2, 2, P.steps)


NAMES = ("width", "steps", "seeds", "deltas", "snap_every")
RULES = RULES + (Rule.memory(NAMES, memory_estimate, what="the ensemble and its snapshots"),
                 Rule.work(NAMES, work_estimate, what="the runs"))


@dataclass
class QuasiRun:
    datasets: list  # one Dataset per ensemble entry
    labels: list  # "a", "b" or "sweep"
    deltas: list  # signed delta per entry
    seeds: list
    traj: train.Trajectory  # all entries, concatenated along runs
    groups: list  # per entry: the run indices


#: the alignment directions the thesis states for Fig. 3.25 (delta = 1: x_1 = (-1, 1), x_2 = (2, 1)), quoted from
#: 000_5bec2764affd87f0.txt, Section 3.2: "the two directions of alignment are D~_+ = 1 and D~_- = -0.5 (It is what
#: we observe on Figure 3.25)"; the labels of the two are swapped (an erratum, Fig3.25/orientation-plus, -minus)
SOURCE_FIG325 = dict(delta=1.0, directions={"D~_+": 1.0, "D~_-": -0.5})


def run_quasi(P) -> QuasiRun:
    """Fig 3.25 (delta_a, sign -), Fig 3.26 (delta_b, sign +) and the sweep (every delta, sign -), every seed:
    ReLU, balanced init, MSE loss, one ensemble with per-run data."""
    entries = [("a", P.delta_a, -1), ("b", P.delta_b, 1)] + [("sweep", d, -1) for d in P.deltas]
    dsets, labels, deltas, groups, per_run = [], [], [], [], []
    for lab, d, sg in entries:
        ds = D.brisbois_quasi_orthogonal(d, sg)
        dsets.append(ds)
        labels.append(lab)
        deltas.append(sg * d)
        groups.append(list(range(len(per_run), len(per_run) + len(P.seeds))))
        per_run += [ds] * len(P.seeds)
    p = init.balanced(P.seeds * len(entries), P.width, 2, P.init_scale)
    snaps = list(range(0, P.steps + 1, P.snap_every))
    traj = train.gradient_descent(p, per_run, Network("relu"), steps=P.steps, lr=P.lr, loss="mean",
                                  snapshots=snaps, record_every=max(1, P.snap_every // 10))
    return QuasiRun(dsets, labels, deltas, list(P.seeds), traj, groups)


#: Fig. 3.25: grown neurons at -1/xbar_k (max deviation, :func:`measure`'s dev_plus / dev_minus); two plateaus
#: (initial and intermediate); Fig. 3.26 (delta = 10): the s = -1 direction at the smaller abscissa, the s = +1
#: direction in the negative half-line, the model moving away from the negative point later (largest later
#: residual), a new slowdown (more than three plateaus), the negative label fitted first
ORIENTATION = C.below(0.02)
TWO_PLATEAUS = C.within(2, 2)
ORIENTATION_2 = C.below(0.05)
OTHER_NEGATIVE = C.below(0.0)
MOVES_AWAY = C.above(0.1)
SLOWDOWN = C.above(3)
NEGATIVE_FIRST = C.below(0.0)


def as_printed_deviation(m: dict) -> torch.Tensor:
    """Per run of a :func:`measure` entry at the thesis's delta = 1: the largest deviation of the grown s = +1 neurons'
    orientations from the text's printed D~_+ and of the s = -1 neurons' from its D~_- (:data:`SOURCE_FIG325`), the
    labels as printed (the formula D~ = -x_{k,2} / x_{k,1} puts them the other way round: ``dev_plus``, ``dev_minus``)."""
    txt = SOURCE_FIG325["directions"]
    dp = (m["k_plus"] - txt["D~_+"]).abs().nan_to_num(0.0).amax(1)
    dm = (m["k_minus"] - txt["D~_-"]).abs().nan_to_num(0.0).amax(1)
    return torch.maximum(dp, dm)


def entry(run: QuasiRun, label: str, delta=None) -> int:
    for i, (lab, d) in enumerate(zip(run.labels, run.deltas)):
        if lab == label and (delta is None or d == delta):
            return i
    raise KeyError((label, delta))


def measure(run: QuasiRun, i: int, grown_rel: float = 0.05) -> dict:
    """For entry i (every seed): fit epochs of the positive / negative label (10%), plateau count of the
    thesis's detector (T = epochs to L < 0.01), orientations -w_2/w_1 of grown neurons by sign, the
    predicted orientations -1/xbar_k, the largest later residual at the negative point after it was fitted."""
    idx = run.groups[i]
    tr = run.traj.select(idx)
    ds = run.datasets[i]
    pos, neg, res = measures.label_fit_epochs(tr, ds, Network("relu"))
    T = measures.epochs_to(tr.loss, tr.loss_steps, 0.01)
    pl = measures.thesis_plateaus(tr.loss, tr.loss_steps, T)
    W = tr.final.W
    g = measures.grown(W, grown_rel)
    s = metrics.signs(tr.final)
    k = metrics.kinks(tr.final)
    xbar = ds.x1d.cpu()
    pred_plus, pred_minus = float(-1 / xbar[1]), float(-1 / xbar[0])  # D_+ ~ x_2, -D_- ~ x_1
    inf = torch.full_like(k, float("nan"))
    k_plus = torch.where(g & (s > 0), k, inf)
    k_minus = torch.where(g & (s < 0), k, inf)
    dev_plus = (k_plus - pred_plus).abs().nan_to_num(0.0).amax(1)
    dev_minus = (k_minus - pred_minus).abs().nan_to_num(0.0).amax(1)
    # neurons of one sign grown along the other sign's direction
    cross = ((g & (s > 0) & ((k - pred_minus).abs() < 0.05)) | (g & (s < 0) & ((k - pred_plus).abs() < 0.05))).sum(1)
    # after the negative label is first fitted, does the residual there exceed 10% again?
    r_neg = res[:, :, 0]  # (S, R)
    ok = r_neg < 0.1
    first = torch.where(ok.any(0), ok.to(torch.int8).argmax(0), torch.full((r_neg.shape[1],), -1))
    S_ = torch.arange(r_neg.shape[0])[:, None]
    later = torch.where((S_ > first[None]) & (first[None] >= 0), r_neg, torch.zeros_like(r_neg)).amax(0)
    return dict(pos=pos, neg=neg, T=T, plateaus=pl["count"], dev_plus=dev_plus, dev_minus=dev_minus,
                pred_plus=pred_plus, pred_minus=pred_minus, cross=cross, later_neg=later,
                k_plus=k_plus, k_minus=k_minus, valid=measures.finite_runs(tr.loss, tr.final),
                final_loss=tr.loss[:, -1], traj=tr, data=ds)


def findings(claims, P) -> str:
    def say(cid, yes, no):
        return yes if claims.passed(cid) else no
    return "\n".join([
        "- " + say("Fig3.25/orientation-plus", "For delta = %g the positive neurons align with D_+ (orientation "
                   "-1/xbar_2), " % P.delta_a, "For delta = %g the positive neurons miss D_+, " % P.delta_a)
        + say("Fig3.25/orientation-minus", "the negative ones with -D_-: the breakpoints are not at the data.",
              "the negative ones miss -D_-."),
        "- " + say("Fig3.25/delta-sweep", "Across the delta sweep the ReLU profile keeps two plateaus for every delta "
                   "and seed.", "Across the delta sweep some delta or seed does not show two plateaus."),
        "- " + say("Fig3.26/negative-first", "With both inputs positive (delta = %g) the negative label is fitted "
                   "first" % P.delta_b, "With both inputs positive the negative label is not fitted first")
        + "; " + say("Fig3.26/moves-away", "the model later moves away from it.",
                     "the model does not move away from it again (beyond 10%)."),
        "- " + say("Fig3.25/both-signs-both-directions", "Neurons of both signs grow along both directions.",
                   "No grown neuron of one sign sits on the other sign's direction: the thesis's remark that "
                   "both signs grow along both directions is not seen."),
    ])
