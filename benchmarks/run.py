"""Benchmarks of the shallowflow engine (not tests: nothing here fails on a slow machine).

    python benchmarks/run.py            # about 2 minutes on a 2-core CPU
    python benchmarks/run.py --quick    # about 20 s, smaller step counts (same code paths)
    python benchmarks/run.py --compile  # also measure torch.compile (adds ~1 min of compilation)

Prints, from one run on one machine, the ratios of the performance brief:

1. network-steps per second of a batched ensemble of R = 256 runs of the 003 toy against a loop
   over the same runs one at a time through the same library (goal >= 50x), with the largest
   difference between the two results (goal <= 1e-12);
2. one run of the 003 toy against a plain NumPy loop written below (goal >= 1.0x);
3. the library's step against a naive autograd + torch.optim.SGD loop, the way the sources' code
   trains (mean MSE, loss.backward(), optimizer.step(), loss.item() every iteration);
4. gradient flow at lambda = 1e-100 on the 003 toy: wall time until L < 1e-20.

and the measurements behind the engine's choices (threads, torch.compile).  Every rate is the
best of a few repetitions (the machine may be shared); a "network-step" is one GD iteration of
one run.  The 003 toy: x = (-0.5, 1), y = -1 and x = (2, 1), y = 1; m = 60; balanced
initialisation with lambda = 1e-6 / sqrt(60); step 1e-3 on the mean MSE = 2e-3 on the 1/(2n) loss.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time

import numpy as np
import torch

import shallowflow  # noqa: F401  (sets the thread count)
from shallowflow.engine import config, init, kernel
from shallowflow.engine import data as datasets
from shallowflow.engine.flow import gradient_flow
from shallowflow.engine.models import Network
from shallowflow.engine.train import geometric_schedule, gradient_descent

M, LAM, ETA = 60, 1e-6 / math.sqrt(60), 2e-3  # ETA on the paper's 1/(2n) loss


def best(f, repeats=3):
    """(best wall time, last result) of `repeats` calls."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return min(times), out


def toy_params(R, seed0=0):
    return init.balanced(list(range(seed0, seed0 + R)), M, 2, LAM, device="cpu")


# ---------------------------------------------------------------------------------------------
# baselines written here, independent of the library
def numpy_loop(a, W, X, y, lr, steps):
    """A plain NumPy loop for one run: full-batch GD on L = 1/(2n) sum (h - y)^2, loss every step."""
    a, W = a.copy(), W.copy()
    n = X.shape[0]
    losses = np.empty(steps + 1)
    for k in range(steps + 1):
        Z = W @ X.T  # (m, n)
        act = Z > 0
        S = Z * act
        r = a @ S - y
        losses[k] = 0.5 * np.mean(r * r)
        if k == steps:
            break
        g = r / n
        ga = S @ g
        gW = a[:, None] * ((act * g) @ X)
        a -= lr * ga
        W -= lr * gW
    return a, W, losses


def autograd_sgd_loop(a, W, X, y, lr_mean, steps):
    """The sources' way: autograd, torch.optim.SGD, MSELoss(mean), loss.item() every iteration."""
    a = a.clone().requires_grad_(True)
    W = W.clone().requires_grad_(True)
    opt = torch.optim.SGD([a, W], lr=lr_mean)
    mse = torch.nn.MSELoss()
    losses = []
    for _ in range(steps + 1):
        out = torch.relu(X @ W.T) @ a
        loss = mse(out, y)
        losses.append(loss.item())
        if len(losses) > steps:
            break
        opt.zero_grad()
        loss.backward()
        opt.step()
    return a.detach(), W.detach(), losses


# ---------------------------------------------------------------------------------------------
def bench_ensemble(steps, R, results, quick):
    d = datasets.get("orthogonal-toy", device="cpu")
    p = toy_params(R)
    snaps = geometric_schedule(steps)
    out = {}
    for engine in ("kernel", "torch"):
        if engine == "kernel" and not kernel.available():
            continue
        st = steps if engine == "kernel" else max(200, steps // 10)
        sn = geometric_schedule(st)
        t_batch, batch = best(lambda: gradient_descent(p, d, steps=st, lr=ETA, snapshots=sn, engine=engine),
                              2 if engine == "kernel" else 1)
        # the per-run loop over the same runs: all of them for the kernel, a sample for torch
        loop_runs = R if engine == "kernel" else (8 if quick else 16)
        t0 = time.perf_counter()
        diff = 0.0
        for r in range(loop_runs):
            solo = gradient_descent(p.select(r), d, steps=st, lr=ETA, snapshots=sn, engine=engine)
            diff = max(diff, float((solo.final.W[0] - batch.final.W[r]).abs().max()),
                       float((solo.loss[0] - batch.loss[r]).abs().max()),
                       float((solo.snap_W[:, 0] - batch.snap_W[:, r]).abs().max()))
        t_loop = time.perf_counter() - t0
        rate_b = R * st / t_batch
        rate_l = loop_runs * st / t_loop
        out[engine] = dict(steps=st, batch_s=t_batch, loop_s=t_loop, loop_runs=loop_runs, rate_batch=rate_b,
                           rate_loop=rate_l, ratio=rate_b / rate_l, max_diff=diff)
    results["ensemble"] = out
    return out


def bench_single(steps, results):
    d = datasets.get("orthogonal-toy", device="cpu")
    p = toy_params(1)
    X, y = d.X.numpy(), d.y.numpy()
    a0, W0 = p.a[0].numpy(), p.W[0].numpy()
    t_np, (a_np, W_np, L_np) = best(lambda: numpy_loop(a0, W0, X, y, ETA, steps))
    snaps = geometric_schedule(steps)
    out = {"numpy_s": t_np, "steps": steps}
    for engine in ("kernel", "torch"):
        if engine == "kernel" and not kernel.available():
            continue
        st = steps if engine == "kernel" else max(500, steps // 10)
        t, tr = best(lambda: gradient_descent(p, d, steps=st, lr=ETA, snapshots=snaps if st == steps else
                                              geometric_schedule(st), engine=engine))
        scale = steps / st
        diff = float(np.abs(tr.final.W[0].numpy() - W_np).max()) if st == steps else float(
            np.abs(tr.loss[0].numpy() - L_np[: st + 1]).max())
        out[engine] = dict(seconds=t * scale, us_per_step=t / st * 1e6, ratio=t_np / (t * scale), max_diff=diff)
    # naive autograd + SGD (lr 1e-3 on the mean MSE is the same trajectory as 2e-3 on the 1/(2n) loss)
    st = max(500, steps // 10)
    t_ag, (a_ag, W_ag, L_ag) = best(lambda: autograd_sgd_loop(p.a[0], p.W[0], d.X, d.y, ETA / 2, st))
    out["autograd_sgd"] = dict(us_per_step=t_ag / st * 1e6,
                               max_diff_loss=float(np.abs(2 * L_np[: st + 1] - np.array(L_ag)).max() / 2))
    out["numpy_us_per_step"] = t_np / steps * 1e6
    results["single"] = out
    return out


def bench_flow(results):
    d = datasets.get("orthogonal-toy", device="cpu")
    p = init.balanced([0], M, 2, 1e-100, device="cpu")
    out = {}
    engines = (["kernel"] if kernel.available() else []) + ["torch"]
    for engine in engines:
        t, fl = best(lambda: gradient_flow(p, d, t_end=1e4, stop_below=1e-20, engine=engine),
                     3 if engine == "kernel" else 1)
        out[engine] = dict(seconds=t, t_stop=float(fl.stopped_at[0]), steps=int(fl.steps[0]),
                           rejected=int(fl.rejected[0]), final_loss=float(fl.losses(0)[-1]))
    # the same with GD (step 2e-3 on the 1/(2n) loss) for comparison
    k = out[engines[0]]["t_stop"] / ETA
    steps = int(1.05 * k)
    if kernel.available():
        t, tr = best(lambda: gradient_descent(p, d, steps=steps, lr=ETA, stop_below=1e-20, record_every=100), 1)
        out["gd_kernel"] = dict(seconds=t, steps=steps, stopped_at=int(tr.stopped_at[0]))
    results["flow"] = out
    return out


def bench_threads(results, steps):
    """The kernel's OpenMP split over runs and torch's intra-op threads, 1 against 2."""
    d = datasets.get("orthogonal-toy", device="cpu")
    p = toy_params(256)
    out = {}
    old = torch.get_num_threads()
    for th in (1, 2):
        torch.set_num_threads(th)
        if kernel.available():
            t, _ = best(lambda: gradient_descent(p, d, steps=steps, lr=ETA, engine="kernel"), 2)
            out[f"kernel_{th}"] = 256 * steps / t
        t, _ = best(lambda: gradient_descent(p, d, steps=200, lr=ETA, engine="torch"), 2)
        out[f"torch_{th}"] = 256 * 200 / t
    torch.set_num_threads(old)
    results["threads"] = out
    return out


def bench_compile(results):
    """torch.compile of the library's torch step (one step, and ten steps unrolled), compile time included."""
    import torch._dynamo  # noqa: F401

    d = datasets.get("orthogonal-toy", device="cpu")
    X, y = d.X, d.y
    out = {}

    def step(a, W, coef):
        Z = W @ X.T
        H = (Z > 0).to(Z.dtype)
        S = Z * H
        r = torch.einsum("rm,rmn->rn", a, S) - y
        ga = torch.einsum("rmn,rn->rm", S, r)
        V = (H * r[:, None, :]) @ X
        return a + coef * ga, W + (coef * a)[:, :, None] * V, (r * r).sum(-1)

    for R in (1, 256):
        for unroll in (1, 10):
            def chunk(a, W, coef, unroll=unroll):
                for _ in range(unroll):
                    a, W, ss = step(a, W, coef)
                return a, W, ss

            torch._dynamo.reset()
            f = torch.compile(chunk, dynamic=False, fullgraph=True)
            p = toy_params(R)
            a, W = p.a.clone(), p.W.clone()
            coef = torch.full((R, 1), -ETA / 2, dtype=torch.float64)
            t0 = time.perf_counter()
            f(a, W, coef)
            t_compile = time.perf_counter() - t0
            calls = max(1, 4000 // unroll)
            t0 = time.perf_counter()
            for _ in range(calls):
                a, W, _ = f(a, W, coef)
            t_run = time.perf_counter() - t0
            out[f"R{R}_unroll{unroll}"] = dict(compile_s=t_compile, us_per_step=t_run / (calls * unroll) * 1e6)
    results["compile"] = out
    return out


def kernel_compile_seconds():
    import tempfile
    from pathlib import Path

    if not kernel.available():
        return float("nan")
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        kernel._compile(kernel.SOURCE, Path(tmp) / "k.so", ["-march=native", "-fopenmp"])
        return time.perf_counter() - t0


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            names = [l.split(":", 1)[1].strip() for l in f if l.startswith("model name")]
        cpu = f"{names[0]} x {len(names)}" if names else cpu
    except OSError:
        pass
    try:
        load = "load average %.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        load = "load unknown"
    return (f"{cpu}; Python {platform.python_version()}, {config.describe()}, NumPy {np.__version__}; "
            f"kernel: {'yes' if kernel.available() else 'no (' + kernel.reason() + ')'}; {load} at start")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller step counts (~20 s)")
    ap.add_argument("--compile", action="store_true", help="also measure torch.compile")
    ap.add_argument("--json", help="write the raw numbers to this file")
    args = ap.parse_args(argv)
    steps = 2000 if args.quick else 20000
    results = {"machine": machine(), "quick": args.quick}
    print(f"# shallowflow benchmarks ({'quick' if args.quick else 'full'})\n\nMachine: {results['machine']}\n")
    if not torch.cuda.is_available():
        print("No CUDA device: GPU paths (CUDA graphs) not measured.\n")
    results["kernel_compile_s"] = kernel_compile_seconds()

    ens = bench_ensemble(steps, 256, results, args.quick)
    single = bench_single(steps, results)
    flow = bench_flow(results)
    threads = bench_threads(results, steps // 4)
    comp = bench_compile(results) if args.compile else None

    rows = []
    if "kernel" in ens:
        e = ens["kernel"]
        rows.append(("1. R=256 batched vs per-run loop, kernel engine (default on CPU)",
                     f"{e['ratio']:.2f}x", ">= 50x",
                     f"{e['rate_batch']:.3g} vs {e['rate_loop']:.3g} net-steps/s; {e['steps']} steps; "
                     f"max diff {e['max_diff']:.1e}"))
    e = ens["torch"]
    rows.append(("1b. R=256 batched vs per-run loop, torch engine (GPU path)", f"{e['ratio']:.1f}x", ">= 50x",
                 f"{e['rate_batch']:.3g} vs {e['rate_loop']:.3g} net-steps/s; {e['steps']} steps, loop over "
                 f"{e['loop_runs']} runs; max diff {e['max_diff']:.1e}"))
    if "kernel" in ens:
        rows.append(("1c. R=256 batched kernel vs per-run loop of the torch engine",
                     f"{ens['kernel']['rate_batch'] / e['rate_loop']:.0f}x", "",
                     "what batching alone bought before the kernel"))
    for engine in ("kernel", "torch"):
        if engine in single:
            s = single[engine]
            rows.append((f"2. one toy run ({steps} steps) vs plain NumPy loop, {engine} engine",
                         f"{s['ratio']:.2f}x", ">= 1.0x",
                         f"{s['us_per_step']:.2f} vs {single['numpy_us_per_step']:.1f} us/step; "
                         f"max diff {s['max_diff']:.1e}"))
    for engine in ("kernel", "torch"):
        if engine in single:
            rows.append((f"3. library step ({engine}) vs autograd + torch.optim.SGD",
                         f"{single['autograd_sgd']['us_per_step'] / single[engine]['us_per_step']:.1f}x", "",
                         f"{single[engine]['us_per_step']:.2f} vs {single['autograd_sgd']['us_per_step']:.1f} "
                         f"us/step; loss diff {single['autograd_sgd']['max_diff_loss']:.1e}"))
    for engine in ("kernel", "torch"):
        if engine in flow:
            f = flow[engine]
            rows.append((f"4. gradient flow, lambda = 1e-100, to L < 1e-20 ({engine})", f"{f['seconds']:.3f} s",
                         "seconds", f"t = {f['t_stop']:.2f}; {f['steps']} steps + {f['rejected']} rejected"))
    if "gd_kernel" in flow:
        g = flow["gd_kernel"]
        rows.append(("4b. the same with GD, step 2e-3 (kernel)", f"{g['seconds']:.3f} s", "",
                     f"{g['stopped_at']} iterations"))
    print("| measurement | result | goal | details |\n|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print("\nEngine choices:\n")
    print(f"- C kernel compile time (once per machine, cached): {results['kernel_compile_s']:.2f} s")
    th = threads
    if "kernel_1" in th:
        print(f"- kernel, R=256: 1 thread {th['kernel_1']:.3g}, 2 threads {th['kernel_2']:.3g} net-steps/s "
              f"({th['kernel_2'] / th['kernel_1']:.2f}x)")
    print(f"- torch engine, R=256: 1 thread {th['torch_1']:.3g}, 2 threads {th['torch_2']:.3g} net-steps/s "
          f"({th['torch_2'] / th['torch_1']:.2f}x)")
    if comp:
        for k, v in comp.items():
            print(f"- torch.compile {k}: compile {v['compile_s']:.1f} s, then {v['us_per_step']:.1f} us/step")
    try:
        print("\nload average at the end: %.2f %.2f %.2f (over 2 on a 2-core machine: the numbers are noisy)"
              % os.getloadavg())
    except OSError:
        pass
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1, default=float)
    return results


if __name__ == "__main__":
    main()
