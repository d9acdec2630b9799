"""A tiny Sphinx extension for the book.

Docstrings of the package are plain text with mathematical notation (|x|, D_+, <w, x>), not
reStructuredText: the API reference shows them verbatim, as literal blocks, so that no docstring
can break the warning-free build.

The scorecard page reads the claim records that the chapters write while they execute, so it must
be read (and executed) after every chapter.  Sphinx reads documents in sorted order and offers the
``env-before-read-docs`` event precisely to reorder them: pages named ``scorecard`` go last.
"""
from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


def _scorecard_last(app, env, docnames: list[str]) -> None:
    last = [d for d in docnames if d.rsplit("/", 1)[-1] == "scorecard"]
    for d in last:
        docnames.remove(d)
        docnames.append(d)


def _verbatim_docstring(app, what, name, obj, options, lines: list[str]) -> None:
    if any(line.strip() for line in lines):
        lines[:] = ["::", ""] + ["    " + line for line in lines] + [""]


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

        from shallowflow import claims as C

        reg = C.load_registry()
        here = posixpath.dirname(self.env.docname)
        rows = C.errata(reg)
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
                f"<small>{html.escape(r['title'])}</small></td><td>{html.escape(r['cause'])}</td>"
                f"<td>{html.escape(r['why'])}</td><td>{C._chapter_link(r['chapter'], here)}</td></tr>"
                for r in mine)
            out.append("<table class='sf-errata'><thead><tr><th>check</th><th>kind</th><th>the evidence</th>"
                       f"<th>chapter</th></tr></thead><tbody>{body}</tbody></table>")
        return [nodes.raw("", "\n".join(out), format="html")]


def _copy_scorecard_json(app, exception) -> None:
    """Copy the scorecard's JSON (written by the scorecard page) into the built site."""
    if exception is not None or app.builder.format != "html":
        return
    from shallowflow import claims as C

    profile = getattr(app.config, "shallowflow_profile", "book")
    src = C.repo_root() / "artifacts" / "scorecard" / f"{profile}.json"
    if src.exists():
        (Path(app.outdir) / "scorecard.json").write_text(src.read_text())


def _clean_page_context(app, pagename, templatename, context, doctree) -> None:
    """Two theme defects that the browser test of every page reports as script errors.

    sphinx-thebe registers its inline configuration script once per read phase, so a page declares
    ``const THEBE_JS_URL`` twice (a SyntaxError in the browser): keep the first copy of each script.
    The pydata theme leaves ``default_mode`` empty ("Got invalid theme mode"): say "auto".
    """
    seen, scripts = set(), []
    for js in context.get("script_files", []):
        key = (str(getattr(js, "filename", js) or ""),  # inline scripts come as filename None or ""
               tuple(sorted((k, str(v)) for k, v in getattr(js, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            scripts.append(js)
    if "script_files" in context:
        context["script_files"] = scripts
    if not context.get("default_mode"):
        context["default_mode"] = "auto"


def setup(app):
    app.connect("html-page-context", _clean_page_context)
    app.add_config_value("shallowflow_profile", "book", "env")
    app.add_directive("errata", ErrataDirective)
    app.connect("build-finished", _copy_scorecard_json)
    app.connect("env-before-read-docs", _scorecard_last)
    app.connect("autodoc-process-docstring", _verbatim_docstring)
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": True}
