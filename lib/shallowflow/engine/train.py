"""Full-batch gradient descent over ensembles of independent runs, with snapshot schedules.

One call trains R runs (differing in seed, initial scale, step size, label factor or dataset of equal
shape) as one computation with the hand-derived gradients of :mod:`shallowflow.engine.models`.  Every run
has its own step size and its own stopping: a run whose loss falls below ``stop_below`` or stops
being finite is frozen at that exact iteration while the others go on.  The loss of every run is
recorded at every ``record_every``-th iteration into a preallocated buffer, and parameters are
copied into preallocated snapshot buffers at the iterations of a schedule (geometric by default in
the experiments), so recording never slows the loop.

Two engines run the same iteration (see :func:`gradient_descent` for its exact definition):

- ``"kernel"``: the fused C loop of :mod:`shallowflow.engine.kernel` (CPU, float64).  A step of the 003 toy
  costs about 0.5 us instead of ~40 us of torch dispatches; runs are independent loops, so a run's
  trajectory is bit-identical alone or in any ensemble.
- ``"torch"``: a short sequence of batched torch operations (any device; the path on a GPU).  It has
  no Python loop over runs or neurons; a run's trajectory matches its solo trajectory to rounding.

``engine="auto"`` takes the kernel for float64 CPU tensors when a C compiler is available.

Runs of different widths are *grouped*, not padded: :func:`gradient_descent_many` splits a list of
ensembles by (width, data shape) and trains each group in one call.  Padding with masked neurons
would change the output factor c_m (it depends on m), make sigmoid's sigma(0) = 1/2 leak into the
output, and cost arithmetic on dead neurons; a group costs one extra engine call (~100 us).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
import torch

from . import kernel, progress
from .config import DTYPE, require_float64
from .data import Dataset
from .models import Network, Params, flow_time_per_step, loss_factor


class DivergenceError(RuntimeError):
    """The loss of some run became non-finite (or exploded) during training."""

    def __init__(self, message: str, iteration: int = -1, run: int = -1, cause: str = "lr"):
        super().__init__(message)
        self.iteration = iteration
        self.run = run
        self.cause = cause  # "lr", "init_scale" (or the width) or "data": what to change


def divergence_cause(p0: Params, X: torch.Tensor, y: torch.Tensor, run: int, iteration: int,
                     lr: float | None = None, c: float = 1.0, lf: float = 0.5) -> tuple[str, str]:
    """(cause, advice) for run ``run`` whose loss stopped being finite (or exploded) at ``iteration``,
    from its initial parameters ``p0`` and the data (``c``: output factor, ``lf``: loss factor).

    ``"data"``: the data are not finite.  ``"init_scale"``: the initial parameters are not finite, the
    loss is bad already at iteration 0 (no step has acted yet), or the first steps are unstable because
    of the scale: the scale-dependent bound on the initial curvature,
    ``2 lf c^2 sum_j (a_j^2 + ||w_j||^2) max_k ||x_k||^2``, exceeds both ``2 / lr`` and the scale-free part
    ``2 lf c ||sum_k y_k x_k|| / n``.
    ``"lr"`` otherwise."""
    Xr = X[run] if X.ndim == 3 else X
    yr = y[run] if y.ndim == 2 else y
    if not (bool(torch.isfinite(Xr).all()) and bool(torch.isfinite(yr).all())):
        return "data", "the data (X or y) contain non-finite values: check the dataset, not 'lr'"
    a, W = p0.a[run].double(), p0.W[run].double()
    scale = "the initial scale (lambda: the chapter's 'init_scale', 'scale(s)' or 'lams')"
    if not (bool(torch.isfinite(a).all()) and bool(torch.isfinite(W).all())):
        return "init_scale", f"the initial parameters are not finite: reduce {scale}"
    amax, wmax = float(a.abs().max()), float(W.norm(dim=-1).max())
    sizes = f"max |a_j| = {amax:.3g}, max ||w_j|| = {wmax:.3g}, width m = {a.numel()}"
    if iteration == 0:
        return "init_scale", (f"the initial loss is already not finite ({sizes}), before any step: reduce {scale} "
                              f"or the width, not 'lr'")
    Xd, yd = Xr.double(), yr.double()
    gn = 2 * lf * c * c * float((a.pow(2) + W.pow(2).sum(-1)).sum()) * float(Xd.norm(dim=-1).max()) ** 2
    free = 2 * lf * abs(c) * float((yd[:, None] * Xd).sum(0).norm()) / Xd.shape[0]
    if lr is not None and math.isfinite(gn) and lr * gn > 2 and gn > free:
        return "init_scale", (f"at this initial scale the first steps are unstable (lr times the initial curvature "
                              f"bound = {lr * gn:.3g} > 2; {sizes}): reduce {scale} or 'lr'")
    return "lr", "reduce 'lr'"


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


def animation_frames(schedule: Sequence[int], count: int) -> list[int]:
    """At most ``count`` iterations of ``schedule`` (evenly spaced in its index, first and last kept): the
    frames of an animation (002 and 003, E4) taken from a snapshot schedule."""
    schedule = sorted(set(int(k) for k in schedule))
    if count >= len(schedule):
        return schedule
    idx = np.unique(np.round(np.linspace(0, len(schedule) - 1, max(count, 2))).astype(int))
    return [schedule[i] for i in idx]


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

    def select(self, runs) -> "Trajectory":
        """The sub-trajectory of the given run indices."""
        runs = [runs] if isinstance(runs, int) else list(runs)
        return Trajectory(
            network=self.network, loss_convention=self.loss_convention, lr=self.lr[runs], steps=self.steps,
            loss_steps=self.loss_steps, loss=self.loss[runs], snap_steps=list(self.snap_steps),
            snap_a=self.snap_a[:, runs], snap_W=self.snap_W[:, runs], final=self.final.select(runs),
            seconds=self.seconds, stopped_at=None if self.stopped_at is None else self.stopped_at[runs],
            info=dict(self.info))

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


def as_data(data, runs: int | None = None, device=None, dim: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(X, y) from a Dataset, an (X, y) pair, or a sequence of equal-shape Datasets (one per run).

    X is (n, d) or (R, n, d), y is (n,) or (R, n); shared data stays shared (not copied per run).
    """
    if isinstance(data, Dataset):
        X, y = data.X, data.y
    elif isinstance(data, (tuple, list)) and len(data) == 2 and isinstance(data[0], torch.Tensor):
        X, y = data
    elif isinstance(data, (tuple, list)) and all(isinstance(x, Dataset) for x in data):
        shapes = {(x.X.shape, x.y.shape) for x in data}
        if len(shapes) != 1:
            raise ValueError(f"datasets of one ensemble must share their shape, got {sorted(shapes)}")
        X = torch.stack([x.X for x in data])
        y = torch.stack([x.y for x in data])
    else:
        raise TypeError(f"data must be a Dataset, an (X, y) pair or a list of Datasets, got {type(data)}")
    X = torch.as_tensor(X, dtype=DTYPE)
    y = torch.as_tensor(y, dtype=DTYPE)
    if device is not None:
        X, y = X.to(device), y.to(device)
    if X.ndim not in (2, 3) or y.ndim != X.ndim - 1 or y.shape[-1] != X.shape[-2]:
        raise ValueError(f"inconsistent data shapes X {tuple(X.shape)}, y {tuple(y.shape)}")
    if runs is not None and X.ndim == 3 and X.shape[0] != runs:
        raise ValueError(f"per-run data has {X.shape[0]} runs, parameters have {runs}")
    if dim is not None and X.shape[-1] != dim:
        raise ValueError(f"inputs have dimension {X.shape[-1]}, the parameters {dim}")
    return X, y


def choose_engine(engine: str, p: Params, X: torch.Tensor) -> str:
    if engine not in ("auto", "kernel", "torch"):
        raise ValueError(f"engine must be 'auto', 'kernel' or 'torch', got {engine!r}")
    fits = kernel.usable(p.a, p.W, X)
    if engine == "kernel" and not fits:
        raise RuntimeError(f"the C kernel needs float64 CPU tensors and a C compiler ({kernel.reason()})")
    if engine == "auto":
        return "kernel" if fits else "torch"
    return engine


def gradient_descent(
    params: Params,
    data,
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
    engine: str = "auto",
) -> Trajectory:
    """Train every run of ``params`` by full-batch GD for ``steps`` iterations.

    data: a :class:`Dataset` shared by all runs, an ``(X, y)`` pair with X (n, d) or (R, n, d), or a
    list of R equal-shape Datasets (one per run).  lr: a scalar or one step size per run.
    loss: "half" (1/(2n) sum) or "mean" (1/n sum).  snapshots: iterations at which parameters are
    stored.

    Iteration k = 0..steps, for each run: store a snapshot if k is in ``snapshots``; compute L_k;
    record it if k % record_every == 0; then stop tests; then, if k < steps, the update.  A run
    whose L_k is non-finite or above ``explode_factor * L_0`` has *diverged* at k; with
    ``on_nonfinite="raise"`` training ends with :class:`DivergenceError` naming the first such
    iteration (and run, step size); with ``"stop"`` only that run is frozen and its later records
    are NaN.  A run with L_k < ``stop_below`` is frozen at k (its loss is recorded unchanged from
    then on).  ``stopped_at`` gives the iteration where each run stopped (``steps`` if it never did);
    ``info["converged"]`` and ``info["diverged"]`` say why.  A diverged run's parameters are those
    of the bad iteration (kernel) or may have become non-finite (torch).

    engine: "auto" (the C kernel for float64 CPU tensors when it compiles, else torch), "kernel" or
    "torch".  ``check_every`` is the torch engine's divergence-check interval (the kernel checks
    every iteration for free); without ``stop_below`` or ``"stop"`` the torch engine finds the first
    bad iteration among the recorded ones, exact with ``record_every=1``.
    """
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    if record_every < 1:
        raise ValueError(f"record_every must be >= 1, got {record_every}")
    if on_nonfinite not in ("raise", "stop"):
        raise ValueError(f"on_nonfinite must be 'raise' or 'stop', got {on_nonfinite!r}")
    loss_factor(loss)
    require_float64(params.a, params.W, what="parameters")
    p = Params(params.a.detach().clone().contiguous(), params.W.detach().clone().contiguous())
    device = p.a.device
    R = p.runs
    X, y = as_data(data, R, device, p.dim)
    lr_t = _per_run(lr, R, device)
    eng = choose_engine(engine, p, X)
    snap_list = fixed_schedule(snapshots, steps)
    S = len(snap_list)
    K = steps // record_every + 1
    masked = on_nonfinite == "stop"
    t0 = time.perf_counter()
    run = _run_kernel if eng == "kernel" else _run_torch
    with progress.bar(steps + 1, f"gradient descent ({R} runs)", unit="it") as bar:
        hist, snap_a, snap_W, stopped_at, status = run(
            p, X, y, network, lr_t, loss, steps, record_every, snap_list, K, stop_below, masked,
            explode_factor, check_every, bar)
    seconds = time.perf_counter() - t0

    bad = status == 2
    if not masked and bool(bad.any()):
        r = int(torch.argmin(torch.where(bad, stopped_at, torch.full_like(stopped_at, steps + 1))))
        k = int(stopped_at[r])
        L = float(hist[r, k // record_every]) if k % record_every == 0 else float("nan")
        L0 = float(hist[r, 0])
        kind = "non-finite" if not math.isfinite(L) else "explosive"
        cause, advice = divergence_cause(params, X, y, r, k, float(lr_t[r]), network.scale(p.width), loss_factor(loss))
        raise DivergenceError(
            f"the loss of run {r} became {kind} (L = {L:.3g}, initial {L0:.3g}) at iteration {k} "
            f"with step size lr = {float(lr_t[r]):.3g}: {advice}", iteration=k, run=r, cause=cause)

    cpu = torch.device("cpu")
    return Trajectory(
        network=network, loss_convention=loss, lr=lr_t.to(cpu), steps=steps,
        loss_steps=torch.arange(0, steps + 1, record_every), loss=hist.to(cpu),
        snap_steps=snap_list, snap_a=snap_a.to(cpu), snap_W=snap_W.to(cpu), final=p.to(cpu),
        seconds=seconds, stopped_at=stopped_at.to(cpu),
        info={"engine": eng, "converged": (status == 1).to(cpu), "diverged": bad.to(cpu)},
    )


# --------------------------------------------------------------------------------------------
# the kernel engine
def _run_kernel(p, X, y, net, lr_t, loss, steps, rec, snap_list, K, stop_below, masked, explode, _check, bar):
    lib = kernel._load()
    R, m, d = p.W.shape
    X, y, xs, ys = kernel.run_strides(X, y, R)
    n = X.shape[-2]
    hist = torch.full((R, K), float("nan"), dtype=DTYPE)
    S = len(snap_list)
    snap_a = torch.empty(S, R, m, dtype=DTYPE)
    snap_W = torch.empty(S, R, m, d, dtype=DTYPE)
    snaps = torch.tensor(snap_list, dtype=torch.int64)
    status = torch.zeros(R, dtype=torch.int32)
    stopped_at = torch.full((R,), steps, dtype=torch.int64)
    L0 = torch.zeros(R, dtype=DTYPE)
    Llast = torch.zeros(R, dtype=DTYPE)
    kind = kernel.ACT_CODES[net.activation]
    c, lf = net.scale(m), loss_factor(loss)
    sb = -math.inf if stop_below is None else float(stop_below)
    lr_t = lr_t.contiguous()
    nthreads = kernel.threads(R)
    # chunks of ~20 ms of arithmetic keep Ctrl-C responsive and cost ~5 us each
    work = max(1, R * m * n * (d + 4))
    chunk = max(16, int(4e7 // work))
    k0 = 0
    while k0 <= steps:
        k1 = min(steps + 1, k0 + chunk)
        kernel.gd_chunk(lib, R, m, n, d, p.a, p.W, X, xs, y, ys, lr_t, kind, float(net.leak), c, lf,
                        k0, k1, steps, rec, hist, snaps, snap_a, snap_W, status, stopped_at, L0, Llast,
                        sb, float(explode), masked, nthreads)
        bar.update(k1 - k0)
        k0 = k1
        if not masked and bool((status == 2).any()):
            break
    return hist, snap_a, snap_W, stopped_at, status


# --------------------------------------------------------------------------------------------
# the torch engine
def _run_torch(p, X, y, net, lr_t, loss, steps, rec, snap_list, K, stop_below, masked, explode, check_every,
               bar):
    device = p.a.device
    R, m, d = p.W.shape
    n = X.shape[-2]
    step = TorchStep(net, p, X, y, loss)
    hist = torch.full((K, R), float("nan"), dtype=DTYPE, device=device)  # row k contiguous
    S = len(snap_list)
    snap_a = torch.empty(S, R, m, dtype=DTYPE, device=device)
    snap_W = torch.empty(S, R, m, d, dtype=DTYPE, device=device)
    snap_pos = {k: i for i, k in enumerate(snap_list)}
    status = torch.zeros(R, dtype=torch.int32, device=device)
    stopped_at = torch.full((R,), steps, dtype=torch.int64, device=device)
    # -lr * (dL/dh factor): the update is p += coef * (unscaled gradient); a stopped run has coef 0
    coef = (-lr_t * (2.0 * loss_factor(loss) / n)).view(R, 1, 1).clone()
    stopping = masked or stop_below is not None
    # per-step stop tests without host synchronisation: keep = lim >= L >= stop_below (False for
    # NaN) zeroes the run's step factor for good; `alive` counts the iterations a run was active,
    # which is the iteration where it stopped
    keep = torch.empty(R, dtype=torch.bool, device=device)
    alive = torch.zeros(R, dtype=torch.int64, device=device)
    sb = torch.tensor(-math.inf if stop_below is None else float(stop_below), dtype=DTYPE, device=device)
    check_every = max(1, check_every)
    L = lim = None
    for k in range(steps + 1):
        i = snap_pos.get(k)
        if i is not None:
            snap_a[i].copy_(p.a)
            snap_W[i].copy_(p.W)
        L = step.loss_and_prepare(p)  # (R,)
        if k == 0:
            lim = explode * L
        if k % rec == 0:
            hist[k // rec].copy_(L)
        if stopping:
            torch.logical_and(L <= lim, L >= sb, out=keep)
            coef.mul_(keep.view(R, 1, 1))
            alive.add_(coef.view(R) != 0)
        if k % check_every == 0 or k == steps:
            bar.update(k + 1 - bar.n)
            if not stopping:
                if _first_bad_torch(hist, rec, k, check_every, L, lim, status, stopped_at):
                    break
            else:
                frozen = coef.view(R) == 0
                if not masked and bool((frozen & ~(L <= lim)).any()):
                    break  # raise mode: some run diverged (its records and stop iteration are exact)
                if bool(frozen.all()):
                    break
        if k < steps:
            step.update(p, coef)
    k_end = k
    if stopping:
        stopped = alive <= k_end
        stopped_at.copy_(torch.where(stopped, alive, stopped_at))
        # a frozen run keeps its parameters, hence its loss: bad now means it diverged when it stopped
        diverged = stopped & ~(L <= lim)
        status.copy_(torch.where(diverged, 2, torch.where(stopped, 1, 0)).to(torch.int32))
        if k_end < steps:  # early exit (everyone stopped): later records are the frozen losses
            hist[k_end // rec + 1:] = L[None, :]
        if masked and bool(diverged.any()):  # NaN from the iteration of divergence on
            it = torch.arange(K, device=device)[:, None] * rec
            hist.masked_fill_(diverged[None, :] & (it >= stopped_at[None, :]), float("nan"))
    for i, ks in enumerate(snap_list):  # after an early exit, later snapshots are the frozen state
        if ks > k_end:
            snap_a[i].copy_(p.a)
            snap_W[i].copy_(p.W)
    return hist.T.contiguous(), snap_a, snap_W, stopped_at, status


def _first_bad_torch(hist, rec, k, check_every, L, lim, status, stopped_at) -> bool:
    """Raise mode without per-step tests: mark runs with a bad loss recorded in the last window
    (k - check_every, k] (or at k) as diverged at their first bad record; True if there are any."""
    lo = max(0, k - check_every + 1)
    rows = torch.arange(-(-lo // rec), k // rec + 1, device=hist.device)
    block = hist[rows]  # (B, R)
    badb = ~torch.isfinite(block) | (block > lim[None, :])
    bad_now = ~torch.isfinite(L) | (L > lim)
    bad = badb.any(0) | bad_now
    if not bool(bad.any()):
        return False
    first = torch.where(badb.any(0), rows[badb.to(torch.int8).argmax(0)] * rec, torch.full_like(stopped_at, k))
    stopped_at.copy_(torch.where(bad, first, stopped_at))
    status.copy_(torch.where(bad, 2, status))
    return True


class TorchStep:
    """The GD step as a few batched torch operations, buffers allocated once.

    With Z = W X^T (R, m, n), S = sigma(Z), D = sigma'(Z), res = c_m a S - y (R, 1, n):
    dL/da = f c_m S res^T and dL/dW = f c_m a (D * res) X with f = 2 loss_factor / n.
    """

    def __init__(self, net: Network, p: Params, X: torch.Tensor, y: torch.Tensor, loss: str):
        R, m, d = p.W.shape
        self.net, self.R, self.m, self.d = net, R, m, d
        self.shared = X.ndim == 2
        self.n = n = X.shape[-2]
        self.X = X
        self.Xt = X.transpose(-1, -2).contiguous()
        self.negy = (-y).reshape(1 if y.ndim == 1 else R, 1, n)
        self.c = net.scale(m)
        self.lf = loss_factor(loss)
        dev = p.a.device
        self.Z = torch.empty(R, m, n, dtype=DTYPE, device=dev)
        self.D = torch.empty(R, m, n, dtype=DTYPE, device=dev)
        self.res = None

    def loss_and_prepare(self, p: Params) -> torch.Tensor:
        R, m, n = self.R, self.m, self.n
        Z, D = self.Z, self.D
        if self.shared:
            torch.mm(p.W.view(R * m, self.d), self.Xt, out=Z.view(R * m, n))
        else:
            torch.bmm(p.W, self.Xt, out=Z)
        act = self.net.activation
        if act == "relu":
            torch.gt(Z, 0, out=D)  # sigma'(z) = 1{z > 0}; S = Z * D
            Z.mul_(D)
        elif act == "leaky_relu":
            torch.gt(Z, 0, out=D)  # D = leak + (1 - leak) 1{z > 0}
            D.mul_(1.0 - self.net.leak).add_(self.net.leak)
            Z.mul_(D)
        elif act == "sigmoid":
            torch.sigmoid(Z, out=Z)
            torch.mul(Z, 1.0 - Z, out=D)
        else:
            torch.tanh(Z, out=Z)
            torch.mul(Z, Z, out=D)
            D.neg_().add_(1.0)
        # Z now holds S
        self.res = res = torch.baddbmm(self.negy, p.a.view(R, 1, m), Z, alpha=self.c)  # (R, 1, n)
        return (self.lf / n) * torch.linalg.vecdot(res, res).view(R)

    def update(self, p: Params, coef: torch.Tensor) -> None:
        """p += coef * c_m * (S res^T, a (D * res) X), coef (R, 1, 1) = -lr f (0 for frozen runs)."""
        R, m, n, d = self.R, self.m, self.n, self.d
        res = self.res
        ga = torch.bmm(self.Z, res.transpose(1, 2))  # (R, m, 1)
        G = self.D.mul_(res)
        V = torch.mm(G.view(R * m, n), self.X).view(R, m, d) if self.shared else torch.bmm(G, self.X)
        ck = coef * self.c
        acol = p.a.view(R, m, 1)
        p.W.addcmul_(V, acol * ck)
        acol.addcmul_(ga, ck)


# --------------------------------------------------------------------------------------------
def gradient_descent_many(params: Sequence[Params], data, network: Network = Network(), *, lr,
                          **kwargs) -> list[Trajectory]:
    """Train several ensembles (possibly of different widths) grouped by shape, one call per group.

    params: a list of Params (each with its own runs); data: one Dataset for all, or one entry per
    Params (a Dataset, an (X, y) pair or a list of Datasets, as in :func:`gradient_descent`);
    lr: a scalar, or one entry per Params (a scalar or one value per run).  Entries whose width
    and data shape agree are concatenated along the runs dimension and trained together; the
    result is one :class:`Trajectory` per entry, in order, identical to training it alone.
    """
    P = list(params)
    datas = list(data) if isinstance(data, (list, tuple)) and len(data) == len(P) and not (
        len(data) == 2 and isinstance(data[0], torch.Tensor)) else [data] * len(P)
    lrs = list(lr) if isinstance(lr, (list, tuple)) and len(lr) == len(P) else [lr] * len(P)
    prepared = []
    for p, dta, l in zip(P, datas, lrs):
        X, y = as_data(dta, p.runs, p.a.device, p.dim)
        if X.ndim == 2:
            X, y = X.expand(p.runs, *X.shape), y.expand(p.runs, *y.shape)
        prepared.append((p, X, y, _per_run(l, p.runs, p.a.device)))
    groups: dict[tuple, list[int]] = {}
    for i, (p, X, y, _) in enumerate(prepared):
        groups.setdefault((p.width, p.dim, tuple(X.shape[1:]), p.a.device), []).append(i)
    out: list[Trajectory | None] = [None] * len(P)
    for idx in groups.values():
        a = torch.cat([prepared[i][0].a for i in idx])
        W = torch.cat([prepared[i][0].W for i in idx])
        X = torch.cat([prepared[i][1] for i in idx])
        y = torch.cat([prepared[i][2] for i in idx])
        if all(torch.equal(X[0], X[r]) for r in range(1, X.shape[0])) and all(
                torch.equal(y[0], y[r]) for r in range(1, y.shape[0])):
            X, y = X[0], y[0]  # shared data: no per-run copies in the computation
        lr_all = torch.cat([prepared[i][3] for i in idx])
        traj = gradient_descent(Params(a, W), (X, y), network, lr=lr_all, **kwargs)
        start = 0
        for i in idx:
            r = prepared[i][0].runs
            out[i] = traj.select(list(range(start, start + r)))
            out[i].info["group"] = len(idx)
            start += r
    return out  # type: ignore[return-value]
