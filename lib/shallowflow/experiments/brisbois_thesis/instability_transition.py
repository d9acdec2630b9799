"""000, Section 3.1.3 and Appendix C: the transition regime between rich and lazy (Figs 3.12, 3.13, C.4-C.7),
the plateau detector (Fig. C.8) and the Sigmoid GD instability (Fig. C.11, alpha_crit = 4/m).

Dataset 1.1.0, balanced initialisation, GD on the mean squared error (the thesis's experiments).
"""
from __future__ import annotations

import numpy as np
import torch

from ...engine import data as datasets
from ... import verdicts as C
from ...engine import theory
from ...params import PROFILE, Float, Floats, Int, Ints, Rule, gd_bytes, gd_work
from . import common as Cm
from . import theory as T

SCHEMA = {
    "profile": PROFILE,
    "width": Int("number of hidden neurons m (transition, C.8)", low=1, high=10_000),
    "lr": Float("GD step size alpha on the MSE (transition, C.8)", low=0, low_open=True, high=1),
    "steps": Int("GD epochs (transition, C.8)", low=10, high=10_000_000),
    "seeds": Ints("one run per seed and setting (transition, C.8); a seed whose draw violates Assumption 5 is rejected "
                  "and named, not replaced", low=0, high=10_000, max_len=100),
    "relu_scales": Floats("ReLU lambda: Figs 3.12-3.13 between the rich 1e-2 and the lazy 1", low=0, low_open=True, high=10, min_len=3),
    "sigmoid_scales": Floats("Sigmoid lambda (Figs C.4-C.5)", low=0, low_open=True, high=10, min_len=3),
    "tanh_scales": Floats("Tanh lambda (Figs C.6-C.7)", low=0, low_open=True, high=10, min_len=3),
    "c8_scales": Floats("ReLU lambda of Fig. C.8's panels (Sigmoid: the smallest)", low=0, low_open=True, high=10),
    "c11_width": Int("m of Fig. C.11", low=1, high=100_000),
    "c11_lr": Float("alpha of Fig. C.11", low=0, low_open=True, high=1),
    "c11_steps": Int("epochs of Fig. C.11", low=10, high=1_000_000),
    "c11_seeds": Ints("seeds of Fig. C.11 (the alpha_crit runs: the first)", low=0, high=10_000, max_len=100),
    "crit_steps": Int("epochs of the alpha_crit runs", low=10, high=1_000_000),
}
RULES = (Rule(("steps",), lambda P: P.steps >= 1000, "steps must be >= 1000 (the detector needs T/100 >= 10)"),
         Cm.assumption5_rule("seeds", "width"))


def _transition_runs(P) -> int:
    return (len(set(P.relu_scales) | set(P.c8_scales)) + len(set(P.sigmoid_scales) | {min(P.c8_scales)})
            + len(set(P.tanh_scales))) * len(P.seeds)


def memory_estimate(P) -> float:
    """The transition ensembles (every epoch's loss, a snapshot every 50 epochs; n = d = 2), Fig. C.11's runs and
    the alpha_crit runs (every epoch's loss)."""
    R = _transition_runs(P)
    return (gd_bytes(R, P.width, 2, 2, P.steps, 1, P.steps // 50 + 1) + gd_bytes(len(P.c11_seeds), P.c11_width, 2, 2, P.c11_steps)
            + gd_bytes(2, max(P.c11_width, 60), 2, 2, P.crit_steps, 1) * 2)


def work_estimate(P) -> float:
    return (gd_work(_transition_runs(P), P.width, 2, 2, P.steps) + gd_work(len(P.c11_seeds), P.c11_width, 2, 2, P.c11_steps)
            + 2 * gd_work(2, max(P.c11_width, 60), 2, 2, P.crit_steps))


NAMES = ("width", "steps", "seeds", "relu_scales", "sigmoid_scales", "tanh_scales", "c8_scales", "c11_width",
         "c11_steps", "c11_seeds", "crit_steps")
RULES = RULES + (Rule.memory(NAMES, memory_estimate, what="the ensembles and their snapshots"),
                 Rule.work(NAMES, work_estimate, what="the runs"))


def run_transition(P) -> dict:
    """One ensemble per activation over its transition scales (and C.8's), every epoch's loss recorded."""
    data = datasets.get("brisbois-orthogonal", device="cpu")
    seeds, rejected = Cm.assumption5_split(data, P.width, P.seeds)
    grids = {"relu": sorted(set(P.relu_scales) | set(P.c8_scales)), "sigmoid": sorted(set(P.sigmoid_scales) | {min(P.c8_scales)}),
             "tanh": sorted(P.tanh_scales)}
    snaps = sorted(set(range(0, P.steps + 1, 50)))
    out = {}
    for act, scales in grids.items():
        out[act] = Cm.train_grid(data, [act], P.width, Cm.combos(scales, seeds, lrs=[P.lr]), P.steps, snapshots=snaps)[act]
    return dict(data=data, ens=out, tables={act: Cm.plateau_table(e) for act, e in out.items()}, seeds=seeds, rejected=rejected)


def orientation_variance(e: Cm.Ensemble, data, r: int, epoch: int) -> float:
    """Axial variance of the orientations at the snapshot <= epoch: ReLU, the larger of the variances within
    S_{+,1} and within S_{-,1}; Sigmoid/Tanh, over all neurons (one cluster, Conjectures 1-2)."""
    a, W, _ = Cm.snapshot_at(e, r, epoch)
    if e.act != "relu":
        return float(T.axial_variance(W))
    sp, sm = theory.key_sets(e.p0.select(r), data)
    return max(float(T.axial_variance(W[mask[0]])) for mask in (sp, sm) if mask.sum() > 1)


#: the values the thesis states for Fig. C.11 (Sigmoid, m = 600, lambda = 1e-6, alpha = 1e-2), quoted from the
#: caption of Fig. C.11 in 000_5bec2764affd87f0.txt: "The initial loss value is L(theta^0) ~ 0.9999 and the
#: maximum loss value reaches L(theta^26) ~ 19462.8417, before converging to zero loss."
SOURCE_C11 = dict(width=600, lr=1e-2, initial_loss=0.9999, peak_epoch=26, peak_loss=19462.8417)


def run_c11(P) -> dict:
    """Fig. C.11: Sigmoid, m = c11_width, lambda = 1e-6, alpha = c11_lr, ``c11_seeds`` seeds; and the threshold
    alpha_crit = 4/m: for m in {c11_width, 60} one step just below and one above 4/m (0.75x and 1.5x)."""
    data = datasets.get("brisbois-orthogonal", device="cpu")
    seeds = list(P.c11_seeds)
    main = Cm.train_grid(data, ["sigmoid"], P.c11_width, Cm.combos([1e-6], seeds, lrs=[P.c11_lr]), P.c11_steps)["sigmoid"]
    crit = {}
    for m in sorted({P.c11_width, 60}):
        ac = T.sigmoid_alpha_crit(m)
        lrs = [0.75 * ac, 1.5 * ac]
        crit[m] = dict(alpha_crit=ac, lrs=lrs,
                       ens=Cm.train_grid(data, ["sigmoid"], m, Cm.combos([1e-6], seeds[:1], lrs=lrs), P.crit_steps, record_every=1)["sigmoid"])
    return dict(data=data, main=main, crit=crit)


#: Fig. C.11 (Sigmoid, m = 600, alpha = 1e-2 > 4/m): L(theta^0), the epoch and the value of the largest loss
#: (:func:`spike`) in the thesis's ranges
C11_INITIAL_LOSS = C.within(0.9999, 1.0001)
C11_PEAK_EPOCH = C.within(15, 40)
C11_PEAK_VALUE = C.within(1e4, 5e4)
# Fig. C.11, "before eventually converging to zero loss" (000:2082; the caption: "before converging to zero loss"):
# the loss the run ends at (:func:`final_loss`) is zero loss, below the 1e-10 that the thesis's zero loss reads in
# C.1/C.2 (activations.ZERO_LOSS); a run that spikes and has not come back down to zero loss by its end fails.
# (a plain comment, not a doc comment: a documented Criterion constant breaks the site's viewcode anchors)
C11_ZERO_LOSS = C.below(1e-10)


def final_loss(traj) -> np.ndarray:
    """C.11/converges: the last recorded loss of each run, (R,)."""
    return traj.loss[:, -1].numpy()


def crit_rows(crit: dict) -> list[tuple]:
    """Fig. C.11's threshold study (:func:`run_c11`'s ``crit``), per run: (m, alpha, alpha > 4/m, max_t L / L0, valid)."""
    rows = []
    for m, d in crit.items():
        k, v = spike(d["ens"].traj.loss)
        for r, mt in enumerate(d["ens"].meta):
            rows.append((m, mt["lr"], mt["lr"] > d["alpha_crit"], v[r] / float(d["ens"].traj.loss[r, 0]), d["ens"].valid()[r]))
    return rows


def alpha_crit_agrees(rows: list[tuple]) -> bool:
    """C.11/alpha-crit: a spike (max L > 1.05 L0) exactly when alpha > 4/m, on every row of :func:`crit_rows`."""
    return all((ratio > 1.05) == above for m, lr_, above, ratio, ok in rows)


#: C.11/alpha-crit: :func:`alpha_crit_agrees` holds
ALPHA_CRIT = C.is_true()


def c8_expected(act: str, lam: float, c8_scales) -> int:
    """Fig. C.8: the plateaus the detector should find on a panel: ReLU at lambda = 1 none, Sigmoid at the smallest
    scale one, ReLU at lambda <= 1e-2 two (initial and intermediate), none above."""
    return {("relu", 1.0): 0, ("sigmoid", min(c8_scales)): 1}.get((act, lam), 2 if lam <= 1e-2 else 0)


def c8_criterion(act: str, lam: float, c8_scales):
    """Fig. C.8's criterion on a panel's plateau counts (every seed): exactly :func:`c8_expected`."""
    w = c8_expected(act, lam, c8_scales)
    return C.within(w, w)


def spike(loss: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """Per run: the epoch and value of the largest loss."""
    L = loss.numpy()
    k = np.nanargmax(L, axis=1)
    return k, L[np.arange(L.shape[0]), k]


def plateau_end(tables: list[dict]) -> np.ndarray:
    """Per run, the epoch at which the initial plateau that the detector of Appendix C.1 finds at epoch 0 ends,
    or -1 where it finds none: no plateau, no end of alignment to measure at (never a fallback to another epoch,
    which at these scales is the initial random draw)."""
    return np.array([t["initial"] if t["initial"] > 0 else -1 for t in tables])


def plateau_variance(e: Cm.Ensemble, data, r: int, epoch: int) -> float:
    """:func:`orientation_variance` at the end of the initial plateau, nan where there is none (``epoch < 0``)."""
    return float("nan") if epoch < 0 else orientation_variance(e, data, r, epoch)


#: Figs 3.12, C.4, C.6: :func:`plateau_shrinks` holds for every seed
SHRINKS = C.is_true()


def plateau_shrinks(lengths) -> bool:
    """Figs 3.12, C.4, C.6 for one seed: the plateau lengths over the scales in increasing order are non-increasing
    AND shorter at the largest scale than at the smallest (a strict net decrease), so that an all-zero or constant
    series, where nothing shrinks, fails; a nan (an unconverged run) fails too."""
    x = np.asarray(lengths, dtype=float)
    return bool(x.size >= 2 and np.all(np.isfinite(x)) and np.all(np.diff(x) <= 0) and x[-1] < x[0])


#: Figs 3.13, C.5, C.7: every seed's :func:`variance_trend` 1 (the variances grow over the scales)
VARIANCE_GROWS = C.within(1, 1)
#: a rise smaller than this fraction of the largest variance is rounding, not growth (an untrained network's
#: orientations are the same draw at every scale: its variances differ by about 1e-11 relative)
ROUNDING = 1e-6


def variance_trend(values) -> float:
    """Figs 3.13, C.5, C.7 for one seed: the orientation variances over the scales in increasing order (nan where
    not measured).  1.0 when the measured ones grow: they never decrease and rise from the first to the last by
    more than :data:`ROUNDING` of the largest (a constant series is no growth); 0.0 otherwise; nan (no measurement)
    when a scale below the largest one has no value or fewer than two are measured: the largest scale is the lazy
    end of the transition, where no plateau is expected."""
    v = np.asarray(values, dtype=float)
    if v.size < 2 or not np.all(np.isfinite(v[:-1])):
        return float("nan")
    v = v[np.isfinite(v)]
    if v.size < 2:
        return float("nan")
    return float(np.all(np.diff(v) >= 0) and v[-1] - v[0] > ROUNDING * np.abs(v).max())

