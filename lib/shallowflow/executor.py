"""One executor for every chapter execution: a re-run, the book build, a parameter sweep.

A **task** is one chapter execution: (chapter, profile, parameter values).  It is built and validated
in the calling process by :func:`prepare` (names against the chapter's parameters cell, values
against the chapter's ``SCHEMA`` and ``RULES``), before any kernel starts or any file is written.
:func:`execute_task` runs it anywhere (in this process, or on a Dask worker): papermill executes the
chapter into a temporary directory, with the claim records redirected there
(``SHALLOWFLOW_CLAIMS_DIR``); only when the chapter succeeded is the directory renamed into place,
``artifacts/tasks/<chapter>/<profile>-<key>/``, where ``key`` hashes the chapter, every parameter value
and the code version (the package's, the chapter's and the registry's sources).  A directory without
the ``.partial`` suffix is therefore always complete, and a ``result.json`` inside it is the only
thing ever read back as finished.

Many tasks run on a Dask cluster (:func:`cluster`): an in-process ``LocalCluster`` of one-thread
worker processes sized to the machine by default, or any running scheduler (``--scheduler ADDRESS``
or ``DASK_SCHEDULER_ADDRESS``).  A worker killed mid-task costs only that task, which the scheduler
re-runs on another worker at most ``RETRIES`` times.  Results travel back with their files
(``gather``), so a cluster without a shared file system works too.

:mod:`shallowflow.build` executes the book on it (every chapter, then the scorecard) and renders the
site; :mod:`shallowflow.sweep` expands parameter grids into tasks.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import socket
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

from . import params as _params
from .verdicts import repo_root
from .outputs import OutputError, describe, ensure_writable, publish_files, safe_path

PROFILES = ("book", "smoke", "paper")
SCORECARD = "scorecard"
RETRIES = 2  # re-runs of a task whose worker died (a chapter that raises is not re-run: it would again)
MAX_WORKERS = 1024  # local worker processes a cluster may start
CONNECT_TIMEOUT = 10.0  # seconds a scheduler has to answer (SHALLOWFLOW_CONNECT_TIMEOUT)
MAX_RESULT_BYTES = 64 << 20  # a result.json larger than this is not one of ours


class ChapterError(RuntimeError):
    """A chapter could not be found, parameterised or executed (one line for the user)."""


class TaskFailed(ChapterError):
    """A task ran and failed; ``notebook`` is the failed notebook kept for inspection (or None)."""

    def __init__(self, message: str, notebook: str | None = None):
        super().__init__(message)
        self.notebook = notebook


# ----------------------------------------------------------------------------------------------
# chapters, their parameters and schemas
# ----------------------------------------------------------------------------------------------
def book_dir() -> Path:
    return repo_root() / "book"


def chapters() -> list[str]:
    """Every chapter (Jupytext script under book/), as a path relative to book/ without suffix."""
    return sorted(str(p.relative_to(book_dir()).with_suffix("")) for p in book_dir().rglob("*.py")
                  if not any(part.startswith((".", "_")) for part in p.relative_to(book_dir()).parts))


def resolve(name: str) -> str:
    """Accept 'orthogonal-inputs/toy', 'book/orthogonal-inputs/toy.py' or a unique suffix such as 'toy'."""
    key = str(name).removeprefix("book/").removesuffix(".py").removesuffix(".ipynb")
    all_ = chapters()
    if key in all_:
        return key
    matches = [c for c in all_ if c.endswith("/" + key) or c == key]
    if len(matches) == 1:
        return matches[0]
    raise ChapterError(f"unknown chapter {_short(name)}; chapters: {', '.join(all_)}" if not matches else
                       f"chapter {name!r} is ambiguous: {', '.join(matches)}")


def schema(chapter: str) -> tuple[dict | None, tuple]:
    """The chapter's ``(SCHEMA, RULES)`` (:mod:`shallowflow.chapters`); ``(None, ())`` without a module."""
    from . import chapters as _ch

    try:
        return _ch.schema(chapter)
    except ImportError:
        return None, ()


def parameters(chapter: str) -> dict[str, tuple[Any, str]]:
    """The chapter's parameters cell: name -> (default value, comment), in the cell's order."""
    from . import chapters as _ch

    try:
        return {d.name: (d.value, d.comment) for d in _ch.parameters_cell(chapter)}
    except ValueError as e:
        raise ChapterError(str(e)) from None


def profile_values(chapter: str, profile: str) -> dict:
    """The values a profile sets (``book``: none but the profile, the parameters cell itself)."""
    if profile not in PROFILES:
        raise ChapterError(f"unknown profile {_short(profile)}; profiles: {', '.join(PROFILES)}")
    values = {}
    if profile != "book":
        path = repo_root() / "params" / profile / f"{chapter}.yml"
        if path.exists():
            values.update(yaml.safe_load(path.read_text()) or {})
        elif profile == "smoke":
            raise ChapterError(f"no smoke parameters for {chapter}: {path} is missing")
        # paper without a file: the book already runs at the source's scale
    values["profile"] = profile
    return values


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 12] + f"... ({len(text)} chars)"


# ----------------------------------------------------------------------------------------------
# tasks
# ----------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=4)
def _code_version(stamp: tuple) -> str:
    h = hashlib.sha256()
    for path, *_ in stamp:
        h.update(path.encode())
        h.update(Path(path).read_bytes())
    return h.hexdigest()[:12]


def code_version() -> str:
    """A hash of the code a chapter's result depends on: the package, the chapters, the registry."""
    root = repo_root()
    files = sorted([*(Path(__file__).parent).rglob("*.py"), *book_dir().rglob("*.py"),
                    *(root / "verdicts").glob("*.yml")])
    stamp = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files if "__pycache__" not in p.parts)
    return _code_version(stamp)


def tasks_root() -> Path:
    """Where task directories live: SHALLOWFLOW_TASKS_DIR, else artifacts/tasks."""
    env = os.environ.get("SHALLOWFLOW_TASKS_DIR")
    return Path(env) if env else repo_root() / "artifacts" / "tasks"


@dataclass
class Task:
    """One chapter execution, validated.  ``inject`` are the values papermill injects; ``values`` every
    parameter's value (defaults included), which with the code version names the task."""

    chapter: str
    profile: str  # the value of the chapter's 'profile' parameter (book, smoke, paper or custom)
    inject: dict
    values: dict
    code: str
    root: str
    label: str = ""  # e.g. "point 3" in a sweep, for messages
    env: dict = field(default_factory=dict)  # environment variables of the kernel (e.g. where records are read)
    inputs: dict = field(default_factory=dict)  # data files the values name: path -> [size, mtime_ns]

    @property
    def key(self) -> str:
        doc = dict(chapter=self.chapter, values=self.values, code=self.code)
        if self.inputs:  # an edited data file is another task (a sweep does not read back the old result)
            doc["inputs"] = self.inputs
        blob = json.dumps(doc, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def dir(self) -> Path:
        return Path(self.root) / self.chapter / f"{self.profile}-{self.key}"

    @property
    def notebook(self) -> Path:
        return self.dir / f"{Path(self.chapter).name}.ipynb"


def _jsonable(v):
    return json.loads(json.dumps(v))


def prepare(chapter: str, profile: str = "book", overrides: dict | None = None, root: Path | str | None = None,
            label: str = "") -> Task:
    """Build and validate a task in this process: unknown names and bad values are refused here
    (:class:`ChapterError` naming the parameter) before any kernel starts or file is written."""
    chapter = resolve(chapter)
    from . import config

    getattr(config, "check", lambda: None)()  # a bad SHALLOWFLOW_* variable: ConfigError, one line
    declared = parameters(chapter)
    given = profile_values(chapter, profile)
    overrides = dict(overrides or {})
    if overrides and "profile" not in overrides:
        given["profile"] = "custom"
    given.update(overrides)
    unknown = sorted(set(given) - set(declared))
    if unknown:
        where = f"{label}: " if label else ""
        raise ChapterError(f"{where}unknown parameter(s) {', '.join(_short(n, 40) for n in unknown)} for chapter "
                           f"{chapter}; its parameters are: {', '.join(declared)}")
    values = {n: d for n, (d, _) in declared.items()}
    values.update(given)
    sch, rules = schema(chapter)
    if sch is None:  # no schema module yet: the notebook validates its values; the profile is checked here
        sch, rules = {"profile": _params.PROFILE}, ()
    try:
        P = _params.validate(values, sch, rules)
    except _params.ParameterError as e:
        raise ChapterError(f"{label + ': ' if label else ''}{chapter}: {e}") from None
    values.update(vars(P))
    values, inject = _jsonable(values), _jsonable({n: values[n] for n in given})
    return Task(chapter=chapter, profile=values["profile"], inject=inject, values=values, code=code_version(),
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


# ----------------------------------------------------------------------------------------------
# executing one task (anywhere)
# ----------------------------------------------------------------------------------------------
def to_notebook(chapter: str, out: Path) -> Path:
    """The chapter's Jupytext script as an .ipynb at ``out``."""
    import jupytext

    nb = jupytext.read(book_dir() / f"{chapter}.py", fmt="py:percent")
    nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    out.parent.mkdir(parents=True, exist_ok=True)
    jupytext.write(nb, out, fmt="ipynb")
    return out


def _kernel_manager_class(ip: str, started: list, log: Path):
    """Kernels over IPC sockets at ``ip``-N: no TCP ports, and no 'running over TCP without encryption'
    warning.  Each kernel gets a path of its own (the default, ./kernel-ipc-N, is shared by kernels
    started in one folder, and two of them would talk over the same sockets).  The kernel process's
    own stdout and stderr (start-up and shutdown messages, not cell outputs, which travel over the
    sockets into the notebook) go to ``log``.  Managers are appended to ``started``, so that an
    interrupted run can end its kernel at once."""
    from jupyter_client.manager import AsyncKernelManager

    class IPCKernelManager(AsyncKernelManager):
        def __init__(self, **kw):
            kw.setdefault("transport", "ipc")
            kw.setdefault("ip", ip)
            super().__init__(**kw)
            started.append(self)

        async def start_kernel(self, **kw):
            with open(log, "ab") as fh:  # the child keeps its own copy of the descriptor
                kw.setdefault("stdout", fh)
                kw.setdefault("stderr", fh)
                return await super().start_kernel(**kw)

    return IPCKernelManager


def _kill_kernels(started: list) -> None:
    import signal

    for km in started:
        pid = getattr(getattr(km, "provisioner", None), "pid", None)
        if pid:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            km.cleanup_connection_file()


@contextlib.contextmanager
def _environ(**env):
    old = {k: os.environ.get(k) for k in env}
    os.environ.update({k: str(v) for k, v in env.items()})
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@functools.lru_cache(maxsize=1)
def engine_and_device() -> tuple[str, str]:
    """The engine and device a chapter started in this environment uses (kernel or torch; cpu/cuda)."""
    from . import config, kernel

    dev = config.default_device()
    engine = "kernel" if dev.type == "cpu" and kernel.available() else "torch"
    name = str(dev)
    if dev.type == "cuda":
        import torch

        name += f" ({torch.cuda.get_device_name(dev)})"
    return engine, name


def _execute_notebook(task: Task, out: Path, progress: bool) -> None:
    import papermill
    from papermill.exceptions import PapermillExecutionError

    import glob
    import logging
    import tempfile

    src = to_notebook(task.chapter, out.with_name("source.ipynb"))
    ip = os.path.join(tempfile.gettempdir(), f"shallowflow-kernel-{uuid.uuid4().hex[:12]}")
    started: list = []
    # papermill/nbclient log a dead kernel or a failed cell as several lines; the TaskFailed says it in one
    logging.getLogger("papermill").setLevel(logging.CRITICAL)
    try:
        papermill.execute_notebook(str(src), str(out), parameters=task.inject, kernel_name="python3",
                                   progress_bar=progress, cwd=str((book_dir() / task.chapter).parent),
                                   kernel_manager_class=_kernel_manager_class(ip, started, out.with_name("kernel.log")))
    except PapermillExecutionError as e:
        raise TaskFailed(f"chapter {task.chapter} failed in cell {e.exec_count}: {e.ename}: "
                         f"{_first_line(e.evalue)}") from None
    except Exception as e:  # a dead kernel, a timeout: one line, not a traceback
        from nbclient.exceptions import DeadKernelError

        if isinstance(e, DeadKernelError) or "Kernel died" in str(e):
            raise TaskFailed(f"the kernel died while executing chapter {task.chapter} "
                             f"(killed, or out of memory)") from None
        _kill_kernels(started)
        raise
    except BaseException:  # Ctrl-C, SIGTERM: the kernel must not outlive the run
        _kill_kernels(started)
        raise
    finally:
        src.unlink(missing_ok=True)
        for sock in glob.glob(ip + "-*"):
            with contextlib.suppress(OSError):
                os.unlink(sock)


def _execute_direct(task: Task, out: Path) -> None:
    """The same cells in this process, without a kernel (the 'direct' path of sweeps)."""
    import io

    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    os.environ.setdefault("MPLBACKEND", "Agg")
    src = to_notebook(task.chapter, out.with_name("source.ipynb"))
    nb = parameterize_notebook(load_notebook_node(str(src)), task.inject, report_mode=False)
    src.unlink()
    ns: dict = {"__name__": "__main__"}
    cwd = os.getcwd()
    os.chdir((book_dir() / task.chapter).parent)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            for i, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
                code = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
                try:
                    exec(compile(code, f"<{task.chapter} cell {i + 1}>", "exec"), ns)
                except Exception as e:
                    raise TaskFailed(f"chapter {task.chapter} failed in cell {i + 1}: {type(e).__name__}: "
                                     f"{_first_line(str(e))}") from None
    finally:
        os.chdir(cwd)
        import matplotlib.pyplot as plt

        plt.close("all")


def _first_line(text: str, limit: int = 400) -> str:
    lines = [line for line in str(text).splitlines() if line.strip()]
    line = lines[0] if lines else ""
    more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
    return (line if len(line) <= limit else line[:limit] + "...") + more


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
    ``result.json`` that is not a result of this task, such as ``[]``, ``{}`` or garbage, is absent
    too, and the task is computed again)."""
    path = task.dir / "result.json"
    try:
        if not path.is_file() or path.stat().st_size > MAX_RESULT_BYTES:
            return None
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
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


def materialise(result: dict) -> dict:
    """Write a gathered result's files here when its worker did not share this file system."""
    files = result.pop("files", None)
    final = Path(result["dir"])
    if files and not (final / "result.json").exists():
        final = safe_path(final, _task_root(result))
        tmp = final.with_name(f".{final.name}.partial-{uuid.uuid4().hex[:8]}")
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            tmp.mkdir()
            for name, data in files.items():
                if name != "result.json" and name == Path(name).name:
                    (tmp / name).write_bytes(data)
            (tmp / "result.json").write_bytes(files["result.json"])
            tmp.rename(final)
        except OSError as e:
            shutil.rmtree(tmp, ignore_errors=True)
            raise OutputError(describe(e)) from None
    return result


def _task_root(result: dict) -> Path:
    """The tasks' root of a result: its directory is ``<root>/<chapter>/<profile>-<key>``."""
    here = Path(result["dir"])
    return here.parents[len(Path(result["chapter"]).parts)]


def _atomic_write(path: Path, data: bytes) -> None:
    """One file under a temporary name, then renamed (nothing left behind on failure)."""
    publish_files([(safe_path(path), data)])


def _claims_root(claims_root: Path | None = None) -> Path:
    from .verdicts import claims_dir

    return Path(claims_root) if claims_root else claims_dir("x").parent


def outputs(task: Task, runs_dir: Path | None = None, out_root: Path | None = None,
            claims_root: Path | None = None) -> dict[str, Path]:
    """Where a run of ``task`` publishes (``notebook``, ``claims`` folder), each checked by
    :func:`~shallowflow.outputs.safe_path` against its root (the repository, or ``out_root``)."""
    runs_dir = Path(runs_dir) if runs_dir else repo_root() / "artifacts" / "runs" / task.profile
    root = _claims_root(claims_root)
    return dict(notebook=safe_path(runs_dir / f"{task.chapter}.ipynb", out_root or runs_dir),
                claims=safe_path(root / task.profile, root))


def check_outputs(task: Task, runs_dir: Path | None = None, out_root: Path | None = None) -> None:
    """Before a kernel starts: the task directory, the notebook's and the records' folders stay inside
    their roots (no symlink out) and can be written; :class:`OutputError` in one line otherwise."""
    safe_path(task.dir, task.root)
    where = outputs(task, runs_dir, out_root)  # every path checked before any folder is created
    ensure_writable(Path(task.root), task.root)
    ensure_writable(where["notebook"].parent, out_root or where["notebook"].parent)
    if task.chapter != SCORECARD:
        ensure_writable(where["claims"], _claims_root())


def publish(result: dict, runs_dir: Path | None = None, claims_root: Path | None = None,
            out_root: Path | None = None) -> Path:
    """Copy a finished task to where the book and the CLI show it: the notebook to
    ``artifacts/runs/<profile>/<chapter>.ipynb`` (or under ``out_root``), its records to
    ``artifacts/claims/<profile>/``; all files or none (:func:`~shallowflow.outputs.publish_files`),
    never through a symlink out of their root.  Then earlier runs of the chapter and profile (other code
    versions) are removed: only directories a run created (a ``result.json`` of that chapter and key)."""
    profile = result["profile"]
    runs_dir = Path(runs_dir) if runs_dir else repo_root() / "artifacts" / "runs" / profile
    out = safe_path(runs_dir / f"{result['chapter']}.ipynb", out_root or runs_dir)
    croot = _claims_root(claims_root)
    files = []
    try:
        if result.get("notebook"):
            files.append((out, Path(result["notebook"]).read_bytes()))
        for rec in result["records"]:
            name = f"{rec['source']}__{rec['chapter'].replace('/', '__')}.json"
            files.append((safe_path(croot / rec["profile"] / name, croot), json.dumps(rec, indent=1).encode()))
        publish_files(files)
    except OSError as e:
        raise OutputError(f"{describe(e)}; nothing was published (the previous notebook and claim records are "
                          f"untouched)") from None
    if profile in PROFILES:
        _supersede(result)
    return out


def _supersede(result: dict) -> None:
    """Remove earlier task directories of this chapter and profile: real directories (not links) beside
    this one, inside the tasks' root, holding a result of this chapter whose key is their name's."""
    import re

    here = Path(result["dir"])
    try:
        safe_path(here, _task_root(result))
    except (OutputError, IndexError):
        return
    pattern = re.compile(re.escape(result["profile"]) + r"-([0-9a-f]{16})")
    for old in here.parent.glob(f"{result['profile']}-*"):
        m = pattern.fullmatch(old.name)
        if old == here or not m or old.is_symlink() or not old.is_dir():
            continue
        rj = old / "result.json"
        try:
            if rj.is_symlink() or not rj.is_file() or rj.stat().st_size > MAX_RESULT_BYTES:
                continue
            doc = json.loads(rj.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and doc.get("chapter") == result["chapter"] and doc.get("key") == m.group(1):
            shutil.rmtree(old, ignore_errors=True)


# ----------------------------------------------------------------------------------------------
# the cluster
# ----------------------------------------------------------------------------------------------
def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def check_workers(workers) -> int | None:
    """``workers`` when it is a count of worker processes (1 to MAX_WORKERS) or None; ChapterError otherwise."""
    if workers is None:
        return None
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= MAX_WORKERS:
        raise ChapterError(f"--workers must be a whole number from 1 to {MAX_WORKERS}, got {_short(workers, 40)}")
    return workers


def connect_timeout() -> float:
    """Seconds a scheduler has to answer: SHALLOWFLOW_CONNECT_TIMEOUT, else CONNECT_TIMEOUT."""
    text = os.environ.get("SHALLOWFLOW_CONNECT_TIMEOUT", "").strip()
    if not text:
        return CONNECT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.1 <= value <= 3600:
        raise ChapterError(f"SHALLOWFLOW_CONNECT_TIMEOUT must be seconds from 0.1 to 3600, got {_short(text, 40)}")
    return value


def _probe(address: str, timeout: float) -> None:
    """Ask the scheduler at ``address`` who it is, within ``timeout`` seconds (TimeoutError otherwise), in
    an event loop of its own (the caller may be inside one)."""
    import asyncio
    import threading

    from distributed.core import rpc

    async def ask():
        r = rpc(address)
        try:
            return await r.identity()
        finally:
            await r.close_rpc()

    box: dict = {}

    def run():
        try:
            box["identity"] = asyncio.run(asyncio.wait_for(ask(), timeout))
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            box["error"] = e

    t = threading.Thread(target=run, name="shallowflow-probe", daemon=True)
    t.start()
    t.join(timeout + 5)
    if "error" in box:
        raise box["error"]
    if "identity" not in box:
        raise TimeoutError("no answer")


def connect(address: str):
    """A Client on a running scheduler, or ChapterError in one line when none answers within
    :func:`connect_timeout` seconds (a wrong address, a closed port, a scheduler that does not reply)."""
    import logging

    from distributed import Client

    timeout = connect_timeout()
    quiet = [logging.getLogger(n) for n in ("distributed.client", "distributed.comm", "distributed.core")]
    levels = [lg.level for lg in quiet]
    for lg in quiet:
        lg.setLevel(logging.CRITICAL)
    try:
        _probe(address, timeout)  # Client's own timeout does not bound a peer that accepts and stays silent
        return Client(address, timeout=f"{timeout}s")
    except Exception as e:  # OSError, TimeoutError, ValueError (a malformed address)
        why = _first_line(str(e), 160)
        raise ChapterError(f"no Dask scheduler answered at {_short(address, 80)} within {timeout:g} s "
                           f"({type(e).__name__}{': ' + why if why else ''})") from None
    finally:
        for lg, level in zip(quiet, levels):
            lg.setLevel(level)


@contextlib.contextmanager
def cluster(scheduler: str | None = None, workers: int | None = None):
    """A Dask client: on ``scheduler`` (or ``DASK_SCHEDULER_ADDRESS``) when given, else on an in-process
    ``LocalCluster`` of ``workers`` one-thread processes (default: the cores this process may use)."""
    import logging

    import dask
    from distributed import Client, LocalCluster

    workers = check_workers(workers)
    address = scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS")
    if address:
        with connect(address) as client:
            yield client
        return
    with dask.config.set({"distributed.scheduler.allowed-failures": RETRIES,
                          "distributed.worker.daemon": False,
                          "distributed.admin.tick.limit": "1h"}):
        with LocalCluster(n_workers=workers or default_workers(), threads_per_worker=1, processes=True,
                          memory_limit=0, dashboard_address=None, silence_logs=logging.CRITICAL,
                          host="127.0.0.1") as lc, Client(lc) as client:
            yield client


def show_progress(flag: bool | None = None) -> bool:
    """The CLI's task bar: where :func:`shallowflow.progress.enabled` shows bars (a terminal, never in CI
    logs), or when asked (``flag=True``); never with ``flag=False`` (``--quiet``)."""
    if flag is False:
        return False
    from . import progress

    if flag:
        return not progress._in_ci()
    return progress.enabled()


@dataclass
class Outcome:
    """What came back from a batch of tasks: results in task order (None where a task failed)."""

    results: list
    errors: dict = field(default_factory=dict)  # task index -> one-line message


def run_tasks(client, tasks: list[Task], force: bool = True, progress: bool = False, direct: bool = False,
              desc: str = "tasks", on_result: Callable[[int, dict], None] | None = None) -> Outcome:
    """Submit every task, gather results as they finish (a failing task does not stop the others)."""
    from distributed import as_completed
    from tqdm.auto import tqdm

    results: list = [None] * len(tasks)
    errors: dict = {}
    todo = []
    for i, t in enumerate(tasks):
        done = None if force else read_result(t)
        if done is not None:
            done["cached"] = True
            results[i] = done
            if on_result:
                on_result(i, done)
        else:
            todo.append(i)
    bar = tqdm(total=len(tasks), initial=len(tasks) - len(todo), desc=desc, unit="task",
               disable=not progress, dynamic_ncols=True)
    # the tasks start in the order given (a higher priority starts first), whatever Dask would choose
    futures = {client.submit(execute_task, tasks[i], force, False, direct, True, priority=len(todo) - rank,
                             key=f"{tasks[i].chapter}-{tasks[i].profile}-{tasks[i].key}", pure=False): i
               for rank, i in enumerate(todo)}
    try:
        for fut in as_completed(list(futures)):
            i = futures[fut]
            try:
                res = materialise(fut.result())
                results[i] = res
                if on_result:
                    on_result(i, res)
            except (ChapterError, OutputError) as e:
                errors[i] = str(e)
            except Exception as e:  # KilledWorker after RETRIES, a lost connection
                errors[i] = f"{tasks[i].label or tasks[i].chapter}: {type(e).__name__}: {_first_line(str(e))}"
            bar.update(1)
    except BaseException:
        for fut in futures:
            fut.cancel()
        raise
    finally:
        bar.close()
    return Outcome(results, errors)


def summary(result: dict) -> dict:
    """A result without its records' bulk (for printing)."""
    return {k: v for k, v in result.items() if k not in ("records", "files")}


__all__ = ["Task", "ChapterError", "TaskFailed", "OutputError", "check_outputs", "safe_path", "prepare", "execute_task", "run_tasks", "cluster", "publish",
           "read_result", "chapters", "resolve", "parameters", "schema", "code_version"]


def _asdict(task: Task) -> dict:  # pragma: no cover - debugging aid
    return asdict(task)
