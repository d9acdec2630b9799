"""Parameter validation and the claim machinery (criteria, verdicts, registry comparison)."""
import json

import numpy as np
import pytest

from shallowflow import verdicts as C
from shallowflow.params import PROFILE, PROFILES, Float, Floats, Int, Ints, ParameterError, Rule, Str, validate


SCHEMA = {"width": Int("m", low=1), "lr": Float("step", low=0, low_open=True), "act": Str(choices=("relu", "tanh")),
          "seeds": Ints(low=0), "scales": Floats(low=0, low_open=True)}
GOOD = dict(width=3, lr=0.1, act="relu", seeds=[0, 1], scales=[1e-3])


def test_validate_accepts_and_normalises():
    P = validate({**GOOD, "width": 3.0, "other": 1}, SCHEMA)
    assert P.width == 3 and isinstance(P.width, int) and not hasattr(P, "other")


@pytest.mark.parametrize("name,value,msg", [
    ("width", -1, "'width' = -1 is invalid: expected an integer >= 1"),
    ("width", 2.5, "'width' = 2.5"),
    ("lr", 0.0, "'lr' = 0.0 is invalid: expected a number > 0"),
    ("lr", float("nan"), "'lr' = nan"),
    ("act", "gelu", "'act' = 'gelu' is invalid: expected one of 'relu', 'tanh'"),
    ("seeds", [0, -1], "'seeds' = -1"),
    ("seeds", [], "'seeds' needs at least 1"),
    ("scales", "1e-3", "'scales' = '1e-3' is invalid: expected a list of numbers"),
])
def test_validate_names_the_parameter(name, value, msg):
    with pytest.raises(ParameterError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        validate({**GOOD, name: value}, SCHEMA)


def test_every_chapter_schema_uses_the_one_profile_spec():
    # the library mirrors the book: book/<part>/<chapter>.py <-> experiments/<part_pkg>/<chapter_module>.py
    # defines SCHEMA (first entry: the one PROFILE) and RULES (a tuple of Rule)
    import importlib

    from shallowflow.run import cli
    from shallowflow.params import Rule

    found = 0
    for chapter in cli.chapters():
        if not chapter.startswith(("orthogonal-inputs/", "early-alignment/")):  # 003 and 002 (other parts: test_chapters)
            continue
        part, name = chapter.split("/", 1)
        pkg = f"shallowflow.experiments.{part.replace('-', '_')}"
        if importlib.util.find_spec(pkg) is None:
            continue
        mod = importlib.import_module(f"{pkg}.{name.replace('-', '_')}")
        assert next(iter(mod.SCHEMA)) == "profile" and mod.SCHEMA["profile"] is PROFILE, chapter
        assert isinstance(mod.RULES, tuple) and all(isinstance(r, Rule) for r in mod.RULES), chapter
        found += 1
    assert found >= 12
    assert validate({"profile": "smoke"}, {"profile": PROFILE}).profile == "smoke"
    with pytest.raises(ParameterError, match="'profile'.*book"):
        validate({"profile": "full"}, {"profile": PROFILE})
    assert set(C.COMPARED_PROFILES) < set(PROFILES)


def test_missing_parameter():
    with pytest.raises(ParameterError, match="'width' is missing"):
        validate({k: v for k, v in GOOD.items() if k != "width"}, SCHEMA)


def test_criteria_and_formatting():
    assert C.below(1e-10)(np.array([1e-12, 1e-11])) and not C.below(1e-10)([1e-12, 1e-9])
    assert C.within(4000, 6500)([5000, 6500]) and not C.within(4000, 6500)([3999])
    assert C.close_to(2.0, rtol=1e-3)(2.001) and not C.close_to(2.0, rtol=1e-4)(2.001)
    assert not C.below(1.0)([float("nan")]), "a NaN must never pass"
    assert not C.below(1.0)([]), "an empty measurement must never pass"
    assert C.fmt([1.0, 3.0]) == "1 .. 3 (2 runs)" and C.fmt(0.5) == "0.5"


def test_target_verdicts():
    assert C.target_verdict(["pass", "pass"]) == "reproduced"
    assert C.target_verdict(["pass", "fail"]) == "partly"
    assert C.target_verdict(["fail"]) == "not reproduced"
    assert C.target_verdict([]) == "not attempted"


@pytest.fixture
def registry(tmp_path, monkeypatch):
    root = tmp_path
    (root / "verdicts").mkdir()
    (root / "verdicts" / "999.yml").write_text(
        "source: {seed: x.txt}\ntargets:\n  T:\n    chapter: book/ch\n    checks:\n"
        "      a: {book: pass, smoke: undecided}\n"
        "      b: {book: fail, smoke: fail, cause: not-reproduced, tried: [book], why: 'cause unknown'}\n")
    monkeypatch.setenv("SHALLOWFLOW_ROOT", str(root))
    return root


def test_registry_agreement_and_record(registry):
    c = C.Claims("999", "book/ch", "book")
    c.check("T/a", "x small", 1e-3, C.below(1e-2))
    c.check("T/b", "y small", 1.0, C.below(1e-2))
    c.finish()
    rec = json.loads((registry / "artifacts" / "claims" / "book" / "999__book__ch.json").read_text())
    assert [x["verdict"] for x in rec["checks"]] == ["pass", "fail"]
    rows = C.scorecard("book")
    assert rows[0]["verdict"] == "partly" and rows[0]["n_pass"] == 1


def test_registry_disagreement_fails(registry):
    c = C.Claims("999", "book/ch", "book")
    c.check("T/a", "x small", 1.0, C.below(1e-2))  # registry expects pass
    c.check("T/b", "y small", 1.0, C.below(1e-2))
    with pytest.raises(C.VerdictMismatch, match="999:T/a: verdict fail, registry expects pass"):
        c.finish()


def test_unregistered_and_missing_checks_fail(registry):
    c = C.Claims("999", "book/ch", "book")
    c.check("T/new", "new claim", 0.0, C.below(1.0))
    problems = c.mismatches()
    assert any("T/new is not in verdicts/999.yml" in p for p in problems)
    assert any("999:T/a is registered for this chapter but was not checked" in p for p in problems)


def test_undecided_at_smoke_is_not_compared_but_shown(registry):
    c = C.Claims("999", "book/ch", "smoke")
    c.check("T/a", "x small", 1.0, C.below(1e-2))  # fails, but undecided at smoke scale
    c.check("T/b", "y small", 1.0, C.below(1e-2))
    assert c.mismatches() == []
    assert "undecided at this scale" in c.report()


def test_custom_profile_is_reported_not_compared(registry):
    c = C.Claims("999", "book/ch", "custom")
    c.check("T/a", "x small", 1.0, C.below(1e-2))
    assert c.mismatches() == [] and "not compared" in c.report()


def test_duplicate_and_malformed_ids(registry):
    c = C.Claims("999", "book/ch", "book")
    c.check("T/a", "x", 0.0, C.below(1.0))
    with pytest.raises(ValueError, match="recorded twice"):
        c.check("T/a", "x", 0.0, C.below(1.0))
    with pytest.raises(ValueError, match="TARGET/name"):
        c.check("nameonly", "x", 0.0, C.below(1.0))


def test_registry_cache_sees_edits_and_hands_out_copies(registry):
    first = C.load_registry()
    first["targets"]["999:T"]["checks"]["a"]["book"] = "mutated"  # a caller's change must not leak
    assert C.load_registry()["targets"]["999:T"]["checks"]["a"]["book"] == "pass"
    path = registry / "verdicts" / "999.yml"
    path.write_text(path.read_text().replace("a: {book: pass", "a: {book: fail") + "\n")  # new size
    assert C.load_registry()["targets"]["999:T"]["checks"]["a"]["book"] == "fail"


def test_rules_relate_parameters_and_name_them():
    schema = {"steps": Int("iterations", low=1), "at": Ints("leave times", low=0)}
    rules = (Rule(("at", "steps"), lambda P: max(P.at) < P.steps, "leave before the end"),)
    assert validate({"steps": 10, "at": [0, 9]}, schema, rules).at == [0, 9]
    with pytest.raises(ParameterError, match=r"'at' and 'steps' are inconsistent \(at = \[12\], steps = 10\)"):
        validate({"steps": 10, "at": [12]}, schema, rules)
