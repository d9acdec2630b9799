"""Sphinx extension: every chapter page shows how to re-run it, generated from its parameter schema.

The box under a chapter's title gives the exact CLI and papermill commands and one row per parameter:
its book-scale value (the parameters cell), its smoke and paper values (``params/<profile>/``), what
it means and the values it accepts (``Spec.accepted()`` of the schema the chapter validates with),
then the rules relating parameters.  The ``{rerun-index}`` directive lists every chapter with its
profiles for the re-running appendix.  Both are generated at build time from
:mod:`shallowflow.params.chapters`, so the page cannot drift from the validator.
"""
from __future__ import annotations

import html

import yaml
from docutils import nodes
from sphinx.util.docutils import SphinxDirective


def _profile_values(chapter: str, profile: str) -> dict | None:
    from shallowflow.params import chapters

    path = chapters.profile_file(chapter, profile)
    return (yaml.safe_load(path.read_text()) or {}) if path.exists() else None


def _short(value, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _profile_cell(values: dict | None, name: str) -> str:
    if values is None:
        return "<i>no profile</i>" if name == "profile" else ""
    if name == "profile":
        return ""
    return f"<code>{html.escape(_short(values[name]))}</code>" if name in values else "<i>as book</i>"


def custom_run(chapter: str) -> tuple[str, dict]:
    """The re-run box's complete custom run (issue 41, item 9): one numeric parameter at its book value (the one to
    edit), the chapter's seeds replaced by as many others (the next ones after the book's largest: other draws, the
    same number of runs) and the check table written as JSON; returns the command and its overrides. A chapter
    without seeds (a deterministic one) has none to replace."""
    import json

    from shallowflow.params import chapters

    cell = chapters.parameters_cell(chapter)
    example = next((d for d in cell if d.name != "profile" and isinstance(d.value, (int, float))
                    and not isinstance(d.value, bool) and "seed" not in d.name), None)
    seeds = [d for d in cell if "seed" in d.name and isinstance(d.value, list) and d.value
             and all(isinstance(v, int) and not isinstance(v, bool) for v in d.value)]
    seeds = next((d for d in seeds if d.name == "seeds"), seeds[0] if seeds else None)
    parts, overrides = [f"shallowflow run {chapter}"], {}
    if example is not None:
        parts.append(f"-p {example.name} {example.text}")
        overrides[example.name] = example.value
    if seeds is not None:
        mine = [max(seeds.value) + 1 + i for i in range(len(seeds.value))]
        parts.append(f"-p {seeds.name} \"{json.dumps(mine)}\"")
        overrides[seeds.name] = mine
    parts.append(f"--json {chapter.rsplit('/', 1)[-1]}-checks.json")
    return " ".join(parts), overrides


def papermill_run(chapter: str) -> str:
    """The custom run of :func:`custom_run` with papermill itself (issue 41, item 10): the same values and seeds, the
    profile ``custom``.  papermill's ``-p`` reads a number or a word, so a list (the seeds) goes in as YAML (``-y``)."""
    import json

    _, overrides = custom_run(chapter)
    parts = ["papermill chapter.ipynb out.ipynb -p profile custom"]
    for name, value in overrides.items():
        if isinstance(value, (list, dict)):
            parts.append(f"-y \"{name}: {json.dumps(value)}\"")
        else:
            parts.append(f"-p {name} {value!r}")  # papermill reads 20 as an int, 0.001 as a float, True as a bool
    return " ".join(parts)


def estimate_html(chapter: str, overrides: dict) -> str:
    """What the custom run's ``--estimate`` line prints, computed when the page is built (no kernel: the
    validation and the chapter's work and memory rules; :func:`shallowflow.executor.estimate.estimate`), or its
    one-line refusal."""
    from shallowflow.executor import ChapterError
    from shallowflow.executor import estimate as E

    try:
        text = E.describe(E.estimate(chapter, "book", overrides))
    except ChapterError as e:
        text = f"refused: {e}"
    return (f"<p class='sf-estimate-title'><b>Its estimate</b> (what the <code>--estimate</code> line prints, "
            f"computed when this page was built):</p><pre class='sf-estimate'>{html.escape(text)}</pre>")


def _recipe(chapter: str):
    """The chapter's recipe for a GPU or a cluster (:mod:`shallowflow.executor.recipes`), or None."""
    from shallowflow.executor import recipes

    return recipes.plan(chapter) if chapter in recipes.RECIPES else None


def recipe_html(plan) -> str:
    """The figures a recipe rests on, each saying how it is derived (empty without a recipe)."""
    if plan is None:
        return ""
    from shallowflow.executor import recipes

    items = "".join(f"<li>{html.escape(t)}</li>" for t in recipes.describe(plan))
    cmds = "".join(f"<li><code>{html.escape(c)}</code></li>" for c in plan.commands())
    where = ("is refused on this machine by its own rule" if plan.refusal else
             "fits this machine, but needs a larger one in general")
    return (f"<div class='sf-recipe'><p><b>Beyond this machine.</b> The run at the source's scale named below {where}; "
            f"these commands run it where the resources are (the flags describe that machine and travel with "
            f"the run to a scheduler's worker; <code>{html.escape(recipes.SCHEDULER)}</code> is your scheduler's "
            f"address):</p><ul class='sf-recipe-commands'>{cmds}</ul><ul class='sf-recipe-figures'>{items}</ul>"
            "</div>")


def rerun_box(chapter: str) -> str:
    """The HTML of one chapter's re-run box: the commands, the cost at this page's scale and the source's (with
    a link to the chapter's row of the build report), the parameters and their rules."""
    import posixpath

    from shallowflow.params import chapters
    from shallowflow.site.ext import cost_html

    schema, rules = chapters.schema(chapter)
    cell = chapters.parameters_cell(chapter)
    smoke, paper = _profile_values(chapter, "smoke"), _profile_values(chapter, "paper")
    custom, overrides = custom_run(chapter)
    lines = [f"shallowflow run {chapter}                      # book scale: this page",
             f"shallowflow run {chapter} --profile smoke      # the CI tier, seconds"]
    if paper is not None:
        lines.append(f"shallowflow run {chapter} --profile paper      # the source's own scale")
    recipe = _recipe(chapter)
    if recipe is not None:
        lines += ["# the source's scale beyond this machine: one command for a GPU machine, one for a Dask cluster's",
                  "# worker (the machine described by the flags; the figures are under the cost line)",
                  f"{recipe.gpu}   # a GPU machine", f"{recipe.cluster}   # a Dask cluster"]
    lines += ["# a custom run: your values, your seeds, the check table as JSON (edit any -p value; the table below",
              "# lists every parameter), then its cost before you start it",
              f"{custom}",
              f"{custom.split(' --json ')[0]} --estimate   # its cost first; no kernel"]
    lines += ["shallowflow params " + chapter + "                   # the table below, in the terminal",
              "", "# or with papermill itself:",
              f"jupytext --to ipynb book/{chapter}.py -o chapter.ipynb",
              papermill_run(chapter)]
    rows = []
    for d in cell:
        spec = schema.get(d.name)
        accepted = spec.accepted() if spec is not None else "(not validated)"
        meaning = (spec.doc if spec is not None and spec.doc else d.comment)
        cols = [f"<code>{html.escape(d.name)}</code>", f"<code>{html.escape(_short(d.value))}</code>",
                _profile_cell(smoke, d.name), _profile_cell(paper, d.name),
                html.escape(meaning), html.escape(accepted)]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cols) + "</tr>")
    rules_html = ""
    if rules:
        items = "".join(f"<li><code>{html.escape(', '.join(r.names))}</code>: {html.escape(r.message)}</li>"
                        for r in rules)
        rules_html = f"<p>Rules between parameters (checked before any training):</p><ul>{items}</ul>"
    return ('<details class="sf-rerun admonition tip"><summary class="admonition-title">Re-run this chapter '
            '(commands and parameters)</summary>'
            f'<pre>{html.escape(chr(10).join(lines))}</pre>'
            f'{cost_html(chapter, posixpath.dirname("book/" + chapter))}'
            f'{recipe_html(recipe)}'
            f'{estimate_html(chapter, overrides)}'
            '<div class="sf-scroll"><table class="sf-params"><thead><tr><th>parameter</th><th>book</th><th>smoke</th><th>paper</th>'
            f'<th>meaning</th><th>accepted</th></tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
            f'{rules_html}<p>A value outside its range stops the run before any training, with a message '
            'naming the parameter; values other than a profile\'s make the run <i>custom</i> (its verdicts are '
            'shown, not compared with the registry).</p></details>')


NOTEBOOKS = "notebooks"  # the executed notebooks in the built site: notebooks/<part>/<chapter>.ipynb


def notebook_link(chapter: str) -> str:
    """A download link to the executed notebook this page was rendered from (copied into the site by
    :func:`_copy_notebooks`)."""
    import posixpath

    href = posixpath.relpath(f"{NOTEBOOKS}/{chapter}.ipynb", posixpath.dirname(f"book/{chapter}"))
    name = chapter.rsplit("/", 1)[-1] + ".ipynb"
    return (f"<p class='sf-notebook'>The executed notebook of this page (every output as built): "
            f"<a class='sf-notebook-link' href='{html.escape(href)}' download='{html.escape(name)}'>"
            f"<code>{html.escape(name)}</code></a>.</p>")


def _copy_notebooks(app, exception) -> None:
    """Copy each chapter's executed notebook (``artifacts/runs/<edition>/``) into the built site."""
    import shutil
    from pathlib import Path

    from shallowflow.params import chapters
    from shallowflow.site.ext import runs_dir

    if exception is not None or app.builder.format != "html":
        return
    for chapter in chapters.all_chapters():
        src = runs_dir() / f"{chapter}.ipynb"
        if src.exists():
            dst = Path(app.outdir) / NOTEBOOKS / f"{chapter}.ipynb"
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)


def _insert_box(app, doctree, docname: str) -> None:
    from shallowflow.params import chapters

    chapter = docname.removeprefix("book/")
    if app.builder.format != "html" or chapter not in chapters.all_chapters():
        return
    box = nodes.raw("", rerun_box(chapter) + notebook_link(chapter), format="html")
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None:
        doctree.insert(0, box)
        return
    title = next(iter(section.findall(nodes.title)), None)
    section.insert(section.index(title) + 1 if title is not None else 0, box)


class RerunIndex(SphinxDirective):
    """``{rerun-index}``: every chapter, its profiles and its re-run command."""

    def run(self):
        from shallowflow.params import chapters

        rows = []
        for chapter in chapters.all_chapters():
            profiles = ["book"] + [p for p in ("smoke", "paper") if chapters.profile_file(chapter, p).exists()]
            n = len(chapters.parameters_cell(chapter))
            rows.append(f"<tr><td><a href='../{html.escape(chapter)}.html'>{html.escape(chapter)}</a></td>"
                        f"<td>{', '.join(profiles)}</td><td>{n}</td>"
                        f"<td><code>shallowflow run {html.escape(chapter)}</code></td></tr>")
        table = ("<div class='sf-scroll'><table class='sf-rerun-index'><thead><tr><th>chapter</th><th>profiles</th><th>parameters</th>"
                 f"<th>command</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>")
        return [nodes.raw("", table, format="html")]


def setup(app):
    app.connect("doctree-resolved", _insert_box)
    app.connect("build-finished", _copy_notebooks)
    app.add_directive("rerun-index", RerunIndex)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
