"""Numerical defaults: float64, automatic device choice and deliberate thread counts.

Small initialisations (lambda = 1e-22 and below) underflow when squared in float32, so every
tensor the library creates is float64, and the training engines refuse other dtypes with the reason
(:func:`require_float64`, :class:`DtypeError`).  The device is CUDA when one is visible, the CPU
otherwise; ``SHALLOWFLOW_DEVICE`` overrides the choice.

The networks of the sources are tiny (tens of neurons, a handful of samples): on a CPU the cost of
a step is dispatch overhead, and extra threads only add synchronisation.  The library therefore
runs torch on one intra-op thread unless ``SHALLOWFLOW_THREADS`` says otherwise.

Environment variables are read with a check: a bad value (``SHALLOWFLOW_THREADS=abc`` or ``0``,
``SHALLOWFLOW_DEVICE=cuda`` without a visible GPU, an unknown ``SHALLOWFLOW_KERNEL`` or
``SHALLOWFLOW_PROGRESS``) raises
:class:`ConfigError`, whose message is one line naming the variable.  Importing the package never
raises it (``shallowflow list`` works): :func:`configure` records the problem and :func:`check`,
:func:`default_device` and :func:`describe` raise it.
"""
from __future__ import annotations

import os

import torch

from . import kernel
from .environ import (KERNEL_CHOICES, MAX_THREADS, PROGRESS_CHOICES, ConfigError, _bad, device_from_env,  # noqa: F401
                      kernel_from_env, progress_from_env, threads_from_env, warm_kernels_from_env)

DTYPE = torch.float64


class DtypeError(TypeError):
    """Tensors of a dtype the engines do not support (anything but float64) were passed in."""


def check() -> None:
    """Raise :class:`ConfigError` if any SHALLOWFLOW_* variable is invalid (the CLI calls this first)."""
    threads_from_env()
    device_from_env()
    kernel_from_env()
    progress_from_env()
    warm_kernels_from_env()


def default_device() -> torch.device:
    """CUDA when available, else CPU; the environment variable SHALLOWFLOW_DEVICE wins."""
    threads_from_env()  # a bad SHALLOWFLOW_THREADS, tolerated at import, is reported at first use
    dev = device_from_env()
    if dev is not None:
        return dev
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def set_threads(n: int | None = None) -> int:
    """Set torch's intra-op thread count (default: SHALLOWFLOW_THREADS, else 1) and return it."""
    if n is None:
        n = threads_from_env()
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_THREADS:
        raise ValueError(f"thread count must be an integer from 1 to {MAX_THREADS}, got {n!r}")
    torch.set_num_threads(n)
    return n


_libc = None  # glibc, where this process has it (loaded on first use)
_last_trim: float | None = None  # monotonic time of the last trim (None: never; the clock may start near zero at boot)


def trim_heap(every_s: float = 1.0) -> bool:
    """Hand the C heap's free pages back to the system (glibc's ``malloc_trim``), at most once per ``every_s`` seconds;
    True when it trimmed.  A long loop that keeps a few small tensors per observation while it allocates and frees
    tensors of a few hundred kB fragments glibc's heap once its dynamic mmap threshold has risen: the resident size
    then grows with the number of observations although nothing is kept (002 alignment at its paper size: 20 GiB,
    killed; 0.6 MB per observation at width 10^4 and 3 runs, flat with this call every ten observations at +4% time).
    Memory only: no number changes.  A no-op without glibc."""
    global _libc, _last_trim
    import time

    now = time.monotonic()
    if _last_trim is not None and now - _last_trim < every_s:
        return False
    _last_trim = now
    if _libc is None:
        import ctypes
        import ctypes.util

        try:
            lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _libc = lib if hasattr(lib, "malloc_trim") else False
        except OSError:
            _libc = False
    if not _libc:
        return False
    _libc.malloc_trim(0)
    return True


problem: ConfigError | None = None  # what configure() found wrong at import


def configure() -> None:
    """At import: set the thread count from the environment; a bad variable is kept in ``problem`` (and
    raised by :func:`check` and the functions that use it), never raised here."""
    global problem
    try:
        set_threads()
        problem = None
    except ConfigError as e:
        problem = e
        torch.set_num_threads(1)


def require_float64(*tensors: torch.Tensor, what: str = "parameters and data") -> None:
    """Refuse anything but float64 with the reason (:class:`DtypeError`)."""
    bad = sorted({str(t.dtype).replace("torch.", "") for t in tensors
                  if isinstance(t, torch.Tensor) and t.dtype != DTYPE})
    if bad:
        raise DtypeError(
            f"{what} in {', '.join(bad)} are not supported: the engines compute in float64, because the "
            f"sources' initial scales underflow in lower precision (lambda = 1e-22 squared is 1e-44, below "
            f"float32's smallest normal 1.2e-38); convert with .double() / .to(torch.float64)")


def describe() -> str:
    """One line naming torch, the device, the thread count and the two-layer engine, for the top of each
    chapter."""
    check()
    dev = default_device()
    # on the CPU, the vector width of torch's kernels (AVX2, AVX512, ...): float32 results differ in their last bits
    # between them, which a chaotic run (004 ADLER's large steps) carries to the end
    extra = f" ({torch.cuda.get_device_name(dev)})" if dev.type == "cuda" else \
        f" ({torch.backends.cpu.get_cpu_capability()} kernels)"
    return (f"torch {torch.__version__}, device {dev}{extra}, dtype {str(DTYPE).replace('torch.', '')}, "
            f"{torch.get_num_threads()} thread(s), engine: {kernel.engine_line(dev)}")
