"""A chapter's checks: the source's value, the measured value, a criterion, a computed verdict, and
the registered cause of a failure with its evidence settled against the other checks of the chapter.

A chapter creates one :class:`Claims` book-keeper, records a :class:`Check` for each pass criterion,
shows the table, and calls :meth:`Claims.finish`, which

1. writes the checks to ``artifacts/claims/<profile>/<source>__<chapter>.json`` (the scorecard reads
   these files), and
2. compares every verdict with the committed registry ``verdicts/<source>.yml``: a verdict that differs,
   a check the registry does not know, a registered check that did not run, a registry that breaks its
   law (:func:`~shallowflow.verdicts.law.validate_registry`: a broken evidence link, say), or, at book
   scale, a registered cause whose evidence does not hold raises :class:`VerdictMismatch`, which fails the
   notebook and therefore the tests and the book build.

Evidence from trained runs is passed with ``valid=`` (one flag per run, see
:func:`shallowflow.engine.metrics.finite_runs`): a run whose loss or parameters are not finite never counts as
evidence; the check fails and names the invalid runs.  A check that no trained run stands behind (an
exact identity, a closed form, a draw at initialisation) says so with ``valid=NO_TRAINING``: every check of
every chapter passes ``valid=`` explicitly (``tests/test_valid_law.py``), so a check on trained runs that
forgot its flags is found by a test, not by a reader.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .causes import (EVIDENCE_CAUSES, PENDING, PROVED_CAUSES, SAME_MEASUREMENT, UNVERIFIED, VERIFIED, evidence_status, explain,
                     independent_of, render_why)
from .causes import target_verdict as _target_verdict
from .criteria import Criterion, _values, describe
from .law import validate_registry
from .registry import (COMPARED_PROFILES, FAIL, NOT_RUN, PASS, UNDECIDED, VerdictMismatch, chapter_of, claims_dir,
                       registry_view)


#: ``valid=NO_TRAINING``: the check rests on no trained run (exact computation, closed form, initial draw)
NO_TRAINING = None


def _short(items: list, limit: int = 8) -> str:
    head = ", ".join(str(i) for i in items[:limit])
    return head + (f", ... ({len(items)} in all)" if len(items) > limit else "")


@dataclass
class Check:
    id: str  # "<target>/<name>", e.g. "E1/final-loss"
    claim: str  # what the source claims, in words
    source_value: str  # the source's value (text, as the source gives it)
    measured: str  # the measured value, formatted
    values: list  # the measured values (one per run, or one)
    criterion: str
    verdict: str  # "pass" or "fail"
    expected: str | None = None  # the registry's verdict for this profile (None: not compared)
    note: str = ""
    cause: str = ""  # the registered cause of a failure (see causes.CAUSES)
    why: str = ""  # the registered why, filled from this run's records
    invalid: list = field(default_factory=list)  # runs excluded as evidence (non-finite loss or parameters)
    evidence: list = field(default_factory=list)  # the checks that prove the cause
    evidence_status: str = ""  # verified / pending (another chapter) / unverified ("" when not failing)
    evidence_reason: str = ""
    refutes: bool = False  # an erratum whose evidence shows the claim itself false
    runs: int | None = None  # the runs behind the check (the length of valid=); None for valid=NO_TRAINING
    in_scope: list = field(default_factory=list)  # a refutation's checks that its counterexample is in the source's scope
    decidable: str = ""  # "yes", "cannot pass" or "cannot fail" at this unit count ("" when outcomes= was not given)
    units: int | None = None  # the units (runs, cells, draws) whose best and worst outcomes were weighed
    kind: str = ""  # what ``measured`` shows: value, range (over runs), interval, interval end, values (criteria.describe)
    level: float | None = None  # an interval's level
    count: int | None = None  # the values behind it: runs of a range, an interval's n, the number of values
    method: str = ""  # an interval's method (t, Wilson, logit-t, ...)
    margin: float | None = None  # how far inside (+) or outside (-) the criterion, in its units; None: n/a
    margin_rel: float | None = None  # the margin over the criterion's scale (a bound's size, a band's width)
    margin_text: str = ""  # the margin in words ("0.033 inside", "n/a")

    @property
    def target(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.id.split("/", 1)[1]


def _fault_hold() -> None:
    """Fault injection for the tests: with ``SHALLOWFLOW_FAULT_HOLD=<path>`` a chapter, once it has started
    (its book-keeper exists), creates ``<path>`` and waits there until that file is removed.

    A test that interrupts a run (Ctrl-C, SIGTERM, a killed kernel) waits for the file instead of sleeping:
    the run is then provably inside the chapter and cannot finish before the fault arrives.
    """
    hold = os.environ.get("SHALLOWFLOW_FAULT_HOLD")
    if not hold:
        return
    import time

    marker = Path(hold)
    tmp = marker.with_name(marker.name + ".tmp")
    tmp.write_text(str(os.getpid()))
    tmp.replace(marker)  # the marker appears whole, with the kernel's pid in it
    while marker.exists():
        time.sleep(0.05)


@dataclass
class Claims:
    """Collects the checks of one chapter and settles them against the registry."""

    source: str  # e.g. "003"
    chapter: str  # the chapter's docname, e.g. "book/orthogonal-inputs/toy"
    profile: str = "book"
    checks: list[Check] = field(default_factory=list)
    sections: list | None = None  # the sections this run ran (a chapter's ``P.sections``), for the not-run rows
    sections_all: tuple | None = None  # every section of the chapter (its Sections spec's choices)

    def __post_init__(self):
        _fault_hold()

    def check(self, id: str, claim: str, measured: Any, criterion: Criterion, source_value: str = "",
              note: str = "", valid: Any = None, outcomes: tuple | None = None) -> Check:
        """Evaluate one pass criterion and record it (the verdict is computed here, never given).

        ``valid`` flags, run by run, the runs whose loss and parameters stayed finite
        (:func:`shallowflow.engine.metrics.finite_runs`).  When any run is invalid the check fails whatever
        the measured values say, and the record names the invalid runs: a diverged run is never
        evidence for a claim (nor against it).

        ``outcomes=(values, units)``: every value the measurement can take at this unit count (for a share,
        :func:`shallowflow.engine.metrics.share_outcomes`); the record says whether the check could pass and could fail
        at all, and a check registered to pass or fail that could not do the other is refused (:meth:`mismatches`):
        a criterion that no outcome of its units can decide decides nothing.
        """
        if "/" not in id:
            raise ValueError(f"check id must look like 'TARGET/name', got {id!r}")
        if any(c.id == id for c in self.checks):
            raise ValueError(f"check {id!r} recorded twice")
        invalid = [] if valid is None else [int(i) for i in np.flatnonzero(~(_values(valid) != 0))]
        values = [float(x) for x in _values(measured)]
        runs = None if valid is None else int(_values(valid).size)
        shown, kind = describe(measured, runs)  # a value, a range over runs, an interval (level, count), values
        ok = criterion(measured)
        margin, margin_rel, margin_text = criterion.margin(measured), criterion.relative_margin(measured), \
            criterion.margin_text(measured)
        if invalid:
            ok = False
            n = _values(valid).size
            shown = f"{len(invalid)} of {n} runs invalid (non-finite loss or parameters: runs {_short(invalid)}); " \
                    f"measured {shown}"
            margin, margin_rel, margin_text = None, None, "n/a (invalid runs)"
        decidable, units = "", None
        if outcomes is None and callable(getattr(measured, "share_outcomes", None)):
            outcomes = measured.share_outcomes()  # a share's interval end that carries its unit count
        if outcomes is not None:
            possible, units = outcomes
            units = int(units)
            verdicts = [criterion(v) for v in possible]
            decidable = "cannot pass" if not any(verdicts) else "cannot fail" if all(verdicts) else "yes"
        c = Check(id=id, claim=claim, source_value=source_value, measured=shown, values=values,
                  criterion=criterion.text, verdict=PASS if ok else FAIL, note=note, invalid=invalid, runs=runs,
                  decidable=decidable, units=units, kind=kind["kind"], level=kind["level"], count=kind["count"],
                  method=kind["method"], margin=margin, margin_rel=margin_rel, margin_text=margin_text)
        c.expected = self._expected(c)
        self.checks.append(c)
        return c

    def passed(self, id: str) -> bool:
        """Whether the check ``id`` ran and passed (for sentences generated from the verdicts)."""
        return self._find(id, strict=True).verdict == PASS

    def target_verdict(self, target: str) -> str:
        """The verdict of one target from the checks that ran here (see :func:`causes.target_verdict`)."""
        self.settle()
        return _target_verdict(self.checks_of(target), self._registry_targets().get(f"{self.source}:{target}", {}))

    def checks_of(self, target: str) -> list[Check]:
        return [c for c in self.checks if c.target == target]

    def _find(self, id: str, strict: bool = False) -> Check | None:
        for c in self.checks:
            if c.id == id:
                return c
        if strict:
            raise KeyError(f"check {id!r} has not run in this chapter")
        return None

    # -- registry ---------------------------------------------------------------------------
    def _registry_targets(self) -> dict:
        return registry_view().get("targets", {})  # read only

    def _registered(self, c: Check) -> dict:
        entry = self._registry_targets().get(f"{self.source}:{c.target}", {})
        return (entry.get("checks") or {}).get(c.name) or {}

    def _expected(self, c: Check) -> str | None:
        if self.profile not in COMPARED_PROFILES:
            return None
        return self._registered(c).get(self.profile, "missing")

    def settle(self) -> "Claims":
        """Attach each failing check's registered cause, its why filled from this run's checks, and
        whether its evidence holds here (idempotent: every table and the record call it)."""
        registry = registry_view()

        def elsewhere(ev: str) -> bool:
            other = chapter_of(registry, self.source, ev)
            return other is not None and other != self.chapter

        for c in self.checks:
            reg = self._registered(c)
            c.cause, c.evidence, c.refutes, c.in_scope = "", [], False, []
            c.why, c.evidence_status, c.evidence_reason = "", "", ""
            if c.verdict != FAIL:
                continue
            c.cause = str(reg.get("cause", ""))
            c.evidence = [str(e) for e in (reg.get("evidence") or [])]
            c.refutes = bool(reg.get("refutes", False))
            c.in_scope = [str(e) for e in (reg.get("in-scope") or [])] if c.refutes else []
            c.why = render_why(str(reg.get("why", "")), c, self._find)
            if c.cause in EVIDENCE_CAUSES or (c.cause in PROVED_CAUSES and c.evidence):
                c.evidence_status, c.evidence_reason = evidence_status(c.evidence + c.in_scope, self._find, elsewhere,
                                                                       values=independent_of(c))
        return self

    def mismatches(self) -> list[str]:
        """Every way in which this run disagrees with the registry (empty when it agrees)."""
        if self.profile not in COMPARED_PROFILES:
            return []
        self.settle()
        problems = [p for p in validate_registry(registry_view(), sources=(self.source,))
                    if self._concerns_this_chapter(p)]
        for c in self.checks:
            if c.expected == "missing":
                problems.append(f"{self.source}:{c.id} is not in verdicts/{self.source}.yml (measured {c.verdict}); add it there")
            elif c.expected not in (UNDECIDED, c.verdict):
                problems.append(f"{self.source}:{c.id}: verdict {c.verdict}, registry expects {c.expected} "
                                f"(measured {c.measured}, criterion {c.criterion})")
        for c in self.checks:
            if c.expected in (PASS, FAIL) and c.decidable in ("cannot pass", "cannot fail"):
                problems.append(f"{self.source}:{c.id} is registered {c.expected} at {self.profile} scale, but it "
                                f"{c.decidable} at its {c.units} units whatever they show (criterion {c.criterion}): "
                                "run more units there or register it undecided")
            if c.expected == NOT_RUN:
                problems.append(f"{self.source}:{c.id} ran at {self.profile} scale, but verdicts/{self.source}.yml "
                                f"registers it as not-run there (measured {c.verdict})")
            if c.expected == FAIL and c.verdict == FAIL and c.cause in PROVED_CAUSES and c.evidence \
                    and c.evidence_status == UNVERIFIED \
                    and (self.profile == "book" or SAME_MEASUREMENT in c.evidence_reason):
                problems.append(f"{self.source}:{c.id}: its registered cause {c.cause} is not proved: {c.evidence_reason}")
        ran = {c.id for c in self.checks}
        for key, entry in self._registry_targets().items():
            if not key.startswith(self.source + ":"):
                continue
            target = key.split(":", 1)[1]
            for name, verdicts in (entry.get("checks") or {}).items():
                chapter = (verdicts or {}).get("chapter", entry.get("chapter"))
                if (chapter == self.chapter and (verdicts or {}).get(self.profile, NOT_RUN) != NOT_RUN
                        and f"{target}/{name}" not in ran):
                    problems.append(f"{key}/{name} is registered for this chapter but was not checked")
        return problems

    def _concerns_this_chapter(self, problem: str) -> bool:
        """Registry-law problems of this chapter's checks, and broken evidence links anywhere in its source:
        typed numbers and missing evidence lists are the registry test's business, not a chapter's."""
        head = problem.split(" ", 1)[0].rstrip(":")
        ids = {f"{self.source}:{c.id}" for c in self.checks}
        structural = ("is not a registered check" in problem or "is registered" in problem
                      or "fails without a registered cause" in problem)
        return head in ids and structural

    def not_run(self) -> list[Check]:
        """For a run that is not compared with the registry (custom, paper): every check the registry holds for
        this chapter that did not run here, as a :class:`Check` with verdict ``not-run`` and no values (a skipped
        section, a parameter that turned a part off).  Empty for a compared profile (book, smoke), where a
        missing check is a mismatch (:meth:`mismatches`)."""
        if self.profile in COMPARED_PROFILES:
            return []
        ran = {c.id for c in self.checks}
        skipped = [s for s in (self.sections_all or ()) if s not in (self.sections or ())]
        note = (f"section skipped (this run ran {', '.join(self.sections)}; skipped {', '.join(skipped)})"
                if self.sections is not None and skipped else "not run in this run")
        out = []
        for key, entry in self._registry_targets().items():
            if not key.startswith(self.source + ":"):
                continue
            target = key.split(":", 1)[1]
            for name, verdicts in (entry.get("checks") or {}).items():
                verdicts = verdicts or {}
                cid = f"{target}/{name}"
                if verdicts.get("chapter", entry.get("chapter")) != self.chapter or cid in ran:
                    continue
                out.append(Check(id=cid, claim="", source_value="", measured="", values=[], criterion="",
                                 verdict=NOT_RUN, expected=None, note=note))
        return out

    # -- output -----------------------------------------------------------------------------
    def rows(self) -> list[dict]:
        self.settle()
        out = []
        for c in self.checks:
            compared = {None: "not compared (profile " + self.profile + ")", UNDECIDED: "undecided at this scale",
                        "missing": "NOT IN REGISTRY"}.get(c.expected, "as registered" if c.expected == c.verdict
                                                          else f"REGISTRY SAYS {c.expected}")
            out.append(dict(check=c.id, claim=c.claim, source=c.source_value, measured=c.measured,
                            criterion=c.criterion, margin=c.margin_text, verdict=c.verdict, registry=compared, why=explain(c),
                            note=c.note, source_key=self.source))
        for c in self.not_run():  # a custom or paper run: the chapter's registered checks that did not run
            out.append(dict(check=c.id, claim="", source="", measured="", criterion="", margin="", verdict=NOT_RUN,
                            registry="not compared (profile " + self.profile + ")", why="", note=c.note,
                            source_key=self.source))
        return out

    def report(self) -> str:
        """A plain-text verdict table (deterministic: nbval compares it on re-execution)."""
        lines = [f"{self.source} / {self.chapter} [{self.profile}]"]
        for r in self.rows():
            lines.append(f"  {r['verdict'].upper():4s}  {r['check']:<28s} measured {r['measured']}  "
                         f"(criterion {r['criterion']}; margin {r['margin'] or 'n/a'}; {r['registry']})")
            if r["why"]:
                lines.append(f"        why: {r['why']}")
            if r["note"]:
                lines.append(f"        note: {r['note']}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from .scorecard import verdict_table_html

        return verdict_table_html(self.rows())

    def save(self) -> Path:
        self.settle()
        path = claims_dir(self.profile) / f"{self.source}__{self.chapter.replace('/', '__')}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        try:
            tmp.write_text(json.dumps(dict(source=self.source, chapter=self.chapter, profile=self.profile,
                                           checks=[asdict(c) for c in self.checks],
                                           not_run=[asdict(c) for c in self.not_run()]), indent=1))
            tmp.replace(path)
        finally:
            tmp.unlink(missing_ok=True)
        return path

    def finish(self) -> "Claims":
        """Save the record, then fail loudly if it disagrees with the registry."""
        self.save()
        problems = self.mismatches()
        if problems:
            raise VerdictMismatch(f"verdicts differ from verdicts/{self.source}.yml:\n  - " + "\n  - ".join(problems))
        return self


__all__ = ["Check", "Claims", "PENDING", "VERIFIED", "UNVERIFIED"]
