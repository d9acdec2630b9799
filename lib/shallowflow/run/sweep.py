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
complete result or does not exist) and computes the rest; a ``result.json`` that is not a result
(``[]``, ``{}``, garbage) counts as absent.

Bounds: a sweep has at most :data:`MAX_POINTS` points (the product of the grids' lengths, counted before
any point is built), a sweep file at most :data:`MAX_FILE_BYTES` bytes and no YAML aliases (``*name``:
a few lines of aliases expand to billions of values).  A broken file (YAML syntax, a tag such as
``!!python/object``, a list where a mapping goes, binary bytes, a missing file, a folder) is refused in
one line naming it.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import sys
import time
from pathlib import Path

import yaml

from .. import executor as X
from ..verdicts import repo_root
from ..outputs import OutputError, describe, ensure_writable, publish_files, safe_path

TIMING = ("wall_s", "cached", "started", "worker")  # columns that differ between identical sweeps
MAX_POINTS = 10_000  # points in one sweep
MAX_FILE_BYTES = 1 << 20  # a sweep file
MAX_DEPTH = 32  # nesting of a sweep file's values (a grid of lists of lists is 4 deep)
NAMES_SHOWN = 5  # unknown names a refusal lists
PROGRESS_FROM = 100  # a sweep of this many points says on stderr how far its validation is


def count(grids: dict) -> int:
    """The number of points of the grids (checked: a mapping of names to non-empty lists), without
    building them; ChapterError beyond MAX_POINTS."""
    if not isinstance(grids, dict) or not grids:
        raise X.ChapterError(f"the grids must be a mapping of parameter names to lists of values, got "
                             f"{X._short(grids)}")
    n = 1
    for name, values in grids.items():
        if not isinstance(name, str):
            raise X.ChapterError(f"a grid's name must be a parameter name, got {X._short(name, 40)}")
        if not isinstance(values, list) or not values:
            raise X.ChapterError(f"grid {X._short(name, 40)} must be a non-empty list, got {X._short(values)}")
        n *= len(values)
        if n > MAX_POINTS:
            sizes = [str(len(v)) if isinstance(v, list) else "?" for v in itertools.islice(grids.values(), 8)]
            more = f" x ... ({len(grids):,} grids)" if len(grids) > 8 else ""
            raise X.ChapterError(f"sweep refused, nothing was run: its grids have more than {MAX_POINTS:,} points "
                                 f"({' x '.join(sizes)}{more})")
    return n


def expand(grids: dict) -> list[dict]:
    """The product of the grids, in the order given (the last grid varies fastest); at most MAX_POINTS."""
    count(grids)
    names = list(grids)
    return [dict(zip(names, combo)) for combo in itertools.product(*(grids[n] for n in names))]


try:  # libyaml's parser when present (a 1 MiB file in a few seconds, not 15), the composer below in Python
    from yaml._yaml import CParser as _Parser

    class _Base(yaml.composer.Composer, _Parser, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
        def __init__(self, stream):
            _Parser.__init__(self, stream)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
            yaml.composer.Composer.__init__(self)
except ImportError:  # pragma: no cover - PyYAML without libyaml
    _Base = yaml.SafeLoader


class _SweepLoader(_Base):
    """safe_load without aliases (``*name`` is refused where it appears, before anything is expanded), nested at
    most :data:`MAX_DEPTH` deep (refused as the parser reaches that depth, not by Python's recursion limit), and
    without a key given twice in one mapping (YAML would silently keep the last)."""

    _depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(None, None, "an alias (*name) is not allowed in a sweep file",
                                              event.start_mark)
        if self._depth >= MAX_DEPTH:
            raise yaml.composer.ComposerError(None, None, f"values nested more than {MAX_DEPTH} deep",
                                              self.peek_event().start_mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    again = key in seen
                    seen.add(key)
                except TypeError:  # an unhashable key: SafeConstructor refuses it itself
                    continue
                if again:
                    raise yaml.constructor.ConstructorError(None, None, f"the key {X._short(key, 40)} is given twice",
                                                            key_node.start_mark)
        return super().construct_mapping(node, deep)


def _yaml_error(e: yaml.YAMLError) -> str:
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"{problem}{where}"


def load_file(path: Path) -> dict:
    """A sweep file: chapter, profile, fixed, grid (see the module's docstring); ChapterError in one line
    naming the file when it cannot be read or is not a sweep file."""
    path = Path(path)
    try:
        if not path.is_file():
            raise X.ChapterError(f"{path}: {'is a folder, not a sweep file' if path.is_dir() else 'no such file'}")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise X.ChapterError(f"{path}: a sweep file has at most {MAX_FILE_BYTES:,} bytes")
        text = path.read_bytes().decode("utf-8")
        doc = yaml.load(text, Loader=_SweepLoader)
    except OSError as e:
        raise X.ChapterError(f"{path}: cannot be read ({e.strerror or type(e).__name__})") from None
    except UnicodeDecodeError:
        raise X.ChapterError(f"{path}: not a text file (a sweep file is YAML in UTF-8)") from None
    except yaml.YAMLError as e:
        raise X.ChapterError(f"{path}: not a valid sweep file: {_yaml_error(e)}") from None
    except ValueError as e:  # an integer of more digits than Python converts (int_max_str_digits)
        raise X.ChapterError(f"{path}: not a valid sweep file: {X._first_line(str(e), 120)}") from None
    except (RecursionError, MemoryError) as e:
        raise X.ChapterError(f"{path}: not a valid sweep file: too large to read ({type(e).__name__})") from None
    doc = {} if doc is None else doc
    keys = "a sweep file is a mapping with keys chapter, grid and optionally profile, fixed, name"
    if not isinstance(doc, dict):
        raise X.ChapterError(f"{path}: {keys}, not a {type(doc).__name__}")
    unknown = set(doc) - {"chapter", "profile", "fixed", "grid", "name"}
    if unknown or "chapter" not in doc or "grid" not in doc:
        raise X.ChapterError(f"{path}: {keys}" + (f" (unknown: {', '.join(sorted(map(str, unknown)))})"
                                                  if unknown else ""))
    fixed = doc.get("fixed") or {}
    for key, value, kind in (("chapter", doc["chapter"], str), ("grid", doc["grid"], dict), ("fixed", fixed, dict),
                             ("profile", doc.get("profile", "smoke"), str), ("name", doc.get("name") or "", str)):
        if not isinstance(value, kind):
            what = "a mapping" if kind is dict else "a text"
            raise X.ChapterError(f"{path}: {key} must be {what}, got {X._short(value, 60)}")
    if doc.get("profile", "smoke") not in X.PROFILES:
        raise X.ChapterError(f"{path}: profile must be one of {', '.join(X.PROFILES)}, got "
                             f"{X._short(doc['profile'], 40)}")
    try:
        count(doc["grid"])
    except X.ChapterError as e:
        raise X.ChapterError(f"{path}: {e}") from None
    return dict(chapter=doc["chapter"], profile=doc.get("profile", "smoke"), fixed=fixed,
                grids=doc["grid"], name=doc.get("name"))


def unknown_names(chapter: str, grids: dict, fixed: dict | None = None) -> None:
    """Refuse grid and fixed names the chapter does not declare, before any point is built (a file of 60,000
    unknown names is refused in one short line, naming the first :data:`NAMES_SHOWN`)."""
    declared = X.parameters(chapter)
    for what, names in (("grid", list(grids)), ("fixed", list(fixed or {}))):
        unknown = [n for n in names if n not in declared]
        if unknown:
            shown = ", ".join(X._short(n, 40) for n in unknown[:NAMES_SHOWN])
            more = f" and {len(unknown) - NAMES_SHOWN:,} more" if len(unknown) > NAMES_SHOWN else ""
            raise X.ChapterError(f"sweep refused, nothing was run: unknown {what} parameter(s) {shown}{more} for "
                                 f"chapter {chapter}; its parameters are: {', '.join(declared)}")


def _say(text: str) -> None:
    print(f"shallowflow: {text}", file=sys.stderr, flush=True)


def plan(chapter: str, grids: dict, profile: str = "smoke", fixed: dict | None = None,
         root: Path | None = None) -> list[X.Task]:
    """Validate every point; refuse the sweep (naming each bad point) before anything runs.  Names are checked
    before the grids are expanded; a sweep of :data:`PROGRESS_FROM` points or more says on stderr how far the
    validation is (a line at the start, at each quarter and at the end)."""
    chapter = X.resolve(chapter)
    count(grids)
    unknown_names(chapter, grids, fixed)
    points = expand(grids)
    loud = len(points) >= PROGRESS_FROM
    marks = {len(points) * q // 4 for q in (1, 2, 3)} if loud else set()
    if loud:
        _say(f"validating {len(points):,} points of {chapter} before any runs")
    t0 = time.process_time()
    shared: dict = {}  # what every point shares (the chapter's parameters, profile, schema, code version)
    tasks, bad = [], []
    for i, point in enumerate(points, 1):
        where = f"point {i} ({', '.join(f'{k}={X._short(v, 30)}' for k, v in point.items())})"
        try:
            tasks.append(X.prepare(chapter, profile, {**(fixed or {}), **point}, root=root, label=where,
                                   shared=shared))
        except X.ChapterError as e:
            bad.append(str(e))
        if i in marks:
            _say(f"validated {i:,} of {len(points):,} points ({len(bad):,} invalid so far)")
    if loud:
        _say(f"validated {len(points):,} points in {time.process_time() - t0:.1f} CPU-s ({len(bad):,} invalid)")
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
        for c in rec["checks"]:  # the checks that ran (a point's not-run checks: its terminal table and --json)
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


def _table_root(stem: Path) -> Path:
    return Path(stem).parent  # the folder chosen with --out (or artifacts/sweeps/..., inside the repository)


def write(df, stem: Path) -> tuple[Path, Path]:
    """CSV and Parquet, both or neither: staged under temporary names, then renamed into place."""
    import io

    stem = Path(stem)
    csv = safe_path(stem.with_suffix(".csv"), _table_root(stem))
    parquet = safe_path(stem.with_suffix(".parquet"), _table_root(stem))
    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    try:
        publish_files([(csv, df.to_csv(index=False).encode()), (parquet, buf.getvalue())])
    except OSError as e:
        raise OutputError(f"{describe(e)}; the table was not written") from None
    return csv, parquet


def run(chapter: str, grids: dict, profile: str = "smoke", fixed: dict | None = None, scheduler: str | None = None,
        workers: int | None = None, out: Path | None = None, progress: bool = False, direct: bool = False,
        resume: bool = True, client=None, root: Path | None = None, collect: dict | None = None):
    """Plan (validate every point), run the points as tasks, write the table; returns (df, errors, paths, wall).
    ``collect``, a dict, receives the ``tasks`` and their ``results`` (None where a point failed)."""
    fixed = dict(fixed or {})
    X.check_workers(workers)
    tasks = plan(chapter, grids, profile, fixed, root)
    chapter = tasks[0].chapter
    stem = Path(out) if out else default_stem(chapter, grids, profile, fixed)
    # before any point runs: the table's folder and the tasks' root are inside their roots and writable
    ensure_writable(_table_root(stem), _table_root(stem))
    ensure_writable(Path(tasks[0].root), tasks[0].root)
    t0 = time.perf_counter()
    if client is not None:
        outcome = X.run_tasks(client, tasks, force=not resume, progress=progress, direct=direct, desc="points")
    else:
        with X.cluster(scheduler, workers) as c:
            outcome = X.run_tasks(c, tasks, force=not resume, progress=progress, direct=direct, desc="points")
    df = table(tasks, grids, outcome.results, outcome.errors)
    paths = write(df, stem)
    if collect is not None:
        collect.update(tasks=tasks, results=outcome.results)
    return df, outcome.errors, paths, time.perf_counter() - t0


def comparable(df):
    """The table without the columns that differ between identical sweeps (timing, cache, worker)."""
    drop = [c for c in TIMING if c in df.columns]
    return df.drop(columns=drop).reset_index(drop=True)
