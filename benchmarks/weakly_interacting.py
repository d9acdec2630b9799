"""Which engine is fastest for source 001's high-dimensional runs (not a test: nothing fails on a slow machine).

    python benchmarks/weakly_interacting.py          # about a minute on a 2-core CPU

Times one GD step (per run) of App-B problems through every engine that can run them:

- the library's fused C kernel (``train.gradient_descent(engine="kernel")``) on 1 and 2 OpenMP threads;
- the library's torch engine (``engine="torch"``, batched matmuls through BLAS) on 1 and 2 threads;
- the exact Gram-space reduction (``reductions.gram_gd``), O(n^2 p) per step whatever d;
- the exact canonical-basis reduction (``reductions.orthogonal_gd``), O(n p) per step, for orthogonal data.

Every rate is the best of three repetitions of a short run (the machine may be shared); the loss after the
run is printed so that the engines can be seen to compute the same thing.
"""
from __future__ import annotations

import time

import torch

from shallowflow.engine import data, init, train
from shallowflow.experiments.weakly_interacting import reductions as RD
from shallowflow.experiments.weakly_interacting import theory as T


def best(fn, reps=3):
    out, t = None, float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        t = min(t, time.perf_counter() - t0)
    return t, out


def dense(n, d, p, R, steps, engine, threads):
    Xs, ys = zip(*[data.weakly_interacting_draw(n, d, s) for s in range(R)])
    X, y = torch.stack(Xs), torch.stack(ys)
    P0 = init.asymmetric(list(range(R)), p, d, device="cpu")
    torch.set_num_threads(threads)
    try:
        t, tr = best(lambda: train.gradient_descent(P0, (X, y), RD.NET, steps=steps, lr=p * 1.0, engine=engine))
    finally:
        torch.set_num_threads(1)
    return t / (steps * R), float(tr.loss[0, -1])


def gram(n, d, p, R, steps):
    Xs, ys = zip(*[data.weakly_interacting_draw(n, d, s) for s in range(R)])
    X, y = torch.stack(Xs), torch.stack(ys)
    P0 = init.asymmetric(list(range(R)), p, d, device="cpu")
    G = X @ X.transpose(1, 2)
    t, run = best(lambda: RD.gram_gd(G, y, P0.a, P0.W @ X.transpose(1, 2), (P0.W ** 2).sum(-1), 1.0, steps, stop_rel=0.0))
    return t / (steps * R), float(run.loss[0, -1])


def orthogonal(n, p, R, steps):
    X, y = data.weakly_interacting_draw(n, n, 0, orthogonal=True)
    s = X[torch.arange(n), torch.arange(n)]
    a, Wn, off = RD.orthogonal_init(list(range(R)), p, n, n)
    t, run = best(lambda: RD.orthogonal_gd(a, Wn * s, off, y, s, 1.0, steps))
    t_d, L_d = dense(n, n, p, R, steps, "torch", 1) if n <= 1000 else (float("nan"), float("nan"))
    return t / (steps * R), float(run.loss[0, -1]), t_d


def main():
    rows = []
    for (n, d, R, steps) in [(1700, 100, 4, 30), (300, 30, 4, 100)]:
        p = T.width_rule(n) if d == 100 else 30
        for eng in ("kernel", "torch"):
            for th in (1, 2):
                us, L = dense(n, d, p, R, steps, eng, th)
                rows.append((f"n={n}, d={d}, p={p}", f"{eng}, {th} thread(s)", us * 1e3, L))
        us, L = gram(n, d, p, R, max(5, steps // 5))
        rows.append((f"n={n}, d={d}, p={p}", "Gram space", us * 1e3, float("nan")))
    n = 1000
    us, L, ud = orthogonal(n, T.width_rule(n), 4, 30)
    rows.append((f"n=d={n} orthogonal, p={T.width_rule(n)}", "canonical-basis reduction", us * 1e3, L))
    rows.append((f"n=d={n} orthogonal, p={T.width_rule(n)}", "torch dense, 1 thread", ud * 1e3, float("nan")))
    print("| problem | engine | ms per run-step | loss after the run |")
    print("|---|---|---|---|")
    for prob, eng, ms, L in rows:
        print(f"| {prob} | {eng} | {ms:.3f} | {L:.6g} |")


if __name__ == "__main__":
    main()
