"""Re-run chapters, sweep their parameters, execute the whole book: one executor behind every command.

    shallowflow list
    shallowflow params orthogonal-inputs/toy
    shallowflow run orthogonal-inputs/toy [--profile smoke|book|paper] [-p NAME VALUE ...] [--scheduler ADDRESS]
                    [--json PATH] [--no-table]
    shallowflow run --all [--profile book|smoke|paper] [--scheduler ADDRESS] [--workers N] [--no-site]
    shallowflow run (CHAPTER [-p NAME VALUE ...] | --all) [--profile P] --estimate   # the cost, no kernel
    shallowflow run CHAPTER --profile paper [--device cuda] [--work-budget UNITS] [--memory-gb GIB] [--scheduler A]
    shallowflow sweep CHAPTER --grid NAME "[v1, v2]" ... [-p NAME VALUE ...] [--profile P] [--scheduler ADDRESS]
    shallowflow sweep --file sweep.yml

Every value is checked against the chapter's schema in this process (names, types, ranges, the rules
between parameters) before a kernel starts or a file is written; negative numbers are values
(``-p lr -1e-3``).  After a run (each point of a sweep) the chapter's check table is printed (id, measured,
criterion, verdict, cause; :mod:`shallowflow.run.terminal`), ``--json PATH`` writes it.  A run executes in a temporary directory and is moved into place only when the
chapter succeeded (:mod:`shallowflow.executor`): an interrupted run (Ctrl-C, SIGTERM, a dying kernel)
says so in one line and leaves the previous notebook and claim records untouched.  The executed
notebook is published to ``artifacts/runs/<profile>/<chapter>.ipynb``.  ``--scheduler`` (or
``DASK_SCHEDULER_ADDRESS``) sends the work to a running Dask cluster; ``run --all`` and ``sweep``
otherwise start a local one, one worker process per core.  ``--device``, ``--work-budget`` and ``--memory-gb``
describe the machine that runs the chapter (a GPU, a large node, a cluster's worker): they set
``SHALLOWFLOW_DEVICE``, ``SHALLOWFLOW_WORK_BUDGET`` and ``SHALLOWFLOW_MEMORY_GB`` for the validation here and in
the chapter's kernel, wherever it runs (they travel with the task to a ``--scheduler``'s worker, whose own
environment may not have them), so that the source's scale refused by this machine's budgets runs on one that has
the resources (:mod:`shallowflow.executor.recipes`).
"""
from __future__ import annotations

import argparse
import ast
import signal
import sys
import time
from pathlib import Path

from .. import executor as X
from ..verdicts import repo_root  # noqa: F401  (re-exported: tests and tools use cli.repo_root)
from ..executor import ChapterError, book_dir, chapters, resolve  # noqa: F401  (re-exported for tests and tools)

PROFILES = X.PROFILES


class Interrupted(KeyboardInterrupt):
    """SIGTERM, turned into an exception so that the same clean-up runs as for Ctrl-C."""


def profile_parameters(chapter: str, profile: str) -> dict:
    """The parameter values of a profile (``book``: none, the parameters cell itself)."""
    return X.profile_values(resolve(chapter), profile)


def to_notebook(chapter: str) -> Path:
    """The chapter's Jupytext script as an .ipynb under artifacts/notebooks (never next to it)."""
    return X.to_notebook(chapter, repo_root() / "artifacts" / "notebooks" / f"{chapter}.ipynb")


def declared_parameters(notebook: Path) -> dict:
    import papermill

    return papermill.inspect_notebook(str(notebook))


def parse_value(text: str):
    """'60' -> 60, '1e-3' -> 0.001, '-1e-3' -> -0.001, '[0, 1]' -> [0, 1], 'relu' -> 'relu', 'True' -> True."""
    text = text.strip()
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def execute(chapter: str, profile: str = "book", overrides: dict | None = None, out_dir: Path | None = None,
            progress: bool = False, scheduler: str | None = None) -> Path:
    """Validate, execute (here, or on ``scheduler``) and publish one chapter; returns the notebook's path.
    Every output path is checked before a kernel starts: inside the repository (or ``out_dir``), never
    through a symlink out of it, writable."""
    return execute_result(chapter, profile, overrides, out_dir, progress, scheduler)[0]


def check_json_path(path) -> Path | None:
    """``--json PATH``: a file whose folder can be written, not a folder, and (as :func:`terminal.write_json`
    will check) not a symlink out of its folder: all checked before a kernel starts."""
    if path is None:
        return None
    from ..outputs import ensure_writable, safe_path

    path = Path(path).expanduser().absolute()
    if path.is_dir():
        raise X.OutputError(f"--json {path}: is a folder, not a file")
    safe_path(path, path.parent)
    ensure_writable(path.parent, path.parent)
    return path


def execute_result(chapter: str, profile: str = "book", overrides: dict | None = None, out_dir: Path | None = None,
                   progress: bool = False, scheduler: str | None = None, json_path: Path | None = None,
                   env: dict | None = None) -> tuple[Path, dict]:
    """:func:`execute`, also returning the task's result (its claim records: the terminal table).  ``env``: the
    kernel's machine variables (:func:`machine_env`), carried by the task to wherever it runs."""
    task = X.prepare(chapter, profile, overrides)
    task.env.update(env or {})
    check_json_path(json_path)
    runs_dir = Path(out_dir) / task.profile if out_dir else None
    X.check_outputs(task, runs_dir, out_dir)
    if scheduler:
        with X.cluster(scheduler) as client:
            out = X.run_tasks(client, [task], progress=False)
        if out.errors:
            raise ChapterError(out.errors[0])
        result = out.results[0]
    else:
        result = X.execute_task(task, force=True, progress=progress)
    return X.publish(result, Path(out_dir) / result["profile"] if out_dir else None, out_root=out_dir), result


# ----------------------------------------------------------------------------------------------
# commands
# ----------------------------------------------------------------------------------------------
def _cmd_list(args) -> int:
    for c in chapters():
        profiles = [p for p in ("smoke", "paper") if (repo_root() / "params" / p / f"{c}.yml").exists()]
        print(f"{c:40s} profiles: book{''.join(', ' + p for p in profiles)}")
    return 0


def _cmd_params(args) -> int:
    chapter = resolve(args.chapter)
    sch, rules = X.schema(chapter)
    declared = X.parameters(chapter)
    width = max(map(len, declared)) if declared else 10
    for name, (default, comment) in declared.items():
        spec = (sch or {}).get(name)
        accepts = spec.accepted() if spec else "(checked by the chapter)"
        print(f"{name:{width}s} = {X._short(default, 28):28s} accepts {accepts}")
        if comment or (spec and spec.doc):
            print(f"{'':{width}s}   # {comment or spec.doc}")
    for rule in rules:
        print(f"rule: {' and '.join(rule.names)}: {rule.message}")
    return 0


def _overrides(pairs) -> dict:
    out = {}
    for name, value in pairs:
        if name in out:
            raise ChapterError(f"parameter {X._short(name, 40)} given twice")
        out[name] = parse_value(value)
    return out


def _cmd_run(args) -> int:
    progress = X.show_progress(False if args.quiet else None)
    env = machine_env(args)
    if args.all:
        if args.chapter or args.p:
            raise ChapterError("run --all takes no chapter and no -p values (profiles set them)")
        if env and args.scheduler and not args.estimate:
            raise ChapterError("run --all --scheduler takes no --device, --work-budget or --memory-gb (set "
                               "SHALLOWFLOW_DEVICE, SHALLOWFLOW_WORK_BUDGET, SHALLOWFLOW_MEMORY_GB in the workers' "
                               "environment); a single chapter's run carries them to its worker")
        # the local cluster's workers start inside, with these variables (the device: unless only estimating)
        with X._environ(**{k: v for k, v in env.items() if k != "SHALLOWFLOW_DEVICE" or not args.estimate}):
            return _estimate_all(args) if args.estimate else _run_all(args, progress)
    if not args.chapter:
        raise ChapterError("name a chapter (shallowflow list) or give --all")
    overrides = _overrides(args.p)
    # the budgets validate here as in the kernel; the device is checked here only when the kernel runs here (a
    # scheduler's worker may have the GPU this machine lacks: its kernel checks it)
    here = {k: v for k, v in env.items() if k != "SHALLOWFLOW_DEVICE" or not (args.scheduler or args.estimate)}
    with X._environ(**here):
        if args.estimate:
            return _estimate(args, overrides)
        t0 = time.perf_counter()
        out, result = execute_result(args.chapter, args.profile, overrides, args.out, progress=progress,
                                     scheduler=args.scheduler, json_path=args.json, env=env)
    if not args.no_table:
        from . import terminal

        terminal.show_run(result)
    print(f"executed {resolve(args.chapter)} ({result.get('profile', args.profile)}) "
          f"in {time.perf_counter() - t0:.1f} s -> {out}")
    if args.json:
        from . import terminal

        print(f"verdicts -> {terminal.write_json(args.json, terminal.run_document(result))}")
    return 0


def _estimate(args, overrides: dict) -> int:
    """``run CHAPTER --estimate``: the cost block, no kernel; a refusal as ``run`` refuses (a budget's refusal
    after the block, which says where the run fits)."""
    from ..executor import estimate as E

    est = E.estimate(args.chapter, args.profile, overrides)
    print(E.describe(est))
    given = [f"{flag} {value}" for flag, value in (("--device", args.device), ("--work-budget", args.work_budget),
                                                    ("--memory-gb", args.memory_gb)) if value is not None]
    if given:  # "this machine" above is the one these flags describe
        print(f"  machine as described by {' '.join(given)} (not measured here"
              + ("; the device is checked where the kernel runs)" if args.device else ")"))
    if est.refusal:
        raise ChapterError(est.refusal)
    return 0


def _estimate_all(args) -> int:
    """``run --all --estimate``: one row per chapter, no kernel; exit 2, as ``run --all`` would refuse, when a
    chapter is refused (a budget of this machine: its row says 'a GPU or a cluster'; anything else: its refusal)."""
    from ..executor import estimate as E

    rows = E.estimate_all(args.profile)
    print(f"estimate for every chapter ({args.profile}); no kernel started; times: book time x work ratio, "
          f"{E.SPREAD_DEFAULT if not rows else next((r.spread for r in rows if not isinstance(r, str)), E.SPREAD_DEFAULT)}")
    print(E.header())
    for r in rows:
        print(E.row(r))
    refused = [r.split(":", 1)[0] if isinstance(r, str) else r.chapter for r in rows
               if isinstance(r, str) or r.refusal]
    if refused:
        print(f"shallowflow: run --all --profile {args.profile} would be refused here: {', '.join(refused)}",
              file=sys.stderr)
        return 2
    return 0


def _run_all(args, progress: bool) -> int:
    from ..site import build

    if not args.no_site:
        build.check_site(args.profile)  # _build linked out of the repository: refused before any kernel
    report, errors = build.run_book(args.profile, args.scheduler, args.workers, progress=progress)
    for r in report["chapters"]:
        print(f"  {r['wall_s']:7.1f} s  {r['chapter']}")
    print(f"executed {len(report['chapters'])} pages ({args.profile}) in {report['wall_s']:.1f} s "
          f"on {report['workers']} worker(s) [{report['cluster']}]")
    if errors:
        for chapter, message in errors.items():
            print(f"shallowflow: {chapter}: {message}", file=sys.stderr)
        return 1
    if args.no_site:
        return 0
    return build.build_site(args.profile)


def _cmd_sweep(args) -> int:
    from . import sweep

    if args.file:
        spec = sweep.load_file(args.file)
        if args.chapter or args.grid:
            raise ChapterError("give either --file or a chapter with --grid, not both")
        spec["fixed"].update(_overrides(args.p))
        if args.profile:
            spec["profile"] = args.profile
    else:
        if not args.chapter or not args.grid:
            raise ChapterError("sweep needs a chapter and at least one --grid NAME \"[v1, v2, ...]\" (or --file)")
        grids = {}
        for name, value in args.grid:
            if name in grids:
                raise ChapterError(f"grid {X._short(name, 40)} given twice")
            grids[name] = parse_value(value)
        spec = dict(chapter=args.chapter, profile=args.profile or "smoke", fixed=_overrides(args.p), grids=grids)
    progress = X.show_progress(False if args.quiet else None)
    check_json_path(args.json)
    kept: dict = {}
    df, errors, (csv, parquet), wall = sweep.run(spec["chapter"], spec["grids"], spec["profile"], spec["fixed"],
                                                  scheduler=args.scheduler, workers=args.workers, out=args.out,
                                                  progress=progress, direct=args.direct, resume=not args.fresh,
                                                  collect=kept)
    from . import terminal

    points = terminal.sweep_points(kept["tasks"], spec["grids"], kept["results"], errors)
    if not args.no_table:
        terminal.show_sweep(points)
    cached = int(df["cached"].sum()) if "cached" in df else 0
    print(f"swept {len(df)} points of {resolve(spec['chapter'])} in {wall:.1f} s ({cached} read back, "
          f"{len(errors)} failed) -> {csv} and {parquet.name}")
    if args.json:
        doc = dict(chapter=resolve(spec["chapter"]), grids=spec["grids"], points=points)
        print(f"verdicts -> {terminal.write_json(args.json, doc)}")
    for i, message in sorted(errors.items()):
        print(f"shallowflow: point {i + 1}: {message}", file=sys.stderr)
    return 1 if errors else 0


# ----------------------------------------------------------------------------------------------
# argument parsing: -p NAME VALUE takes VALUE verbatim, also when it starts with '-'
# ----------------------------------------------------------------------------------------------
_PAIRED = ("-p", "--param", "--grid")


def workers_count(text: str) -> int:
    """--workers: a whole number of worker processes, 1 to executor.MAX_WORKERS."""
    try:
        n = int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to {X.MAX_WORKERS}, got {X._short(text, 40)}")
    if not 1 <= n <= X.MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to {X.MAX_WORKERS}, got {n}")
    return n


def device_name(text: str) -> str:
    """--device: cpu, cuda or cuda:N (whether that device exists is checked where the kernel runs)."""
    t = text.strip()
    if t == "cpu" or t == "cuda" or (t.startswith("cuda:") and t[5:].isdigit() and len(t) <= 12):
        return t
    raise argparse.ArgumentTypeError(f"must be cpu, cuda or cuda:N, got {X._short(text, 40)}")


def _positive(text: str, unit: str, high: float) -> float:
    import math

    try:
        v = float(text.strip())
    except ValueError:
        v = float("nan")
    if not (math.isfinite(v) and 0 < v <= high):
        raise argparse.ArgumentTypeError(f"must be a number of {unit} > 0 and at most {high:.3g}, got "
                                         f"{X._short(text, 40)}")
    return v


MAX_WORK_BUDGET = 1e18  # work units --work-budget accepts: about 30 years of the 2-core machine (a typo's bound)
MAX_MEMORY_GB = 1e6  # GiB --memory-gb accepts (about a PiB)


def work_budget(text: str) -> float:
    """--work-budget: work units a run may need on the machine that runs it (SHALLOWFLOW_WORK_BUDGET)."""
    return _positive(text, "work units", MAX_WORK_BUDGET)


def memory_gb(text: str) -> float:
    """--memory-gb: GiB a run may allocate on the machine that runs it (SHALLOWFLOW_MEMORY_GB)."""
    return _positive(text, "GiB", MAX_MEMORY_GB)


def machine_env(args) -> dict:
    """The environment variables ``--device``, ``--work-budget`` and ``--memory-gb`` set (only those given)."""
    env = {}
    if getattr(args, "device", None):
        env["SHALLOWFLOW_DEVICE"] = args.device
    if getattr(args, "work_budget", None) is not None:
        env["SHALLOWFLOW_WORK_BUDGET"] = repr(args.work_budget)
    if getattr(args, "memory_gb", None) is not None:
        env["SHALLOWFLOW_MEMORY_GB"] = repr(args.memory_gb)
    return env


def scheduler_address(text: str) -> str:
    """--scheduler: a non-empty address (an empty one would silently run here)."""
    try:
        return X.check_scheduler(text)
    except ChapterError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--scheduler ")) from None


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line (argparse prints the whole usage first)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message.splitlines()[0] if message else 'invalid arguments'}\n")


def _protect_values(argv: list[str]) -> list[str]:
    """argparse reads '-1e-3' as an option; a leading space keeps a pair's VALUE a value."""
    out, i = [], 0
    while i < len(argv):
        out.append(argv[i])
        if argv[i] in _PAIRED and i + 2 < len(argv) + 1:
            pair = argv[i + 1:i + 3]
            out += [v if not v.startswith("-") else " " + v for v in pair]
            i += 3
            continue
        i += 1
    return out


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="shallowflow", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="list chapters and their profiles").set_defaults(fn=_cmd_list)
    q = sub.add_parser("params", help="a chapter's parameters: default, accepted range, meaning")
    q.add_argument("chapter")
    q.set_defaults(fn=_cmd_params)
    r = sub.add_parser("run", help="execute a chapter (or --all: the book) with a profile and/or single values")
    r.add_argument("chapter", nargs="?")
    r.add_argument("--all", action="store_true", help="every chapter, then the scorecard, then the site")
    r.add_argument("--profile", default="book", choices=PROFILES)
    r.add_argument("-p", "--param", dest="p", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"))
    r.add_argument("--out", type=Path, default=None, help="folder for the executed notebook (a run)")
    r.add_argument("--scheduler", default=None, type=scheduler_address, help="address of a running Dask scheduler (DASK_SCHEDULER_ADDRESS)")
    r.add_argument("--workers", type=workers_count, default=None, help="local worker processes (default: one per core)")
    r.add_argument("--no-site", action="store_true", help="with --all: execute only, do not build the site")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.add_argument("--json", type=Path, default=None, metavar="PATH",
                   help="write the check table (id, measured, values, criterion, verdict, cause, why, runs) as JSON")
    r.add_argument("--no-table", action="store_true", help="do not print the check table")
    r.add_argument("--estimate", action="store_true",
                   help="validate and print what the run would cost (work, memory, time, where); start no kernel")
    r.add_argument("--device", type=device_name, default=None, metavar="DEVICE",
                   help="cpu, cuda or cuda:N: the device of the chapter's kernel, here or on the scheduler's worker "
                        "(SHALLOWFLOW_DEVICE; chapters that place their tensors on the CPU ignore it)")
    r.add_argument("--work-budget", type=work_budget, default=None, metavar="UNITS",
                   help="work units a run may need on the machine that runs it (SHALLOWFLOW_WORK_BUDGET; default "
                        "3e14, about a day of the 2-core machine); for a GPU or a large node")
    r.add_argument("--memory-gb", type=memory_gb, default=None, metavar="GIB",
                   help="GiB a run may allocate on the machine that runs it (SHALLOWFLOW_MEMORY_GB; default half "
                        "this machine's memory)")
    r.set_defaults(fn=_cmd_run)
    s = sub.add_parser("sweep", help="run a chapter over the product of parameter grids; one table")
    s.add_argument("chapter", nargs="?")
    s.add_argument("--grid", nargs=2, action="append", default=[], metavar=("NAME", "VALUES"))
    s.add_argument("-p", "--param", dest="p", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"))
    s.add_argument("--file", type=Path, default=None, help="a YAML sweep file (chapter, profile, fixed, grid)")
    s.add_argument("--profile", default=None, choices=PROFILES, help="values every point starts from (smoke)")
    s.add_argument("--scheduler", default=None, type=scheduler_address, help="address of a running Dask scheduler (DASK_SCHEDULER_ADDRESS)")
    s.add_argument("--workers", type=workers_count, default=None, help="local worker processes (default: one per core)")
    s.add_argument("--out", type=Path, default=None, help="table path without suffix (.csv and .parquet)")
    s.add_argument("--direct", action="store_true", help="execute the cells in the worker, without a kernel")
    s.add_argument("--fresh", action="store_true", help="recompute finished points instead of reading them back")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.add_argument("--json", type=Path, default=None, metavar="PATH", help="write every point's check table as JSON")
    s.add_argument("--no-table", action="store_true", help="do not print the points' check tables")
    s.set_defaults(fn=_cmd_sweep)
    return p


def _is_config_error(e: BaseException) -> bool:
    """A bad SHALLOWFLOW_* variable (shallowflow.engine.environ.ConfigError, re-exported by config): one line."""
    return type(e).__name__ == "ConfigError" and type(e).__module__ == "shallowflow.engine.environ"


def _sigterm(signum, frame):
    raise Interrupted("SIGTERM")


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(_protect_values(list(sys.argv[1:] if argv is None else argv)))
    previous = signal.signal(signal.SIGTERM, _sigterm) if argv is None else None
    try:
        return args.fn(args)
    except ChapterError as e:
        print(f"shallowflow: {e}", file=sys.stderr)
        return 2
    except X.OutputError as e:  # a symlink out of the repository, a read-only folder, a full disk
        print(f"shallowflow: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # any other file the command could not write or read: one line, not a traceback
        from ..outputs import describe

        print(f"shallowflow: {describe(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        import logging

        # the interrupted notebook client leaves a cell-execution task whose DeadKernelError (the kernel is killed
        # on the way out) asyncio would log as "Task exception was never retrieved" when it is collected at exit:
        # the line below is the whole report
        logging.getLogger("asyncio").setLevel(logging.CRITICAL)
        name = "SIGTERM" if isinstance(e, Interrupted) else "SIGINT"
        print(f"shallowflow: interrupted by {name}; nothing was written, the previous notebook and claim "
              f"records are untouched", file=sys.stderr)
        return 143 if name == "SIGTERM" else 130
    except Exception as e:
        if not _is_config_error(e):
            raise
        print(f"shallowflow: {e}", file=sys.stderr)
        return 2
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
