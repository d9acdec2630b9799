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


def test_a_check_undecided_here_shows_what_the_recorded_paper_run_measured(tmp_path, monkeypatch):
    from shallowflow.verdicts import paper

    monkeypatch.setattr(report, "repo_root", lambda: tmp_path)
    monkeypatch.setattr(paper, "repo_root", lambda: tmp_path)
    bench = tmp_path / "benchmarks"
    (bench / "paper_claims").mkdir(parents=True)
    run = dict(chapter="brisbois-thesis/ten-point-data", rc=0, commit="abc1234 (+ uncommitted: x)",
               started="2026-11-26T05:33:00Z")
    failed = dict(run, chapter="brisbois-thesis/s-curves", rc=1)
    (bench / "paper_scale.runs.jsonl").write_text(json.dumps(run) + "\nnot json\n" + json.dumps(failed) + "\n")
    rec = dict(source="000", chapter="book/brisbois-thesis/ten-point-data",
               checks=[dict(id="C.21/converges", verdict="pass", measured="1", criterion=">= 1", runs=5),
                       dict(id="C.21/gd-only", verdict="pass", measured="0 (all 7)", criterion="< 0.5", runs=7)])
    (bench / "paper_claims" / "000__book__brisbois-thesis__ten-point-data.json").write_text(json.dumps(rec))
    (bench / "paper_claims" / "000__book__brisbois-thesis__s-curves.json").write_text(
        json.dumps(dict(rec, chapter="book/brisbois-thesis/s-curves", checks=[dict(id="C.1/x", verdict="pass")])))
    (bench / "paper_claims" / "broken.json").write_text("{")
    got = paper.verdicts()
    assert set(got) == {"000:C.21/converges", "000:C.21/gd-only"}  # the failed run's record is not evidence; a broken file is skipped
    assert got["000:C.21/converges"]["commit"] == "abc1234"
    reg = {"sources": {"000": {"title": "t", "seed": "s"}},
           "targets": {"000:C.21": {"title": "x", "chapter": "book/brisbois-thesis/ten-point-data", "checks": {}}}}
    rows = [dict(source="000", target="C.21", title="x", verdict="undecided at this scale",
                 chapter="book/brisbois-thesis/ten-point-data",
                 checks=[dict(id="C.21/converges", verdict="fail", cause="scale", why="too short", measured="0.5"),
                         dict(id="C.21/other", verdict="fail", cause="scale", why="too short", measured="0.5"),
                         dict(id="C.21/gd-only", verdict="fail", cause="method", why="finite step", measured="3")])]
    html = report.report_html("000", rows, reg)
    assert "at the source&#x27;s scale (paper run of 2026-11-26, code abc1234): pass, measured 1 (criterion &gt;= 1)" in html
    # beside a failure of any cause, not only scale: a method cause the paper run did not meet is shown too
    assert "pass, measured 0 (all 7) (criterion &lt; 0.5)" in html
    assert "Checks undecided at this scale (cause <code>scale</code>): 2; run at the source's scale" in html
    assert ": 1, of which 1 pass and 0 fail there" in html
