import ctypes.util

import pytest
import torch

from shallowflow.engine import config


@pytest.mark.parametrize("clock_start", [0.0, 1.5, 59.0, 10_000_000.0])
def test_trim_heap_is_throttled_and_changes_nothing_else(monkeypatch, clock_start):
    """The first call trims whatever the monotonic clock reads (on Linux it counts from boot: a machine up for
    seconds reads near zero), the next within ``every_s`` is throttled, and one after it trims again."""
    now = [clock_start]
    monkeypatch.setattr("time.monotonic", lambda: now[0])
    monkeypatch.setattr(config, "_last_trim", None)
    glibc = bool(ctypes.util.find_library("c"))
    x = torch.arange(10, dtype=torch.float64)
    assert config.trim_heap(every_s=3600.0) is glibc  # glibc here: it trims; elsewhere a no-op
    now[0] += 10.0
    assert config.trim_heap(every_s=3600.0) is False  # within the hour: throttled
    now[0] += 3600.0
    assert config.trim_heap(every_s=3600.0) is glibc  # an hour later: trims again
    assert torch.equal(x, torch.arange(10, dtype=torch.float64))
