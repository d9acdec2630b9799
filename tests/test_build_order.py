"""The book build starts the longest chapters first, and the executor starts tasks in the order given."""
import json

from shallowflow.site import build
from shallowflow import executor as X


def test_longest_first_puts_unknown_chapters_first_then_by_time():
    expected = {"a/short": 5.0, "a/long": 240.0, "b/mid": 60.0, "b/tie": 60.0}
    order = build.longest_first(["a/short", "b/mid", "new/chapter", "a/long", "b/tie"], expected)
    assert order == ["new/chapter", "a/long", "b/mid", "b/tie", "a/short"]


def test_expected_times_come_from_the_last_report_then_the_committed_file(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "repo_root", lambda: tmp_path)
    (tmp_path / "params").mkdir()
    (tmp_path / build.TIMINGS).write_text(json.dumps({"book": {"x/y": 12.5}, "smoke": {"x/y": 1.0}}))
    assert build.expected_seconds("book") == {"x/y": 12.5}
    assert build.expected_seconds("paper") == {}  # no edition there: alphabetical order
    runs = tmp_path / "artifacts" / "runs" / "book"
    runs.mkdir(parents=True)
    (runs / "build-report.json").write_text(json.dumps({"chapters": [{"chapter": "x/y", "wall_s": 99.0}]}))
    assert build.expected_seconds("book") == {"x/y": 99.0}
    (runs / "build-report.json").write_text("{ truncated")
    assert build.expected_seconds("book") == {"x/y": 12.5}  # a broken report is passed over


def test_the_committed_timings_name_real_chapters():
    doc = json.loads((build.repo_root() / build.TIMINGS).read_text())
    known = set(X.chapters())
    for profile in ("book", "smoke"):
        assert set(doc[profile]) <= known and len(doc[profile]) >= len(known) - 1, profile
        assert all(t > 0 for t in doc[profile].values())


class Recorder:
    """A client that records the priorities of what is submitted (and runs nothing)."""

    def __init__(self):
        self.priorities = {}

    def submit(self, fn, task, *args, priority=0, key=None, pure=True):
        self.priorities[task.chapter] = priority
        return key


def test_run_tasks_submits_in_the_given_order(monkeypatch):
    tasks = [X.Task(name, "book", {}, {}, "code", "/nonexistent") for name in ["c/long", "a/mid", "b/short"]]
    client = Recorder()
    monkeypatch.setattr("distributed.as_completed", lambda futures: [])
    X.run_tasks(client, tasks, force=True)
    p = client.priorities
    assert p["c/long"] > p["a/mid"] > p["b/short"]
