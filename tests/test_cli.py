"""The CLI validates before it starts anything, and an interrupted run leaves the previous result
untouched (issue 18, points 3 and 5; issue 17, point 3: no kernel start-up warnings)."""
import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from shallowflow import cli
from shallowflow import executor as X

CHAPTER = "orthogonal-inputs/toy"
RUN = ["run", CHAPTER, "--profile", "smoke", "-p", "animation_frames", "0"]
BIN = Path(sys.executable).parent / "shallowflow"


def test_negative_numbers_are_values_and_are_validated_in_this_process(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("SHALLOWFLOW_TASKS_DIR", str(tmp_path / "tasks"))
    assert cli.main(["run", CHAPTER, "-p", "lr", "-1e-3", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "parameter 'lr' = -0.001 is invalid" in err
    assert not list(tmp_path.rglob("*.ipynb"))
    assert cli.parse_value(" -1e-3") == -1e-3 and cli._protect_values(["-p", "lr", "-2"]) == ["-p", "lr", " -2"]


def test_profile_outside_the_repository_is_refused_before_anything_is_written(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("SHALLOWFLOW_TASKS_DIR", str(tmp_path / "tasks"))
    outside = cli.repo_root().parent / "outside"
    assert cli.main(["run", CHAPTER, "-p", "profile", "../../../outside", "--out", str(tmp_path / "o")]) == 2
    assert "parameter 'profile' = '../../../outside' is invalid" in capsys.readouterr().err
    assert not outside.exists() and not (tmp_path / "tasks").exists() and not (tmp_path / "o").exists()


def test_rules_and_unknown_names_are_refused_before_a_kernel_starts(tmp_path):
    with pytest.raises(X.ChapterError, match="unknown parameter.*'widht'"):
        X.prepare(CHAPTER, "smoke", {"widht": 3}, root=tmp_path)
    for name, spec in X.schema(CHAPTER)[0].items():
        if spec.kind == "int" and spec.low is not None:
            with pytest.raises(X.ChapterError, match=f"parameter '{name}'"):
                X.prepare(CHAPTER, "smoke", {name: int(spec.low) - 1}, root=tmp_path)
    assert not list(tmp_path.iterdir())


def test_params_shows_each_parameter_with_its_accepted_range(capsys):
    assert cli.main(["params", CHAPTER]) == 0
    out = capsys.readouterr().out
    sch, _ = X.schema(CHAPTER)
    for name, spec in sch.items():
        line = next(line for line in out.splitlines() if line.startswith(name + " "))
        assert f"accepts {spec.accepted()}" in line, line


def _digest(paths):
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


@pytest.fixture(scope="module")
def previous(tmp_path_factory):
    """A good run whose notebook and claim record the interrupted runs must leave untouched."""
    base = tmp_path_factory.mktemp("cli")
    env = {**os.environ, "SHALLOWFLOW_TASKS_DIR": str(base / "tasks"), "SHALLOWFLOW_CLAIMS_DIR": str(base / "claims"),
           "CI": "true"}
    res = subprocess.run([str(BIN), *RUN, "--out", str(base / "runs")], env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "IPKernelApp" not in res.stderr and "TCP" not in res.stderr and "Executing" not in res.stderr
    files = [base / "runs" / "custom" / f"{CHAPTER}.ipynb", *sorted((base / "claims" / "custom").glob("*.json"))]
    assert len(files) == 2 and all(f.exists() for f in files)
    return dict(base=base, env=env, files=files, digest=_digest(files))


def _wait_for(condition, what: str, timeout: float = 240.0) -> None:
    """Poll ``condition`` until it holds (an event, never a fixed sleep); fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _gone(process: psutil.Process) -> bool:
    try:
        return not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
    except psutil.Error:  # reaped between the two calls, or a zombie psutil refuses to describe
        return True


def _interrupt(previous, how):
    """Start a run, wait until its kernel is inside the chapter (a marker the chapter writes while it holds,
    see ``claims._fault_hold``), then interrupt it: the run cannot finish before the fault, on any load."""
    hold = previous["base"] / f"hold-{how}"
    env = {**previous["env"], "SHALLOWFLOW_FAULT_HOLD": str(hold)}
    p = subprocess.Popen([str(BIN), *RUN, "--out", str(previous["base"] / "runs")], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: hold.exists() or p.poll() is not None, "the chapter to reach its hold point")
        assert p.poll() is None, f"the run ended before the fault: {p.stderr.read()[-2000:]}"
        kernel = psutil.Process(int(hold.read_text()))
        if how == "kernel":
            kernel.kill()
        else:
            p.send_signal(how)
        out, err = p.communicate(timeout=240)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
        hold.unlink(missing_ok=True)  # releases a kernel that somehow survived
    _wait_for(lambda: _gone(kernel), "the kernel to end", timeout=60)
    assert not list((previous["base"] / "tasks").rglob(".*.partial-*")), "a temporary directory was left"
    assert _digest(previous["files"]) == previous["digest"], "the previous result was touched"
    return p.returncode, err.strip()


def test_sigint_leaves_the_previous_result_untouched(previous):
    rc, err = _interrupt(previous, signal.SIGINT)
    assert rc == 130 and err == ("shallowflow: interrupted by SIGINT; nothing was written, the previous notebook "
                                 "and claim records are untouched")


def test_sigterm_leaves_the_previous_result_untouched(previous):
    rc, err = _interrupt(previous, signal.SIGTERM)
    assert rc == 143 and err.startswith("shallowflow: interrupted by SIGTERM;") and "\n" not in err


def test_a_dying_kernel_is_one_line_and_leaves_the_previous_result_untouched(previous):
    rc, err = _interrupt(previous, "kernel")
    assert rc == 2 and "\n" not in err and "the kernel died while executing chapter orthogonal-inputs/toy" in err
