"""000, Section 3.4: multidimensional data (d = 5, n = 5).  Figs 3.33-3.36 on the printed orthogonal dataset (PCA of the
final hidden weights: two components for ReLU, essentially one for Sigmoid/Tanh), Figs 3.37-3.39 on non-orthogonal
data the thesis does not print (the book's seeded construction, :func:`shallowflow.engine.data.brisbois_multid_nonorthogonal`,
over several data seeds and two readings of the teacher's "variance 0.1"), and check C4 (two-neuron equivalence).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ...engine import data as D
from ...engine import init, metrics, train
from ...engine.models import Network
from ... import verdicts as C
from ...params import PROFILE, Float, Int, Ints, Rule, Sections, Str, gd_bytes, gd_work
from . import measures

ACTS = ("relu", "sigmoid", "tanh")

SECTIONS = ("orthogonal", "non-orthogonal")

SCHEMA = {
    "profile": PROFILE,
    "width": Int("m", low=2, high=5000),
    "lr": Float("step size alpha (MSE loss)", low=0, low_open=True, high=0.1),
    "steps": Int("epochs at most (a run stops once L < stop_below)", low=1000, high=10**8),
    "stop_below": Float("a run stops when its loss falls below this", low=0, low_open=True, high=1e-6),
    "relu_scale": Float("lambda of Figs 3.33/3.34 (ReLU)", low=0, low_open=True, high=100),
    "sigmoid_scale": Float("lambda of Fig 3.35 (Sigmoid)", low=0, low_open=True, high=100),
    "tanh_scale": Float("lambda of Fig 3.36 (Tanh)", low=0, low_open=True, high=100),
    "seeds": Ints("initialisation seeds (orthogonal data)", low=0),
    "nonorth_scale": Float("lambda of Figs 3.37-3.39", low=0, low_open=True, high=100),
    "data_seeds": Ints("seeds of the generated non-orthogonal datasets", low=0, min_len=1),
    "teacher": Str("activation of the teacher that labels the generated data", choices=("relu", "sigmoid", "tanh")),
    "teacher_stds": Ints("teacher weight std readings, in units of 1e-3 (100: 0.1; 316: sqrt(0.1))", low=1, high=10**4),
    "relu_extra_stds": Ints("further teacher std readings for ReLU only (the thesis's claim is about ReLU)", low=1,
                            high=10**4, min_len=0),
    "goal": Float("converged: final L below this", low=0, low_open=True, high=1e-2),
    "sections": Sections("the parts to run: orthogonal (Figs 3.33-3.36, C4) and non-orthogonal (Figs 3.37-3.39)",
                         choices=SECTIONS),
}
RULES = (
    Rule(("stop_below", "goal"), lambda P: P.stop_below < P.goal, "runs must be allowed to go below the goal"),
)


def _multid_calls(P):
    """Runs of every ensemble: orthogonal data (every seed) and the generated datasets, per activation."""
    extra = len([v for v in P.relu_extra_stds if v not in P.teacher_stds])
    return [len(P.seeds)] * 3 + [len(P.data_seeds) * len(P.teacher_stds)] * 2 + \
        [len(P.data_seeds) * (len(P.teacher_stds) + extra)]


def memory_estimate(P) -> float:
    """Every ensemble (n = d = 5) with its geometric snapshots and at most 4001 recorded losses per run."""
    S = len(_snaps(P.steps))
    return sum(gd_bytes(R, P.width, 5, 5, min(P.steps, 4000), 1, S) for R in _multid_calls(P))


def work_estimate(P) -> float:
    return sum(gd_work(R, P.width, 5, 5, P.steps) for R in _multid_calls(P))


NAMES = ("width", "steps", "seeds", "data_seeds", "teacher_stds", "relu_extra_stds")
RULES = RULES + (Rule.memory(NAMES, memory_estimate, what="the ensembles and their snapshots"),
                 Rule.work(NAMES, work_estimate, what="the runs"))


@dataclass
class Result:
    activation: str
    label: str  # "orthogonal" or "seed <s>, std <v>"
    traj: train.Trajectory
    evr: torch.Tensor  # (R, d) explained-variance ratios of the final W (uncentred PCA, as metrics)
    valid: torch.Tensor
    converged: torch.Tensor


def _snaps(steps: int) -> list[int]:
    return train.union(train.geometric_schedule(steps, 1.1), [steps])


def _train(act, data_list, scale, seeds, P, label) -> Result:
    p = init.balanced(list(seeds), P.width, data_list[0].d, scale)
    dat = data_list[0] if len(data_list) == 1 else data_list
    tr = train.gradient_descent(p, dat, Network(act), steps=P.steps, lr=P.lr, loss="mean", snapshots=_snaps(P.steps),
                                record_every=max(1, P.steps // 4000), stop_below=P.stop_below, on_nonfinite="stop")
    valid = measures.finite_runs(tr.loss, tr.final)
    evr = metrics.explained_variance_ratio(tr.final.W.nan_to_num(0.0))
    return Result(act, label, tr, evr, valid, valid & (tr.loss[:, -1] < P.goal))


#: Fig. 3.33: the first two principal components of the final ReLU weights explain their variance
TWO_COMPONENTS = C.above(0.99)


def two_components(res: Result) -> torch.Tensor:
    """EVR_1 + EVR_2 of each run's final weights (the Fig3.33/two-components measurement), (R,)."""
    return res.evr[:, 0] + res.evr[:, 1]


#: Figs 3.35 / 3.36 (Sigmoid, Tanh): the first principal component of the final weights dominates: EVR_1
ONE_COMPONENT = C.above(0.999)
#: Figs 3.35 / 3.36: "the explained variance of the second component, although small, is non-zero" (000:1563): EVR_2
#: above float64 noise (the size is Fig3.35/one-component's)
SECOND_NONZERO = C.above(1e-12)


def zero_loss(goal: float):
    """Figs 3.33 / 3.35 / 3.36: the final loss reaches the loss goal."""
    return C.below(goal)


#: Figs 3.37-3.39: the final weights' variance spreads over more than two components
SPREAD = C.below(0.99)


def spread(res: Result) -> torch.Tensor:
    """Figs 3.37-3.39's measurement, gated on training: EVR_1 + EVR_2 of the runs that reached the loss goal
    (``res.converged``); one nan when none did.  An untrained network's weights are the isotropic initial draw, whose
    EVR_1 + EVR_2 (about 2/d) is far below 0.99: ungated, the spread would "reproduce" without any training."""
    v = two_components(res)[res.converged]
    return v if v.numel() else torch.tensor([float("nan")], dtype=res.evr.dtype)


def spread_note(res: Result, labels: list[str]) -> str:
    """The runs the spread check leaves out (no loss goal reached), named with their final loss."""
    out = [f"{lab} (final L {float(res.traj.loss[j, -1]):.1e})" for j, lab in enumerate(labels) if not bool(res.converged[j])]
    return (f"read on the {int(res.converged.sum())} of {len(labels)} runs that reached the loss goal; left out: "
            + (", ".join(out) if out else "none"))[:600]


def run_multid(P) -> dict:
    """Orthogonal data: one ensemble per activation at its figure's lambda (every seed).  Non-orthogonal data: per
    activation one ensemble over the generated datasets (data seeds x teacher-std readings, init seed 0)."""
    orth = D.brisbois_multid()
    scales = {"relu": P.relu_scale, "sigmoid": P.sigmoid_scale, "tanh": P.tanh_scale}
    out = {"orth_data": orth, "orth": {}, "nonorth": {}, "nonorth_data": []}
    for act in ACTS if "orthogonal" in P.sections else ():
        out["orth"][act] = _train(act, [orth], scales[act], P.seeds, P, "orthogonal")
    def build(stds):
        return [(s, v / 1000.0, D.brisbois_multid_nonorthogonal(seed=s, teacher=P.teacher, teacher_std=v / 1000.0))
                for v in stds for s in P.data_seeds]
    out["nonorth_data"] = {}
    for act in ACTS if "non-orthogonal" in P.sections else ():
        stds = list(P.teacher_stds) + ([v for v in P.relu_extra_stds if v not in P.teacher_stds] if act == "relu" else [])
        datasets = build(stds)
        out["nonorth_data"][act] = datasets
        out["nonorth"][act] = _train(act, [d for _, _, d in datasets], P.nonorth_scale, [0] * len(datasets), P,
                                     "non-orthogonal")
    return out


def projections(W: torch.Tensor) -> torch.Tensor:
    """Rows of W (m, d) on their first two (uncentred) principal directions, (m, 2)."""
    _, _, Vh = torch.linalg.svd(W, full_matrices=False)
    return W @ Vh[:2].T


#: Figs. 3.35-3.36: the final neurons lie on an S-curve, read as Fig3.18's fit criterion (s_curves.GOOD_FIT)
SCURVE = C.above(0.95)


def scurve_r2(res: Result, form: str) -> torch.Tensor:
    """Figs. 3.35-3.36 (right panels): per run, the least-squares R^2 of the two-term form of ``form`` (eq. (3.1) for
    sigmoid, (3.2) for tanh; :func:`shallowflow.experiments.brisbois_thesis.s_curves.fit_scurve`, the frame turned to
    the best fit) to the final neurons projected on their first two principal components, (R,); nan for a run
    whose weights are not finite."""
    from .s_curves import fit_scurve

    out = []
    for r in range(res.traj.final.W.shape[0]):
        W = res.traj.final.W[r]
        if not bool(torch.isfinite(W).all()):
            out.append(float("nan"))
            continue
        out.append(fit_scurve(projections(W).numpy(), form=form).lsq.r2)
    return torch.tensor(out, dtype=torch.float64)


def ray_tightness(W: torch.Tensor, rel: float = 0.05) -> float:
    """Two rays from the origin: grown neurons (norm > rel * max) split by the sign of their first principal
    coordinate; the smallest cosine between a neuron and its group's mean direction."""
    n = W.norm(dim=-1)
    g = W[n > rel * n.max()]
    _, _, Vh = torch.linalg.svd(W, full_matrices=False)
    side = torch.sign(g @ Vh[0])
    worst = 1.0
    for sgn in (-1.0, 1.0):
        G = g[side == sgn]
        if len(G) == 0:
            continue
        u = G.sum(0)
        u = u / u.norm()
        worst = min(worst, float(((G @ u) / G.norm(dim=-1)).min()))
    return worst


def findings(claims, res) -> str:
    def say(cid, yes, no):
        return yes if claims.passed(cid) else no
    if not res["orth"] or not res["nonorth"]:
        return "- " + ("The orthogonal part" if not res["orth"] else "The non-orthogonal part") + " was not run in this run."
    e = res["orth"]["relu"].evr
    return "\n".join([
        "- " + say("Fig3.33/two-components", "On the printed orthogonal data the final ReLU weights lie in two "
                   "principal directions", "On the printed orthogonal data the final ReLU weights need more than two "
                   "principal directions") + f" (EVR_1 + EVR_2 from {float((e[:, 0] + e[:, 1]).min()):.4f}).",
        "- " + say("Fig3.35/one-component", "Sigmoid concentrates on one component, ", "Sigmoid does not concentrate on "
                   "one component, ") + say("Fig3.36/one-component", "and so does Tanh.", "Tanh does not."),
        "- " + (say("Fig3.37/spread", "On the generated non-orthogonal data the ReLU weights of every run that reached the "
                    "loss goal spread over more than two components", "On the generated non-orthogonal data some run that "
                    "reached the loss goal keeps the ReLU weights in two components")
                if bool(res["nonorth"]["relu"].converged.any()) else
                "No ReLU run on the generated non-orthogonal data reached the loss goal, so their spread is not measured")
        + "; the data are the book's construction, so this depends on it (see the table over data seeds and teacher scales).",
    ])
