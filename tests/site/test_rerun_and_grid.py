"""Issue 41 leftovers and issue 39 item 4 on the built site: every re-run box's papermill line carries the same values
and seeds as its CLI custom run; the three chapters refused here at the source's scale show their GPU and cluster
commands with their figures; the adler page shows which grid rate won each cell and whether it is at an edge."""
import html as h
import re
import shlex

import pytest
import yaml

from shallowflow.run import cli

HTML = cli.repo_root() / "_build" / "html"
RECIPES = ("early-alignment/staircase", "balboni-thesis/adler", "balboni-thesis/pl-training")


@pytest.fixture(scope="module")
def site():
    if not (HTML / "index.html").exists():
        pytest.fail("no built site in _build/html: run `make book` first")
    return HTML


def _pre(site, chapter):
    page = (site / "book" / f"{chapter}.html").read_text(encoding="utf-8")
    box = re.search(r'<details class="sf-rerun.*?</details>', page, re.S)
    assert box, f"{chapter}: no re-run box"
    return page, box.group(0), h.unescape(re.search(r"<pre[^>]*>(.*?)</pre>", box.group(0), re.S).group(1))


def _values(argv, papermill=False):
    """The values a command gives: the CLI's ``-p`` as the CLI parses them, papermill's as papermill does."""
    from papermill.cli import _resolve_type

    out = {}
    for i, a in enumerate(argv):
        if a == "-p":
            out[argv[i + 1]] = (_resolve_type if papermill else cli.parse_value)(argv[i + 2])
        elif a == "-y" and papermill:
            out.update(yaml.safe_load(argv[i + 1]))
    return out


def test_every_papermill_line_carries_the_cli_runs_values_and_seeds(site):
    for chapter in (c for c in cli.chapters() if c != "scorecard"):
        _, _, pre = _pre(site, chapter)
        lines = [ln.split("  #")[0].strip() for ln in pre.splitlines()]
        custom = [ln for ln in lines if ln.startswith("shallowflow run ") and " --json " in ln]
        pm = [ln for ln in lines if ln.startswith("papermill ")]
        assert len(custom) == 1 and len(pm) == 1, chapter
        mine = _values(shlex.split(custom[0]))
        theirs = _values(shlex.split(pm[0]), papermill=True)
        assert theirs == {"profile": "custom", **mine}, (chapter, custom[0], pm[0])


def test_the_refused_chapters_show_their_recipes_and_figures(site):
    for chapter in RECIPES:
        _, box, pre = _pre(site, chapter)
        assert "# a GPU machine" in pre and "# a Dask cluster" in pre and "--scheduler tcp://SCHEDULER:8786" in pre
        figures = re.search(r"<ul class='sf-recipe-figures'>(.*?)</ul>", box, re.S)
        assert figures, chapter
        text = h.unescape(re.sub(r"<[^>]+>", " ", figures.group(1)))
        assert "Rule.work" in text and "Rule.memory" in text and "CPU: about" in text and "A cluster" in text
        assert "`" not in text and "$" not in text


def test_the_adler_page_shows_each_cells_winning_rate_and_its_edge(site):
    page = (site / "book" / "balboni-thesis" / "adler.html").read_text(encoding="utf-8")
    table = re.search(r"<table class=.sf-grid-winners.>(.*?)</table>", page, re.S)
    assert table, "the adler page shows no table of the grid's winning rates"
    head = h.unescape(re.sub(r"<[^>]+>", "", page[max(0, table.start() - 2000):table.start()]))
    grid = [float(g) for g in re.findall(r"\(grid ([^;]+);", head)[-1].split(", ")]
    rows = re.findall(r"<tr><td>.*?</tr>", table.group(1), re.S)
    assert rows
    for row in rows:
        cells = [h.unescape(c) for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
        rates = [float(r) for r in cells[3].split(", ") if r != "all diverged"]
        at_edge = any(r in (min(grid), max(grid)) for r in rates)
        assert cells[4].startswith("yes") == at_edge, cells
