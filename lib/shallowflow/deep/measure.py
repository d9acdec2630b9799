"""Measurements of deep networks, built on ``torch.func``.

Conventions: a *model function* ``f(params, x)`` maps a tuple of parameter tensors and inputs to outputs;
an ensemble carries a leading runs axis on every parameter (as :class:`~shallowflow.deep.models.DeepFCN`
does), and a scalar *objective* ``h(params)`` of an ensemble is the **sum** of the runs' losses, so its
gradient and Hessian are block-diagonal over runs: one gradient, one HVP and one power iteration serve
every run at once (``per_run=True`` below normalises and reduces run by run).

- Gram matrices and spectra: :func:`gram`, :func:`gram_stats` (eigenvalues always in float64, even
  when the forward pass ran in float32: the features are cast before the product),
  :func:`feature_gram_stats` for every layer of a model.
- Tangent kernel: :func:`ntk_gram` (``jacrev`` + ``functional`` forward), K = J J^T.
- PL: :func:`pl_ratio` (the local coefficient (6.2), mu = norm(grad f)^2 / (2 (f - f*))), and
  :func:`per_example_grad_sq` (``vmap(grad)``) for the expectation variant (6.3) and the Lipschitz G.
- Smoothness: :func:`hvp` (forward-over-reverse, ``jvp`` of ``grad``) and :func:`power_iteration`
  for the top Hessian eigenvalue, warm-startable; :func:`secant_smoothness` as a cheap cross-check.
"""
from __future__ import annotations

from typing import Callable, Sequence

import torch
from torch.func import grad, jacrev, jvp, vmap

Params = tuple  # a tuple of tensors


# ---------------------------------------------------------------------------------------------
# Gram matrices
# ---------------------------------------------------------------------------------------------
def gram(F: torch.Tensor) -> torch.Tensor:
    """``F F^T`` over the last axis, in float64 whatever the dtype of ``F`` (..., n, w) -> (..., n, n)."""
    F = F.to(torch.float64)
    return F @ F.transpose(-1, -2)


def gram_stats(G: torch.Tensor, scale: float = 1.0) -> dict:
    """Spectral and entrywise statistics of (a batch of) Gram matrices ``G / scale`` in float64:
    ``lmin``, ``lmax``, ``logcond`` (natural log of lmax / lmin; inf when lmin <= 0), ``diag_min``,
    ``offdiag_max`` (largest abs(G_ij), i != j) and ``offdiag_rowsum`` (max_i sum_{j != i} abs(G_ij), the
    Gershgorin radius)."""
    G = G.to(torch.float64) / scale
    ev = torch.linalg.eigvalsh(G)
    lmin, lmax = ev[..., 0], ev[..., -1]
    logcond = torch.where(lmin > 0, torch.log(lmax / lmin.clamp_min(1e-300)), torch.full_like(lmin, float("inf")))
    n = G.shape[-1]
    eye = torch.eye(n, dtype=torch.bool, device=G.device)
    off = G.abs().masked_fill(eye, 0.0)
    return {"lmin": lmin, "lmax": lmax, "logcond": logcond,
            "diag_min": torch.diagonal(G, dim1=-2, dim2=-1).min(-1).values,
            "offdiag_max": off.amax((-2, -1)), "offdiag_rowsum": off.sum(-1).amax(-1)}


@torch.no_grad()
def feature_gram_stats(model, x: torch.Tensor, scale: float | None = None) -> dict:
    """:func:`gram_stats` of the feature Gram matrix G^m of every hidden layer of ``model`` (a
    :class:`DeepFCN`), each of shape (R, depth); ``scale`` defaults to the width (G^m / width)."""
    feats = model.features(x)
    scale = float(model.width) if scale is None else scale
    per = [gram_stats(gram(h), scale) for h in feats]
    return {k: torch.stack([p[k] for p in per], dim=-1) for k in per[0]}


# ---------------------------------------------------------------------------------------------
# tangent kernel
# ---------------------------------------------------------------------------------------------
def ntk_gram(f: Callable, params: Params, x: torch.Tensor) -> torch.Tensor:
    """The tangent-kernel Gram matrix K = J J^T of ONE model (nC x nC, outputs flattened example-major),
    with J the Jacobian of ``f(params, x)`` (n, C) in the parameters, by ``torch.func.jacrev``."""
    jac = jacrev(f)(params, x)
    out_numel = f(params, x).numel()
    J = torch.cat([j.reshape(out_numel, -1) for j in jac], dim=1).to(torch.float64)
    return J @ J.T


# ---------------------------------------------------------------------------------------------
# gradients, PL ratio, smoothness
# ---------------------------------------------------------------------------------------------
def _per_run_sum(ts: Sequence[torch.Tensor], per_run: bool) -> torch.Tensor:
    if per_run:
        return sum(t.reshape(t.shape[0], -1).sum(1) for t in ts)
    return sum(t.sum() for t in ts)


def dot(a: Params, b: Params, per_run: bool = True) -> torch.Tensor:
    """Inner product of two parameter tuples, per run (leading axis) or in total."""
    return _per_run_sum([x * y for x, y in zip(a, b)], per_run)


def sq_norm(a: Params, per_run: bool = True) -> torch.Tensor:
    return dot(a, a, per_run)


def pl_ratio(grad_sq: torch.Tensor, loss: torch.Tensor, loss_star: float = 0.0) -> torch.Tensor:
    """The local PL coefficient (6.2): ``mu = ||grad f||^2 / (2 (f - f*))`` (f* = 0 for overparameterised
    models, as the thesis takes it).  Scales with the loss normalisation; mu / L does not."""
    gap = loss - loss_star
    if bool((gap <= 0).any()):
        raise ValueError("the PL ratio needs f > f* (the optimality gap is <= 0)")
    return grad_sq / (2 * gap)


def hvp(h: Callable, params: Params, v: Params) -> Params:
    """Hessian-vector product of the scalar ``h(params)`` with ``v`` (forward-over-reverse)."""
    return jvp(grad(h), (params,), (v,))[1]


def power_iteration(h: Callable, params: Params, iters: int = 20, v0: Params | None = None, per_run: bool = True,
                    seed: int = 0) -> tuple[torch.Tensor, Params]:
    """Top Hessian eigenvalue of ``h`` by power iteration on HVPs (largest abs(lambda); its Rayleigh
    quotient is returned).  With ``per_run`` the Hessian is block-diagonal over the leading runs axis
    and every run gets its own eigenvalue.  ``v0`` warm-starts (the previous eigenvector, footnote 6);
    returns (lambda, v)."""
    if iters < 1:
        raise ValueError(f"iters must be >= 1, got {iters}")
    if v0 is None:
        g = torch.Generator(device="cpu").manual_seed(seed)
        v0 = tuple(torch.randn(p.shape, generator=g, dtype=p.dtype).to(p.device) for p in params)

    def normalise(v):
        n = torch.sqrt(sq_norm(v, per_run))
        return tuple(t / (n.reshape(-1, *([1] * (t.dim() - 1))) if per_run else n) for t in v)

    v = normalise(v0)
    lam = None
    for _ in range(iters):
        Hv = hvp(h, params, v)
        lam = dot(v, Hv, per_run)
        v = normalise(Hv)
    return lam, v


def secant_smoothness(g0: Params, g1: Params, p0: Params, p1: Params, per_run: bool = True) -> torch.Tensor:
    """``||grad f(p1) - grad f(p0)|| / ||p1 - p0||``: a lower estimate of the local smoothness."""
    dg = tuple(a - b for a, b in zip(g1, g0))
    dp = tuple(a - b for a, b in zip(p1, p0))
    return torch.sqrt(sq_norm(dg, per_run) / sq_norm(dp, per_run))


def per_example_grad_sq(loss_i: Callable, params: Params, X: torch.Tensor, Y: torch.Tensor, x_axis: int = 0,
                        per_run: bool = True, chunk_size: int | None = 16) -> torch.Tensor:
    """Squared norms of per-example gradients, shape (n,) or (R, n) with ``per_run``.

    ``loss_i(params, x, y)`` is the loss of one example (summed over runs for an ensemble, so that each
    run's block of the gradient is that run's per-example gradient); ``X``, ``Y`` carry the examples on
    axis ``x_axis``.  ``torch.func.vmap(grad)`` in chunks of ``chunk_size`` examples, reduced to norms
    inside the map so no per-example gradient is kept."""
    def one(x, y):
        return sq_norm(grad(loss_i)(params, x, y), per_run)

    out = vmap(one, in_dims=(x_axis, x_axis), chunk_size=chunk_size)(X, Y)
    return out.T if per_run else out


def fc_per_example_grad_sq(weights: Params, x: torch.Tensor, y: torch.Tensor, loss: str, act: str = "relu",
                           normalised: bool = True, renormalise: bool = False) -> torch.Tensor:
    """Exact squared norms of the per-example gradients of a bias-free fully connected network
    (:func:`shallowflow.deep.models.apply` with a head), shape (..., n), without forming them: the gradient
    of example i in layer k is the outer product delta_{k,i} a_{k-1,i}^T, so its squared norm is
    norm(delta_{k,i})^2 norm(a_{k-1,i})^2.  The deltas are ONE ``torch.func.grad`` of the summed loss with respect
    to zero perturbations of the pre-activations (each example's loss depends on its own rows only).
    Equals :func:`per_example_grad_sq` (tested) at the cost of one backward pass."""
    from .models import activation, renormalise_rows
    from .train import example_loss

    phi = activation(act, normalised)

    def forward(eps):
        h, inputs = x, []
        for W, e in zip(weights[:-1], eps[:-1]):
            inputs.append(h)
            h = phi(h @ W.transpose(-1, -2) + e)
            if renormalise:
                h = renormalise_rows(h)
        inputs.append(h)
        out = h @ weights[-1].transpose(-1, -2) + eps[-1]
        return example_loss(out, y, loss).sum(), inputs

    lead = x.shape[:-1]
    eps0 = tuple(torch.zeros(*lead, W.shape[-2], dtype=x.dtype, device=x.device) for W in weights)
    deltas, inputs = grad(forward, has_aux=True)(eps0)
    return sum(d.square().sum(-1) * a.detach().square().sum(-1) for d, a in zip(deltas, inputs))
