"""The executor on a LocalCluster of 2 worker processes, at smoke scale (issue 20).

One 3-point sweep of the synthesis chapter pl-conditioning at smoke scale (seeds 0..2; the cheapest chapter with
seeds and verdicts, so that the fault tests cost the test command little) serves several tests: it runs while a
worker process is killed, its table must equal 3 serial runs' (timing columns aside), and it is then
resumed after two of its points were removed or left half-written (3 points on 2 workers: the killed point
is re-run beside the third, and each kind of damage still has a point of its own).  A separate ``dask scheduler`` and
``dask worker`` on 127.0.0.1 receive a sweep from the CLI.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from shallowflow.run import cli
from shallowflow import executor as X
from shallowflow.run import sweep as S

CHAPTER = "synthesis/pl-conditioning"  # the cheapest chapter with seeds and verdicts (about 4 s a point)
FIXED = {}
GRID = {"seeds": [[0], [1], [2]]}
DROP = ["notebook"]  # the serial runs' notebooks live under another root


@pytest.fixture(scope="module", autouse=True)
def frozen_code_version():
    """Task names include the code version; other work on this checkout must not change it mid-test."""
    version = X.code_version()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(X, "code_version", lambda: version)
        yield version


# First in the file: it uses no LocalCluster, so the module's 2-worker cluster (``client``, set up at its first
# use, torn down after the module's last test) does not idle beside this test's own scheduler and worker.
def test_sweep_on_a_separate_scheduler_and_worker(tmp_path, monkeypatch, capsys):
    """`dask scheduler` and `dask worker` processes on 127.0.0.1 receive a sweep sent by the CLI (its ``main``, in
    this process: the separate scheduler and worker are under test, and a CLI process of its own would only import
    torch, Dask and the book's package again, about 7 CPU-s; the CLI as a process is tested in test_cli.py)."""
    bin_ = Path(sys.executable).parent
    sched_file = tmp_path / "scheduler.json"
    env = {**os.environ, "SHALLOWFLOW_TASKS_DIR": str(tmp_path / "tasks"), "CI": "true"}
    procs = [subprocess.Popen([str(bin_ / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
                               "--no-dashboard", "--scheduler-file", str(sched_file)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)]
    try:
        deadline = time.monotonic() + 240  # a guard against a hang only: the scheduler writes its file when up
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        address = json.loads(sched_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        procs.append(subprocess.Popen([str(bin_ / "dask"), "worker", address, "--nthreads", "1", "--nworkers", "1",
                                       "--no-dashboard", "--host", "127.0.0.1"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env))
        out = tmp_path / "table"
        for k in ("SHALLOWFLOW_TASKS_DIR", "CI"):
            monkeypatch.setenv(k, env[k])
        box = {}
        sweep = threading.Thread(target=lambda: box.update(rc=cli.main([
            "sweep", CHAPTER, "--profile", "smoke", "--grid", "seeds", "[[0]]", "--scheduler", address,
            "--out", str(out)])), daemon=True)
        sweep.start()
        sweep.join(300)  # a guard against a hang only (the CLI process's timeout before): ending the processes below
        assert not sweep.is_alive(), "the sweep did not end within 300 s"  # ends its connection
        assert box.get("rc") == 0, capsys.readouterr().err[-2000:]
        import pandas as pd

        df = pd.read_csv(out.with_suffix(".csv"))
        assert len(df) == 1 and (df["error"].isna() | (df["error"] == "")).all()  # one point: which process ran it
        pids = {int(w.rsplit(":", 1)[1]) for w in df["worker"]}
        assert os.getpid() not in pids and len(pids) == 1  # executed by the separate worker process
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()


@pytest.fixture(scope="module")
def client():
    with X.cluster(workers=2) as c:
        yield c


@pytest.fixture(scope="module")
def swept(client, tmp_path_factory):
    """The 3-point sweep, with one worker process killed while it executes a point."""
    root = tmp_path_factory.mktemp("tasks")
    out = tmp_path_factory.mktemp("sweep") / "table"
    before = set(client.run(os.getpid).values())
    box = {}

    def run():
        box["result"] = S.run(CHAPTER, GRID, "smoke", FIXED, client=client, out=out, root=root)

    t = threading.Thread(target=run)
    t.start()
    killed = None
    deadline = time.monotonic() + 240  # a guard against a hang only
    while killed is None and time.monotonic() < deadline and t.is_alive():
        busy = [w for w, keys in client.processing().items() if keys]
        if busy and list(root.rglob("*.ipynb")):  # a point is executing (its notebook is being written)
            pids = client.run(os.getpid, workers=[busy[0]])
            killed = pids[busy[0]]
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.2)
    t.join(300)
    df, errors, paths, _ = box["result"]
    return dict(df=df, errors=errors, paths=paths, root=root, killed=killed, before=before, out=out)


def test_sweep_survives_a_killed_worker_and_equals_serial_runs(swept, client, tmp_path, monkeypatch):
    df = swept["df"]
    assert swept["killed"] in swept["before"], "no worker process was killed during the sweep"
    assert swept["killed"] not in set(client.run(os.getpid).values())
    assert swept["errors"] == {} and len(df) == len(GRID["seeds"]) and (df["error"] == "").all()
    assert list(df["seeds"]) == [json.dumps(s) for s in GRID["seeds"]]
    verdicts = [c for c in df.columns if c.endswith(" verdict")]
    assert verdicts and df[verdicts].isin(["pass", "fail"]).all().all()
    csv, parquet = swept["paths"]
    import pandas as pd

    assert pd.read_csv(csv).shape == df.shape and pd.read_parquet(parquet).shape == df.shape
    # the same points, one `shallowflow run` after another (in this process, under another root)
    monkeypatch.setenv("SHALLOWFLOW_TASKS_DIR", str(tmp_path / "serial"))
    monkeypatch.setenv("SHALLOWFLOW_CLAIMS_DIR", str(tmp_path / "claims"))
    results = []
    for seeds in GRID["seeds"]:
        argv = ["run", CHAPTER, "--profile", "smoke", "--out", str(tmp_path / "runs"), "--quiet",
                "-p", "seeds", json.dumps(seeds)]
        assert cli.main(argv) == 0
        results.append(X.read_result(X.prepare(CHAPTER, "smoke", {**FIXED, "seeds": seeds})))
    assert all(results) and [r["values"]["seeds"] for r in results] == GRID["seeds"]
    tasks = S.plan(CHAPTER, GRID, "smoke", FIXED)
    serial = S.table(tasks, GRID, results, {})
    pd.testing.assert_frame_equal(S.comparable(df).drop(columns=DROP), S.comparable(serial).drop(columns=DROP))


def test_interrupted_sweep_resumes_without_recomputing_finished_points(swept, client):
    root = swept["root"]
    tasks = S.plan(CHAPTER, GRID, "smoke", FIXED, root=root)
    stamps = {i: (t.dir / "result.json").stat().st_mtime_ns for i, t in enumerate(tasks[:1])}
    # point 2 was interrupted (only its temporary directory exists); point 3 was half-written in place
    (tasks[1].dir).rename(tasks[1].dir.with_name(f".{tasks[1].dir.name}.partial-deadbeef"))
    (tasks[2].dir / "result.json").unlink()
    df, errors, _, _ = S.run(CHAPTER, GRID, "smoke", FIXED, client=client, out=swept["out"], root=root)
    assert errors == {}
    assert list(df["cached"]) == [True, False, False]
    assert {i: (t.dir / "result.json").stat().st_mtime_ns for i, t in enumerate(tasks[:1])} == stamps
    import pandas as pd

    pd.testing.assert_frame_equal(S.comparable(df), S.comparable(swept["df"]))


def test_bad_point_is_refused_before_any_task_starts(client, tmp_path):
    grid = {"seeds": [[0], [1]], "width": [10, 12, -5]}
    with pytest.raises(X.ChapterError, match=r"(?s)sweep refused, nothing was run: 2 of 6 points.*point 3 .*"
                                             r"'width' = -5"):
        S.run(CHAPTER, grid, "smoke", client=client, root=tmp_path)
    assert not list(tmp_path.iterdir())
    assert not any(client.processing().values())
    with pytest.raises(X.ChapterError, match="unknown (grid )?parameter.*'widht'"):
        S.plan(CHAPTER, {"widht": [3]}, "smoke")
