"""Full-batch gradient descent over ensembles of independent runs, with snapshot schedules.

One call trains R runs (differing in seed, initial scale, step size, ...) as one tensor computation
with the hand-derived gradients of :meth:`Network.gradients`.  The loss of every run is recorded at
every ``record_every``-th iteration on the device, parameters are copied at the iterations of a
snapshot schedule, and a loss that stops being finite is reported with the iteration (and run)
where it first appeared.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import torch

from .config import DTYPE
from .data import Dataset
from .models import Network, Params, flow_time_per_step, loss_factor


class DivergenceError(RuntimeError):
    """The loss of some run became non-finite (or exploded) during training."""


def geometric_schedule(steps: int, factor: float = 1.05) -> list[int]:
    """Iterations 0, 1, then floor(factor * previous) + 1, ... up to ``steps`` (included).

    With factor 1.05 this is the frame schedule of the authors' code for 003 (153 frames over 20000
    iterations).
    """
    if factor <= 1:
        raise ValueError(f"factor must be > 1, got {factor}")
    out = [0]
    k = 1
    while k <= steps:
        out.append(k)
        k = int(math.floor(factor * k)) + 1
    return out


def fixed_schedule(points: Iterable[int], steps: int) -> list[int]:
    """The given iterations, clipped to [0, steps], sorted, without duplicates."""
    return sorted({int(k) for k in points if 0 <= int(k) <= steps})


def union(*schedules: Iterable[int]) -> list[int]:
    return sorted(set().union(*map(set, schedules)))


@dataclass
class Trajectory:
    """What one ensemble training run leaves behind (all tensors on the CPU)."""

    network: Network
    loss_convention: str
    lr: torch.Tensor  # (R,)
    steps: int
    loss_steps: torch.Tensor  # (K,) iterations at which the loss is recorded
    loss: torch.Tensor  # (R, K) loss in the training convention
    snap_steps: list[int]
    snap_a: torch.Tensor  # (S, R, m)
    snap_W: torch.Tensor  # (S, R, m, d)
    final: Params
    seconds: float = 0.0
    stopped_at: torch.Tensor | None = None  # (R,) iteration where a run stopped (steps if it never did)
    info: dict = field(default_factory=dict)

    @property
    def runs(self) -> int:
        return self.lr.shape[0]

    def at(self, step: int) -> Params:
        """Parameters at a snapshot iteration."""
        try:
            i = self.snap_steps.index(step)
        except ValueError:
            raise KeyError(f"iteration {step} is not a snapshot; snapshots: {self.snap_steps[:5]}...") from None
        return Params(self.snap_a[i], self.snap_W[i])

    def loss_in(self, convention: str) -> torch.Tensor:
        """The recorded loss expressed in another convention ("half" or "mean")."""
        return self.loss * (loss_factor(convention) / loss_factor(self.loss_convention))

    def flow_time(self) -> torch.Tensor:
        """Gradient-flow time of the papers' 1/(2n) loss at each recorded iteration, shape (R, K)."""
        per_step = torch.tensor([flow_time_per_step(float(l), self.loss_convention) for l in self.lr], dtype=DTYPE)
        return per_step[:, None] * self.loss_steps[None, :].to(DTYPE)

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.seconds if self.seconds > 0 else float("nan")


def _per_run(lr, runs: int, device) -> torch.Tensor:
    t = torch.as_tensor(lr, dtype=DTYPE).reshape(-1)
    if t.numel() == 1:
        t = t.expand(runs)
    if t.numel() != runs:
        raise ValueError(f"lr must be a scalar or one value per run ({runs}), got {t.numel()} values")
    if not torch.all(t > 0):
        raise ValueError(f"lr must be > 0, got {t.tolist()}")
    return t.clone().to(device)


def gradient_descent(
    params: Params,
    data: Dataset,
    network: Network = Network(),
    *,
    steps: int,
    lr,
    loss: str = "half",
    snapshots: Sequence[int] = (),
    record_every: int = 1,
    stop_below: float | None = None,
    on_nonfinite: str = "raise",
    explode_factor: float = 1e12,
    check_every: int = 1000,
) -> Trajectory:
    """Train every run of ``params`` by full-batch GD for ``steps`` iterations.

    lr: a scalar or one step size per run.  loss: "half" (1/(2n) sum) or "mean" (1/n sum).
    snapshots: iterations at which parameters are stored.  stop_below: a run whose loss falls
    below this value stops updating (the others go on).  on_nonfinite: "raise" stops everything
    with :class:`DivergenceError` naming the first bad iteration; "stop" freezes only the runs
    concerned (their later losses are recorded as NaN).  A loss above ``explode_factor`` times
    its initial value counts as divergence too.
    """
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    if on_nonfinite not in ("raise", "stop"):
        raise ValueError(f"on_nonfinite must be 'raise' or 'stop', got {on_nonfinite!r}")
    loss_factor(loss)
    p = params.clone()
    device = p.a.device
    X, y = data.X.to(device), data.y.to(device)
    R = p.runs
    lr_t = _per_run(lr, R, device)
    lr_a, lr_W = lr_t[:, None], lr_t[:, None, None]
    snap_set = set(fixed_schedule(snapshots, steps))
    snaps_a, snaps_W, snap_steps = [], [], []
    K = steps // record_every + 1
    loss_hist = torch.full((R, K), float("nan"), dtype=DTYPE, device=device)
    masked = stop_below is not None or on_nonfinite == "stop"
    active = torch.ones(R, dtype=torch.bool, device=device)
    stopped_at = torch.full((R,), steps, dtype=torch.long)
    L0 = None
    t0 = time.perf_counter()

    def check(upto: int):
        """Raise on the first non-finite or exploded loss recorded so far (raise mode)."""
        rec = loss_hist[:, : upto // record_every + 1]
        bad = ~torch.isfinite(rec) | (rec > explode_factor * L0[:, None])
        if masked:
            return
        if bool(bad.any()):
            r, k = divmod(int(torch.nonzero(bad.flatten())[0]), rec.shape[1])
            raise DivergenceError(
                f"the loss of run {r} became {'non-finite' if not math.isfinite(float(rec[r, k])) else 'explosive'} "
                f"(L = {float(rec[r, k]):.3g}, initial {float(L0[r]):.3g}) at iteration {k * record_every} "
                f"with step size lr = {float(lr_t[r]):.3g}: reduce 'lr'")

    for k in range(steps + 1):
        if k in snap_set:
            snap_steps.append(k)
            snaps_a.append(p.a.clone())
            snaps_W.append(p.W.clone())
        L, ga, gW = network.gradients(p, X, y, loss)
        if k == 0:
            L0 = L.clone()
        if masked:
            ok = torch.isfinite(L) & (L <= explode_factor * L0)
            newly = active & ~ok
            if stop_below is not None:
                newly = newly | (active & (L < stop_below))
            if bool(newly.any()):
                stopped_at[newly.cpu()] = k
            active = active & ~newly
            L = torch.where(ok, L, torch.full_like(L, float("nan")))
        if k % record_every == 0:
            loss_hist[:, k // record_every] = L
        if k == steps:
            break
        if masked:
            step_a = torch.where(active[:, None], lr_a * ga, torch.zeros_like(ga))
            step_W = torch.where(active[:, None, None], lr_W * gW, torch.zeros_like(gW))
            p.a.sub_(step_a)
            p.W.sub_(step_W)
        else:
            p.a.sub_(lr_a * ga)
            p.W.sub_(lr_W * gW)
        if (k + 1) % check_every == 0:
            check(k)
    check(steps)
    seconds = time.perf_counter() - t0

    S = len(snap_steps)
    cpu = torch.device("cpu")
    snap_a = torch.stack(snaps_a).to(cpu) if S else torch.empty(0, R, p.width, dtype=DTYPE)
    snap_W = torch.stack(snaps_W).to(cpu) if S else torch.empty(0, R, p.width, p.dim, dtype=DTYPE)
    return Trajectory(
        network=network, loss_convention=loss, lr=lr_t.to(cpu), steps=steps,
        loss_steps=torch.arange(0, steps + 1, record_every), loss=loss_hist.to(cpu),
        snap_steps=snap_steps, snap_a=snap_a, snap_W=snap_W, final=p.to(cpu), seconds=seconds,
        stopped_at=stopped_at,
    )
