"""The scorecard: every registered target with the verdict its checks reached in one build, as a page, as
JSON (:data:`SCORECARD_SCHEMA`) and as the errata appendix.

Evidence that another chapter computes is settled here, once every chapter's record exists: at book
scale, a registered cause whose evidence does not hold is a build error (:func:`scorecard_problems`).
"""
from __future__ import annotations

import json
import re
import math
from pathlib import Path

from .causes import (CAUSES, EVIDENCE_CAUSES, PENDING, PROVED_CAUSES, SOURCE_CAUSES, TARGET_VERDICTS, UNVERIFIED, evidence_status,
                     independent_of,
                     explain, target_verdict)
from .registry import COMPARED_PROFILES, FAIL, NOT_RUN, PASS, load_records, load_registry, repo_root
from .controls import coverage as control_coverage


VERDICT_COLOURS = {"pass": "#1a7f37", "fail": "#cf222e", "reproduced": "#1a7f37", "verified (exact)": "#1a7f37",
                   "finding (this book)": "#0a7d8c",
                   "reproduced, source erratum shown": "#1f6feb", "reproduced, book deviation shown": "#1f6feb",
                   "source claim false (erratum shown)": "#8250df", "undecided at this scale": "#6e7781",
                   "partly": "#9a6700",
                   "not reproduced": "#cf222e", "illustration": "#6e7781", "not attempted": "#6e7781",
                   "not run at this scale": "#6e7781",
                   "not run": "#cf222e"}


def badge(verdict: str) -> str:
    colour = VERDICT_COLOURS.get(verdict, "#6e7781")
    return f'<span class="sf-verdict" style="color:{colour};font-weight:600">{verdict}</span>'


def check_anchor(source: str, check_id: str) -> str:
    """The HTML id of a check's row on its chapter's page (errata and scorecard rows link to it)."""
    import re

    return "check-" + re.sub(r"[^A-Za-z0-9]+", "-", f"{source}-{check_id}").strip("-").lower()


_CODE = re.compile(r"`([^`]+)`")


def inline_html(text) -> str:
    """Generated text (a why, a note, a claim) as HTML: escaped, with the Markdown code spans it quotes the source's
    constants in (`` `m = 1000` ``) rendered as code, so a page never shows a literal backtick."""
    import html

    return _CODE.sub(lambda m: f"<code>{m.group(1)}</code>", html.escape(str(text), quote=False)).replace("`", "&#96;")


def verdict_table_html(rows: list[dict]) -> str:
    """A chapter's checks: what is claimed, the source's value, the measured value (with its kind), the criterion,
    the margin (how far inside or outside the criterion, in its units) and the verdict in columns; the cause of a failing check, with its why, on a full-width row under it. The table scrolls
    sideways on a narrow screen instead of being clipped."""
    import html

    # the verdict beside the check's id (a phone shows the first two columns; the id stays put as the table scrolls)
    cols = [("check", "check"), ("verdict", "verdict"), ("measured", "measured"), ("criterion", "criterion"),
            ("margin", "margin"), ("claim", "claim"), ("source", "source"), ("registry", "registry")]
    head = "".join(f"<th>{title}</th>" for _, title in cols)
    body = []
    for r in rows:
        anchor = f" id='{check_anchor(r['source_key'], r['check'])}'" if r.get("source_key") else ""
        cells = "".join(f"<td class='sf-col-{c}'>{badge(r[c]) if c == 'verdict' else inline_html(r.get(c, ''))}</td>"
                        for c, _ in cols)
        body.append(f"<tr class='sf-check'{anchor}>{cells}</tr>")
        if r.get("why"):
            body.append(f"<tr class='sf-why'><td colspan='{len(cols)}'><div class='sf-wrap'><b>why</b>: "
                        f"{inline_html(r['why'])}</div></td></tr>")
        if r.get("note"):  # a deviation from the spec's criterion, the data a check uses, ...
            body.append(f"<tr class='sf-note'><td colspan='{len(cols)}'><div class='sf-wrap'><b>note</b>: "
                        f"{inline_html(r['note'])}</div></td></tr>")
    return (f'<div class="sf-scroll" style="overflow-x:auto;max-width:100%"><table class="sf-claims">'
            f'<thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>')


def _settle_across_chapters(records: list[dict]) -> None:
    """Settle the evidence that a chapter left *pending* (computed by another chapter) from every record."""
    by_id = {(rec["source"], c["id"]): c for rec in records for c in rec["checks"]}
    for rec in records:
        for c in rec["checks"]:
            if c.get("evidence_status") == PENDING:
                c["evidence_status"], c["evidence_reason"] = evidence_status(
                    (c.get("evidence") or []) + (c.get("in_scope") or []), lambda ev, s=rec["source"]: by_id.get((s, ev)),
                    values=independent_of(c))


def scorecard(profile: str = "book") -> list[dict]:
    """One row per registered target: source, id, title, chapter(s), verdict and its checks."""
    reg = load_registry()
    records = load_records(profile)
    _settle_across_chapters(records)
    recorded, chapters = {}, {}
    for rec in records:
        for c in rec["checks"]:
            key = f"{rec['source']}:{c['id'].split('/', 1)[0]}"
            recorded.setdefault(key, []).append(c)
            chapters.setdefault(key, [])
            if rec["chapter"] not in chapters[key]:
                chapters[key].append(rec["chapter"])
    from .paper import target_verdicts

    at_source = target_verdicts(reg)
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
        home = entry.get("chapter")
        rows.append(dict(source=source, target=target, title=entry.get("title", ""), chapter=home,
                         chapters=[home] + [c for c in chapters.get(key, []) if c != home] if home else
                         chapters.get(key, []),
                         function=entry.get("function"),
                         verdict=verdict, checks=checks, n_pass=sum(c["verdict"] == PASS for c in checks),
                         note=entry.get("note", "") or entry.get("illustration", ""), profile=profile,
                         claim=list(entry.get("claim") or []), scope=list(entry.get("scope") or []),
                         parts=list(entry.get("parts") or []), kind=entry.get("kind"),
                         paper=at_source.get(key)))
    return rows


PROVENANCE = "verdicts/provenance.yaml"  # not .yml: the registry loader reads every verdicts/*.yml as a source


def load_provenance() -> dict:
    """The hand-declared provenance (``verdicts/provenance.yaml``): the chapters whose data substitute the source's."""
    import yaml

    path = repo_root() / PROVENANCE
    return (yaml.safe_load(path.read_text()) or {}) if path.exists() else {}


def _local_data(name: str) -> bool:
    """Whether the real data named in ``unless_local`` are present on this machine."""
    try:
        from ..deep.data import cifar_available
    except ImportError:  # the deep-network extras are not installed: no local data either
        return False
    return cifar_available(int(name.removeprefix("cifar"))) if name.startswith("cifar") else False


def provenance(row: dict, prov: dict | None = None) -> dict:
    """Where a scorecard row's verdict comes from: the substitute data of its chapters (declared in
    ``verdicts/provenance.yaml`` and active unless the real data are present locally), the chapters that run
    at a reduced scale (a ``params/paper/`` profile exists and this edition is not ``paper``), and the runs
    behind its checks (the records' ``runs``: an int per check on trained runs, ``None`` for a check on no
    trained run, absent in a record written before runs were recorded)."""
    prov = load_provenance() if prov is None else prov
    chapters = [c for c in (row.get("chapters") or [row.get("chapter")]) if c]
    subs = [s for s in prov.get("substitutes") or [] if s.get("chapter") in chapters
            and not (s.get("unless_local") and _local_data(s["unless_local"]))]
    profile = row.get("profile", "book")
    reduced = [] if profile == "paper" else [
        c for c in chapters if (repo_root() / "params" / "paper" / f"{c.removeprefix('book/')}.yml").exists()]
    counts = [c["runs"] for c in row.get("checks", []) if isinstance(c.get("runs"), int)]
    untrained = sum(1 for c in row.get("checks", []) if "runs" in c and c["runs"] is None)
    unrecorded = sum(1 for c in row.get("checks", []) if "runs" not in c)
    return dict(substitutes=subs, reduced=reduced, runs=counts, untrained=untrained, unrecorded=unrecorded)


def runs_text(p: dict) -> str:
    """The run counts of a row's checks, in words (``1 run``, ``5-20 runs``, ``no trained run``)."""
    parts = []
    if p["runs"]:
        lo, hi = min(p["runs"]), max(p["runs"])
        parts.append(f"{lo} run{'s' if lo != 1 else ''}" if lo == hi else f"{lo}-{hi} runs")
    if p["untrained"]:
        parts.append(("no trained run" if not p["runs"] else f"{p['untrained']} check(s) on no trained run"))
    if p["unrecorded"]:
        parts.append("runs not recorded" if not parts else f"{p['unrecorded']} check(s) without a run count")
    return "; ".join(parts)


def provenance_html(p: dict, here: str = "book") -> str:
    """The flags of :func:`provenance` as a short line: substitute data, reduced scale, runs."""
    import html

    flags = []
    for s in p["substitutes"]:
        flags.append(f"<span class='sf-flag sf-substitute' title='{html.escape(s.get('source_data', ''))} replaced by "
                     f"{html.escape(s.get('book_data', ''))}'>substitute data: {html.escape(s.get('book_data', ''))} "
                     f"for {html.escape(s.get('source_data', ''))}</span>")
    if p["reduced"]:
        names = ", ".join(f"<code>params/paper/{html.escape(c.removeprefix('book/'))}.yml</code>" for c in p["reduced"])
        flags.append(f"<span class='sf-flag sf-reduced'>reduced scale (the source's: {names})</span>")
    runs = runs_text(p)
    if runs:
        flags.append(f"<span class='sf-flag sf-runs'>{html.escape(runs)}</span>")
    return "<br>".join(flags)


def registered_verdicts(registry: dict, profile: str = "book") -> dict[str, str]:
    """Every target's verdict as the registry predicts it at ``profile`` (``book`` or ``smoke``), before any
    run: each check as registered, each cause proved when its evidence is registered to pass.

    A build whose chapters all agree with the registry reaches exactly these verdicts (a test compares the
    two), so this is also how a change to the registry is read: the verdicts it moves.
    """
    out = {}
    for key, entry in registry.get("targets", {}).items():
        source = key.split(":", 1)[0]
        checks = []
        for name, reg in (entry.get("checks") or {}).items():
            reg = reg or {}
            verdict = reg.get(profile, NOT_RUN)
            if verdict == NOT_RUN:
                continue
            c = dict(id=f"{key.split(':', 1)[1]}/{name}", verdict=PASS if verdict == PASS else FAIL,
                     expected=verdict, cause=reg.get("cause", "") if verdict != PASS else "",
                     refutes=bool(reg.get("refutes", False)), evidence=list(reg.get("evidence") or []),
                     in_scope=list(reg.get("in-scope") or []) if reg.get("refutes") else [])
            if c["verdict"] == FAIL and (c["cause"] in EVIDENCE_CAUSES or (c["cause"] in PROVED_CAUSES and c["evidence"])):
                holds = c["evidence"] and all(
                    ((registry["targets"].get(f"{source}:{ev.split('/', 1)[0]}") or {}).get("checks") or {})
                    .get(ev.split("/", 1)[1], {}).get(profile) == PASS for ev in c["evidence"] + c["in_scope"])
                c["evidence_status"] = "verified" if holds else UNVERIFIED
            checks.append(c)
        if entry.get("checks") and not checks:
            out[key] = "not run at this scale"
        else:
            out[key] = target_verdict(checks, entry)
    return out


def scorecard_problems(rows: list[dict], profile: str) -> list[str]:
    """Build errors of a compared profile: a registered target without a record, and (book scale) a failing
    check whose registered cause names evidence that does not hold once every chapter has run."""
    problems = [f"{r['source']}:{r['target']} has registered checks but no record in this build"
                for r in rows if r["verdict"] == "not run"]
    if profile == "book":
        for r in rows:
            for c in r["checks"]:
                if (c["verdict"] == FAIL and c.get("cause") in PROVED_CAUSES and c.get("evidence")
                        and c.get("evidence_status") == UNVERIFIED):
                    problems.append(f"{r['source']}:{c['id']}: its registered cause {c['cause']} is not proved: "
                                    f"{c.get('evidence_reason', '')}")
    return problems


SCORECARD_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "shallowflow scorecard",
    "description": "Every reproduction target of every source with the verdict reached in one build.",
    "type": "object",
    "required": ["profile", "package_version", "sources", "targets"],
    "properties": {
        "reports": {"type": "object", "description": "per source key: the reproduction report's data "
                    "(shallowflow.verdicts.report.source_report): label, rule, counts, targets, deviations, cost",
                    "additionalProperties": {"type": "object", "required": ["label", "rule", "decided", "reproduced"],
                                             "properties": {"label": {"enum": ["[Re]", "[~Re]", "[¬Re]", "[?Re]"]}}}},
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
                "chapters": {"type": "array", "items": {"type": "string"},
                             "description": "every chapter holding a check of the target, its own first"},
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
                        "invalid": {"type": "array", "items": {"type": "integer"}},
                        "evidence": {"type": "array", "items": {"type": "string"},
                                     "description": "the checks that prove the cause"},
                        "evidence_status": {"enum": ["", "verified", "pending", "unverified"]},
                        "refutes": {"type": "boolean"},
                        "runs": {"type": ["integer", "null"], "minimum": 0,
                                 "description": "the runs behind the check (its valid= flags); null: no trained run"},
                        "in_scope": {"type": "array", "items": {"type": "string"},
                                     "description": "a refutation's checks that its counterexample is in the source's scope"},
                        "decidable": {"enum": ["", "yes", "cannot pass", "cannot fail"],
                                      "description": "whether the check could pass and fail at its unit count"},
                        "units": {"type": ["integer", "null"], "minimum": 0},
                        "kind": {"enum": ["", "value", "range", "interval", "interval end", "values"],
                                 "description": "what measured shows: one value, a range over runs, an interval's "
                                                "ends, one end of an interval, several values (not one per run)"},
                        "level": {"type": ["number", "null"], "description": "an interval's level"},
                        "count": {"type": ["integer", "null"], "description": "the runs of a range, an interval's n"},
                        "method": {"type": "string", "description": "an interval's method (t, Wilson, logit-t, ...)"},
                        "margin": {"type": ["number", "null"], "description": "how far inside (+) or outside (-) "
                                   "the criterion, in its units; null: n/a"},
                        "margin_rel": {"type": ["number", "null"], "description": "margin over the criterion's scale"},
                        "margin_text": {"type": "string"}}}},
                "claim": {"type": "array", "description": "the source's sentence(s) the verdict tests, quoted"},
                "scope": {"type": "array", "description": "the hypotheses the source states the claim under, quoted"},
                "kind": {"type": ["string", "null"], "description": "exact (an identity) or finding (the book's own)"},
                "paper": {"type": ["object", "null"], "description": "the verdict at the source's scale, from the "
                          "recorded paper runs (shallowflow.verdicts.paper.target_verdicts); null: none ran",
                          "required": ["verdict"],
                          "properties": {"verdict": {"enum": list(TARGET_VERDICTS) + ["stale record"]}}},
                "provenance": {"type": "object", "description": "substitute data, reduced-scale chapters, run counts "
                               "(shallowflow.verdicts.scorecard.provenance)"}}}},
    },
}


def verdict_counts(rows: list[dict]) -> dict:
    counts = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    return {v: counts[v] for v in TARGET_VERDICTS if v in counts}


def scorecard_json(rows: list[dict], registry: dict, profile: str) -> dict:
    """The scorecard as data (schema: :data:`SCORECARD_SCHEMA`); written to the built site."""
    from .. import __version__

    def num(x):
        return x if math.isfinite(x) else None

    sources = {key: dict(seed=(meta or {}).get("seed", ""), title=(meta or {}).get("title", ""),
                         counts=verdict_counts([r for r in rows if r["source"] == key]))
               for key, meta in sorted(registry.get("sources", {}).items())}
    keep = ("id", "claim", "source_value", "measured", "values", "criterion", "verdict", "cause", "why", "invalid",
            "evidence", "evidence_status", "refutes", "runs", "in_scope", "decidable", "units", "kind", "level", "count",
            "method", "margin", "margin_rel", "margin_text")
    default = {"invalid": [], "evidence": [], "refutes": False, "runs": None, "in_scope": [], "decidable": "",
               "units": None, "kind": "", "level": None, "count": None, "method": "", "margin": None, "margin_rel": None,
               "margin_text": ""}
    targets = [dict(source=r["source"], target=r["target"], title=r["title"], verdict=r["verdict"],
                    chapter=r["chapter"], chapters=r.get("chapters", []), function=r["function"],
                    note=r.get("note", "") or "", claim=r.get("claim", []), scope=r.get("scope", []),
                    kind=r.get("kind"), paper=r.get("paper"),
                    checks=[{k: ([num(v) for v in c.get(k, [])] if k == "values" else
                                 c.get(k, default.get(k, ""))) for k in keep} for c in r["checks"]])
               for r in rows]
    for t in targets:  # JSON has no NaN: non-finite measured values are null
        for c in t["checks"]:
            c["values"] = [v for v in c["values"] if v is not None]
            for k in ("margin", "margin_rel"):
                if isinstance(c[k], float) and not math.isfinite(c[k]):
                    c[k] = None
    return dict(profile=profile, package_version=__version__, sources=sources, targets=targets)


def write_scorecard_json(rows: list[dict], registry: dict, profile: str) -> Path:
    """``artifacts/scorecard/<profile>.json``; the Sphinx extension copies it to ``_build/html/scorecard.json``."""
    from ..outputs import safe_path

    path = safe_path(repo_root() / "artifacts" / "scorecard" / f"{profile}.json")  # never through a link out
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(scorecard_json(rows, registry, profile), indent=1, allow_nan=False))
    tmp.replace(path)
    return path


def errata(registry: dict | None = None, profile: str | None = None) -> list[dict]:
    """Every check registered as failing because of the source (``erratum``/``convention``), by source, with
    its why filled from the build's records (``profile``; without a record, the template's placeholders
    say that the value was not measured) and whether its evidence holds in that build."""
    from .causes import render_why

    reg = registry or load_registry()
    records = load_records(profile) if profile else []
    _settle_across_chapters(records)
    by_id = {(rec["source"], c["id"]): c for rec in records for c in rec["checks"]}
    out = []
    for key, entry in reg.get("targets", {}).items():
        source, target = key.split(":", 1)
        for name, c in (entry.get("checks") or {}).items():
            if (c or {}).get("cause") in SOURCE_CAUSES:
                rec = by_id.get((source, f"{target}/{name}"))
                why = rec["why"] if rec and rec.get("why") else render_why(
                    c.get("why", ""), rec or {}, lambda ev, s=source: by_id.get((s, ev)))
                out.append(dict(source=source, target=target, check=name, title=entry.get("title", ""),
                                cause=c["cause"], why=why, evidence=list(c.get("evidence") or []),
                                refutes=bool(c.get("refutes", False)),
                                evidence_status=(rec or {}).get("evidence_status", ""),
                                chapter=c.get("chapter", entry.get("chapter")),
                                claim=list(entry.get("claim") or []), scope=list(entry.get("scope") or [])))
    return out


def _chapter_link(docname: str | None, here: str = "book", anchor: str = "") -> str:
    import html
    import posixpath

    if not docname:
        return ""
    href = posixpath.relpath(docname + ".html", here) + (f"#{anchor}" if anchor else "")
    return f'<a href="{html.escape(href)}">{html.escape(docname.split("/", 1)[-1])}</a>'


def _function_link(function: str | None, here: str = "book") -> str:
    """A link to a function's entry in the API reference (book/appendix/api)."""
    import html
    import posixpath

    if not function:
        return ""
    href = posixpath.relpath("book/appendix/api.html", here) + "#" + function
    return f'<a href="{html.escape(href)}"><code>{html.escape(function.rsplit(".", 1)[-1])}</code></a>'


def at_source_html(paper: dict | None) -> str:
    """A target's verdict at the source's scale for the scorecard: the badge with the paper run's date and code, the
    stale record said as such (never a verdict), or *no record* (no paper run of its chapter has recorded it)."""
    import html

    if not paper:
        return "<i>no record</i>"
    run = f"run of {html.escape(str(paper.get('started', '')))}, code {html.escape(str(paper.get('commit', '')))}"
    if paper.get("verdict") == "stale record":
        return f"<i>stale record</i> <small>({run}: the code changed since; not a verdict)</small>"
    return f"{badge(paper['verdict'])} <small>({run})</small>"


def scorecard_html(rows: list[dict], registry: dict, here: str = "book") -> str:
    """The scorecard: a summary row per source, filters, then one table per source, one row per target."""
    import html

    sources = registry.get("sources", {})
    prov = load_provenance()
    out = []
    total = verdict_counts(rows)
    summary = ", ".join(f"{badge(v)}: {n}" for v, n in total.items())
    out.append(f"<p><b>{len(rows)} targets</b> — {summary}</p>")
    present = [v for v in TARGET_VERDICTS if v in total]
    head = "".join(f"<th>{html.escape(v)}</th>" for v in present) + "<th>deciding checks with a negative control</th>"
    cov = control_coverage(registry)

    def controlled(key):
        c = cov.get(key) or {"deciding": 0, "controlled": 0}
        return f"{c['controlled']} of {c['deciding']}"

    body = "".join(
        f"<tr><td><a href='#sf-source-{key}'>{key}</a></td>"
        + "".join(f"<td>{verdict_counts([r for r in rows if r['source'] == key]).get(v, 0)}</td>" for v in present)
        + f"<td>{controlled(key)}</td></tr>" for key in sorted(sources))
    out.append(f'<div class="sf-scroll"><table class="sf-summary"><thead><tr><th>source</th>{head}</tr></thead>'
               f'<tbody>{body}</tbody></table></div>')
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
            f"<td>{html.escape(r['title'])}</td><td>{badge(r['verdict'])}</td><td>{at_source_html(r.get('paper'))}</td>"
            f"<td>{r['n_pass']}/{len(r['checks'])}</td>"
            f"<td class='sf-provenance'>{provenance_html(provenance(r, prov), here)}</td>"
            f"<td>{', '.join(_chapter_link(c, here) for c in (r.get('chapters') or [r['chapter']]))}</td>"
            f"<td>{_function_link(r.get('function'), here)}</td></tr>"
            for r in mine)
        out.append('<div class="sf-scroll"><table class="sf-scorecard"><thead><tr><th>target</th><th>what</th><th>verdict</th>'
                   "<th>at the source's scale</th><th>checks passed</th><th>data, scale, runs</th><th>chapter</th><th>computed by</th></tr></thead>"
                   f'<tbody>{body}</tbody></table></div></div>')
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


_TEX = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)


def quote_text_html(text: str) -> str:
    """A source's sentence, verbatim, as HTML: escaped, its TeX (``$...$``, ``$$...$$``) shown as code, as the seed
    text has it, and a lone dollar too, so no raw TeX stands in the prose (a math span would need MathJax on pages
    Sphinx sees no math on)."""
    import html

    out, last = [], 0
    text = " ".join(str(text).split())
    for m in _TEX.finditer(text):
        out.append(html.escape(text[last:m.start()]))
        tex = m.group(1) if m.group(1) is not None else m.group(2)
        dollars = "$$" if m.group(1) is not None else "$"
        out.append(f"<code>{dollars}{html.escape(tex)}{dollars}</code>")
        last = m.end()
    out.append(html.escape(text[last:]))
    return "".join(x if x.startswith("<code>") else x.replace("$", "<code>$</code>") for x in out)


def quotes_html(row: dict, registry: dict | None = None) -> str:
    """The source's own words beside a verdict: the target's quoted claim and scope, each with its seed file and
    line (``verdicts/<source>.yml``'s ``claim:`` and ``scope:``; :mod:`~shallowflow.verdicts.quotes`); "" without."""
    import html

    sources = (registry or load_registry()).get("sources", {})

    def where(q: dict) -> str:
        seed = (sources.get(str(q.get("seed", row.get("source")))) or {}).get("seed", "")
        return f"{html.escape(seed)}, line {int(q.get('line', 0))}"

    parts = []
    for field, label in (("claim", "the source's claim"), ("scope", "under")):
        quotes = [q for q in (row.get(field) or []) if isinstance(q, dict) and q.get("text")]
        if quotes:
            body = " ".join(f"“{quote_text_html(q['text'])}” <span class='sf-quote-where'>"
                            f"({where(q)})</span>" for q in quotes)
            parts.append(f"<p class='sf-quote sf-quote-{field}'><b>{label}:</b> {body}</p>")
    return f"<div class='sf-quotes'>{''.join(parts)}</div>" if parts else ""


def margin_of(check: dict) -> str:
    """A recorded check's margin in words (``margin_text`` of :class:`~.checks.Check`); a record written before
    margins were recorded says so."""
    return check["margin_text"] if check.get("margin_text") else "not recorded"


def closest_calls(checks: list[dict], k: int = 3) -> list[dict]:
    """The passing checks with the smallest relative margin (``margin_rel``: the margin over the criterion's scale),
    closest first: the checks of a source whose verdict the least change would move."""
    ok = [c for c in checks if c.get("verdict") == PASS and isinstance(c.get("margin_rel"), (int, float))
          and math.isfinite(c["margin_rel"])]
    return sorted(ok, key=lambda c: (c["margin_rel"], c.get("id", "")))[:k]


def checks_html(rows: list[dict], here: str = "book") -> str:
    """Every recorded check of every attempted target: claim, source value, measured, criterion, verdict."""
    import html

    out, registry = [], load_registry()
    for r in rows:
        if not r["checks"]:
            continue
        out.append(f"<h4>{r['source']}:{html.escape(r['target'])} — {html.escape(r['title'])} "
                   f"({badge(r['verdict'])}, {_chapter_link(r['chapter'], here)})</h4>")
        out.append(quotes_html(r, registry))
        out.append(verdict_table_html([dict(check=c["id"], claim=c["claim"], source=c["source_value"],
                                            measured=c["measured"], criterion=c["criterion"],
                                            margin=margin_of(c), verdict=c["verdict"], why=explain(c), note=c.get("note", ""),
                                            registry="")
                                       for c in r["checks"]]).replace("<th>registry</th>", "<th></th>"))
    return "\n".join(out)
