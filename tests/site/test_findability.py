"""Findability on the built site: the cited specification entries are published and every citation link lands
on one; the build report lists the pages in the book's order; every chapter's re-run box states its cost at
both scales and links to its row of the build report; the source texts are linked from their parts and each
chapter offers its executed notebook for download."""
import re

import pytest

from shallowflow.run import cli
from shallowflow.site.ext import build_row_id, toc_order

ROOT = cli.repo_root()
HTML = ROOT / "_build" / "html"


@pytest.fixture(scope="module")
def site():
    if not (HTML / "index.html").exists():
        pytest.fail("no built site in _build/html: run `make book` first")
    return HTML


def _chapters():
    return [c for c in cli.chapters() if c != "scorecard"]


def test_every_spec_citation_link_lands_on_a_published_entry(site):
    entries = (site / "book" / "appendix" / "spec-entries.html").read_text(encoding="utf-8")
    ids = set(re.findall(r"id=['\"]([^'\"]+)['\"]", entries))
    links = 0
    for c in _chapters():
        html = (site / "book" / f"{c}.html").read_text(encoding="utf-8")
        for anchor in re.findall(r"spec-entries\.html#([\w-]+)", html):
            assert anchor in ids, f"{c} links to spec entry {anchor}, which the appendix does not publish"
            links += 1
    assert links, "no chapter links a specification entry"
    page = (site / "book" / "balboni-thesis" / "conditioning-at-init.html").read_text(encoding="utf-8")
    assert re.search(r"href=\"\.\./appendix/spec-entries\.html#spec-004-erratum-9\">spec erratum 9</a>", page)


def test_build_report_in_the_books_order(site):
    html = (site / "book" / "appendix" / "build-report.html").read_text(encoding="utf-8")
    shown = re.findall(r"<tr id='build-[^']*'><td><a href='[^']*'>([^<]+)</a>", html)
    order = [c for c in toc_order() if c in shown]
    assert shown == order, "the build report is not in the order of _toc.yml"


def test_every_rerun_box_states_both_costs_and_links_its_build_report_row(site):
    report = (site / "book" / "appendix" / "build-report.html").read_text(encoding="utf-8")
    for c in _chapters():
        html = (site / "book" / f"{c}.html").read_text(encoding="utf-8")
        cost = re.search(r"<p class='sf-cost'>(.*?)</p>", html)
        assert cost, f"{c}: the re-run box states no cost"
        assert re.search(r"At this page's scale: [\d.]+ (s|min|h|days) in this build", cost.group(1)), (c, cost.group(1))
        assert "At the source's scale: " in cost.group(1), c
        assert f"build-report.html#{build_row_id(c)}" in cost.group(1), c
        assert f"id='{build_row_id(c)}'" in report, f"{c} has no row in the build report"


def test_every_chapter_offers_its_executed_notebook(site):
    for c in _chapters():
        html = (site / "book" / f"{c}.html").read_text(encoding="utf-8")
        m = re.search(r"class='sf-notebook-link' href='([^']+)'", html)
        assert m, f"{c}: no link to its executed notebook"
        nb = (site / "book" / c).parent.joinpath(m.group(1)).resolve()
        assert nb.exists() and nb.stat().st_size > 0, f"{c}: {m.group(1)} is not in the site"


def test_the_source_texts_are_linked_from_their_parts_and_the_intro(site):
    import json

    intro = (site / "book" / "intro.html").read_text(encoding="utf-8")
    reg = json.loads((site / "scorecard.json").read_text())["sources"]
    for key, meta in reg.items():
        seed = meta["seed"].rsplit("/", 1)[-1]
        if not seed.endswith(".txt"):  # the synthesis has no source text of its own
            continue
        assert re.search(rf"href=\"[^\"]*{re.escape(seed)}\"", intro), f"the intro does not link {seed}"
        reports = [p for p in (site / "book").glob("*/report.html") if seed in p.read_text(encoding="utf-8")]
        assert reports and all(re.search(rf"href=\"[^\"]*{re.escape(seed)}\"", p.read_text(encoding="utf-8"))
                               for p in reports), f"the report of {key} does not link {seed}"
        linked = re.search(rf"href=\"([^\"]*{re.escape(seed)})\"", intro).group(1)
        assert (site / "book").joinpath(linked).resolve().stat().st_size > 10_000, f"{seed} is not the source text"
