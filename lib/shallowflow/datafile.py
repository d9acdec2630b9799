"""A reader's own data: a ``.npz`` (arrays ``X`` (n, d) and ``y`` (n,) or (n, k)) or a ``.csv`` file (numbers, y in
the last column, an optional header line), checked for shape, finiteness and size before anything is trained.

:func:`read_xy` reads with numpy only (the CLI validates a parameter with it in its own process, before a kernel
starts: :func:`shallowflow.params.DataFile`); :func:`shallowflow.data.load_xy` is the same as float64 torch
tensors, for the chapters.  Every failure is a :class:`DataFileError` whose message is one line: the file is
missing or unreadable, not a .npz/.csv, truncated, lacks ``X`` or ``y``, has the wrong shape or dimension, holds
a NaN or an infinity (the first row is named), or would not fit the memory limit.
"""
from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SUFFIXES = (".npz", ".csv")
PATH_MAX = 1024  # longest path accepted as a parameter value
CSV_BYTES_PER_VALUE = 4.0  # a float64 (8 bytes) per value of at least two characters ("0,"): bytes <= 4 x file size


class DataFileError(ValueError):
    """A data file cannot be used (one line, without the parameter's name: the caller adds it)."""


def is_file_value(value) -> bool:
    """Whether a parameter value names a data file (a path ending in .npz or .csv) rather than a named data set."""
    return isinstance(value, (str, os.PathLike)) and str(value).lower().endswith(SUFFIXES)


def _limit(max_bytes: float | None) -> float:
    if max_bytes is not None:
        return float(max_bytes)
    from .params import memory_limit

    return memory_limit()


def _size_text(x: float) -> str:
    from .params import _bytes

    return _bytes(x)


def _check_shape(n: int, d: int, k: int, *, min_n: int, max_n: int | None, min_d: int, max_d: int | None,
                 d_required: int | None, outputs: int | None, copies: float, max_bytes: float | None) -> None:
    if n < min_n:
        raise DataFileError(f"it has {n} rows, at least {min_n} are needed")
    if max_n is not None and n > max_n:
        raise DataFileError(f"it has {n} rows, at most {max_n} are accepted")
    if d_required is not None and d != d_required:
        raise DataFileError(f"X has d = {d} columns, this chapter needs d = {d_required}")
    if d < min_d or (max_d is not None and d > max_d):
        raise DataFileError(f"X has d = {d} columns, expected {min_d} to {max_d}" if max_d is not None else
                            f"X has d = {d} columns, at least {min_d} are needed")
    if outputs is not None and k != outputs:
        raise DataFileError(f"y has {k} column(s), this chapter needs {outputs}")
    need = 8.0 * n * (d + k) * copies
    if need > _limit(max_bytes):
        raise DataFileError(f"it would take about {_size_text(need)} in memory, the limit is "
                            f"{_size_text(_limit(max_bytes))} (SHALLOWFLOW_MEMORY_GB)")


def _first_bad(a: np.ndarray) -> int | None:
    bad = ~np.isfinite(a)
    if not bad.any():
        return None
    return int(np.flatnonzero(bad.reshape(a.shape[0], -1).any(axis=1))[0])


def _npz_header(zf: zipfile.ZipFile, key: str) -> tuple[tuple, np.dtype]:
    fmt = np.lib.format
    try:
        with zf.open(key + ".npy") as fh:
            version = fmt.read_magic(fh)
            read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
            shape, _, dtype = read(fh)  # the header only: nothing is allocated before the size is checked
    except (ValueError, OSError) as e:
        raise DataFileError(f"array {key} of the .npz file is not a readable .npy array "
                            f"(truncated or corrupt: {type(e).__name__})") from None
    return shape, dtype


def _read_npz(path: Path, limits: dict) -> tuple[np.ndarray, np.ndarray]:
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            missing = [k for k in ("X", "y") if k + ".npy" not in names]
            if missing:
                have = sorted(n.removesuffix(".npy") for n in names)[:8]
                raise DataFileError(f"the .npz file has no array {' and '.join(missing)} (it holds "
                                    f"{', '.join(have) or 'nothing'})")
            (xs, xt), (ys, yt) = _npz_header(zf, "X"), _npz_header(zf, "y")
    except (zipfile.BadZipFile, EOFError, zipfile.LargeZipFile) as e:
        raise DataFileError(f"not a readable .npz file (truncated or corrupt: {type(e).__name__})") from None
    for key, shape, dt in (("X", xs, xt), ("y", ys, yt)):
        if dt.kind not in "iuf":
            raise DataFileError(f"array {key} holds {dt} values, expected real numbers")
    if len(xs) != 2:
        raise DataFileError(f"X has shape {tuple(xs)}, expected (n, d)")
    if len(ys) not in (1, 2):
        raise DataFileError(f"y has shape {tuple(ys)}, expected (n,) or (n, k)")
    if ys[0] != xs[0]:
        raise DataFileError(f"X has {xs[0]} rows and y has {ys[0]}")
    _check_shape(int(xs[0]), int(xs[1]), int(ys[1]) if len(ys) == 2 else 1, **limits)  # before loading anything
    try:
        with np.load(path, allow_pickle=False) as z:
            X, y = np.asarray(z["X"], dtype=np.float64), np.asarray(z["y"], dtype=np.float64)
    except (zipfile.BadZipFile, EOFError, ValueError, OSError) as e:
        if isinstance(e, PermissionError):
            raise
        raise DataFileError(f"not a readable .npz file (truncated or corrupt: {type(e).__name__})") from None
    return X, y


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _read_csv(path: Path, limits: dict) -> tuple[np.ndarray, np.ndarray]:
    size = path.stat().st_size
    if CSV_BYTES_PER_VALUE * size * limits["copies"] > _limit(limits["max_bytes"]):
        raise DataFileError(f"the file has {_size_text(size)}: as numbers it could take more than the memory limit "
                            f"{_size_text(_limit(limits['max_bytes']))} (SHALLOWFLOW_MEMORY_GB)")
    rows, width, first = [], None, None
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            for line_no, line in enumerate(fh, 1):
                text = line.strip()
                if not text or text.startswith("#"):
                    continue
                cells = [c.strip() for c in text.split(",")]
                values = [_number(c) for c in cells]
                if first is None:
                    first = line_no
                    if any(v is None for v in values):  # a header line
                        width = len(cells)
                        continue
                bad = next((i for i, v in enumerate(values) if v is None), None)
                if bad is not None:
                    raise DataFileError(f"line {line_no}, column {bad + 1}: {cells[bad][:30]!r} is not a number")
                if width is None:
                    width = len(values)
                if len(values) != width:
                    raise DataFileError(f"line {line_no} has {len(values)} columns, the first has {width}")
                rows.append(values)
    except UnicodeDecodeError:
        raise DataFileError("not a text .csv file (it is not UTF-8)") from None
    if width is not None and width < 2:
        raise DataFileError(f"a .csv needs at least 2 columns (X, then y last), it has {width}")
    n = len(rows)
    _check_shape(n, (width or 2) - 1, 1, **limits)
    a = np.asarray(rows, dtype=np.float64).reshape(n, width or 2)
    return a[:, :-1], a[:, -1]


def read_xy(path, *, min_n: int = 1, max_n: int | None = None, min_d: int = 1, max_d: int | None = None,
            d: int | None = None, outputs: int | None = None, copies: float = 1.0,
            max_bytes: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``X`` (n, d) and ``y`` ((n,), or (n, k) from a .npz) as float64 numpy arrays, or :class:`DataFileError` in
    one line.  ``d`` requires that dimension; ``outputs`` that many label columns (1: y comes back as (n,));
    ``copies`` float64 copies of the data must fit ``max_bytes`` (default: :func:`shallowflow.params.memory_limit`),
    checked from the file's header (.npz) or size (.csv) before the numbers are read."""
    p = Path(os.fspath(path)).expanduser()
    suffix = p.suffix.lower()
    if suffix not in SUFFIXES:
        raise DataFileError(f"a data file must end in .npz or .csv, got {p.suffix or 'no suffix'}")
    limits = dict(min_n=min_n, max_n=max_n, min_d=min_d, max_d=max_d, d_required=d, outputs=outputs, copies=copies,
                  max_bytes=max_bytes)
    try:
        if not p.exists():
            raise DataFileError("the file does not exist")
        if not p.is_file():
            raise DataFileError("it is not a regular file")
        if not os.access(p, os.R_OK):
            raise DataFileError("the file cannot be read (permission denied)")
        X, y = _read_npz(p, limits) if suffix == ".npz" else _read_csv(p, limits)
    except PermissionError:
        raise DataFileError("the file cannot be read (permission denied)") from None
    except OSError as e:
        raise DataFileError(f"the file cannot be read ({e.strerror or type(e).__name__})") from None
    row = _first_bad(X)
    if row is not None:
        raise DataFileError(f"X holds a NaN or an infinity at row {row} (counted from 0)")
    row = _first_bad(y)
    if row is not None:
        raise DataFileError(f"y holds a NaN or an infinity at row {row} (counted from 0)")
    if outputs == 1 and y.ndim == 2:
        y = y[:, 0]
    return X, y


# -- the parameter spec (shallowflow.params.DataFile) ----------------------------------------------------
@dataclass(frozen=True)
class FileLimits:
    """What a :func:`DataFile` accepts: rows ``min_n`` to ``max_n``, input dimension ``min_d`` to ``max_d`` (or
    exactly ``d``), ``outputs`` label columns (None: any), and ``copies`` float64 copies of the data within the
    memory limit (:func:`~shallowflow.params.memory_limit`)."""

    min_n: int = 1
    max_n: int | None = None
    min_d: int = 1
    max_d: int | None = None
    d: int | None = None
    outputs: int | None = None
    copies: float = 1.0

    def text(self) -> str:
        parts = [f"n >= {self.min_n}" + (f" and <= {self.max_n}" if self.max_n is not None else "")]
        if self.d is not None:
            parts.append(f"d = {self.d}")
        else:
            parts.append(f"d >= {self.min_d}" + (f" and <= {self.max_d}" if self.max_d is not None else ""))
        if self.outputs is not None:
            parts.append(f"{self.outputs} label column(s)")
        return "(" + ", ".join(parts) + ", finite, within the memory limit)"

    def kwargs(self) -> dict:
        return dict(min_n=self.min_n, max_n=self.max_n, min_d=self.min_d, max_d=self.max_d, d=self.d,
                    outputs=self.outputs, copies=self.copies)


def DataFile(doc="", names=(), min_n=1, max_n=None, min_d=1, max_d=None, d=None, outputs=None, copies=1.0):
    """A data parameter: one of the chapter's named data sets (``names``) or a path to a ``.npz`` (arrays ``X``
    (n, d) and ``y`` (n,) or (n, k)) or ``.csv`` file (numbers, y in the last column, an optional header).

    A path is checked when the parameter is validated, in the CLI's process before a kernel starts: the file
    exists and is readable, its shape is within the limits (``min_n``/``max_n`` rows, ``min_d``/``max_d`` input
    columns, or exactly ``d``; ``outputs`` label columns), every value is finite, and ``copies`` float64 copies
    of it fit :func:`~shallowflow.params.memory_limit`; any failure is one :class:`~shallowflow.params.ParameterError` naming the parameter.  The value
    is normalised to the absolute path (a name stays a name); the chapter loads it with
    :func:`shallowflow.data.load_xy` (``spec.limits.kwargs()`` repeats the checks), and a name with its own
    builder.  A file's name is never a custom run's only trace: its path is the value.
    """
    from .params import Spec, short

    names = tuple(names)
    if any(not isinstance(c, str) or c.lower().endswith((".npz", ".csv")) for c in names):
        raise ValueError(f"DataFile names must be strings that are not file names, got {short(names)}")
    return Spec("data", doc, choices=names, limits=FileLimits(int(min_n), max_n, int(min_d), max_d, d, outputs,
                                                              float(copies)))


def check_value(name: str, value, spec) -> str:
    """A :func:`DataFile` value: a name, or the absolute path of a file that passed every check
    (:class:`~shallowflow.params.ParameterError` naming the parameter otherwise)."""
    from .params import ParameterError, short

    def bad(why: str = ""):
        return ParameterError(f"parameter {name!r} = {short(value)} is invalid: {why or 'expected ' + spec.accepted()}")

    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise bad()
    if spec.choices and value in spec.choices:
        return value
    if not is_file_value(value):
        raise bad()
    if len(value) > PATH_MAX or not value.isprintable():
        raise bad(f"a path of at most {PATH_MAX} printable characters is expected")
    path = Path(value).expanduser()
    try:
        path = path.resolve()
        read_xy(path, **spec.limits.kwargs())
    except DataFileError as e:
        raise bad(str(e)) from None
    except (OSError, RuntimeError) as e:  # a symlink loop, an unreadable folder on the way
        raise bad(f"the file cannot be read ({type(e).__name__})") from None
    return str(path)


__all__ = ["DataFile", "DataFileError", "FileLimits", "SUFFIXES", "check_value", "is_file_value", "read_xy"]
