"""What a re-run would cost, before it runs: ``shallowflow run CHAPTER ... --estimate``.

The parameters are validated exactly as ``shallowflow run`` validates them (:func:`shallowflow.executor.prepare`:
names, values, the rules, the dry plan); a refused combination is refused with the same one line.  The cost is
read from the chapter's own estimate rules (:class:`shallowflow.params.Rule` with ``kind`` ``"work"`` or
``"memory"``): the work units (:func:`shallowflow.params.gd_work`; several work rules add up) and the largest
memory estimate, at the asked parameters and at the book's.  The time is extrapolated from the book-scale time
measured on the 2-core CI machine (``params/timings.json``)::

    seconds = book seconds x (work at these parameters / work at the book's)

a ratio that counts every run to its step cap, so it is a rough figure: the measured paper runs
(``benchmarks/paper_scale.md``, "The extrapolation against the measured runs") came out at a fraction to a few
times of it, and :func:`spread` says by how much.  A combination refused only by a work or memory budget of this
machine still gets its estimate (it runs on a GPU or a cluster, or here with ``SHALLOWFLOW_WORK_BUDGET`` /
``SHALLOWFLOW_MEMORY_GB`` raised), with the refusal beside it; that combination's other rules are checked, not its
dry plan, which ``run`` does not reach either (the budgets come first), so the refusal is ``run``'s own line.
Nothing here starts a kernel or writes a file.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from .. import params as _params
from ..verdicts import paper as _paper
from ..verdicts import repo_root
from .common import ChapterError, SCORECARD, chapters, parameters, profile_values, resolve, schema
from .tasks import prepare

SPREAD_KEY = "extrapolation_spread"  # in benchmarks/paper_scale.json: {"low": measured/estimated, "high": ...}
SPREAD_DEFAULT = "good to about a factor of 3 either way (benchmarks/paper_scale.notes.md)"


@dataclass
class Estimate:
    """The cost of one run (``chapter`` with ``profile``'s values and the overrides) next to the book's."""

    chapter: str
    profile: str  # the run's profile value: book, smoke, paper or custom
    work: float | None  # work units at these parameters (None: the chapter declares no Rule.work)
    book_work: float | None
    memory: float | None  # bytes, the largest Rule.memory estimate (None: none declared)
    book_memory: float | None
    book_s: float | None  # measured book-scale seconds (params/timings.json), None when absent
    measured_s: float | None  # measured seconds of this very profile (book or smoke, no overrides), else None
    seconds: float | None  # extrapolated: book_s x work / book_work
    spread: str  # how far the extrapolation has been from measured runs
    here: bool  # whether every work and memory estimate fits this machine's limits
    where: str
    refusal: str = ""  # the one-line refusal of a budget (the run would not start here), else ""
    recorded: dict | None = None  # the paper profile's last successful recorded run (paper_scale.runs.jsonl)

    @property
    def ratio(self) -> float | None:
        if self.work is None or not self.book_work:
            return None
        return self.work / self.book_work


# ------------------------------------------------------------------------------------------------
# the pieces
# ------------------------------------------------------------------------------------------------
def costs(rules, P: SimpleNamespace) -> tuple[float | None, float | None]:
    """(work units, bytes) at ``P``: the sum of the ``Rule.work`` estimates, the largest ``Rule.memory`` one."""
    work = [float(r.estimate(P)) for r in rules if r.kind == "work"]
    mem = [float(r.estimate(P)) for r in rules if r.kind == "memory"]
    return (sum(work) if work else None), (max(mem) if mem else None)


def over(rules, P: SimpleNamespace) -> list[str]:
    """The kinds (``"work"``, ``"memory"``) whose estimate exceeds its rule's limit on this machine (as the rules
    test it); empty when the run fits here."""
    out = []
    for r in rules:
        if r.kind is not None and r.kind not in out and not float(r.estimate(P)) <= r.limit():
            out.append(r.kind)
    return out


def namespace(chapter: str, values: dict) -> SimpleNamespace:
    """The single values of ``values``, each checked against the chapter's schema (the rules are not)."""
    sch, _ = schema(chapter)
    return SimpleNamespace(**{n: _params.check(n, values[n], s) for n, s in (sch or {}).items() if n in values})


def book_values(chapter: str) -> dict:
    """Every parameter's book value (the parameters cell), as :func:`prepare` assembles them."""
    values = {n: d for n, (d, _) in parameters(chapter).items()}
    values.update(profile_values(chapter, "book"))
    return values


def measured(chapter: str, profile: str = "book", root: Path | None = None) -> float | None:
    """Seconds ``params/timings.json`` measured for the chapter at ``profile`` (book or smoke); None when absent."""
    path = Path(root or repo_root()) / "params" / "timings.json"
    try:
        s = json.loads(path.read_text()).get(profile, {}).get(chapter)
    except (OSError, ValueError, AttributeError):
        return None
    return float(s) if isinstance(s, (int, float)) else None


def spread(root: Path | None = None) -> str:
    """How far the extrapolation has been from measured runs: ``benchmarks/paper_scale.json``'s
    ``extrapolation_spread`` (``low``/``high``: measured over estimated) when it records one, else the notes'
    own wording."""
    path = Path(root or repo_root()) / "benchmarks" / "paper_scale.json"
    try:
        s = json.loads(path.read_text()).get(SPREAD_KEY) or {}
        low, high = float(s["low"]), float(s["high"])
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return SPREAD_DEFAULT
    return f"measured paper runs took {low:.2g}x to {high:.2g}x of their estimate (benchmarks/paper_scale.json)"


def _hours(s: float) -> str:
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


_BUDGET = {"work": "work budget, SHALLOWFLOW_WORK_BUDGET", "memory": "memory limit, SHALLOWFLOW_MEMORY_GB"}


def _where(too_big: list[str], work: float | None) -> str:
    if too_big:
        return f"a GPU or a cluster (over this machine's {' and '.join(_BUDGET[k] for k in too_big)})"
    limits = f"the memory limit {_params._bytes(_params.memory_limit())}"
    if work is None:
        return f"this machine (within {limits}; no work estimate)"
    return f"this machine (within the work budget {_params.work_limit():.3g} units and {limits})"


# ------------------------------------------------------------------------------------------------
# the estimate
# ------------------------------------------------------------------------------------------------
def estimate(chapter: str, profile: str = "book", overrides: dict | None = None) -> Estimate:
    """The cost of ``shallowflow run CHAPTER --profile PROFILE -p ...``, validated as that command validates
    (:func:`prepare`; a refusal raises its :class:`ChapterError`, unless only a work or memory budget of this
    machine refuses: then the estimate carries the refusal in ``refusal``).  Starts no kernel, writes nothing."""
    chapter = resolve(chapter)
    refusal = ""
    try:
        task = prepare(chapter, profile, overrides)
    except ChapterError as e:
        try:  # without the budgets, and without the dry plan, which the run never reaches: the budgets refuse
            # first, and the plan of a combination over them (10,000 widths) may cost far more than its refusal
            task = prepare(chapter, profile, overrides, budgets=False, plan=False)
        except ChapterError:
            raise e from None
        refusal = str(e)
    _, rules = schema(chapter)
    P, B = namespace(chapter, task.values), namespace(chapter, book_values(chapter))
    try:
        (work, mem), (book_work, book_mem) = costs(rules, P), costs(rules, B)
        too_big = over(rules, P)
    except _params.ParameterError as e:  # a bad SHALLOWFLOW_WORK_BUDGET / SHALLOWFLOW_MEMORY_GB
        raise ChapterError(str(e)) from None
    book_s = measured(chapter, "book")
    mine = {k: v for k, v in task.values.items() if k != "profile"}
    same = mine == {k: v for k, v in _jsonable(book_values(chapter)).items() if k != "profile"}
    seconds = None
    if book_s is not None and work is not None and book_work:
        seconds = book_s * work / book_work
    elif book_s is not None and same:
        seconds = book_s  # the book's own values: the measurement itself
    own = measured(chapter, task.profile) if task.profile in ("book", "smoke") else None
    recorded = _paper.runs().get(chapter) if task.profile == "paper" else None
    return Estimate(chapter=chapter, profile=task.profile, work=work, book_work=book_work, memory=mem,
                    book_memory=book_mem, book_s=book_s, measured_s=own, seconds=seconds, spread=spread(),
                    here=not too_big, where=_where(too_big, work), refusal=refusal, recorded=recorded)


def _jsonable(v):
    return json.loads(json.dumps(v))


def estimate_all(profile: str = "book") -> list[Estimate | str]:
    """:func:`estimate` of every chapter ``run --all`` executes (the scorecard is not a computation); a chapter
    refused for another reason than a budget gives its one-line refusal (a string) instead."""
    out: list[Estimate | str] = []
    for c in chapters():
        if c == SCORECARD:
            continue
        try:
            out.append(estimate(c, profile))
        except ChapterError as e:
            out.append(f"{c}: {e}" if not str(e).startswith(c) else str(e))
    return out


# ------------------------------------------------------------------------------------------------
# plain text
# ------------------------------------------------------------------------------------------------
def _units(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}"


def _gib(x: float | None) -> str:
    return "-" if x is None else _params._bytes(x)


def describe(e: Estimate) -> str:
    """A few lines: work and memory here and at book, the measured and the extrapolated time, its spread, where."""
    ratio = e.ratio
    work = (f"{_units(e.work)} units (book {_units(e.book_work)}, ratio {ratio:.3g})" if ratio is not None else
            f"{_units(e.work)} units (book {_units(e.book_work)})" if e.work is not None else
            "not estimated (the chapter declares no Rule.work)")
    lines = [f"estimate for {e.chapter} ({e.profile}); no kernel started",
             f"  work    {work}",
             f"  memory  {_gib(e.memory)} largest allocation (book {_gib(e.book_memory)})"]
    book = f"{e.book_s:.1f} s measured (params/timings.json)" if e.book_s is not None else \
        "not measured (no entry in params/timings.json)"
    lines.append(f"  book    {book}")
    if e.seconds is not None:
        how = "book time x work ratio" if ratio is not None else "the book's parameters: the measured time"
        lines.append(f"  time    about {_hours(e.seconds)} on the 2-core CI machine, unloaded ({how})")
        if ratio is not None and ratio != 1:  # an extrapolation, not the measurement itself
            lines.append(f"  caveat  {e.spread}")
    else:
        lines.append("  time    no extrapolation (" + ("no book time measured" if e.book_s is None else
                                                         "no work estimate") + ")")
    if e.measured_s is not None and e.profile != "book":
        lines.append(f"  {e.profile:7s} {e.measured_s:.1f} s measured for this profile (params/timings.json)")
    r = e.recorded
    if r:
        def num(k, fmt):
            return format(r[k], fmt) if isinstance(r.get(k), (int, float)) else "?"
        lines.append(f"  ran     the paper run of {str(r.get('started', '?'))[:10]} (code "
                     f"{str(r.get('commit', '?')).split(' ')[0]}): {num('wall_s', '.0f')} s executed at nice 19 on a "
                     f"shared machine, {num('cpu_s', '.0f')} CPU-s, peak {num('peak_rss_gb', '.2f')} GiB resident "
                     "(benchmarks/paper_scale.runs.jsonl)")
    lines.append(f"  where   {e.where}")
    return "\n".join(lines)


ROW = "{:44s} {:>9s} {:>9s} {:>9s} {:>10s}  {}"


def header() -> str:
    return ROW.format("chapter", "book s", "work x", "memory", "estimate", "where")


def row(e: Estimate | str) -> str:
    """One line of ``run --all --estimate``'s table (a refused chapter: its refusal)."""
    if isinstance(e, str):
        return f"{e.split(':', 1)[0]:44s} refused: {' '.join(e.split(':', 1)[-1].split())}"
    where = "here" if e.here else "a GPU or a cluster"
    return ROW.format(e.chapter, "-" if e.book_s is None else f"{e.book_s:.1f}",
                      "-" if e.ratio is None else f"{e.ratio:.3g}", _gib(e.memory),
                      "-" if e.seconds is None else _hours(e.seconds), where)
