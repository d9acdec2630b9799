"""Quantities measured on parameters and loss curves, for whole ensembles at once.

Parameter metrics take a :class:`Params` with shapes (R, m) / (R, m, d) and return one value per
run and neuron; curve metrics take a loss history (R, K) and the iterations it was recorded at.
"""
from __future__ import annotations

import torch

from .models import Params


def signs(p: Params) -> torch.Tensor:
    """s_j = sign(a_j) (+1 where a_j = 0), shape (R, m)."""
    return torch.where(p.a >= 0, torch.ones_like(p.a), -torch.ones_like(p.a))


def neuron_norms(p: Params) -> torch.Tensor:
    """||w_j||, shape (R, m)."""
    return p.W.norm(dim=-1)


def signed_norms(p: Params) -> torch.Tensor:
    """s_j ||w_j|| (equal to a_j for balanced parameters), shape (R, m)."""
    return signs(p) * neuron_norms(p)


def balancedness(p: Params) -> torch.Tensor:
    """a_j^2 - ||w_j||^2, conserved by gradient flow (003, Lemma 1), shape (R, m)."""
    return p.a ** 2 - (p.W ** 2).sum(-1)


def kinks(p: Params) -> torch.Tensor:
    """Kink position -w_j2 / w_j1 of each neuron for bias-augmented 1-D inputs (x, 1), shape (R, m)."""
    if p.dim != 2:
        raise ValueError(f"kinks need 1-D inputs augmented with a bias (d = 2), got d = {p.dim}")
    return -p.W[..., 1] / p.W[..., 0]


def cosines(W: torch.Tensor, direction: torch.Tensor) -> torch.Tensor:
    """cos(w_j, direction) for W (..., m, d) and a direction (d,) or (..., d): shape (..., m)."""
    u = direction / direction.norm(dim=-1, keepdim=True)
    if u.ndim == 1:
        return (W @ u) / W.norm(dim=-1)
    return torch.einsum("...md,...d->...m", W, u) / W.norm(dim=-1)


def squared_norm(p: Params) -> torch.Tensor:
    """||theta||^2 = ||a||^2 + ||W||_F^2 of each run, shape (R,)."""
    return (p.a ** 2).sum(-1) + (p.W ** 2).sum((-1, -2))


def first_below(curve: torch.Tensor, threshold, steps: torch.Tensor) -> torch.Tensor:
    """First recorded iteration at which curve < threshold, per run; -1 where it never happens.

    curve: (R, K); threshold: scalar or (R,); steps: (K,) iterations of the recordings.
    """
    thr = torch.as_tensor(threshold, dtype=curve.dtype)
    thr = thr.reshape(-1, 1) if thr.ndim else thr
    below = curve < thr
    hit = below.any(dim=1)
    idx = below.to(torch.int8).argmax(dim=1)
    return torch.where(hit, steps[idx], torch.full_like(idx, -1))


def longest_run_within(curve: torch.Tensor, value, rtol: float) -> torch.Tensor:
    """Length (in recordings) of the longest stretch with |curve - value| <= rtol * |value|, per run."""
    v = torch.as_tensor(value, dtype=curve.dtype)
    v = v.reshape(-1, 1) if v.ndim else v
    inside = ((curve - v).abs() <= rtol * v.abs()).to(torch.int64)
    # run lengths via cumulative sums reset at every "outside" sample
    c = inside.cumsum(dim=1)
    reset = torch.where(inside == 0, c, torch.zeros_like(c)).cummax(dim=1).values
    return (c - reset).max(dim=1).values


def max_relative_increase(curve: torch.Tensor) -> torch.Tensor:
    """max_k (L_{k+1} - L_k) / L_k per run: <= 0 means the curve never increases."""
    return ((curve[:, 1:] - curve[:, :-1]) / curve[:, :-1].abs().clamp_min(1e-300)).max(dim=1).values
