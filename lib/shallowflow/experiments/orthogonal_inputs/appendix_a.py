"""003 (orthogonal inputs), chapter `appendix-a`: the non-orthogonal toy of Appendix A (E3a, E3b).

Appendix A is not in the source file; its parameters come from the authors' code
(github.com/eboursier/GFdynamics) as described in the specification.  Training is on the paper's loss
("half") with the authors' step (step 2e-3 on L); lambda = init_scale / sqrt(m).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from ... import verdicts as C
from ...engine import data as datasets
from ...engine import init, metrics, theory
from ...engine.config import DTYPE
from ...engine.models import Network, Params, flow_time_per_step
from ...params import Float, Floats, Int, Ints, PROFILE, Str, Rule, gd_bytes, gd_work
from ...engine.train import Trajectory, fixed_schedule, geometric_schedule, gradient_descent, union


SCHEMA = {
    "profile": PROFILE,
    "width": Int("number of hidden neurons m", low=1, high=100_000),
    "seeds": Ints("seeds (one run per seed, label variant and scale)", low=0, high=2 ** 63 - 1),
    "variants": Str("label variants: 'both', 'camera-ready' (y3 = -0.3) or 'early' (y3 = -0.4)",
                    choices=("both", "camera-ready", "early")),
    "early_init_scale": Float("E3a: the early code's scale; lambda = early_init_scale / width", low=0, low_open=True, high=10),
    "init_scales": Floats("E3b: camera-ready scales; lambda = init_scale / sqrt(width)", low=0, low_open=True, high=10),
    "lr": Float("step on the authors' mean MSE (step 2 lr on L)", low=0, low_open=True, high=1),
    "steps": Int("GD iterations", low=1, high=100_000_000),
    "record_every": Int("loss recorded every this many iterations", low=1, high=10_000_000),
    "panels": Ints("iterations shown in the four-panel figure", low=0, high=100_000_000),
}


N_POINTS = 5  # the non-orthogonal toy's points (datasets.NONORTHO_X), in dimension 2 with the bias coordinate


def _runs(P) -> int:
    """Runs of the one ensemble :func:`run_nonorthogonal` trains: label variants x (early + camera-ready scales) x
    seeds."""
    return (2 if P.variants == "both" else 1) * (1 + len(P.init_scales)) * len(P.seeds)


def _snapshots(P) -> int:
    """Parameter states the run stores: the 1.02-geometric schedule and the panels."""
    return len(union(geometric_schedule(P.steps, 1.02), fixed_schedule(P.panels, P.steps)))


def work_estimate(P) -> float:
    """Work units (:func:`shallowflow.params.gd_work`) of :func:`run_nonorthogonal`: one ensemble of ``_runs(P)``
    runs of ``width`` neurons on 5 points in dimension 2, ``steps`` GD iterations (every run to the end: those that
    converge below 1e-20 stop earlier, so this is an upper estimate)."""
    return gd_work(_runs(P), P.width, N_POINTS, 2, P.steps)


def memory_estimate(P) -> float:
    """Bytes of the one training call: the ensemble, its activations, the loss every ``record_every`` iterations
    and the stored snapshots (the turning angles read them all)."""
    return gd_bytes(_runs(P), P.width, N_POINTS, 2, P.steps, P.record_every, snapshots=_snapshots(P))


NAMES = ("width", "seeds", "variants", "init_scales", "steps")
RULES = (Rule.at_most("panels", "steps", "every panel must be an iteration of the run (<= steps)"),
         Rule.at_most("record_every", "steps", "the loss is recorded at least once after the start"),
         Rule.memory(NAMES + ("record_every", "panels"), memory_estimate,
                     what="the ensemble, its loss records and its snapshots"),
         Rule.work(NAMES, work_estimate, what="the non-orthogonal toy's training (runs x width x steps)"))


@dataclass
class NonOrthoRun:
    data: list  # one Dataset per run
    variants: list[str]
    seeds: list[int]
    setting: list[str]  # "early" (E3a, lambda = s / m) or "camera-ready" (E3b, lambda = s / sqrt(m))
    init_scale: list[float]
    lam: torch.Tensor
    traj: Trajectory
    p0: Params
    network: Network = field(default_factory=lambda: Network("relu"))

    def runs(self, setting: str | None = None, init_scale: float | None = None, variant: str | None = None):
        return [i for i in range(len(self.seeds)) if (setting is None or self.setting[i] == setting)
                and (init_scale is None or self.init_scale[i] == init_scale)
                and (variant is None or self.variants[i] == variant)]


def run_nonorthogonal(P) -> NonOrthoRun:
    """E3a and E3b in one ensemble: per label variant and seed, the early code's initialisation
    (lambda = early_init_scale / m) and every camera-ready scale (lambda = init_scale / sqrt(m)).

    Runs whose loss falls below 1e-20 (in L) are frozen there (large scales converge early)."""
    variants = ["camera-ready", "early"] if P.variants == "both" else [P.variants]
    settings = [("early", P.early_init_scale, P.early_init_scale / P.width)] + [
        ("camera-ready", float(s), float(s) / math.sqrt(P.width)) for s in P.init_scales]
    runs = [(v, st, s, lam, sd) for v in variants for (st, s, lam) in settings for sd in P.seeds]
    dsets = [datasets.nonorthogonal_toy(v) for v, *_ in runs]
    lam = torch.tensor([r[3] for r in runs], dtype=DTYPE)
    p0 = init.balanced([r[4] for r in runs], P.width, 2, lam)
    snaps = union(geometric_schedule(P.steps, 1.02), fixed_schedule(P.panels, P.steps))
    traj = gradient_descent(p0, dsets, Network("relu"), steps=P.steps, lr=flow_time_per_step(P.lr, "mean"),
                            loss="half", snapshots=snaps, record_every=P.record_every, stop_below=1e-20)
    return NonOrthoRun([d.to("cpu") for d in dsets], [r[0] for r in runs], [r[4] for r in runs],
                       [r[1] for r in runs], [r[2] for r in runs], lam, traj, p0.to("cpu"))


def nonorthogonal_summary(run: NonOrthoRun, interval=(-2.5, 3.0)) -> dict:
    """Per run: final loss (and relative to initial), ||theta||^2 and its gap to the LP minimum of its
    labels, kinks of h on the plotting interval, escapes, ends-on-plateau, turning angles."""
    p = run.traj.final
    L = run.traj.loss
    min_sq = {v: theory.min_squared_norm_1d(datasets.nonorthogonal_toy(v, device="cpu").X,
                                            datasets.nonorthogonal_toy(v, device="cpu").y)
              for v in sorted(set(run.variants))}
    ms = torch.tensor([min_sq[v] for v in run.variants], dtype=DTYPE)
    sq = metrics.squared_norm(p)
    sv = metrics.saddle_visits(L, run.traj.loss_steps, stopped_at=run.traj.stopped_at)
    fp = metrics.flat_plateaus(L, run.traj.loss_steps, stopped_at=run.traj.stopped_at)
    turning = metrics.turning_angles(run.traj.snap_W, p.W)
    return dict(final_loss=L[:, -1], loss_ratio=L[:, -1] / L[:, 0], squared_norm=sq, min_squared_norm=min_sq,
                rel_gap=(sq - ms) / ms, kinks=metrics.kinks_of_function(p, interval), saddles=sv, flat=fp,
                turning=turning, max_turning=torch.nan_to_num(turning, nan=0.0).amax(1))


# E3b: "small initialisation" is the smallest camera-ready scale whose runs all converge (final L below CONVERGED of
# its initial value and not ending on a plateau); the large scales are compared with it run for run
CONVERGED = 1e-3
NORM_ABOVE_SMALL_INIT = C.above(0.01)  # E3b/norm-above-small-init: rel. gap minus the reference run's
MORE_KINKS = C.above(1)  # E3b/more-kinks: kinks of h minus the reference run's
E3A_LOSS_SMALL = C.below(1e-3)  # E3a/loss-small: final L / initial L
E3A_STILL_DECREASING = C.is_true("all runs")  # E3a/still-decreasing: 1 where the run does not end on a plateau
E3A_INTERMEDIATE_SADDLE = C.above(2)  # E3a/intermediate-saddle: escapes from saddles
E3A_REALIGN = C.above(0.05)  # E3a/realign: max turning of the grown neurons (rad)


def still_decreasing(S: dict) -> torch.Tensor:
    """E3a/still-decreasing, per run: 1 where the loss is still falling at the end of the run, 0 where it ends on a
    plateau.  003 (line 211): "the training trajectory thus starts at the saddle point 0": a run whose decay rate never
    peaked (metrics.saddle_visits counts no escape) never left that first saddle and ends on the plateau it started
    on, so it measures 0 as a run that ends on a later plateau does (``ends_on_plateau`` alone asks for an escape
    before the end, and would count a curve that never fell as still falling)."""
    sv = S["saddles"]
    return ((sv["escapes"] > 0) & ~sv["ends_on_plateau"]).double()


def reference_scale(run: NonOrthoRun, S: dict, scales) -> float | None:
    """The smallest of ``scales`` whose camera-ready runs all converged (None if none did: an untrained or
    unconverged ensemble has no reference, and the E3b comparisons measure nan)."""
    conv = (S["loss_ratio"] < CONVERGED) & ~S["saddles"]["ends_on_plateau"]
    return next((s for s in sorted(scales) if all(bool(conv[i]) for i in run.runs("camera-ready", s))), None)


def paired_with_reference(run: NonOrthoRun, quantity: torch.Tensor, scales, ref_scale) -> torch.Tensor:
    """quantity(run at scale s) - quantity(reference run), for the same label variant and seed, over the camera-ready
    runs at ``scales``; nan when there is no reference or no pair."""
    out = []
    if ref_scale is not None:
        for s in scales:
            for i in run.runs("camera-ready", s):
                j = [k for k in run.runs("camera-ready", ref_scale)
                     if run.variants[k] == run.variants[i] and run.seeds[k] == run.seeds[i]][0]
                out.append(float(quantity[i] - quantity[j]))
    t = torch.as_tensor(out, dtype=torch.float64).reshape(-1)
    return t if t.numel() else torch.tensor([float("nan")], dtype=torch.float64)
