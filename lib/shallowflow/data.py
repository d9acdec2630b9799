"""The datasets of the sources, built by name with their exact construction.

A :class:`Dataset` holds inputs ``X`` (n, d) and labels ``y`` (n,) as float64 tensors.  Inputs that
the sources augment with a constant coordinate for the bias carry it as their *last* column
(``bias=True``), so a 1-D input x becomes (x, 1) and a neuron's ReLU kink sits at -w_2 / w_1.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .config import DTYPE, default_device


@dataclass
class Dataset:
    name: str
    X: torch.Tensor  # (n, d)
    y: torch.Tensor  # (n,)
    bias: bool = False  # last input coordinate is the constant 1
    source: str = ""  # where the construction comes from
    meta: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[1]

    def to(self, device) -> "Dataset":
        return Dataset(self.name, self.X.to(device), self.y.to(device), self.bias, self.source, dict(self.meta))

    @property
    def x1d(self) -> torch.Tensor:
        """The raw 1-D inputs of a bias-augmented univariate dataset."""
        if not (self.bias and self.d == 2):
            raise ValueError(f"dataset {self.name!r} is not a bias-augmented univariate dataset")
        return self.X[:, 0]


def augment_bias(x: torch.Tensor) -> torch.Tensor:
    """(n,) or (n, d) inputs -> (n, d + 1) with a trailing column of ones."""
    x = torch.as_tensor(x, dtype=DTYPE)
    if x.ndim == 1:
        x = x[:, None]
    return torch.cat([x, torch.ones(x.shape[0], 1, dtype=DTYPE)], dim=1)


def univariate(name: str, x, y, source: str = "", device=None) -> Dataset:
    """A 1-D dataset with the bias coordinate appended (the convention of 002 and 003)."""
    X = augment_bias(torch.as_tensor(x, dtype=DTYPE))
    y = torch.as_tensor(y, dtype=DTYPE)
    return Dataset(name, X, y, bias=True, source=source).to(device or default_device())


def orthogonal_toy(device=None) -> Dataset:
    """003, Section 5: x = (-0.5, 1), y = -1 and x = (2, 1), y = 1 (orthogonal, not unit-norm)."""
    return univariate("orthogonal-toy", [-0.5, 2.0], [-1.0, 1.0],
                      source="003_2cfc81695abc9c19.txt, Section 5", device=device)


def orthonormal(labels, d: int | None = None, seed: int | None = None, name: str = "orthonormal",
                device=None) -> Dataset:
    """n = len(labels) orthonormal inputs in R^d (d >= n).

    With ``seed=None`` the inputs are the standard basis vectors e_1..e_n; otherwise they are the
    first n columns of the Q factor of a seeded Gaussian d x d matrix (a random orthonormal frame).
    """
    y = torch.as_tensor(labels, dtype=DTYPE).reshape(-1)
    n = y.numel()
    d = n if d is None else d
    if d < n:
        raise ValueError(f"orthonormal inputs need d >= n, got d={d} < n={n}")
    if seed is None:
        X = torch.eye(n, d, dtype=DTYPE)
    else:
        gen = torch.Generator().manual_seed(int(seed))
        q, r = torch.linalg.qr(torch.randn(d, d, generator=gen, dtype=DTYPE))
        q = q * torch.sign(torch.diagonal(r))  # unique Q (Haar distributed)
        X = q[:, :n].T.contiguous()
    return Dataset(name, X, y, source="003_2cfc81695abc9c19.txt, Assumption 1").to(device or default_device())


# Named orthonormal benchmarks of the 003 spec (section 4, "common harness"): x_k = e_k, d = n + 2.
ORTHO_PRESETS = {
    "ortho-A": dict(labels=[1.0, -0.5], d=4),
    "ortho-B": dict(labels=[1.0, 1.0, -0.5, -0.5], d=6),
    "ortho-C": dict(labels=[1.0, 0.8, 0.6, -0.7, -0.5, -0.3], d=8),
}

BUILDERS = {"orthogonal-toy": orthogonal_toy}


def get(name: str, device=None, **kwargs) -> Dataset:
    """Build a dataset by name: one of :func:`names`."""
    if name in ORTHO_PRESETS:
        spec = {**ORTHO_PRESETS[name], **kwargs}
        return orthonormal(name=name, device=device, **spec)
    if name in BUILDERS:
        return BUILDERS[name](device=device, **kwargs)
    raise ValueError(f"unknown dataset {name!r}; known: {sorted(names())}")


def names() -> list[str]:
    return sorted([*BUILDERS, *ORTHO_PRESETS])
