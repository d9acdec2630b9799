"""The source's scale where this machine cannot go: one command for a GPU and one for a Dask cluster (issue 39,
item 4), with the figures they rest on.

Three paper runs are refused here by their own rules: early-alignment/staircase at the authors' width 200,000 and
balboni-thesis/adler at the thesis's Table 7.1 (the work budget), balboni-thesis/pl-training at depth 9, the thesis's
second job of Experiment 6-B (the memory limit; its depth-6 paper profile runs here).  Each :class:`Recipe` gives the
same chapter run with the machine described on its command line (``--device``, ``--work-budget``, ``--memory-gb``:
:mod:`shallowflow.run.cli`), which the task carries into the chapter's kernel wherever it runs, so the worker of a
``--scheduler`` validates with the budgets the command names, not with its own environment's.

Every figure is computed, never typed: the work units are the chapter's ``Rule.work`` estimates and the memory its
largest ``Rule.memory`` one, at the recipe's values (:func:`shallowflow.executor.estimate.estimate`, which validates
them as ``run`` does, without this machine's budgets); the budgets the command names are those figures rounded up
(two significant digits of work units, whole GiB); the CPU time is the estimate's extrapolation (book time measured on
the 2-core CI machine x the work ratio) with its measured spread.  What a cluster gives: a chapter run is one task, one
kernel (its runs are one ensemble, or a loop of cells that the chapter resumes from its checkpoints), so N workers run
it on one of them and do not divide its time; they divide ``run --all --profile paper``'s.  What a GPU gives: no run of
these chapters on a GPU has been recorded, so no GPU time is stated; a chapter whose experiment module places its
tensors on the CPU (:attr:`Recipe.device` False) is not sped up by one at all.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .common import ChapterError

SCHEDULER = "tcp://SCHEDULER:8786"  # the placeholder the cluster command shows: the reader's scheduler address


@dataclass(frozen=True)
class Recipe:
    """The source's scale of one chapter, beyond this machine: the paper profile and ``overrides``."""

    chapter: str
    overrides: dict = field(default_factory=dict)  # values beyond the paper profile (pl-training: depth 9)
    device: bool = False  # whether the chapter computes on its kernel's device (SHALLOWFLOW_DEVICE); tested
    what: str = ""  # what the run is, in a few words


RECIPES = {r.chapter: r for r in (
    Recipe("early-alignment/staircase", {}, False,
           "the authors' run: width 200,000, 2,000,000 iterations, ten seeds and the half-step run"),
    Recipe("balboni-thesis/adler", {}, False,
           "every Table 7.1 cell on three data sets, five seeds, 30 epochs"),
    Recipe("balboni-thesis/pl-training", {"depth": 9}, True,
           "Experiment 6-B's second job: depth 9 at width 500 (the paper profile, depth 6, runs here)"),
)}


def _up(x: float, digits: int = 2) -> float:
    """``x`` rounded up to ``digits`` significant digits (a budget never below the estimate)."""
    if x <= 0:
        return x
    scale = 10 ** (math.floor(math.log10(x)) - digits + 1)
    return math.ceil(x / scale - 1e-9) * scale


def _g(x: float) -> str:
    return f"{x:.2g}" if x >= 1000 else f"{x:g}"


@dataclass
class Plan:
    """A recipe's commands and the figures behind them."""

    recipe: Recipe
    work: float | None  # work units at the recipe's values
    memory: float | None  # bytes, the largest allocation
    seconds: float | None  # the CPU extrapolation on the 2-core CI machine
    book_s: float | None
    ratio: float | None
    spread: str
    refusal: str  # this machine's one-line refusal of the run ("" when it fits here after all)
    where: str  # the estimate's "where": which of this machine's budgets the run is over
    work_budget: float | None
    memory_gb: float | None

    def _base(self) -> list[str]:
        from .. import params as _params

        parts = [f"shallowflow run {self.recipe.chapter} --profile paper"]
        parts += [f"-p {n} {v!r}" for n, v in self.recipe.overrides.items()]
        if self.work_budget is not None and self.work is not None and self.work > _params.WORK_BUDGET:
            parts.append(f"--work-budget {_g(self.work_budget)}")  # above the default budget of any machine
        if self.memory_gb is not None:
            parts.append(f"--memory-gb {self.memory_gb:g}")  # the default is half the machine's memory
        return parts

    @property
    def gpu(self) -> str:
        """The command on a GPU machine (``--device cuda`` where the chapter computes on its device)."""
        return " ".join(self._base() + (["--device cuda"] if self.recipe.device else []))

    @property
    def cluster(self) -> str:
        """The command sending the run to a running Dask scheduler (one worker with these resources runs it)."""
        return " ".join(self._base() + [f"--scheduler {SCHEDULER}"])

    def commands(self) -> list[str]:
        return [self.gpu, self.cluster]


def plan(chapter: str) -> Plan:
    """The recipe of ``chapter`` with its figures (:class:`ChapterError` when it has none, or when its values are
    refused for another reason than this machine's budgets)."""
    from . import estimate as E

    r = RECIPES.get(chapter)
    if r is None:
        raise ChapterError(f"{chapter} has no recipe for a GPU or a cluster (it runs here: --profile paper)")
    est = E.estimate(chapter, "paper", dict(r.overrides))
    gib = None if est.memory is None else max(1, math.ceil(est.memory / 2 ** 30 - 1e-9))
    return Plan(recipe=r, work=est.work, memory=est.memory, seconds=est.seconds, book_s=est.book_s,
                ratio=est.ratio, spread=est.spread, refusal=est.refusal, where=est.where,
                work_budget=None if est.work is None else _up(est.work), memory_gb=gib)


def _hours(s: float) -> str:
    from .estimate import _hours as h

    return h(s)


def describe(p: Plan) -> list[str]:
    """The figures, one sentence each, saying how each is derived."""
    from .. import params as _params

    out = [f"What: {p.recipe.what}."]
    if p.recipe.overrides:
        given = ", ".join(f"{n} = {v!r}" for n, v in p.recipe.overrides.items())
        out.append(f"Beyond the paper profile ({given}), the run is custom: its verdicts are shown, not compared with "
                   "the registry's paper entries.")
    if p.refusal:
        over = p.where[p.where.find("(") + 1:p.where.rfind(")")] if "(" in p.where else p.where
        out.append(f"Refused here: {over} (the run's own one-line refusal, before any kernel).")
    if p.work is not None:
        flag = (f"hence --work-budget {_g(p.work_budget)} (rounded up)" if p.work > _params.WORK_BUDGET else
                "within the default budget")
        out.append(f"Work: {p.work:.3g} units (the chapter's Rule.work at these values), {flag}; the default "
                   f"budget is {_params.WORK_BUDGET:.3g}, about a day of the 2-core machine.")
    if p.memory is not None:
        out.append(f"Memory: {_params._bytes(p.memory)} largest allocation (the chapter's Rule.memory), hence "
                   f"--memory-gb {p.memory_gb:g} (rounded up).")
    if p.seconds is not None:
        out.append(f"CPU: about {_hours(p.seconds)} on one kernel of the 2-core CI machine (book time "
                   f"{p.book_s:.1f} s measured x work ratio {p.ratio:.3g}); {p.spread}.")
    out.append("A cluster: the run is one task in one kernel, so it needs one worker with that memory, and N workers "
               "do not shorten it (they run N chapters of run --all --profile paper at once); its time is the CPU "
               "figure at that worker's speed.")
    if p.recipe.device:
        out.append("A GPU: the chapter computes on its kernel's device (--device cuda); no GPU run of it is "
                   "recorded, so no GPU time is stated.")
    else:
        out.append("A GPU: this chapter places its data and networks on the CPU, so a GPU does not speed it up: "
                   "the GPU machine runs it on one of its CPU cores, as a cluster's worker would (no --device).")
    return out
