"""The ``SHALLOWFLOW_*`` environment variables of the engine, each read with a check: a bad value raises
:class:`ConfigError`, whose message is one line naming the variable (see :mod:`shallowflow.engine.config`,
which reports it at first use; :mod:`~shallowflow.engine.kernel` reads ``SHALLOWFLOW_KERNEL`` here).
"""
from __future__ import annotations

import os

import torch

MAX_THREADS = 1024
KERNEL_CHOICES = {"": "auto", "auto": "auto", "kernel": "kernel", "c": "kernel", "1": "kernel", "on": "kernel",
                  "torch": "torch", "0": "torch", "off": "torch", "none": "torch"}


class ConfigError(RuntimeError):
    """An environment variable (``SHALLOWFLOW_*``) has an invalid value; the message is one line naming it."""


def _bad(var: str, value: str, expected: str) -> ConfigError:
    shown = value if len(value) <= 40 else value[:36] + " ..."
    return ConfigError(f"environment variable {var}={shown!r} is invalid: {expected}")


def threads_from_env() -> int:
    """SHALLOWFLOW_THREADS (default 1): an integer from 1 to MAX_THREADS, else :class:`ConfigError`."""
    raw = os.environ.get("SHALLOWFLOW_THREADS", "").strip()
    if not raw:
        return 1
    try:
        n = int(raw)
    except ValueError:
        raise _bad("SHALLOWFLOW_THREADS", raw, f"expected an integer from 1 to {MAX_THREADS}") from None
    if not 1 <= n <= MAX_THREADS:
        raise _bad("SHALLOWFLOW_THREADS", raw, f"expected an integer from 1 to {MAX_THREADS}")
    return n


def device_from_env() -> torch.device | None:
    """SHALLOWFLOW_DEVICE as a device that exists here (None when unset), else :class:`ConfigError`."""
    raw = os.environ.get("SHALLOWFLOW_DEVICE", "").strip()
    if not raw:
        return None
    try:
        dev = torch.device(raw)
    except (RuntimeError, ValueError):
        raise _bad("SHALLOWFLOW_DEVICE", raw, "expected cpu, cuda or cuda:N") from None
    if dev.type == "cpu":
        return dev
    if dev.type != "cuda":
        raise _bad("SHALLOWFLOW_DEVICE", raw, "expected cpu, cuda or cuda:N")
    if not torch.cuda.is_available():
        raise _bad("SHALLOWFLOW_DEVICE", raw, "no CUDA device is visible to torch "
                   f"{torch.__version__} on this machine (use cpu, or unset it)")
    if dev.index is not None and dev.index >= torch.cuda.device_count():
        raise _bad("SHALLOWFLOW_DEVICE", raw, f"only {torch.cuda.device_count()} CUDA device(s) are visible")
    return dev


def kernel_from_env() -> str:
    """SHALLOWFLOW_KERNEL: 'auto' (unset), 'kernel' or 'torch' (also 0/off/none), else :class:`ConfigError`."""
    raw = os.environ.get("SHALLOWFLOW_KERNEL", "").strip()
    try:
        return KERNEL_CHOICES[raw.lower()]
    except KeyError:
        raise _bad("SHALLOWFLOW_KERNEL", raw, "expected auto, kernel or torch (0/off/none)") from None


PROGRESS_CHOICES = {"": None, "auto": None, "1": True, "on": True, "true": True, "yes": True,
                    "0": False, "off": False, "false": False, "no": False}


def progress_from_env() -> bool | None:
    """SHALLOWFLOW_PROGRESS: None when unset or 'auto' (:mod:`shallowflow.engine.progress` decides), True for
    1/on/true/yes, False for 0/off/false/no, else :class:`ConfigError`."""
    raw = os.environ.get("SHALLOWFLOW_PROGRESS", "").strip()
    try:
        return PROGRESS_CHOICES[raw.lower()]
    except KeyError:
        raise _bad("SHALLOWFLOW_PROGRESS", raw, "expected auto, 1/on/true/yes or 0/off/false/no") from None


def warm_kernels_from_env() -> bool:
    """SHALLOWFLOW_WARM_KERNELS (default 1): whether the executor forks chapters' kernels from a warm parent
    (:mod:`shallowflow.executor.warm`); 0 starts every kernel as a new interpreter."""
    raw = os.environ.get("SHALLOWFLOW_WARM_KERNELS", "").strip().lower()
    if raw in ("", "1", "on", "yes", "true"):
        return True
    if raw in ("0", "off", "no", "false"):
        return False
    raise _bad("SHALLOWFLOW_WARM_KERNELS", raw, "expected 0 or 1")
