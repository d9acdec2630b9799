"""Synthesis, local PL and conditioning on one scale: the PL ratio mu_t = ||grad L||^2 / (2 L) and the
conditioning bound kappa_t = lambda_min(J J^T) / n along gradient descent, on every source's data.

On one scale: for the papers' loss L = 1/(2n) sum_k (h(x_k) - y_k)^2 without output factor, the loss decays along
the flow at the rate -d ln L / dt = ||grad L||^2 / L = 2 mu_t, and ||grad L||^2 = r^T J J^T r / n^2 >= 2 kappa_t L
(000 spec on the thesis' Theorem 7, with the 1/n factors the thesis drops): mu_t >= kappa_t always.  The sources
measure pieces of this: 000 (Chapter 4) shows the loss is not PL on the whole space (theta = 0 is a non-optimal
stationary point); 004 bounds the PL constant by the conditioning of the tangent kernel; 001 follows the
"local-PL curvature" -(dL/dt) / L along the trajectory; near the balanced interpolator of orthogonal data the
local PL constant is (2/n) min_k abs(y_k) ||x_k|| (000 spec, T2 [derived] from 003's final phase).

One experiment: for each source's dataset, a ReLU network from a balanced initialisation whose neurons have norm
about ``scales`` (lambda = scale / sqrt(d)), scales x seeds as one gradient-descent ensemble, with the state kept
on a geometric schedule; mu_t and kappa_t at every kept state.
"""
from __future__ import annotations

import math
import time as _time
from dataclasses import dataclass, field

import torch

from ...engine import init
from ... import verdicts as C
from ...engine.models import Network, Params
from ...params import PROFILE, STEP_BUDGET, Float, Floats, Int, Ints, Rule, gd_bytes, gd_work
from ...engine.train import geometric_schedule, gradient_descent
from .sources import KEYS, chosen

MAX_DIM, MAX_N = 100, 10  # the largest input dimension and number of points among the sources' datasets
STOP = 1e-24  # a run stops once its loss is below this (the PL ratio is read above rounding)

SCHEMA = {
    "profile": PROFILE,
    "sources": Ints("which sources' data (0..4 for 000..004)", low=0, high=len(KEYS) - 1, max_len=len(KEYS)),
    "width": Int("number of hidden neurons m", low=1, high=10_000),
    "scales": Floats("initial neuron norms (lambda = scale / sqrt(d)); the two smallest test the scaling near 0",
                     low=1e-12, high=10, min_len=2, max_len=20),
    "seeds": Ints("one run per seed and scale", low=0, high=2 ** 63 - 1, max_len=1000),
    "lr": Float("gradient-descent step size (flow time per iteration)", low=0, low_open=True, high=0.5),
    "time": Float("flow time of the runs", low=0, low_open=True, high=1e5),
}


def memory_estimate(P) -> float:
    """Bytes of one ensemble with its loss at every iteration and its kept states."""
    runs = len(P.seeds) * len(P.scales)
    return gd_bytes(runs, P.width, MAX_N, MAX_DIM, P.time / P.lr, snapshots=len(geometric_schedule(int(P.time / P.lr))))


def work_estimate(P) -> float:
    """Work units of every source's ensemble, each costed as the largest dataset."""
    return len(set(P.sources)) * gd_work(len(P.seeds) * len(P.scales), P.width, MAX_N, MAX_DIM, P.time / P.lr)


RULES = (
    Rule.budget(("time", "lr"), lambda P: P.time / P.lr, STEP_BUDGET, "iterations"),
    Rule.memory(("width", "seeds", "scales", "time", "lr"), memory_estimate, what="one ensemble and its states"),
    Rule.work(("sources", "width", "seeds", "scales", "time", "lr"), work_estimate, what="every source's ensemble"),
)


NOT_GLOBAL = C.within(1.9, 2.1)  # PL/not-global: exponent of mu_0 in the scale near theta = 0 (2: 0 is stationary)
BOUND_HOLDS = C.above(-1e-12)  # PL/conditioning-bound: bound_margin, mu_t >= kappa_t to the rounding of an eigenvalue


def pl_quantities(net: Network, p: Params, X: torch.Tensor, y: torch.Tensor) -> dict:
    """Per run: L, ||grad L||^2, mu = ||grad L||^2 / (2L) and kappa = lambda_min(J J^T) / n for the 1/(2n) loss,
    J the Jacobian of the outputs h(x_k) in the parameters: (J J^T)_kl = c^2 sum_j [sigma(z_jk) sigma(z_jl)
    + a_j^2 sigma'(z_jk) sigma'(z_jl) <x_k, x_l>]."""
    L, ga, gW = net.gradients(p, X, y, "half")
    g2 = (ga ** 2).sum(-1) + (gW ** 2).sum((-1, -2))
    Z = net.preactivations(p, X)  # (R, m, n)
    S, D = net.sigma(Z), net.dsigma(Z) * p.a[..., None]
    c = net.scale(p.width)
    K = c * c * (S.transpose(-1, -2) @ S + (D.transpose(-1, -2) @ D) * (X @ X.T))
    ev = torch.linalg.eigvalsh(K) / X.shape[0]
    return dict(loss=L, grad2=g2, mu=g2 / (2 * L), kappa=ev[..., 0], kappa_max=ev[..., -1])


@dataclass
class PLResult:
    key: str
    scales: list
    steps: list  # kept iterations
    mu: torch.Tensor  # (S, R)
    kappa: torch.Tensor  # (S, R)
    kappa_max: torch.Tensor  # (S, R) lambda_max(J J^T) / n, the kernel's scale (rounding of kappa is relative to it)
    loss: torch.Tensor  # (S, R)
    run_scale: torch.Tensor  # (R,) the neuron-norm scale of each run
    valid: torch.Tensor  # (R,)


@dataclass
class PLRun:
    results: dict = field(default_factory=dict)
    sources: list = field(default_factory=list)
    lr: float = 0.0
    seconds: float = 0.0


def run_pl(P) -> PLRun:
    """Every source's data: one ReLU GD ensemble over scales x seeds; mu_t, kappa_t and L_t at the kept states."""
    from ...engine import metrics

    t0 = _time.perf_counter()
    out = PLRun(sources=[s.key for s in chosen(P.sources)], lr=P.lr)
    steps = int(math.ceil(P.time / P.lr))
    keep = geometric_schedule(steps, 1.1)
    net = Network("relu")
    for src in chosen(P.sources):
        data = src.dataset()
        seeds = [s for _ in P.scales for s in P.seeds]
        run_scale = [sc for sc in P.scales for _ in P.seeds]
        p0 = init.balanced(seeds, P.width, data.d, [sc / math.sqrt(data.d) for sc in run_scale], device="cpu")
        tr = gradient_descent(p0, data, net, steps=steps, lr=P.lr, snapshots=keep, stop_below=STOP,
                              on_nonfinite="stop", record_every=max(1, steps // 1000))
        Sn, R, m = tr.snap_a.shape
        states = Params(tr.snap_a.reshape(Sn * R, m), tr.snap_W.reshape(Sn * R, m, -1))
        q = pl_quantities(net, states, data.X.cpu(), data.y.cpu())
        out.results[src.key] = PLResult(src.key, list(P.scales), list(tr.snap_steps), q["mu"].reshape(Sn, R),
                                        q["kappa"].reshape(Sn, R), q["kappa_max"].reshape(Sn, R), q["loss"].reshape(Sn, R),
                                        torch.tensor(run_scale, dtype=torch.float64),
                                        metrics.finite_runs(tr.loss, tr.final))
    out.seconds = _time.perf_counter() - t0
    return out


def of_scale(r: PLResult, scale: float) -> torch.Tensor:
    """The runs of one scale."""
    return torch.nonzero(r.run_scale == scale).flatten()


def near_zero_exponent(r: PLResult) -> torch.Tensor:
    """log(mu_0(s2) / mu_0(s1)) / log(s2 / s1) for the two smallest scales s1 < s2, per seed: 2 when mu_0 ~ scale^2
    (the gradient vanishes linearly at the stationary point 0 while L stays at L(0))."""
    s1, s2 = sorted(r.scales)[:2]
    i1, i2 = of_scale(r, s1), of_scale(r, s2)
    return torch.log(r.mu[0, i2] / r.mu[0, i1]) / math.log(s2 / s1)


def final_mu(r: PLResult, floor: float = 1e-20) -> torch.Tensor:
    """mu at the last kept state with L > ``floor`` (above rounding), per run."""
    ok = r.loss > floor
    last = (ok.to(torch.int64) * torch.arange(ok.shape[0])[:, None]).amax(0)
    return r.mu[last, torch.arange(r.mu.shape[1])]


def table(run: PLRun) -> list[dict]:
    """One row per source and scale (medians over seeds): mu and kappa at initialisation, the smallest mu met,
    mu at the end, and the final loss."""
    rows = []
    for key, r in run.results.items():
        for sc in r.scales:
            i = of_scale(r, sc)
            rows.append({"source": key, "neuron norm at init": sc, "mu_0": float(r.mu[0, i].median()),
                         "kappa_0": float(r.kappa[0, i].median()), "min_t mu_t": float(r.mu[:, i].amin(0).median()),
                         "mu at the end": float(final_mu(r)[i].median()),
                         "final loss": float(r.loss[-1, i].median())})
    return rows


def final_local_pl(target: float):
    """The chapter's criterion on the PL ratio at the end of training: equal to ``target`` to 1e-3 (relative)."""
    return C.close_to(target, rtol=1e-3)


def local_pl_orthogonal(data) -> float:
    """(2/n) min_k abs(y_k) ||x_k||: the local PL constant at the balanced interpolator of orthogonal data in the
    1/(2n) convention (000 spec, T2 [derived]; the spec states (4/n) min_k abs(y_k) ||x_k|| for the mean MSE)."""
    return float(2.0 / data.n * (data.y.abs() * data.X.norm(dim=1)).min())


def bound_margin(r: PLResult, floor: float = 1e-20) -> float:
    """The smallest (mu_t - kappa_t) / (lambda_max(J J^T) / n) over the kept states with L > ``floor``: the bound
    mu_t >= kappa_t in units of the kernel's own scale, to which the rounding of an eigenvalue is relative (at a
    stationary point with L > 0, such as 002's spurious point, mu_t and kappa_t are both rounding)."""
    ok = r.loss > floor
    margin = (r.mu - r.kappa) / r.kappa_max
    return float(torch.where(ok, margin, torch.full_like(margin, math.inf)).min())
