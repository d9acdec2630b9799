"""The registry's law: :func:`validate_registry`, checked by the tests on the committed files and by
every chapter on its source's file when it finishes: every expected failure has a cause from
:data:`~shallowflow.verdicts.causes.CAUSES`; a cause that excuses a failure (``erratum``, ``convention``,
``method``, ``spec``) names the checks that prove it (``evidence:``), registered to pass wherever the
failure is registered; ``scale`` names the profile that would decide (``decide:``); ``not-reproduced``
lists what was tried (``tried:``); and a ``why`` is a template whose every number comes from a
placeholder filled from the claim records (:func:`~shallowflow.verdicts.causes.render_why`), except the
source's own constants and references, quoted in backticks.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from .causes import CAUSES, EVIDENCE_CAUSES, KINDS
from .controls import control_problems
from .registry import (COMPARED_PROFILES, FAIL, NOT_RUN, PASS, UNDECIDED, chapter_of, placeholder_ids, registered,
                       repo_root, typed_numbers)


def _linked_problems(registry: dict, source: str, cid: str, own: str, ids: list, failing: list, kind: str,
                     what: str) -> list[str]:
    """The checks a failure names (its ``evidence:`` or a refutation's ``in-scope:``) must be registered checks of the
    same source, other than itself, that pass wherever the failure is registered (at smoke scale undecided or not
    run will do)."""
    problems = []
    for ev in ids:
        ev_reg = registered(registry, source, str(ev))
        if ev_reg is None:
            problems.append(f"{cid}: {kind} {ev} is not a registered check of {source}")
            continue
        if str(ev) == own:
            problems.append(f"{cid}: a check cannot be its own {kind}" + (" check" if kind == "in-scope" else ""))
        for p in failing:
            ok = (PASS,) if p == "book" else (PASS, UNDECIDED, NOT_RUN)
            if ev_reg.get(p) not in ok:
                problems.append(f"{cid}: {kind} {ev} is registered {ev_reg.get(p)!r} at {p} scale, "
                                f"where {what} is registered")
    return problems


def validate_registry(registry: dict, sources: tuple[str, ...] | None = None,
                      schema_of: Callable[[str], dict | None] | None = None, root: Path | None = None) -> list[str]:
    """Every way the registry breaks its own law (empty when it holds); see the module docstring.

    ``schema_of(chapter_docname)`` returns the chapter's parameter schema (to check ``tried:``); without
    it the names are not checked.  ``sources`` limits the check to those sources' files.
    """
    root = root or repo_root()
    problems = []
    for key, entry in registry.get("targets", {}).items():
        source, target = key.split(":", 1)
        if sources is not None and source not in sources:
            continue
        if "kind" in entry and entry["kind"] not in KINDS:
            problems.append(f"{key}: kind {entry['kind']!r} is not one of {', '.join(KINDS)}")
        for name, reg in (entry.get("checks") or {}).items():
            reg = reg or {}
            cid = f"{source}:{target}/{name}"
            if "control" in reg:
                problems += control_problems(registry, source, target, name, reg, root, chapter_of, registered)
            failing = [p for p in COMPARED_PROFILES if reg.get(p) == FAIL]
            cause = reg.get("cause", "")
            if not failing:
                continue
            if cause not in CAUSES:
                problems.append(f"{cid} fails without a registered cause: give it `cause:` ({', '.join(CAUSES)})")
                continue
            if not str(reg.get("why", "")).strip():
                problems.append(f"{cid}: cause {cause} without a `why:`")
            typed = typed_numbers(str(reg.get("why", "")))
            if typed:
                problems.append(f"{cid}: its why types numbers {typed[:4]}: fill them from the records "
                                f"({{measured}}, {{T/name.measured}}) or quote a constant of the source in backticks")
            here = chapter_of(registry, source, f"{target}/{name}")
            for ref in placeholder_ids(str(reg.get("why", ""))):
                if registered(registry, source, ref) is None:
                    problems.append(f"{cid}: its why reads {ref}, which is not a registered check of {source}")
                elif chapter_of(registry, source, ref) != here:
                    problems.append(f"{cid}: its why reads {ref}, which another chapter computes")
            evidence = reg.get("evidence") or []
            if cause in EVIDENCE_CAUSES:
                if not isinstance(evidence, list) or not evidence:
                    problems.append(f"{cid}: cause {cause} names no evidence (`evidence: [T/check, ...]`)")
                    evidence = []
                problems += _linked_problems(registry, source, cid, f"{target}/{name}", evidence, failing,
                                             "evidence", "the failure it excuses")
            elif cause == "scale":  # a claim too: evidence that more scale would decide, or what the book cannot have
                # (a failure at smoke scale only is decided by the book scale, computed in every build)
                if "book" in failing and not evidence and not str(reg.get("needs", "")).strip():
                    problems.append(f"{cid}: cause scale names no evidence that more scale would decide (`evidence:` "
                                    "checks measuring a trend toward the criterion across budgets) nor what the book "
                                    "cannot have (`needs:` the data or hardware that would decide): without either, "
                                    "the check is not reproduced here (cause not-reproduced, `tried:`)")
                problems += _linked_problems(registry, source, cid, f"{target}/{name}",
                                             evidence if isinstance(evidence, list) else [], failing,
                                             "evidence", "the failure it excuses")
            elif evidence:
                problems.append(f"{cid}: cause {cause} takes no evidence")
            if reg.get("refutes") and cause != "erratum":
                problems.append(f"{cid}: `refutes:` goes with cause erratum only")
            in_scope = reg.get("in-scope")
            if reg.get("refutes"):
                if not isinstance(in_scope, list) or not in_scope:
                    problems.append(f"{cid}: `refutes: true` needs `in-scope: [T/check, ...]`, checks computing on the "
                                    "counterexample that it satisfies the source's stated hypotheses (its quoted scope)")
                    in_scope = []
                problems += _linked_problems(registry, source, cid, f"{target}/{name}", in_scope, failing,
                                             "in-scope", "the refutation")
            elif in_scope:
                problems.append(f"{cid}: `in-scope:` goes with `refutes: true` only")
            if cause == "scale":
                decide = reg.get("decide")
                if not decide or not str(decide).startswith("params/paper/") or not (root / str(decide)).is_file():
                    problems.append(f"{cid}: cause scale needs `decide:` naming the paper profile that would decide "
                                    f"it (an existing params/paper/<part>/<chapter>.yml), got {decide!r}")
            if cause == "not-reproduced":
                tried = reg.get("tried")
                if not isinstance(tried, list) or not tried:
                    problems.append(f"{cid}: not-reproduced needs `tried:`, the parameter sets the chapter ran "
                                    "(profile names or mappings of parameters)")
                else:
                    schema = schema_of(here) if (schema_of and here) else None
                    for t in tried:
                        if isinstance(t, str):
                            if t not in ("book", "smoke", "paper"):
                                problems.append(f"{cid}: tried {t!r} is not a profile")
                        elif isinstance(t, dict):
                            unknown = [k for k in t if schema is not None and k not in schema]
                            if unknown:
                                problems.append(f"{cid}: tried names {unknown}, not parameters of {here}")
                        else:
                            problems.append(f"{cid}: tried holds {t!r}, neither a profile nor a parameter mapping")
    return problems
