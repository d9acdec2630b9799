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
    """A pass criterion: a text for the reader and a test applied to every measured value.

    ``margin_of`` (optional): how far the values sit inside (positive) or outside (negative) the criterion, in the
    measurement's own units, and ``scale`` the size that margin is compared with (a bound's size, a band's width, a
    tolerance) for the relative margin; a criterion without one (a custom test, "holds") has no margin ("n/a")."""

    text: str
    test: Callable[[np.ndarray], np.ndarray]
    margin_of: Callable[[np.ndarray], float] | None = None
    scale: float | None = None

    def __call__(self, measured) -> bool:
        v = _values(measured)
        return bool(v.size > 0 and np.all(np.isfinite(v)) and np.all(self.test(v)))

    def margin(self, measured) -> float | None:
        """The signed distance of the measurement to the criterion's edge (positive: inside, by that much;
        negative: outside), over every value (the worst one decides); None where it has none (no margin rule, no
        finite value)."""
        v = _values(measured)
        if self.margin_of is None or v.size == 0 or not np.all(np.isfinite(v)):
            return None
        m = float(self.margin_of(v))
        return m if math.isfinite(m) else None  # an infinite bound ("< inf") has no distance to speak of

    def relative_margin(self, measured) -> float | None:
        """:meth:`margin` over :attr:`scale` (None without a scale, a zero scale or a margin)."""
        m = self.margin(measured)
        if m is None or not self.scale or not math.isfinite(self.scale):
            return None
        return m / abs(self.scale)

    def margin_text(self, measured) -> str:
        """:meth:`margin` in words: '0.033 inside', '0.02 outside', 'on the edge', or 'n/a'."""
        m = self.margin(measured)
        if m is None:
            return "n/a"
        if m == 0:
            return "0 (on the edge)"
        rel = self.relative_margin(measured)
        of = f" ({abs(rel):.1%} of {_fmt_margin(abs(self.scale))})" if rel is not None and abs(rel) < 0.1 else ""  # a close call
        return f"{_fmt_margin(abs(m))} {'inside' if m > 0 else 'outside'}{of}"


def _fmt_margin(x: float) -> str:
    return f"{x:.3g}"


def _scale(bound: float) -> float | None:
    return abs(float(bound)) or None


def below(bound: float, strict: bool = True) -> Criterion:
    return Criterion(f"{'<' if strict else '<='} {fmt(bound)}", (lambda v: v < bound) if strict else (lambda v: v <= bound),
                     lambda v: bound - float(np.max(v)), _scale(bound))


def above(bound: float, strict: bool = False) -> Criterion:
    return Criterion(f"{'>' if strict else '>='} {fmt(bound)}", (lambda v: v > bound) if strict else (lambda v: v >= bound),
                     lambda v: float(np.min(v)) - bound, _scale(bound))


def within(lo: float, hi: float) -> Criterion:
    return Criterion(f"in [{fmt(lo)}, {fmt(hi)}]", lambda v: (v >= lo) & (v <= hi),
                     lambda v: min(float(np.min(v)) - lo, hi - float(np.max(v))), (hi - lo) or None)


def close_to(value: float, rtol: float | None = None, atol: float | None = None) -> Criterion:
    if (rtol is None) == (atol is None):
        raise ValueError("give exactly one of rtol and atol")
    tol = rtol * abs(value) if rtol is not None else atol
    text = f"within {fmt(rtol)} (relative) of {fmt(value)}" if rtol is not None else f"within {fmt(atol)} of {fmt(value)}"
    return Criterion(text, lambda v: np.abs(v - value) <= tol, lambda v: tol - float(np.max(np.abs(v - value))), tol or None)


def is_true(text: str = "holds") -> Criterion:
    return Criterion(text, lambda v: v != 0)  # a yes or no: no margin


def rejected_by(criterion: Criterion) -> Criterion:
    """A negative control's criterion: it holds when ``criterion`` rejects the measurement (the same measurement,
    on a case where the claim is false, must fail the deciding check's criterion; see :mod:`.controls`). A
    non-finite or empty measurement rejects nothing: it proves no control."""
    def test(v):
        return np.full(v.shape, not criterion(v))

    inner = criterion.margin_of
    return Criterion(f"fails: {criterion.text}", test, (lambda v: -inner(v)) if inner is not None else None, criterion.scale)


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


def describe(measured, runs: int | None = None) -> tuple[str, dict]:
    """The measured value as printed, and its kind, from what the measurement itself holds:

    - ``value``: one number;
    - ``interval``: the two ends of one interval (``[low, high] (95% t-interval, n = 3)``), or ``interval end``:
      one end of one (``0.15 (lower end of a 95% Wilson interval, n = 4)``): the ends carry their level, count and
      method (:class:`shallowflow.engine.metrics.IntervalEnd`, from the library's interval functions);
    - ``range``: one value per run, shown as their range with the run count (``runs``: the check's ``valid=`` count);
    - ``values``: several values that are not one per run (cells, widths, a pair), their range and count.

    Returns ``(text, dict(kind=..., level=..., count=..., method=...))`` (level and method only for intervals)."""
    from ..engine.metrics import IntervalEnd

    if isinstance(measured, str):
        return measured, dict(kind="value", level=None, count=None, method="")
    if isinstance(measured, IntervalEnd):
        words = {"low": "lower end", "high": "upper end"}.get(measured.end, measured.end)
        return (f"{_fmt1(float(measured))} ({words} of a {measured.level:.0%} {_method(measured.method)}, "
                f"{_count(measured.n)})", dict(kind="interval end", level=measured.level, count=measured.n,
                                             method=measured.method))
    if (isinstance(measured, (list, tuple)) and len(measured) == 2
            and all(isinstance(e, IntervalEnd) for e in measured)):
        lo, hi = measured
        if (lo.end, hi.end) == ("low", "high") and (lo.level, lo.n, lo.method) == (hi.level, hi.n, hi.method):
            return (f"[{_fmt1(float(lo))}, {_fmt1(float(hi))}] ({lo.level:.0%} {_method(lo.method)}, {_count(lo.n)})",
                    dict(kind="interval", level=lo.level, count=lo.n, method=lo.method))
    v = _values(measured)
    if v.size == 1:
        return _fmt1(float(v[0])), dict(kind="value", level=None, count=1, method="")
    if v.size == 0:
        return fmt(measured), dict(kind="values", level=None, count=0, method="")
    per_run = runs is not None and runs == v.size
    what = f"{v.size} runs" if per_run else f"{v.size} values"
    kind = "range" if per_run else "values"
    if np.all(v == v[0]) or _fmt1(float(np.min(v))) == _fmt1(float(np.max(v))):  # equal, to the digits shown
        return f"{_fmt1(float(v[0]))} (all {what})", dict(kind=kind, level=None, count=int(v.size), method="")
    return (f"{_fmt1(float(np.min(v)))} .. {_fmt1(float(np.max(v)))} ({'range over' if per_run else 'range of'} {what})",
            dict(kind=kind, level=None, count=int(v.size), method=""))


def _method(method: str) -> str:
    return "t-interval" if method == "t" else f"{method} interval"


def _count(n: int) -> str:
    return f"n = {n}"  # the units an interval rests on: runs, cells, points (the interval does not say which)


def _fmt1(x: float) -> str:
    if math.isnan(x) or math.isinf(x):
        return str(x)
    if x == int(x) and abs(x) < 1e7:
        return str(int(x))
    return f"{x:.7g}"


