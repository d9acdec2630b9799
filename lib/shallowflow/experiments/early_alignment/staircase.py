"""002 (early alignment), chapter `staircase`: Section 5's 40-point experiment (Figure 3): plateaus of the
loss, the neurons that carry the fit and the bumps of the teacher.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ...engine import data as datasets
from ... import verdicts as C
from ...engine import metrics
from ...engine.config import DTYPE
from ...engine.models import Network, Params
from ...params import Bool, Float, Int, Ints, PROFILE, Rule, STEP_BUDGET, ensemble_bytes, gd_work
from ...engine.train import gradient_descent
from ...engine import checkpoint
from ...engine.checkpoint import resumable
from .theory import CPU, LOSS, TWO_PI, TYPICAL, authors_frames, initialise, largest_frame_rise, typical_share


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
    "level": Float("level of the Wilson intervals of the shares of runs (Figure 3 shows one run of a typical behaviour)",
                   low=0.5, high=0.999, low_open=True),
    "resume": Bool("keep each finished piece of 100,000 iterations of the runs on disk and read it back when the same "
                   "parameters run again with the same package code (shallowflow.engine.checkpoint): an interrupted paper run "
                   "resumes where it stopped with identical numbers; off in the book and smoke profiles"),
}


def _steps(P) -> int:
    return int(round(P.time / P.lr))


def _frames(steps: int) -> int:
    """How many parameter snapshots a run keeps: the authors' schedule up to ``steps`` and the last iteration."""
    return len(set(authors_frames(steps)) | {steps})


def work_estimate(P) -> float:
    """Work units (:func:`shallowflow.params.gd_work`) of the chapter: one run per seed for time / lr steps and the
    first seed again at lr / 2 (twice the steps), on n_points points with the bias coordinate (d = 2); plus the
    largest slope of every run on 4001 points."""
    return (gd_work(len(P.seeds), P.width, P.n_points, 2, P.time / P.lr)
            + gd_work(1, P.width, P.n_points, 2, 2 * P.time / P.lr) + gd_work(len(P.seeds), P.width, 4001, 2, 1))


def memory_estimate(P) -> float:
    """The recorded losses (at most 8001 per run: one per steps // 4000) and the snapshots (every frame of the authors'
    schedule, held up to three times while the pieces of the runs are joined) of the main runs and of the
    half-step run, with the working copies of the ensembles."""
    R = len(P.seeds)
    return (8.0 * (R + 1) * 8002 + ensemble_bytes(R, P.width, 2, 6 + 3 * _frames(_steps(P)))
            + ensemble_bytes(1, P.width, 2, 6 + 3 * _frames(2 * _steps(P))))


RULES = (Rule.budget(("time", "lr"), lambda P: 2 * P.time / P.lr, STEP_BUDGET, what="the half-step run (2 time / lr)"),
         Rule.at_most("plateau_time", "time", "a plateau must fit in the run"),
         Rule.work(("seeds", "width", "n_points", "time", "lr"), work_estimate,
                   what="the runs (above the budget, a GPU or a cluster: at the authors' width 200,000 a seed costs about "
                        "20 CPU-hours of the 2-core machine and the half-step run 40)"),
         Rule.memory(("seeds", "time", "lr", "width"), memory_estimate,
                     what="the loss records and the snapshots of the runs (a larger machine: SHALLOWFLOW_MEMORY_GB)"))


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
    traj: object  # shallowflow.engine.train.Trajectory
    frames: list
    seeds: list
    scale: float


# E3/staircase: plateaus at (at least three) distinct loss levels per run; the tests feed it a null scenario
STAIRCASE = C.above(3)
LEARNED = 0.1  # a run learned when its final loss is below this fraction of L(0) [choice] (E3/learned)
LEARNED_CHECK = C.below(LEARNED)  # E3/learned: every run's final loss over L(0)


SEGMENT = 100_000  # iterations of one stored piece of a run (rounded to a multiple of the record interval)


def _segments(steps: int, rec: int) -> list[tuple[int, int]]:
    """[k0, k1) pieces of a run of ``steps`` iterations, each a multiple of ``rec`` long but the last."""
    L = max(rec, (SEGMENT // rec) * rec)
    bounds = list(range(0, steps, L)) + [steps]
    return list(zip(bounds[:-1], bounds[1:])) or [(0, 0)]


def _train(P, seeds: list, data: datasets.Dataset, steps: int, frames: list):
    """The unbalanced runs of ``seeds``, one ensemble, each run seeded by itself alone (the kernel's runs are
    independent loops, so a run's numbers are those it has alone or in any batch, and an ensemble keeps the kernel's
    threads and a GPU busy), trained in pieces of SEGMENT iterations, each continued from the last one's parameters:
    gradient descent depends on nothing but the parameters, so the pieces give the numbers of one uninterrupted call
    bit for bit (tests/test_early_alignment_resume.py).  With ``P.resume`` every finished piece is kept on disk
    (:func:`shallowflow.engine.checkpoint.resumable`, keyed by the parameters, the seeds and the piece) and read back by a
    run with the same parameters and package code: an interrupted run of hours resumes at its last piece."""
    net, rec = Network("relu"), max(1, steps // 4000)
    key = dict(n_points=P.n_points, data_seed=P.data_seed, width=P.width, init_scale=P.init_scale, lr=P.lr,
               time=P.time)
    state = {"p": initialise("unbalanced", [int(s) for s in seeds], P.width, 2, P.init_scale)}

    def piece(c):
        _, k0, k1 = c
        snaps = [f - k0 for f in frames if k0 <= f <= k1]
        return gradient_descent(state["p"], data, net, steps=k1 - k0, lr=P.lr, loss=LOSS, snapshots=snaps,
                                record_every=rec)

    parts, resumed = [], 0
    for k0, k1 in _segments(steps, rec):
        tr = resumable("early-alignment/staircase", key, [([int(s) for s in seeds], k0, k1)], piece,
                       enabled=bool(getattr(P, "resume", False)), say=False)[0]
        resumed += checkpoint.last_resumed
        state["p"] = tr.final
        parts.append((k0, tr))
    if resumed:
        print(f"early-alignment/staircase: {resumed} of {len(parts)} pieces of {len(seeds)} run(s) read back from "
              "checkpoints (an earlier run computed them)")
    return _join(parts, steps)


def _join(parts: list, steps: int):
    """One run's trajectory from its pieces (each starts where the last ended; shared boundary records dropped)."""
    first = parts[0][1]
    keep = lambda k0, tr: [i for i, k in enumerate(tr.snap_steps) if k0 == 0 or k > 0]  # noqa: E731
    snap_steps = [k0 + tr.snap_steps[i] for k0, tr in parts for i in keep(k0, tr)]
    snap_a = torch.cat([tr.snap_a[keep(k0, tr)] for k0, tr in parts])
    snap_W = torch.cat([tr.snap_W[keep(k0, tr)] for k0, tr in parts])
    loss = torch.cat([tr.loss if j == 0 else tr.loss[:, 1:] for j, (_, tr) in enumerate(parts)], 1)
    rec = int(first.loss_steps[1] - first.loss_steps[0]) if first.loss_steps.numel() > 1 else 1
    last = parts[-1][1]
    stopped = None if last.stopped_at is None else last.stopped_at + parts[-1][0]
    return type(first)(network=first.network, loss_convention=first.loss_convention, lr=first.lr, steps=steps,
                       loss_steps=torch.arange(0, steps + 1, rec), loss=loss, snap_steps=snap_steps, snap_a=snap_a,
                       snap_W=snap_W, final=last.final, seconds=sum(tr.seconds for _, tr in parts),
                       stopped_at=stopped, info=dict(last.info))


# E4/figure3-descent: the largest loss rise between consecutive animation frames over L(0) (largest_frame_rise).
# Plain comments (not #:): see DOMINATED_NO_ZERO in spurious.py.
FIGURE3_DESCENT = C.below(1e-12)
# E3/step-size: the plateau levels at lr and lr / 2 match (largest relative gap, level_gap)
STEP_SIZE_LEVELS = C.below(1e-3)


def level_gap(levels: list, levels_half: list) -> float:
    """E3/step-size: the largest relative gap between the common plateau levels (:func:`distinct_levels`) of a run at
    step lr and of the same run at lr / 2 (nan when either has none)."""
    n_common = min(len(levels), len(levels_half))
    return max((abs(a_ / b_ - 1) for a_, b_ in zip(levels[:n_common], levels_half[:n_common])), default=math.nan)


def run_staircase(P) -> Staircase:
    """Unbalanced runs on the 40-point data (one per seed, one ensemble), snapshots on the authors' frames, trained
    in pieces and resumable with ``P.resume`` (:func:`_train`)."""
    data = datasets.get("stewart", device=CPU, n=P.n_points, seed=P.data_seed)
    steps = int(round(P.time / P.lr))
    frames = sorted(set(authors_frames(steps)) | {steps})
    return Staircase(data, _train(P, list(P.seeds), data, steps, frames), frames, list(P.seeds), P.init_scale)


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
    h = Network("relu").evaluate(p, datasets.augment_bias(xs))
    return (torch.diff(h, dim=-1) / (xs[1] - xs[0])).abs().amax(-1)


def behaviour(st: Staircase, levels: list, pls: list, L_nobump: float, P) -> dict:
    """Figure 3's behaviours, one flag per run (the source shows one run; "optimisation is hard on this example" is a
    claim on a typical run, so each check states the share of runs showing it, with its Wilson interval at
    ``P.level``).  Every flag requires that the run learned (final loss below LEARNED L(0), E3/learned): on a run
    that did not train, a constant fit, a positive final loss and a flat end hold by themselves.

    Returns the per-run values (``values``) and flags (``flags``) of: ``staircase`` (at least three distinct plateau
    levels), ``first-plateau-constant`` (the first plateau below 0.99 L(0), the fit there has max abs(h') < 0.05),
    ``final-loss-positive`` (L_end >= 1e-3), ``final-converged`` (relative change over the last 20% < 1e-6),
    ``versus-no-bump`` (L_end >= 0.1 L of the teacher without its bumps), ``effective-neurons`` (< 7.5 direction
    clusters), ``bump-cones-empty`` (no significant neuron kinked in a bump's data interval),
    ``omnidirectional-early`` (the run's own end of the early phase, its first frame at <= 0.99 L(0): more than 18
    of 36 direction bins hold a neuron) and ``omnidirectionality-lost`` (in the middle of the first plateau and at
    the end, some of the 36 bins hold no neuron of norm >= 1% of the largest)."""
    tr, data, frames = st.traj, st.data, st.frames
    R = tr.loss.shape[0]
    L0, L_end = tr.loss[:, 0], tr.loss[:, -1]
    learned = L_end / L0 < LEARNED
    cut = int(0.8 * tr.loss.shape[1])
    rel_change = (tr.loss[:, cut] - L_end).abs() / L_end

    def near(time_):
        return min(frames, key=lambda k: abs(k * P.lr - time_))

    first = [p[0] if p else None for p in pls]
    k_first = [near((f[0] + f[1]) / 2) if f else 0 for f in first]
    slope = torch.tensor([float(max_slope(tr.at(k).select(r))[0]) for r, k in enumerate(k_first)])
    first_low = torch.tensor([f is not None and f[2] < 0.99 * float(L0[r]) for r, f in enumerate(first)])
    net = Network("relu")
    k_cd, occ_cd = [], []
    for r in range(R):
        k = next((k for k in frames
                  if float(net.loss(tr.at(k).select(r), data.X, data.y, LOSS)[0]) <= 0.99 * float(L0[r])), None)
        k_cd.append(k)
        occ_cd.append(int(occupied_bins(tr.at(k).select(r), rel=0.0)[0]) if k is not None else 0)
    occ_cd = torch.tensor(occ_cd)
    occ_first = torch.tensor([int(occupied_bins(tr.at(k).select(r))[0]) for r, k in enumerate(k_first)])
    occ_end = occupied_bins(tr.final)
    k_ef = effective_neurons(tr.final)
    bumps = bump_cone_neurons(tr.final, data)
    n_levels = torch.tensor([len(lv) for lv in levels])
    values = {"staircase": n_levels, "first-plateau-constant": slope, "final-loss-positive": L_end,
              "final-converged": rel_change, "versus-no-bump": L_end / L_nobump, "effective-neurons": k_ef,
              "bump-cones-empty": bumps, "omnidirectional-early": occ_cd,
              "omnidirectionality-lost": torch.maximum(occ_first, occ_end)}
    flags = {"staircase": torch.tensor([STAIRCASE(int(n)) for n in n_levels]),
             "first-plateau-constant": first_low & (slope < 0.05), "final-loss-positive": L_end >= 1e-3,
             "final-converged": rel_change < 1e-6, "versus-no-bump": L_end / L_nobump >= 0.1,
             "effective-neurons": k_ef < 7.5, "bump-cones-empty": bumps < 0.5,
             "omnidirectional-early": occ_cd > 18, "omnidirectionality-lost": values["omnidirectionality-lost"] < 36}
    flags = {k: torch.as_tensor(v, dtype=torch.bool).reshape(R) & learned for k, v in flags.items()}
    return dict(values=values, flags=flags, learned=learned, k_first=k_first, k_cd=k_cd, L_end=L_end,
                L0=L0, occ_first=occ_first, occ_end=occ_end)


def typical(flags: torch.Tensor, level: float) -> tuple[float, str]:
    """The lower end of the Wilson interval of the share of runs showing a behaviour, and its description."""
    return typical_share(flags, level)
