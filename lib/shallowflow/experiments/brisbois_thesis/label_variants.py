"""000, Sections 3.1.4-3.1.5: the label variants of the orthogonal data -- Dataset 1.1.1 (switched labels),
Dataset 1.1.2 (same-sign labels, Figs 3.14-3.16) -- and the alternative orthogonal Dataset 1.1.4 with c = 1
(Fig. 3.17).

m = 60, alpha = 1e-3 on the mean squared error, balanced and normal initialisations, one batched call per
activation and dataset.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from ...engine import data as datasets
from ...engine import metrics
from ... import verdicts as C
from ...params import PROFILE, Float, Floats, Int, Ints, Rule, gd_bytes, gd_work
from . import common as Cm
from . import theory as T

SCHEMA = {
    "profile": PROFILE,
    "width": Int("number of hidden neurons m", low=1, high=10_000),
    "lr": Float("GD step size alpha on the MSE", low=0, low_open=True, high=1),
    "steps": Int("GD epochs", low=1000, high=10_000_000),
    "seeds": Ints("one run per seed and setting; a seed whose draw violates Assumption 5 on a variant is rejected there "
                  "and named, not replaced", low=0, high=10_000, max_len=100),
    "switch_scale": Float("lambda x sqrt(m) of the Dataset 1.1.0 / 1.1.1 comparison (Fig. 2.7's)", low=0, low_open=True, high=1),
    "rich_scales": Floats("rich lambda of Figs 3.14 and 3.17", low=0, low_open=True, high=0.1, min_len=2),
    "factor": Float("the unstated multiplier of the second label in Fig. 3.16", low=0, low_open=True, high=100),
    "fig316_scale": Float("lambda of Fig. 3.16", low=0, low_open=True, high=1),
    "fit_every": Int("epochs between snapshots used to time the label fits", low=1, high=10_000),
}
RULES = (Rule(("fit_every", "steps"), lambda P: P.fit_every <= P.steps, "fit_every must be <= steps"),
         *(Cm.assumption5_rule("seeds", "width", v) for v in ("1.1.0", "1.1.1", "1.1.2", "1.1.4")))


def _label_calls(P):
    """(runs, snapshots) of every ensemble: switch (two datasets), same and alt (three activations, two
    initialisations), scaled."""
    S = P.steps // P.fit_every + 2
    same = len(set(P.rich_scales) | {1e-6}) * 2 * len(P.seeds)
    alt = len(set(P.rich_scales)) * 2 * len(P.seeds)
    return [(len(P.seeds), S)] * 2 + [(same, S)] * 3 + [(len(P.seeds), 2)] + [(alt, S)] * 3


def memory_estimate(P) -> float:
    """Every ensemble kept with its snapshots (the variants of Dataset 1.1.x: n = d = 2)."""
    return sum(gd_bytes(R, P.width, 2, 2, P.steps, 1, S) for R, S in _label_calls(P))


def work_estimate(P) -> float:
    return sum(gd_work(R, P.width, 2, 2, P.steps) for R, S in _label_calls(P))


NAMES = ("width", "steps", "seeds", "rich_scales", "fit_every")
RULES = RULES + (Rule.memory(NAMES, memory_estimate, what="the ensembles and their snapshots"),
                 Rule.work(NAMES, work_estimate, what="the runs"))


def _grid(data, acts, P, scales, inits=("balanced", "normal"), snaps=None):
    seeds = Cm.assumption5_split(data, P.width, P.seeds)[0]
    snaps = snaps if snaps is not None else sorted(set(range(0, P.steps + 1, P.fit_every)) | {P.steps})
    return Cm.train_grid(data, acts, P.width, Cm.combos(scales, seeds, inits=inits, lrs=[P.lr]), P.steps, snapshots=snaps)


#: Dataset 1.1.1 (the roles of 1.1.0's points swapped): the negative label first (positive - negative fit epoch > 0),
#: fit epochs and epochs to L < 0.01 as 1.1.0's (ratios within 10%); Fig. 3.14 (1.1.2): ReLU shows at most the initial
#: plateau, Sigmoid reaches L < 0.01 within 100 epochs (lazy only); Fig. 3.15 (1.1.2, lambda 1e-6): ReLU's
#: ||theta||^2 / 2 (min-norm 2), two ReLU directions, Sigmoid's sum_j a_j / 2 and ||theta||^2 / (4/m), its
#: hidden weights' ||W||_F; Fig. 3.16: two directions; Fig. 3.17 (1.1.4): ReLU's negative / positive fit
#: epochs ~ ||D+|| / ||D-|| = 10, its R^2 against ln(1/lambda), Sigmoid's single plateau
NEGATIVE_FIRST = C.above(0.0, strict=True)
SAME_DYNAMICS = C.within(0.9, 1.1)
NO_INTERMEDIATE = C.below(1, strict=False)
SIGMOID_LAZY = C.within(0, 100)
RELU_MIN_NORM = C.within(0.98, 1.02)
#: Figs 3.15 / 3.16, exactly two directions of the grown neurons (the thesis, line 1313: "we observe an unexpected
#: second direction in neuron alignment", "we still observe two directions of alignment"): "at least two" held for
#: any network that did not align (an untrained or a lazy one has a direction per neuron)
TWO_DIRECTIONS = C.within(2, 2)
OUTPUT_LAYER = C.within(0.99, 1.01)
SIGMOID_NORM = C.within(0.9, 1.1)
SMALL_W = C.below(1e-2)
RELU_RATIO = C.within(7, 13)
#: Fig. 3.17 as printed (000:1347): the positive fit "inversely proportional to y_2 x_2 = 10", the negative fit to
#: "y_1 x_1 = 0.1", so negative / positive fit epochs 10 / 0.1 = 100 (the inputs' bias coordinate dropped), in
#: RELU_RATIO's relative band (30% either side)
PRINTED_RATIO = 10.0 / 0.1
RELU_RATIO_AS_PRINTED = C.within(0.7 * PRINTED_RATIO, 1.3 * PRINTED_RATIO)
LN_LAMBDA = C.above(0.98)
SINGLE_DROP = C.within(1, 1)


def run(P) -> dict:
    """Every dataset variant's runs: 'switch' (1.1.0 and 1.1.1, ReLU), 'same' (1.1.2, three activations, rich
    scales and 1e-6), 'scaled' (1.1.2 with the second label times ``factor``, ReLU), 'alt' (1.1.4, c = 1)."""
    d0 = datasets.get("brisbois-orthogonal", device="cpu")
    d1 = datasets.get("brisbois-orthogonal", variant="1.1.1", device="cpu")
    d2 = datasets.get("brisbois-orthogonal", variant="1.1.2", device="cpu")
    d2s = datasets.get("brisbois-orthogonal", variant="1.1.2", factor=P.factor, device="cpu")
    d4 = datasets.get("brisbois-orthogonal", variant="1.1.4", device="cpu")
    lam = P.switch_scale / math.sqrt(P.width)
    out = dict(data={"1.1.0": d0, "1.1.1": d1, "1.1.2": d2, "1.1.2s": d2s, "1.1.4": d4})
    out["switch"] = {v: _grid(d, ["relu"], P, [lam], inits=("balanced",))["relu"] for v, d in (("1.1.0", d0), ("1.1.1", d1))}
    out["same"] = _grid(d2, T.ACTIVATIONS, P, sorted(set(P.rich_scales) | {1e-6}))
    out["scaled"] = _grid(d2s, ["relu"], P, [P.fig316_scale], inits=("balanced",), snaps=[0, P.steps])["relu"]
    out["alt"] = _grid(d4, T.ACTIVATIONS, P, sorted(P.rich_scales))
    return out


def seed_report(run: dict, P) -> str:
    """The page's line on the seeds: run and rejected (with why) on each dataset variant."""
    return "\n".join(f"Dataset {v}: " + Cm.describe_seeds(*Cm.assumption5_split(d, P.width, P.seeds))
                     for v, d in run["data"].items())


def directions(p, grown_rel: float = 0.05) -> torch.Tensor:
    """Distinct directions among grown neurons (‖w‖ >= grown_rel x the largest), cos tolerance 1e-3."""
    return metrics.distinct_directions(p.W, grown_rel=grown_rel, grown_threshold=0.0, cos_tol=1e-3)


def fit_epoch_table(e: Cm.Ensemble, data) -> np.ndarray:
    """(R, n) first snapshot epochs with abs(h(x_k) - y_k) < 0.1 abs(y_k)."""
    return Cm.fit_epochs(e.traj, data, e.act).numpy()


#: Fig. 3.14 (Dataset 1.1.2, Tanh "unchanged"): one plateau per curve, the initial one growing as lambda decreases, for
#: every initialisation and seed (:func:`one_plateau_growing`)
TANH_UNCHANGED = C.is_true()


def fit_slope_ratios(ens: Cm.Ensemble, fits: np.ndarray, scales) -> list[float]:
    """Per initialisation and seed of ``ens``: the slope of the negative-fit epoch against ln(1/lambda) over the
    positive-fit epoch's (``fits``: :func:`fit_epoch_table`, columns negative then positive), over ``scales``. The
    terms next to ln(1/lambda) in each fit time cancel in the slopes, so this is the ratio's small-lambda limit
    (Timeline 2.6 of 000: each phase ~ ln(1/lambda) / ||D+-||, a ratio ||D+|| / ||D-||)."""
    lams = sorted(scales)
    x = np.log(1 / np.array(lams))
    out = []
    for i in ("balanced", "normal"):
        for s in sorted({m["seed"] for m in ens.meta}):
            rows = [ens.runs(scale=lam, init=i, seed=s)[0] for lam in lams]
            neg, pos = Cm.regression(x, fits[rows, 0])[0], Cm.regression(x, fits[rows, 1])[0]
            out.append(neg / pos if pos != 0 else float("nan"))
    return out


def per_init_seed_valid(ens: Cm.Ensemble, scales) -> list[bool]:
    """Per initialisation and seed of ``ens``, in :func:`fit_slope_ratios`' order: whether every run the seed's fit
    over ``scales`` reads is finite (Cm.Ensemble.valid), the validity of that fit's one value."""
    ok = ens.valid()
    return [bool(all(ok[ens.runs(scale=lam, init=i, seed=s)[0]] for lam in sorted(scales)))
            for i in ("balanced", "normal") for s in sorted({m["seed"] for m in ens.meta})]


#: Fig. 3.17 (Dataset 1.1.4, c = 1, Tanh): "first half much faster", read on every run (:func:`two_stages`)
TANH_TWO_STAGES = C.is_true()


def two_stages(table, fits: np.ndarray) -> bool:
    """Fig. 3.17's Tanh reading, every run: a slow segment between the two halves of the drop (at least two plateaus
    in ``table``, Cm.plateau_table), or the second half (negative-fit minus positive-fit epoch) more than three times
    the first (the positive-fit epoch); ``fits``: :func:`fit_epoch_table`, columns negative then positive."""
    ratio = (fits[:, 0] - fits[:, 1]) / fits[:, 1]
    return all(table[r]["count"] >= 2 or ratio[r] > 3 for r in range(len(table)))


def one_plateau_growing(ens, table, scales) -> bool:
    """Per initialisation and seed of ``ens``, the initial plateau (``table``: Cm.plateau_table) strictly shorter at
    every larger lambda of ``scales``, and exactly one plateau on every curve."""
    lams = sorted(scales)
    inits, seeds = sorted({m["init"] for m in ens.meta}), sorted({m["seed"] for m in ens.meta})
    growing = [all(np.diff([table[ens.runs(scale=lam, init=i, seed=s)[0]]["initial"] for lam in lams]) < 0)
               for i in inits for s in seeds]
    return bool(all(growing) and all(table[r]["count"] == 1 for r in range(ens.traj.runs)))

