"""One training loop for deep models over any ``torch.optim.Optimizer``, with measurement callbacks.

:func:`train` is a plain loop: at every step it evaluates ``objective(step)`` (the per-run losses of
the batch of that step: full batch for gradient descent, a minibatch for SGD), checks that they are
finite (else :class:`shallowflow.engine.train.DivergenceError` naming the step and the run), back-propagates
their sum (runs are independent, so each run's gradient is its own), calls ``callback(step, losses)``
where the gradients in ``.grad`` are those of the current parameters, and lets the optimizer step.
Optimizers that need a closure (line searches, L-BFGS, second-order rates) get one; an optimizer whose class
says ``needs_closure = False`` (:class:`PerRunSGD`) steps on the gradients already in ``.grad`` (a closure would
only compute the same gradient a second time: a forward and a backward pass per step).  The parameters are
checked for finiteness after every step.

:class:`PerRunSGD` is plain (full-batch or minibatch) SGD with one step size per run, so a grid of
learning rates trains as one ensemble.  :func:`loss_per_run` and :func:`accuracy` define the losses
of Chapter 6: MSE ``mean_i 1/2 ||f(x_i) - onehot(y_i)||^2`` (``"mse"``), torch's ``MSELoss`` (the mean
of the squared errors over examples AND classes, ``"mse_mean"``) and cross-entropy ``mean_i CE`` (``"ce"``).
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

import torch

from ..engine import progress as _progress
from ..engine.train import DivergenceError

LOSSES = ("mse", "mse_mean", "ce")


def _one_hot(y: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    # a comparison, not F.one_hot: no data-dependent check, so it works under torch.func.vmap
    return (y.unsqueeze(-1) == torch.arange(out.shape[-1], device=out.device)).to(out.dtype)


def loss_per_run(out: torch.Tensor, y: torch.Tensor, kind: str) -> torch.Tensor:
    """Per-run mean loss of outputs ``out`` (R, n, C) (or (n, C)) against integer labels ``y`` (.., n)."""
    if kind in ("mse", "mse_mean"):
        return example_loss(out, y, kind).mean(-1)
    if kind == "ce":
        logp = torch.log_softmax(out, dim=-1)
        return -logp.gather(-1, y.expand(out.shape[:-1]).unsqueeze(-1)).squeeze(-1).mean(-1)
    raise ValueError(f"unknown loss {kind!r}: expected one of {LOSSES}")


def example_loss(out: torch.Tensor, y: torch.Tensor, kind: str) -> torch.Tensor:
    """Loss of single examples: ``out`` (..., C), ``y`` (...) -> (...)."""
    if kind == "mse":
        target = _one_hot(y, out)
        return 0.5 * ((out - target) ** 2).sum(-1)
    if kind == "mse_mean":
        target = _one_hot(y, out)
        return ((out - target) ** 2).mean(-1)
    if kind == "ce":
        return -torch.log_softmax(out, -1).gather(-1, y.unsqueeze(-1)).squeeze(-1)
    raise ValueError(f"unknown loss {kind!r}: expected one of {LOSSES}")


@torch.no_grad()
def accuracy(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-run fraction of correct argmax predictions."""
    return (out.argmax(-1) == y).to(torch.float64).mean(-1)


class PerRunSGD(torch.optim.Optimizer):
    """SGD without momentum whose step size ``lr`` is a scalar or one value per run (the leading axis
    of every parameter): ``p[r] <- p[r] - lr[r] * grad[r]``.  It steps on the gradients in ``.grad``, so
    :func:`train` gives it no closure (``needs_closure``)."""

    needs_closure = False

    def __init__(self, params: Iterable, lr):
        lr_t = torch.as_tensor(lr, dtype=torch.float64)
        if not bool(torch.all(lr_t > 0)) or not bool(torch.all(torch.isfinite(lr_t))):
            raise ValueError(f"lr must be finite and > 0, got {lr}")
        super().__init__(params, {"lr": lr_t})

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr = group["lr"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                if lr.dim() == 0:
                    p.add_(p.grad, alpha=-float(lr))
                else:
                    if lr.shape[0] != p.shape[0]:
                        raise ValueError(f"{lr.shape[0]} step sizes for {p.shape[0]} runs")
                    p.sub_(lr.to(p).reshape(-1, *([1] * (p.dim() - 1))) * p.grad)
        return loss


@dataclass
class History:
    """Per-step losses (steps + 1, R), what the callback returned at the steps it ran, the wall time."""

    loss: torch.Tensor
    records: dict = field(default_factory=dict)  # name -> list of (step, value)
    seconds: float = 0.0

    def series(self, name: str) -> tuple[list, torch.Tensor]:
        """(steps, stacked values) of one recorded measurement."""
        pairs = self.records[name]
        return [s for s, _ in pairs], torch.stack([torch.as_tensor(v) for _, v in pairs])


def _check_finite(what: torch.Tensor, step: int, label: str):
    bad = ~torch.isfinite(what.detach().reshape(what.shape[0] if what.dim() else 1, -1)).all(-1)
    if bool(bad.any()):
        run = int(torch.nonzero(bad)[0, 0])
        raise DivergenceError(f"{label} became non-finite at step {step} (run {run}); "
                              f"lower the learning rate", iteration=step, run=run)


def train(params: Iterable[torch.Tensor], objective: Callable[[int], torch.Tensor], optimizer: torch.optim.Optimizer,
          steps: int, callback: Callable[[int, torch.Tensor], dict | None] | None = None, every: int = 1,
          progress: bool | None = None) -> History:
    """Run ``steps`` optimizer steps (see the module doc); losses are recorded at steps 0..steps, the
    callback at every ``every``-th step and the last.  A callback returns a dict of measurements (or
    None); they are collected in ``History.records``.  progress: None shows a bar where
    :mod:`shallowflow.engine.progress` shows bars (a terminal, an interactive notebook), False never."""
    if steps < 0 or every < 1:
        raise ValueError(f"steps must be >= 0 and every >= 1, got {steps}, {every}")
    params = list(params)
    losses, records = [], {}
    t0 = time.perf_counter()
    shown = _progress.bar(steps + 1, "training", unit="step") if progress is not False \
        else contextlib.nullcontext(_progress.SILENT)

    def closure():
        optimizer.zero_grad()
        L = objective(step)
        L.sum().backward()
        return L.sum()

    with shown as bar:
        for step in range(steps + 1):
            optimizer.zero_grad()
            L = objective(step)
            _check_finite(L, step, "the loss")
            L.sum().backward()
            losses.append(L.detach().reshape(-1).clone())
            if callback is not None and (step % every == 0 or step == steps):
                out = callback(step, L.detach())
                for k, v in (out or {}).items():
                    records.setdefault(k, []).append((step, v))
            bar.update(1)
            if step == steps:
                break
            optimizer.step(closure if getattr(optimizer, "needs_closure", True) else None)
            for p in params:
                _check_finite(p, step + 1, "a parameter")
    return History(torch.stack(losses), records, time.perf_counter() - t0)
