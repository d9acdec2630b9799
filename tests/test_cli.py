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

from shallowflow.run import cli
from shallowflow import executor as X

CHAPTER = "orthogonal-inputs/toy"
# the runs that execute: the cheapest chapter with seeds and verdicts (about 4 s), one seed: the CLI, not the chapter, is
# under test
RUN_CHAPTER = "synthesis/pl-conditioning"
RUN = ["run", RUN_CHAPTER, "--profile", "smoke", "-p", "seeds", "[0]"]
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
    res = subprocess.run([str(BIN), *RUN, "--out", str(base / "runs"), "--json", str(base / "verdicts.json")],
                         env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "IPKernelApp" not in res.stderr and "TCP" not in res.stderr and "Executing" not in res.stderr
    files = [base / "runs" / "custom" / f"{RUN_CHAPTER}.ipynb", *sorted((base / "claims" / "custom").glob("*.json"))]
    assert len(files) == 2 and all(f.exists() for f in files)
    return dict(base=base, env=env, files=files, digest=_digest(files), stdout=res.stdout)


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
    # a runner started as a background job of a shell inherits SIGINT ignored, and Python then installs no
    # KeyboardInterrupt handler: give the run the default disposition a terminal's Ctrl-C meets
    p = subprocess.Popen([str(BIN), *RUN, "--out", str(previous["base"] / "runs")], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
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
    assert rc == 2 and "\n" not in err and "the kernel died while executing chapter synthesis/pl-conditioning" in err


# ---------------------------------------------------------------------------------------------
# issue 29 item 5: the verdicts where the reader is (the terminal table, --json)
def test_a_run_prints_its_check_table_and_writes_its_json(previous):
    import json

    out = previous["stdout"]
    assert f"checks of {RUN_CHAPTER} [custom]" in out and "check" in out and "criterion" in out and "verdict" in out
    assert "custom run:" in out  # the differences from the book's verdicts (or that there are none)
    doc = json.loads((previous["base"] / "verdicts.json").read_text())
    assert doc["chapter"] == RUN_CHAPTER and doc["profile"] == "custom" and doc["checks"]
    for row in doc["checks"]:
        assert {"id", "measured", "values", "criterion", "verdict", "cause", "why", "runs"} <= set(row)
        assert row["id"] in out


FAKE_RECORD = {"source": "003", "chapter": "book/orthogonal-inputs/toy", "profile": "custom", "checks": [
    {"id": "E1/final-loss", "measured": "1.2e-09 .. 3.4e-08 (4 runs)", "values": [1.2e-9, 3.4e-8], "verdict": "pass",
     "criterion": "< 1e-06", "cause": "", "why": "", "runs": 4},
    {"id": "E1/a-very-long-check-name-that-wraps", "measured": "a measured value with many words " * 4,
     "values": [1.0], "verdict": "fail", "criterion": "between 0 and 0.5 " * 3, "cause": "method",
     "why": "generated", "runs": None}],
    "not_run": [{"id": "E2/skipped", "measured": "", "values": [], "verdict": "not-run", "criterion": "",
                 "cause": "", "why": "", "runs": None, "note": "section skipped"}]}


def test_the_table_is_wrapped_to_the_width_and_lists_differences(monkeypatch):
    from shallowflow.run import terminal

    monkeypatch.setattr(terminal, "_book_verdicts", lambda source: {"E1/final-loss": "fail",
                                                                    "E1/a-very-long-check-name-that-wraps": "fail"})
    rows = terminal.check_rows([FAKE_RECORD])
    assert [r["verdict"] for r in rows] == ["pass", "fail", "not-run"] and rows[0]["runs"] == 4
    for cols in (60, 100, 200):
        text = terminal.render(rows, "t", cols=cols)
        assert all(len(line) <= cols for line in text.splitlines()), text
        assert "NOT-RUN" in text and "E2/skipped" in text and "1 fail, 1 not-run, 1 pass" in text
    assert [r["id"] for r in terminal.differences(rows)] == ["E1/final-loss"]
    diff = terminal.render_differences(rows, "custom")
    assert "1 check(s) differ" in diff and "E1/final-loss: pass here, fail in the book" in diff


def test_run_table_and_json_without_executing(tmp_path, monkeypatch, capsys):
    """The CLI's table and --json from a task's records (the chapter's execution replaced: cheap)."""
    import json

    monkeypatch.setenv("SHALLOWFLOW_TASKS_DIR", str(tmp_path / "tasks"))
    monkeypatch.setenv("SHALLOWFLOW_CLAIMS_DIR", str(tmp_path / "claims"))
    result = {"chapter": CHAPTER, "profile": "custom", "values": {}, "records": [FAKE_RECORD], "notebook": "",
              "dir": str(tmp_path / "tasks" / "x")}
    monkeypatch.setattr(X, "execute_task", lambda *a, **k: result)
    monkeypatch.setattr(X, "publish", lambda *a, **k: tmp_path / "nb.ipynb")
    out_json = tmp_path / "sub" / "v.json"
    assert cli.main([*RUN, "--out", str(tmp_path / "runs"), "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "E1/final-loss" in out and "NOT-RUN" in out and f"verdicts -> {out_json}" in out
    doc = json.loads(out_json.read_text())
    assert [r["id"] for r in doc["checks"]] == ["E1/final-loss", "E1/a-very-long-check-name-that-wraps", "E2/skipped"]
    assert cli.main([*RUN, "--no-table"]) == 0 and "E1/final-loss" not in capsys.readouterr().out
    # a --json folder is refused before anything runs
    monkeypatch.setattr(X, "execute_task", lambda *a, **k: pytest.fail("a chapter ran"))
    assert cli.main([*RUN, "--json", str(tmp_path)]) == 1
    assert "is a folder" in capsys.readouterr().err


def test_sweep_prints_a_table_per_point_and_writes_json(tmp_path, monkeypatch, capsys):
    import contextlib
    import json

    monkeypatch.setenv("SHALLOWFLOW_TASKS_DIR", str(tmp_path / "tasks"))

    def fake_run_tasks(client, tasks, **kw):
        res = [{"chapter": t.chapter, "profile": t.profile, "values": t.values, "records": [FAKE_RECORD],
                "engine": "torch", "device": "cpu", "path": "notebook", "notebook": "", "wall_s": 0.1,
                "started": "now", "host": "h", "pid": 1} for t in tasks]
        return X.Outcome(res[:1] + [None], {1: "point 2: it failed"})

    monkeypatch.setattr(X, "cluster", lambda *a, **k: contextlib.nullcontext(None))
    monkeypatch.setattr(X, "run_tasks", fake_run_tasks)
    argv = ["sweep", CHAPTER, "--grid", "seeds", "[[0], [1]]", "-p", "animation_frames", "0", "--quiet",
            "--out", str(tmp_path / "table"), "--json", str(tmp_path / "sweep.json")]
    assert cli.main(argv) == 1  # a failed point
    out = capsys.readouterr().out
    assert "point 1 (seeds=[0])" in out and "E1/final-loss" in out and "point 2 (seeds=[1]): failed" in out
    doc = json.loads((tmp_path / "sweep.json").read_text())
    assert [p["point"] for p in doc["points"]] == [1, 2] and doc["points"][0]["checks"][0]["runs"] == 4
    assert doc["points"][1]["error"] and not doc["points"][1]["checks"]
