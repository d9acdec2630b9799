"""``shallowflow run ... --estimate``: what a re-run costs, before it runs (no kernel starts, nothing is written).

The estimate is the book time measured in params/timings.json times the ratio of the chapter's own Rule.work units
at the asked parameters to those at the book's; the rules say what they estimate (Rule.kind, Rule.estimate)."""
import json

import pytest

from shallowflow.params import chapters
from shallowflow.run import cli
from shallowflow import params
from shallowflow import executor as X
from shallowflow.executor import estimate as E

LINEAR = "brisbois-thesis/toy-reproduction"  # its Rule.work is gd_work(..., steps) summed: linear in steps


@pytest.fixture
def no_kernel(monkeypatch, tmp_path):
    """Any attempt to execute fails the test; task and claim folders point into tmp_path (checked empty after)."""
    monkeypatch.setenv("SHALLOWFLOW_TASKS_DIR", str(tmp_path / "tasks"))
    monkeypatch.setenv("SHALLOWFLOW_CLAIMS_DIR", str(tmp_path / "claims"))

    def refuse(*a, **k):
        raise AssertionError("--estimate started an execution")

    monkeypatch.setattr(X, "execute_task", refuse)
    monkeypatch.setattr(X, "run_tasks", refuse)
    return tmp_path


def test_rules_say_what_they_estimate():
    P = type("P", (), {"a": 3})()
    w = params.Rule.work(("a",), lambda P: 10.0 * P.a)
    m = params.Rule.memory(("a",), lambda P: 2.0 ** 20 * P.a, limit=2.0 ** 30)
    plain = params.Rule.at_most("a", "a")
    assert (w.kind, w.estimate(P), w.limit()) == ("work", 30.0, params.work_limit())
    assert (m.kind, m.estimate(P), m.limit()) == ("memory", 3.0 * 2 ** 20, 2.0 ** 30)
    assert plain.kind is None and plain.estimate is None
    assert w.message == "the run must fit the work budget"  # the messages did not change
    with pytest.raises(ValueError):
        params.Rule(("a",), bool, "x", kind="time", estimate=len)


def test_book_estimate_is_the_measured_book_time():
    e = E.estimate(LINEAR, "book")
    book_s = json.loads((cli.repo_root() / "params" / "timings.json").read_text())["book"][LINEAR]
    assert e.ratio == 1 and e.seconds == pytest.approx(book_s) and e.book_s == pytest.approx(book_s)
    assert e.here and not e.refusal and e.profile == "book"


def test_doubling_the_steps_doubles_the_work_and_the_estimate():
    steps = chapters.defaults(LINEAR)["steps"]
    e1, e2 = E.estimate(LINEAR, "book"), E.estimate(LINEAR, "book", {"steps": 2 * steps})
    assert e2.profile == "custom" and e2.book_work == e1.work
    assert e2.ratio == pytest.approx(2, rel=0.05) and e2.seconds == pytest.approx(2 * e1.seconds, rel=0.05)


def test_a_refused_combination_is_refused_as_run_refuses_it_without_a_kernel(no_kernel, capsys):
    args = ["run", LINEAR, "-p", "steps", "0", "--out", str(no_kernel / "out")]
    assert cli.main(args) == 2
    run_err = capsys.readouterr().err
    assert cli.main(args + ["--estimate"]) == 2
    out, err = capsys.readouterr()
    assert err == run_err and err.strip().count("\n") == 0 and "parameter 'steps'" in err and not out
    assert not any(no_kernel.rglob("*.ipynb")) and not (no_kernel / "out").exists()


def test_a_budget_refusal_still_shows_the_cost_and_where_it_fits(no_kernel, capsys, monkeypatch):
    monkeypatch.setenv("SHALLOWFLOW_WORK_BUDGET", "1e6")  # every chapter is over it
    assert cli.main(["run", LINEAR, "--estimate"]) == 2
    out, err = capsys.readouterr()
    assert "a GPU or a cluster" in out and "work budget" in err and err.strip().count("\n") == 0
    assert not any(no_kernel.rglob("*.ipynb"))


@pytest.mark.parametrize("profile", ["book", "smoke", "paper"])
def test_estimate_every_chapter(no_kernel, capsys, profile):
    rc = cli.main(["run", "--all", "--profile", profile, "--estimate"])
    out, err = capsys.readouterr()
    out = out.splitlines()
    names = [c for c in X.chapters() if c != X.SCORECARD]
    assert len(out) == 2 + len(names) and all(any(l.startswith(c + " ") for l in out) for c in names)
    assert not any(no_kernel.rglob("*.ipynb"))
    if profile == "paper":  # the sources' scale: some chapters are over this machine's budgets, and say so
        refused = err.strip().split(": ")[-1].split(", ") if err else []
        assert rc == (2 if refused else 0)
        assert all("a GPU or a cluster" in out[2 + names.index(c)] for c in refused)
    else:
        assert rc == 0 and not err


def test_the_block_for_one_chapter_is_a_few_plain_lines(no_kernel, capsys):
    assert cli.main(["run", LINEAR, "--profile", "smoke", "--estimate"]) == 0
    out = capsys.readouterr().out
    assert 5 <= len(out.splitlines()) <= 9 and out.isascii()
    assert "work" in out and "memory" in out and "where" in out and "this machine" in out


def test_the_paper_profile_quotes_its_recorded_run_and_only_it(no_kernel, capsys, monkeypatch):
    """A paper profile that has run says what that run cost (benchmarks/paper_scale.runs.jsonl); the same chapter with
    a parameter changed is another run (custom) and quotes none."""
    from shallowflow.verdicts import paper

    rec = dict(chapter=LINEAR, rc=0, wall_s=9.3, cpu_s=10.3, peak_rss_gb=0.88, commit="72eb0d3 (+ x)",
               started="2026-11-26T05:37:24Z")
    monkeypatch.setattr(paper, "runs", lambda: {LINEAR: rec})
    assert cli.main(["run", LINEAR, "--profile", "paper", "--estimate"]) == 0
    out = capsys.readouterr().out
    assert "ran     the paper run of 2026-11-26 (code 72eb0d3): 9 s executed" in out and "peak 0.88 GiB" in out
    assert cli.main(["run", LINEAR, "--profile", "paper", "-p", "seeds", "[0]", "--estimate"]) == 0
    assert "the paper run of" not in capsys.readouterr().out
