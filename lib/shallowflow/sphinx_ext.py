"""A tiny Sphinx extension for the book.

Docstrings of the package are plain text with mathematical notation (|x|, D_+, <w, x>), not
reStructuredText: the API reference shows them verbatim, as literal blocks, so that no docstring
can break the warning-free build.

The site is built from executed notebooks (``execute_notebooks: "off"`` in ``_config.yml``): the
executor (:mod:`shallowflow.executor`, ``shallowflow run --all``) executes every chapter, then the
scorecard, into ``artifacts/runs/<edition>/``, and this extension hands each chapter's executed
notebook to myst-nb in place of its Jupytext source (``source-read``), so the toc's docnames stay
``book/<part>/<chapter>`` and every number comes from this build's execution.  The edition is the
profile the notebooks ran with (``SHALLOWFLOW_EDITION``, default ``book``); an edition other than
``book`` says on every page and in the title which scale it shows.  A chapter without an executed
notebook is a warning, so a ``-W`` build fails instead of showing an unexecuted page.

The ``{build-report}`` directive renders ``artifacts/runs/<edition>/build-report.json``: each page's
execution time, the machine and the package versions.
"""
from __future__ import annotations

import html
import json
import os
from pathlib import Path

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)


def edition() -> str:
    return os.environ.get("SHALLOWFLOW_EDITION", "").strip() or "book"


def runs_dir() -> Path:
    from shallowflow.verdicts import repo_root

    return repo_root() / "artifacts" / "runs" / edition()


def read_chapter(text: str, fmt: str = "py:percent"):
    """myst-nb reader of ``.py`` chapters: an executed notebook (JSON, put there by ``source-read``) or,
    for a chapter read without one, its Jupytext percent source."""
    import jupytext
    import nbformat

    if text.lstrip().startswith("{"):
        return nbformat.reads(text, as_version=4)
    return jupytext.reads(text, fmt=fmt)


def _banner(name: str) -> str:
    scale = "the sources' own scale" if name == "paper" else "a reduced scale"
    compared = ("compared with the registry's smoke verdicts" if name == "smoke"
                else "shown, not compared with the registry")
    return (f"```{{admonition}} Edition: profile `{name}`\n:class: warning\n"
            f"This page was executed with the `{name}` profile (`params/{name}/`), {scale}, not with the book's "
            f"parameters. Its verdicts are {compared}; the book edition shows the book scale.\n```")


def _executed_source(app, docname: str, source: list) -> None:
    if not str(app.env.doc2path(docname)).endswith(".py"):
        return
    path = runs_dir() / (docname.removeprefix("book/") + ".ipynb")
    if not path.exists():
        logger.warning(f"{docname}: no executed notebook {path}; execute the chapters first "
                       f"(`shallowflow run --all --profile {edition()}`, or `make book`)", location=docname)
        return
    import nbformat

    nb = nbformat.reads(path.read_text(), as_version=4)
    _hide_injected_parameters(nb, shown=edition() != "book")
    heading = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"), -1)
    box = _targets_box(docname)
    if box:
        nb.cells.insert(heading + 1, nbformat.v4.new_markdown_cell(box))
    if edition() != "book":
        nb.cells.insert(heading + 1, nbformat.v4.new_markdown_cell(_banner(edition())))
    source[0] = nbformat.writes(nb)


def _scorecard_doc() -> dict | None:
    from shallowflow.verdicts import repo_root

    path = repo_root() / "artifacts" / "scorecard" / f"{edition()}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _targets_box(docname: str) -> str:
    """The verdict of every target this chapter checks, as the scorecard computes it from all the chapters
    holding its checks (so a target reads the same here as on the scorecard), with links to those chapters."""
    import posixpath

    from shallowflow.verdicts import badge

    doc = _scorecard_doc()
    if doc is None:
        return ""
    mine = [t for t in doc["targets"] if docname in (t.get("chapters") or [t.get("chapter")])]
    if not mine:
        return ""
    here = posixpath.dirname(docname)
    esc = html.escape

    def link(d: str) -> str:
        return f"<a href='{esc(posixpath.relpath(d + '.html', here))}'>{esc(d.rsplit('/', 1)[-1])}</a>"

    from shallowflow.verdicts.scorecard import provenance, provenance_html

    records = _scorecard_rows()
    prov = lambda t: provenance_html(provenance(records.get(f"{t['source']}:{t['target']}", t)), here)  # noqa: E731
    rows = "".join(
        f"<tr class='sf-target-here' data-target='{esc(t['source'])}:{esc(t['target'])}' "
        f"data-verdict='{esc(t['verdict'])}'><td><a href='{esc(posixpath.relpath('book/scorecard.html', here))}"
        f"#{esc(t['source'])}-{esc(t['target'])}'><b>{esc(t['target'])}</b></a></td><td>{esc(t['title'])}</td>"
        f"<td>{badge(t['verdict'])}</td><td>{sum(c['verdict'] == 'pass' for c in t['checks'])}/{len(t['checks'])}</td>"
        f"<td class='sf-provenance'>{prov(t)}</td>"
        f"<td>{', '.join('this page' if d == docname else link(d) for d in (t.get('chapters') or [t['chapter']]))}"
        f"</td></tr>" for t in mine)
    return ("<div class='sf-targets'><p><b>Targets on this page</b>, with the verdict the scorecard computes from "
            "every chapter holding their checks, and where it comes from (data, scale, runs):</p>"
            "<div class='sf-scroll'><table class='sf-targets'><thead><tr><th>target</th><th>what</th><th>verdict</th>"
            "<th>checks passed</th><th>data, scale, runs</th>"
            f"<th>checked in</th></tr></thead><tbody>{rows}</tbody></table></div></div>")


_ROWS: dict = {}


def _scorecard_rows() -> dict:
    """This edition's scorecard rows by ``source:target`` (the checks with their run counts), read once per build."""
    if edition() not in _ROWS:
        from shallowflow.verdicts import scorecard

        _ROWS[edition()] = {f"{r['source']}:{r['target']}": r for r in scorecard(edition())}
    return _ROWS[edition()]


def _hide_injected_parameters(nb, shown: bool) -> None:
    """Papermill's injected-parameters cell repeats the parameters cell in the book edition: hide it there
    (and wherever the parameters cell itself is hidden, as on the scorecard); another edition shows it,
    since it holds the values that edition ran with."""
    tags = lambda c: c.get("metadata", {}).get("tags", [])
    hidden = any("parameters" in tags(c) and "remove-cell" in tags(c) for c in nb.cells)
    for c in nb.cells:
        if "injected-parameters" in tags(c) and (hidden or not shown):
            c.setdefault("metadata", {}).setdefault("tags", []).append("remove-cell")


def _edition_title(app, config) -> None:
    config.shallowflow_profile = edition()
    if edition() != "book":
        config.html_title = f"{config.html_title or config.project} ({edition()} edition)"


class BuildReport(SphinxDirective):
    """The build report of this edition: execution time per page, the machine, the versions."""

    def run(self):
        path = runs_dir() / "build-report.json"
        if not path.exists():
            logger.warning(f"no build report {path}: the site is built by `make book` "
                           f"(`shallowflow run --all`)", location=self.env.docname)
            return [nodes.paragraph(text="No build report: this site was not built by the executor.")]
        rep = json.loads(path.read_text())
        esc = html.escape
        m = rep["machine"]
        start = _started_offsets(rep["chapters"])
        rows = "".join(f"<tr><td>{esc(c['chapter'])}</td><td style='text-align:right'>{c['wall_s']:.1f}</td>"
                       f"<td style='text-align:right'>{start.get(c['chapter'], '')}</td>"
                       f"<td style='text-align:right'>{c['checks']}</td><td>{esc(str(c['host']))}:{c['pid']}</td></tr>"
                       for c in sorted(rep["chapters"], key=lambda c: (c["chapter"] == "scorecard", c["chapter"])))
        total = sum(c["wall_s"] for c in rep["chapters"])
        versions = ", ".join(f"{esc(k)} {esc(v)}" for k, v in rep["versions"].items())
        out = (f"<p>Edition <b>{esc(rep['profile'])}</b>, executed {esc(rep['date'])} (code version "
               f"<code>{esc(rep['code'])}</code>) on {rep['workers']} worker process(es) of a "
               f"{esc(str(rep['cluster']))}: {rep['wall_s']:.1f} s of wall time for {total:.1f} s of page "
               f"execution ({total / max(rep['wall_s'], 1e-9):.2f} pages at once on average).</p>"
               f"<div class='sf-scroll'><table class='sf-build-report'><thead><tr><th>page</th><th>execution (s)</th><th>started (s)</th>"
               f"<th>checks</th><th>worker</th></tr></thead><tbody>{rows}</tbody></table></div>"
               f"<p>Machine: {esc(m['cpu'])}, {m['cores']} cores, {esc(m['system'])}, Python {esc(m['python'])}; "
               f"engine {esc(m['engine'])} on {esc(m['device'])}; load average at the end "
               f"{', '.join(map(str, m.get('load', [])))}.</p><p>Versions: {versions}.</p>")
        return [nodes.raw("", out, format="html")]


def _started_offsets(rows: list[dict]) -> dict[str, str]:
    """Each page's start, in whole seconds after the first page started (the build starts the longest
    chapters first; this column shows it)."""
    import datetime as dt

    when = {}
    for c in rows:
        try:
            when[c["chapter"]] = dt.datetime.strptime(c["started"], "%Y-%m-%dT%H:%M:%S%z")
        except (KeyError, TypeError, ValueError):
            continue
    if not when:
        return {}
    first = min(when.values())
    return {k: f"{(v - first).total_seconds():.0f}" for k, v in when.items()}


def _scorecard_last(app, env, docnames: list[str]) -> None:
    last = [d for d in docnames if d.rsplit("/", 1)[-1] == "scorecard"]
    for d in last:
        docnames.remove(d)
        docnames.append(d)


def _verbatim_docstring(app, what, name, obj, options, lines: list[str]) -> None:
    if any(line.strip() for line in lines):
        lines[:] = ["::", ""] + ["    " + line for line in lines] + [""]


def _copy_scorecard_json(app, exception) -> None:
    """Copy the scorecard's JSON (written by the scorecard page) into the built site."""
    if exception is not None or app.builder.format != "html":
        return
    from shallowflow import verdicts as C

    profile = getattr(app.config, "shallowflow_profile", "book")
    src = C.repo_root() / "artifacts" / "scorecard" / f"{profile}.json"
    if src.exists():
        from shallowflow.verdicts import report

        doc = json.loads(src.read_text())
        reg, rows = C.load_registry(), C.scorecard(profile)
        doc["reports"] = {key: report.source_report(key, rows, reg, profile) for key in sorted(reg.get("sources", {}))}
        for rep in doc["reports"].values():  # JSON has no NaN
            rep["share"] = None if rep["share"] != rep["share"] else rep["share"]
        (Path(app.outdir) / "scorecard.json").write_text(json.dumps(doc, indent=1, allow_nan=False, default=str))


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


def _static_files(app, config) -> None:
    """The book's own style sheet and script (``book/_static/``): wide tables scroll sideways and show that they
    do, long words wrap (``tests/site/test_layout.py`` measures the pages at 1400 px and 390 px)."""
    from shallowflow.verdicts import repo_root

    static = str(repo_root() / "book" / "_static")
    if static not in config.html_static_path:
        config.html_static_path.append(static)


def setup(app):
    app.connect("config-inited", _static_files)
    app.add_css_file("shallowflow.css")
    app.add_js_file("shallowflow.js")
    app.connect("html-page-context", _clean_page_context)
    app.add_config_value("shallowflow_profile", "book", "env")
    app.connect("build-finished", _copy_scorecard_json)
    app.connect("env-before-read-docs", _scorecard_last)
    app.connect("autodoc-process-docstring", _verbatim_docstring)
    app.connect("source-read", _executed_source)
    app.connect("config-inited", _edition_title)
    app.add_directive("build-report", BuildReport)
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": True}
