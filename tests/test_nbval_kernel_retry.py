"""The smoke tier's nbval plugin starts a kernel that died at start-up again (at most TRIES times in all)."""
import importlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
R = importlib.import_module("nbval_kernel_retry")


def test_a_kernel_that_dies_at_start_is_started_again(monkeypatch):
    calls = []

    def flaky(**kw):
        calls.append(kw)
        if len(calls) == 1:
            raise RuntimeError("Kernel died before replying to kernel_info")
        return "km", "kc"

    monkeypatch.setattr(R, "_start", flaky)
    with pytest.warns(UserWarning, match="kernel start 1 of 3 failed"):
        assert R.start_new_kernel(kernel_name="k") == ("km", "kc")
    assert len(calls) == 2


def test_a_kernel_that_never_starts_fails_after_the_last_try(monkeypatch):
    def dead(**kw):
        raise RuntimeError("Kernel died before replying to kernel_info")

    monkeypatch.setattr(R, "_start", dead)
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="Kernel died"):
        R.start_new_kernel(kernel_name="k")
