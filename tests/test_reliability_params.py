"""Issue 18, points 2 and 4: every kind of parameter is bounded, messages are short, relations between
parameters are rules (panels <= steps, a step budget, a memory estimate), papermill-injected names
that a chapter does not declare are refused, and a run that departs from its profile is 'custom'."""
import json
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest

from shallowflow import params
from shallowflow.params import (Bool, Float, Floats, Int, Ints, PROFILE, ParameterError, Rule, Str, memory_rule,
                                validate)

SCHEMA = {"profile": PROFILE, "width": Int("m", low=1, high=1000), "lr": Float("step", low=0, low_open=True, high=1),
          "seeds": Ints("seeds", low=0), "scales": Floats(low=0, low_open=True), "act": Str(choices=("relu", "tanh")),
          "label": Str("free text"), "flag": Bool()}
GOOD = dict(profile="book", width=3, lr=0.1, seeds=[0, 1], scales=[1e-3], act="relu", label="run", flag=True)


def refused(name, value, schema=SCHEMA, rules=()):
    with pytest.raises(ParameterError) as e:
        validate({**GOOD, name: value}, schema, rules)
    msg = str(e.value)
    assert repr(name) in msg and "\n" not in msg and len(msg) < 400, msg
    return msg


@pytest.mark.parametrize("value", [2 ** 70, -(2 ** 70), 2 ** 63, 2.0 ** 70, float("inf")], ids=str)
def test_seeds_fit_64_bits(value):
    msg = refused("seeds", [0, value], {**SCHEMA, "seeds": Ints("seeds")})  # no explicit high: the kind's bound
    assert "item 1" in msg


def test_int_without_high_is_still_bounded():
    refused("width", 2 ** 64, {**SCHEMA, "width": Int("m", low=1)})
    assert validate({**GOOD, "seeds": [2 ** 63 - 1]}, SCHEMA).seeds == [2 ** 63 - 1]


@pytest.mark.parametrize("name,value", [
    ("lr", float("nan")), ("lr", float("-inf")), ("lr", 10 ** 400), ("lr", "0.1"), ("lr", True), ("lr", None),
    ("lr", [0.1]), ("width", True), ("width", "3"), ("width", 3.5), ("width", float("nan")), ("width", [3]),
    ("seeds", []), ("seeds", "0,1"), ("seeds", {0: 1}), ("seeds", [[0]]), ("seeds", [True]),
    ("scales", [1e-3, float("nan")]), ("act", "; rm -rf /"), ("act", "relu\u200b"), ("act", 1),
    ("label", "x" * 201), ("label", "a\nb"), ("label", "\x00"), ("label", b"run"), ("flag", 1), ("flag", "True"),
], ids=lambda v: params.short(v, 20))
def test_hostile_values_are_refused_naming_the_parameter(name, value):
    refused(name, value)


def test_huge_list_is_refused_by_its_length_and_the_message_is_short():
    msg = refused("seeds", list(range(100_000)))
    assert "100000 values" in msg
    big = "x" * 100_000
    msg = refused("act", big)
    assert len(msg) < 300 and big[:200] not in msg
    msg = refused("scales", [1e-3] * 50 + [float("nan")])
    assert len(msg) < 300


def test_unicode_and_shell_strings_are_ordinary_text_when_printable():
    P = validate({**GOOD, "label": "naïve λ $(echo) `id`"}, SCHEMA)
    assert P.label == "naïve λ $(echo) `id`"


def test_short_never_formats_a_huge_value():
    assert len(params.short("y" * 10 ** 6)) <= params.REPR_MAX
    assert params.short(10 ** 100_000).startswith("<integer of")
    assert len(params.short(list(range(10 ** 5)))) <= params.REPR_MAX


def test_rule_helpers():
    S = {"panels": Ints(low=0), "steps": Int(low=1), "time": Float(low=0, low_open=True),
         "lr": Float(low=0, low_open=True), "width": Int(low=1)}
    ok = dict(panels=[0, 10], steps=10, time=1.0, lr=1e-3, width=10)
    rules = (Rule.at_most("panels", "steps"),
             Rule.budget(("time", "lr"), lambda P: P.time / P.lr, 1e8, what="the flow time at this step"),
             memory_rule(("width", "steps"), lambda P: 8.0 * P.width * P.steps, limit=2 ** 30))
    validate(ok, S, rules)
    with pytest.raises(ParameterError, match=r"'panels' and 'steps'.*panels must be at most steps"):
        validate({**ok, "steps": 5}, S, rules)
    with pytest.raises(ParameterError, match=r"'time' and 'lr'.*may need at most 1e\+08 iterations: it needs 1e\+300"):
        validate({**ok, "lr": 1e-300}, S, rules)
    with pytest.raises(ParameterError, match=r"'width' and 'steps'.*fit in 1 GiB: it would allocate about 74.5 GiB, the limit is 1 GiB"):
        validate({**ok, "width": 10 ** 9, "panels": [0]}, S, rules)


def test_rule_whose_test_raises_is_a_parameter_error():
    r = Rule(("a",), lambda P: 1 / P.a > 0, "a must be positive")
    with pytest.raises(ParameterError, match="'a'.*ZeroDivisionError"):
        validate({"a": 0}, {"a": Int()}, (r,))


def test_memory_limit_from_environment(monkeypatch):
    monkeypatch.setenv("SHALLOWFLOW_MEMORY_GB", "2")
    assert params.memory_limit() == 2 * 2 ** 30
    monkeypatch.setenv("SHALLOWFLOW_MEMORY_GB", "lots")
    with pytest.raises(ParameterError, match="SHALLOWFLOW_MEMORY_GB"):
        params.memory_limit()


# ---------------------------------------------------------------------------------------------
# point 4: names papermill injected, and custom runs
CELL = 'profile = "book"  # which\nwidth = 3  # m\nlr = 0.1\nseeds = list(range(2))\nscales = [1e-3]\n' \
       'act = "relu"\nlabel = "run"\nflag = True\n'


def kernel_globals(injected: str) -> dict:
    """What a notebook's globals() hold under papermill: the values and the input history In."""
    ns = {}
    exec(CELL, {}, ns)
    exec(injected, {}, ns)
    return {**ns, "In": ["", CELL, injected, "from shallowflow.params import validate\nP = validate(...)"]}


def test_misspelt_injected_name_is_refused_with_a_suggestion():
    with pytest.raises(ParameterError, match=r"unknown parameter\(s\) 'widht' \(did you mean 'width'\?\)"):
        validate(kernel_globals("# Parameters\nwidht = 3\nlr = 0.2\n"), SCHEMA)


def test_changed_value_makes_the_run_custom_and_profile_values_do_not():
    assert validate(kernel_globals('# Parameters\nprofile = "book"\nwidth = 3\n'), SCHEMA).profile == "book"
    assert validate(kernel_globals('# Parameters\nwidth = 4\n'), SCHEMA).profile == "custom"
    # the profile's name alone does not bring its values: a 'smoke' run with book values is custom
    # (SCHEMA is no chapter's: its smoke file cannot be located, so nothing is claimed)
    assert validate(kernel_globals('# Parameters\nprofile = "smoke"\n'), SCHEMA).profile == "smoke"
    assert validate({**GOOD, "other": 1}, SCHEMA).profile == "book"  # outside papermill: nothing injected


def test_chapter_profiles_are_compared_with_their_files():
    from shallowflow.params import chapters

    chapter = "orthogonal-inputs/toy"
    mod = chapters.module(chapter)
    cell = (chapters.book_dir() / f"{chapter}.py").read_text().split('tags=["parameters"]\n')[1].split("# %%")[0]
    base = chapters.defaults(chapter)
    smoke = {**base, **__import__("yaml").safe_load(chapters.profile_file(chapter, "smoke").read_text())}

    def run(inj: dict, values: dict):
        src = "# Parameters\n" + "".join(f"{k} = {v!r}\n" for k, v in inj.items())
        return validate({**values, "In": ["", cell, src]}, mod.SCHEMA, mod.RULES).profile

    assert run({"profile": "smoke", **{k: smoke[k] for k in smoke if k != "profile"}}, {**smoke, "profile": "smoke"}) == "smoke"
    assert run({"profile": "smoke"}, {**base, "profile": "smoke"}) == "custom"
    assert run({"profile": "book", "width": base["width"] + 1},
               {**base, "width": base["width"] + 1}) == "custom"
    assert run({"profile": "book"}, base) == "book"


NOTEBOOK_CELLS = [
    ("parameters", 'profile = "book"\nwidth = 3\n'),
    ("", textwrap.dedent("""\
        from shallowflow.params import Int, PROFILE, ParameterError, validate
        S = {"profile": PROFILE, "width": Int("m", low=1)}
        try:
            validate(globals(), S)
        except ParameterError as e:
            print("REFUSED:", e)
        P = validate(globals(), {**S, "widht": Int("m", low=1)})
        print("PROFILE:", P.profile)
        """)),
]


def test_direct_papermill_misspelt_name_is_refused_in_the_notebook(tmp_path):
    """`papermill nb out -p widht 3`: papermill only warns; validate() inside the kernel refuses it."""
    nb = {"cells": [{"cell_type": "code", "metadata": {"tags": [tag] if tag else []}, "source": src,
                     "outputs": [], "execution_count": None} for tag, src in NOTEBOOK_CELLS],
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    src, out = tmp_path / "nb.ipynb", tmp_path / "out.ipynb"
    src.write_text(json.dumps(nb))
    p = subprocess.run([sys.executable, "-m", "papermill", str(src), str(out), "-p", "widht", "3", "--no-progress-bar",
                        "-k", "python3"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    outputs = [o.get("text", "") for c in json.loads(out.read_text())["cells"] for o in c.get("outputs", [])]
    text = "".join("".join(t) if isinstance(t, list) else t for t in outputs)
    assert "REFUSED: unknown parameter(s) 'widht' (did you mean 'width'?)" in text
    assert "PROFILE: custom" in text
