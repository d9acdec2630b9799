"""A source's report page states each chapter's cost at the source's scale as benchmarks/paper_scale.json records
it (ran, estimated, refused or no paper profile), in the words of the re-run boxes; it once read the file's top
level as the chapter table and said "not measured" for every chapter (caught on the c4415f8 build)."""
import json
import shutil
from pathlib import Path

import shallowflow.verdicts as V
from shallowflow.verdicts import report

FIXTURE = Path(__file__).parent / "fixtures" / "paper_scale.json"


def test_the_report_cost_table_reads_every_status(tmp_path, monkeypatch):
    monkeypatch.setattr(V, "repo_root", lambda: tmp_path)
    monkeypatch.setattr(report, "repo_root", lambda: tmp_path)
    (tmp_path / "benchmarks").mkdir()
    shutil.copy(FIXTURE, tmp_path / "benchmarks" / "paper_scale.json")
    costs = report.paper_costs()
    assert costs["brisbois-thesis/toy-reproduction"]["status"] == "ran"
    assert costs["balboni-thesis/adler"]["status"] == "refused"
    reg = {"sources": {"000": {"title": "t", "seed": "s"}},
           "targets": {"000:X": {"title": "x", "chapter": "book/brisbois-thesis/toy-reproduction", "checks": {}}}}
    rows = [dict(source="000", target="X", title="x", verdict="reproduced", chapter="book/brisbois-thesis/toy-reproduction",
                 checks=[])]
    html = report.report_html("000", rows, reg)
    table = html[html.index("sf-cost"):]
    assert "90.0 min, measured on 2-core CI VM" in table and "not measured" not in table


def test_a_broken_paper_file_is_no_cost_not_a_traceback(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "repo_root", lambda: tmp_path)
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "paper_scale.json").write_text("{not json")
    assert report.paper_costs() == {}
    json.dumps(report.paper_costs())
