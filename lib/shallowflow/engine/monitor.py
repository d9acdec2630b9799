"""Monitored gradient descent: an ensemble trained in segments, observed on the way.

Both sources need more than the loss of a long run: quantities of the parameters (alignments, norms,
per-neuron sets) on a time grid, and states at chosen iterations.  Two drivers share the engine
:func:`shallowflow.engine.train.gradient_descent` (the kernel's update is deterministic, so cutting a run into
segments does not change its trajectory):

- :func:`segmented_descent` (003's lemma chapters): runs with one step size each, snapshots every
  ``every`` iterations inside a segment reduced to a few numbers per run by a ``summarise`` callback,
  states captured at given iterations or when a watched quantity first crosses a threshold, runs
  frozen once their loss is below ``stop_below``; memory stays one segment of snapshots;
- :func:`train_monitored` (002): a ``monitor(params, iteration)`` callback every ``every`` iterations
  and states kept at the ``snapshots`` iterations.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import torch

from . import data as datasets
from . import kernel, progress
from .config import DTYPE, trim_heap
from .models import Network, Params, loss_factor
from .train import gradient_descent


CPU = torch.device("cpu")
NET = Network("relu")  # the ReLU network of the segmented engine (003's lemma chapters)


@dataclass
class Segmented:
    """Loss records, per-run summaries on a time grid, and captured states of one ensemble's training."""

    ens: object  # the runs (003: experiments.orthogonal_inputs.theory.Ensemble): lrs, p0, data, k
    steps: int
    every: int
    loss_steps: torch.Tensor  # (K,) iterations of the loss records
    loss: torch.Tensor  # (R, K), loss "half"
    summary_steps: torch.Tensor  # (S,)
    summaries: dict  # name -> (R, S)
    final: Params
    stopped_at: torch.Tensor  # (R,) first iteration with L < stop_below (steps if never)
    captured: dict  # (run, iteration) -> Params with one run
    crossings: dict  # name -> (R,) first summary iteration where the watched quantity crossed (-1 never)
    crossing_states: dict  # name -> {run: Params}
    seconds: float = 0.0
    segments: int = 0

    def loss_time(self) -> torch.Tensor:
        """(R, K) flow time of every loss record."""
        return self.ens.lrs[:, None] * self.loss_steps[None, :].to(DTYPE)

    def summary_time(self) -> torch.Tensor:
        return self.ens.lrs[:, None] * self.summary_steps[None, :].to(DTYPE)

    def state(self, run: int, iteration: int) -> Params:
        return self.captured[(run, int(iteration))]

    def first_time_below(self, threshold, interpolate: bool = True) -> torch.Tensor:
        """(R,) flow time at which L first falls below threshold (a float or (R,)); nan if never.

        With ``interpolate`` the crossing is placed between the last record above and the first below
        by linear interpolation of ln L (records are ``every`` iterations apart); otherwise it is the
        first record below.
        """
        thr = torch.as_tensor(threshold, dtype=DTYPE)
        thr = thr.reshape(-1, 1) if thr.ndim else thr.reshape(1, 1).expand(self.loss.shape[0], 1)
        below = self.loss < thr
        hit = below.any(1)
        idx = below.to(torch.int8).argmax(1)
        t = self.loss_time()
        t1 = t.gather(1, idx[:, None])[:, 0]
        if interpolate:
            prev = (idx - 1).clamp_min(0)
            t0 = t.gather(1, prev[:, None])[:, 0]
            L0 = self.loss.gather(1, prev[:, None])[:, 0]
            L1 = self.loss.gather(1, idx[:, None])[:, 0]
            w = (torch.log(thr[:, 0]) - torch.log(L0)) / (torch.log(L1) - torch.log(L0))
            t1 = torch.where(idx > 0, t0 + w.clamp(0, 1) * (t1 - t0), t1)
        return torch.where(hit, t1, torch.full_like(t1, float("nan")))


def segmented_descent(ens, steps: int, every: int, segment: int, summarise: Callable | None = None,
                      capture: torch.Tensor | None = None, watch: dict | None = None,
                      stop_below: float | None = None) -> Segmented:
    """Train every run of ``ens`` for ``steps`` iterations of GD on L ("half") with its own step size.

    ``segment`` iterations per kernel call (a multiple of ``every``); within a segment the parameters
    are snapshotted every ``every`` iterations and passed to ``summarise(a (S,R',m), W (S,R',m,d), runs)``,
    which returns a dict of (S, R') tensors for the R' runs ``runs`` still training (the others keep
    their last values: a frozen state does not change).  The loss is recorded every ``every`` iterations.
    capture: an (R, Q) integer tensor of iterations (-1 for none) at which run r's state is kept.
    watch: {name: (summary_name, threshold (R,))}: the first summary iteration with
    summary >= threshold is recorded, and the state of that run at that iteration kept.
    A run whose loss falls below ``stop_below`` is frozen there (its later records repeat it).
    """
    if segment % every or steps % every:
        raise ValueError(f"segment ({segment}) and steps ({steps}) must be multiples of every ({every})")
    R = ens.runs
    p = Params(ens.p0.a.detach().clone(), ens.p0.W.detach().clone())
    watch = watch or {}
    crossings = {k: torch.full((R,), -1, dtype=torch.int64) for k in watch}
    crossing_states: dict = {k: {} for k in watch}
    captured = {}
    cap = capture if capture is not None else torch.full((R, 0), -1, dtype=torch.int64)
    losses, loss_steps, sums, sum_steps = [], [], {}, []
    stopped = torch.full((R,), steps, dtype=torch.int64)
    active = torch.ones(R, dtype=torch.bool)
    last: dict = {}
    t0 = time.perf_counter()
    k0 = 0
    nseg = 0
    with progress.bar(steps, f"gradient descent in segments ({R} runs)", unit="it") as bar:
        while k0 < steps or (k0 == 0 and steps == 0):
            k1 = min(steps, k0 + segment)
            grid = list(range(k0 + every if k0 > 0 else 0, k1 + 1, every))
            wanted = cap[(cap >= k0) & (cap <= k1)].unique().tolist()
            snaps = sorted(set(k - k0 for k in grid) | {int(k) - k0 for k in wanted})
            traj = gradient_descent(p, ens.data, NET, steps=k1 - k0, lr=ens.lrs, loss="half", snapshots=snaps,
                                    record_every=every, stop_below=stop_below,
                                    explode_factor=math.inf)
            rec_steps = traj.loss_steps + k0
            keep = rec_steps % every == 0
            if k0 > 0:
                keep &= rec_steps > k0
            losses.append(traj.loss[:, keep])
            loss_steps.append(rec_steps[keep])
            newly = (traj.stopped_at < (k1 - k0)) & (stopped == steps)
            stopped = torch.where(newly, traj.stopped_at + k0, stopped)
            if summarise is not None and grid:
                pos = [traj.snap_steps.index(k - k0) for k in grid]
                a_s, W_s = traj.snap_a[pos], traj.snap_W[pos]
                # runs frozen before this segment keep their last summary (their state does not change)
                act = torch.nonzero(active).flatten()
                part = summarise(a_s[:, act], W_s[:, act], act) if act.numel() else {}
                out = {}
                for name in (part or last):
                    full = last[name].expand(len(grid), R).clone() if name in last else \
                        torch.full((len(grid), R), float("nan"), dtype=DTYPE)
                    if act.numel():
                        full[:, act] = part[name]
                    out[name] = full
                    last[name] = full[-1].clone()
                    sums.setdefault(name, []).append(full)
                sum_steps.extend(grid)
                for name, (q, thr) in watch.items():
                    v = out[q]  # (S, R)
                    hit = (v >= thr[None, :]) & (crossings[name] < 0)[None, :]
                    first = hit.to(torch.int8).argmax(0)
                    for r in torch.nonzero(hit.any(0)).flatten().tolist():
                        s = int(first[r])
                        crossings[name][r] = grid[s]
                        crossing_states[name][r] = Params(a_s[s, r][None].clone(), W_s[s, r][None].clone())
            where = {k: i for i, k in enumerate(traj.snap_steps)}
            for r, k in torch.nonzero((cap >= k0) & (cap <= k1)).tolist():
                it = int(cap[r, k])
                i = where[it - k0]
                captured[(r, it)] = Params(traj.snap_a[i, r][None].clone(), traj.snap_W[i, r][None].clone())
            p = traj.final
            active = stopped == steps
            nseg += 1
            bar.update(k1 - k0)
            if steps == 0:
                break
            k0 = k1
    summaries = {k: torch.cat(v, 0).T.contiguous() for k, v in sums.items()}
    return Segmented(ens, steps, every, torch.cat(loss_steps), torch.cat(losses, 1), torch.tensor(sum_steps),
                     summaries, p, stopped, captured, crossings, crossing_states, time.perf_counter() - t0, nseg)


def gradients(p: Params, X: torch.Tensor, y: torch.Tensor):
    """Loss "half" (R,) and its gradients (R, m), (R, m, d): the C kernel on CPU float64, else torch."""
    if kernel.usable(p.a, p.W, X):
        return kernel.grad(p.a, p.W, X, y, kernel.ACT_CODES[NET.activation], float(NET.leak), NET.scale(p.width),
                           loss_factor("half"))
    return NET.gradients(p, X, y, "half")


def flat_snapshots(a, W):
    """Snapshots a (S, R, m), W (S, R, m, d) as one Params of S*R runs, and the leading shape (S, R)."""
    lead = a.shape[:-1]
    return Params(a.reshape(-1, a.shape[-1]), W.reshape(-1, *W.shape[-2:])), lead


@dataclass
class Monitored:
    """A training run observed every ``every`` iterations (all tensors on the CPU)."""

    lr: torch.Tensor  # (R,)
    loss_steps: torch.Tensor  # (K,)
    loss: torch.Tensor  # (R, K)
    steps_seen: torch.Tensor  # (C,) iterations of the monitor calls
    series: dict  # name -> (R, C)
    snaps: dict  # iteration -> Params
    p0: Params
    final: Params
    seconds: float
    stopped_at: torch.Tensor  # (R,)
    extra: dict = field(default_factory=dict)

    def time(self, steps=None) -> torch.Tensor:
        """Gradient-flow time (of the trained loss) at iterations ``steps`` (default: monitor points), (R, C)."""
        s = self.steps_seen if steps is None else torch.as_tensor(steps)
        return self.lr[:, None] * s[None, :].to(DTYPE)


def train_monitored(p0: Params, data, network: Network = Network(), *, steps: int, lr, every: int,
                    monitor: Callable[[Params, int], dict] | None = None, snapshots: Sequence[int] = (),
                    record_every: int = 1, loss: str = "mean", stop_below: float | None = None,
                    on_nonfinite: str = "raise") -> Monitored:
    """Gradient descent in chunks of ``every`` iterations, calling ``monitor(params, iteration)`` at iterations
    0, every, 2 every, ..., steps.  Each chunk is one :func:`shallowflow.engine.train.gradient_descent` call (the
    kernel's update is deterministic, so chunking does not change the trajectory).  ``monitor`` returns a dict
    of per-run tensors (R,); parameters are also kept at the ``snapshots`` iterations."""
    if every % record_every:
        raise ValueError("every must be a multiple of record_every")
    p = Params(p0.a.to(CPU), p0.W.to(CPU))
    R = p.runs
    lr_t = torch.as_tensor(lr, dtype=DTYPE).reshape(-1)
    lr_t = lr_t.expand(R).clone() if lr_t.numel() == 1 else lr_t
    want = sorted({int(k) for k in snapshots if 0 <= int(k) <= steps})
    snaps, series, seen, losses = {}, {}, [], []
    stopped = torch.full((R,), steps, dtype=torch.int64)
    t0 = time.perf_counter()

    def observe(q, k):
        seen.append(k)
        trim_heap()  # the series' small tensors between the chunks' large ones fragment the heap (config.trim_heap)
        if monitor is not None:
            for name, v in monitor(q, k).items():
                series.setdefault(name, []).append(torch.as_tensor(v, dtype=DTYPE).reshape(R))
        if k in want:
            snaps[k] = q.clone()

    observe(p, 0)
    k0 = 0
    with progress.bar(steps, f"monitored gradient descent ({R} runs)", unit="it") as bar:
        while k0 < steps:
            k1 = min(steps, k0 + every)
            local = [k - k0 for k in want if k0 < k < k1]
            tr = gradient_descent(p, data, network, steps=k1 - k0, lr=lr_t, loss=loss, snapshots=local,
                                  record_every=record_every, stop_below=stop_below, on_nonfinite=on_nonfinite)
            for k in local:
                snaps[k0 + k] = tr.at(k).clone()
            losses.append(tr.loss[:, :-1] if k1 < steps else tr.loss)
            hit = (tr.stopped_at < (k1 - k0)) & (stopped == steps)
            stopped = torch.where(hit, tr.stopped_at + k0, stopped)
            p = tr.final
            bar.update(k1 - k0)
            k0 = k1
            observe(p, k0)
    if not losses:  # steps == 0
        losses.append(Network.loss(network, p, *_xy(data), loss)[:, None])
    L = torch.cat(losses, 1)
    return Monitored(lr=lr_t, loss_steps=torch.arange(0, L.shape[1]) * record_every, loss=L,
                     steps_seen=torch.tensor(seen), series={k: torch.stack(v, 1) for k, v in series.items()},
                     snaps=snaps, p0=Params(p0.a.to(CPU).clone(), p0.W.to(CPU).clone()), final=p,
                     seconds=time.perf_counter() - t0, stopped_at=stopped)


def _xy(data):
    if isinstance(data, datasets.Dataset):
        return data.X.to(CPU), data.y.to(CPU)
    return data
