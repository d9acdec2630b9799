"""Why a check fails, proved: causes, their evidence, the generated why, and a target's verdict.

A failing check's registered cause is a claim of its own. Four causes excuse a failure, each only
through *evidence*, checks of the same source that must pass where the failure is registered:

- ``erratum``: a check demonstrating the source's error (a counterexample, the corrected constant);
  with ``refutes: true`` the evidence shows the claim itself false;
- ``convention``: the source's claim computed under the other reading;
- ``method``: the failure is the book's own (the same check at a smaller step or a larger scale, or a
  measured trend towards the criterion);
- ``spec``: the source's own claim, as the source states it, checked separately.

Two causes excuse nothing: ``scale`` (the book's budget cannot decide; ``decide:`` names the paper
profile that would) makes the target *undecided at this scale*, and ``not-reproduced`` (``tried:`` lists
what was run) leaves the failure against the source. A cause whose evidence did not run or did not pass
excuses nothing either: at book scale that fails the build (:meth:`Claims.mismatches`,
:func:`~shallowflow.verdicts.scorecard.scorecard_problems`), at smoke scale the target is undecided.
"""
from __future__ import annotations

import numpy as np

from .registry import ATTRIBUTES, FAIL, PASS, PLACEHOLDER, UNDECIDED

CAUSES = {
    "erratum": "the source is wrong (evidence: a check demonstrating the error)",
    "convention": "an unstated convention of the source (evidence: the claim under the other reading)",
    "method": "an effect of this book's computation (evidence: the check passing at a smaller step or larger scale)",
    "spec": "the specification's criterion, not the source's claim (evidence: the source's own claim, checked)",
    "scale": "undecided at this scale: the book's budget cannot decide (the paper profile would)",
    "not-reproduced": "not reproduced, cause unknown (with what was tried)",
}
EVIDENCE_CAUSES = ("erratum", "convention", "method", "spec")
#: the causes whose registered evidence is computed and must hold at book scale: the excusing ones, and ``scale``,
#: whose evidence is what says more scale would decide (a measured trend toward the criterion across budgets, or a
#: current run at the source's scale); a ``scale`` without evidence names what the book cannot have (``needs:``)
PROVED_CAUSES = EVIDENCE_CAUSES + ("scale",)
SOURCE_CAUSES = ("erratum", "convention")  # failures that are the source's, not the book's
DEVIATION_CAUSES = ("method", "spec")  # failures that are the book's or the specification's, proved so

# target verdicts, in the order the scorecard counts them
TARGET_VERDICTS = ("reproduced", "verified (exact)", "finding (this book)", "reproduced, source erratum shown",
                   "reproduced, book deviation shown",
                   "source claim false (erratum shown)", "partly", "undecided at this scale", "not reproduced",
                   "illustration", "not run at this scale", "not attempted", "not run")

VERIFIED, UNVERIFIED, PENDING = "verified", "unverified", "pending"

#: a target's ``kind:``: an identity that holds by construction or by a proved theorem, checked numerically
#: (*verified (exact)*), or the book's own finding rather than a claim of the source (*finding (this book)*);
#: both are counted apart from the source's empirical reproductions
KINDS = {"exact": "verified (exact)", "finding": "finding (this book)"}

#: the maps under which two recorded measurements are the same measurement (evidence may not be the failing
#: check's own numbers under another name: the same ratios, or their complement against another threshold)
_SAME_MAPS = (("equal", lambda v: v), ("negated", lambda v: -v), ("complement (1 - x)", lambda v: 1.0 - v),
              ("reciprocal", lambda v: 1.0 / v), ("logarithm", lambda v: np.log(v)), ("exponential", lambda v: np.exp(v)))


#: the words an evidence reason ends with when the evidence is the failing check's own values (a defect of the registry
#: at every scale, so refused at every compared profile, not only at book scale)
SAME_MEASUREMENT = "the same measurement under another name explains nothing"


def same_measurement(a, b) -> str:
    """How the values ``b`` are the values ``a`` under a monotone map (:data:`_SAME_MAPS`, or a common positive or
    negative factor for two or more values); "" when they are not. Values are compared to a relative 1e-9."""
    import warnings

    x = np.asarray(list(a or []), dtype=float)
    y = np.asarray(list(b or []), dtype=float)
    if x.size == 0 or x.size != y.size or not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        return ""
    if x.size < 4 and np.all(x == np.round(x)) and np.all(y == np.round(y)):
        return ""  # a few flags or counts (a passing 1 beside a failing 0) coincide by chance, not by construction

    def close(u, v):
        return bool(np.all(np.isfinite(u)) and np.allclose(u, v, rtol=1e-9, atol=1e-300))

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for name, f in _SAME_MAPS[:1] if x.size == 1 else _SAME_MAPS:  # one number: only itself is the same
            if close(f(x), y):
                return name
        if x.size >= 2 and np.all(x != 0) and not np.all(x == x[0]):
            ratio = y / x
            if np.all(np.isfinite(ratio)) and ratio[0] != 0 and close(ratio, np.full_like(ratio, ratio[0])):
                return f"scaled by {ratio[0]:.4g}"
    return ""


def _get(c, key: str, default=""):
    return getattr(c, key, default) if not isinstance(c, dict) else c.get(key, default)


def render_why(template: str, this, lookup) -> str:
    """Fill a why template from the claim records.

    ``{measured}`` (or ``{criterion}``, ``{verdict}``, ``{source_value}``) is this check's; ``{T/name}``
    or ``{T/name.criterion}`` another check's of the same chapter, found by ``lookup(id)`` (a check or
    None: then the text says it was not measured).
    """
    def fill(match):
        key = match.group(1)
        if "/" not in key:
            return str(_get(this, key, match.group(0))) if key in ATTRIBUTES else match.group(0)
        ref, _, attr = key.rpartition(".")
        if attr not in ATTRIBUTES:
            ref, attr = key, "measured"
        other = lookup(ref)
        return f"({ref} not measured in this run)" if other is None else str(_get(other, attr))

    return PLACEHOLDER.sub(fill, template or "")


def independent_of(c):
    """The values a failing check's evidence must differ from (:func:`same_measurement`), or None when the rule does
    not apply: a ``spec`` cause's evidence is by definition the source's own criterion read on the same measurement
    (the specification's stricter window fails, the source's words pass), so only erratum, convention and method
    causes must be proved by a measurement of their own."""
    return None if _get(c, "cause") == "spec" else list(_get(c, "values", []) or [])


def evidence_status(evidence: list, lookup, elsewhere=lambda ev: False, values=None) -> tuple[str, str]:
    """Whether a cause's evidence holds: (``verified``, "") when every evidence check ran and passed;
    (``pending``, ...) when some are computed by another chapter (``elsewhere(id)``) and the rest hold;
    (``unverified``, reason) otherwise, or when no evidence is named.  With the failing check's own ``values``,
    evidence that carries the same values (:func:`same_measurement`) proves nothing and is unverified."""
    if not evidence:
        return UNVERIFIED, "no evidence is registered for this cause"
    pending = []
    for ev in evidence:
        c = lookup(ev)
        if c is None:
            if elsewhere(ev):
                pending.append(ev)
                continue
            return UNVERIFIED, f"its evidence {ev} did not run"
        if _get(c, "verdict") != PASS:
            return UNVERIFIED, f"its evidence {ev} does not hold (measured {_get(c, 'measured')})"
        same = same_measurement(values, _get(c, "values", [])) if values is not None else ""
        if same:
            return UNVERIFIED, (f"its evidence {ev} carries the failing check's own measured values ({same}): "
                                + SAME_MEASUREMENT)
    if pending:
        return PENDING, f"evidence computed by another chapter: {', '.join(pending)}"
    return VERIFIED, ""


def classify(c) -> str:
    """What a check says about its target: ``pass``, ``source`` (a proved erratum or convention),
    ``refuted`` (a proved erratum that shows the claim false), ``deviation`` (a proved method or spec
    cause), ``undecided`` (cause ``scale``, a cause whose evidence does not hold here, or a check the
    registry leaves undecided at this scale) or ``unexplained``."""
    if (c if isinstance(c, str) else _get(c, "verdict")) == PASS:
        return "pass"
    if isinstance(c, str):
        return "unexplained"
    cause, status = _get(c, "cause"), _get(c, "evidence_status")
    if cause in EVIDENCE_CAUSES:
        if status != VERIFIED:
            return "undecided"
        if cause in SOURCE_CAUSES:  # a refutation stands only with checks that its counterexample is in scope
            return "refuted" if _get(c, "refutes", False) and _get(c, "in_scope", []) else "source"
        return "deviation"
    if cause == "scale" or (not cause and _get(c, "expected", None) == UNDECIDED):
        return "undecided"
    return "unexplained"


def target_verdict(checks: list, entry: dict | None = None) -> str:
    """A target's verdict from its checks (verdict strings, :class:`Check` objects or their records).

    - *illustration*: the registry says there is nothing to compute; *not attempted*: no check ran;
    - *reproduced*: every check passed (*verified (exact)* for a target of ``kind: exact``, *finding (this book)*
      for one of ``kind: finding``);
    - a failure with no proved cause: *not reproduced* when no check passed, else *partly*;
    - else a failure undecided at this scale: *undecided at this scale*;
    - else a proved erratum: *source claim false (erratum shown)* when an erratum refutes the claim (and checks
      that its counterexample lies in the source's stated scope, ``in-scope:``, hold),
      *reproduced, source erratum shown* otherwise;
    - else (proved method or spec causes only): *reproduced, book deviation shown*.
    """
    entry = entry or {}
    if entry.get("illustration") and not checks:
        return "illustration"
    if not checks:
        return "not attempted"
    kinds = [classify(c) for c in checks]
    if all(k == "pass" for k in kinds):
        return KINDS.get(entry.get("kind"), "reproduced")
    if "unexplained" in kinds:
        return "partly" if "pass" in kinds else "not reproduced"
    if "undecided" in kinds:
        return "undecided at this scale"
    if "refuted" in kinds:
        return "source claim false (erratum shown)"
    if "source" in kinds:
        return "reproduced, source erratum shown"
    return "reproduced, book deviation shown"


def explain(c) -> str:
    """The cause of a failing check for the reader, its why filled from the records ("" when it passed)."""
    if _get(c, "verdict") != FAIL:
        return ""
    cause, why = _get(c, "cause"), _get(c, "why")
    if cause:
        text = f"{cause}: {why}" if why else cause
        status, reason = _get(c, "evidence_status"), _get(c, "evidence_reason")
        if cause in EVIDENCE_CAUSES:
            shown = ", ".join(_get(c, "evidence", []) or [])
            if status == VERIFIED:
                text += f" [evidence holds: {shown}]"
            elif status == PENDING:
                text += f" [{reason}]"
            else:
                text += f" [cause not proved here: {reason}]"
        return text
    expected = _get(c, "expected", None)
    if expected == UNDECIDED:
        return "the registry leaves this check undecided at this scale (too small to decide)"
    if expected is None:
        return "not compared with the registry (a paper or custom run): no cause registered for this outcome"
    return "no registered cause (unexpected failure)"
