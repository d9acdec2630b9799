"""Issue 18, point 2: every parameter of every chapter is validated against hostile values.

The chapters are discovered here, independently of the library's own listing: every ``book/**/*.py``
except the scorecard and files starting with ``_``, mapped to
``shallowflow.experiments.<part with - -> _>.<chapter with - -> _>``.  A chapter whose module or
``SCHEMA`` cannot be found fails, naming it (nothing is skipped: a chapter file exists, so its module
must).  For each chapter:

- its own defaults (the ``parameters`` cell, read with jupytext) and its ``params/smoke|paper`` files
  validate;
- every parameter receives a fixed battery of values that must be refused (NaN, inf, wrong types,
  values beyond 64 bits, empty and oversized lists, long, control-character, shell and unicode strings,
  huge numbers of either sign) and hypothesis-generated values (any float, integer, text, list);
  a value is either accepted (and then validation, rules included, raises nothing else) or refused by
  ONE :class:`ParameterError` raised by ``validate`` -- before any training -- whose one-line message
  names the parameter and is short.

"Huge" means: every scalar number of a chapter is bounded on both sides (1e300 and -1e300 refused by
its spec or a rule), every scalar integer refuses 10**12 (no count, size or iteration number of the
book is that large: a rule or a bound must say so before allocating; a seed value, a name ending in
``seed``, may be any 64-bit value), list items refuse 2**63, and items of integer lists not named
``*seed*`` refuse 10**12.  The number of inputs tried is printed.
"""
from __future__ import annotations

import ast
import copy
import functools
import importlib
import math
from pathlib import Path

import tempfile

import jupytext
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

# hypothesis keeps caches under .hypothesis/ in the working folder: keep the checkout clean
set_hypothesis_home_dir(str(Path(tempfile.gettempdir()) / "shallowflow-hypothesis"))

from shallowflow.params import MAX_LEN, STR_MAX, ParameterError, Spec, validate

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
PAGES = {"scorecard"}
MSG_MAX = 400
EXAMPLES = 120  # hypothesis examples per chapter
TRIED = {"fixed": 0, "generated": 0, "profiles": 0}


def discover() -> list[str]:
    out = []
    for p in sorted(BOOK.rglob("*.py")):
        rel = p.relative_to(BOOK)
        if any(part.startswith(("_", ".")) for part in rel.parts) or p.stem in PAGES or p.parent == BOOK:
            continue
        out.append(str(rel.with_suffix("")))
    return out


CHAPTERS = discover()


def module_of(chapter: str):
    part, name = chapter.split("/")
    modname = f"shallowflow.experiments.{part.replace('-', '_')}.{name.replace('-', '_')}"
    try:
        mod = importlib.import_module(modname)
    except ImportError as e:
        pytest.fail(f"chapter {chapter}: its module {modname} cannot be imported ({e})")
    if not isinstance(getattr(mod, "SCHEMA", None), dict):
        pytest.fail(f"chapter {chapter}: {modname} declares no SCHEMA")
    return mod


def defaults(chapter: str) -> dict:
    """The chapter's parameters cell, read with jupytext, evaluated as literals (or list/range/tuple): a fresh copy
    of one read per chapter file and process (keyed by the file's size and mtime; jupytext takes about 30 ms a
    chapter; four tests of this file, test_validation_bounded and test_limits read every chapter)."""
    path = BOOK / f"{chapter}.py"
    st_ = path.stat()
    return copy.deepcopy(_read_defaults(chapter, st_.st_size, st_.st_mtime_ns))


@functools.lru_cache(maxsize=None)
def _read_defaults(chapter: str, size: int, mtime_ns: int) -> dict:
    nb = jupytext.read(BOOK / f"{chapter}.py", fmt="py:percent")
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"chapter {chapter}: {len(cells)} cells tagged 'parameters'"
    out = {}
    for node in ast.parse(cells[0].source).body:
        assert isinstance(node, ast.Assign), f"chapter {chapter}: the parameters cell holds more than assignments"
        try:
            value = ast.literal_eval(node.value)
        except ValueError:
            value = eval(compile(ast.Expression(node.value), "<parameters>", "eval"),  # noqa: S307
                         {"__builtins__": {"list": list, "range": range, "tuple": tuple}})
        out[node.targets[0].id] = value
    return out


def test_chapters_are_discovered():
    assert "orthogonal-inputs/toy" in CHAPTERS and "early-alignment/failure-rates" in CHAPTERS
    assert not any(c.endswith("scorecard") for c in CHAPTERS)


def problem(name, value, base, schema, rules, must_refuse: bool) -> str | None:
    """None if ``value`` is handled correctly, else what went wrong."""
    try:
        validate({**base, name: value}, schema, rules)
    except ParameterError as e:
        msg = str(e)
        if repr(name) not in msg:
            return f"{name} = {value!r:.60}: the message does not name it: {msg[:200]}"
        if "\n" in msg or len(msg) > MSG_MAX:
            return f"{name}: message of {len(msg)} chars: {msg[:200]}"
        return None
    except Exception as e:  # noqa: BLE001 - anything else is the defect under test
        return f"{name} = {value!r:.60}: validate raised {type(e).__name__}: {str(e)[:200]}"
    return f"{name} = {value!r:.60} was accepted" if must_refuse else None


BAD_TYPES = [None, {"a": 1}, b"bytes", 1j, object(), (lambda: 0)]
BAD_STRINGS = ["", "x" * (STR_MAX + 1), "x" * 100_000, "; rm -rf / #", "$(reboot)", "`id`", "a\nb", "\x00",
               "\u202e\u0301", "λ", "../../../outside", " book"]


def hostile(name: str, spec: Spec) -> list:
    """Values that must be refused for this spec."""
    out = list(BAD_TYPES)
    if spec.kind == "bool":
        return out + [0, 1, "True", [True], float("nan")]
    if spec.kind == "str":
        bad = [s for s in BAD_STRINGS if spec.choices is not None and s not in spec.choices]
        if spec.choices is None:
            bad = ["x" * (STR_MAX + 1), "x" * 100_000, "a\nb", "\x00"]
        return out + bad + [3, 1.5, True, [spec.choices[0] if spec.choices else "a"]]
    if spec.kind == "data":  # params.DataFile: a named data set or a readable, well-shaped .npz/.csv file
        return out + [s for s in BAD_STRINGS if s not in (spec.choices or ())] + \
            ["/nonexistent/x.npz", "missing.csv", "/dev/null.npz", "/", "x" * 2000 + ".npz", 3, 1.5, True, ["x.npz"]]
    if spec.kind == "names":  # params.Sections
        return out + ["", "x", 3, True, [], [None], [3], ["\x00"]] + \
            ([[spec.choices[0], spec.choices[0]], spec.choices[0]] if spec.choices else [])
    nums = [float("nan"), float("inf"), float("-inf"), 10 ** 400, -(10 ** 400), "1", True, False, [1], 1e300, -1e300]
    if spec.kind == "int":  # a seed value (name ending in 'seed') may be any 64-bit value; a count may not
        return out + nums + [0.5, -1e-300, -(10 ** 12), 2 ** 63, -(2 ** 63) - 1, 2 ** 70, 2.0 ** 70] + \
            ([10 ** 12] if not name.endswith("seed") else [])
    if spec.kind == "float":
        return out + nums + [1e308]
    # lists
    item_bad = [float("nan"), float("inf"), "1", None, [1], True, 1e300, -1e300]
    if spec.kind == "ints":
        item_bad += [0.5, 2 ** 63, 2 ** 70] + ([10 ** 12] if "seed" not in name else [])
    empty = [[]] if spec.min_len >= 1 else []
    return out + ["1", 1, 1.0, list(range(MAX_LEN + 1)), [0] * 1_000_000] + empty + [[v] for v in item_bad]


PAPER_ENV = {"SHALLOWFLOW_MEMORY_GB": "64", "SHALLOWFLOW_WORK_BUDGET": "1e16"}  # the paper scale: a 128 GiB node
PAPER_TOO_BIG: set = set()  # see tests/test_limits.py (phase-transitions fits since its chunked Prop. 2)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_defaults_and_profile_files_validate(chapter, monkeypatch):
    mod = module_of(chapter)
    base = defaults(chapter)
    assert set(base) == set(mod.SCHEMA), f"chapter {chapter}: parameters cell and SCHEMA differ"
    validate(base, mod.SCHEMA, getattr(mod, "RULES", ()))
    TRIED["profiles"] += 1
    for profile in ("smoke", "paper"):
        path = ROOT / "params" / profile / f"{chapter}.yml"
        if profile == "paper":
            for k, v in PAPER_ENV.items():
                monkeypatch.setenv(k, v)
        if path.exists() and not (profile == "paper" and chapter in PAPER_TOO_BIG):
            values = {**base, **(yaml.safe_load(path.read_text()) or {}), "profile": profile}
            unknown = set(values) - set(mod.SCHEMA)
            assert not unknown, f"{path.relative_to(ROOT)}: unknown parameter(s) {sorted(unknown)}"
            try:
                validate(values, mod.SCHEMA, getattr(mod, "RULES", ()))
            except ParameterError as e:
                pytest.fail(f"{path.relative_to(ROOT)} does not validate: {e}")
            TRIED["profiles"] += 1


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_fixed_hostile_values_are_refused(chapter):
    mod = module_of(chapter)
    base, rules = defaults(chapter), getattr(mod, "RULES", ())
    bad = []
    for name, spec in mod.SCHEMA.items():
        for value in hostile(name, spec):
            bad.append(problem(name, value, base, mod.SCHEMA, rules, must_refuse=True))
            TRIED["fixed"] += 1
    bad = [b for b in bad if b]
    assert not bad, f"chapter {chapter}: {len(bad)} hostile value(s) mishandled:\n" + "\n".join(bad)


def any_value():
    scalar = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(), st.integers(-5, 5),
                       st.floats(-10, 10), st.text(max_size=300), st.booleans(), st.none())
    return st.one_of(scalar, st.lists(scalar, max_size=20), st.lists(st.integers(0, 2 ** 64), max_size=5))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_generated_values_are_accepted_or_refused_cleanly(chapter):
    mod = module_of(chapter)
    base, rules = defaults(chapter), getattr(mod, "RULES", ())
    names = sorted(mod.SCHEMA)

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(names), any_value())
    def run(name, value):
        TRIED["generated"] += 1
        must = isinstance(value, float) and not math.isfinite(value)
        bad = problem(name, value, base, mod.SCHEMA, rules, must_refuse=must)
        assert bad is None, f"chapter {chapter}: {bad}"

    run()


def test_report_the_number_of_inputs(capsys):
    """The number of hostile inputs (counted from the batteries, so that it holds under pytest-xdist too):
    every parameter of every chapter gets at least 10 values that must be refused."""
    fixed = {}
    for chapter in CHAPTERS:
        try:
            schema = module_of(chapter).SCHEMA
        except BaseException:  # noqa: BLE001 - the chapter's own tests report it
            continue
        for name, spec in schema.items():
            fixed[(chapter, name)] = len(hostile(name, spec))
    generated = EXAMPLES * len(CHAPTERS)
    with capsys.disabled():
        print(f"\n[params property] {len(CHAPTERS)} chapters, {len(fixed)} parameters: {sum(fixed.values())} fixed "
              f"hostile values + {generated} generated values = {sum(fixed.values()) + generated} inputs "
              f"(this process tried {sum(TRIED.values())})")
    assert fixed and min(fixed.values()) >= 10


def in_bounds(name: str, spec: Spec):
    """Accepted-looking values of one spec: within its bounds, modest lists (whole-schema combinations)."""
    lo = spec.low if spec.low is not None else -1e6
    hi = spec.high if spec.high is not None else 1e6
    if spec.kind == "str":
        return st.sampled_from(spec.choices) if spec.choices else st.just("x")
    if spec.kind == "data":  # the named data sets (files: tests/test_rerun_interface.py)
        return st.sampled_from(spec.choices)
    if spec.kind == "names":  # params.Sections: distinct names from the choices, at least one
        return st.lists(st.sampled_from(spec.choices), min_size=spec.min_len, max_size=len(spec.choices), unique=True)
    if spec.kind == "bool":
        return st.booleans()
    if spec.kind in ("int", "ints"):
        hi_i = int(min(hi, lo + 10 ** 7 if lo > -1e6 else 10 ** 7))
        item = st.integers(int(math.ceil(lo)), max(int(math.ceil(lo)), hi_i))
    else:
        item = st.floats(lo, min(hi, 1e12), exclude_min=spec.low_open, allow_nan=False)
    if spec.kind in ("ints", "floats"):
        return st.lists(item, min_size=spec.min_len, max_size=max(spec.min_len, min(spec.max_len, 5)))
    return item


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_whole_schema_combinations_are_refused_or_within_limits(chapter):
    """Issue 29 item 6: hypothesis over the whole schema (every parameter at once, within its bounds): a
    combination is refused by one ParameterError, or accepted with every memory and work estimate of the
    chapter finite and within the machine's limits (issue 25 item 1), and with the chapter's dry plan
    (``plan(P)`` at the end of its module, when it has one: every lookup and shape the chapter computes,
    without training) raising nothing but a one-line ParameterError."""
    from shallowflow import params as _p

    mod = module_of(chapter)
    base, rules = defaults(chapter), getattr(mod, "RULES", ())
    names = [n for n in mod.SCHEMA if n != "profile"]

    @settings(max_examples=40, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.fixed_dictionaries({n: in_bounds(n, mod.SCHEMA[n]) for n in names}),
           st.sets(st.sampled_from(names) if names else st.nothing(), max_size=len(names)))
    def run(drawn, keep):
        values = {**base, **{n: v for n, v in drawn.items() if n not in keep}}
        TRIED["generated"] += 1
        try:
            P = validate(values, mod.SCHEMA, rules, plan=False)
        except ParameterError as e:
            assert "\n" not in str(e)
            return
        if hasattr(mod, "plan"):  # the chapter's dry plan: every lookup and shape, no training (params.dry_plan)
            try:
                mod.plan(P)
            except ParameterError as e:  # a refusal in one line, naming the parameters
                assert "\n" not in str(e) and "'" in str(e), f"{chapter}: plan's refusal: {e}"
                return
            except Exception as e:  # noqa: BLE001 - an accepted combination that breaks the chapter: a missing rule
                pytest.fail(f"{chapter}: plan(P) raised {type(e).__name__}: {str(e)[:300]} on an accepted combination "
                            f"{ {n: values[n] for n in names} }")
        for name in ("memory_estimate", "work_estimate"):
            est = getattr(mod, name, None)
            if est is not None:
                v = float(est(P))
                limit = _p.memory_limit() if name == "memory_estimate" else _p.work_limit()
                assert math.isfinite(v) and v <= limit, f"{chapter}: {name} = {v:.3g} accepted over {limit:.3g}"

    run()
