"""The executor's three measurements (issue 20), in one run on this machine.

    python benchmarks/executor.py                  # all three, smoke scale
    python benchmarks/executor.py --book-profile book   # the book measurement at book scale (long)
    python benchmarks/executor.py --only sweep     # sweep | overhead | book

1. **sweep speed-up**: an 8-point sweep of the 003 toy (seeds 0..7, no animation) on a LocalCluster of
   1 worker process and of 2; ratio of wall times.  The two tables must be equal (timing aside).
2. **per-point overhead**: the same 8 points through the notebook path (papermill, one kernel per
   point) and the direct path (the chapter's cells executed in the worker, no kernel), on 1 worker;
   the per-point difference is the notebook path's overhead.  The direct table must hold the same
   measured values and verdicts.
3. **the book**: the 12 chapters of 003 and 002, executed one after another in this process
   (``execute_task``, as ``shallowflow run`` does) and through the executor on a LocalCluster with one
   worker per core (``build.run_book``); ratio of wall times.

Every run recomputes (fresh task directories under a temporary root).  Prints a Markdown table and
the load average before and after: on a shared machine the numbers are contended.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from shallowflow.site import build
from shallowflow import executor as X
from shallowflow.run import sweep as S

CHAPTER = "orthogonal-inputs/toy"
FIXED = {"animation_frames": 0}
GRID = {"seeds": [[s] for s in range(8)]}
BOOK = [c for c in X.chapters() if c.split("/")[0] in ("orthogonal-inputs", "early-alignment")]


def _sweep(workers: int, direct: bool, root: Path):
    t0 = time.perf_counter()
    with X.cluster(workers=workers) as client:
        t1 = time.perf_counter()
        df, errors, _, _ = S.run(CHAPTER, GRID, "smoke", FIXED, client=client, root=root, direct=direct,
                                 out=root / "table", resume=False)
    assert not errors, errors
    return df, time.perf_counter() - t1, t1 - t0


def measure_sweep(tmp: Path) -> list[str]:
    df1, w1, s1 = _sweep(1, False, tmp / "w1")
    df2, w2, s2 = _sweep(2, False, tmp / "w2")
    drop = ["notebook"]
    assert S.comparable(df1).drop(columns=drop).equals(S.comparable(df2).drop(columns=drop)), "tables differ"
    return [f"| 8-point sweep, 1 worker | {w1:.1f} s (cluster start {s1:.1f} s) | |",
            f"| 8-point sweep, 2 workers | {w2:.1f} s (cluster start {s2:.1f} s) | **speed-up {w1 / w2:.2f}x**; "
            f"tables identical (timing aside) |"], (df1, w1)


def measure_overhead(tmp: Path, notebook=None) -> list[str]:
    df_nb, w_nb = notebook if notebook else _sweep(1, False, tmp / "nb")[:2]
    df_d, w_d, _ = _sweep(1, True, tmp / "direct")
    cols = [c for c in df_nb.columns if c.endswith((" measured", " verdict"))]
    same = df_nb[cols].equals(df_d[cols])
    n = len(df_nb)
    return [f"| per point, notebook path (1 worker) | {w_nb / n:.2f} s | |",
            f"| per point, direct path (1 worker) | {w_d / n:.2f} s | overhead of the notebook path "
            f"{(w_nb - w_d) / n:.2f} s per point ({w_nb / w_d:.2f}x); values and verdicts "
            f"{'identical' if same else 'DIFFER'} |"]


def measure_book(tmp: Path, profile: str) -> list[str]:
    os.environ["SHALLOWFLOW_TASKS_DIR"] = str(tmp / "serial")
    os.environ["SHALLOWFLOW_CLAIMS_DIR"] = str(tmp / "claims-serial")
    t0 = time.perf_counter()
    for c in BOOK:
        X.execute_task(X.prepare(c, profile), force=True)
    serial = time.perf_counter() - t0
    os.environ["SHALLOWFLOW_TASKS_DIR"] = str(tmp / "executor")
    os.environ["SHALLOWFLOW_CLAIMS_DIR"] = str(tmp / "claims-executor")
    t0 = time.perf_counter()
    report, errors = build.run_book(profile, only=BOOK)
    parallel = time.perf_counter() - t0
    assert not errors, errors
    return [f"| {len(BOOK)} chapters of 003 + 002 ({profile}), one after another | {serial:.1f} s | |",
            f"| the same through the executor ({report['workers']} workers) | {parallel:.1f} s (cluster start "
            f"included) | **{serial / parallel:.2f}x** |"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=("sweep", "overhead", "book"), action="append")
    ap.add_argument("--book-profile", default="smoke", choices=("smoke", "book"))
    args = ap.parse_args()
    only = set(args.only or ("sweep", "overhead", "book"))
    os.environ.setdefault("CI", "true")  # no progress bars in the output
    load0 = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores; load average before {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    print("| measurement | wall time | ratio |\n|---|---:|---|", flush=True)
    nb = None
    with tempfile.TemporaryDirectory(prefix="sf-bench-") as tmp:
        tmp = Path(tmp)
        if "sweep" in only:
            rows, nb = measure_sweep(tmp)
            print("\n".join(rows), flush=True)
        if "overhead" in only:
            print("\n".join(measure_overhead(tmp, nb)), flush=True)
        if "book" in only:
            print("\n".join(measure_book(tmp, args.book_profile)), flush=True)
    load1 = os.getloadavg()
    print(f"load average after {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
