"""Cost at both scales on the site: each chapter's re-run box and the build report state the book-scale cost of
this build (its build report) and the paper-scale cost from ``benchmarks/paper_scale.json`` when it is there,
"not measured" otherwise (a small fixture file stands in for the real one)."""
import json
import shutil
from pathlib import Path

import pytest

import shallowflow.verdicts as V
from shallowflow.site import ext as X

FIXTURE = Path(__file__).parent / "fixtures" / "paper_scale.json"
REPORT = {"profile": "book", "wall_s": 100.0, "workers": 2, "cluster": "LocalCluster", "code": "abc", "date": "today",
          "machine": {"cpu": "Test CPU", "cores": 2, "system": "Linux", "python": "3.11", "engine": "kernel",
                      "device": "cpu", "load": [1.0]},
          "versions": {}, "chapters": [{"chapter": "orthogonal-inputs/toy", "wall_s": 14.2, "host": "h", "pid": 1,
                                        "started": "2026-01-01T00:00:00+0000", "checks": 9}]}


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setattr(V, "repo_root", lambda: tmp_path)
    monkeypatch.setenv("SHALLOWFLOW_EDITION", "book")
    (tmp_path / "artifacts" / "runs" / "book").mkdir(parents=True)
    (tmp_path / "artifacts" / "runs" / "book" / "build-report.json").write_text(json.dumps(REPORT))
    return tmp_path


def test_paper_cost_in_words_for_every_status(root):
    (root / "benchmarks").mkdir()
    shutil.copy(FIXTURE, root / "benchmarks" / "paper_scale.json")
    doc = X.paper_scale_doc()
    assert X.paper_cost_text("brisbois-thesis/toy-reproduction", doc) == \
        "90.0 min, measured on 2-core CI VM (one paper run, nice 19)"
    assert X.paper_cost_text("early-alignment/spurious", doc).startswith("about 25.0 h, estimated for 2-core CI VM")
    assert X.paper_cost_text("balboni-thesis/adler", doc).startswith("not run: the paper profile is refused")
    assert X.paper_cost_text("orthogonal-inputs/toy", doc).startswith("no paper profile")
    # a synthesis chapter has no source, so its page never says it runs at "the source's" scale (issue 41, item 5)
    synthesis = dict(doc, chapters=dict(doc["chapters"], **{"synthesis/plateau": {"paper": {"status": "none"}}}))
    assert X.paper_cost_text("synthesis/plateau", synthesis).startswith("no paper profile: a synthesis chapter has no "
                                                                         "source of its own")
    assert X.paper_cost_text("weakly-interacting/threshold", doc) == "not measured"  # not in the file


def test_rerun_box_cost_line_reads_this_build_and_the_paper_file(root):
    (root / "benchmarks").mkdir()
    shutil.copy(FIXTURE, root / "benchmarks" / "paper_scale.json")
    html = X.cost_html("orthogonal-inputs/toy", "book/orthogonal-inputs")
    assert "14 s in this build (book edition, Test CPU, 2 cores, 2 worker(s)" in html
    assert "no paper profile" in html
    assert "href='../appendix/build-report.html#build-orthogonal-inputs-toy'" in html


def test_without_the_paper_file_the_cost_says_not_measured(root):
    html = X.cost_html("orthogonal-inputs/toy", "book/orthogonal-inputs")
    assert "At the source's scale: not measured." in html
    assert "not measured (this site was not built by the executor)" in X.cost_html("early-alignment/spurious",
                                                                                  "book/early-alignment")


def test_the_rerun_box_carries_the_cost_line():
    from shallowflow.site.rerun import rerun_box

    assert "<p class='sf-cost'><b>Cost.</b>" in rerun_box("orthogonal-inputs/toy")


def test_the_build_report_is_in_the_books_order():
    order = X.toc_order()
    assert order[-1] == "scorecard" and order.index("brisbois-thesis/toy-reproduction") < order.index(
        "weakly-interacting/convergence") < order.index("balboni-thesis/adler")
    assert X.build_row_id("orthogonal-inputs/toy") == "build-orthogonal-inputs-toy"
