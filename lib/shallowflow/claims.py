"""Claim checks: the source's value, the measured value, a criterion, and a verdict.

A chapter creates one :class:`Claims` book-keeper, records a :class:`Check` for each pass criterion
of the spec, shows the table, and calls :meth:`Claims.finish`, which

1. writes the checks to ``artifacts/claims/<profile>/<source>__<chapter>.json`` (the scorecard page
   reads these files), and
2. compares every verdict with the committed registry ``verdicts/<source>.yml``.  A verdict that differs
   from the registry (a regression, or a newly reproduced target nobody has acknowledged), a check
   the registry does not know, or a registered check that did not run raises
   :class:`VerdictMismatch`, which fails the notebook and therefore the tests and the book build.

The registry holds the verdict expected at book scale (``book``) and at smoke scale (``smoke``);
``undecided`` marks a check that the smoke scale is too small to decide: it is still computed and
shown, and the table says explicitly that it was not compared.  Other profiles (``paper``,
``custom``) are reported, not compared.

Every check the registry expects to fail carries a registered *cause* (:data:`CAUSES`: ``erratum``,
``convention``, ``method`` or ``not-reproduced``) and a ``why`` with the evidence; the chapter's
table shows them beside the check, the errata page is generated from the ``erratum`` and
``convention`` causes, and a failing check without a cause fails the chapter.

Evidence from trained runs is passed with ``valid=`` (one flag per run, see
:func:`shallowflow.metrics.finite_runs`): a run whose loss or parameters are not finite never
counts as evidence; the check fails and names the invalid runs.
"""
from __future__ import annotations

import copy
import functools
import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import yaml

PASS, FAIL, UNDECIDED = "pass", "fail", "undecided"
NOT_RUN = "not-run"  # registry only: the check is not computed at this scale (e.g. book-only timings)
COMPARED_PROFILES = ("book", "smoke")
# why a check is expected to fail: the source is wrong / an unstated choice of the source / an effect of the
# book's own computation (finite step, finite scale, discretisation, reduced scale) / cause unknown / the
# specification the book was planned from asks for something the source does not claim
CAUSES = {
    "erratum": "the source is wrong",
    "convention": "an unstated convention of the source",
    "method": "an effect of this book's computation (finite step, scale or budget)",
    "not-reproduced": "not reproduced, cause unknown",
    "spec": "the reproduction specification's criterion, which is not the source's claim",
}
SOURCE_CAUSES = ("erratum", "convention")  # failures that are the source's, not the book's
# target verdicts, in the order the scorecard counts them
TARGET_VERDICTS = ("reproduced", "reproduced, source erratum shown", "partly", "not reproduced", "illustration",
                   "not run at this scale", "not attempted", "not run")


def repo_root() -> Path:
    """The book's root: SHALLOWFLOW_ROOT, else the checkout this package is installed from."""
    env = os.environ.get("SHALLOWFLOW_ROOT")
    return Path(env) if env else Path(__file__).resolve().parents[2]


def registry_dir() -> Path:
    return repo_root() / "verdicts"


def claims_dir(profile: str) -> Path:
    env = os.environ.get("SHALLOWFLOW_CLAIMS_DIR")
    return (Path(env) if env else repo_root() / "artifacts" / "claims") / profile


class VerdictMismatch(AssertionError):
    """A run's verdicts differ from the committed registry."""


# ----------------------------------------------------------------------------------------------
# criteria
# ----------------------------------------------------------------------------------------------
def _values(measured) -> np.ndarray:
    try:
        import torch

        if isinstance(measured, torch.Tensor):
            measured = measured.detach().cpu().numpy()
    except ImportError:  # pragma: no cover
        pass
    return np.atleast_1d(np.asarray(measured, dtype=float))


@dataclass(frozen=True)
class Criterion:
    """A pass criterion: a text for the reader and a test applied to every measured value."""

    text: str
    test: Callable[[np.ndarray], np.ndarray]

    def __call__(self, measured) -> bool:
        v = _values(measured)
        return bool(v.size > 0 and np.all(np.isfinite(v)) and np.all(self.test(v)))


def below(bound: float, strict: bool = True) -> Criterion:
    return Criterion(f"{'<' if strict else '<='} {fmt(bound)}", (lambda v: v < bound) if strict else (lambda v: v <= bound))


def above(bound: float, strict: bool = False) -> Criterion:
    return Criterion(f"{'>' if strict else '>='} {fmt(bound)}", (lambda v: v > bound) if strict else (lambda v: v >= bound))


def within(lo: float, hi: float) -> Criterion:
    return Criterion(f"in [{fmt(lo)}, {fmt(hi)}]", lambda v: (v >= lo) & (v <= hi))


def close_to(value: float, rtol: float | None = None, atol: float | None = None) -> Criterion:
    if (rtol is None) == (atol is None):
        raise ValueError("give exactly one of rtol and atol")
    if rtol is not None:
        return Criterion(f"within {fmt(rtol)} (relative) of {fmt(value)}", lambda v: np.abs(v - value) <= rtol * abs(value))
    return Criterion(f"within {fmt(atol)} of {fmt(value)}", lambda v: np.abs(v - value) <= atol)


def is_true(text: str = "holds") -> Criterion:
    return Criterion(text, lambda v: v != 0)


# ----------------------------------------------------------------------------------------------
# formatting
# ----------------------------------------------------------------------------------------------
def fmt(x) -> str:
    """Short, deterministic text for a number or an ensemble of numbers."""
    if isinstance(x, str):
        return x
    v = _values(x)
    if v.size == 1:
        return _fmt1(float(v[0]))
    if np.all(v == v[0]):
        return f"{_fmt1(float(v[0]))} (all {v.size})"
    return f"{_fmt1(float(np.min(v)))} .. {_fmt1(float(np.max(v)))} ({v.size} runs)"


def _fmt1(x: float) -> str:
    if math.isnan(x) or math.isinf(x):
        return str(x)
    if x == int(x) and abs(x) < 1e7:
        return str(int(x))
    return f"{x:.7g}"


# ----------------------------------------------------------------------------------------------
# checks and the book-keeper
# ----------------------------------------------------------------------------------------------
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
    cause: str = ""  # the registered cause of an expected failure (see CAUSES)
    why: str = ""  # the registered evidence for that cause
    invalid: list = field(default_factory=list)  # runs excluded as evidence (non-finite loss or parameters)

    @property
    def target(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.id.split("/", 1)[1]


@dataclass
class Claims:
    """Collects the checks of one chapter and settles them against the registry."""

    source: str  # e.g. "003"
    chapter: str  # the chapter's docname, e.g. "book/orthogonal-inputs/toy"
    profile: str = "book"
    checks: list[Check] = field(default_factory=list)

    def __post_init__(self):
        _fault_hold()

    def check(self, id: str, claim: str, measured: Any, criterion: Criterion, source_value: str = "",
              note: str = "", valid: Any = None) -> Check:
        """Evaluate one pass criterion and record it (the verdict is computed here, never given).

        ``valid`` flags, run by run, the runs whose loss and parameters stayed finite
        (:func:`shallowflow.metrics.finite_runs`).  When any run is invalid the check fails whatever
        the measured values say, and the record names the invalid runs: a diverged run is never
        evidence for a claim (nor against it).
        """
        if "/" not in id:
            raise ValueError(f"check id must look like 'TARGET/name', got {id!r}")
        if any(c.id == id for c in self.checks):
            raise ValueError(f"check {id!r} recorded twice")
        invalid = [] if valid is None else [int(i) for i in np.flatnonzero(~(_values(valid) != 0))]
        values = [float(x) for x in _values(measured)]
        shown = fmt(measured)
        ok = criterion(measured)
        if invalid:
            ok = False
            n = _values(valid).size
            shown = f"{len(invalid)} of {n} runs invalid (non-finite loss or parameters: runs {_short(invalid)}); " \
                    f"measured {shown}"
        c = Check(id=id, claim=claim, source_value=source_value, measured=shown, values=values,
                  criterion=criterion.text, verdict=PASS if ok else FAIL, note=note, invalid=invalid)
        c.expected = self._expected(c)
        c.cause, c.why = self._cause(c)
        self.checks.append(c)
        return c

    def passed(self, id: str) -> bool:
        """Whether the check ``id`` ran and passed (for sentences generated from the verdicts)."""
        for c in self.checks:
            if c.id == id:
                return c.verdict == PASS
        raise KeyError(f"check {id!r} has not run in this chapter")

    def target_verdict(self, target: str) -> str:
        """The verdict of one target from the checks that ran here (see :func:`target_verdict`)."""
        return target_verdict(self.checks_of(target), self._registry_targets().get(f"{self.source}:{target}", {}))

    def checks_of(self, target: str) -> list["Check"]:
        return [c for c in self.checks if c.target == target]

    # -- registry ---------------------------------------------------------------------------
    def _registry_targets(self) -> dict:
        return load_registry().get("targets", {})

    def _registered(self, c: Check) -> dict:
        entry = self._registry_targets().get(f"{self.source}:{c.target}", {})
        return (entry.get("checks") or {}).get(c.name) or {}

    def _expected(self, c: Check) -> str | None:
        if self.profile not in COMPARED_PROFILES:
            return None
        return self._registered(c).get(self.profile, "missing")

    def _cause(self, c: Check) -> tuple[str, str]:
        reg = self._registered(c)
        return str(reg.get("cause", "")), str(reg.get("why", ""))

    def mismatches(self) -> list[str]:
        """Every way in which this run disagrees with the registry (empty when it agrees)."""
        if self.profile not in COMPARED_PROFILES:
            return []
        problems = []
        for c in self.checks:
            if c.expected == "missing":
                problems.append(f"{self.source}:{c.id} is not in verdicts/{self.source}.yml (measured {c.verdict}); add it there")
            elif c.expected not in (UNDECIDED, c.verdict):
                problems.append(f"{self.source}:{c.id}: verdict {c.verdict}, registry expects {c.expected} "
                                f"(measured {c.measured}, criterion {c.criterion})")
        for c in self.checks:
            if c.expected == NOT_RUN:
                problems.append(f"{self.source}:{c.id} ran at {self.profile} scale, but verdicts/{self.source}.yml "
                                f"registers it as not-run there (measured {c.verdict})")
            if c.expected == FAIL:
                if c.cause not in CAUSES or not c.why.strip():
                    problems.append(f"{self.source}:{c.id} fails without a registered cause: give it `cause:` "
                                    f"({', '.join(CAUSES)}) and `why:` in verdicts/{self.source}.yml")
        ran = {c.id for c in self.checks}
        for key, entry in self._registry_targets().items():
            if not key.startswith(self.source + ":"):
                continue
            target = key.split(":", 1)[1]
            for name, verdicts in (entry.get("checks") or {}).items():
                chapter = verdicts.get("chapter", entry.get("chapter"))
                if (chapter == self.chapter and verdicts.get(self.profile, NOT_RUN) != NOT_RUN
                        and f"{target}/{name}" not in ran):
                    problems.append(f"{key}/{name} is registered for this chapter but was not checked")
        return problems

    # -- output -----------------------------------------------------------------------------
    def rows(self) -> list[dict]:
        out = []
        for c in self.checks:
            compared = {None: "not compared (profile " + self.profile + ")", UNDECIDED: "undecided at this scale",
                        "missing": "NOT IN REGISTRY"}.get(c.expected, "as registered" if c.expected == c.verdict
                                                          else f"REGISTRY SAYS {c.expected}")
            out.append(dict(check=c.id, claim=c.claim, source=c.source_value, measured=c.measured,
                            criterion=c.criterion, verdict=c.verdict, registry=compared, why=explain(c)))
        return out

    def report(self) -> str:
        """A plain-text verdict table (deterministic: nbval compares it on re-execution)."""
        lines = [f"{self.source} / {self.chapter} [{self.profile}]"]
        for r in self.rows():
            lines.append(f"  {r['verdict'].upper():4s}  {r['check']:<28s} measured {r['measured']}  "
                         f"(criterion {r['criterion']}; {r['registry']})")
            if r["why"]:
                lines.append(f"        why: {r['why']}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return verdict_table_html(self.rows())

    def save(self) -> Path:
        path = claims_dir(self.profile) / f"{self.source}__{self.chapter.replace('/', '__')}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(dict(source=self.source, chapter=self.chapter, profile=self.profile,
                                       checks=[asdict(c) for c in self.checks]), indent=1))
        tmp.replace(path)
        return path

    def finish(self) -> "Claims":
        """Save the record, then fail loudly if it disagrees with the registry."""
        self.save()
        problems = self.mismatches()
        if problems:
            raise VerdictMismatch(f"verdicts differ from verdicts/{self.source}.yml:\n  - " + "\n  - ".join(problems))
        return self


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


def load_registry(directory: Path | None = None) -> dict:
    """The registry as {"sources": {key: meta}, "targets": {"<source>:<target>": entry}}.

    One file per source, ``verdicts/<source>.yml`` with keys ``source`` and ``targets``.  Parsed files
    are cached by path, modification time and size (a chapter consults the registry once per check),
    and every call returns a fresh copy, so an edit to a file is seen at the next call.
    """
    paths = sorted((directory or registry_dir()).glob("*.yml"))
    stamp = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in paths)
    return copy.deepcopy(_parse_registry(stamp))


@functools.lru_cache(maxsize=8)
def _parse_registry(stamp: tuple) -> dict:
    sources, targets = {}, {}
    for path, _, _ in stamp:
        path = Path(path)
        doc = yaml.safe_load(path.read_text()) or {}
        key = path.stem
        sources[key] = doc.get("source") or {}
        for target, entry in (doc.get("targets") or {}).items():
            targets[f"{key}:{target}"] = entry or {}
    return {"sources": sources, "targets": targets}


def load_records(profile: str = "book") -> list[dict]:
    d = claims_dir(profile)
    return [json.loads(p.read_text()) for p in sorted(d.glob("*.json"))] if d.exists() else []


def _short(items: list, limit: int = 8) -> str:
    head = ", ".join(str(i) for i in items[:limit])
    return head + (f", ... ({len(items)} in all)" if len(items) > limit else "")


def _get(c, key: str, default=""):
    return getattr(c, key, default) if not isinstance(c, dict) else c.get(key, default)


def explain(c) -> str:
    """The registered cause of a failing check, for the reader ("" for a passing one)."""
    if _get(c, "verdict") != FAIL:
        return ""
    cause, why = _get(c, "cause"), _get(c, "why")
    if cause:
        return f"{cause}: {why}" if why else cause
    expected = _get(c, "expected", None)
    if expected == UNDECIDED:
        return "the registry leaves this check undecided at this scale (too small to decide)"
    if expected is None:
        return "not compared with the registry (a paper or custom run): no cause registered for this outcome"
    return "no registered cause (unexpected failure)"


def target_verdict(checks: list, entry: dict | None = None) -> str:
    """A target's verdict from its checks (verdict strings, :class:`Check` objects or their records).

    - *illustration*: the registry says there is nothing to compute (``illustration:``);
    - *not attempted*: no check ran;
    - *reproduced*: every check passed;
    - *reproduced, source erratum shown*: every failing check is registered as an ``erratum`` or a
      ``convention`` of the source (what fails is the source's text, and the chapter shows it);
    - *not reproduced*: no check passed; *partly*: the rest.
    """
    entry = entry or {}
    if entry.get("illustration") and not checks:
        return "illustration"
    if not checks:
        return "not attempted"
    verdicts = [c if isinstance(c, str) else _get(c, "verdict") for c in checks]
    failing = [c for c, v in zip(checks, verdicts) if v != PASS]
    if not failing:
        return "reproduced"
    if all(not isinstance(c, str) and _get(c, "cause") in SOURCE_CAUSES for c in failing):
        return "reproduced, source erratum shown"
    return "not reproduced" if len(failing) == len(checks) else "partly"


VERDICT_COLOURS = {"pass": "#1a7f37", "fail": "#cf222e", "reproduced": "#1a7f37",
                   "reproduced, source erratum shown": "#1f6feb", "partly": "#9a6700",
                   "not reproduced": "#cf222e", "illustration": "#6e7781", "not attempted": "#6e7781",
                   "not run at this scale": "#6e7781",
                   "not run": "#cf222e"}


def badge(verdict: str) -> str:
    colour = VERDICT_COLOURS.get(verdict, "#6e7781")
    return f'<span class="sf-verdict" style="color:{colour};font-weight:600">{verdict}</span>'


def verdict_table_html(rows: list[dict]) -> str:
    """A chapter's checks; the cause of each failing check sits beside it."""
    import html

    cols = ["check", "claim", "source", "measured", "criterion", "verdict", "why", "registry"]
    head = "".join(f"<th>{c}</th>" for c in cols)
    body = "".join("<tr>" + "".join(
        f"<td>{badge(r[c]) if c == 'verdict' else html.escape(str(r.get(c, '')))}</td>" for c in cols) + "</tr>"
        for r in rows)
    return f'<table class="sf-claims"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def scorecard(profile: str = "book") -> list[dict]:
    """One row per registered target: source, id, title, chapter, verdict and its checks."""
    reg = load_registry()
    recorded = {}
    for rec in load_records(profile):
        for c in rec["checks"]:
            recorded.setdefault(f"{rec['source']}:{c['id'].split('/', 1)[0]}", []).append(c)
    rows = []
    for key, entry in reg.get("targets", {}).items():
        source, target = key.split(":", 1)
        checks = recorded.get(key, [])
        scale = profile if profile in COMPARED_PROFILES else "book"  # paper and custom runs: the book's checks
        registered = {n: v for n, v in (entry.get("checks") or {}).items() if (v or {}).get(scale) != NOT_RUN}
        if entry.get("checks") and not registered and not checks:
            verdict = "not run at this scale"  # every check is registered `not-run` at this profile
        elif registered and not checks:
            verdict = "not run"
        else:
            verdict = target_verdict(checks, entry)
        rows.append(dict(source=source, target=target, title=entry.get("title", ""), chapter=entry.get("chapter"),
                         function=entry.get("function"),
                         verdict=verdict, checks=checks, n_pass=sum(c["verdict"] == PASS for c in checks),
                         note=entry.get("note", "") or entry.get("illustration", "")))
    return rows


SCORECARD_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "shallowflow scorecard",
    "description": "Every reproduction target of every source with the verdict reached in one build.",
    "type": "object",
    "required": ["profile", "package_version", "sources", "targets"],
    "properties": {
        "profile": {"enum": ["book", "smoke", "paper", "custom"], "description": "the scale the build ran at"},
        "package_version": {"type": "string"},
        "sources": {"type": "object", "description": "per source key: seed file, title and counts per verdict",
                    "additionalProperties": {
                        "type": "object", "required": ["seed", "title", "counts"],
                        "properties": {"seed": {"type": "string"}, "title": {"type": "string"},
                                       "counts": {"type": "object",
                                                  "additionalProperties": {"type": "integer", "minimum": 0}}}}},
        "targets": {"type": "array", "items": {
            "type": "object",
            "required": ["source", "target", "title", "verdict", "chapter", "function", "checks"],
            "properties": {
                "source": {"type": "string"}, "target": {"type": "string"}, "title": {"type": "string"},
                "verdict": {"enum": list(TARGET_VERDICTS)},
                "chapter": {"type": ["string", "null"], "description": "docname of the chapter that checks it"},
                "function": {"type": ["string", "null"], "description": "dotted name of the function computing it"},
                "note": {"type": "string"},
                "checks": {"type": "array", "items": {
                    "type": "object",
                    "required": ["id", "claim", "source_value", "measured", "criterion", "verdict", "cause", "why"],
                    "properties": {
                        "id": {"type": "string"}, "claim": {"type": "string"}, "source_value": {"type": "string"},
                        "measured": {"type": "string"}, "values": {"type": "array", "items": {"type": "number"}},
                        "criterion": {"type": "string"}, "verdict": {"enum": [PASS, FAIL]},
                        "cause": {"enum": [""] + list(CAUSES)}, "why": {"type": "string"},
                        "invalid": {"type": "array", "items": {"type": "integer"}}}}}}}},
    },
}


def verdict_counts(rows: list[dict]) -> dict:
    counts = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    return {v: counts[v] for v in TARGET_VERDICTS if v in counts}


def scorecard_json(rows: list[dict], registry: dict, profile: str) -> dict:
    """The scorecard as data (schema: :data:`SCORECARD_SCHEMA`); written to the built site."""
    from . import __version__

    def num(x):
        return x if math.isfinite(x) else None

    sources = {key: dict(seed=(meta or {}).get("seed", ""), title=(meta or {}).get("title", ""),
                         counts=verdict_counts([r for r in rows if r["source"] == key]))
               for key, meta in sorted(registry.get("sources", {}).items())}
    keep = ("id", "claim", "source_value", "measured", "values", "criterion", "verdict", "cause", "why", "invalid")
    targets = [dict(source=r["source"], target=r["target"], title=r["title"], verdict=r["verdict"],
                    chapter=r["chapter"], function=r["function"], note=r.get("note", "") or "",
                    checks=[{k: ([num(v) for v in c.get(k, [])] if k == "values" else
                                 c.get(k, [] if k == "invalid" else "")) for k in keep} for c in r["checks"]])
               for r in rows]
    for t in targets:  # JSON has no NaN: non-finite measured values are null
        for c in t["checks"]:
            c["values"] = [v for v in c["values"] if v is not None]
    return dict(profile=profile, package_version=__version__, sources=sources, targets=targets)


def write_scorecard_json(rows: list[dict], registry: dict, profile: str) -> Path:
    """``artifacts/scorecard/<profile>.json``; the Sphinx extension copies it to ``_build/html/scorecard.json``."""
    path = repo_root() / "artifacts" / "scorecard" / f"{profile}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(scorecard_json(rows, registry, profile), indent=1, allow_nan=False))
    tmp.replace(path)
    return path


def errata(registry: dict | None = None) -> list[dict]:
    """Every check registered as failing because of the source (``erratum``/``convention``), by source."""
    reg = registry or load_registry()
    out = []
    for key, entry in reg.get("targets", {}).items():
        source, target = key.split(":", 1)
        for name, c in (entry.get("checks") or {}).items():
            if (c or {}).get("cause") in SOURCE_CAUSES:
                out.append(dict(source=source, target=target, check=name, title=entry.get("title", ""),
                                cause=c["cause"], why=c.get("why", ""),
                                chapter=c.get("chapter", entry.get("chapter"))))
    return out


def _chapter_link(docname: str | None, here: str = "book") -> str:
    import html
    import posixpath

    if not docname:
        return ""
    href = posixpath.relpath(docname + ".html", here)
    return f'<a href="{html.escape(href)}">{html.escape(docname.split("/", 1)[-1])}</a>'


def _function_link(function: str | None, here: str = "book") -> str:
    """A link to a function's entry in the API reference (book/appendix/api)."""
    import html
    import posixpath

    if not function:
        return ""
    href = posixpath.relpath("book/appendix/api.html", here) + "#" + function
    return f'<a href="{html.escape(href)}"><code>{html.escape(function.rsplit(".", 1)[-1])}</code></a>'


def scorecard_html(rows: list[dict], registry: dict, here: str = "book") -> str:
    """The scorecard: a summary row per source, filters, then one table per source, one row per target."""
    import html

    sources = registry.get("sources", {})
    out = []
    total = verdict_counts(rows)
    summary = ", ".join(f"{badge(v)}: {n}" for v, n in total.items())
    out.append(f"<p><b>{len(rows)} targets</b> — {summary}</p>")
    present = [v for v in TARGET_VERDICTS if v in total]
    head = "".join(f"<th>{html.escape(v)}</th>" for v in present)
    body = "".join(
        f"<tr><td><a href='#sf-source-{key}'>{key}</a></td>"
        + "".join(f"<td>{verdict_counts([r for r in rows if r['source'] == key]).get(v, 0)}</td>" for v in present)
        + "</tr>" for key in sorted(sources))
    out.append(f'<table class="sf-summary"><thead><tr><th>source</th>{head}</tr></thead><tbody>{body}</tbody></table>')
    opts_s = "".join(f'<option value="{k}">{k}</option>' for k in sorted(sources))
    opts_v = "".join(f'<option value="{html.escape(v)}">{html.escape(v)}</option>' for v in present)
    out.append('<p class="sf-filter">Show: <label>source <select id="sf-filter-source"><option value="">all</option>'
               f'{opts_s}</select></label> <label>verdict <select id="sf-filter-verdict"><option value="">all'
               f'</option>{opts_v}</select></label> <span id="sf-filter-count"></span></p>')
    for key in sorted(sources):
        meta = sources[key] or {}
        mine = [r for r in rows if r["source"] == key]
        title = html.escape(meta.get("title", ""))
        out.append(f"<div class='sf-source' data-source='{key}'><h3 id='sf-source-{key}'>{key} "
                   f"{('— ' + title) if title else ''}</h3><p><code>{html.escape(meta.get('seed', ''))}</code></p>")
        if not mine:
            out.append("<p><i>No targets catalogued in the registry yet: not attempted.</i></p></div>")
            continue
        body = "".join(
            f"<tr class='sf-target' data-source='{key}' data-verdict='{html.escape(r['verdict'])}'>"
            f"<td><a id='{key}-{html.escape(r['target'])}'></a><b>{html.escape(r['target'])}</b></td>"
            f"<td>{html.escape(r['title'])}</td><td>{badge(r['verdict'])}</td>"
            f"<td>{r['n_pass']}/{len(r['checks'])}</td><td>{_chapter_link(r['chapter'], here)}</td>"
            f"<td>{_function_link(r.get('function'), here)}</td></tr>"
            for r in mine)
        out.append('<table class="sf-scorecard"><thead><tr><th>target</th><th>what</th><th>verdict</th>'
                   '<th>checks passed</th><th>chapter</th><th>computed by</th></tr></thead>'
                   f'<tbody>{body}</tbody></table></div>')
    out.append(_FILTER_SCRIPT)
    return "\n".join(out)


_FILTER_SCRIPT = """<script>
(function () {
  function apply() {
    var s = document.getElementById('sf-filter-source').value;
    var v = document.getElementById('sf-filter-verdict').value;
    var shown = 0;
    document.querySelectorAll('tr.sf-target').forEach(function (tr) {
      var ok = (!s || tr.dataset.source === s) && (!v || tr.dataset.verdict === v);
      tr.style.display = ok ? '' : 'none';
      if (ok) { shown += 1; }
    });
    document.querySelectorAll('div.sf-source').forEach(function (d) {
      d.style.display = (!s || d.dataset.source === s) ? '' : 'none';
    });
    document.getElementById('sf-filter-count').textContent = shown + ' targets shown';
  }
  ['sf-filter-source', 'sf-filter-verdict'].forEach(function (id) {
    var el = document.getElementById(id);
    if (el) { el.addEventListener('change', apply); }
  });
})();
</script>"""


def checks_html(rows: list[dict], here: str = "book") -> str:
    """Every recorded check of every attempted target: claim, source value, measured, criterion, verdict."""
    import html

    out = []
    for r in rows:
        if not r["checks"]:
            continue
        out.append(f"<h4>{r['source']}:{html.escape(r['target'])} — {html.escape(r['title'])} "
                   f"({badge(r['verdict'])}, {_chapter_link(r['chapter'], here)})</h4>")
        out.append(verdict_table_html([dict(check=c["id"], claim=c["claim"], source=c["source_value"],
                                            measured=c["measured"], criterion=c["criterion"],
                                            verdict=c["verdict"], why=explain(c), registry=c.get("note", ""))
                                       for c in r["checks"]]).replace("<th>registry</th>", "<th>note</th>"))
    return "\n".join(out)
