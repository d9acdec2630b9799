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
COMPARED_PROFILES = ("book", "smoke")


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

    def check(self, id: str, claim: str, measured: Any, criterion: Criterion, source_value: str = "",
              note: str = "") -> Check:
        """Evaluate one pass criterion and record it (the verdict is computed here, never given)."""
        if "/" not in id:
            raise ValueError(f"check id must look like 'TARGET/name', got {id!r}")
        if any(c.id == id for c in self.checks):
            raise ValueError(f"check {id!r} recorded twice")
        values = [float(x) for x in _values(measured)]
        c = Check(id=id, claim=claim, source_value=source_value, measured=fmt(measured), values=values,
                  criterion=criterion.text, verdict=PASS if criterion(measured) else FAIL, note=note)
        c.expected = self._expected(c)
        self.checks.append(c)
        return c

    # -- registry ---------------------------------------------------------------------------
    def _registry_targets(self) -> dict:
        return load_registry().get("targets", {})

    def _expected(self, c: Check) -> str | None:
        if self.profile not in COMPARED_PROFILES:
            return None
        entry = self._registry_targets().get(f"{self.source}:{c.target}", {})
        return (entry.get("checks") or {}).get(c.name, {}).get(self.profile, "missing")

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
        ran = {c.id for c in self.checks}
        for key, entry in self._registry_targets().items():
            if not key.startswith(self.source + ":"):
                continue
            target = key.split(":", 1)[1]
            for name, verdicts in (entry.get("checks") or {}).items():
                chapter = verdicts.get("chapter", entry.get("chapter"))
                if chapter == self.chapter and self.profile in verdicts and f"{target}/{name}" not in ran:
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
                            criterion=c.criterion, verdict=c.verdict, registry=compared))
        return out

    def report(self) -> str:
        """A plain-text verdict table (deterministic: nbval compares it on re-execution)."""
        lines = [f"{self.source} / {self.chapter} [{self.profile}]"]
        for r in self.rows():
            lines.append(f"  {r['verdict'].upper():4s}  {r['check']:<28s} measured {r['measured']}  "
                         f"(criterion {r['criterion']}; {r['registry']})")
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


def target_verdict(verdicts: list[str]) -> str:
    """Aggregate check verdicts: all pass -> reproduced, none -> not reproduced, else partly."""
    if not verdicts:
        return "not attempted"
    n = sum(v == PASS for v in verdicts)
    return "reproduced" if n == len(verdicts) else ("not reproduced" if n == 0 else "partly")


VERDICT_COLOURS = {"pass": "#1a7f37", "fail": "#cf222e", "reproduced": "#1a7f37", "partly": "#9a6700",
                   "not reproduced": "#cf222e", "not attempted": "#6e7781", "not run": "#cf222e"}


def badge(verdict: str) -> str:
    colour = VERDICT_COLOURS.get(verdict, "#6e7781")
    return f'<span class="sf-verdict" style="color:{colour};font-weight:600">{verdict}</span>'


def verdict_table_html(rows: list[dict]) -> str:
    import html

    cols = ["check", "claim", "source", "measured", "criterion", "verdict", "registry"]
    head = "".join(f"<th>{c}</th>" for c in cols)
    body = "".join("<tr>" + "".join(
        f"<td>{badge(r[c]) if c == 'verdict' else html.escape(str(r[c]))}</td>" for c in cols) + "</tr>"
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
        registered = entry.get("checks") or {}
        if registered and not checks:
            verdict = "not run"
        else:
            verdict = target_verdict([c["verdict"] for c in checks])
        rows.append(dict(source=source, target=target, title=entry.get("title", ""), chapter=entry.get("chapter"),
                         function=entry.get("function"),
                         verdict=verdict, checks=checks, n_pass=sum(c["verdict"] == PASS for c in checks),
                         note=entry.get("note", "")))
    return rows


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
    """The scorecard: one table per source, one row per target (verdict, checks passed, chapter)."""
    import html

    sources = registry.get("sources", {})
    out = []
    counts = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    summary = ", ".join(f"{badge(v)}: {n}" for v, n in sorted(counts.items()))
    out.append(f"<p><b>{len(rows)} targets</b> — {summary}</p>")
    for key in sorted(sources):
        meta = sources[key] or {}
        mine = [r for r in rows if r["source"] == key]
        title = html.escape(meta.get("title", ""))
        out.append(f"<h3>{key} {('— ' + title) if title else ''}</h3><p><code>{html.escape(meta.get('seed', ''))}</code></p>")
        if not mine:
            out.append("<p><i>No targets catalogued in the registry yet: not attempted.</i></p>")
            continue
        body = "".join(
            f"<tr><td><a id='{key}-{html.escape(r['target'])}'></a><b>{html.escape(r['target'])}</b></td>"
            f"<td>{html.escape(r['title'])}</td><td>{badge(r['verdict'])}</td>"
            f"<td>{r['n_pass']}/{len(r['checks'])}</td><td>{_chapter_link(r['chapter'], here)}</td>"
            f"<td>{_function_link(r.get('function'), here)}</td></tr>"
            for r in mine)
        out.append('<table class="sf-scorecard"><thead><tr><th>target</th><th>what</th><th>verdict</th>'
                   '<th>checks passed</th><th>chapter</th><th>computed by</th></tr></thead>'
                   f'<tbody>{body}</tbody></table>')
    return "\n".join(out)


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
                                            verdict=c["verdict"], registry=c.get("note", ""))
                                       for c in r["checks"]]).replace("<th>registry</th>", "<th>note</th>"))
    return "\n".join(out)
