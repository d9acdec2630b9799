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
import re
from pathlib import Path

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from shallowflow.verdicts import report
from shallowflow.verdicts.report import PAPER_SCALE, duration, paper_cost_text  # noqa: F401  (one wording of a cost)

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
    # a colon fence: a backtick fence's opening line may not hold backticks (the title's `{name}`), and the
    # banner then showed as a raw paragraph
    return (f":::{{admonition}} Edition: profile `{name}`\n:class: warning\n"
            f"This page was executed with the `{name}` profile (`params/{name}/`), {scale}, not with the book's "
            f"parameters. Its verdicts are {compared}; the book edition shows the book scale.\n:::")


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
    _hide_report_printout(nb)
    heading = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"), -1)
    box = _targets_box(docname)
    if box:
        nb.cells.insert(heading + 1, nbformat.v4.new_markdown_cell(box))
    if edition() != "book":
        nb.cells.insert(heading + 1, nbformat.v4.new_markdown_cell(_banner(edition())))
    source[0] = nbformat.writes(nb)


def _hide_report_printout(nb) -> None:
    """One presentation per verdict: the page shows the check table (HTML, with causes and whys), not also the
    plain-text report that the cell tagged nbval-check-output prints for nbval to compare (its output stays in the
    executed notebook, which every page links)."""
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        if cell.cell_type == "code" and "nbval-check-output" in tags and "claims.report()" in cell.source:
            cell.metadata["tags"] = [*tags, "remove-output"]


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

    from shallowflow.verdicts import load_registry
    from shallowflow.verdicts.scorecard import provenance, provenance_html, quotes_html

    registry = load_registry()

    records = _scorecard_rows()
    prov = lambda t: provenance_html(provenance(records.get(f"{t['source']}:{t['target']}", t)), here)  # noqa: E731
    rows = "".join(
        f"<tr class='sf-target-here' data-target='{esc(t['source'])}:{esc(t['target'])}' "
        f"data-verdict='{esc(t['verdict'])}'><td><a href='{esc(posixpath.relpath('book/scorecard.html', here))}"
        f"#{esc(t['source'])}-{esc(t['target'])}'><b>{esc(t['target'])}</b></a></td><td>{esc(t['title'])}</td>"
        f"<td>{badge(t['verdict'])}</td><td>{sum(c['verdict'] == 'pass' for c in t['checks'])}/{len(t['checks'])}</td>"
        f"<td class='sf-provenance'>{prov(t)}</td>"
        f"<td>{', '.join('this page' if d == docname else link(d) for d in (t.get('chapters') or [t['chapter']]))}"
        f"</td></tr>" + (f"<tr class='sf-quote-row'><td colspan='6'>{quotes_html(t, registry)}</td></tr>"
                         if quotes_html(t, registry) else "") for t in mine)
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


def toc_order() -> list[str]:
    """The chapters in the book's order (``_toc.yml``), as ``<part>/<chapter>``; the scorecard last."""
    from shallowflow.verdicts import repo_root

    toc = (repo_root() / "_toc.yml").read_text()
    names = [f.removeprefix("book/") for f in re.findall(r"file: (\S+)", toc)]
    return [n for n in names if "/" in n and not n.startswith("appendix/")] + ["scorecard"]


def build_row_id(chapter: str) -> str:
    """The anchor of a chapter's row in the build report (each re-run box links to it)."""
    return "build-" + re.sub(r"[^A-Za-z0-9]+", "-", chapter).strip("-").lower()


def build_report_doc() -> dict | None:
    path = runs_dir() / "build-report.json"
    return json.loads(path.read_text()) if path.exists() else None


def paper_scale_doc() -> dict | None:
    """``benchmarks/paper_scale.json`` (the paper edition's cost per chapter) when it is there (a file that is not
    JSON: a warning, and the costs are shown as not measured)."""
    from shallowflow.verdicts import repo_root

    return report.paper_scale_doc(repo_root(), warn=logger.warning)


def cost_html(chapter: str, here: str) -> str:
    """A chapter's cost at both scales, for its re-run box: this build's execution time (the build report) and
    the paper scale's (``benchmarks/paper_scale.json``), with a link to its row in the build report."""
    import posixpath

    rep = build_report_doc()
    row = next((c for c in (rep or {}).get("chapters", []) if c["chapter"] == chapter), None)
    link = posixpath.relpath("book/appendix/build-report.html", here) + "#" + build_row_id(chapter)
    if row is not None:
        m = rep.get("machine", {})
        book = (f"{duration(row['wall_s'])} in this build ({html.escape(rep.get('profile', edition()))} edition, "
                f"{html.escape(str(m.get('cpu', '?')))}, {m.get('cores', '?')} cores, {rep.get('workers', '?')} "
                f"worker(s), kernel start included)")
    else:
        book = "not measured (this site was not built by the executor)"
    paper = paper_cost_text(chapter, paper_scale_doc())
    return (f"<p class='sf-cost'><b>Cost.</b> At this page's scale: {book}. At the source's scale: "
            f"{html.escape(paper)}.{html.escape(beyond_text(chapter))} <a href='{html.escape(link)}'>This chapter in "
            f"the build report</a>.</p>")


def beyond_text(chapter: str) -> str:
    """For a chapter with a recipe (:mod:`shallowflow.executor.recipes`): the run beyond this machine, its work and
    its CPU time, pointing at the box's commands; empty otherwise."""
    from shallowflow.executor import recipes
    from shallowflow.executor.estimate import _hours

    if chapter not in recipes.RECIPES:
        return ""
    p = recipes.plan(chapter)
    work = f"{p.work:.3g} work units" if p.work is not None else "no work estimate"
    cpu = f", about {_hours(p.seconds)} on one CPU kernel of the 2-core machine" if p.seconds is not None else ""
    return (f" Beyond this machine ({p.recipe.what}): {work}{cpu}; the commands for a GPU and for a Dask cluster, "
            f"and how each figure is derived, are in this box.")


class BuildReport(SphinxDirective):
    """The build report of this edition: execution time per page in the book's order, the cost at the source's
    scale (``benchmarks/paper_scale.json``), the machine, the versions."""

    def run(self):
        import posixpath

        rep = build_report_doc()
        if rep is None:
            logger.warning(f"no build report {runs_dir() / 'build-report.json'}: the site is built by `make book` "
                           f"(`shallowflow run --all`)", location=self.env.docname)
            return [nodes.paragraph(text="No build report: this site was not built by the executor.")]
        esc = html.escape
        m = rep["machine"]
        start = _started_offsets(rep["chapters"])
        order = {c: i for i, c in enumerate(toc_order())}
        here = posixpath.dirname(self.env.docname)
        paper = paper_scale_doc()

        def page(c: str) -> str:
            href = posixpath.relpath(f"book/{c}.html", here)
            return f"<a href='{esc(href)}'>{esc(c)}</a>"

        rows = "".join(f"<tr id='{build_row_id(c['chapter'])}'><td>{page(c['chapter'])}</td>"
                       f"<td style='text-align:right'>{c['wall_s']:.1f}</td>"
                       f"<td style='text-align:right'>{start.get(c['chapter'], '')}</td>"
                       f"<td style='text-align:right'>{c['checks']}</td><td>{esc(str(c['host']))}:{c['pid']}</td>"
                       f"<td>{esc(paper_cost_text(c['chapter'], paper))}</td></tr>"
                       for c in sorted(rep["chapters"], key=lambda c: (order.get(c["chapter"], len(order)), c["chapter"])))
        total = sum(c["wall_s"] for c in rep["chapters"])
        versions = ", ".join(f"{esc(k)} {esc(v)}" for k, v in rep["versions"].items())
        where = (f"Costs at the source's scale: <code>{PAPER_SCALE}</code>, machine "
                 f"{esc(str(paper.get('machine', '?')))}." if paper else
                 f"Costs at the source's scale: not measured (no <code>{PAPER_SCALE}</code>).")
        out = (f"<p>Edition <b>{esc(rep['profile'])}</b>, executed {esc(rep['date'])} (code version "
               f"<code>{esc(rep['code'])}</code>) on {rep['workers']} worker process(es) of a "
               f"{esc(str(rep['cluster']))}: {rep['wall_s']:.1f} s of wall time for {total:.1f} s of page "
               f"execution ({total / max(rep['wall_s'], 1e-9):.2f} pages at once on average). Pages in the "
               f"book's order.</p>"
               f"<div class='sf-scroll'><table class='sf-build-report'><thead><tr><th>page</th><th>execution (s)</th>"
               f"<th>started (s)</th><th>checks</th><th>worker</th><th>at the source's scale</th></tr></thead>"
               f"<tbody>{rows}</tbody></table></div><p>{where}</p>"
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


# Modules that moved into sub-packages (their old names stay importable as re-exports): a page's
# {py:func}`shallowflow.build.longest_first` still links to the function's entry in the API appendix.
MOVED = {"shallowflow.build": "shallowflow.site.build", "shallowflow.sphinx_ext": "shallowflow.site.ext",
         "shallowflow.sphinx_rerun": "shallowflow.site.rerun", "shallowflow.sphinx_registry": "shallowflow.site.registry_pages"}


def moved_target(name: str) -> str | None:
    """The current name of a dotted name under a module of :data:`MOVED` (None when it names no moved module)."""
    for old, new in MOVED.items():
        if name == old or name.startswith(old + "."):
            return new + name[len(old):]
    return None


def _resolve_moved(app, env, node, contnode):
    """``missing-reference``: resolve a Python reference by a moved module's old name under its new one."""
    new = moved_target(node.get("reftarget", "")) if node.get("refdomain") == "py" else None
    if new is None:
        return None
    return env.get_domain("py").resolve_xref(env, node.get("refdoc", ""), app.builder, node["reftype"], new, node,
                                              contnode)


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


#: the source each part of the book reproduces (its folder under book/ and lib/shallowflow/experiments/)
PART_SOURCE = {"brisbois-thesis": "000", "weakly-interacting": "001", "early-alignment": "002",
               "orthogonal-inputs": "003", "balboni-thesis": "004", "deep": "004"}
#: a citation of the source's reproduction specification: "spec section 7", "the spec's section 2.2",
#: "spec erratum 9", "the spec's erratum (b)", the authors' cell "EXP1.a"
SPEC_CITATION = re.compile(r"spec(?:'s|\u2019s)?\s+(?:section\s+(?P<section>\d+(?:\.\d+)?)|erratum\s+(?P<erratum>\d+|\([a-e]\)))"
                           r"|(?P<cell>EXP1\.a)")
SPEC_PAGE = "book/appendix/spec-entries"


def spec_anchor(key: str, kind: str, label: str) -> str:
    """The anchor of a cited specification entry on the spec-entries appendix (``spec-004-erratum-9``)."""
    return f"spec-{key}-{kind}-" + re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-").lower()


def citation_anchor(key: str, m: "re.Match") -> str:
    """The anchor a :data:`SPEC_CITATION` match of source ``key`` links to."""
    if m.group("section"):
        return spec_anchor(key, "section", m.group("section"))
    if m.group("erratum"):
        return spec_anchor(key, "erratum", m.group("erratum").strip("()"))
    return spec_anchor(key, "cell", m.group("cell"))


def _spec_anchors() -> set[str]:
    from shallowflow.verdicts import repo_root

    path = repo_root() / f"{SPEC_PAGE}.md"
    return set(re.findall(r"id='([^']+)'", path.read_text(encoding="utf-8"))) if path.exists() else set()


def _link_spec_citations(app, doctree, docname: str) -> None:
    """On a page of a source's part, every citation of its specification ("spec erratum 9") links to the entry's
    text on the spec-entries appendix (only where that entry is published there)."""
    import posixpath

    parts = docname.split("/")
    key = PART_SOURCE.get(parts[1]) if len(parts) == 3 and parts[0] == "book" else None
    if key is None or app.builder.format != "html":
        return
    anchors = _spec_anchors()
    href = posixpath.relpath(f"{SPEC_PAGE}.html", posixpath.dirname(docname))
    skip = (nodes.literal, nodes.reference, nodes.FixedTextElement, nodes.raw, nodes.title)
    for text in list(doctree.findall(nodes.Text)):
        parent = text.parent
        if parent is None or any(isinstance(a, skip) for a in _ancestors(parent)):
            continue
        s, pos, new = str(text), 0, []
        for m in SPEC_CITATION.finditer(s):
            anchor = citation_anchor(key, m)
            if anchor not in anchors:
                continue
            new += [nodes.Text(s[pos:m.start()]),
                    nodes.reference("", m.group(0), refuri=f"{href}#{anchor}", classes=["sf-spec-cite"])]
            pos = m.end()
        if new:
            parent.replace(text, new + [nodes.Text(s[pos:])])


def _ancestors(node):
    while node is not None:
        yield node
        node = node.parent


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
    app.connect("doctree-resolved", _link_spec_citations)
    app.connect("missing-reference", _resolve_moved)
    app.add_config_value("shallowflow_profile", "book", "env")
    app.connect("build-finished", _copy_scorecard_json)
    app.connect("env-before-read-docs", _scorecard_last)
    app.connect("autodoc-process-docstring", _verbatim_docstring)
    app.connect("source-read", _executed_source)
    app.connect("config-inited", _edition_title)
    app.add_directive("build-report", BuildReport)
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": True}
