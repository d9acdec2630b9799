"""What the paper edition decided: the verdicts of the recorded paper-scale runs, for the checks the book's budget
leaves undecided (cause ``scale``, ``decide:`` naming the paper profile).

A paper run (``benchmarks/paper_scale.py --run CHAPTER``) keeps its claims record in ``benchmarks/paper_claims/`` and
its provenance (commit, start time, machine load, CPU seconds) in ``benchmarks/paper_scale.runs.jsonl``.  This module
reads both; the report pages and the scorecard show, beside a check undecided at this scale, what the run at the
source's scale measured, with the commit and date of that run.  Nothing here is recomputed at build time: these are
recorded results of the book's own code at other parameters, shown as such, never merged into the book's verdicts.

Each record is keyed to the code that made it (:func:`~shallowflow.verdicts.digest.chapter_digest`, stored in the
run's line of ``paper_scale.runs.jsonl`` as ``digest``): a record whose digest differs from the current code's, or
that carries none, is *stale*, shown as stale with what changed, and never read as a verdict at the source's scale.
"""
from __future__ import annotations

import json
from pathlib import Path

from .registry import repo_root


def _bench() -> Path:
    return repo_root() / "benchmarks"


def runs() -> dict[str, dict]:
    """chapter -> its last successful paper run's record (``paper_scale.runs.jsonl``)."""
    path = _bench() / "paper_scale.runs.jsonl"
    out: dict[str, dict] = {}
    try:
        lines = path.read_text().splitlines() if path.exists() else []
    except OSError:
        return out
    for line in lines:
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r, dict) and r.get("rc") == 0 and r.get("chapter"):
            out[r["chapter"]] = r
    return out


def verdicts() -> dict[str, dict]:
    """``"<source>:<check id>"`` -> the paper run's check: verdict, measured, criterion, runs, and the run's
    chapter, commit and start time (only chapters with a successful recorded run and a kept claims record)."""
    from .digest import changed, chapter_digest

    folder, done = _bench() / "paper_claims", runs()
    out: dict[str, dict] = {}
    if not folder.is_dir():
        return out
    current: dict[str, list] = {}
    for p in sorted(folder.glob("*.json")):
        try:
            d = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        chapter = str(d.get("chapter", "")).removeprefix("book/")
        run = done.get(chapter)
        if run is None or not isinstance(d.get("checks"), list):
            continue
        if chapter not in current:
            current[chapter] = changed(run.get("digest"), chapter_digest(chapter, "paper"))
        stale = current[chapter]
        for c in d["checks"]:
            if not isinstance(c, dict) or "id" not in c:
                continue
            out[f"{d.get('source')}:{c['id']}"] = dict(
                verdict=c.get("verdict", ""), measured=c.get("measured", ""), criterion=c.get("criterion", ""),
                runs=c.get("runs"), chapter=chapter, commit=str(run.get("commit", "?")).split(" ")[0],
                started=str(run.get("started", ""))[:10], record=f"benchmarks/paper_claims/{p.name}",
                stale=list(stale), cause=c.get("cause", ""), evidence_status=c.get("evidence_status", ""),
                refutes=bool(c.get("refutes", False)), in_scope=list(c.get("in_scope") or []))
    return out


def current(paper: dict | None = None) -> dict[str, dict]:
    """The records of :func:`verdicts` that are keyed to the current code: the only ones a verdict may read."""
    paper = verdicts() if paper is None else paper
    return {k: v for k, v in paper.items() if not v.get("stale")}


def decided_text(source: str, check_id: str, paper: dict | None = None) -> str:
    """One line for a check that fails at this scale: what the paper run measured, or '' when none ran it."""
    paper = verdicts() if paper is None else paper
    v = paper.get(f"{source}:{check_id}")
    if not v:
        return ""
    text = (f"at the source's scale (paper run of {v['started']}, code {v['commit']}): {v['verdict']}, measured "
            f"{v['measured']} (criterion {v['criterion']})")
    if v.get("stale"):
        what = v["stale"]
        text = (f"STALE, not a verdict: {text}; since then changed: {', '.join(what[:4])}"
                f"{f' and {len(what) - 4} more' if len(what) > 4 else ''}")
    return text


#: a target's verdict at the source's scale when its chapter has a recorded paper run, but the record is older than
#: the code (its digest differs): shown, never read as a verdict
STALE = "stale record"


def target_verdicts(registry: dict, paper: dict | None = None) -> dict[str, dict]:
    """``"<source>:<target>"`` -> the target's verdict at the source's scale, from the paper records of its checks:
    {"verdict", "started", "commit", "chapter"}, with the book's rules (:func:`~.causes.target_verdict`), except
    that a check failing there with cause ``scale`` is *not reproduced*: the source's scale was its decider. Only
    current records decide; a target whose only records are stale reads :data:`STALE`; targets without a paper
    record are left out (*not run* at the source's scale)."""
    from .causes import target_verdict

    paper = verdicts() if paper is None else paper
    by_target: dict[str, list] = {}
    for key, v in paper.items():
        source, cid = key.split(":", 1)
        by_target.setdefault(f"{source}:{cid.split('/', 1)[0]}", []).append((cid, v))
    out: dict[str, dict] = {}
    for key, items in by_target.items():
        entry = (registry.get("targets") or {}).get(key)
        if entry is None:
            continue
        first = items[0][1]
        info = dict(started=first["started"], commit=first["commit"], chapter=first["chapter"])
        if any(v.get("stale") for _, v in items):
            out[key] = dict(info, verdict=STALE)
            continue
        checks = [dict(id=cid, verdict=v["verdict"], cause="" if v.get("cause") == "scale" else v.get("cause", ""),
                       evidence_status=v.get("evidence_status", ""), refutes=v.get("refutes", False),
                       in_scope=v.get("in_scope", [])) for cid, v in items]
        out[key] = dict(info, verdict=target_verdict(checks, entry))
    return out
