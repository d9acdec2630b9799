"""Numerical defaults: float64, automatic device choice and deliberate thread counts.

Small initialisations (lambda = 1e-22 and below) underflow when squared in float32, so every
tensor the library creates is float64 unless a caller asks otherwise.  The device is CUDA when
one is visible, the CPU otherwise; ``SHALLOWFLOW_DEVICE`` overrides the choice.

The networks of the sources are tiny (tens of neurons, a handful of samples): on a CPU the cost of
a step is dispatch overhead, and extra threads only add synchronisation.  The library therefore
runs torch on one intra-op thread unless ``SHALLOWFLOW_THREADS`` says otherwise.
"""
from __future__ import annotations

import os

import torch

DTYPE = torch.float64


def default_device() -> torch.device:
    """CUDA when available, else CPU; the environment variable SHALLOWFLOW_DEVICE wins."""
    name = os.environ.get("SHALLOWFLOW_DEVICE")
    if name:
        return torch.device(name)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def set_threads(n: int | None = None) -> int:
    """Set torch's intra-op thread count (default: SHALLOWFLOW_THREADS, else 1) and return it."""
    if n is None:
        n = int(os.environ.get("SHALLOWFLOW_THREADS", "1"))
    if n < 1:
        raise ValueError(f"thread count must be >= 1, got {n}")
    torch.set_num_threads(n)
    return n


def describe() -> str:
    """One line naming torch, the device and the thread count, for the top of each chapter."""
    dev = default_device()
    extra = f" ({torch.cuda.get_device_name(dev)})" if dev.type == "cuda" else ""
    return (f"torch {torch.__version__}, device {dev}{extra}, dtype {str(DTYPE).replace('torch.', '')}, "
            f"{torch.get_num_threads()} thread(s)")
