"""Validation of chapter parameters: a bad value stops with a message naming the parameter.

Each chapter declares a schema, a dict from parameter name to :class:`Spec`, and validates the
values of its parameters cell (after papermill's injection) before any training::

    P = validate(globals(), SCHEMA)

Only the names in the schema are read; a missing name, a wrong type, a value outside its range or
not among its choices raises :class:`ParameterError` with the parameter's name and what it accepts.
Constraints between parameters are :class:`Rule` objects, checked after the single values::

    P = validate(globals(), SCHEMA, RULES)
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Callable, Mapping, Sequence


class ParameterError(ValueError):
    """A chapter parameter has an invalid value."""


@dataclass(frozen=True)
class Spec:
    kind: str  # "int", "float", "str", "bool", "ints", "floats"
    doc: str = ""
    low: float | None = None  # inclusive bounds
    high: float | None = None
    choices: tuple | None = None
    low_open: bool = False  # exclude `low` itself (e.g. a scale or a step size must be > 0)
    min_len: int = 1

    def accepted(self) -> str:
        if self.choices is not None:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.low_open else '>='} {self.low:g}")
        if self.high is not None:
            parts.append(f"<= {self.high:g}")
        what = {"int": "an integer", "float": "a number", "str": "a string", "bool": "True or False",
                "ints": "a list of integers", "floats": "a list of numbers"}[self.kind]
        return what + (" " + " and ".join(parts) if parts else "")


def Int(doc="", low=None, high=None, **kw) -> Spec:
    return Spec("int", doc, low, high, **kw)


def Float(doc="", low=None, high=None, **kw) -> Spec:
    return Spec("float", doc, low, high, **kw)


def Str(doc="", choices=None) -> Spec:
    return Spec("str", doc, choices=tuple(choices) if choices else None)


PROFILES = ("book", "smoke", "paper", "custom")
# the first parameter of every chapter: which registry verdicts its checks are compared with
PROFILE = Str("which registry verdicts to compare against (book, smoke; paper and custom: shown, not compared)",
              choices=PROFILES)


def Bool(doc="") -> Spec:
    return Spec("bool", doc)


def Ints(doc="", low=None, high=None, min_len=1) -> Spec:
    return Spec("ints", doc, low, high, min_len=min_len)


def Floats(doc="", low=None, high=None, low_open=False, min_len=1) -> Spec:
    return Spec("floats", doc, low, high, low_open=low_open, min_len=min_len)


def _scalar(name: str, value: Any, spec: Spec, kind: str):
    bad = ParameterError(f"parameter {name!r} = {value!r} is invalid: expected {spec.accepted()}")
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise bad
    elif kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad
        value = float(value)
        if not math.isfinite(value):
            raise bad
    elif kind == "str":
        if not isinstance(value, str):
            raise bad
    elif kind == "bool":
        if not isinstance(value, bool):
            raise bad
    if spec.choices is not None and value not in spec.choices:
        raise bad
    if spec.low is not None and (value < spec.low or (spec.low_open and value == spec.low)):
        raise bad
    if spec.high is not None and value > spec.high:
        raise bad
    return value


def check(name: str, value: Any, spec: Spec):
    """Validate one value; returns it normalised (ints as int, floats as float, lists as lists)."""
    if spec.kind in ("ints", "floats"):
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise ParameterError(f"parameter {name!r} = {value!r} is invalid: expected {spec.accepted()}")
        if len(value) < spec.min_len:
            raise ParameterError(f"parameter {name!r} needs at least {spec.min_len} value(s), got {len(value)}")
        return [_scalar(name, v, spec, spec.kind[:-1]) for v in value]
    return _scalar(name, value, spec, spec.kind)


@dataclass(frozen=True)
class Rule:
    """A constraint between parameters: ``test(P)`` must hold on the validated namespace."""

    names: tuple
    test: Callable[[SimpleNamespace], bool]
    message: str


def validate(values: Mapping[str, Any], schema: Mapping[str, Spec],
             rules: Sequence[Rule] = ()) -> SimpleNamespace:
    """Validate every parameter of ``schema`` found in ``values`` (e.g. a notebook's globals()), then the
    ``rules`` that relate several parameters; the error names the parameters involved."""
    out = {}
    for name, spec in schema.items():
        if name not in values:
            raise ParameterError(f"parameter {name!r} is missing ({spec.doc or spec.accepted()})")
        out[name] = check(name, values[name], spec)
    P = SimpleNamespace(**out)
    for rule in rules:
        if not rule.test(P):
            got = ", ".join(f"{n} = {getattr(P, n)!r}" for n in rule.names)
            raise ParameterError(f"parameters {' and '.join(repr(n) for n in rule.names)} are inconsistent "
                                 f"({got}): {rule.message}")
    return P


def describe(schema: Mapping[str, Spec]) -> str:
    """One line per parameter: name, accepted values, meaning."""
    return "\n".join(f"{n}: {s.accepted()} - {s.doc}" for n, s in schema.items())
