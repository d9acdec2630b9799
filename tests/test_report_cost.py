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
    from shallowflow.verdicts import paper

    monkeypatch.setattr(V, "repo_root", lambda: tmp_path)
    monkeypatch.setattr(report, "repo_root", lambda: tmp_path)
    # the paper records too come from the sandbox (none there), not from the checkout's benchmarks/paper_claims:
    # this page's row has no checks, so they change nothing in it; reading them digested 21 chapters (2.4 CPU-s)
    monkeypatch.setattr(paper, "repo_root", lambda: tmp_path)
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
    from shallowflow.verdicts.digest import chapter_digest

    run = dict(chapter="brisbois-thesis/ten-point-data", rc=0, commit="abc1234 (+ uncommitted: x)",
               started="2026-11-26T05:33:00Z", digest=chapter_digest("brisbois-thesis/ten-point-data"))
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


def test_a_record_goes_stale_when_the_code_it_ran_changes(tmp_path, monkeypatch):
    """A paper run's record is keyed to what its numbers depend on: edit the chapter's notebook, its profile, a
    registry entry of its checks or a library module it imports, and the record is stale, naming what changed."""
    import shutil

    from shallowflow.verdicts import digest, paper
    from shallowflow.verdicts.registry import repo_root

    chapter = "orthogonal-inputs/toy"
    real = repo_root()
    rel = f"book/{chapter}.py"  # the book runs this chapter at the source's scale: it has no paper profile
    (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(real / rel, tmp_path / rel)
    shutil.copytree(real / "verdicts", tmp_path / "verdicts")
    recorded = digest.chapter_digest(chapter, root=tmp_path)
    assert digest.changed(recorded, digest.chapter_digest(chapter, root=tmp_path)) == []
    assert recorded["parts"][f"params/paper/{chapter}.yml"] == "none"
    (tmp_path / "params" / "paper" / "orthogonal-inputs").mkdir(parents=True)
    (tmp_path / "params" / "paper" / f"{chapter}.yml").write_text("width: 1000\n")
    assert digest.changed(recorded, digest.chapter_digest(chapter, root=tmp_path)) == [f"params/paper/{chapter}.yml"]
    recorded = digest.chapter_digest(chapter, root=tmp_path)
    assert "lib/shallowflow/experiments/orthogonal_inputs/toy.py" in recorded["parts"]  # the experiment module
    assert "lib/shallowflow/engine/kernel.py" in recorded["parts"]  # the engine, imported through it
    assert not any("site/" in k or "executor/" in k for k in recorded["parts"])  # presentation computes nothing
    nb = tmp_path / "book" / f"{chapter}.py"
    nb.write_text(nb.read_text() + "\n# an edit\n")
    assert digest.changed(recorded, digest.chapter_digest(chapter, root=tmp_path)) == [f"book/{chapter}.py"]
    reg = tmp_path / "verdicts" / "003.yml"
    text = reg.read_text()
    linked = text.replace("test_toy_untrained_fails_E1", "test_another_control", 1)
    assert linked != text
    reg.write_text(linked)  # a control link changes no number, verdict or cause: the record stays current
    assert digest.changed(recorded, digest.chapter_digest(chapter, root=tmp_path)) == [f"book/{chapter}.py"]
    reg.write_text(text.replace("final-loss: {book: pass", "final-loss: {book: fail", 1))
    assert "verdicts (this chapter's checks)" in digest.changed(recorded, digest.chapter_digest(chapter, root=tmp_path))
    lib = dict(recorded, parts=dict(recorded["parts"], **{"lib/shallowflow/engine/train.py": "0" * 16}))
    assert "lib/shallowflow/engine/train.py" in digest.changed(lib, digest.chapter_digest(chapter, root=tmp_path))
    assert digest.changed(None, recorded) and "no digest" in digest.changed(None, recorded)[0]
    # the pages: a stale record is shown as stale with what changed, and is not among the current ones
    monkeypatch.setattr(paper, "repo_root", lambda: tmp_path)
    monkeypatch.setattr(paper, "verdicts", lambda: {"003:E1/final-loss": dict(
        verdict="pass", measured="1e-9", criterion="< 1e-6", started="2026-11-26", commit="abc1234",
        stale=[f"book/{chapter}.py"])})
    text = paper.decided_text("003", "E1/final-loss")
    assert text.startswith("STALE, not a verdict") and f"changed: book/{chapter}.py" in text
    assert paper.current() == {}


def test_the_verdict_at_the_sources_scale_reads_only_current_records_and_a_scale_failure_there_is_not_reproduced():
    """Issue 39, item 2: the scorecard's second column. A check failing with cause scale at the source's scale had
    its decider: the target is not reproduced there; all checks passing: reproduced; a stale record decides nothing."""
    from shallowflow.verdicts import paper
    from shallowflow.verdicts.scorecard import at_source_html

    registry = {"targets": {"001:Fig4": {"checks": {"slope": {"book": "fail", "cause": "scale"},
                                                     "fit": {"book": "pass"}}},
                            "001:Fig6": {"checks": {"avg": {"book": "fail", "cause": "scale"}}}}}

    def rec(verdict, stale=(), cause=""):
        return dict(verdict=verdict, started="2026-12-01", commit="abc1234", chapter="weakly-interacting/threshold",
                    stale=list(stale), cause=cause)

    got = paper.target_verdicts(registry, {"001:Fig4/slope": rec("fail", cause="scale"), "001:Fig4/fit": rec("pass"),
                                           "001:Fig6/avg": rec("pass")})
    assert got["001:Fig4"]["verdict"] == "partly" and got["001:Fig6"]["verdict"] == "reproduced"
    got = paper.target_verdicts(registry, {"001:Fig4/slope": rec("fail", cause="scale"),
                                           "001:Fig6/avg": rec("pass", stale=["book/x.py"])})
    assert got["001:Fig4"]["verdict"] == "not reproduced" and got["001:Fig6"]["verdict"] == paper.STALE
    html = at_source_html(got["001:Fig6"])
    assert "stale record" in html and "not a verdict" in html and "2026-12-01" in html
    assert at_source_html(None) == "<i>no record</i>"  # never "not run": that is a book verdict


def test_the_intros_coverage_table_counts_the_targets_at_the_sources_scale(monkeypatch):
    """Issue 39, item 2: the intro's counts give both columns: per source, targets with a current paper record (and
    their verdicts), with a stale one, and with none."""
    from types import SimpleNamespace

    from shallowflow.site.registry_pages import CoverageDirective
    from shallowflow.verdicts import paper

    monkeypatch.setattr(paper, "verdicts", lambda: {"003:E1/final-loss": dict(
        verdict="pass", measured="1e-9", criterion="< 1e-6", started="2026-12-01", commit="abc1234",
        chapter="orthogonal-inputs/toy", stale=[])})
    directive = CoverageDirective.__new__(CoverageDirective)
    monkeypatch.setattr(CoverageDirective, "env", SimpleNamespace(docname="book/intro"), raising=False)
    html = directive.run()[0].astext()
    assert "<th>at the source's scale (paper records)</th>" in html
    assert "<td>1 current (1 reproduced), 0 stale, 23 without a record</td>" in html  # one passing record decides E1
