"""Nothing the suite or the library does may depend on the state of the machine it runs on: the clock's origin
(Linux's monotonic clock counts from boot), the user's home folder, leftovers of earlier runs."""
import os
from pathlib import Path

from shallowflow.engine import kernel
from shallowflow.verdicts import repo_root


def test_the_compiled_kernel_is_cached_inside_the_checkout(monkeypatch):
    """Nothing outside the repository is written: the default cache of the C kernel is the checkout's own."""
    monkeypatch.delenv("SHALLOWFLOW_CACHE", raising=False)
    monkeypatch.setenv("HOME", "/nonexistent-home")
    monkeypatch.setenv("XDG_CACHE_HOME", "/nonexistent-cache")
    folder = kernel._cache_dir().resolve()
    assert folder.is_relative_to(repo_root().resolve()), folder
    assert folder.is_relative_to((repo_root() / "artifacts").resolve())  # ignored by git, removed by make clean


def test_the_suite_waits_on_a_monotonic_clock():
    """A deadline read from the wall clock jumps when a freshly booted machine sets its time (NTP): every wait
    in the suite reads time.monotonic (whose origin, in turn, no assertion may assume)."""
    offenders = []
    for path in sorted(Path(__file__).parent.rglob("*.py")):
        if path.name == Path(__file__).name:
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if "time.time()" in line:
                offenders.append(f"{path.name}:{n}")
    assert not offenders, offenders
