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
from .claims import repo_root

PROFILES = ("book", "smoke", "paper")
SCORECARD = "scorecard"
RETRIES = 2  # re-runs of a task whose worker died (a chapter that raises is not re-run: it would again)


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

    @property
    def key(self) -> str:
        blob = json.dumps(dict(chapter=self.chapter, values=self.values, code=self.code), sort_keys=True)
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
                root=str(root or tasks_root()), label=label)


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


def read_result(task: Task) -> dict | None:
    """The finished result of a task, or None (a half-written task is never in ``task.dir``)."""
    path = task.dir / "result.json"
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


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
    final = task.dir
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}.partial-{uuid.uuid4().hex[:8]}")
    tmp.mkdir()
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
    dest = repo_root() / "artifacts" / "failed" / f"{task.chapter}.{task.profile}-{task.key}.ipynb"
    dest.parent.mkdir(parents=True, exist_ok=True)
    nb.replace(dest)
    return dest


def materialise(result: dict) -> dict:
    """Write a gathered result's files here when its worker did not share this file system."""
    files = result.pop("files", None)
    final = Path(result["dir"])
    if files and not (final / "result.json").exists():
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = final.with_name(f".{final.name}.partial-{uuid.uuid4().hex[:8]}")
        tmp.mkdir()
        for name, data in files.items():
            if name != "result.json":
                (tmp / name).write_bytes(data)
        (tmp / "result.json").write_bytes(files["result.json"])
        tmp.rename(final)
    return result


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")
    tmp.write_bytes(data)
    tmp.replace(path)


def publish(result: dict, runs_dir: Path | None = None, claims_root: Path | None = None) -> Path:
    """Copy a finished task to where the book and the CLI show it: the notebook to
    ``artifacts/runs/<profile>/<chapter>.ipynb``, its records to ``artifacts/claims/<profile>/``
    (each file written under a temporary name, then renamed)."""
    from .claims import claims_dir

    profile = result["profile"]
    runs_dir = Path(runs_dir) if runs_dir else repo_root() / "artifacts" / "runs" / profile
    if profile in PROFILES:  # earlier runs of this chapter and profile (other code versions) are superseded
        here = Path(result["dir"])
        for old in here.parent.glob(f"{profile}-*"):
            if old != here and old.is_dir():
                shutil.rmtree(old, ignore_errors=True)
    out = runs_dir / f"{result['chapter']}.ipynb"
    if result.get("notebook"):
        _atomic_write(out, Path(result["notebook"]).read_bytes())
    for rec in result["records"]:
        name = f"{rec['source']}__{rec['chapter'].replace('/', '__')}.json"
        base = (Path(claims_root) / rec["profile"]) if claims_root else claims_dir(rec["profile"])
        _atomic_write(base / name, json.dumps(rec, indent=1).encode())
    return out


# ----------------------------------------------------------------------------------------------
# the cluster
# ----------------------------------------------------------------------------------------------
def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


@contextlib.contextmanager
def cluster(scheduler: str | None = None, workers: int | None = None):
    """A Dask client: on ``scheduler`` (or ``DASK_SCHEDULER_ADDRESS``) when given, else on an in-process
    ``LocalCluster`` of ``workers`` one-thread processes (default: the cores this process may use)."""
    import logging

    import dask
    from distributed import Client, LocalCluster

    address = scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS")
    if address:
        with Client(address, timeout="20s") as client:
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
            except ChapterError as e:
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


__all__ = ["Task", "ChapterError", "TaskFailed", "prepare", "execute_task", "run_tasks", "cluster", "publish",
           "read_result", "chapters", "resolve", "parameters", "schema", "code_version"]


def _asdict(task: Task) -> dict:  # pragma: no cover - debugging aid
    return asdict(task)
