"""benchmarks/paper_scale.py --run --all (issue 39 item 3): the chapters whose paper record is missing or stale, cheapest
first, as far as the time given allows; a run still going at the limit is stopped whole and recorded with the
checkpoints it left.  Tested at smoke size and with a stand-in for the CLI: no paper profile runs here."""
import importlib.util
import json
import sys
import threading
from pathlib import Path

import pytest

from shallowflow.verdicts.digest import chapter_digest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "paper_scale.py"


@pytest.fixture(scope="module")
def ps():
    spec = importlib.util.spec_from_file_location("paper_scale_under_test", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def record(chapter, digest, seconds, rc=0):
    return dict(chapter=chapter, rc=rc, wall_s=seconds, cpu_s=seconds, load_start=0.0, load_end=0.0,
                started="2026-11-26T00:00:00Z", commit="abc1234", machine="m", stderr="",
                stdout=f"executed {chapter} (smoke) in {seconds} s -> x\n", digest=digest)


def test_pending_lists_missing_and_stale_records_cheapest_first(ps, tmp_path):
    current, stale, missing = "synthesis/plateau", "synthesis/implicit-bias", "brisbois-thesis/toy-reproduction"
    old = chapter_digest(stale, "smoke")
    old = dict(parts={**old["parts"], f"book/{stale}.py": "0" * 16}, digest="0" * 16)  # the notebook changed since
    runs = tmp_path / "runs.jsonl"
    runs.write_text("\n".join(json.dumps(r) for r in (
        record(current, chapter_digest(current, "smoke"), 5.0),  # keyed to the current code: not run again
        record(stale, old, 1e6),  # stale: run again, and its measured cost orders it (last here)
        record(missing, None, 3.0, rc=1),  # only a failed run: missing, ordered by the estimate
    )) + "\n")
    plan, left = ps.pending(runs, profile="smoke", only=[current, stale, missing])
    assert [p["chapter"] for p in plan] == [missing, stale] and not left
    assert plan[0]["why"].startswith("missing (the last run ended without a result")
    assert plan[0]["basis"] == "estimated" and plan[0]["seconds"] < 1e6
    assert plan[1]["why"] == f"stale: changed book/{stale}.py" and plan[1]["seconds"] == 1e6
    assert plan[1]["basis"].startswith("measured") and plan[0]["resumes"] is False


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_run_all_runs_in_order_as_far_as_the_limit_allows(ps):
    plan = [dict(chapter=c, seconds=s, basis="estimated", why="missing", resumes=r)
            for c, s, r in (("a", 10, False), ("b", 30, False), ("c", 50, False), ("d", 40, False), ("e", 60, True),
                            ("f", 5, False))]
    clock, calls = Clock(), []

    def run(chapter, timeout):
        calls.append((chapter, timeout))
        cost = next(p["seconds"] for p in plan if p["chapter"] == chapter)
        if timeout is not None and cost > timeout:
            clock.t += timeout
            return dict(rc=143, wall_s=timeout, stopped=f"time limit ({timeout:.0f} s)", checkpoints=2)
        clock.t += cost
        return dict(rc=0, wall_s=cost)

    said = []
    rows = ps.run_all(plan, 100.0, run, clock=clock, say=said.append)
    # a, b, c fit (90 s); d (40 s) does not and does not resume: skipped; e resumes: started with the 10 s left and
    # stopped there, its checkpoints kept; f comes after the limit
    assert calls == [("a", 100.0), ("b", 90.0), ("c", 60.0), ("e", 10.0)]
    assert [r["done"] for r in rows] == ["ran", "ran", "ran", "skipped", "stopped", "skipped"]
    assert rows[4]["checkpoints"] == 2 and rows[5]["why"] == "no time left"
    assert "does not resume" in rows[3]["why"] and any("2 chunk(s) kept for the next sitting" in s for s in said)
    calls.clear()
    assert [r["done"] for r in ps.run_all(plan, None, run, clock=Clock(), say=said.append)] == ["ran"] * 6
    assert [c for c, _ in calls] == list("abcdef") and all(t is None for _, t in calls)


FAKE_CLI = """
import os, pathlib, signal, sys
def stop(*a):
    pathlib.Path(os.environ["FAKE_MARKS"], "terminated").write_text("SIGTERM")
    sys.exit(143)
signal.signal(signal.SIGTERM, stop)
ck = pathlib.Path(os.environ["SHALLOWFLOW_CHECKPOINTS"]) / "synthesis_plateau" / "0123456789abcdef"
ck.mkdir(parents=True)
(ck / "0.pt").write_bytes(b"a finished chunk")
pathlib.Path(os.environ["FAKE_MARKS"], "ready").write_text(" ".join(sys.argv[1:]))
while True:
    signal.pause()
"""


def test_a_stopped_run_is_stopped_whole_and_recorded_with_its_checkpoints(ps, tmp_path, monkeypatch):
    exe = tmp_path / "shallowflow"
    exe.write_text(FAKE_CLI)
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("FAKE_MARKS", str(marks))
    monkeypatch.setenv("SHALLOWFLOW_CHECKPOINTS", str(tmp_path / "ck"))
    monkeypatch.setattr(ps, "keep_claims", lambda *a: pytest.fail("a stopped run keeps no claims record"))
    runs, stop, out = tmp_path / "runs.jsonl", threading.Event(), {}
    worker = threading.Thread(target=lambda: out.update(rec=ps.run_chapter(
        "synthesis/plateau", runs, tmp_path, profile="smoke", exe=_python_script(exe), stop=stop)), daemon=True)
    worker.start()
    ready = marks / "ready"
    try:
        # wait for the event (the stand-in is running and has stored a chunk): it runs at nice 19, so on a loaded
        # machine it may take minutes to start; the bound only keeps a broken run from hanging the suite
        for _ in range(6000):
            if ready.exists() or not worker.is_alive():
                break
            worker.join(0.1)
        assert ready.read_text().startswith("run synthesis/plateau --profile smoke")
    finally:
        stop.set()  # whatever happened, the run is told to stop, so the worker thread (and pytest) can end
    worker.join(ps.GRACE_S + 30)
    assert not worker.is_alive()
    rec = out["rec"]
    assert (marks / "terminated").read_text() == "SIGTERM"  # the CLI was told to shut its kernel down
    assert rec["rc"] == 143 and rec["stopped"] == "stop requested" and rec["checkpoints"] == 1
    assert json.loads(runs.read_text().splitlines()[-1])["stopped"] == "stop requested"
    assert ps.load_runs(runs)["synthesis/plateau"]["rc"] == 143  # no success: the chapter is still to run


def _python_script(path: Path) -> Path:
    """``path`` made runnable as the wrapper's command (an executable file with a shebang of this Python)."""
    path.write_text(f"#!{sys.executable}\n" + path.read_text())
    path.chmod(0o755)
    return path


def test_every_paper_run_longer_than_20_minutes_resumes():
    """Issue 39 item 3: a chapter whose paper run costs more than 20 minutes here (benchmarks/paper_scale.json: measured,
    estimated, or refused at its estimate) checkpoints: its paper profile turns ``resume`` on, a parameter of its
    schema, off in the book's parameters cell."""
    import yaml

    from shallowflow.params import chapters

    root = BENCH.parents[1]
    rows = json.loads((root / "benchmarks" / "paper_scale.json").read_text())["chapters"]
    long = [ch for ch, row in rows.items() if (row["paper"].get("seconds") or 0) > 20 * 60]
    assert len(long) >= 10
    for ch in long:
        assert (yaml.safe_load((root / "params" / "paper" / f"{ch}.yml").read_text()) or {}).get("resume") is True, ch
        schema, _ = chapters.schema(ch)
        assert "resume" in schema, ch
        assert "\nresume = False" in (root / "book" / f"{ch}.py").read_text(), ch


def test_a_run_whose_code_changes_while_it_runs_is_keyed_to_no_code(ps, tmp_path, monkeypatch):
    """The digest is taken when the run starts and again when it ends: an edit in between (a chapter's module saved
    while its paper run goes on) leaves a record that no code matches (digest None, shown stale), never one keyed to
    code the run did not execute."""
    exe = tmp_path / "shallowflow"
    exe.write_text("import sys\nsys.exit(0)\n")
    digests = iter([dict(digest="a" * 16, parts={}), dict(digest="b" * 16, parts={})])
    monkeypatch.setattr(ps, "chapter_digest", lambda *a, **k: next(digests))
    monkeypatch.setattr(ps, "keep_claims", lambda *a: None)
    runs = tmp_path / "runs.jsonl"
    rec = ps.run_chapter("synthesis/plateau", runs, tmp_path, profile="smoke", exe=_python_script(exe))
    assert rec["rc"] == 0 and rec["digest"] is None and "changed while it ran" in rec["code_changed"]
    assert json.loads(runs.read_text().splitlines()[-1])["digest"] is None
