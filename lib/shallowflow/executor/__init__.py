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

:mod:`shallowflow.site.build` executes the book on it (every chapter, then the scorecard) and renders the
site; :mod:`shallowflow.run.sweep` expands parameter grids into tasks.

The package has one module per idea, and this module re-exports every name of each (the public ones and the
private ones the tests and tools use), so ``from shallowflow import executor as X; X.prepare(...)`` and
``from shallowflow.executor import ...`` work as before the split:

- :mod:`.common` -- profiles and limits, :class:`ChapterError`, :class:`TaskFailed`, the chapters and their
  parameters (:func:`chapters`, :func:`resolve`, :func:`schema`, :func:`parameters`, :func:`profile_values`);
- :mod:`.tasks` -- :class:`Task`, :func:`prepare`, :func:`execute_task`, :func:`read_result`, the code version;
- :mod:`.notebook` -- a task's notebook in a kernel of its own (papermill) or in this process (``direct``);
- :mod:`.warm` -- kernels forked from a warm parent (:mod:`.zygote`) that has imported torch, matplotlib and
  ipykernel once, instead of paying those imports in every kernel (the smoke tier and nbval start 84);
- :mod:`.publish` -- :func:`outputs`, :func:`check_outputs`, :func:`publish` (all files or none), superseding;
- :mod:`.cluster` -- :func:`cluster`, :func:`connect`, :func:`run_tasks` on Dask.

Setting a name on this package (``monkeypatch.setattr(X, "execute_task", fake)``) sets it in every sub-module
that holds it too, so a replaced function is the one the other functions call, as in the single module.
"""
from __future__ import annotations

import sys as _sys
import types as _types

from ..outputs import OutputError, describe, ensure_writable, publish_files, safe_path
from ..verdicts import repo_root
from . import cluster as _cluster_mod, common as _common, notebook as _notebook, publish as _publish, tasks as _tasks
from .cluster import (Outcome, _probe, check_scheduler, check_workers, cluster, connect, connect_timeout,
                      default_workers, run_tasks, show_progress)
from .common import (CONNECT_TIMEOUT, MAX_RESULT_BYTES, MAX_WORKERS, PROFILES, RETRIES, SCORECARD, ChapterError,
                     TaskFailed, _first_line, _short, book_dir, chapters, parameters, profile_values, resolve, schema)
from .notebook import (_environ, _execute_direct, _execute_notebook, _kernel_manager_class, _kill_kernels,
                       engine_and_device, to_notebook)
from .publish import (_atomic_write, _claims_root, _supersede, _task_root, check_outputs, materialise, outputs,
                      publish)
from .tasks import (_RESULT_FIELDS, Task, _asdict, _code_version, _input_stamps, _is_result, _jsonable, _keep_failed,
                    code_version, execute_task, prepare, read_result, summary, tasks_root)

_SUBMODULES = (_common, _notebook, _tasks, _publish, _cluster_mod)


class _Package(_types.ModuleType):
    """Setting a name here sets it in each sub-module that holds it (a test's monkeypatch reaches every caller)."""

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if isinstance(value, _types.ModuleType):
            return
        for sub in globals().get("_SUBMODULES", ()):
            if name in vars(sub):
                setattr(sub, name, value)


_sys.modules[__name__].__class__ = _Package

__all__ = ["Task", "ChapterError", "TaskFailed", "OutputError", "check_outputs", "safe_path", "prepare", "execute_task",
           "run_tasks", "cluster", "publish", "read_result", "chapters", "resolve", "parameters", "schema",
           "code_version", "Outcome", "connect", "materialise", "outputs", "profile_values", "show_progress",
           "summary", "tasks_root", "to_notebook", "engine_and_device", "book_dir", "check_workers", "check_scheduler",
           "default_workers", "connect_timeout", "describe", "ensure_writable", "publish_files", "repo_root",
           "PROFILES", "SCORECARD", "RETRIES", "MAX_WORKERS", "CONNECT_TIMEOUT", "MAX_RESULT_BYTES"]
