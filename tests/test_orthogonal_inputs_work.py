"""The seven 003 (orthogonal-inputs) chapters estimate their work (Rule.work, in gd_work units counted from the
chapter's own parameters) and their memory (Rule.memory): the book and smoke profiles are accepted, the work at book
is positive and finite, doubling a chapter's iterations roughly doubles its work, and a combination over the work
budget is refused in one line by the work rule before a kernel starts.  No training here: every test reads rules."""
from __future__ import annotations

import math

import pytest
import yaml

from shallowflow.params import chapters
from shallowflow import executor, params

NAMES = ("toy", "appendix-a", "balancedness", "high-dim", "implicit-bias", "phases", "remarks")
CHAPTERS = [f"orthogonal-inputs/{n}" for n in NAMES]

# the step/iteration parameters of each chapter and the factor that doubles its iterations (a step size halves);
# the lowest ratio accepted: balancedness's two Dormand-Prince flows are adaptive (their step counts grow like
# ln(1 + t), not like t) and its exact one-step checks do not depend on the horizon; remarks's Monte Carlo (R3) has
# no iterations
DOUBLE = {
    "toy": ({"steps": 2}, 1.9),
    "appendix-a": ({"steps": 2}, 1.9),
    "balancedness": ({"time_toy": 2, "time_b": 2}, 1.3),
    "high-dim": ({"steps": 2, "continue_steps": 2}, 1.9),
    "implicit-bias": ({"lrs": 0.5}, 1.9),
    "phases": ({"lrs": 0.5}, 1.9),
    "remarks": ({"steps": 2, "ortho_steps": 2}, 1.8),
}

# over the default work budget (3e14 units); a 4 TiB memory limit, so that the work rule (not a memory rule) decides
OVER = {
    "toy": {"width": 100_000, "steps": 10_000_000, "seeds": list(range(50))},
    "appendix-a": {"width": 10_000, "steps": 100_000_000},
    "balancedness": {"width_b": 100_000, "time_b": 1_000_000.0},
    "high-dim": {"steps": 100_000_000, "continue_steps": 100_000_000, "width": 400},
    "implicit-bias": {"lrs": [1e-5], "width_c": 10_000},
    "phases": {"width": 100_000, "lrs": [0.001]},
    "remarks": {"a3_sizes": [40], "a3_trials": 10_000_000, "a3_max_width": 10_000_000},
}
WHAT = {  # each work rule's own words (Rule.work's what=)
    "toy": "the toy's training",
    "appendix-a": "the non-orthogonal toy's training",
    "balancedness": "the GD runs, the exact one-step checks and the two flows",
    "high-dim": "the run (width x n x min(n, d)",
    "implicit-bias": "the ensembles to convergence",
    "phases": "the lemma and exit-time ensembles",
    "remarks": "every GD ensemble",
}


@pytest.fixture(autouse=True)
def default_budget(monkeypatch):
    monkeypatch.delenv("SHALLOWFLOW_WORK_BUDGET", raising=False)
    monkeypatch.delenv("SHALLOWFLOW_MEMORY_GB", raising=False)


def values(chapter: str, profile: str = "book") -> dict:
    out = chapters.defaults(chapter)
    if profile != "book":
        out.update(yaml.safe_load(chapters.profile_file(chapter, profile).read_text()) or {})
        out["profile"] = profile
    return out


def work(chapter: str, vals: dict) -> float:
    mod = chapters.module(chapter)
    P = params.validate(vals, mod.SCHEMA, mod.RULES)
    return sum(float(r.estimate(P)) for r in mod.RULES if r.kind == "work")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chapter_declares_work_and_memory(chapter):
    kinds = [r.kind for r in chapters.module(chapter).RULES]
    assert kinds.count("work") == 1 and "memory" in kinds
    assert callable(getattr(chapters.module(chapter), "work_estimate", None))


@pytest.mark.parametrize("chapter", CHAPTERS)
@pytest.mark.parametrize("profile", ["book", "smoke"])
def test_book_and_smoke_are_accepted_with_a_positive_finite_work(chapter, profile):
    w = work(chapter, values(chapter, profile))
    assert math.isfinite(w) and 0 < w < params.WORK_BUDGET / 100, w


def test_smoke_costs_no_more_than_book():
    for chapter in CHAPTERS:
        assert work(chapter, values(chapter, "smoke")) <= work(chapter, values(chapter, "book")) * 1.01, chapter


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_doubling_the_iterations_roughly_doubles_the_work(chapter):
    change, lowest = DOUBLE[chapter.split("/")[1]]
    book = values(chapter)
    twice = dict(book)
    for name, f in change.items():
        twice[name] = [x * f for x in book[name]] if isinstance(book[name], list) else type(book[name])(book[name] * f)
    ratio = work(chapter, twice) / work(chapter, book)
    assert lowest <= ratio <= 2.05, ratio


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_over_budget_is_refused_by_the_work_rule_in_one_line(chapter, tmp_path, monkeypatch):
    name = chapter.split("/")[1]
    monkeypatch.setenv("SHALLOWFLOW_MEMORY_GB", "4096")
    with pytest.raises(executor.ChapterError) as e:
        executor.prepare(chapter, "book", OVER[name], root=tmp_path)
    msg = str(e.value)
    assert "\n" not in msg and len(msg) < 600, msg
    assert "must fit the work budget" in msg and WHAT[name] in msg, msg
    assert not any(tmp_path.iterdir()), "nothing is written before validation"
    # the same values with the budget raised above their estimate are accepted (the work rule was the only refusal)
    monkeypatch.setenv("SHALLOWFLOW_WORK_BUDGET", "1e20")
    mod = chapters.module(chapter)
    params.validate({**values(chapter), **OVER[name]}, mod.SCHEMA, mod.RULES)


def test_remarks_r1_step_too_small_is_refused_not_run(monkeypatch):
    """R1's scalar illustration loops 1 / eta Python steps over a path of 1 / eta values: a tiny step was accepted
    and then ran out of memory or never ended; now its path is in the memory rule and its loop in the work rule."""
    chapter = "orthogonal-inputs/remarks"
    mod = chapters.module(chapter)
    for eta in (1e-12, 5e-324):
        with pytest.raises(params.ParameterError, match="must fit in") as e:
            params.validate({**values(chapter), "sigma_steps": [eta]}, mod.SCHEMA, mod.RULES)
        assert "'sigma_steps'" in str(e.value)
    monkeypatch.setenv("SHALLOWFLOW_MEMORY_GB", "1000000")  # a machine where the path fits: the loop is too long
    with pytest.raises(params.ParameterError, match="must fit the work budget") as e:
        params.validate({**values(chapter), "sigma_steps": [1e-12]}, mod.SCHEMA, mod.RULES)
    assert "'sigma_steps'" in str(e.value)


def test_the_book_estimate_is_the_measured_book_time():
    """``shallowflow run CHAPTER --estimate`` at book: a work ratio of 1, so the estimate is the measured book time."""
    from shallowflow.executor import estimate

    for chapter in CHAPTERS:
        e = estimate.estimate(chapter, "book")
        assert e.work is not None and e.memory is not None, chapter
        assert e.ratio == pytest.approx(1.0) and e.here and not e.refusal, chapter
