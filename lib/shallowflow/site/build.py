"""The book on the executor: every chapter, then the scorecard, then the site from the executed notebooks.

:func:`run_book` executes every chapter of an edition (a profile: ``book``, ``smoke``, ``paper``) as
tasks of :mod:`shallowflow.executor` on a Dask cluster, then the scorecard (it reads the chapters'
claim records, so it runs after them), publishes the notebooks to ``artifacts/runs/<profile>/`` and the
records to ``artifacts/claims/<profile>/``, and writes the build report
``artifacts/runs/<profile>/build-report.json`` (each page's execution time, the machine, the versions).
:func:`build_site` then runs ``jupyter-book build . -W --keep-going`` with execution off:
:mod:`shallowflow.site.ext` renders the executed notebooks of the edition.
"""
from __future__ import annotations

import contextlib
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Iterable

from ..outputs import safe_path
from ..verdicts import repo_root
from ..executor import (SCORECARD, _atomic_write, check_outputs, chapters, cluster, code_version, engine_and_device,
                       prepare, publish, run_tasks)


def build_report(results: list[dict], wall_s: float, profile: str, workers: int, where: str) -> dict:
    import importlib.metadata as md

    versions = {}
    for pkg in ("shallowflow", "torch", "numpy", "scipy", "matplotlib", "pandas", "papermill", "jupyter-book",
                "myst-nb", "dask", "distributed"):
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    engine, device = engine_and_device()
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    load = os.getloadavg() if hasattr(os, "getloadavg") else ()
    return dict(profile=profile, wall_s=round(wall_s, 1), workers=workers, cluster=where,
                code=code_version(), date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                machine=dict(cpu=cpu, cores=os.cpu_count(), system=f"{platform.system()} {platform.release()}",
                             python=platform.python_version(), engine=engine, device=device,
                             load=[round(x, 2) for x in load]),
                versions=versions,
                chapters=[dict(chapter=r["chapter"], wall_s=r["wall_s"], host=r["host"], pid=r["pid"],
                               started=r["started"], checks=sum(len(rec["checks"]) for rec in r["records"]))
                          for r in results])


TIMINGS = "params/timings.json"  # measured execution times per edition, used only to order the tasks


def expected_seconds(profile: str) -> dict[str, float]:
    """Each chapter's expected execution time in an edition: from the edition's last build report
    (``artifacts/runs/<profile>/build-report.json``) when there is one, else from the times measured on
    the 2-core CI machine and committed in ``params/timings.json``; chapters in neither are absent."""
    root = repo_root()
    for path in (root / "artifacts" / "runs" / profile / "build-report.json", root / TIMINGS):
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            doc = json.loads(path.read_text())
            rows = doc["chapters"] if "chapters" in doc else doc[profile]
            times = {r["chapter"]: float(r["wall_s"]) for r in rows} if isinstance(rows, list) else \
                {c: float(t) for c, t in rows.items()}
            if times:
                return times
    return {}


def longest_first(names: list[str], expected: dict[str, float]) -> list[str]:
    """The chapters in the order to start them: longest expected time first (a chapter of unknown time
    first of all, since it may be long), ties in the given order.  With two workers, starting the two
    four-minute chapters last would leave one worker idle for minutes at the end of the build."""
    return sorted(names, key=lambda c: -expected.get(c, float("inf")))


def run_book(profile: str = "book", scheduler: str | None = None, workers: int | None = None,
             progress: bool = False, only: Iterable[str] | None = None) -> tuple[dict, dict]:
    """Execute every chapter (then the scorecard) as tasks, longest first (:func:`longest_first`); publish
    notebooks and records; write the build report to ``artifacts/runs/<profile>/build-report.json``.
    Returns (report, errors)."""
    names = [c for c in (list(only) if only else chapters()) if c != SCORECARD]
    names = longest_first(names, expected_seconds(profile))
    tasks = [prepare(c, profile) for c in names]  # every chapter validated before any starts
    runs = repo_root() / "artifacts" / "runs" / profile
    for task in tasks:  # before any kernel: task folders, notebooks and records inside the repository, writable
        check_outputs(task, runs)
    safe_path(repo_root() / "artifacts" / "scorecard" / f"{profile}.json")  # the scorecard chapter writes it
    t0 = time.perf_counter()
    with cluster(scheduler, workers) as client:
        n = len(client.scheduler_info(n_workers=-1)["workers"]) if hasattr(client, "scheduler_info") else 0
        out = run_tasks(client, tasks, progress=progress, desc=f"{profile} chapters",
                        on_result=lambda i, r: publish(r, runs))
        results = [r for r in out.results if r]
        errors = {tasks[i].chapter: m for i, m in out.errors.items()}
        if not only:
            if errors:
                errors[SCORECARD] = "not executed: chapters failed"
            else:
                from ..verdicts import claims_dir

                card = prepare(SCORECARD, profile)
                card.env = {"SHALLOWFLOW_CLAIMS_DIR": str(claims_dir(profile).parent)}  # the published records
                sc = run_tasks(client, [card], progress=progress, desc="scorecard",
                               on_result=lambda i, r: publish(r, runs))
                results += [r for r in sc.results if r]
                errors.update({SCORECARD: m for m in sc.errors.values()})
    where = scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS") or "LocalCluster"
    report = build_report(results, time.perf_counter() - t0, profile, n, where)
    if not errors:
        _atomic_write(runs / "build-report.json", json.dumps(report, indent=1).encode())
    return report, errors


def site_dir(profile: str) -> Path:
    """Where an edition's site lands: _build/html for the book, _build/<profile>/_build/html otherwise."""
    root = repo_root()
    return root / "_build" / "html" if profile == "book" else root / "_build" / profile / "_build" / "html"


def check_site(profile: str = "book") -> None:
    """The folder jupyter-book writes an edition to (under ``_build``) lies inside the repository, through no
    symlink out of it (:class:`~shallowflow.outputs.OutputError` in one line otherwise): checked by ``run --all``
    before any kernel starts, and again before the build."""
    safe_path(site_dir(profile))


def build_site(profile: str = "book") -> int:
    """Render the executed notebooks of an edition: ``jupyter-book build . -W --keep-going`` (execution
    off; :mod:`shallowflow.site.ext` reads ``artifacts/runs/<profile>/``).  Returns its exit status."""
    import subprocess

    check_site(profile)
    root = repo_root()
    cmd = [str(Path(sys.executable).with_name("jupyter-book")), "build", ".", "-W", "--keep-going", "--all"]
    if profile != "book":
        cmd += ["--path-output", str(root / "_build" / profile)]
    env = {**os.environ, "SHALLOWFLOW_EDITION": profile, "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    t0 = time.perf_counter()
    rc = subprocess.call(cmd, cwd=root, env=env)
    print(f"site ({profile} edition) built in {time.perf_counter() - t0:.1f} s -> {site_dir(profile)}"
          if rc == 0 else f"shallowflow: the site build failed (exit {rc})", file=sys.stderr if rc else sys.stdout)
    return rc
