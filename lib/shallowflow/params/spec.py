"""The parameter language: :class:`Spec` and its kinds (:func:`Int`, :func:`Floats`, :func:`Sections`, ...),
:class:`Rule` and the budgets it checks (work, memory), :class:`ParameterError`; nothing here reads a file or a
chapter (see :mod:`shallowflow.params`)."""
from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable, Sequence
INT_MIN, INT_MAX = -(2 ** 63), 2 ** 63 - 1  # every integer parameter fits int64 (seeds, counts, sizes)
MAX_LEN = 10_000  # default longest list
STR_MAX = 200  # longest string
REPR_MAX = 80  # longest value echoed in a message
GOT_MAX = 160  # longest list of the values a failing rule echoes (longer: the names only)
STEP_BUDGET = 10 ** 8  # gradient-descent iterations a chapter's rules allow one run (time / lr, steps)
ESTIMATE_KINDS = ("work", "memory", None)  # what a Rule.work / Rule.memory estimates (Rule.kind); None: any other rule


def ensemble_bytes(runs: float, width: float, dim: float, copies: float = 1) -> float:
    """Bytes of ``copies`` float64 copies of an ensemble's parameters (runs x width x (dim + 1)): the unit of
    the chapters' memory estimates (:meth:`Rule.memory`)."""
    return 8.0 * runs * width * (dim + 1) * copies


# Work budget: the work units (about multiply-adds) one chapter run may need, all its experiments together.  One
# unit is one neuron x point x input coordinate of one gradient-descent step, and a step costs STEP_OVERHEAD
# units more whatever its size (Python and torch calls) (:func:`gd_work`).  The book's chapters ran at 0.2 to
# 1 ns per unit on the 2-core CI machine (params/timings.json), so 3e14 is about a day there; the sources' own
# scales (params/paper/) take hours, and an accepted value cannot ask for weeks.
WORK_BUDGET = 3e14
STEP_OVERHEAD = 5e4


def array_bytes(*shape: float, copies: float = 1) -> float:
    """Bytes of ``copies`` float64 arrays of this shape (floats: an estimate never overflows)."""
    out = 8.0 * copies
    for n in shape:
        out *= float(n)
    return out


def gd_bytes(runs: float, width: float, n: float, dim: float, steps: float = 0, record_every: float = 1,
             snapshots: float = 0) -> float:
    """Bytes one ensemble training call holds (:func:`shallowflow.engine.train.gradient_descent` and the chapters'
    own GD loops): parameters, gradients and the best/final copies (4 ensembles), the per-step activations
    (4 arrays of runs x width x n), the recorded losses (one per ``record_every`` steps) and ``snapshots``
    stored copies of the parameters."""
    return (ensemble_bytes(runs, width, dim, 4 + snapshots) + array_bytes(runs, width, n, copies=4)
            + array_bytes(runs, float(steps) / max(float(record_every), 1.0) + 1))


def gd_work(runs: float, width: float, n: float, dim: float, steps: float) -> float:
    """Work units (see :data:`WORK_BUDGET`) of ``steps`` full-batch steps of an ensemble of ``runs`` two-layer
    networks of ``width`` neurons on ``n`` points of dimension ``dim``."""
    return (float(runs) * float(width) * float(n) * (float(dim) + 1) + STEP_OVERHEAD) * float(steps)


class ParameterError(ValueError):
    """A chapter parameter has an invalid value (or several have inconsistent ones)."""


def short(value: Any, limit: int = REPR_MAX) -> str:
    """repr(value), cut to ``limit`` characters (never raises, never formats a huge value in full)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"<integer of {value.bit_length()} bits>"
    if isinstance(value, (list, tuple)) and len(value) > limit:
        head = value[:limit]
        text = repr(head)[:-1] + f", ... ({len(value)} items)" + ("]" if isinstance(value, list) else ")")
    elif isinstance(value, str) and len(value) > 4 * limit:
        text = repr(value[:limit])
    else:
        try:
            text = repr(value)
        except Exception:  # noqa: BLE001 - a value whose repr fails is still named
            text = f"<{type(value).__name__}>"
    if len(text) > limit:
        text = text[:limit - 5] + " ...)" if text[:1] in "[(" else text[:limit - 4] + " ..."
    return text


@dataclass(frozen=True)
class Spec:
    kind: str  # "int", "float", "str", "bool", "ints", "floats", "names" (Sections), "data" (DataFile)
    doc: str = ""
    low: float | None = None  # inclusive bounds
    high: float | None = None
    choices: tuple | None = None
    low_open: bool = False  # exclude `low` itself (e.g. a scale or a step size must be > 0)
    min_len: int = 1
    max_len: int = MAX_LEN
    limits: "FileLimits | None" = None  # a DataFile's shape and size limits
    distinct: bool | None = None  # a list of distinct items (None: seeds lists only, see :func:`distinct_items`)

    def accepted(self) -> str:
        if self.kind == "data":
            named = f"one of {', '.join(repr(c) for c in self.choices)}, or " if self.choices else ""
            return named + "a path to a .npz (arrays X (n, d), y) or .csv file (y in the last column) " + \
                self.limits.text()
        if self.kind == "names":
            return (f"a list of distinct names from {', '.join(repr(c) for c in self.choices)} "
                    f"(at least {self.min_len})")
        if self.choices is not None:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.low_open else '>='} {self.low:g}")
        if self.high is not None:
            parts.append(f"<= {self.high:g}")
        what = {"int": "an integer", "float": "a number", "str": "a string", "bool": "True or False",
                "ints": "a list of integers", "floats": "a list of numbers"}[self.kind]
        text = what + (" " + " and ".join(parts) if parts else "")
        if self.kind in ("ints", "floats"):
            text += f" ({self.min_len} to {self.max_len} items)"
        return text


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


def Ints(doc="", low=None, high=None, min_len=1, max_len=MAX_LEN, distinct=None) -> Spec:
    """A list of integers; ``distinct`` (default: only for a seeds list, :func:`distinct_items`) refuses a
    repeated item."""
    return Spec("ints", doc, low, high, min_len=min_len, max_len=max_len, distinct=distinct)


def Seeds(doc="", low=0, high=INT_MAX, min_len=1, max_len=MAX_LEN) -> Spec:
    """A list of distinct seeds (one run per seed: a repeated seed would count one run as several)."""
    return Ints(doc, low, high, min_len=min_len, max_len=max_len, distinct=True)


def distinct_items(name: str, spec: Spec) -> bool:
    """Whether a list parameter's items must be distinct: ``spec.distinct`` when set, else every integer list
    named for seeds (``seeds``, ``sat_seeds``, ``seeds_c``: ``seeds`` one of the name's ``_``-separated words),
    since each seed is one run and a check counts runs (issue 38 N6)."""
    if spec.distinct is not None:
        return spec.distinct
    return spec.kind == "ints" and "seeds" in str(name).split("_")


def Floats(doc="", low=None, high=None, low_open=False, min_len=1, max_len=MAX_LEN) -> Spec:
    return Spec("floats", doc, low, high, low_open=low_open, min_len=min_len, max_len=max_len)


def Sections(doc="", choices=()) -> Spec:
    """A chapter's ``sections`` parameter: a list of distinct names from ``choices`` (at least one), normalised to
    the order of ``choices``.  The chapter's default is every name (``sections = ["fig3", "fig4"]``) and it runs
    only the parts named; a run whose sections differ from its profile's is a custom run, and the checks of the
    skipped parts are reported as not run (:meth:`shallowflow.verdicts.Claims.finish`)."""
    choices = tuple(choices)
    if not choices or len(set(choices)) != len(choices) or not all(isinstance(c, str) and c for c in choices):
        raise ValueError(f"Sections needs distinct non-empty names, got {short(choices)}")
    return Spec("names", doc, choices=choices, min_len=1, max_len=len(choices))


def _names(name: str, value: Any, spec: Spec) -> list:
    """A :func:`Sections` value: distinct names from the choices, at least ``min_len``, in the choices' order."""
    def bad(why: str = ""):
        return ParameterError(f"parameter {name!r} = {short(value)} is invalid: expected {spec.accepted()}{why}")

    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise bad()
    if len(value) > MAX_LEN:
        raise bad(f" (got {len(value)} items)")
    for i, v in enumerate(value):
        if not isinstance(v, str) or v not in spec.choices:
            raise bad(f" (item {i}, {short(v, 40)}, is not one of them)")
    if len(set(value)) != len(value):
        raise bad(" (a name is given twice)")
    if len(value) < spec.min_len:
        raise bad()
    return [c for c in spec.choices if c in value]


def _scalar(name: str, value: Any, spec: Spec, kind: str, where: str = ""):
    def bad(why: str = ""):
        return ParameterError(f"parameter {name!r} = {short(value)}{where} is invalid: expected "
                              f"{spec.accepted()}{why}")

    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, (numbers.Integral, float)):
            raise bad()
        if isinstance(value, float):
            if not value.is_integer():
                raise bad()
            value = int(value)
        value = int(value)
        if not INT_MIN <= value <= INT_MAX:
            raise bad(" (integers must fit 64 bits: |value| < 2**63)")
    elif kind == "float":
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise bad()
        try:
            value = float(value)
        except (OverflowError, ValueError):
            raise bad() from None
        if not math.isfinite(value):
            raise bad()
    elif kind == "str":
        if not isinstance(value, str):
            raise bad()
        if spec.choices is None and (len(value) > STR_MAX or not value.isprintable()):
            raise bad(f" (at most {STR_MAX} printable characters)")
    elif kind == "bool":
        if not isinstance(value, bool):
            raise bad()
    if spec.choices is not None and value not in spec.choices:
        raise bad()
    if spec.low is not None and (value < spec.low or (spec.low_open and value == spec.low)):
        raise bad()
    if spec.high is not None and value > spec.high:
        raise bad()
    return value



def _largest(value) -> float:
    return max(value) if isinstance(value, (list, tuple)) else value


def _positive_env(var: str, unit: str) -> float | None:
    """The environment variable ``var`` as a finite number > 0 (None when unset); else one ParameterError line."""
    env = os.environ.get(var)
    if not env:
        return None
    try:
        value = float(env)
    except ValueError:
        value = -1.0
    if not (math.isfinite(value) and value > 0):
        raise ParameterError(f"environment variable {var} = {short(env)} is invalid: expected a number of {unit} > 0")
    return value


def memory_limit() -> float:
    """Bytes a single run may allocate: ``SHALLOWFLOW_MEMORY_GB`` (GiB) or half the physical memory."""
    gb = _positive_env("SHALLOWFLOW_MEMORY_GB", "GiB")
    if gb is not None:
        return gb * 2 ** 30
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2
    except (ValueError, OSError, AttributeError):
        return 8 * 2 ** 30


def work_limit() -> float:
    """Work units a chapter run may need: ``SHALLOWFLOW_WORK_BUDGET`` or :data:`WORK_BUDGET` (about a day of the
    2-core machine; the sources' scales of some chapters, params/paper/, are for a GPU or a cluster)."""
    units = _positive_env("SHALLOWFLOW_WORK_BUDGET", "work units")
    return WORK_BUDGET if units is None else units


def _bytes(x: float) -> str:
    for unit, size in (("PiB", 2 ** 50), ("TiB", 2 ** 40), ("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if x >= size:
            return f"{x / size:.3g} {unit}"
    return f"{x:.0f} B"


@dataclass(frozen=True)
class Rule:
    """A constraint between parameters: ``test(P)`` must hold on the validated namespace.

    ``message`` (a string, shown on the chapter's page) says what must hold; ``detail(P)``, optional, adds
    the computed numbers when the rule fails.  A test that raises (an overflow, a division by zero)
    counts as a failure of the rule.

    A rule that bounds an estimate says what it estimates, so that a caller (the cost of a re-run,
    :mod:`shallowflow.executor.estimate`) reads it without running the test: ``kind`` is ``"work"``
    (:meth:`work`: ``estimate(P)`` in :func:`gd_work` units), ``"memory"`` (:meth:`memory`: ``estimate(P)``
    in bytes) or None (any other rule, ``estimate`` None); ``limit()`` is the bound the test compares
    the estimate with at validation time (:func:`work_limit`, :func:`memory_limit` or the rule's own).
    """

    names: tuple
    test: Callable[[SimpleNamespace], bool]
    message: str
    detail: Callable[[SimpleNamespace], str] | None = None
    kind: str | None = field(default=None, compare=False)
    estimate: Callable[[SimpleNamespace], float] | None = field(default=None, compare=False, repr=False)
    limit: Callable[[], float] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if self.kind not in ESTIMATE_KINDS:
            raise ValueError(f"Rule.kind must be one of {ESTIMATE_KINDS}, got {self.kind!r}")
        if (self.kind is None) != (self.estimate is None):
            raise ValueError("a Rule has an estimate exactly when it has a kind ('work' or 'memory')")

    def check(self, P: SimpleNamespace) -> None:
        try:
            ok = bool(self.test(P))
        except (ArithmeticError, ValueError, TypeError) as e:
            ok, note = False, f" ({type(e).__name__}: {short(str(e))})"
        else:
            note = ""
        if ok:
            return
        if self.detail is not None:
            try:
                note = f": {self.detail(P)}" + note
            except (ArithmeticError, ValueError, TypeError):
                pass
        got = ", ".join(f"{n} = {short(getattr(P, n), 40)}" for n in self.names)
        if len(got) > GOT_MAX:  # a rule over many parameters (a chapter's work budget): the message stays short
            got = ""
        names = [repr(n) for n in self.names]
        named = " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]
        raise ParameterError(f"parameters {named} are inconsistent{f' ({got})' if got else ''}: {self.message}{note}")

    @classmethod
    def at_most(cls, small: str, large: str, message: str = "") -> "Rule":
        """``small`` (its largest item if a list) must be at most ``large`` (e.g. panels <= steps)."""
        return cls((small, large), lambda P: _largest(getattr(P, small)) <= _largest(getattr(P, large)),
                   message or f"{small} must be at most {large}")

    @classmethod
    def budget(cls, names: Sequence[str], cost: Callable[[SimpleNamespace], float], limit: float,
               unit: str = "iterations", what: str = "") -> "Rule":
        """A computed cost (``cost(P)``, e.g. ``P.time / P.lr`` iterations) must be finite and <= ``limit``."""
        def test(P):
            c = cost(P)
            return math.isfinite(c) and c <= limit

        return cls(tuple(names), test, f"{what or 'the run'} may need at most {limit:.3g} {unit}",
                   lambda P: f"it needs {float(cost(P)):.3g}")

    @classmethod
    def work(cls, names: Sequence[str], cost: Callable[[SimpleNamespace], float], what: str = "") -> "Rule":
        """A budget in work units (:func:`gd_work`) against :func:`work_limit` at validation time (default
        :data:`WORK_BUDGET`, about a day of the 2-core machine; ``SHALLOWFLOW_WORK_BUDGET`` on a larger one)."""
        def test(P):
            c = float(cost(P))
            return math.isfinite(c) and c <= work_limit()

        return cls(tuple(names), test, f"{what or 'the run'} must fit the work budget",
                   lambda P: f"it needs {float(cost(P)):.3g} units, the budget is {work_limit():.3g} (SHALLOWFLOW_WORK_BUDGET)",
                   kind="work", estimate=cost, limit=work_limit)

    @classmethod
    def memory(cls, names: Sequence[str], estimate: Callable[[SimpleNamespace], float],
               limit: float | None = None, what: str = "") -> "Rule":
        """An estimate of the largest allocation in bytes (``estimate(P)``), checked before allocating
        against ``limit`` (default :func:`memory_limit` at validation time: half the machine's memory)."""
        def lim() -> float:
            return limit if limit is not None else memory_limit()

        def test(P):
            b = float(estimate(P))
            return math.isfinite(b) and b <= lim()

        where = f"{_bytes(limit)}" if limit is not None else "half the machine's memory (SHALLOWFLOW_MEMORY_GB)"
        return cls(tuple(names), test, f"{what or 'the run'} must fit in {where}",
                   lambda P: f"it would allocate about {_bytes(float(estimate(P)))}, the limit is {_bytes(lim())}",
                   kind="memory", estimate=estimate, limit=lim)


def memory_rule(names: Sequence[str], estimate: Callable[[SimpleNamespace], float], limit: float | None = None,
                what: str = "") -> Rule:
    """Same as :meth:`Rule.memory`."""
    return Rule.memory(names, estimate, limit, what)
