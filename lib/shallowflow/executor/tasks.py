"""Tasks: one chapter execution, validated in the calling process (:func:`prepare`), executed anywhere and moved
into place on success only (:func:`execute_task`); a finished result is read back by :func:`read_result`."""
from __future__ import annotations

import json
import os
import shutil
import socket
import time
import uuid
from dataclasses import asdict
from pathlib import Path

from .. import params as _params
from ..engine.checkpoint import _hash_files
from ..outputs import OutputError, describe, safe_path
from ..verdicts import repo_root
from .common import (MAX_RESULT_BYTES, SCORECARD, ChapterError, Task, TaskFailed, _short, book_dir, parameters,
                     profile_values, resolve, schema)
from .notebook import _environ, _execute_direct, _execute_notebook, engine_and_device


UNKNOWN_SHOWN = 10  # unknown parameter names a refusal lists


def _code_version(stamp: tuple, base: str) -> str:
    return _hash_files(stamp, base)[:12]  # the checkpoints' hash (relative path and bytes of each file), cached there


def code_version() -> str:
    """A hash of the code a chapter's result depends on: the package, the chapters, the registry."""
    root = repo_root()
    files = sorted([*(Path(__file__).parent.parent).rglob("*.py"), *book_dir().rglob("*.py"),
                    *(root / "verdicts").glob("*.yml")])
    stamp = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files if "__pycache__" not in p.parts)
    return _code_version(stamp, str(root))


def tasks_root() -> Path:
    """Where task directories live: SHALLOWFLOW_TASKS_DIR, else artifacts/tasks."""
    env = os.environ.get("SHALLOWFLOW_TASKS_DIR")
    return Path(env) if env else repo_root() / "artifacts" / "tasks"


def _jsonable(v):
    return json.loads(json.dumps(v))


def prepare(chapter: str, profile: str = "book", overrides: dict | None = None, root: Path | str | None = None,
            label: str = "", budgets: bool = True, plan: bool = True, shared: dict | None = None) -> Task:
    """Build and validate a task in this process: unknown names and bad values are refused here
    (:class:`ChapterError` naming the parameter) before any kernel starts or file is written.  ``budgets=False``
    leaves out this machine's work and memory rules (``Rule.kind``): what a cost estimate validates beyond them;
    ``plan=False`` leaves out the chapter's dry plan (:func:`shallowflow.params.dry_plan`).  ``shared``, a dict
    the caller keeps across calls (a sweep's points), holds what every call for the same chapter and profile
    reads (the chapter's name, parameters cell, profile file, schema and code version), so each is read once."""
    memo = shared if shared is not None else {}
    key = (chapter, profile)
    if key not in memo:
        name = resolve(chapter)
        from ..engine import config

        getattr(config, "check", lambda: None)()  # a bad SHALLOWFLOW_* variable: ConfigError, one line
        memo[key] = dict(chapter=name, declared=parameters(name), given=profile_values(name, profile),
                         schema=schema(name), code=None)
    base = memo[key]
    chapter, declared = base["chapter"], base["declared"]
    given = dict(base["given"])
    overrides = dict(overrides or {})
    if overrides and "profile" not in overrides:
        given["profile"] = "custom"
    given.update(overrides)
    unknown = sorted(set(given) - set(declared), key=str)
    if unknown:
        where = f"{label}: " if label else ""
        shown = ", ".join(_short(n, 40) for n in unknown[:UNKNOWN_SHOWN])
        more = f" and {len(unknown) - UNKNOWN_SHOWN:,} more" if len(unknown) > UNKNOWN_SHOWN else ""
        raise ChapterError(f"{where}unknown parameter(s) {shown}{more} for chapter {chapter}; its parameters are: "
                           f"{', '.join(declared)}")
    values = {n: d for n, (d, _) in declared.items()}
    values.update(given)
    sch, rules = base["schema"]
    if sch is None:  # no schema module yet: the notebook validates its values; the profile is checked here
        sch, rules = {"profile": _params.PROFILE}, ()
    if not budgets:
        rules = tuple(r for r in rules if r.kind is None)
    try:
        P = _params.validate(values, sch, rules, plan=plan)
    except _params.ParameterError as e:
        raise ChapterError(f"{label + ': ' if label else ''}{chapter}: {e}") from None
    values.update(vars(P))
    values, inject = _jsonable(values), _jsonable({n: values[n] for n in given})
    if base["code"] is None:
        base["code"] = code_version()
    return Task(chapter=chapter, profile=values["profile"], inject=inject, values=values, code=base["code"],
                root=str(root or tasks_root()), label=label, inputs=_input_stamps(sch, values))


def _input_stamps(sch: dict, values: dict) -> dict:
    """The data files a task's values name (:func:`shallowflow.params.DataFile` paths), with their size and
    modification time, so that the task's key changes when a file does."""
    out = {}
    for name, spec in sch.items():
        v = values.get(name)
        if getattr(spec, "kind", None) == "data" and isinstance(v, str) and v not in (spec.choices or ()):
            try:
                st = os.stat(v)
                out[v] = [st.st_size, st.st_mtime_ns]
            except OSError:
                out[v] = None
    return out


_RESULT_FIELDS = {"chapter": str, "profile": str, "values": dict, "key": str, "records": list, "wall_s": (int, float),
                  "engine": str, "device": str, "path": str, "notebook": str, "started": str, "host": str,
                  "pid": int}


def _is_result(doc, task: Task) -> bool:
    """Whether ``doc`` is a finished result of ``task`` as :func:`execute_task` writes it (every field
    the sweep table and :func:`publish` read, of the right type)."""
    if not isinstance(doc, dict) or any(not isinstance(doc.get(k), t) for k, t in _RESULT_FIELDS.items()):
        return False
    if doc["key"] != task.key or doc["chapter"] != task.chapter:
        return False
    for rec in doc["records"]:
        if not (isinstance(rec, dict) and all(isinstance(rec.get(k), str) for k in ("source", "chapter", "profile"))
                and isinstance(rec.get("checks"), list)):
            return False
        if not all(isinstance(c, dict) and isinstance(c.get("id"), str) and "measured" in c and "verdict" in c
                   for c in rec["checks"]):
            return False
    return True


def read_result(task: Task) -> dict | None:
    """The finished result of a task, or None (a half-written task is never in ``task.dir``; a
    ``result.json`` that is not a result of this task, such as ``[]``, ``{}``, garbage or JSON nested a
    million deep, is absent too, and the task is computed again)."""
    path = task.dir / "result.json"
    try:
        if not path.is_file() or path.stat().st_size > MAX_RESULT_BYTES:
            return None
        doc = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError):  # RecursionError: JSON nested deeper than the parser goes
        return None
    return doc if _is_result(doc, task) else None


def execute_task(task: Task, force: bool = True, progress: bool = False, direct: bool = False,
                 payload: bool = False) -> dict:
    """Execute one task and move its directory into place on success only; returns its result.

    ``force=False`` reads a finished result back instead of recomputing it (sweep resume).
    ``payload=True`` adds the files (notebook, records) to the result, for clusters that do not
    share this file system.  An exception (or a signal) leaves nothing behind but the previous result.
    """
    if not force:
        done = read_result(task)
        if done is not None:
            done["cached"] = True
            return done
    final = safe_path(task.dir, task.root)  # never through a link out of the tasks' root
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = final.with_name(f".{final.name}.partial-{uuid.uuid4().hex[:8]}")
        tmp.mkdir()
    except OSError as e:  # a read-only artifacts/, a full disk: one line, before any kernel starts
        raise OutputError(describe(e, final)) from None
    t0, started = time.perf_counter(), time.strftime("%Y-%m-%dT%H:%M:%S%z")
    try:
        out = tmp / task.notebook.name
        # a chapter's records go to the temporary directory; the scorecard reads the published ones
        claims = {} if task.chapter == SCORECARD else {"SHALLOWFLOW_CLAIMS_DIR": tmp / "claims"}
        # no progress bars inside a task: its outputs become the built pages (the CLI draws the task bar)
        with _environ(PYDEVD_DISABLE_FILE_VALIDATION=1, SHALLOWFLOW_PROGRESS=0, **claims, **task.env):
            if direct:
                _execute_direct(task, out)
            else:
                _execute_notebook(task, out, progress)
        wall = time.perf_counter() - t0
        records = [json.loads(p.read_text()) for p in sorted((tmp / "claims").rglob("*.json"))]
        engine, device = engine_and_device()
        result = dict(chapter=task.chapter, profile=task.profile, values=task.values, inject=task.inject,
                      key=task.key, code=task.code, label=task.label, path="direct" if direct else "notebook",
                      notebook=str(final / out.name) if not direct else "", dir=str(final),
                      records=records, wall_s=round(wall, 3), started=started, host=socket.gethostname(),
                      pid=os.getpid(), engine=engine, device=device, cached=False)
        (tmp / "result.json").write_text(json.dumps(result, indent=1))
        if final.exists():  # a forced re-run replaces the previous result in one rename
            old = final.with_name(f".{final.name}.old-{uuid.uuid4().hex[:8]}")
            final.rename(old)
            tmp.rename(final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(final)
    except TaskFailed as e:
        kept = _keep_failed(task, tmp)
        shutil.rmtree(tmp, ignore_errors=True)
        if kept:
            e.notebook = str(kept)
            e.args = (f"{e.args[0]} (failed notebook: {kept})",)
        raise
    except OSError as e:  # a full disk or a read-only folder while executing or moving into place
        shutil.rmtree(tmp, ignore_errors=True)
        raise OutputError(describe(e)) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if payload:
        result["files"] = {p.name: p.read_bytes() for p in final.iterdir() if p.is_file()}
    return result


def _keep_failed(task: Task, tmp: Path) -> Path | None:
    """A failed chapter's notebook, for inspection: artifacts/failed/<chapter>.<key>.ipynb (never under runs/)."""
    nb = tmp / task.notebook.name
    if not nb.exists():
        return None
    try:
        dest = safe_path(repo_root() / "artifacts" / "failed" / f"{task.chapter}.{task.profile}-{task.key}.ipynb")
        dest.parent.mkdir(parents=True, exist_ok=True)
        nb.replace(dest)
    except (OSError, OutputError):  # nowhere safe to keep it: the failure's own message is what matters
        return None
    return dest


def summary(result: dict) -> dict:
    """A result without its records' bulk (for printing)."""
    return {k: v for k, v in result.items() if k not in ("records", "files")}


def _asdict(task: Task) -> dict:  # pragma: no cover - debugging aid
    return asdict(task)
