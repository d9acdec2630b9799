"""Issue 29: the re-run interface's mechanisms -- one section at a time (``params.Sections``, checks of the
skipped parts reported as not run), the number of runs behind each check, and data files (``params.DataFile``,
``data.load_xy``)."""
import json

import pytest

from shallowflow import claims as C
from shallowflow.params import PROFILE, ParameterError, Sections, validate

SEC = {"profile": PROFILE, "sections": Sections("the parts to run", choices=("fig3", "fig4", "capacity"))}


def test_sections_accepts_distinct_names_in_the_choices_order():
    P = validate({"profile": "book", "sections": ["capacity", "fig3"]}, SEC)
    assert P.sections == ["fig3", "capacity"]
    assert validate({"profile": "book", "sections": ("fig4",)}, SEC).sections == ["fig4"]


@pytest.mark.parametrize("value,why", [
    ([], "at least 1"), (["fig3", "fig3"], "given twice"), (["fig5"], "item 0"), ("fig3", "expected a list"),
    ([3], "item 0"), (None, "expected a list"), (["fig3", None], "item 1"), (["x"] * 20_000, "20000 items"),
])
def test_sections_refuses_in_one_line_naming_the_parameter(value, why):
    with pytest.raises(ParameterError) as e:
        validate({"profile": "book", "sections": value}, SEC)
    msg = str(e.value)
    assert "'sections'" in msg and "\n" not in msg and len(msg) < 400
    assert why in msg or "distinct names from 'fig3', 'fig4', 'capacity'" in msg


def test_sections_spec_needs_distinct_names():
    with pytest.raises(ValueError):
        Sections("x", choices=("a", "a"))
    with pytest.raises(ValueError):
        Sections("x", choices=())


def test_a_run_whose_sections_differ_from_its_profile_is_custom(capsys):
    cell = 'profile = "book"  # which verdicts\nsections = ["fig3", "fig4", "capacity"]  # parts\n'
    same = validate({"In": [cell, '# Parameters\nsections = ["capacity", "fig4", "fig3"]\n'], "profile": "book",
                     "sections": ["capacity", "fig4", "fig3"]}, SEC)
    assert same.profile == "book"  # the same names in another order: the profile's run
    one = validate({"In": [cell, '# Parameters\nsections = ["fig4"]\n'], "profile": "book", "sections": ["fig4"]}, SEC)
    assert one.profile == "custom" and "sections" in capsys.readouterr().out


@pytest.fixture
def registry(tmp_path, monkeypatch):
    (tmp_path / "verdicts").mkdir()
    (tmp_path / "verdicts" / "999.yml").write_text(
        "source: {seed: x.txt}\ntargets:\n  T:\n    chapter: book/ch\n    checks:\n"
        "      a: {book: pass, smoke: pass}\n"
        "      b: {book: pass, smoke: pass}\n"
        "      c: {book: pass, smoke: pass, chapter: book/other}\n"
        "  U:\n    chapter: book/ch\n    checks:\n      d: {book: pass, smoke: not-run}\n")
    monkeypatch.setenv("SHALLOWFLOW_ROOT", str(tmp_path))
    return tmp_path


def _record(root, profile):
    return json.loads((root / "artifacts" / "claims" / profile / "999__book__ch.json").read_text())


@pytest.mark.parametrize("profile", ["custom", "paper"])
def test_skipped_checks_are_listed_as_not_run_without_failing(registry, profile):
    c = C.Claims("999", "book/ch", profile, sections=["fig3"], sections_all=("fig3", "fig4"))
    c.check("T/a", "x small", [1e-3, 2e-3], C.below(1e-2), valid=[True, True])
    c.finish()  # b and d did not run: listed, not a failure
    rec = _record(registry, profile)
    assert [x["id"] for x in rec["checks"]] == ["T/a"] and rec["checks"][0]["runs"] == 2
    skipped = {x["id"]: x for x in rec["not_run"]}
    assert set(skipped) == {"T/b", "U/d"}  # T/c belongs to another chapter
    assert all(x["verdict"] == "not-run" and x["runs"] is None for x in skipped.values())
    assert skipped["T/b"]["note"].startswith("section skipped") and "fig4" in skipped["T/b"]["note"]
    report = c.report()
    assert "NOT-RUN  T/b" in report and "section skipped" in report
    assert "T/b" in c._repr_html_()


def test_not_run_note_without_sections(registry):
    c = C.Claims("999", "book/ch", "custom")
    c.check("T/a", "x", 1e-3, C.below(1e-2), valid=C.NO_TRAINING)
    c.finish()
    rec = _record(registry, "custom")
    assert rec["checks"][0]["runs"] is None
    assert {x["note"] for x in rec["not_run"]} == {"not run in this run"}


def test_compared_profiles_still_fail_on_a_missing_check(registry):
    c = C.Claims("999", "book/ch", "book")
    c.check("T/a", "x", 1e-3, C.below(1e-2), valid=C.NO_TRAINING)
    assert c.not_run() == []
    with pytest.raises(C.VerdictMismatch, match="T/b is registered for this chapter but was not checked"):
        c.finish()
