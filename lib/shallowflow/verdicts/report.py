"""A reproduction report per source, generated at build time from the verdicts, the schemas and the profiles.

What reproduction venues (ReScience C, the ML Reproducibility Challenge) ask of every report, computed
rather than typed: the source's claims with their verdicts and causes, every deviation of the book's
protocol from the source's (the book's parameters against ``params/paper/``), the compute cost at book
scale (this build's report) and at the source's scale where it was measured, the environment, the
errata found, and a one-line summary in the ReScience style derived by :data:`SUMMARY_RULE`.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import yaml

from ..params import chapters
from . import paper
from .registry import chapter_of, repo_root

REPRODUCED = ("reproduced", "reproduced, source erratum shown", "reproduced, book deviation shown")
UNDECIDED_VERDICTS = ("undecided at this scale",)
NOT_DECIDED = ("illustration", "not attempted", "not run at this scale", "not run")
APART = ("verified (exact)", "finding (this book)")  # counted apart from the source's empirical reproductions
SUMMARY_RULE = ("Among the source's decided targets (attempted, not undecided at this scale), the share "
                "reproduced (reproduced, with a source erratum shown, or with a book deviation shown) gives the "
                "label: [Re] at 80% or more with no target not reproduced; [¬Re] below 40%; [~Re] otherwise "
                "(partial). A target whose claim the book shows false counts as decided and not reproduced. Identities "
                "verified exactly (by construction or a proved theorem) and the book's own findings are counted apart.")


def summary_label(verdicts: list[str]) -> tuple[str, dict]:
    """The ReScience-style label of a source from its target verdicts (:data:`SUMMARY_RULE`)."""
    decided = [v for v in verdicts if v not in NOT_DECIDED + UNDECIDED_VERDICTS + APART]
    reproduced = sum(v in REPRODUCED for v in decided)
    share = reproduced / len(decided) if decided else float("nan")
    if not decided:
        label = "[?Re]"
    elif share >= 0.8 and "not reproduced" not in decided:
        label = "[Re]"
    elif share < 0.4:
        label = "[¬Re]"
    else:
        label = "[~Re]"
    return label, dict(decided=len(decided), reproduced=reproduced, share=share,
                       undecided=sum(v in UNDECIDED_VERDICTS for v in verdicts),
                       not_reproduced=sum(v == "not reproduced" for v in verdicts),
                       exact=sum(v == APART[0] for v in verdicts), findings=sum(v == APART[1] for v in verdicts))


def source_chapters(registry: dict, source: str) -> list[str]:
    """The chapters (``part/name``) holding the source's checks, in registry order."""
    out = []
    for key, entry in registry.get("targets", {}).items():
        if not key.startswith(source + ":"):
            continue
        for d in [entry.get("chapter")] + [(c or {}).get("chapter") for c in (entry.get("checks") or {}).values()]:
            if d and d.removeprefix("book/") not in out:
                out.append(d.removeprefix("book/"))
    return out


def deviations(chapter: str) -> list[dict]:
    """The parameters where the book's scale differs from the source's (``params/paper/<chapter>.yml``)."""
    path = paper_file(chapter)
    if not path.exists():
        return []
    paper = yaml.safe_load(path.read_text()) or {}
    try:
        book = {d.name: (d.value, d.comment) for d in chapters.parameters_cell(chapter)}
    except Exception:  # a chapter without a parameters cell: nothing to compare
        return []
    out = []
    for name, value in paper.items():
        if name == "profile" or name not in book:
            continue
        default, comment = book[name]
        if value != default:
            out.append(dict(chapter=chapter, parameter=name, book=default, source=value, meaning=comment))
    return out


def build_costs(profile: str = "book") -> dict[str, float]:
    """Each page's execution time (s) in this edition's build report (empty without one)."""
    path = repo_root() / "artifacts" / "runs" / profile / "build-report.json"
    if not path.exists():
        return {}
    return {c["chapter"]: float(c["wall_s"]) for c in json.loads(path.read_text()).get("chapters", [])}


def paper_costs() -> dict[str, dict]:
    """The source's-scale cost per chapter (``benchmarks/paper_scale.json``'s ``chapters``: each chapter's
    ``paper`` entry, whether it ran, was estimated or is refused here)."""
    path = repo_root() / "benchmarks" / "paper_scale.json"
    try:
        doc = json.loads(path.read_text()) if path.exists() else {}
    except ValueError:
        doc = {}
    return {ch: (row or {}).get("paper") or {} for ch, row in (doc.get("chapters") or {}).items()}


CLOSEST = 5  # closest-call checks shown on a report page


def source_report(source: str, rows: list[dict], registry: dict, profile: str = "book") -> dict:
    """Everything the report page of one source shows, as data (also in the site's ``scorecard.json``)."""
    from .scorecard import closest_calls

    mine = [r for r in rows if r["source"] == source]
    label, stats = summary_label([r["verdict"] for r in mine])
    chapters = source_chapters(registry, source)
    costs, paper = build_costs(profile), paper_costs()
    return dict(
        label=label, rule=SUMMARY_RULE, **stats,
        targets=[dict(target=r["target"], title=r["title"], verdict=r["verdict"],
                      failing=[dict(id=c["id"], cause=c.get("cause", ""), why=c.get("why", ""),
                                    evidence=c.get("evidence", []), evidence_status=c.get("evidence_status", ""))
                               for c in r["checks"] if c["verdict"] != "pass"]) for r in mine],
        deviations=[d for ch in chapters for d in deviations(ch)],
        cost=[dict(chapter=ch, book_s=costs.get(ch), paper=paper.get(ch)) for ch in chapters],
        errata=sum(1 for r in mine for c in r["checks"] if c["verdict"] != "pass"
                   and c.get("cause") in ("erratum", "convention") and c.get("evidence_status") == "verified"),
        closest=[dict(id=c["id"], target=c["target"], measured=c.get("measured", ""), criterion=c.get("criterion", ""),
                      margin=c.get("margin"), margin_rel=c.get("margin_rel"), margin_text=c.get("margin_text", ""))
                 for c in closest_calls([dict(c, target=r["target"]) for r in mine for c in r["checks"]], CLOSEST)],
    )


PAPER_SCALE = "benchmarks/paper_scale.json"


def paper_scale_doc(root: Path | None = None, warn: Callable[[str], None] | None = None) -> dict | None:
    """``benchmarks/paper_scale.json`` under ``root`` (the repository) (the paper edition's cost per chapter) when it
    is there; a file that is not JSON is ``warn``-ed about in one line and read as absent (costs not measured)."""
    path = (root if root is not None else repo_root()) / PAPER_SCALE
    try:
        return json.loads(path.read_text()) if path.exists() else None
    except ValueError:
        if warn is not None:
            warn(f"{path} is not JSON: the paper-scale costs are shown as not measured")
        return None


def duration(seconds: float) -> str:
    """A duration for a reader: ``42 s``, ``7.5 min``, ``3.2 h``, ``2.1 days``."""
    s = float(seconds)
    if s < 120:
        return f"{s:.0f} s" if s >= 10 else f"{s:.1f} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h" if s < 172800 else f"{s / 86400:.1f} days"


def paper_cost_text(chapter: str, doc: dict | None) -> str:
    """The source's-scale cost of a chapter from ``benchmarks/paper_scale.json``, in words, or 'not measured'."""
    entry = ((doc or {}).get("chapters") or {}).get(chapter)
    paper = (entry or {}).get("paper") or {}
    status, secs = paper.get("status"), paper.get("seconds")
    where = paper.get("where") or (doc or {}).get("machine") or "an unnamed machine"
    basis = f" ({paper['basis']})" if paper.get("basis") else ""
    if status == "ran" and secs is not None:
        return f"{duration(secs)}, measured on {where}{basis}"
    if status == "estimated" and secs is not None:
        return f"about {duration(secs)}, estimated for {where}{basis}"
    if status == "refused":
        return f"not run: the paper profile is refused here and needs {where}{basis}"
    if status == "none" and chapter.startswith("synthesis/"):  # the synthesis has no source, hence no source scale
        return "no paper profile: a synthesis chapter has no source of its own, hence no source scale; it runs at the parameters its page states"
    if status == "none" and not paper_file(chapter).exists():
        # what the records hold: no params/paper file, so the paper profile runs the book's own parameters; that
        # they are the source's is the chapter's declaration, not a comparison (issue 41, item 5)
        return (f"no paper profile: no params/paper/{chapter}.yml, so the paper profile runs this page's parameters "
                "(declared the source's, not compared)")
    return "not measured"


def paper_file(chapter: str) -> Path:
    """The chapter's source-scale parameters, ``params/paper/<chapter>.yml`` (absent: none declared)."""
    return repo_root() / "params" / "paper" / f"{chapter}.yml"


def environment(profile: str = "book") -> dict:
    """The machine and package versions of this edition's build report."""
    path = repo_root() / "artifacts" / "runs" / profile / "build-report.json"
    if not path.exists():
        return {}
    rep = json.loads(path.read_text())
    return dict(machine=rep.get("machine", {}), versions=rep.get("versions", {}), date=rep.get("date", ""),
                code=rep.get("code", ""))


def check_result_html(source: str, check_id: str, rows: list[dict], registry: dict, here: str = "book") -> str:
    """One check's result as a sentence's words, from this build's records: its verdict, what it measured (with
    the measurement's kind), its criterion and margin, linked to its row on its chapter's page. A report page's
    prose states a measured fact only through this (``{check-result}`` role; issue 41, item 5): a typed sentence
    would go stale when the records change."""
    import html
    import posixpath

    from .scorecard import badge, check_anchor, inline_html

    target = check_id.split("/", 1)[0]
    row = next((r for r in rows if r["source"] == source and r["target"] == target), None)
    c = next((c for c in (row or {}).get("checks", []) if c["id"] == check_id), None)
    href = posixpath.relpath((chapter_of(registry, source, check_id) or "book/scorecard") + ".html", here)
    name = f"<a href='{html.escape(href)}#{check_anchor(source, check_id)}'><code>{html.escape(check_id)}</code></a>"
    if c is None:
        return f"<span class='sf-check-result'>{name}: not in this build's records</span>"
    margin = c.get("margin_text") or ""
    return (f"<span class='sf-check-result'>{name}: {badge(c['verdict'])}, measured {inline_html(c.get('measured', ''))} "
            f"against {inline_html(c.get('criterion', ''))}" + (f" (margin {inline_html(margin)})" if margin else "")
            + "</span>")


def short_value(value, limit: int = 8) -> str:
    """A parameter value for a table cell: a list longer than ``limit`` as its first and last items and its length
    (consecutive integers as their first two, the last and the count: ``[0, 1, ..., 499] (500 values)``)."""
    if not isinstance(value, (list, tuple)) or len(value) <= limit:
        return str(value)
    v = list(value)
    ints = all(isinstance(x, int) and not isinstance(x, bool) for x in v)
    if ints and all(b - a == 1 for a, b in zip(v, v[1:])):
        return f"[{v[0]}, {v[1]}, ..., {v[-1]}] ({len(v)} consecutive values)"
    return f"[{', '.join(map(str, v[:3]))}, ..., {v[-1]}] ({len(v)} values)"


def value_html(value) -> str:
    """:func:`short_value` as code, the whole value in its title (shown on hover)."""
    import html

    short, full = short_value(value), str(value)
    title = f" title='{html.escape(full)}'" if short != full else ""
    return f"<code{title}>{html.escape(short)}</code>"


def compared_text(cost: list[dict], n_deviations: int) -> str:
    """What the deviations table compared, from the files that are there: the chapters with a ``params/paper``
    file (compared) and those without (nothing to compare: no source scale declared apart from the book's)."""
    chapters = [c["chapter"] for c in cost]
    with_file = [c for c in chapters if paper_file(c).exists()]
    without = [c for c in chapters if c not in with_file]
    out = (f"{len(with_file)} of this source's {len(chapters)} chapters ha{'s' if len(with_file) == 1 else 've'} a "
           "source-scale file"
           + (f" ({', '.join(with_file)})" if with_file else "")
           + f", {n_deviations} parameter{'' if n_deviations == 1 else 's'} differ{'s' if n_deviations == 1 else ''}"
           + (" from it" if with_file else ""))
    if without:
        out += (f"; {len(without)} ha{'s' if len(without) == 1 else 've'} none ({', '.join(without)}): nothing to "
                "compare, their page's parameters are the only ones declared")
    return out + "."


def report_html(source: str, rows: list[dict], registry: dict, profile: str = "book", here: str = "book",
                warn: Callable[[str], None] | None = None) -> str:
    """The generated part of a source's report page (``warn``: how a bad ``benchmarks/paper_scale.json`` is said)."""
    import html
    import posixpath

    from .causes import explain
    from .scorecard import _chapter_link, badge, check_anchor, inline_html, quotes_html

    esc = html.escape
    rep = source_report(source, rows, registry, profile)
    meta = registry.get("sources", {}).get(source) or {}
    share = "n/a" if rep["decided"] == 0 else f"{100 * rep['share']:.0f}%"
    out = [f"<p class='sf-summary-label'><b>{esc(rep['label'])}</b> {esc(meta.get('title', ''))}: "
           f"{rep['reproduced']} of {rep['decided']} decided targets reproduced ({share}); "
           f"{rep['undecided']} undecided at this scale; {rep['not_reproduced']} not reproduced; "
           f"{rep['exact']} identities verified exactly and {rep['findings']} findings of this book, counted apart; "
           f"{rep['errata']} errata or conventions of the source proved. Source text: "
           f"<code>{esc(meta.get('seed', ''))}</code>.</p>",
           f"<p><i>Rule:</i> {esc(rep['rule'])}</p>"]
    by_target = {r["target"]: r for r in rows if r["source"] == source}
    recorded = paper.verdicts()
    scale_ids = [c["id"] for r in by_target.values() for c in r["checks"]
                 if c["verdict"] != "pass" and c.get("cause") == "scale"]
    fresh = paper.current(recorded)
    shown = sum(1 for r in by_target.values() for c in r["checks"]
                if c["verdict"] != "pass" and paper.decided_text(source, c["id"], recorded))
    decided = [fresh[f"{source}:{i}"]["verdict"] for i in scale_ids if f"{source}:{i}" in fresh]
    stale = sum(1 for i in scale_ids if f"{source}:{i}" in recorded and f"{source}:{i}" not in fresh)
    out.append(f"<p class='sf-paper-decided'>Checks undecided at this scale (cause <code>scale</code>): "
               f"{len(scale_ids)}; run at the source's scale by the current code (recorded paper runs, "
               f"<code>benchmarks/paper_claims/</code>, keyed to the code they ran): {len(decided)}, of which "
               f"{decided.count('pass')} pass and {decided.count('fail')} fail there; {stale} more have a record made "
               "by older code (stale: shown with what changed since, never read as a verdict). A paper run's "
               "verdict is shown beside every failing check it ran (whatever the check's cause): "
               f"{shown} failing check{'' if shown == 1 else 's'} of this source here; it does not change "
               "this edition's verdicts.</p>")
    body = []

    def paper_line(cid: str) -> str:
        text = paper.decided_text(source, cid, recorded)
        return f"<br><i>{esc(text)}</i>" if text else ""

    for t in rep["targets"]:
        row = by_target[t["target"]]
        whys = "".join(
            f"<li><a href='{esc(posixpath.relpath((chapter_of(registry, source, c['id']) or 'book/scorecard') + '.html', here))}"
            f"#{check_anchor(source, c['id'])}'>{esc(c['id'])}</a>: {inline_html(explain(c))}"
            f"{paper_line(c['id'])}</li>"
            for c in row["checks"] if c["verdict"] != "pass")
        # the short columns side by side; the long text (the source's words, the failing checks with their causes,
        # whys and paper results) on full-width rows under the target, as the chapters' check tables do (issue 41,
        # item 8: in a fifth column one why ran 30 lines at 1400 px)
        body.append(f"<tr class='sf-report-target'><td><b>{esc(t['target'])}</b></td><td>{esc(t['title'])}</td>"
                    f"<td>{badge(t['verdict'])}</td><td>{_chapter_link(row['chapter'], here)}</td></tr>")
        quotes = quotes_html(row, registry)
        if quotes:
            body.append(f"<tr class='sf-report-quote'><td colspan='4'><div class='sf-wrap'>{quotes}</div></td></tr>")
        if whys:
            body.append(f"<tr class='sf-report-failing'><td colspan='4'><div class='sf-wrap'><b>failing checks and "
                        f"their causes</b><ul>{whys}</ul></div></td></tr>")
    out.append("<h3>Claims and verdicts</h3><div class='sf-scroll' style='overflow-x:auto;max-width:100%'>"
               "<table class='sf-report'><thead><tr><th>target</th><th>what</th><th>verdict</th><th>chapter</th>"
               f"</tr></thead><tbody>{''.join(body)}</tbody></table></div>")
    close = "".join(
        f"<tr><td><a href='{esc(posixpath.relpath((chapter_of(registry, source, c['id']) or 'book/scorecard') + '.html', here))}"
        f"#{check_anchor(source, c['id'])}'>{esc(c['id'])}</a></td><td>{inline_html(c['measured'])}</td>"
        f"<td>{inline_html(c['criterion'])}</td><td>{inline_html(c['margin_text'])}</td>"
        f"<td>{100 * c['margin_rel']:.3g}%</td></tr>" for c in rep["closest"])
    n_margins = sum(1 for r in by_target.values() for c in r["checks"] if isinstance(c.get("margin_rel"), (int, float)))
    out.append("<h3>Closest calls</h3><p class='sf-closest'>The passing checks that sit nearest their criterion's edge "
               "(margin over the criterion's scale: the bound's size, the band's width, the tolerance), closest first: "
               "the verdicts the least change would move. "
               + (f"{len(rep['closest'])} of the {n_margins} checks with a relative margin in this build's records.</p>"
                  "<div class='sf-scroll' style='overflow-x:auto;max-width:100%'><table class='sf-closest'><thead><tr>"
                  "<th>check</th><th>measured</th><th>criterion</th><th>margin</th><th>relative</th></tr></thead>"
                  f"<tbody>{close}</tbody></table></div>" if close else
                  "None in this build's records (no passing check with a relative margin: records written before "
                  "margins were recorded have none).</p>"))
    devs = "".join(f"<tr><td>{esc(d['chapter'])}</td><td><code>{esc(d['parameter'])}</code></td>"
                   f"<td>{value_html(d['book'])}</td><td>{value_html(d['source'])}</td>"
                   f"<td>{esc(d['meaning'])}</td></tr>" for d in rep["deviations"])
    out.append("<h3>Deviations from the source's protocol</h3><p>Generated from each chapter's parameters cell "
               "(the book's scale) against <code>params/paper/</code> (the source's scale): "
               + compared_text(rep["cost"], len(rep["deviations"]))
               + ("</p><div class='sf-scroll' style='overflow-x:auto;max-width:100%'><table class='sf-deviations'>"
                  "<thead><tr><th>chapter</th><th>parameter</th><th>this page (book scale)</th><th>the source's scale (params/paper)</th><th>meaning (the parameters cell's comment)</th></tr>"
                  f"</thead><tbody>{devs}</tbody></table></div>" if devs else "</p>"))
    doc = paper_scale_doc(warn=warn)  # one wording of a cost, as in each re-run box (shallowflow.site.ext)
    cost_rows = "".join(
        f"<tr><td>{esc(c['chapter'])}</td><td>{'not in this build' if c['book_s'] is None else format(c['book_s'], '.1f')}"
        f"</td><td>{esc(paper_cost_text(c['chapter'], doc))}</td></tr>" for c in rep["cost"])
    out.append("<h3>Compute cost</h3><p>Book scale: each chapter's execution time in this build (the build report); "
               "source scale: measured, estimated from the chapter's work rule, or refused on this machine, as "
               "<code>benchmarks/paper_scale.json</code> records it.</p>"
               "<table class='sf-cost'><thead><tr><th>chapter</th><th>book scale (s, this build)</th>"
               f"<th>source scale</th></tr></thead><tbody>{cost_rows}</tbody></table>")
    env = environment(profile)
    if env:
        m = env["machine"]
        versions = ", ".join(f"{esc(k)} {esc(str(v))}" for k, v in env["versions"].items())
        out.append(f"<h3>Environment</h3><p>{esc(str(m.get('cpu', '')))}, {m.get('cores', '')} cores, "
                   f"{esc(str(m.get('system', '')))}, Python {esc(str(m.get('python', '')))}; engine "
                   f"{esc(str(m.get('engine', '')))} on {esc(str(m.get('device', '')))}; executed "
                   f"{esc(env['date'])} (code <code>{esc(env['code'])}</code>). Versions: {versions}.</p>")
    return "\n".join(out)
