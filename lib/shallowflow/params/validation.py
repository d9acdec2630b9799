"""Validation of a chapter's values against its schema: one value (:func:`check`, a data file through
:mod:`~shallowflow.params.datafile`), the rules, the dry plan, papermill's injected names and the profile's own
values (:mod:`~shallowflow.params.chapters`); see :mod:`shallowflow.params`."""
from __future__ import annotations

import ast
import difflib
import math
import sys
from types import SimpleNamespace
from typing import Any, Mapping, Sequence

from . import chapters
from .datafile import check_value
from .spec import INT_MAX, INT_MIN, ParameterError, Rule, Spec, _names, _scalar, distinct_items, short


def check(name: str, value: Any, spec: Spec):
    """Validate one value; returns it normalised (ints as int, floats as float, lists as lists)."""
    if spec.kind == "names":
        return _names(name, value, spec)
    if spec.kind == "data":
        return check_value(name, value, spec)
    if spec.kind in ("ints", "floats"):
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise ParameterError(f"parameter {name!r} = {short(value)} is invalid: expected {spec.accepted()}")
        if len(value) < spec.min_len:
            raise ParameterError(f"parameter {name!r} needs at least {spec.min_len} value(s), got {len(value)}")
        if len(value) > spec.max_len:
            raise ParameterError(f"parameter {name!r} has {len(value)} values, at most {spec.max_len} are "
                                 f"accepted")
        out = _plain_list(value, spec)
        if out is None:  # anything else, every refusal included: item by item, each message as it always was
            out = [_scalar(name, v, spec, spec.kind[:-1], f" (item {i})") for i, v in enumerate(value)]
        if distinct_items(name, spec) and len(set(out)) != len(out):
            seen: set = set()
            for i, twice in enumerate(out):
                if twice in seen:
                    break
                seen.add(twice)
            why = ("seeds (seed {} is given again at item {}; each seed is one run, and a copy would be counted as "
                   "another)" if "seeds" in str(name).split("_") else "values (value {} is given again at item {})")
            raise ParameterError(f"parameter {name!r} = {short(value)} is invalid: duplicate "
                                 f"{why.format(short(twice, 30), i)}")
        return out
    return _scalar(name, value, spec, spec.kind)


def _plain_list(value: Any, spec: Spec) -> list | None:
    """The fast path of :func:`check` for an ``ints``/``floats`` list or tuple of plain ``int`` (and, for floats,
    ``float``) items that :func:`~shallowflow.params.spec._scalar` would accept one by one: the same list it
    would return, in a few passes at C speed (a 10,000-item list item by item costs ~10 ms, far more under
    tracemalloc). ``None`` for anything else (another type, an out-of-bound, non-finite or too large item,
    ``choices``): the caller then checks item by item, so that every refusal and its message is the old one
    (tests/test_params_hperf.py compares the two on generated values)."""
    if type(value) not in (list, tuple) or not value or spec.choices is not None:
        return None
    types = set(map(type, value))
    if spec.kind == "ints":
        if types != {int}:
            return None  # bools, floats, numpy integers, ...: item by item
        out = list(value)
        lo, hi = min(out), max(out)
        if lo < INT_MIN or hi > INT_MAX:
            return None
    else:
        if not types <= {int, float}:
            return None
        try:
            out = list(map(float, value))
        except OverflowError:  # an int too large for a float
            return None
        if not all(map(math.isfinite, out)):
            return None
        lo, hi = min(out), max(out)
    if spec.low is not None and (lo < spec.low or (spec.low_open and lo == spec.low)):
        return None
    if spec.high is not None and hi > spec.high:
        return None
    return out


# ------------------------------------------------------------------------------------------------
# what papermill injected, and the profile's own values
INJECTED_HEADER = "# Parameters"


def _assignments(src: str) -> dict | None:
    """name -> value of a cell made of literal assignments (papermill's injected cell); None otherwise."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return None
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                out[node.targets[0].id] = _UNPARSED
        elif not isinstance(node, ast.Expr):
            return None
    return out


_UNPARSED = object()


def injected(values: Mapping[str, Any]) -> tuple[dict, str | None] | None:
    """The names and values papermill injected into this kernel, and the source of the parameters cell
    before them; None outside papermill (no ``In`` history or no injected cell)."""
    history = values.get("In")
    if not isinstance(history, list):
        return None
    for i in range(len(history) - 1, -1, -1):
        src = history[i]
        if isinstance(src, str) and src.lstrip().startswith(INJECTED_HEADER):
            names = _assignments(src)
            if names is None:
                continue
            before = history[i - 1] if i >= 1 and isinstance(history[i - 1], str) else None
            return names, before
    return None


def _defaults(src: str | None) -> dict:
    """Values of a parameters cell's assignments: literals, or list/range/tuple expressions (as
    :func:`shallowflow.params.chapters.parameters_cell` reads them; nothing else is evaluated)."""
    if not src:
        return {}
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return {}
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
                continue
            except (ValueError, SyntaxError, TypeError):
                pass
            if any(isinstance(n, (ast.Attribute, ast.Lambda, ast.NamedExpr)) for n in ast.walk(node.value)):
                continue
            try:
                out[node.targets[0].id] = eval(compile(ast.Expression(node.value), "<parameters>", "eval"),  # noqa: S307
                                               {"__builtins__": {"list": list, "range": range, "tuple": tuple}})
            except Exception:  # noqa: BLE001 - unknown default: the value is compared with nothing
                pass
    return out


_CHAPTER_OF: dict = {}  # id(SCHEMA) -> (SCHEMA, "<part>/<chapter>", module name)


def chapter_of(schema: Mapping[str, Spec]) -> str | None:
    """``<part>/<chapter>`` of the chapter module ``shallowflow.experiments.<part_pkg>.<chapter>`` whose
    ``SCHEMA`` is ``schema`` (or equal to it), None if no loaded module declares it.  A schema found by identity is
    remembered (a sweep validates thousands of points of one chapter; ``sys.modules`` holds thousands of modules)."""
    hit = _CHAPTER_OF.get(id(schema))
    if hit is not None and hit[0] is schema and sys.modules.get(hit[2]) is not None \
            and getattr(sys.modules[hit[2]], "SCHEMA", None) is schema:
        return hit[1]
    found = None
    for name, mod in list(sys.modules.items()):
        parts = name.split(".")
        if len(parts) == 4 and parts[:2] == ["shallowflow", "experiments"]:
            own = getattr(mod, "SCHEMA", None)
            if own is schema:
                _CHAPTER_OF[id(schema)] = (schema, f"{parts[2].replace('_', '-')}/{parts[3].replace('_', '-')}", name)
                return _CHAPTER_OF[id(schema)][1]
            if found is None and isinstance(own, dict) and own == dict(schema):
                found = f"{parts[2].replace('_', '-')}/{parts[3].replace('_', '-')}"
    return found


def profile_values(profile: str, schema: Mapping[str, Spec], defaults: Mapping[str, Any]) -> dict | None:
    """The values a run of ``profile`` declares: the chapter's parameters-cell defaults (``defaults``,
    the cell as executed, when the chapter is not known) for book, the profile's file over them for
    smoke and paper (None when that file cannot be located)."""
    chapter = chapter_of(schema)
    values = dict(defaults)
    if chapter is not None:
        try:
            values = chapters.defaults(chapter)
        except (OSError, ValueError, SyntaxError, NameError):
            pass
    if profile == "book":
        return values
    if chapter is None:
        return None
    path = chapters.profile_file(chapter, profile)
    if not path.exists():
        return values if profile == "paper" else None  # paper without a file: the book's values
    import yaml

    values.update(yaml.safe_load(path.read_text()) or {})
    return values


def _same(name: str, spec: Spec, a: Any, b: Any) -> bool:
    if a is _UNPARSED or b is _UNPARSED:
        return False
    try:
        return check(name, a, spec) == check(name, b, spec)
    except ParameterError:
        return False


def chapter_module(schema: Mapping[str, Spec]):
    """The loaded chapter module whose ``SCHEMA`` is ``schema`` (or equal to it), None if none is."""
    chapter = chapter_of(schema)
    if chapter is None:
        return None
    part, name = chapter.split("/", 1)
    return sys.modules.get(f"shallowflow.experiments.{part.replace('-', '_')}.{name.replace('-', '_')}")


def dry_plan(module, P: SimpleNamespace) -> None:
    """A chapter's dry plan: ``module.plan(P)`` when the chapter module defines one (issue 29 item 6).

    ``plan(P)`` is a cheap function at the end of a chapter's experiment module that performs every lookup and
    shape computation the chapter does with the validated values (which runs a grid holds, which item a cell
    indexes, which list it takes the min of), without training.  It raises :class:`ParameterError`, naming the
    parameters, for a combination the chapter cannot run; :func:`validate` calls it after the rules, so such a
    combination is refused in one line before a kernel starts.  Any other exception is a missing rule (a
    defect): :func:`validate` still refuses in one line, and ``tests/test_params_property.py``, which draws whole
    parameter sets from every ``SCHEMA`` and calls ``plan`` directly, fails on it."""
    fn = getattr(module, "plan", None)
    if fn is None:
        return
    try:
        fn(P)
    except ParameterError:
        raise
    except Exception as e:  # noqa: BLE001 - one line, never a traceback; the property test finds the missing rule
        raise ParameterError(f"these parameter values pass the rules but the chapter's dry plan fails on them "
                             f"({type(e).__name__}: {short(str(e), 160)}); this is a missing rule, please report it") \
            from None


def validate(values: Mapping[str, Any], schema: Mapping[str, Spec],
             rules: Sequence[Rule] = (), *, plan: bool = True) -> SimpleNamespace:
    """Validate every parameter of ``schema`` found in ``values`` (e.g. a notebook's globals()), then the
    ``rules`` that relate several parameters, then the chapter's dry plan (:func:`dry_plan`; ``plan=False``
    skips it); the error names the parameters involved.

    Under papermill, names injected but not declared are refused, and a run whose values differ from
    its profile's comes back with ``profile == "custom"`` (see the module docstring)."""
    inj = injected(values)
    if inj is not None:
        unknown = [n for n in inj[0] if n not in schema]
        if unknown:
            hints = [f"{n!r} (did you mean {m[0]!r}?)" if (m := difflib.get_close_matches(n, schema, 1)) else repr(n)
                     for n in unknown]
            raise ParameterError(f"unknown parameter(s) {', '.join(hints)}: this chapter declares "
                                 f"{', '.join(schema)}")
    out = {}
    for name, spec in schema.items():
        if name not in values:
            raise ParameterError(f"parameter {name!r} is missing ({spec.doc or spec.accepted()})")
        out[name] = check(name, values[name], spec)
    P = SimpleNamespace(**out)
    for rule in rules:
        rule.check(P)
    if plan:
        dry_plan(chapter_module(schema), P)
    if inj is not None and "profile" in schema and P.profile != "custom":
        names, cell = inj
        declared = profile_values(P.profile, schema, _defaults(cell))
        if declared is not None:
            known = [n for n in schema if n != "profile" and n in declared]
            # every value against the profile's (a profile's name alone does not make its values);
            # without the parameters cell, any injected value counts as a change
            changed = [n for n in known if not _same(n, schema[n], values[n], declared[n])] + \
                      [n for n in names if n != "profile" and n in schema and n not in declared]
            if changed:
                print(f"custom run: {', '.join(changed)} differ(s) from the {P.profile} profile's values")
                P.profile = "custom"
    return P


def describe(schema: Mapping[str, Spec]) -> str:
    """One line per parameter: name, accepted values, meaning."""
    return "\n".join(f"{n}: {s.accepted()} - {s.doc}" for n, s in schema.items())
