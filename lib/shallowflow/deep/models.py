"""Fully connected deep networks with normalised activations (thesis Chapter 6, after [AAK20]).

Normalised activations have zero mean and unit variance on standard normal inputs (spec section 2.2):

- ReLU_norm(x) = (relu(x) - 1/sqrt(2 pi)) / sqrt(1/2 - 1/(2 pi))
- Tanh_norm(x) = tanh(x) / sqrt(E tanh(z)^2),  E tanh(z)^2 = 0.394294... (computed here by quadrature)

:class:`DeepFCN` is ``depth`` hidden layers ``h^m = phi(W^m h^{m-1})`` without biases, weights
N(0, 1/fan_in) (the variance-preserving "Kaiming" choice for normalised activations), an optional
per-layer renormalisation (footnote 3: every data point rescaled to norm sqrt(width) after each layer)
and an optional linear head.  Every weight carries a leading *runs* dimension: R independent networks
(one seed each, drawn from its own generator, so a run's weights do not depend on the batch it is in)
are one module and one batched matmul.  Inputs of shape (n, d) are shared by all runs, inputs of shape
(R, n, d) are per run.  The same computation is available as a pure function, :func:`apply`, for
``torch.func`` (vmap over runs, jvp, jacrev).
"""
from __future__ import annotations

import contextlib
import math
import time
from typing import Iterator, Sequence

import numpy as np
import torch
from torch import nn

from ..engine.config import DTYPE, default_device

RELU_MEAN = 1.0 / math.sqrt(2 * math.pi)
RELU_STD = math.sqrt(0.5 - 1.0 / (2 * math.pi))


def gauss_hermite(order: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of E f(z), z ~ N(0, 1): E f(z) ~ sum_k w_k f(z_k) (probabilists' Hermite)."""
    z, w = np.polynomial.hermite_e.hermegauss(order)
    return z, w / math.sqrt(2 * math.pi)


def _tanh_second_moment() -> float:
    z, w = gauss_hermite(200)
    return float(np.sum(w * np.tanh(z) ** 2))


TANH_SECOND_MOMENT = _tanh_second_moment()  # 0.394294...
TANH_STD = math.sqrt(TANH_SECOND_MOMENT)
ACTIVATIONS = ("relu", "tanh")


def activation(name: str, normalised: bool = True):
    """The activation ``name`` ('relu' or 'tanh') as a function of a tensor, normalised by default."""
    if name == "relu":
        if normalised:
            return lambda x: (torch.relu(x) - RELU_MEAN) / RELU_STD
        return torch.relu
    if name == "tanh":
        if normalised:
            return lambda x: torch.tanh(x) / TANH_STD
        return torch.tanh
    raise ValueError(f"unknown activation {name!r}: expected one of {ACTIVATIONS}")


def renormalise_rows(h: torch.Tensor) -> torch.Tensor:
    """Every data point (last axis) rescaled to norm sqrt(width) (the thesis's renormalisation)."""
    return h * (math.sqrt(h.shape[-1]) / h.norm(dim=-1, keepdim=True))


def apply(weights: Sequence[torch.Tensor], x: torch.Tensor, act: str = "relu", normalised: bool = True,
          renormalise: bool = False, head: bool = True, features: bool = False):
    """Pure forward pass.  ``weights`` are the hidden matrices (then the head's if ``head``), each
    (out, in) or (R, out, in); returns the outputs, or with ``features=True`` also the list of
    post-activation features of every hidden layer."""
    phi = activation(act, normalised)
    hidden = weights[:-1] if head else weights
    h = x
    feats = []
    for W in hidden:
        h = phi(h @ W.transpose(-1, -2))
        if renormalise:
            h = renormalise_rows(h)
        feats.append(h)
    out = h @ weights[-1].transpose(-1, -2) if head else h
    return (out, feats) if features else out


_ACT = activation  # stream_features' parameter of the same name shadows the function


class DeepFCN(nn.Module):
    """``runs`` fully connected networks of ``depth`` hidden layers of ``width`` neurons (see module doc).

    ``seeds`` (one per run) seed each run's weights; ``classes`` adds a linear head (None: none).
    ``dtype`` float64 by default (float32 allowed for the forward pass of large widths).
    """

    def __init__(self, d_in: int, width: int, depth: int, classes: int | None = None, activation: str = "relu",
                 normalised: bool = True, renormalise: bool = False, seeds: Sequence[int] = (0,),
                 dtype: torch.dtype = DTYPE, device=None):
        super().__init__()
        for name, v in (("d_in", d_in), ("width", width), ("depth", depth)):
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if classes is not None and (not isinstance(classes, int) or classes < 1):
            raise ValueError(f"classes must be a positive integer or None, got {classes!r}")
        if activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r}: expected one of {ACTIVATIONS}")
        seeds = [int(s) for s in seeds]
        if not seeds:
            raise ValueError("seeds must name at least one run")
        self.d_in, self.width, self.depth, self.classes = d_in, width, depth, classes
        self.act, self.normalised, self.renormalise = activation, normalised, renormalise
        self.seeds = seeds
        shapes = [(width, d_in)] + [(width, width)] * (depth - 1) + ([(classes, width)] if classes else [])
        device = device or default_device()
        per_run = []
        for s in seeds:
            g = torch.Generator().manual_seed(s)
            per_run.append([torch.randn(shape, generator=g, dtype=DTYPE) / math.sqrt(shape[1]) for shape in shapes])
        self.weights = nn.ParameterList(
            [nn.Parameter(torch.stack([w[k] for w in per_run]).to(device=device, dtype=dtype)) for k in range(len(shapes))])

    @property
    def runs(self) -> int:
        return len(self.seeds)

    @property
    def has_head(self) -> bool:
        return self.classes is not None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Outputs (R, n, classes) (or the last features when there is no head)."""
        return apply(list(self.weights), x.to(self.weights[0].dtype), self.act, self.normalised,
                     self.renormalise, self.has_head)

    def forward_features(self, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """(outputs, features of every hidden layer) from one forward pass: :meth:`forward` and :meth:`features`."""
        return apply(list(self.weights), x.to(self.weights[0].dtype), self.act, self.normalised,
                     self.renormalise, self.has_head, features=True)

    def features(self, x: torch.Tensor) -> list[torch.Tensor]:
        """Post-activation features of every hidden layer m = 1..depth, each (R, n, width)."""
        _, feats = apply(list(self.weights), x.to(self.weights[0].dtype), self.act, self.normalised,
                         self.renormalise, self.has_head, features=True)
        return feats

    def pure(self):
        """(f, params): ``f(params, x)`` is the forward pass of ONE run given a tuple of its weights
        (slice ``params`` with ``[w[r] for w in params]`` or vmap over the leading axis)."""
        act, nrm, ren, head = self.act, self.normalised, self.renormalise, self.has_head

        def f(params, x):
            return apply(list(params), x, act, nrm, ren, head)

        return f, tuple(w.detach() for w in self.weights)

    def describe(self) -> str:
        return (f"{self.depth} x {self.width} FCN, {'normalised ' if self.normalised else ''}{self.act}, "
                f"{'renormalised' if self.renormalise else 'not renormalised'}, "
                f"{self.classes or 'no'} outputs, {self.runs} run(s)")


@torch.no_grad()
def stream_features(x: torch.Tensor, width: int, depth: int, activation: str = "relu", normalised: bool = True,
                    renormalise: bool = False, seeds: Sequence[int] = (0,), dtype: torch.dtype = DTYPE,
                    device=None) -> Iterator[torch.Tensor]:
    """The hidden features of ``DeepFCN(d, width, depth, ..., seeds=seeds).features(x)``, layer by layer,
    drawing each layer's weights (from the same per-run generators, so the numbers are identical) only
    when it is needed: memory R * width^2 instead of R * depth * width^2.  ``x`` is (n, d) or (R, n, d)."""
    device = device or default_device()
    phi = _ACT(activation, normalised)
    gens = [torch.Generator().manual_seed(int(s)) for s in seeds]
    h = x.to(device=device, dtype=dtype)
    fan_in = h.shape[-1]
    for _ in range(depth):
        W = torch.stack([torch.randn((width, fan_in), generator=g, dtype=DTYPE) / math.sqrt(fan_in) for g in gens])
        h = phi(h @ W.to(device=device, dtype=dtype).transpose(-1, -2))
        if renormalise:
            h = renormalise_rows(h)
        fan_in = width
        yield h


@contextlib.contextmanager
def fastest_threads(width: int, n: int, candidates: Sequence[int] = (1, 2), dtype: torch.dtype = DTYPE):
    """Run the block with the torch intra-op thread count (among ``candidates``) that multiplies an
    (n, width) by a (width, width) matrix fastest on this machine; the previous count is restored.
    Yields the chosen count.  (The library runs one thread for its tiny two-layer work; deep matrix
    products can gain from two.)"""
    before = torch.get_num_threads()
    a = torch.randn(n, width, dtype=dtype)
    b = torch.randn(width, width, dtype=dtype)
    best, best_t = before, float("inf")
    try:
        for k in candidates:
            torch.set_num_threads(int(k))
            a @ b
            t0 = time.perf_counter()
            for _ in range(3):
                a @ b
            t = time.perf_counter() - t0
            if t < best_t:
                best, best_t = int(k), t
        torch.set_num_threads(best)
        yield best
    finally:
        torch.set_num_threads(before)
