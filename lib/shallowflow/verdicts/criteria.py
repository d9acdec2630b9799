"""Pass criteria and the formatting of measured values (deterministic: nbval compares the printed tables)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np


def _values(measured) -> np.ndarray:
    try:
        import torch

        if isinstance(measured, torch.Tensor):
            measured = measured.detach().cpu().numpy()
    except ImportError:  # pragma: no cover
        pass
    return np.atleast_1d(np.asarray(measured, dtype=float))


@dataclass(frozen=True)
class Criterion:
    """A pass criterion: a text for the reader and a test applied to every measured value."""

    text: str
    test: Callable[[np.ndarray], np.ndarray]

    def __call__(self, measured) -> bool:
        v = _values(measured)
        return bool(v.size > 0 and np.all(np.isfinite(v)) and np.all(self.test(v)))


def below(bound: float, strict: bool = True) -> Criterion:
    return Criterion(f"{'<' if strict else '<='} {fmt(bound)}", (lambda v: v < bound) if strict else (lambda v: v <= bound))


def above(bound: float, strict: bool = False) -> Criterion:
    return Criterion(f"{'>' if strict else '>='} {fmt(bound)}", (lambda v: v > bound) if strict else (lambda v: v >= bound))


def within(lo: float, hi: float) -> Criterion:
    return Criterion(f"in [{fmt(lo)}, {fmt(hi)}]", lambda v: (v >= lo) & (v <= hi))


def close_to(value: float, rtol: float | None = None, atol: float | None = None) -> Criterion:
    if (rtol is None) == (atol is None):
        raise ValueError("give exactly one of rtol and atol")
    if rtol is not None:
        return Criterion(f"within {fmt(rtol)} (relative) of {fmt(value)}", lambda v: np.abs(v - value) <= rtol * abs(value))
    return Criterion(f"within {fmt(atol)} of {fmt(value)}", lambda v: np.abs(v - value) <= atol)


def is_true(text: str = "holds") -> Criterion:
    return Criterion(text, lambda v: v != 0)


def rejected_by(criterion: Criterion) -> Criterion:
    """A negative control's criterion: it holds when ``criterion`` rejects the measurement (the same measurement,
    on a case where the claim is false, must fail the deciding check's criterion; see :mod:`.controls`). A
    non-finite or empty measurement rejects nothing: it proves no control."""
    def test(v):
        return np.full(v.shape, not criterion(v))

    return Criterion(f"fails: {criterion.text}", test)


def fmt(x) -> str:
    """Short, deterministic text for a number or an ensemble of numbers."""
    if isinstance(x, str):
        return x
    v = _values(x)
    if v.size == 0:
        return "nothing measured (0 values)"
    if v.size == 1:
        return _fmt1(float(v[0]))
    if np.all(v == v[0]):
        return f"{_fmt1(float(v[0]))} (all {v.size})"
    return f"{_fmt1(float(np.min(v)))} .. {_fmt1(float(np.max(v)))} ({v.size} runs)"


def _fmt1(x: float) -> str:
    if math.isnan(x) or math.isinf(x):
        return str(x)
    if x == int(x) and abs(x) < 1e7:
        return str(int(x))
    return f"{x:.7g}"


