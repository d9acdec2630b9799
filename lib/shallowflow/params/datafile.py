"""A reader's own data: a ``.npz`` (arrays ``X`` (n, d) and ``y`` (n,) or (n, k)) or a ``.csv`` file (numbers, y in
the last column, an optional header line), checked for shape, finiteness and size before anything is trained.

:func:`read_xy` reads with numpy only (the CLI validates a parameter with it in its own process, before a kernel
starts: :func:`shallowflow.params.DataFile`); :func:`shallowflow.engine.data.load_xy` is the same as float64 torch
tensors, for the chapters.  Every failure is a :class:`DataFileError` whose message is one line: the file is
missing or unreadable, not a .npz/.csv, truncated, lacks ``X`` or ``y``, has the wrong shape or dimension, holds
a NaN or an infinity (the first row is named), or would not fit the memory limit.

Reading is bounded (issue 38, N1 and N15).  A ``.npz`` is checked from its arrays' headers before anything is
decoded, then each array is decoded once, in blocks, straight into its float64 array.  A ``.csv`` is refused from
its size when even its smallest reading (two characters a value) would not fit, then streamed in blocks of lines
into one float64 array (numpy's parser for a block, a line-by-line reading only to name a bad line), stopping at
the first line past the row cap (``max_n``), the first row whose float64 copies would pass the memory limit, or
the first line with the wrong number of columns: no Python list of numbers is ever built.  A UTF-8 byte-order mark
is dropped; the first line is a header only when none of its cells is a number (``1,,1`` is a bad data row, not a
header), and :func:`file_info` says which header it took.  :func:`file_info` is what validation uses: the shape of
a file that passed every check (or its one-line refusal), kept per process for the file's (path, device, inode,
size, modification and change times) and the limits, so a chapter's rules and estimates that ask again do not
read the file again.
"""
from __future__ import annotations

import io
import lzma
import os
import struct
import warnings
import zipfile
import zlib
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .spec import ParameterError, Spec, _bytes, memory_limit, short

SUFFIXES = (".npz", ".csv")
PATH_MAX = 1024  # longest path accepted as a parameter value
CSV_BYTES_PER_VALUE = 4.0  # a float64 (8 bytes) per value of at least two characters ("0,"): bytes <= 4 x file size
CSV_BLOCK = 1 << 18  # bytes of a .csv read (and parsed) at a time
LINE_MAX = 1 << 22  # longest .csv line (4 MiB: 100,000 columns of up to 40 characters)
NPZ_BLOCK = 1 << 22  # bytes of a .npz array decoded at a time
INFO_CACHE = 32  # file_info results kept per process


class DataFileError(ValueError):
    """A data file cannot be used (one line, without the parameter's name: the caller adds it)."""


def is_file_value(value) -> bool:
    """Whether a parameter value names a data file (a path ending in .npz or .csv) rather than a named data set."""
    return isinstance(value, (str, os.PathLike)) and str(value).lower().endswith(SUFFIXES)


def _limit(max_bytes: float | None) -> float:
    if max_bytes is not None:
        return float(max_bytes)
    return memory_limit()


def _size_text(x: float) -> str:
    return _bytes(x)


def _check_columns(d: int, k: int, *, min_d: int, max_d: int | None, d_required: int | None,
                   outputs: int | None, **_) -> None:
    if d_required is not None and d != d_required:
        raise DataFileError(f"X has d = {d} columns, this chapter needs d = {d_required}")
    if d < min_d or (max_d is not None and d > max_d):
        raise DataFileError(f"X has d = {d} columns, expected {min_d} to {max_d}" if max_d is not None else
                            f"X has d = {d} columns, at least {min_d} are needed")
    if outputs is not None and k != outputs:
        raise DataFileError(f"y has {k} column(s), this chapter needs {outputs}")


def _memory_refusal(need: float, max_bytes: float | None, more: bool = False) -> DataFileError:
    return DataFileError(f"it would take {'more than' if more else 'about'} {_size_text(need)} in memory, the limit "
                         f"is {_size_text(_limit(max_bytes))} (SHALLOWFLOW_MEMORY_GB)")


def _check_shape(n: int, d: int, k: int, *, min_n: int, max_n: int | None, min_d: int, max_d: int | None,
                 d_required: int | None, outputs: int | None, copies: float, max_bytes: float | None) -> None:
    if n < min_n:
        raise DataFileError(f"it has {n} rows, at least {min_n} are needed")
    if max_n is not None and n > max_n:
        raise DataFileError(f"it has {n} rows, at most {max_n} are accepted")
    _check_columns(d, k, min_d=min_d, max_d=max_d, d_required=d_required, outputs=outputs)
    need = 8.0 * n * (d + k) * copies
    if need > _limit(max_bytes):
        raise _memory_refusal(need, max_bytes)


def _row_blocks(a: np.ndarray):
    """(first row, block of rows) of ``a`` with about a million values each: a check's temporaries stay small."""
    per = max(1, (1 << 20) // max(1, int(np.prod(a.shape[1:], dtype=np.int64))))
    for i in range(0, a.shape[0], per):
        yield i, a[i:i + per]


def _first_bad(a: np.ndarray) -> int | None:
    for i, b in _row_blocks(a):
        bad = ~np.isfinite(b)
        if bad.any():
            return i + int(np.flatnonzero(bad.reshape(b.shape[0], -1).any(axis=1))[0])
    return None


def _zero_rows(X: np.ndarray) -> int:
    return sum(int(np.count_nonzero(~np.any(b != 0, axis=1))) for _, b in _row_blocks(X))


# -- .npz -------------------------------------------------------------------------------------------------
_CORRUPT = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, OSError, RuntimeError,
            NotImplementedError, KeyError, OverflowError, zlib.error, lzma.LZMAError, struct.error)
# (RuntimeError: an encrypted member; NotImplementedError: an unknown compression method)


def _npz_header(zf: zipfile.ZipFile, key: str) -> tuple[tuple, bool, np.dtype]:
    fmt = np.lib.format
    try:
        with zf.open(key + ".npy") as fh:
            version = fmt.read_magic(fh)
            read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
            shape, fortran, dtype = read(fh)  # the header only: nothing is allocated before the size is checked
    except _CORRUPT as e:
        if isinstance(e, PermissionError):
            raise
        raise DataFileError(f"array {key} of the .npz file is not a readable .npy array "
                            f"(truncated or corrupt: {type(e).__name__})") from None
    return tuple(shape), bool(fortran), dtype


def _npz_array(zf: zipfile.ZipFile, key: str, shape: tuple, fortran: bool, dtype: np.dtype) -> np.ndarray:
    """Array ``key`` decoded once, block by block, into a float64 array (never a second copy in its own dtype)."""
    fmt = np.lib.format
    count = int(np.prod(shape, dtype=object))
    out = np.empty(count, dtype=np.float64)
    size = dtype.itemsize
    per = max(1, NPZ_BLOCK // max(size, 1))
    with zf.open(key + ".npy") as fh:
        version = fmt.read_magic(fh)
        (fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0)(fh)
        done = 0
        while done < count:
            m = min(per, count - done)
            raw = fh.read(m * size)
            if len(raw) != m * size:
                raise EOFError("the array ends early")
            out[done:done + m] = np.frombuffer(raw, dtype=dtype, count=m)
            done += m
    return out.reshape(shape[::-1]).T if fortran else out.reshape(shape)


def _read_npz(path: Path, limits: dict) -> tuple[np.ndarray, np.ndarray]:
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            missing = [k for k in ("X", "y") if k + ".npy" not in names]
            if missing:
                have = sorted(n.removesuffix(".npy") for n in names)[:8]
                raise DataFileError(f"the .npz file has no array {' and '.join(missing)} (it holds "
                                    f"{', '.join(have) or 'nothing'})")
            (xs, xf, xt), (ys, yf, yt) = _npz_header(zf, "X"), _npz_header(zf, "y")
            for key, shape, dt in (("X", xs, xt), ("y", ys, yt)):
                if dt.kind not in "iuf" or dt.fields is not None or dt.subdtype is not None:
                    raise DataFileError(f"array {key} holds {dt} values, expected real numbers")
            if len(xs) != 2:
                raise DataFileError(f"X has shape {tuple(xs)}, expected (n, d)")
            if len(ys) not in (1, 2):
                raise DataFileError(f"y has shape {tuple(ys)}, expected (n,) or (n, k)")
            if ys[0] != xs[0]:
                raise DataFileError(f"X has {xs[0]} rows and y has {ys[0]}")
            _check_shape(int(xs[0]), int(xs[1]), int(ys[1]) if len(ys) == 2 else 1, **limits)  # before decoding
            try:
                X = _npz_array(zf, "X", xs, xf, xt)
                y = _npz_array(zf, "y", ys, yf, yt)
            except _CORRUPT as e:
                if isinstance(e, PermissionError):
                    raise
                raise DataFileError(f"not a readable .npz file (truncated or corrupt: {type(e).__name__})") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, RuntimeError, NotImplementedError, zlib.error,
            lzma.LZMAError, struct.error) as e:
        raise DataFileError(f"not a readable .npz file (truncated or corrupt: {type(e).__name__})") from None
    return X, y


# -- .csv -------------------------------------------------------------------------------------------------
def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _cells(text: str):
    """The comma-separated cells of a line, one at a time (never a list of a long line's cells)."""
    start = 0
    while True:
        j = text.find(",", start)
        if j < 0:
            yield text[start:].strip()
            return
        yield text[start:j].strip()
        start = j + 1


def _lines_in(text: str) -> int:
    """Lines of ``text`` as Python's universal newlines count them (\\n, \\r\\n or \\r ends a line)."""
    n = text.count("\n") + text.count("\r") - text.count("\r\n")
    return n + (1 if text and not text.endswith(("\n", "\r")) else 0)


class _CsvReader:
    """One pass over a .csv file's blocks of whole lines into one float64 array (see the module docstring)."""

    def __init__(self, size: int, limits: dict):
        self.limits = limits
        self.max_n = limits["max_n"]
        self.limit = _limit(limits["max_bytes"])
        self.size = size
        self.line_no = 0  # lines read so far
        self.width = None  # cells a row (from the header or the first data row)
        self.header = None  # (line number, text) of the header line taken
        self.buf = None  # float64 values, row after row
        self.pos = 0  # values written

    # the array: allocated once the width is known, sized by what the file could hold (pages are only touched as
    # values are written), shrunk in place at the end
    def _start(self, width: int) -> None:
        self.width = width
        if width < 2:
            raise DataFileError(f"a .csv needs at least 2 columns (X, then y last), it has {width}")
        _check_columns(width - 1, 1, **self.limits)
        cap = self.size // 2 + 2  # a value takes at least two bytes ("0," or "0\n")
        if self.max_n is not None:
            cap = min(cap, (self.max_n + 1) * width)
        self.buf = np.empty(max(cap, width), dtype=np.float64)

    def _room(self, rows: int) -> None:
        """Refuse before ``rows`` more rows are stored when they pass the row cap or the memory limit."""
        n = self.pos // self.width + rows
        if self.max_n is not None and n > self.max_n:
            raise DataFileError(f"it has more than {self.max_n} rows, at most {self.max_n} are accepted")
        need = 8.0 * n * self.width * self.limits["copies"]
        if need > self.limit:
            raise _memory_refusal(need, self.limits["max_bytes"], more=True)
        if self.pos + rows * self.width > self.buf.size:  # cannot happen: the capacity bounds the file's values
            raise DataFileError("it holds more values than its size allows")

    def block(self, text: str) -> None:
        if self.width is None or "#" in text:
            self._by_line(text)
        elif not self._fast(text):
            self._by_line(text)

    def _fast(self, text: str) -> bool:
        """numpy's parser for a whole block; False (nothing stored) when it cannot read it as rows of ``width``
        numbers: the line-by-line reading then stores the block or names its first bad line."""
        left = None if self.max_n is None else self.max_n - self.pos // self.width
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "input contained no data": a block of blank lines
                a = np.loadtxt(io.StringIO(text, newline=""), delimiter=",", comments=None, ndmin=2,
                               dtype=np.float64, encoding=None, max_rows=None if left is None else left + 1)
        except Exception:  # noqa: BLE001 - any refusal of numpy's parser: the line-by-line reading decides
            return False
        if a.size and a.shape[1] != self.width:
            return False
        rows = a.shape[0] if a.size else 0
        if rows:
            self._room(rows)  # one row past the cap (max_rows): refused, the rest is never parsed
            self.buf[self.pos:self.pos + a.size] = a.ravel()
            self.pos += a.size
        self.line_no += _lines_in(text)
        return True

    def _by_line(self, text: str) -> None:
        starting, offset = self.width is None, 0
        for line in io.StringIO(text, newline=""):
            offset += len(line)
            if starting and self.width is not None and self.pos:  # the first row is stored: the rest as a block
                self.block(text[offset - len(line):])
                return
            self.line_no += 1
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            cells = s.count(",") + 1
            if self.width is None:
                if not any(_number(c) is not None for c in _cells(s)):  # no cell is a number: the header
                    self.header = (self.line_no, s)
                    self._start(cells)
                    continue
                self._start(cells)
            elif cells != self.width:
                raise DataFileError(f"line {self.line_no} has {cells} columns, the first has {self.width}")
            self._room(1)
            for i, c in enumerate(_cells(s)):
                v = _number(c)
                if v is None:
                    hint = " (a header line holds no number)" if self.pos == 0 and self.header is None else ""
                    raise DataFileError(f"line {self.line_no}, column {i + 1}: {c[:30]!r} is not a number{hint}")
                self.buf[self.pos + i] = v
            self.pos += cells

    def result(self) -> np.ndarray:
        width = self.width or 2
        if self.buf is None:
            return np.empty((0, width))
        n = self.pos // width
        self.buf.resize(self.pos, refcheck=False)  # in place (realloc): no second copy
        return self.buf.reshape(n, width)


def _read_csv(path: Path, limits: dict) -> tuple[np.ndarray, np.ndarray, tuple | None]:
    size = path.stat().st_size
    if CSV_BYTES_PER_VALUE * size * limits["copies"] > _limit(limits["max_bytes"]):
        raise DataFileError(f"the file has {_size_text(size)}: as numbers it could take more than the memory limit "
                            f"{_size_text(_limit(limits['max_bytes']))} (SHALLOWFLOW_MEMORY_GB)")
    r = _CsvReader(size, limits)
    carry, first = b"", True
    with open(path, "rb") as fh:
        while True:
            raw = fh.read(CSV_BLOCK)
            data = carry + raw
            if first:
                if len(data) < 3 and raw:
                    carry = data
                    continue
                if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark: not part of the first cell
                    data = data[3:]
                first = False
            if raw:
                cut = data.rfind(b"\n") + 1
                if cut == 0:
                    cut = data.rfind(b"\r", 0, len(data) - 1) + 1  # a lone \r line end (never a \r\n cut in two)
                if cut == 0:
                    if len(data) > LINE_MAX:
                        raise DataFileError(f"line {r.line_no + 1} is longer than {_size_text(LINE_MAX)}")
                    carry = data
                    continue
                part, carry = data[:cut], data[cut:]
            else:
                part, carry = data, b""
            try:
                text = part.decode("utf-8")
            except UnicodeDecodeError as e:
                at = r.line_no + 1 + (_lines_in(part[:e.start].decode("utf-8")) if e.start else 0)
                if e.start and not part[:e.start].endswith((b"\n", b"\r")):
                    at -= 1  # the bad byte is on the last line counted
                raise DataFileError(f"not a text .csv file (it is not UTF-8: line {at})") from None
            r.block(text)
            if not raw:
                break
    a = r.result()
    _check_shape(a.shape[0], a.shape[1] - 1, 1, **limits)
    return a[:, :-1], a[:, -1], r.header


def _read(p: Path, limits: dict) -> tuple[np.ndarray, np.ndarray, tuple | None]:
    suffix = p.suffix.lower()
    try:
        if not p.exists():
            raise DataFileError("the file does not exist")
        if not p.is_file():
            raise DataFileError("it is not a regular file")
        if not os.access(p, os.R_OK):
            raise DataFileError("the file cannot be read (permission denied)")
        if suffix == ".npz":
            X, y = _read_npz(p, limits)
            header = None
        else:
            X, y, header = _read_csv(p, limits)
    except PermissionError:
        raise DataFileError("the file cannot be read (permission denied)") from None
    except MemoryError:
        raise DataFileError("it does not fit in this machine's free memory") from None
    except OSError as e:
        raise DataFileError(f"the file cannot be read ({e.strerror or type(e).__name__})") from None
    row = _first_bad(X)
    if row is not None:
        raise DataFileError(f"X holds a NaN or an infinity at row {row} (counted from 0)")
    row = _first_bad(y)
    if row is not None:
        raise DataFileError(f"y holds a NaN or an infinity at row {row} (counted from 0)")
    if limits["outputs"] == 1 and y.ndim == 2:
        y = y[:, 0]
    return X, y, header


def _limits(p, min_n, max_n, min_d, max_d, d, outputs, copies, max_bytes) -> tuple[Path, dict]:
    p = Path(os.fspath(p)).expanduser()
    if p.suffix.lower() not in SUFFIXES:
        raise DataFileError(f"a data file must end in .npz or .csv, got {p.suffix or 'no suffix'}")
    return p, dict(min_n=min_n, max_n=max_n, min_d=min_d, max_d=max_d, d_required=d, outputs=outputs,
                   copies=copies, max_bytes=max_bytes)


def read_xy(path, *, min_n: int = 1, max_n: int | None = None, min_d: int = 1, max_d: int | None = None,
            d: int | None = None, outputs: int | None = None, copies: float = 1.0,
            max_bytes: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``X`` (n, d) and ``y`` ((n,), or (n, k) from a .npz) as float64 numpy arrays, or :class:`DataFileError` in
    one line.  ``d`` requires that dimension; ``outputs`` that many label columns (1: y comes back as (n,));
    ``copies`` float64 copies of the data must fit ``max_bytes`` (default: :func:`shallowflow.params.memory_limit`),
    checked from the file's header (.npz) or size (.csv) before the numbers are read, and as they are read."""
    p, limits = _limits(path, min_n, max_n, min_d, max_d, d, outputs, copies, max_bytes)
    X, y, _ = _read(p, limits)
    return X, y


@dataclass(frozen=True)
class FileInfo:
    """What validation needs of a data file that passed every check of :func:`read_xy`: rows ``n``, input columns
    ``d``, label columns ``k``, the number of all-zero rows of X, and the header a .csv's first line gave
    (``(line number, text)``, or None)."""

    path: str
    n: int
    d: int
    k: int
    zero_rows: int
    header: tuple | None = None


_INFO: "OrderedDict[tuple, FileInfo | str]" = OrderedDict()


def _stamp(p: Path):
    try:
        st = os.stat(p)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def file_info(path, *, min_n: int = 1, max_n: int | None = None, min_d: int = 1, max_d: int | None = None,
              d: int | None = None, outputs: int | None = None, copies: float = 1.0,
              max_bytes: float | None = None) -> FileInfo:
    """:func:`read_xy`'s checks, as a :class:`FileInfo` (or its :class:`DataFileError`), read once per process for
    the same file (path, device, inode, size, modification and change times) and limits: the parameter's
    validation, the chapter's rules and its cost estimate all ask this, and only the first one reads the file."""
    p, limits = _limits(path, min_n, max_n, min_d, max_d, d, outputs, copies, max_bytes)
    try:
        p = p.resolve()
    except (OSError, RuntimeError):
        pass
    stamp = _stamp(p)
    key = None
    if stamp is not None:
        key = (str(p), stamp, tuple(sorted(limits.items())), _limit(max_bytes))
        hit = _INFO.get(key)
        if hit is not None:
            _INFO.move_to_end(key)
            if isinstance(hit, str):
                raise DataFileError(hit)
            return hit
    try:
        X, y, header = _read(p, limits)
    except DataFileError as e:
        _remember(key, str(e))
        raise
    info = FileInfo(str(p), int(X.shape[0]), int(X.shape[1]), 1 if y.ndim == 1 else int(y.shape[1]),
                    _zero_rows(X), header)
    del X, y
    if _stamp(p) == stamp:  # not changed while it was read
        _remember(key, info)
    return info


def _remember(key, value) -> None:
    if key is None:
        return
    _INFO[key] = value
    while len(_INFO) > INFO_CACHE:
        _INFO.popitem(last=False)


def forget() -> None:
    """Empty :func:`file_info`'s per-process memory."""
    _INFO.clear()


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
    :func:`shallowflow.engine.data.load_xy` (``spec.limits.kwargs()`` repeats the checks), and a name with its own
    builder.  A file's name is never a custom run's only trace: its path is the value.
    """
    names = tuple(names)
    if any(not isinstance(c, str) or c.lower().endswith((".npz", ".csv")) for c in names):
        raise ValueError(f"DataFile names must be strings that are not file names, got {short(names)}")
    return Spec("data", doc, choices=names, limits=FileLimits(int(min_n), max_n, int(min_d), max_d, d, outputs,
                                                              float(copies)))


_SAID: set = set()  # headers check_value has reported


def check_value(name: str, value, spec) -> str:
    """A :func:`DataFile` value: a name, or the absolute path of a file that passed every check
    (:class:`~shallowflow.params.ParameterError` naming the parameter otherwise)."""
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
        info = file_info(path, **spec.limits.kwargs())
    except DataFileError as e:
        raise bad(str(e)) from None
    except (OSError, RuntimeError) as e:  # a symlink loop, an unreadable folder on the way
        raise bad(f"the file cannot be read ({type(e).__name__})") from None
    if info.header is not None and (info.path, info.header) not in _SAID:  # once per process and file
        _SAID.add((info.path, info.header))
        line, text = info.header
        print(f"parameter {name!r}: line {line} of {path.name}, {short(text, 80)}, taken as the header (column "
              f"names), not data")
    return str(path)


__all__ = ["DataFile", "DataFileError", "FileInfo", "FileLimits", "SUFFIXES", "check_value", "file_info", "forget",
           "is_file_value", "read_xy"]
