"""Measurements the second half of the 000 part shares: the thesis's plateau detector (App. C, eq. (C.1)),
axial concentration of neuron orientations, neuron selection and per-run validity.

Everything takes whole ensembles (a loss history (R, K), parameters (R, m, d)) and returns one value per run.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from ...engine import metrics
from . import theory
from ...engine.models import Params


def finite_runs(loss: torch.Tensor, p: Params) -> torch.Tensor:
    """A run is valid when its whole loss history and final parameters are finite, shape (R,)."""
    return metrics.finite_runs(loss, p)


def epochs_to(loss: torch.Tensor, steps: torch.Tensor, threshold: float) -> torch.Tensor:
    """First recorded epoch with L < threshold (the thesis's T for threshold 0.01), -1 if never."""
    return metrics.first_below(loss, threshold, steps)


def thesis_plateaus(loss: torch.Tensor, steps: torch.Tensor, T=None, blocks: int = 100,
                    tol: float = 0.01) -> dict:
    """The plateau detector of App. C, eq. (C.1), as the spec reads it: blocks of Dt = max(1, T // blocks)
    epochs; a block is slow when abs(log10 L(t) - log10 L(t - Dt)) < tol; a plateau is >= 2 adjacent slow
    blocks.  T is per run (default: the last recorded epoch); blocks after T are ignored.

    Each record is read once: a block edge reads the first record at or after it, and where the loss is recorded
    more coarsely than one block (record stride > T // blocks) several edges would read the same record, a zero
    change counted as a slow block (a lazy run recorded every 1000 epochs showed 1-2 such spurious plateaus).  There
    the block is one record stride (the detector's finest resolution on that record), and an edge that still falls
    on a record already read is dropped.  Where every block spans at least one stride (the loss recorded at every
    epoch, or finely enough) the grid is the one above, unchanged.

    Returns ``count`` (plateaus per run), ``initial`` (length in epochs of the plateau starting at epoch 0,
    0 if none) and ``spans`` (list of (start, end) epochs per run)."""
    steps = torch.as_tensor(steps)
    R = loss.shape[0]
    Tl = [int(steps[-1])] * R if T is None else [int(t) if int(t) > 0 else int(steps[-1]) for t in T]
    counts, initial, spans = [], [], []
    st = steps.numpy()
    every = max(1, int(np.diff(st).min())) if len(st) > 1 else 1
    for r in range(R):
        dt = max(1, every, Tl[r] // blocks)
        grid = np.arange(0, Tl[r] + 1, dt)
        idx, first = np.unique(np.clip(np.searchsorted(st, grid), 0, len(st) - 1), return_index=True)  # each record once
        runs_ = theory.slow_stretches(loss[r, idx].clamp_min(1e-300).log10().numpy(), grid[first], tol)
        counts.append(len(runs_))
        initial.append(runs_[0][1] - runs_[0][0] if runs_ and runs_[0][0] == 0 else 0)
        spans.append(runs_)
    return dict(count=torch.tensor(counts), initial=torch.tensor(initial), spans=spans)


def grown(W: torch.Tensor, rel: float = 0.05) -> torch.Tensor:
    """Neurons with norm(w_j) above ``rel`` times the run's largest norm, shape (R, m)."""
    n = W.norm(dim=-1)
    return n > rel * n.amax(-1, keepdim=True)


def axial_concentration(W: torch.Tensor, rel: float = 0.05) -> torch.Tensor:
    """Mean resultant length of exp(2 i beta_j), beta_j the angle of w_j, over grown neurons (1: all
    neurons on one line through 0, either sign; 0: uniform), per run."""
    beta = torch.atan2(W[..., 1], W[..., 0])
    g = grown(W, rel).to(W.dtype)
    c = (torch.cos(2 * beta) * g).sum(-1) / g.sum(-1)
    s = (torch.sin(2 * beta) * g).sum(-1) / g.sum(-1)
    return torch.sqrt(c ** 2 + s ** 2)


def circular_std(angles: torch.Tensor) -> float:
    """Circular standard deviation sqrt(-2 ln R) of a set of angles (radians)."""
    if angles.numel() == 0:
        return float("nan")
    R = float(torch.sqrt(torch.cos(angles).mean() ** 2 + torch.sin(angles).mean() ** 2))
    return math.sqrt(max(-2.0 * math.log(max(R, 1e-300)), 0.0))


def piecewise_linear(xk: torch.Tensor, yk: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """The piecewise-linear interpolant of the points (xk, yk) at x (constant outside their range)."""
    order = torch.argsort(xk)
    xs, ys = xk[order], yk[order]
    x = x.clamp(xs[0], xs[-1])
    i = torch.searchsorted(xs, x, right=True).clamp(1, len(xs) - 1)
    x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


def label_fit_epochs(traj, data, network, tol: float = 0.1):
    """Per run, the first snapshot epoch from which on every positive (resp. negative) label is fitted within
    ``tol`` relative error, abs(h(x_k) - y_k) < tol abs(y_k), at every later snapshot; -1 if never.
    Returns (positive epochs (R,), negative epochs (R,), residuals abs(h - y) at the snapshots (S, R, n))."""
    steps = traj.snap_steps
    X = data.X.cpu()
    H = torch.stack([network.forward(traj.at(k), X) for k in steps])  # (S, R, n)
    y = data.y.cpu()
    res = (H - y).abs()
    ok = res < tol * y.abs()
    suffix = torch.flip(torch.cumprod(torch.flip(ok.to(torch.int64), [0]), 0), [0]).bool()
    first = suffix.to(torch.int8).argmax(0)  # (R, n)
    ep = torch.tensor(steps)[first]
    ep = torch.where(suffix.any(0), ep, torch.full_like(ep, -1))
    pos, neg = y > 0, y < 0
    def worst(e):  # the last label of the group to be fitted; -1 if any never is
        return torch.where((e < 0).any(1), torch.full_like(e[:, 0], -1), e.amax(1))
    return worst(ep[:, pos]), worst(ep[:, neg]), res


def weighted_axial_concentration(W: torch.Tensor) -> torch.Tensor:
    """abs(sum_j norm(w_j)^2 exp(2 i beta_j)) / sum_j norm(w_j)^2 per run: 1 when the weight mass lies on one line through 0,
    about 1/sqrt(m) for random directions."""
    beta = torch.atan2(W[..., 1], W[..., 0])
    n2 = (W ** 2).sum(-1)
    c = (n2 * torch.cos(2 * beta)).sum(-1)
    s = (n2 * torch.sin(2 * beta)).sum(-1)
    return torch.sqrt(c ** 2 + s ** 2) / n2.sum(-1)
