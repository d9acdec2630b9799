"""002 (early alignment), chapter `staircase`: Section 5's 40-point experiment (Figure 3): plateaus of the
loss, the neurons that carry the fit and the bumps of the teacher.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ... import data as datasets
from ... import verdicts as C
from ... import metrics
from ...config import DTYPE
from ...models import Network, Params
from ...params import Float, Int, Ints, PROFILE, Rule, STEP_BUDGET, ensemble_bytes
from ...train import gradient_descent
from .theory import CPU, LOSS, TWO_PI, authors_frames, initialise


SCHEMA = {
    "profile": PROFILE,
    "n_points": Int("number of data points x ~ U[-1, 1]", low=2, high=100_000),
    "data_seed": Int("seed of the data sample (the authors' code sets none)", low=0),
    "width": Int("number of hidden neurons m", low=1, high=1_000_000),
    "init_scale": Float("lambda of eq. (3)", low=0, low_open=True, high=10),
    "lr": Float("step on the mean squared error (flow time per step)", low=0, low_open=True, high=1),
    "time": Float("flow time of the runs", low=0, low_open=True, high=1e6),
    "seeds": Ints("one unbalanced run per seed (the figure shows the first)", low=0, high=2 ** 63 - 1),
    "plateau_rtol": Float("a plateau: the loss stays within this relative band...", low=0, low_open=True, high=1),
    "plateau_time": Float("...for at least this flow time", low=0, low_open=True, high=1e6),
    "animation_frames": Int("frames of the animation (E4), taken from the authors' snapshot schedule; 0: none",
                            low=0, high=1000),
}
RULES = (Rule.budget(("time", "lr"), lambda P: P.time / P.lr, STEP_BUDGET, what="the run (time / lr)"),
         Rule.at_most("plateau_time", "time", "a plateau must fit in the run"),
         Rule.memory(("seeds", "time", "lr", "width"),
                     lambda P: 8.0 * len(P.seeds) * P.time / P.lr + ensemble_bytes(len(P.seeds), P.width, 2, 60),
                     what="the loss of every iteration and the frames"))


NO_BUMP_KNOTS = dict(x=[-1.0, -0.4, 0.0, 0.5, 1.0], y=[0.0, 1.0, 0.0, 1.0, 0.0])  # [R] the spec's 4-kink teacher


BUMP_KNOTS = (-0.7, -0.55, 0.6, 0.7)  # the kinks of the two "little bumps" (spec, E3.3)


def no_bump_teacher(x: torch.Tensor) -> torch.Tensor:
    """The teacher without its two little bumps [R]: the interpolant through NO_BUMP_KNOTS."""
    kx = torch.tensor(NO_BUMP_KNOTS["x"], dtype=DTYPE)
    ky = torch.tensor(NO_BUMP_KNOTS["y"], dtype=DTYPE)
    x = torch.as_tensor(x, dtype=DTYPE).clamp(-1.0, 1.0)
    i = torch.searchsorted(kx, x, right=True).clamp(1, len(kx) - 1)
    return ky[i - 1] + (ky[i] - ky[i - 1]) * (x - kx[i - 1]) / (kx[i] - kx[i - 1])


def plateaus(t: torch.Tensor, L: torch.Tensor, rtol: float, min_time: float) -> list[tuple[float, float, float]]:
    """Maximal stretches [t_i, t_j] over which max L / min L <= 1 + rtol lasting at least ``min_time``, scanned
    left to right (greedy); each as (start, end, median level)."""
    t, L = t.tolist(), L.tolist()
    out, i, K = [], 0, len(L)
    while i < K:
        lo = hi = L[i]
        j = i
        while j + 1 < K:
            lo2, hi2 = min(lo, L[j + 1]), max(hi, L[j + 1])
            if hi2 > (1 + rtol) * lo2:
                break
            lo, hi, j = lo2, hi2, j + 1
        if t[j] - t[i] >= min_time:
            seg = sorted(L[i:j + 1])
            out.append((t[i], t[j], seg[len(seg) // 2]))
            i = j + 1
        else:
            i += 1
    return out


def distinct_levels(pl: list, rtol: float) -> list[float]:
    """Plateau levels that differ from each other by more than 2 rtol (relative)."""
    levels = []
    for _, _, v in pl:
        if all(abs(v - u) > 2 * rtol * max(abs(u), 1e-300) for u in levels):
            levels.append(v)
    return levels


@dataclass
class Staircase:
    data: datasets.Dataset
    traj: object  # shallowflow.train.Trajectory
    frames: list
    seeds: list
    scale: float


# E3/staircase: plateaus at (at least three) distinct loss levels per run; the tests feed it a null scenario
STAIRCASE = C.above(3)


def run_staircase(P) -> Staircase:
    """Unbalanced runs (one per seed, one ensemble) on the 40-point data, snapshots on the authors' frames."""
    data = datasets.get("stewart", device=CPU, n=P.n_points, seed=P.data_seed)
    steps = int(round(P.time / P.lr))
    frames = sorted(set(authors_frames(steps)) | {steps})
    p0 = initialise("unbalanced", P.seeds, P.width, 2, P.init_scale)
    tr = gradient_descent(p0, data, Network("relu"), steps=steps, lr=P.lr, loss=LOSS, snapshots=frames,
                          record_every=max(1, steps // 4000))
    return Staircase(data, tr, frames, list(P.seeds), P.init_scale)


def significant(p: Params, rel: float = 1e-3) -> torch.Tensor:
    """Neurons whose abs(a_j) norm(w_j) is at least ``rel`` of the run's total (R, m)."""
    c = p.a.abs() * metrics.neuron_norms(p)
    return c >= rel * c.sum(-1, keepdim=True)


def effective_neurons(p: Params, rel: float = 1e-3, gap: float = 1e-2) -> torch.Tensor:
    """Clusters of the directions (angles on the circle) of the significant neurons, gaps > ``gap`` rad [choice]."""
    out = []
    for r in range(p.runs):
        sel = significant(p.select(r), rel)[0]
        ang = torch.sort(torch.atan2(p.W[r, sel, 1], p.W[r, sel, 0]).remainder(TWO_PI)).values
        if ang.numel() == 0:
            out.append(0)
            continue
        gaps = torch.diff(torch.cat([ang, ang[:1] + TWO_PI]))
        out.append(max(1, int((gaps > gap).sum())))
    return torch.tensor(out)


def bump_cone_neurons(p: Params, data: datasets.Dataset, rel: float = 1e-3) -> torch.Tensor:
    """Significant neurons whose kink lies in a data interval (an activation cone) that contains a bump knot."""
    xs = torch.sort(data.x1d.to(CPU)).values
    k = metrics.kinks(p)
    sig = significant(p, rel)
    count = torch.zeros(p.runs, dtype=torch.int64)
    for knot in BUMP_KNOTS:
        i = int(torch.searchsorted(xs, torch.tensor(knot, dtype=DTYPE)))
        lo = xs[i - 1] if i > 0 else torch.tensor(-math.inf, dtype=DTYPE)
        hi = xs[i] if i < xs.numel() else torch.tensor(math.inf, dtype=DTYPE)
        count += (sig & (k > lo) & (k < hi)).sum(-1)
    return count


def occupied_bins(p: Params, rel: float = 1e-2, bins: int = 36) -> torch.Tensor:
    """Direction bins (of ``bins`` on the circle) holding a neuron with norm(w_j) >= rel max norm(w), per run."""
    nrm = metrics.neuron_norms(p)
    big = nrm >= rel * nrm.amax(-1, keepdim=True)
    b = (torch.atan2(p.W[..., 1], p.W[..., 0]).remainder(TWO_PI) / TWO_PI * bins).long().clamp(0, bins - 1)
    return torch.tensor([int(torch.unique(b[r][big[r]]).numel()) for r in range(p.runs)])


def max_slope(p: Params, lo: float = -1.0, hi: float = 1.0) -> torch.Tensor:
    """max abs(h'(x)) over [lo, hi] by finite differences on 4001 points, per run."""
    xs = torch.linspace(lo, hi, 4001, dtype=DTYPE)
    h = Network("relu").forward(p, datasets.augment_bias(xs))
    return (torch.diff(h, dim=-1) / (xs[1] - xs[0])).abs().amax(-1)
