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



def asymmetric(seeds: Sequence[int], m: int, d: int, scale=1.0, first_layer: str = "gauss",
               w_factor: float = 1.0, device=None) -> Params:
    """001, App. B initialisation (Assumption 1, abs(a_j) >= norm(w_j)): w_j ~ N(0, I_d / d) ("gauss") or
    torch's default linear layer U(-1/sqrt(d), 1/sqrt(d)) entrywise ("uniform", the authors' code),
    then a_j = s_j (norm(w_j) + E_j), s_j ~ U{-1, +1}, E_j ~ Exp(1); then w_j <- w_factor * w_j (the
    authors' final Exp.-2 code multiplies the first layer by 0.01 after a_j is drawn); finally both
    layers are multiplied by ``scale`` (a scalar or one value per run), which keeps Assumption 1."""
    if first_layer not in ("gauss", "uniform"):
        raise ValueError(f"first_layer must be 'gauss' or 'uniform', got {first_layer!r}")
    lam = _per_run(scale, len(seeds), "scale")
    As, Ws = [], []
    for seed in seeds:
        gen = torch.Generator().manual_seed(int(seed))
        if first_layer == "gauss":
            W = torch.randn(m, d, generator=gen, dtype=DTYPE) / d ** 0.5
        else:
            W = (2 * torch.rand(m, d, generator=gen, dtype=DTYPE) - 1) / d ** 0.5
        s = 2.0 * torch.randint(0, 2, (m,), generator=gen).to(DTYPE) - 1.0
        e = torch.empty(m, dtype=DTYPE).exponential_(1.0, generator=gen)
        As.append(s * (W.norm(dim=1) + e))
        Ws.append(w_factor * W)
    return Params(lam[:, None] * torch.stack(As), lam[:, None, None] * torch.stack(Ws)).to(device or default_device())


def group(X: torch.Tensor, y: torch.Tensor, groups: int, seeds: Sequence[int], norm=1.0, device=None) -> Params:
    """001, eq. (9), group initialisation on orthogonal inputs X (n, d): the n points are split into
    ``groups`` consecutive groups of k = n / groups points; neuron j is w_j = sum_i u_i x_i over its own
    group with u_i > 0 (u_i ~ U(0, 1], seeded), rescaled to norm(w_j) = ``norm``, and a_j = s_j norm(w_j)
    with s_j the common sign of its group's labels (raises if a group's labels disagree in sign)."""
    n = X.shape[0]
    if groups < 1 or n % groups:
        raise ValueError(f"groups must divide n = {n}, got {groups}")
    k = n // groups
    s = torch.sign(y.reshape(groups, k))
    if not bool((s == s[:, :1]).all()) or bool((s == 0).any()):
        raise ValueError("group initialisation needs all labels of a group to share one non-zero sign")
    As, Ws = [], []
    for seed in seeds:
        gen = torch.Generator().manual_seed(int(seed))
        u = 1.0 - torch.rand(groups, k, generator=gen, dtype=DTYPE)  # (0, 1]
        W = torch.einsum("jk,jkd->jd", u, X.reshape(groups, k, -1).to(DTYPE))
        W = norm * W / W.norm(dim=1, keepdim=True)
        Ws.append(W)
        As.append(s[:, 0] * W.norm(dim=1))
    return Params(torch.stack(As), torch.stack(Ws)).to(device or default_device())
