"""Synthesis, implicit bias: which point does gradient descent from a small initialisation reach, on every
source's data, and when is it not the minimum-norm interpolator?

The sources' statements: 003, Theorem 1 (orthogonal inputs): as lambda -> 0 the flow reaches zero loss and a
minimum-l2-norm interpolator; 002, Theorem 2 and Figure 2: on its three points early alignment sends every neuron
to one extremal vector and the network ends at the spurious stationary point of the ordinary least-squares
(affine) fit, not at an interpolator; 001, Theorem 1: on weakly interacting data gradient flow reaches zero loss
from any scale; 000, Conjectures 1-2: the limit is a minimum-norm interpolator (sigmoid, tanh; orthogonal data);
004: no statement.

One experiment: for each source's dataset, a ReLU network (no output factor, the 1/(2n) loss) from a balanced
initialisation of scale ``init_scale``, seeds as one gradient-descent ensemble, trained for flow time ``time`` (a
run that reaches L < 1e-12 stops there).  Measured: the final loss, ||theta||^2 and, for univariate data with a
bias, the minimum ||theta||^2 over interpolators (closed form for orthogonal inputs,
:func:`shallowflow.engine.theory.min_norm_interpolator`; else :func:`shallowflow.engine.theory.min_squared_norm_1d`, a linear program)
and the loss of the affine least-squares fit (:func:`ols_loss`).
"""
from __future__ import annotations

import math
import time as _time
from dataclasses import dataclass, field

import torch

from ...engine import init, metrics, theory
from ... import verdicts as C
from ...engine.models import Network
from ...params import PROFILE, STEP_BUDGET, Float, Int, Ints, Rule, gd_bytes, gd_work
from ...engine.train import gradient_descent
from .sources import KEYS, chosen

MAX_DIM, MAX_N = 100, 10  # the largest input dimension and number of points among the sources' datasets
STOP = 1e-12  # a run stops once its loss is below this
# the chapter's criteria (the negative controls of tests/test_controls_synthesis.py use them too)
MIN_NORM = C.close_to(1.0, rtol=1e-3)  # ||theta||^2 over the minimum over interpolators
AT_OLS = C.close_to(1.0, rtol=1e-6)  # final loss over the affine least-squares fit's loss
ZERO_LOSS = C.below(1e-10)  # the final loss of a run that converged
INTERPOLABLE = C.below(1e-9)  # relative least-squares residual of the neurons' outputs: 0 to float64 rounding

SCHEMA = {
    "profile": PROFILE,
    "sources": Ints("which sources' data (0..4 for 000..004)", low=0, high=len(KEYS) - 1, max_len=len(KEYS)),
    "width": Int("number of hidden neurons m", low=1, high=10_000),
    "init_scale": Float("initial scale lambda: w_j = lambda g_j, a_j = s_j ||w_j||", low=0, low_open=True, high=10),
    "seeds": Ints("one run per seed", low=0, high=2 ** 63 - 1, max_len=1000),
    "lr": Float("gradient-descent step size (flow time per iteration)", low=0, low_open=True, high=0.5),
    "time": Float("flow time allowed", low=0, low_open=True, high=1e6),
}


def memory_estimate(P) -> float:
    """Bytes of one ensemble with its loss recorded every 10 iterations."""
    return gd_bytes(len(P.seeds), P.width, MAX_N, MAX_DIM, P.time / P.lr, record_every=10)


def work_estimate(P) -> float:
    """Work units of every source's ensemble, each costed as the largest dataset."""
    return len(set(P.sources)) * gd_work(len(P.seeds), P.width, MAX_N, MAX_DIM, P.time / P.lr)


RULES = (
    Rule.budget(("time", "lr"), lambda P: P.time / P.lr, STEP_BUDGET, "iterations"),
    Rule.memory(("width", "seeds", "time", "lr"), memory_estimate, what="one ensemble and its loss history"),
    Rule.work(("sources", "width", "seeds", "time", "lr"), work_estimate, what="every source's ensemble"),
)


def ols_loss(data) -> float:
    """min over affine (linear in the bias-augmented inputs) functions of 1/(2n) sum_k (f(x_k) - y_k)^2."""
    X, y = data.X.to("cpu", torch.float64), data.y.to("cpu", torch.float64)
    coef = torch.linalg.lstsq(X, y[:, None]).solution[:, 0]
    return float(((X @ coef - y) ** 2).mean() / 2)


@dataclass
class BiasResult:
    key: str
    loss: torch.Tensor  # (R,) final loss
    norm2: torch.Tensor  # (R,) final ||theta||^2
    valid: torch.Tensor  # (R,) finite runs
    min_norm2: float  # minimum ||theta||^2 over interpolators (NaN where not computed, inf where none exists)
    residual: float  # relative least-squares residual of the linear program's neurons (NaN where not computed)
    ols: float  # loss of the affine least-squares fit
    zero: float  # loss of the zero network
    stopped: torch.Tensor  # (R,) iteration where the run stopped


@dataclass
class BiasRun:
    results: dict = field(default_factory=dict)
    sources: list = field(default_factory=list)
    seconds: float = 0.0


def run_implicit_bias(P) -> BiasRun:
    """Every source's data: one ReLU GD ensemble (seeds), its end point, the minimum-norm and OLS references."""
    t0 = _time.perf_counter()
    out = BiasRun(sources=[s.key for s in chosen(P.sources)])
    steps = int(math.ceil(P.time / P.lr))
    for src in chosen(P.sources):
        data = src.dataset()
        p0 = init.balanced(list(P.seeds), P.width, data.d, P.init_scale, device="cpu")
        tr = gradient_descent(p0, data, Network("relu"), steps=steps, lr=P.lr, stop_below=STOP, on_nonfinite="stop",
                              record_every=10)
        net = Network("relu")
        univariate = data.bias and data.d == 2
        if theory.orthogonality_defect(data) < 1e-12:  # orthogonal inputs: the closed form (003, Prop. 1)
            mn = theory.min_norm_interpolator(data).squared_norm
        else:
            mn = theory.min_squared_norm_1d(data.X.cpu(), data.y.cpu()) if univariate else math.nan
        res = theory.interpolation_residual_1d(data.X.cpu(), data.y.cpu()) if univariate else math.nan
        out.results[src.key] = BiasResult(src.key, net.loss(tr.final, data.X, data.y), metrics.squared_norm(tr.final),
                                          metrics.finite_runs(tr.loss, tr.final), mn, res, ols_loss(data),
                                          float((data.y ** 2).mean() / 2), tr.stopped_at)
    out.seconds = _time.perf_counter() - t0
    return out


def table(run: BiasRun) -> list[dict]:
    """One row per source's data: the end point of GD (medians over seeds) against the references."""
    rows = []
    for key, r in run.results.items():
        rows.append({"source": key, "final loss": float(r.loss.median()), "||theta||^2": float(r.norm2.median()),
                     "min ||theta||^2 over interpolators": r.min_norm2,
                     # a ratio to the minimum-norm interpolator only where the run is an interpolator
                     "||theta||^2 / min (interpolators only)": float(r.norm2.median()) / r.min_norm2
                     if (r.min_norm2 == r.min_norm2 and bool((r.loss < 1e-10).all())) else math.nan,
                     "affine least-squares loss": r.ols, "zero network's loss": r.zero})
    return rows


STATEMENTS = (
    ("003", "Theorem 1", "orthogonal inputs: zero loss, and the minimum-norm interpolator as lambda -> 0",
     "Bias/min-norm-003"),
    ("002", "Theorem 2, Fig. 2", "its three points: GD ends at the spurious OLS point, not at an interpolator",
     "Bias/spurious-002"),
    ("001", "Theorem 1", "weakly interacting data: zero loss from any initialisation scale", "Bias/converges-001"),
    ("000", "Conj. 1-2", "the limit is a minimum-norm interpolator (sigmoid, tanh; orthogonal data); ReLU as 003",
     ""),
    ("004", "(none)", "no statement on the end point of shallow networks", ""),
)


def source_rows(run: BiasRun, verdict) -> list[dict]:
    """'What each source says / what the book measures' (``verdict(check_id)``: the computed verdict or '')."""
    rows = []
    for key, where, statement, check in STATEMENTS:
        r = run.results.get(key)
        if r is None:
            continue
        measured = f"final loss {float(r.loss.median()):.3g}, ||theta||^2 {float(r.norm2.median()):.4g}"
        if r.min_norm2 == r.min_norm2:
            measured += f" (min over interpolators {r.min_norm2:.4g})"
        measured += f"; affine fit's loss {r.ols:.4g}"
        rows.append({"source": key, "where": where, "the source says": statement, "the book measures": measured,
                     "verdict": verdict(check) if check else "(no check: no claim on these data)"})
    return rows
