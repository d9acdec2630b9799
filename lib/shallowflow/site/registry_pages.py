"""Sphinx extension: pages generated from the verdict registry (``verdicts/``).

``{errata}`` (the errata appendix): every check the registry expects to fail because of the source.
``{coverage}`` (the intro): per source, how many targets the registry lists, how many are checked,
how many are illustrations, how many are not attempted, and the chapters that check them.
"""
from __future__ import annotations

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)


class ErrataDirective(SphinxDirective):
    """``{errata}``: the errata table of every source, generated from the registry.

    One row per check that the registry expects to fail because of the source (cause ``erratum`` or
    ``convention``), with the evidence (``why``) and a link to the chapter that shows it, so the
    page cannot drift from the verdicts.  Failures of the book's own computation (``method``), of the
    specification (``spec``) and unexplained ones (``not-reproduced``) are not the source's errata and
    are listed on the scorecard instead.
    """

    has_content = False

    def run(self):
        import html
        import posixpath

        import os

        from shallowflow import verdicts as C

        reg = C.load_registry()
        here = posixpath.dirname(self.env.docname)
        rows = C.errata(reg, os.environ.get("SHALLOWFLOW_EDITION", "").strip() or "book")
        out = []
        for key in sorted(reg.get("sources", {})):
            mine = [r for r in rows if r["source"] == key]
            meta = reg["sources"][key] or {}
            out.append(f"<h2 id='errata-{key}'>{key}: {html.escape(meta.get('title', ''))}</h2>"
                       f"<p><code>{html.escape(meta.get('seed', ''))}</code></p>")
            if not mine:
                out.append("<p><i>No erratum or unstated convention registered for this source.</i></p>")
                continue
            body = "".join(
                f"<tr><td><b>{html.escape(r['target'])}</b>/{html.escape(r['check'])}<br>"
                f"<small>{html.escape(r['title'])}</small>{C.quotes_html(dict(r, source=key), reg)}</td>"
                f"<td>{html.escape(r['cause'])}</td>"
                f"<td>{C.inline_html(r['why'])}<br><small>evidence: {html.escape(', '.join(r['evidence']))}"
                f"{' (holds in this build)' if r['evidence_status'] == 'verified' else ''}</small></td>"
                f"<td>{C._chapter_link(r['chapter'], here, C.check_anchor(key, r['target'] + '/' + r['check']))}</td></tr>"
                for r in mine)
            out.append("<div class='sf-scroll'><table class='sf-errata'><thead><tr><th>check</th><th>kind</th>"
                       f"<th>the evidence</th><th>chapter</th></tr></thead><tbody>{body}</tbody></table></div>")
        return [nodes.raw("", "\n".join(out), format="html")]


class CoverageDirective(SphinxDirective):
    """``{coverage}``: per source, how many targets the registry lists and which chapters check them.

    Generated from the registry, so the intro cannot claim a coverage the chapters do not have; the
    verdicts themselves are on the scorecard (they exist only once the chapters have run).
    """

    has_content = False

    def run(self):
        import html
        import posixpath

        from shallowflow import verdicts as C

        from shallowflow.verdicts.paper import STALE, target_verdicts

        reg = C.load_registry()
        here = posixpath.dirname(self.env.docname)
        at_source = target_verdicts(reg)
        rows = []
        for key in sorted(reg.get("sources", {})):
            entries = {k.split(":", 1)[1]: e for k, e in reg["targets"].items() if k.startswith(key + ":")}
            checked = [e for e in entries.values() if e.get("checks")]
            shown = [e for e in entries.values() if e.get("illustration") and not e.get("checks")]
            chapters = []
            for e in entries.values():
                for c in [e.get("chapter")] + [(v or {}).get("chapter") for v in (e.get("checks") or {}).values()]:
                    if c and c not in chapters:
                        chapters.append(c)
            links = ", ".join(C._chapter_link(c, here) for c in chapters) or "<i>none yet</i>"
            paper = [v["verdict"] for k, v in at_source.items() if k.startswith(key + ":")]
            current = [v for v in paper if v != STALE]
            decided = ", ".join(f"{n} {v}" for v, n in C.verdict_counts([{"verdict": v} for v in current]).items())
            at_scale = (f"{len(current)} current ({decided})" if current else "0 current") + \
                f", {len(paper) - len(current)} stale, {len(entries) - len(paper)} without a record"
            rows.append(f"<tr><td><a href='{posixpath.relpath('book/scorecard.html', here)}#sf-source-{key}'>"
                        f"{key}</a></td><td>{html.escape((reg['sources'][key] or {}).get('title', ''))}</td>"
                        f"<td>{len(entries)}</td><td>{len(checked)}</td><td>{len(shown)}</td>"
                        f"<td>{len(entries) - len(checked) - len(shown)}</td><td>{html.escape(at_scale)}</td>"
                        f"<td>{links}</td></tr>")
        table = ("<div class='sf-scroll'><table class='sf-coverage'><thead><tr><th>source</th><th>title</th><th>targets</th>"
                 "<th>checked</th><th>illustrations</th><th>not attempted</th>"
                 "<th>at the source's scale (paper records)</th><th>chapters</th></tr></thead>"
                 f"<tbody>{''.join(rows)}</tbody></table></div>")
        return [nodes.raw("", table, format="html")]


class ReproductionReportDirective(SphinxDirective):
    """``{reproduction-report} 000``: the generated part of a source's reproduction report (its claims with
    verdicts and causes, deviations from the source's protocol, compute cost, environment, errata, and the
    ReScience-style summary label), from this build's records, schemas and profiles
    (:func:`shallowflow.verdicts.report.report_html`)."""

    required_arguments = 1
    has_content = False

    def run(self):
        import os
        import posixpath

        from shallowflow import verdicts as C
        from shallowflow.verdicts import report

        profile = os.environ.get("SHALLOWFLOW_EDITION", "").strip() or "book"
        source = self.arguments[0]
        reg = C.load_registry()
        if source not in reg.get("sources", {}):
            raise self.error(f"unknown source {source!r}: one of {', '.join(sorted(reg.get('sources', {})))}")
        rows = C.scorecard(profile)
        here = posixpath.dirname(self.env.docname)
        return [nodes.raw("", report.report_html(source, rows, reg, profile, here, warn=logger.warning), format="html")]


_ROWS: dict = {}


def check_result_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{check-result}`001:Fig4/first-layer```: the check's verdict, measurement, criterion and margin from this
    build's records (:func:`shallowflow.verdicts.report.check_result_html`), for a report page's sentence that
    states a result. A check the registry does not list is an error (a typo would show nothing)."""
    import os
    import posixpath

    from shallowflow import verdicts as C
    from shallowflow.verdicts import report

    source, _, check_id = text.strip().partition(":")
    reg = C.load_registry()
    target, _, check = check_id.partition("/")
    if check not in ((reg.get("targets", {}).get(f"{source}:{target}") or {}).get("checks") or {}):
        msg = inliner.reporter.error(f"check-result: no registered check {text!r} (write SOURCE:TARGET/check)",
                                     line=lineno)
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    profile = os.environ.get("SHALLOWFLOW_EDITION", "").strip() or "book"
    if profile not in _ROWS:
        _ROWS[profile] = C.scorecard(profile)
    here = posixpath.dirname(inliner.document.settings.env.docname)
    return [nodes.raw("", report.check_result_html(source, check_id, _ROWS[profile], reg, here), format="html")], []


def setup(app):
    app.add_role("check-result", check_result_role)
    app.add_directive("reproduction-report", ReproductionReportDirective)
    app.add_directive("errata", ErrataDirective)
    app.add_directive("coverage", CoverageDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
