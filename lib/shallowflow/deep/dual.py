"""The infinite-width line: dual activations and the feature-Gram recursion (4.10) / Lemma 23.

For a layer ``h' = phi(W h)`` with W ~ N(0, 1/fan_in), the pre-activations of two inputs are, at infinite
width, jointly Gaussian with the covariance ``Sigma = G / fan_in`` of the previous features, so the next
rescaled feature Gram matrix is ``Sigma'_ij = E phi(u) phi(v)``, (u, v) ~ N(0, [[S_ii, S_ij], [S_ij, S_jj]])
(the dual activation [DFS16] applied entrywise, (4.10)).  This is the recursion for the *feature*
(conjugate-kernel) Gram matrix G, not for the tangent kernel (spec erratum 7).

- ReLU has a closed form (the arc-cosine kernel of degree 1, [CS09]): with rho the correlation,
  E relu(u) relu(v) = sqrt(S_ii S_jj) (sqrt(1 - rho^2) + (pi - arccos rho) rho) / (2 pi).
- Tanh uses a 2-D Gauss-Hermite quadrature (``order`` nodes per axis), chunked over the pairs.

Renormalisation (every point rescaled to norm sqrt(width)) makes the diagonal 1 after every layer.
:func:`infinite_width_grams` iterates the recursion from the inputs; :func:`lemma24_bound` is
Lemma 24's ``f(1) - f(1 - delta)``.
"""
from __future__ import annotations

import math

import torch

from .models import RELU_MEAN, RELU_STD, TANH_STD, gauss_hermite


def _arccos_kernel(rho: torch.Tensor) -> torch.Tensor:
    rho = rho.clamp(-1.0, 1.0)
    return (torch.sqrt((1 - rho * rho).clamp_min(0)) + (math.pi - torch.arccos(rho)) * rho) / (2 * math.pi)


def _tanh_pairs(a: torch.Tensor, b: torch.Tensor, rho: torch.Tensor, order: int, chunk: int = 2048) -> torch.Tensor:
    """E tanh(a z1) tanh(b (rho z1 + sqrt(1-rho^2) z2)) for flat tensors a, b, rho (quadrature)."""
    z, w = gauss_hermite(order)
    z = torch.as_tensor(z, dtype=a.dtype, device=a.device)
    w = torch.as_tensor(w, dtype=a.dtype, device=a.device)
    out = torch.empty_like(a)
    for s in range(0, a.numel(), chunk):
        A, B, R = a[s:s + chunk, None, None], b[s:s + chunk, None, None], rho[s:s + chunk, None, None]
        C = torch.sqrt((1 - R * R).clamp_min(0))
        u = torch.tanh(A * z[None, :, None])  # (p, K, 1)
        v = torch.tanh(B * (R * z[None, :, None] + C * z[None, None, :]))  # (p, K, K)
        out[s:s + chunk] = torch.einsum("pkl,k,l->p", u * v, w, w)
    return out


def dual(Sigma: torch.Tensor, activation: str = "relu", normalised: bool = True, order: int = 64) -> torch.Tensor:
    """``E phi(u) phi(v)`` entrywise for a covariance matrix ``Sigma`` (n, n): the next layer's rescaled
    feature Gram matrix at infinite width."""
    q = torch.diagonal(Sigma).clamp_min(0)
    sq = torch.sqrt(q)
    outer = sq[:, None] * sq[None, :]
    rho = torch.where(outer > 0, Sigma / outer.clamp_min(1e-300), torch.zeros_like(Sigma)).clamp(-1.0, 1.0)
    if activation == "relu":
        E = outer * _arccos_kernel(rho)
        if not normalised:
            return E
        m = RELU_MEAN
        return (E - m * m * (sq[:, None] + sq[None, :]) + m * m) / RELU_STD ** 2
    if activation == "tanh":
        n = Sigma.shape[0]
        iu = torch.triu_indices(n, n, device=Sigma.device)
        vals = _tanh_pairs(sq[iu[0]], sq[iu[1]], rho[iu[0], iu[1]], order)
        E = torch.zeros_like(Sigma)
        E[iu[0], iu[1]] = vals
        E[iu[1], iu[0]] = vals
        return E / TANH_STD ** 2 if normalised else E
    raise ValueError(f"unknown activation {activation!r}: expected 'relu' or 'tanh'")


def to_correlation(S: torch.Tensor) -> torch.Tensor:
    """``S_ij / sqrt(S_ii S_jj)``: the Gram matrix of the points rescaled to equal norms."""
    d = torch.sqrt(torch.diagonal(S))
    return S / (d[:, None] * d[None, :])


def infinite_width_grams(Sigma0: torch.Tensor, depth: int, activation: str = "relu", renormalise: bool = True,
                         normalised: bool = True, order: int = 64) -> torch.Tensor:
    """Rescaled feature Gram matrices ``G^m / width`` at infinite width for m = 1..depth, shape
    (depth, n, n), from the first layer's pre-activation covariance ``Sigma0`` (= X X^T / d for weights
    N(0, 1/d)).  With ``renormalise`` every layer's Gram matrix is rescaled to unit diagonal."""
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    S = Sigma0
    out = []
    for _ in range(depth):
        S = dual(S, activation, normalised, order)
        if renormalise:
            S = to_correlation(S)
        out.append(S)
    return torch.stack(out)


def dual_scalar(rho: torch.Tensor, activation: str = "relu", normalised: bool = True, order: int = 64) -> torch.Tensor:
    """The dual activation of unit-variance inputs as a function of the correlation ``rho``."""
    rho = torch.as_tensor(rho, dtype=torch.float64)
    if activation == "relu":
        k = _arccos_kernel(rho)
        return (k - RELU_MEAN ** 2) / RELU_STD ** 2 if normalised else k
    if activation == "tanh":
        flat = rho.reshape(-1)
        one = torch.ones_like(flat)
        v = _tanh_pairs(one, one, flat, order).reshape(rho.shape)
        return v / TANH_STD ** 2 if normalised else v
    raise ValueError(f"unknown activation {activation!r}: expected 'relu' or 'tanh'")


def lemma24_bound(f, delta) -> torch.Tensor:
    """Lemma 24 ([AAK20]): for H >= delta I with unit diagonal, f[H] >= (f(1) - f(1 - delta)) I."""
    delta = torch.as_tensor(delta, dtype=torch.float64)
    return f(torch.ones_like(delta)) - f(1 - delta)
