"""Parameter sweeps: one chapter over the product of grids, every point a task of the executor.

    shallowflow sweep orthogonal-inputs/balancedness --profile smoke \\
        --grid time_toy "[2.0, 4.0]" --grid seeds "[[0], [1]]"
    shallowflow sweep --file sweep.yml [--scheduler tcp://host:8786]

A sweep file holds the same in YAML::

    chapter: orthogonal-inputs/balancedness
    profile: smoke              # the values every point starts from
    fixed: {step_pairs: 4}      # optional: set for every point
    grid:                       # the product of these lists
      time_toy: [2.0, 4.0]
      seeds: [[0], [1]]

Every point is validated (:func:`shallowflow.executor.prepare`) before any is submitted: a bad value
in point 37 is refused before point 1 runs.  Points run as tasks (the notebook path by default, or
``direct``: the same cells executed in the worker without a kernel), and the table has one row per
point: the grid's values, each check's measured value (as the chapter prints it) and verdict, the
engine and device, the wall time and the notebook.  It is written as CSV and Parquet, each under a
temporary name first.  A sweep started again reads finished points back (a task directory holds a
complete result or does not exist) and computes the rest.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import time
from pathlib import Path

import yaml

from . import executor as X
from .claims import repo_root

TIMING = ("wall_s", "cached", "started", "worker")  # columns that differ between identical sweeps


def expand(grids: dict) -> list[dict]:
    """The product of the grids, in the order given (the last grid varies fastest)."""
    for name, values in grids.items():
        if not isinstance(values, list) or not values:
            raise X.ChapterError(f"grid {name!r} must be a non-empty list, got {X._short(values)}")
    names = list(grids)
    return [dict(zip(names, combo)) for combo in itertools.product(*(grids[n] for n in names))]


def load_file(path: Path) -> dict:
    """A sweep file: chapter, profile, fixed, grid (see the module's docstring)."""
    doc = yaml.safe_load(Path(path).read_text()) or {}
    unknown = set(doc) - {"chapter", "profile", "fixed", "grid", "name"}
    if unknown or "chapter" not in doc or "grid" not in doc:
        raise X.ChapterError(f"{path}: a sweep file has keys chapter, grid and optionally profile, fixed, name"
                             + (f" (unknown: {', '.join(sorted(unknown))})" if unknown else ""))
    return dict(chapter=doc["chapter"], profile=doc.get("profile", "smoke"), fixed=doc.get("fixed") or {},
                grids=doc["grid"], name=doc.get("name"))


def plan(chapter: str, grids: dict, profile: str = "smoke", fixed: dict | None = None,
         root: Path | None = None) -> list[X.Task]:
    """Validate every point; refuse the sweep (naming each bad point) before anything runs."""
    chapter = X.resolve(chapter)
    tasks, bad = [], []
    for i, point in enumerate(expand(grids), 1):
        where = f"point {i} ({', '.join(f'{k}={X._short(v, 30)}' for k, v in point.items())})"
        try:
            tasks.append(X.prepare(chapter, profile, {**(fixed or {}), **point}, root=root, label=where))
        except X.ChapterError as e:
            bad.append(str(e))
    if bad:
        more = f" (and {len(bad) - 5} more)" if len(bad) > 5 else ""
        raise X.ChapterError(f"sweep refused, nothing was run: {len(bad)} of {len(bad) + len(tasks)} points "
                             f"are invalid{more}:\n  " + "\n  ".join(bad[:5]))
    return tasks


def _cell(v):
    return v if isinstance(v, (int, float, str, bool)) or v is None else json.dumps(v)


def row(index: int, point: dict, result: dict | None, error: str = "") -> dict:
    """One row: the point's grid values, every check's measured value and verdict, where and how long."""
    out = {"point": index}
    out.update({k: _cell(v) for k, v in point.items()})
    if result is None:
        out["error"] = error
        return out
    multi = len(result["records"]) > 1
    for rec in result["records"]:
        for c in rec["checks"]:
            cid = f"{rec['source']}:{c['id']}" if multi else c["id"]
            out[f"{cid} measured"] = c["measured"]
            out[f"{cid} verdict"] = c["verdict"]
    out.update(profile=result["profile"], engine=result["engine"], device=result["device"], path=result["path"],
               notebook=result["notebook"], error="", wall_s=result["wall_s"], cached=bool(result.get("cached")),
               started=result["started"], worker=f"{result['host']}:{result['pid']}")
    return out


def table(tasks: list[X.Task], grids: dict, results: list, errors: dict):
    import pandas as pd

    names = list(grids)
    rows = [row(i + 1, {n: t.values[n] for n in names}, r, errors.get(i, "")) for i, (t, r) in
            enumerate(zip(tasks, results))]
    df = pd.DataFrame(rows)
    front = [c for c in df.columns if c not in TIMING] + [c for c in TIMING if c in df.columns]
    return df[front]


def default_stem(chapter: str, grids: dict, profile: str, fixed: dict) -> Path:
    blob = json.dumps(dict(grids=grids, profile=profile, fixed=fixed), sort_keys=True)
    name = "-".join(grids) + "-" + hashlib.sha256(blob.encode()).hexdigest()[:8]
    return repo_root() / "artifacts" / "sweeps" / chapter / name


def write(df, stem: Path) -> tuple[Path, Path]:
    """CSV and Parquet, each written under a temporary name and renamed into place."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    csv, parquet = stem.with_suffix(".csv"), stem.with_suffix(".parquet")
    for path, write_fn in ((csv, lambda p: df.to_csv(p, index=False)), (parquet, lambda p: df.to_parquet(p, index=False))):
        tmp = path.with_name(f".{path.name}.tmp")
        write_fn(tmp)
        tmp.replace(path)
    return csv, parquet


def run(chapter: str, grids: dict, profile: str = "smoke", fixed: dict | None = None, scheduler: str | None = None,
        workers: int | None = None, out: Path | None = None, progress: bool = False, direct: bool = False,
        resume: bool = True, client=None, root: Path | None = None):
    """Plan (validate every point), run the points as tasks, write the table; returns (df, errors, paths)."""
    fixed = dict(fixed or {})
    tasks = plan(chapter, grids, profile, fixed, root)
    chapter = tasks[0].chapter
    t0 = time.perf_counter()
    if client is not None:
        outcome = X.run_tasks(client, tasks, force=not resume, progress=progress, direct=direct, desc="points")
    else:
        with X.cluster(scheduler, workers) as c:
            outcome = X.run_tasks(c, tasks, force=not resume, progress=progress, direct=direct, desc="points")
    df = table(tasks, grids, outcome.results, outcome.errors)
    paths = write(df, Path(out) if out else default_stem(chapter, grids, profile, fixed))
    return df, outcome.errors, paths, time.perf_counter() - t0


def comparable(df):
    """The table without the columns that differ between identical sweeps (timing, cache, worker)."""
    drop = [c for c in TIMING if c in df.columns]
    return df.drop(columns=drop).reset_index(drop=True)
