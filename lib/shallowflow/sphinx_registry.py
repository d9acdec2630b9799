"""Sphinx extension: pages generated from the verdict registry (``verdicts/``).

``{coverage}`` (the intro): per source, how many targets the registry lists, how many are checked,
how many are illustrations, how many are not attempted, and the chapters that check them.
"""
from __future__ import annotations

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


class CoverageDirective(SphinxDirective):
    """``{coverage}``: per source, how many targets the registry lists and which chapters check them.

    Generated from the registry, so the intro cannot claim a coverage the chapters do not have; the
    verdicts themselves are on the scorecard (they exist only once the chapters have run).
    """

    has_content = False

    def run(self):
        import html
        import posixpath

        from shallowflow import claims as C

        reg = C.load_registry()
        here = posixpath.dirname(self.env.docname)
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
            rows.append(f"<tr><td><a href='{posixpath.relpath('book/scorecard.html', here)}#sf-source-{key}'>"
                        f"{key}</a></td><td>{html.escape((reg['sources'][key] or {}).get('title', ''))}</td>"
                        f"<td>{len(entries)}</td><td>{len(checked)}</td><td>{len(shown)}</td>"
                        f"<td>{len(entries) - len(checked) - len(shown)}</td><td>{links}</td></tr>")
        table = ("<table class='sf-coverage'><thead><tr><th>source</th><th>title</th><th>targets</th>"
                 "<th>checked</th><th>illustrations</th><th>not attempted</th><th>chapters</th></tr></thead>"
                 f"<tbody>{''.join(rows)}</tbody></table>")
        return [nodes.raw("", table, format="html")]


def setup(app):
    app.add_directive("coverage", CoverageDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
