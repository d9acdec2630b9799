"""Provenance where the verdict is read: ``verdicts/provenance.yaml`` is valid, and the scorecard's rows and the
chapters' targets boxes flag substitute data, reduced scale and run counts from the records."""
import importlib

import pytest

from shallowflow.params import chapters

S = importlib.import_module("shallowflow.verdicts.scorecard")  # the module (the package exports a function so named)

KEYS = {"chapter", "source_data", "book_data", "parameter", "unless_local"}


def test_provenance_file_names_real_chapters_and_their_data_parameter():
    prov = S.load_provenance()
    subs = prov.get("substitutes")
    assert subs, "verdicts/provenance.yaml declares no substitute data"
    known = {f"book/{c}" for c in chapters.all_chapters()}
    seen = set()
    for s in subs:
        assert set(s) <= KEYS, f"unknown keys {set(s) - KEYS} in {s}"
        assert s["chapter"] in known, f"{s['chapter']} is not a chapter"
        assert s["chapter"] not in seen, f"{s['chapter']} declared twice"
        seen.add(s["chapter"])
        for k in ("source_data", "book_data"):
            assert isinstance(s.get(k), str) and s[k].strip(), (s["chapter"], k)
        schema, _ = chapters.schema(s["chapter"])
        assert s.get("parameter") in schema, f"{s['chapter']}: no parameter {s.get('parameter')!r} chooses its data"
        assert s.get("unless_local") in (None, "cifar10", "cifar100"), s


def _row(chapter, checks, profile="book"):
    return dict(source="004", target="X", chapter=chapter, chapters=[chapter], checks=checks, profile=profile)


def test_substitute_data_is_flagged_unless_the_real_data_are_local(monkeypatch):
    prov = {"substitutes": [{"chapter": "book/balboni-thesis/pl-training", "source_data": "CIFAR-10",
                             "book_data": "digits", "parameter": "dataset", "unless_local": "cifar10"},
                            {"chapter": "book/balboni-thesis/adler", "source_data": "CIFAR-100",
                             "book_data": "a mixture", "parameter": "datasets"}]}
    monkeypatch.setattr(S, "_local_data", lambda name: False)
    p = S.provenance(_row("book/balboni-thesis/pl-training", []), prov)
    assert [s["book_data"] for s in p["substitutes"]] == ["digits"]
    assert "substitute data: digits for CIFAR-10" in S.provenance_html(p)
    monkeypatch.setattr(S, "_local_data", lambda name: True)  # CIFAR-10 present: the real data ran
    assert S.provenance(_row("book/balboni-thesis/pl-training", []), prov)["substitutes"] == []
    assert len(S.provenance(_row("book/balboni-thesis/adler", []), prov)["substitutes"]) == 1  # always


def test_reduced_scale_is_computed_from_the_paper_profiles():
    with_paper = next(c for c in chapters.all_chapters() if chapters.profile_file(c, "paper").exists())
    without = next(c for c in chapters.all_chapters() if not chapters.profile_file(c, "paper").exists()
                   and c != "scorecard")
    assert S.provenance(_row(f"book/{with_paper}", []), {})["reduced"] == [f"book/{with_paper}"]
    assert S.provenance(_row(f"book/{without}", []), {})["reduced"] == []
    assert S.provenance(_row(f"book/{with_paper}", [], profile="paper"), {})["reduced"] == []  # the source's scale
    assert f"params/paper/{with_paper}.yml" in S.provenance_html(S.provenance(_row(f"book/{with_paper}", []), {}))


@pytest.mark.parametrize("runs, text", [
    ([1, 1], "1 run"), ([5, 20, 5], "5-20 runs"), ([None], "no trained run"),
    ([4, None], "4 runs; 1 check(s) on no trained run"), (["absent"], "runs not recorded"),
    ([3, "absent"], "3 runs; 1 check(s) without a run count")])
def test_run_counts_come_from_the_records(runs, text):
    checks = [{} if r == "absent" else {"runs": r} for r in runs]
    assert S.runs_text(S.provenance(_row("book/orthogonal-inputs/toy", checks), {})) == text


def test_scorecard_rows_show_the_provenance_column(monkeypatch):
    row = dict(_row("book/balboni-thesis/adler", [{"id": "C1/a", "verdict": "pass", "runs": 3}]),
               title="t", verdict="reproduced", n_pass=1, function=None)
    monkeypatch.setattr(S, "load_provenance", lambda: {"substitutes": [
        {"chapter": "book/balboni-thesis/adler", "source_data": "CIFAR", "book_data": "digits", "parameter": "datasets"}]})
    html = S.scorecard_html([row], {"sources": {"004": {"title": "x", "seed": "s"}}})
    assert "<th>data, scale, runs</th>" in html
    assert "substitute data: digits for CIFAR" in html and "3 runs" in html
