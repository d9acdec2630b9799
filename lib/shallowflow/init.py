"""Initialisations, seeded per run so that a run's draw never depends on the ensemble around it.

Run r of an ensemble uses ``torch.Generator().manual_seed(seeds[r])`` on the CPU, so training
seed 3 alone or as the fourth member of a 256-run batch gives the same initial parameters (and,
since the step is batched elementwise, the same trajectory to rounding).
"""
from __future__ import annotations

from typing import Sequence

import torch

from .config import DTYPE, default_device
from .models import Params


def _per_run(values, runs: int, name: str) -> torch.Tensor:
    t = torch.as_tensor(values, dtype=DTYPE).reshape(-1)
    if t.numel() == 1:
        t = t.expand(runs)
    if t.numel() != runs:
        raise ValueError(f"{name} must be a scalar or have one value per run ({runs}), got {t.numel()}")
    return t.clone()


def _draw(seeds: Sequence[int], m: int, d: int):
    """Per run: g ~ N(0, I_d) for each neuron (m, d), then signs s ~ U{-1, +1} (m,)."""
    gs, ss, ns = [], [], []
    for seed in seeds:
        gen = torch.Generator().manual_seed(int(seed))
        gs.append(torch.randn(m, d, generator=gen, dtype=DTYPE))
        ss.append(2.0 * torch.randint(0, 2, (m,), generator=gen).to(DTYPE) - 1.0)
        ns.append(torch.randn(m, generator=gen, dtype=DTYPE))
    return torch.stack(gs), torch.stack(ss), torch.stack(ns)


def balanced(seeds: Sequence[int], m: int, d: int, scale, device=None) -> Params:
    """Balanced initialisation (003, eq. (4)): w_j = lambda g_j, a_j = s_j ||w_j||.

    ``scale`` (lambda) is a scalar or one value per run.
    """
    lam = _per_run(scale, len(seeds), "scale")
    g, s, _ = _draw(seeds, m, d)
    W = lam[:, None, None] * g
    a = s * W.norm(dim=-1)
    return Params(a, W).to(device or default_device())


def unbalanced(seeds: Sequence[int], m: int, d: int, scale, output_scale=None, device=None) -> Params:
    """Independent Gaussian layers: w_j = lambda g_j and a_j = lambda_a * n_j with n_j ~ N(0, 1).

    ``output_scale`` (lambda_a) defaults to ``scale``.
    """
    lam = _per_run(scale, len(seeds), "scale")
    lam_a = lam if output_scale is None else _per_run(output_scale, len(seeds), "output_scale")
    g, _, nrm = _draw(seeds, m, d)
    return Params(lam_a[:, None] * nrm, lam[:, None, None] * g).to(device or default_device())

