"""Exact gradient flow of two-layer networks: an adaptive Dormand-Prince 5(4) integrator, batched.

Gradient flow d theta / dt = -grad L(theta) of the papers' loss L = 1/(2n) sum_k (h(x_k) - y_k)^2
(``loss="half"``; ``"mean"`` doubles the speed).  GD with step eta on "half" covers time eta per
iteration (:func:`shallowflow.engine.models.flow_time_per_step`), so a GD trajectory at iteration k is
compared with the flow at t = k * eta.

Why an ODE solver: a small initialisation lambda spends time ~ log(1/lambda) / rate on the saddle
at 0, during which the parameters only grow exponentially.  GD must walk that plateau with its
fixed step; an adaptive solver takes steps of the size the (nearly linear) dynamics allow, so
lambda = 1e-100 costs a few thousand steps.

Design choices:

- **Per-run step sizes.**  Every run of the ensemble has its own time t_r and step h_r; all runs
  take one Dormand-Prince step per iteration (one batched field evaluation per stage), and each
  run accepts or rejects its own step.  A run's trajectory therefore does not depend on the
  ensemble around it (bit for bit in the kernel, to rounding in torch), and a fast run is not
  slowed by a stiff one.  Runs that reach ``t_end`` (or ``stop_below``) stop moving.
- **Relative error per neuron, atol = 0 by default.**  The local error of neuron j,
  ||e_j|| over (a_j, w_j), is compared with rtol * ||(a_j, w_j)||: parameters of size 1e-100 are
  followed with the same relative accuracy as those of size 1, and a neuron's norm never vanishes
  in finite time (so the scale never degenerates, unlike per-coordinate relative control when a
  coordinate of w_j crosses 0).  The step is accepted when the worst neuron of the run passes.
- **Snapshot times are hit exactly** by shortening the step that would cross them (no dense
  output interpolation error).
- Two implementations of the same algorithm: on float64 CPU tensors the whole integration loop
  runs in the C kernel (:mod:`shallowflow.engine.kernel`, ~15 us per step of the 003 toy); otherwise a
  batched torch loop with the gradients of :class:`~shallowflow.engine.models.Network` (any device).
- ReLU makes the field discontinuous where a neuron's kink crosses a sample; the controller
  localises each crossing by rejecting a few steps (10-45% of the attempts on the 003 toy,
  depending on how much of the time is spent aligning).

Cost on the 003 toy (m = 60, 2-core CPU, C kernel): lambda = 1e-100 to L < 1e-20 at t = 429 takes
~10,000 steps and ~0.15 s; the torch loop takes ~17 s for the same steps.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Sequence

import torch

from . import kernel, progress
from .config import DTYPE, require_float64
from .models import Network, Params, loss_factor
from .train import as_data, divergence_cause

# Dormand-Prince 5(4) tableau (Hairer, Norsett & Wanner, Table 5.2); FSAL: stage 7 is at y_new.
_A = [
    [],
    [1 / 5],
    [3 / 40, 9 / 40],
    [44 / 45, -56 / 15, 32 / 9],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
    [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84],
]
_E = [71 / 57600, 0.0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40]  # b5 - b4


class FlowError(RuntimeError):
    """The integrator could not proceed (step size underflow, non-finite field, too many steps)."""


@dataclass
class FlowTrajectory:
    """Accepted steps and snapshots of a batched gradient flow (tensors on the CPU).

    ``t`` and ``loss`` are (R, K): the accepted times (starting with 0) and the loss there, each
    run's points left-aligned and padded with NaN (``count[r]`` points are valid).
    """

    network: Network
    loss_convention: str
    t: torch.Tensor  # (R, K)
    loss: torch.Tensor  # (R, K)
    count: torch.Tensor  # (R,)
    snap_t: list[float]
    snap_a: torch.Tensor  # (S, R, m)
    snap_W: torch.Tensor  # (S, R, m, d)
    final: Params  # at t_end, or where the run stopped
    t_final: torch.Tensor  # (R,)
    stopped_at: torch.Tensor  # (R,) time of the first accepted point with L < stop_below (inf: never)
    steps: torch.Tensor  # (R,) accepted steps
    rejected: torch.Tensor  # (R,) rejected steps
    evaluations: torch.Tensor | None = None  # (R,) field evaluations per run (6 per attempt + 1)
    seconds: float = 0.0
    info: dict = field(default_factory=dict)

    @property
    def runs(self) -> int:
        return self.t.shape[0]

    def times(self, r: int) -> torch.Tensor:
        return self.t[r, : int(self.count[r])]

    def losses(self, r: int) -> torch.Tensor:
        return self.loss[r, : int(self.count[r])]

    def at(self, t: float) -> Params:
        """Parameters at a snapshot time."""
        for i, s in enumerate(self.snap_t):
            if s == t or math.isclose(s, t, rel_tol=1e-14, abs_tol=0.0):
                return Params(self.snap_a[i], self.snap_W[i])
        raise KeyError(f"t = {t} is not a snapshot time; snapshots: {self.snap_t[:5]}...")

    def loss_at(self, times) -> torch.Tensor:
        """The loss interpolated (log-linearly between accepted points) at the given times, (R, T)."""
        tq = torch.as_tensor(times, dtype=DTYPE).reshape(-1)
        out = torch.full((self.runs, tq.numel()), float("nan"), dtype=DTYPE)
        for r in range(self.runs):
            t, L = self.times(r), self.losses(r)
            i = torch.searchsorted(t, tq).clamp(1, t.numel() - 1)
            t0, t1, L0, L1 = t[i - 1], t[i], L[i - 1], L[i]
            w = ((tq - t0) / (t1 - t0)).clamp(0, 1)
            pos = (L0 > 0) & (L1 > 0)
            lin = L0 + w * (L1 - L0)
            lg = torch.exp(torch.log(L0.clamp_min(1e-300)) * (1 - w) + torch.log(L1.clamp_min(1e-300)) * w)
            out[r] = torch.where(pos, lg, lin)
            out[r, tq > t[-1]] = float("nan")
        return out


def _per_run(v, R: int, name: str, device) -> torch.Tensor:
    t = torch.as_tensor(v, dtype=DTYPE).reshape(-1)
    if t.numel() == 1:
        t = t.expand(R)
    if t.numel() != R:
        raise ValueError(f"{name} must be a scalar or one value per run ({R}), got {t.numel()}")
    return t.clone().to(device)


class _Field:
    """theta (R, m, 1+d) -> (-grad L, L) for the active runs."""

    def __init__(self, network: Network, X, y, R: int, m: int, loss: str, use_kernel: bool):
        self.net, self.R, self.m, self.loss = network, R, m, loss
        self.use_kernel = use_kernel
        if use_kernel:
            self.X, self.y, self.xs, self.ys = kernel.run_strides(X, y, R)
            self.kind = kernel.ACT_CODES[network.activation]
            self.c, self.lf = network.scale(m), loss_factor(loss)
        else:
            self.X, self.y = X, y
        self.evaluations = 0

    def __call__(self, theta: torch.Tensor, out: torch.Tensor, L: torch.Tensor, skip: torch.Tensor):
        self.evaluations += 1
        if self.use_kernel:
            kernel.field(theta, self.X, self.y, self.xs, self.ys, self.kind, float(self.net.leak), self.c,
                         self.lf, L, out, skip)
            return
        p = Params(theta[..., 0], theta[..., 1:])
        Lv, ga, gW = self.net.gradients(p, self.X, self.y, self.loss)
        out[..., 0] = -ga
        out[..., 1:] = -gW
        L.copy_(Lv)


def gradient_flow(
    params: Params,
    data,
    network: Network = Network(),
    *,
    t_end,
    rtol: float = 1e-10,
    atol: float = 0.0,
    snapshots_t: Sequence[float] = (),
    stop_below: float | None = None,
    loss: str = "half",
    h0: float | None = None,
    max_steps: int = 1_000_000,
    engine: str = "auto",
) -> FlowTrajectory:
    """Integrate the gradient flow of every run of ``params`` from t = 0 to ``t_end``.

    t_end: a scalar or one end time per run.  rtol, atol: the local error of each neuron, over
    (a_j, w_j), must be <= atol + rtol * ||(a_j, w_j)|| (relative control: atol = 0 follows
    parameters of any size).  snapshots_t: times at which parameters are stored (hit exactly).
    stop_below: a run stops at its first accepted point with L < stop_below (``stopped_at``); its
    snapshots at later times hold its final state.  data: as in
    :func:`shallowflow.engine.train.gradient_descent`.  h0: the first step (default: 0.01-ish of the
    fastest relative growth).  max_steps: attempts per run before :class:`FlowError`.
    engine: "auto" (the C kernel on float64 CPU tensors, else torch), "kernel" or "torch"; both
    run the same algorithm (same tableau, error norm and step-size control) and agree to ~1e-11.

    Returns a :class:`FlowTrajectory`: accepted times and losses per run, snapshots, the final
    parameters, accepted/rejected step counts.
    """
    loss_factor(loss)
    require_float64(params.a, params.W, what="parameters")
    if rtol <= 0 and atol <= 0:
        raise ValueError("rtol or atol must be > 0")
    device = params.a.device
    R, m, d = params.W.shape
    q = d + 1
    X, y = as_data(data, R, device, d)
    if engine not in ("auto", "kernel", "torch"):
        raise ValueError(f"engine must be 'auto', 'kernel' or 'torch', got {engine!r}")
    fits = kernel.usable(params.a, params.W, X)
    if engine == "kernel" and not fits:
        raise RuntimeError(f"the C kernel needs float64 CPU tensors and a C compiler ({kernel.reason()})")
    f = _Field(network, X, y, R, m, loss, fits and engine != "torch")
    T = _per_run(t_end, R, "t_end", device)
    if not torch.all(T >= 0):
        raise ValueError("t_end must be >= 0")
    snaps = sorted({float(s) for s in snapshots_t})
    if any(s < 0 for s in snaps):
        raise ValueError("snapshot times must be >= 0")
    S = len(snaps)
    snap_a = torch.full((S, R, m), float("nan"), dtype=DTYPE, device=device)
    snap_W = torch.full((S, R, m, d), float("nan"), dtype=DTYPE, device=device)

    th = torch.empty(R, m, q, dtype=DTYPE, device=device)
    th[..., 0] = params.a
    th[..., 1:] = params.W

    t0 = time.perf_counter()
    K0 = torch.zeros(R, m, q, dtype=DTYPE, device=device)
    L_init = torch.empty(R, dtype=DTYPE, device=device)
    f(th, K0, L_init, torch.zeros(R, dtype=torch.int32, device=device))
    if not bool(torch.isfinite(L_init).all()):
        r = int(torch.nonzero(~torch.isfinite(L_init))[0])
        _, advice = divergence_cause(params, X, y, r, 0, None, network.scale(m), loss_factor(loss))
        raise FlowError(f"the loss of run {r} is not finite at t = 0 (L = {float(L_init[r]):.3g}): {advice}")
    if h0 is None:
        fn = K0.norm(dim=-1)
        ratio = torch.where(fn > 0, th.norm(dim=-1) / fn, torch.full_like(fn, math.inf)).amin(dim=1)
        h = (ratio * rtol ** 0.2).clamp(min=1e-12)
        h = torch.minimum(h, torch.where(T > 0, T, torch.ones_like(T)))
    else:
        h = torch.full((R,), float(h0), dtype=DTYPE, device=device)
    sb = -math.inf if stop_below is None else float(stop_below)
    run = _flow_kernel if f.use_kernel else _flow_torch
    with progress.bar(100.0, f"gradient flow ({R} runs, % of flow time)", unit="%") as bar:
        rt, rL, count, t, stopped_at, n_acc, n_rej = run(
            f, th, K0, L_init, h, T, snaps, snap_a, snap_W, rtol, atol, sb, max_steps, bar)
    seconds = time.perf_counter() - t0
    Kmax = int(count.max())
    out_t, out_L = rt[:, :Kmax], rL[:, :Kmax]
    cpu = torch.device("cpu")
    final = Params(th[..., 0].contiguous(), th[..., 1:].contiguous())
    return FlowTrajectory(
        network=network, loss_convention=loss, t=out_t.to(cpu), loss=out_L.to(cpu), count=count.to(cpu),
        snap_t=snaps, snap_a=snap_a.to(cpu), snap_W=snap_W.to(cpu), final=final.to(cpu), t_final=t.to(cpu),
        stopped_at=stopped_at.to(cpu), steps=n_acc.to(cpu), rejected=n_rej.to(cpu),
        evaluations=6 * (n_acc + n_rej).to(cpu) + 1, seconds=seconds,
        info={"engine": "kernel" if f.use_kernel else "torch", "rtol": rtol, "atol": atol},
    )


def _shown(bar, t, T, done) -> None:
    """Move the bar to the mean share of its end time each run has integrated (100 when all are done)."""
    if bar is progress.SILENT:
        return
    share = torch.where(done | (T <= 0), torch.ones_like(t), (t / T.clamp_min(1e-300)).clamp(0, 1))
    bar.update(100.0 * float(share.mean()) - bar.n)


def _flow_torch(f, th, K0, L_init, h, T, snaps, snap_a, snap_W, rtol, atol, sb, max_steps, bar):
    """The integrator as batched torch operations (any device): one attempt per run per iteration."""
    R, m, q = th.shape
    device = th.device
    S = len(snaps)
    snap_tensor = torch.tensor(snaps + [math.inf], dtype=DTYPE, device=device)
    next_snap = torch.zeros(R, dtype=torch.long, device=device)
    K = torch.zeros(7, R, m, q, dtype=DTYPE, device=device)
    K[0] = K0
    Lbuf = L_init.clone()
    Lnew = torch.empty(R, dtype=DTYPE, device=device)
    ystage = torch.empty_like(th)
    t = torch.zeros(R, dtype=DTYPE, device=device)
    done = torch.zeros(R, dtype=torch.bool, device=device)
    skip = torch.zeros(R, dtype=torch.int32, device=device)
    stopped_at = torch.full((R,), math.inf, dtype=DTYPE, device=device)
    n_acc = torch.zeros(R, dtype=torch.long, device=device)
    n_rej = torch.zeros(R, dtype=torch.long, device=device)
    # records: grown by doubling
    cap = 1024
    rec_t = torch.full((cap, R), float("nan"), dtype=DTYPE, device=device)
    rec_L = torch.full((cap, R), float("nan"), dtype=DTYPE, device=device)
    rec_t[0] = 0.0
    rec_L[0] = Lbuf
    nrec = 1

    def take_snapshots():
        # runs whose time equals their next snapshot time(s)
        while True:
            st = snap_tensor[next_snap]
            hit = (t >= st) & (next_snap < S)
            if not bool(hit.any()):
                return
            idx = torch.nonzero(hit).flatten()
            snap_a[next_snap[idx], idx] = th[idx, :, 0]
            snap_W[next_snap[idx], idx] = th[idx, :, 1:]
            next_snap[idx] += 1

    take_snapshots()
    done |= (t >= T) | (Lbuf < sb)
    stopped_at = torch.where(Lbuf < sb, t, stopped_at)

    norms = th.norm(dim=-1)  # (R, m)
    iters = 0
    while not bool(done.all()):
        iters += 1
        if iters % 64 == 0:
            _shown(bar, t, T, done)
        if iters > max_steps:
            raise FlowError(f"more than max_steps = {max_steps} steps; t = {t.tolist()[:4]}...")
        active = ~done
        skip.copy_(done.to(torch.int32))
        # step that lands exactly on the next snapshot time or t_end
        target = torch.minimum(T, snap_tensor[next_snap])
        hs = torch.minimum(h, target - t)
        hs = torch.where(active, hs, torch.zeros_like(hs))
        hv = hs.view(R, 1, 1)
        for i in range(1, 7):
            ystage.copy_(th)
            for j, aij in enumerate(_A[i]):
                if aij != 0.0:
                    ystage.addcmul_(K[j], hv, value=aij)
            f(ystage, K[i], Lnew, skip)
        # ystage is now y_new (the 5th-order solution); K[6] = f(y_new), Lnew = L(y_new) (FSAL)
        err = torch.zeros_like(K[0])
        for j, e in enumerate(_E):
            if e != 0.0:
                err.add_(K[j], alpha=e)
        err_n = err.norm(dim=-1) * hs.abs().view(R, 1)  # (R, m)
        scale = atol + rtol * torch.maximum(norms, ystage.norm(dim=-1))
        ratio_n = torch.where(err_n == 0, torch.zeros_like(err_n), err_n / scale)
        E = ratio_n.amax(dim=1)  # (R,)
        finite = torch.isfinite(E) & torch.isfinite(Lnew)
        accept = active & finite & (E <= 1.0)
        reject = active & ~accept
        # step-size control (standard, with safety 0.9, factors in [0.2, 5])
        fac = torch.where(E > 0, 0.9 * E.clamp_min(1e-300) ** -0.2, torch.full_like(E, 5.0))
        fac = torch.where(finite, fac, torch.full_like(E, 0.2))
        grow = torch.where(accept, fac.clamp(0.2, 5.0), fac.clamp(0.2, 1.0))
        h = torch.where(active, torch.where(accept & (hs < h), torch.maximum(h, hs * grow), hs * grow), h)
        if bool((active & (h <= 1e-15 * t.abs().clamp_min(1e-300))).any()) or bool((active & (h == 0)).any()):
            raise FlowError(f"step size underflow at t = {t[active].tolist()[:4]}")
        n_acc += accept.long()
        n_rej += reject.long()
        if bool(accept.any()):
            am = accept.view(R, 1, 1)
            th.copy_(torch.where(am, ystage, th))
            K[0].copy_(torch.where(am, K[6], K[0]))
            Lbuf.copy_(torch.where(accept, Lnew, Lbuf))
            norms = torch.where(accept.view(R, 1), ystage.norm(dim=-1), norms)
            t = torch.where(accept, torch.where(hs == target - t, target, t + hs), t)
            if True:
                if nrec == cap:
                    cap *= 2
                    rec_t = torch.cat([rec_t, torch.full_like(rec_t, float("nan"))])
                    rec_L = torch.cat([rec_L, torch.full_like(rec_L, float("nan"))])
                rec_t[nrec] = torch.where(accept, t, torch.full_like(t, float("nan")))
                rec_L[nrec] = torch.where(accept, Lbuf, torch.full_like(t, float("nan")))
                nrec += 1
            take_snapshots()
            below = accept & (Lbuf < sb)
            stopped_at = torch.where(below, t, stopped_at)
            done |= accept & ((t >= T) | below)

    for i in range(S):  # snapshots never reached (run stopped early): the final state
        miss = next_snap <= i
        if bool(miss.any()):
            snap_a[i, miss] = th[miss, :, 0]
            snap_W[i, miss] = th[miss, :, 1:]
    # compact each run's records to the left
    rt, rL = rec_t[:nrec].T, rec_L[:nrec].T  # (R, N)
    valid = torch.isfinite(rt)
    count = valid.sum(1)
    order = torch.argsort((~valid).to(torch.int8), dim=1, stable=True)
    return (torch.gather(rt, 1, order), torch.gather(rL, 1, order), count, t, stopped_at, n_acc, n_rej)


def _flow_kernel(f, th, K0, L_init, h, T, snaps, snap_a, snap_W, rtol, atol, sb, max_steps, bar):
    """The same integrator in the C kernel: every run loops on its own, records grown by doubling."""
    R, m, q = th.shape
    n = f.X.shape[-2]
    S = len(snaps)
    snaps_t = torch.tensor(snaps, dtype=DTYPE)
    t = torch.zeros(R, dtype=DTYPE)
    h = h.clone().contiguous()
    T = T.contiguous()
    next_snap = torch.zeros(R, dtype=torch.long)
    cap = 256
    rec_t = torch.full((R, cap), float("nan"), dtype=DTYPE)
    rec_L = torch.full((R, cap), float("nan"), dtype=DTYPE)
    count = torch.zeros(R, dtype=torch.long)
    Lcur = torch.zeros(R, dtype=DTYPE)
    status = torch.zeros(R, dtype=torch.int32)
    stopped_at = torch.full((R,), math.inf, dtype=DTYPE)
    n_acc = torch.zeros(R, dtype=torch.long)
    n_rej = torch.zeros(R, dtype=torch.long)
    maxit = max(8, int(2e7 // (7 * R * m * n * (q + 4))))
    while True:
        kernel.flow_chunk(th, f.X, f.xs, f.y, f.ys, f.kind, float(f.net.leak), f.c, f.lf, t, h, T, snaps_t,
                          next_snap, snap_a, snap_W, rec_t, rec_L, count, Lcur, status, stopped_at, n_acc,
                          n_rej, rtol, atol, sb, maxit)
        _shown(bar, t, T, status != 0)
        if bool((status == 3).any()):
            r = int(torch.nonzero(status == 3)[0])
            raise FlowError(f"step size underflow in run {r} at t = {float(t[r]):.6g}")
        if bool((status != 0).all()):
            break
        if bool(((n_acc + n_rej) > max_steps).any()):
            raise FlowError(f"more than max_steps = {max_steps} steps; t = {t.tolist()[:4]}...")
        if bool((count >= cap).any()):
            rec_t = torch.cat([rec_t, torch.full_like(rec_t, float("nan"))], dim=1)
            rec_L = torch.cat([rec_L, torch.full_like(rec_L, float("nan"))], dim=1)
            cap *= 2
    for i in range(S):  # snapshots never reached (run stopped early): the final state
        miss = next_snap <= i
        if bool(miss.any()):
            snap_a[i, miss] = th[miss, :, 0]
            snap_W[i, miss] = th[miss, :, 1:]
    return rec_t, rec_L, count, t, stopped_at, n_acc, n_rej
