"""002 (early alignment), chapter `alignment`: Theorem 1 (early alignment) over a lambda sweep, the critical
directions of G (Lemmas 2-3), the general-dimension check and Example 1 (App. E.1).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from ...engine import data as datasets
from ... import verdicts as C
from ...engine.checkpoint import resumable
from ...engine.config import DTYPE
from ...engine.metrics import finite_runs
from ...engine.models import Network, Params
from ...engine.monitor import Monitored, train_monitored
from ...params import Bool, Float, Floats, Int, Ints, PROFILE, Rule, STEP_BUDGET, Sections, ensemble_bytes, gd_work
from ...engine.train import gradient_descent
from .theory import (
    CPU, G, LOSS, OLS, activation_counts, critical_points_2d, grad_factor, initialise, key_vector,
    masked_reduce, min_norm_subgradient, misalignment, neuron_sets, ols, phase_monitor, tau_eps)


SECTIONS = ("census", "sweep", "general-d", "example1")  # independent parts; G on the Figure 2 data always runs


SCHEMA = {
    "profile": PROFILE,
    "width": Int("number of hidden neurons m of the lambda sweep", low=1, high=1_000_000),
    "scales": Floats("initialisation scales lambda of the sweep", low=0, low_open=True, high=1),
    "seeds": Ints("seeds (every seed at every scale, one ensemble)", low=0, high=2 ** 63 - 1),
    "epsilons": Floats("epsilons of Theorem 1 (tau = eps ln(1/lambda) / ||D||, [R])", low=0, low_open=True, high=1),
    "lr": Float("step on the mean squared error (flow time per step)", low=0, low_open=True, high=1),
    "time": Float("flow time of the sweep (past the end of Phase 2b for the smallest lambda)", low=0, low_open=True, high=1e6),
    "monitor_every": Int("iterations between two observations", low=1, high=10_000_000),
    "eps2": Float("Phase 2a threshold on sum over S+ of ||w_j||^2 [choice of the spec]", low=0, low_open=True, high=1),
    "eps3": Float("Phase 2b threshold on ||sum over S+ of a_j w_j - beta*|| [choice of the spec]", low=0, low_open=True, high=1),
    "random_datasets": Int("random 2-D datasets per size n for Lemmas 2-3", low=1, high=10_000_000),
    "random_sizes": Ints("sizes n of those datasets", low=1, high=100_000),
    "general_dims": Ints("input dimensions d of the general-d alignment runs", low=2, high=10_000),
    "general_n": Ints("number of points n for each of those dimensions", low=1, high=100_000),
    "general_width": Int("width of the general-d runs", low=1, high=1_000_000),
    "general_scale": Float("lambda of the general-d runs", low=0, low_open=True, high=1),
    "general_eps": Float("epsilon of the general-d runs", low=0, low_open=True, high=1),
    "general_seeds": Ints("data seeds of the general-d runs (one dataset and one network per seed)", low=0, high=2 ** 63 - 1),
    "general_lr": Float("step of the general-d runs", low=0, low_open=True, high=1),
    "example_steps": Int("iterations of the Example 1 runs", low=2, high=10_000_000),
    "example_lr": Float("step of the Example 1 runs", low=0, low_open=True, high=1),
    "example_leave_at": Ints("iterations at which the Example 1 neuron leaves the boundary (sigma'(0) = 1 step)",
                             low=0, high=10_000_000),
    "resume": Bool("keep each finished ensemble (the lambda sweep, each general-d run) on disk and read it back when the "
                   "same parameters run again with the same package code (shallowflow.engine.checkpoint): an interrupted "
                   "paper run resumes at the first ensemble it had not finished, with identical numbers; off in the book "
                   "and smoke profiles"),
    "sections": Sections("the parts to run: census (Lemmas 2-3 on random data), sweep (the lambda sweep: Theorem 1, "
                         "Remark 1, Lemmas 5-6, S5-omni), general-d (Theorem 3) and example1 (Example 1)",
                         choices=SECTIONS),
}


RULES = (Rule(("example_leave_at", "example_steps"), lambda P: max(P.example_leave_at) < P.example_steps,
                    "Example 1 leaves the boundary before its last iteration"),
         Rule.budget(("time", "lr"), lambda P: P.time / P.lr, STEP_BUDGET, what="the sweep (time / lr)"),
         Rule.budget(("general_eps", "general_scale", "general_lr"),
                     lambda P: P.general_eps * math.log(1 / P.general_scale) / P.general_lr, STEP_BUDGET,
                     what="a general-d run (about general_eps ln(1/general_scale) / general_lr)"),
         Rule(("monitor_every", "time", "lr"), lambda P: P.monitor_every <= P.time / P.lr,
              "the sweep is observed at least once after the start (monitor_every <= time / lr)"),
         Rule(("time", "lr", "epsilons", "scales"), lambda P: "sweep" not in getattr(P, "sections", SECTIONS)
              or round(P.time / P.lr) >= max(sweep_snapshot_steps(P).values()),
              "the sweep lasts until every tau_eps = eps ln(1/lambda) / ||D|| (time >= the largest eps x "
              "ln(1 / the smallest lambda) / ||D||, ||D|| of the three points)"),
         Rule(("general_dims", "general_n"), lambda P: len(P.general_dims) == len(P.general_n),
              "one number of points per input dimension"),
         Rule.memory(("width", "scales", "seeds"), lambda P: ensemble_bytes(len(P.scales) * len(P.seeds), P.width, 2, 60),
                     what="the sweep ensemble and its captured states"),
         Rule.work(("width", "scales", "seeds", "time", "lr", "monitor_every", "random_datasets", "random_sizes",
                    "general_dims", "general_n", "general_width", "general_scale", "general_eps", "general_seeds",
                    "general_lr", "example_steps", "example_leave_at", "sections"), lambda P: work_estimate(P),
                   what="the chapter (above the budget: a GPU or a cluster)"))


def work_estimate(P) -> float:
    """Work units (:func:`shallowflow.params.gd_work`) of the sections run: the census (every cone's D_A against
    every point, 2n cones x n points per dataset), the sweep (scales x seeds on the three points, time / lr steps,
    every observation counted as one more step), the general-d runs (one per seed and dimension, eps ln(1/lambda) / C
    flow time at the step min(general_lr, tau / 200), C at its expected value 2 E|y| E||x|| for Gaussian data) and
    Example 1 (one run and one per leaving iteration, example_steps each)."""
    sections = getattr(P, "sections", SECTIONS)
    units = 0.0
    if "census" in sections:
        units += sum(gd_work(P.random_datasets, 2 * n, n, 2, 1) for n in P.random_sizes)
    if "sweep" in sections:
        steps = P.time / P.lr
        units += gd_work(len(P.scales) * len(P.seeds), P.width, 3, 2, steps + steps / P.monitor_every)
    if "general-d" in sections:
        for d, n in zip(P.general_dims, P.general_n):
            C = 2 * math.sqrt(2 / math.pi) * math.sqrt(max(d - 0.5, 0.5))
            tau = P.general_eps * math.log(1 / P.general_scale) / C
            units += gd_work(len(P.general_seeds), P.general_width, n, d, max(tau / P.general_lr, 200))
    if "example1" in sections:
        units += (1 + len(P.example_leave_at)) * gd_work(1, 1, 1, 2, P.example_steps)
    return units


@dataclass
class Sweep:
    data: datasets.Dataset
    scales: list
    seeds: list
    epsilons: list
    lam: torch.Tensor  # (R,) scale of each run
    seed: torch.Tensor  # (R,)
    run: Monitored
    sets: dict
    D: torch.Tensor
    ols: OLS
    captures: dict
    at_tau: dict  # eps -> dict of per-run tensors at tau_eps


def sweep_snapshot_steps(P) -> dict:
    """The iteration of each tau_eps of the sweep, keyed (eps, lambda): where its states are captured."""
    D = key_vector(*(lambda d: (d.X, d.y))(datasets.get("ea-three-point", device=CPU)))
    return {(e, sc): int(round(tau_eps(e, sc, float(D.norm())) / P.lr)) for e in P.epsilons for sc in P.scales}


def _key(P, **more) -> dict:
    """A checkpoint's key: every parameter but those that only choose what runs, and ``more``."""
    return dict({k: v for k, v in sorted(vars(P).items()) if k not in ("profile", "resume", "sections")}, **more)


def run_sweep(P, activation: str = "relu", leak: float = 0.01, kind: str = "balanced") -> Sweep:
    """Balanced runs on the three-point data at every (scale, seed), one ensemble, observed along the way. The
    chapter's network is ReLU from a balanced start; ``activation`` (and ``leak``) or ``kind`` (an initialisation of
    :func:`~.theory.initialise`) give the same sweep with another activation or start, the false cases of Theorem 1's
    ReLU-only and balanced-only statements (tests/test_controls_early_alignment.py).  With ``P.resume`` (the paper
    profile) the trained ensemble and its phase captures are one chunk of
    :func:`shallowflow.engine.checkpoint.resumable`."""
    data = datasets.get("ea-three-point", device=CPU)
    X, y = data.X, data.y
    net = Network(activation, leak=leak)
    o = ols(X, y)
    D = key_vector(X, y)
    Dn = float(D.norm())
    lam = [sc for sc in P.scales for _ in P.seeds]
    seeds = [s for _ in P.scales for s in P.seeds]
    p0 = initialise(kind, seeds, P.width, 2, lam)
    sets = neuron_sets(p0, X)
    steps = int(round(P.time / P.lr))
    ks = sweep_snapshot_steps(P)

    def train(_):
        captures = {"tau2": {}, "tau3": {}}
        mon = phase_monitor(X, y, sets, p0, o.beta, D, P.eps2, P.eps3, captures, net)
        run = train_monitored(p0, data, net, steps=steps, lr=P.lr, every=P.monitor_every, monitor=mon,
                              snapshots=sorted(set(ks.values()) | {steps}))
        return run, captures

    run, captures = resumable("early-alignment/alignment/sweep", _key(P, activation=activation, leak=leak, kind=kind),
                              ["sweep"], train, enabled=bool(getattr(P, "resume", False)))[0]
    lam_t = torch.tensor(lam, dtype=DTYPE)
    at = {}
    for e in P.epsilons:
        rows = []
        for r in range(p0.runs):
            k = ks[(e, lam[r])]
            q = run.snaps[k].select(r)
            q0 = p0.select(r)
            mis = misalignment(q.W, D)
            plus, minus = sets["plus"][r:r + 1], sets["minus"][r:r + 1]
            cnt = activation_counts(q, X)
            inactive = cnt["none"]
            moved = ((run.final.W[r:r + 1] - q.W).abs().amax(-1) + (run.final.a[r:r + 1] - q.a).abs())
            pat_all = cnt["all"]
            rows.append(dict(
                k=k, a_ratio=float((q.a.abs() / q0.a.abs()).max()), h_max=float(net.forward(q, X).abs().max()),
                med=float(masked_reduce(mis, plus, "median")[0]), max=float(masked_reduce(mis, plus, "max")[0]),
                plus_aligned=float(((mis <= 1e-3) & plus).sum() / plus.sum()),
                plus_in_max_cone=float((pat_all & plus).sum() / plus.sum()),
                minus_inactive=float((inactive & minus).sum() / minus.sum()),
                frozen_moved=float(torch.where(inactive, moved, torch.zeros_like(moved)).max()),
                n_inactive=int(inactive.sum()), loss=float(net.loss(q, X, y, LOSS))))
        at[e] = {key: torch.tensor([row[key] for row in rows], dtype=DTYPE) for key in rows[0]}
    return Sweep(data, list(P.scales), list(P.seeds), list(P.epsilons), lam_t, torch.tensor(seeds), run, sets, D, o,
                 captures, at)


# Remark 1 ("When lambda -> 0, this covers all the neurons with probability 1"): the share of S+ within 1e-3 of D at
# tau_eps grows as lambda decreases (REM1_GROWS on share_growth: it never drops and it rises) and reaches every
# neuron at the smallest lambda (REM1_ALL_AT_SMALLEST, per run). REM1_NO_DROP on the largest drop alone also holds on
# an untrained network, whose shares are all 0 (tests/test_null_early_alignment.py shows it): share_growth is 0 there.
REM1_NO_DROP = C.below(0.0, strict=False)
REM1_GROWS = C.above(0.0, strict=True)
REM1_ALL_AT_SMALLEST = C.above(1.0)

# Theorem 1 (ii) at the smallest lambda, per run: every S+ neuron in the cone of the maximum D, every S- neuron
# switched off (G's flat minimum); and the neurons inactive on every point at tau_eps never move again (max change)
POSITIVE_TO_MAXIMUM = C.above(1.0)
NEGATIVE_TO_MINIMUM = C.above(1.0)
SWITCHED_OFF_FROZEN = C.below(0.0, strict=False)

# Theorem 1 (i): max_j |a_j(tau_eps)| / |a_j(0)| times lambda^eps (output_growth), every run and eps, below 1.05
THM1_BOUND = C.below(1.05)

# Lemmas 5 (3) and 6 (2): at tau_2 and at tau_3 (lambda <= 1e-4) the S+ neurons are pairwise aligned (min pairwise cos)
PAIRWISE_ALIGNED = C.above(1 - 1e-3)

# Lemma 5 (1): tau_2 (sweep_phase_times) is linear in ln(1/lambda) (R^2 of the fit), with slope 1/|D| (fitted slope over
# predicted_slope)
TAU2_LINEAR = C.above(0.99)
TAU2_SLOPE = C.within(0.85, 1.15)


def output_growth(sw: "Sweep", epsilons) -> torch.Tensor:
    """Thm1(i)/bound: per eps and run, max_j |a_j(tau_eps)| / |a_j(0)| times lambda^eps (at most 1 when the output
    weights grow no faster than lambda^(-eps) until tau_eps), flattened eps-major."""
    return torch.stack([sw.at_tau[e]["a_ratio"] * sw.lam ** e for e in epsilons]).flatten()


def aligned_shares(sw: "Sweep", eps: float) -> torch.Tensor:
    """Remark 1: the mean over seeds of the share of S+ within 1e-3 of D at tau_eps, per scale from the largest
    lambda to the smallest (sorted, whatever the order of ``scales``)."""
    return torch.stack([sw.at_tau[eps]["plus_aligned"][sw.lam == sc].mean() for sc in sorted(set(sw.scales), reverse=True)])


def largest_drop(shares: torch.Tensor) -> float:
    """The largest decrease between consecutive entries of ``shares`` (0 when it never decreases or has one entry)."""
    return float((shares[:-1] - shares[1:]).clamp_min(0).max()) if shares.numel() > 1 else 0.0


def share_growth(shares: torch.Tensor) -> float:
    """Rem1/aligned-share-grows: the rise of ``shares`` from the first entry (the largest lambda) to the last (the
    smallest) when it never decreases between consecutive entries, minus the largest decrease otherwise; NaN with
    fewer than two entries. Positive exactly when the share grows: 0 for a constant share (an untrained network's,
    all 0, or a sweep whose every lambda already aligns every neuron), negative when it ever drops."""
    if shares.numel() < 2:
        return math.nan
    drop = largest_drop(shares)
    return -drop if drop > 0 else float(shares[-1] - shares[0])


def loglog_slope(x, y) -> tuple[float, float]:
    """Least-squares slope of log y against log x, and R^2."""
    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))
    A = np.vstack([lx, np.ones_like(lx)]).T
    coef, *_ = np.linalg.lstsq(A, ly, rcond=None)
    pred = A @ coef
    r2 = 1 - ((ly - pred) ** 2).sum() / max(((ly - ly.mean()) ** 2).sum(), 1e-300)
    return float(coef[0]), float(r2)


def sweep_exponents(sw: "Sweep", eps: float) -> dict:
    """Theorem 1's fitted exponents at tau_eps over the sweep's lambdas: ``med`` (median 1 - cos over S+, every
    lambda) and ``max`` (max 1 - cos, lambda <= 1e-3) in lambda, ``R`` (max_j |a_j(tau)| / |a_j(0)|) in 1/lambda,
    ``h`` (max_k |h(x_k)|) in lambda, and ``R2_med`` (the R^2 of the median's fit)."""
    lam = sw.lam.numpy()
    small = lam <= 1e-3
    a = sw.at_tau[eps]
    med, mx = a["med"].numpy(), a["max"].numpy()
    return dict(med=loglog_slope(lam, med)[0], max=loglog_slope(lam[small], mx[small])[0],
                R=loglog_slope(1 / lam, a["a_ratio"].numpy())[0], h=loglog_slope(lam, a["h_max"].numpy())[0],
                R2_med=loglog_slope(lam, med)[1])


# Theorem 1's exponents, per epsilon: |a_j(tau_eps)| / |a_j(0)| ~ lambda^(-eps) (Thm1(i)/exponent-eps*),
# max_k |h(x_k)| at tau_eps ~ lambda^(2(1 - eps)) (Thm1(i)/output-eps*), 1 - cos over S+ ~ lambda^(2 eps)
# (Thm1(ii)/median-exponent-eps*, Thm1(ii)/max-exponent-eps*)
def ratio_exponent_criterion(eps: float) -> C.Criterion:
    return C.within(eps - 0.05, eps + 0.05)


def output_exponent_criterion(eps: float) -> C.Criterion:
    return C.within(2 * (1 - eps) - 0.15, 2 * (1 - eps) + 0.15)


#: the tolerance on a fitted alignment exponent against its predicted 2 eps (Theorem 1 (ii), Lemma 4 (1))
EXPONENT_TOL = 0.15


def alignment_exponent_criterion(eps: float) -> C.Criterion:
    return C.within(2 * eps - EXPONENT_TOL, 2 * eps + EXPONENT_TOL)


def spread_arc(sw: "Sweep", eps: float) -> torch.Tensor:
    """S5-omni: per run, the arc (rad) around D covered by S+ at tau_eps, 2 asin(sqrt(max (1 - cos) / 2))."""
    return 2 * torch.asin(torch.sqrt(sw.at_tau[eps]["max"] / 2))


def spread_exponent_criterion(eps: float) -> C.Criterion:
    """S5-omni/spread-exponent: the fitted exponent of that arc in lambda (lambda <= 1e-3) is eps."""
    return C.within(eps - 0.15, eps + 0.15)


def sweep_phase_times(sw: Sweep) -> dict:
    """tau_2, tau_3 (flow time) per run of the sweep, and the fits of Lemmas 5-6."""
    R = sw.lam.numel()
    lr = sw.run.lr
    k2 = torch.tensor([sw.captures["tau2"].get(r, (-1, None))[0] for r in range(R)], dtype=DTYPE)
    k3 = torch.tensor([sw.captures["tau3"].get(r, (-1, None))[0] for r in range(R)], dtype=DTYPE)
    t2 = torch.where(k2 >= 0, k2 * lr, torch.full_like(k2, math.nan))
    t3 = torch.where(k3 >= 0, k3 * lr, torch.full_like(k3, math.nan))
    ln = torch.log(1 / sw.lam)
    ok = torch.isfinite(t2)
    A = np.vstack([ln[ok].numpy(), np.ones(int(ok.sum()))]).T
    coef, *_ = np.linalg.lstsq(A, t2[ok].numpy(), rcond=None)
    pred = A @ coef
    yv = t2[ok].numpy()
    r2 = 1 - ((yv - pred) ** 2).sum() / max(((yv - yv.mean()) ** 2).sum(), 1e-300)
    return dict(tau2=t2, tau3=t3, slope=float(coef[0]), intercept=float(coef[1]), r2=float(r2),
                duration=t3 - t2, predicted_slope=1 / float(sw.D.norm()))


def random_2d(n: int, count: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """``count`` datasets of n points x ~ N(0, I_2), y ~ N(0, 1) (absolutely continuous: Assumption 2) [choice]."""
    gen = torch.Generator().manual_seed(int(seed))
    return (torch.randn(count, n, 2, generator=gen, dtype=DTYPE), torch.randn(count, n, generator=gen, dtype=DTYPE))


LEM3_AT_LEAST_ONE = C.above(1)  # Lem3/at-least-one: the smallest count of extremal vectors per dataset size
LEM2_GENERIC = C.above(1e-12, strict=True)  # Lem2/generic-position: min |cos(D_A, x_k)| over cones and points
LEM2_INDEPENDENT = C.above(1e-8, strict=True)  # Lem2/independent-pairs: min |det(x_k, x_l)| over pairs of unit inputs


def census_of(X: torch.Tensor, y: torch.Tensor) -> dict:
    """Lemmas 2 and 3 on a batch of 2-D datasets X (N, n, 2), y (N, n): the number of extremal vectors of each, the
    smallest abs(<D_A, x_k>) / (norm(D_A) norm(x_k)) over every cone A and point k, and the smallest
    abs(det(x_k, x_l)) over pairs of unit inputs (:func:`lemma23_census` on given data)."""
    n = X.shape[1]
    c = critical_points_2d(X, y)
    crit = (c["arc_max"] | c["arc_min"] | c["ray_max"] | c["ray_min"]).sum(1)
    D = c["D"]
    Dn = D / D.norm(dim=-1, keepdim=True).clamp_min(1e-300)
    Xn = X / X.norm(dim=-1, keepdim=True)
    ip = (Dn @ Xn.transpose(1, 2)).abs()  # (N, 2n, n)
    ip = torch.where(c["flat"][..., None], torch.full_like(ip, math.inf), ip)
    det = (Xn[:, :, None, 0] * Xn[:, None, :, 1] - Xn[:, :, None, 1] * Xn[:, None, :, 0]).abs()
    det = det.masked_fill(torch.eye(n, dtype=torch.bool), math.inf)
    return dict(count=crit, min_boundary=float(ip.amin()), min_det=float(det.amin()),
                n_max=(c["arc_max"] | c["ray_max"]).sum(1), n_min=(c["arc_min"] | c["ray_min"]).sum(1))


def lemma23_census(sizes, count: int, seed: int = 0) -> dict:
    """Per size n: the number of extremal vectors of each random dataset (Lemma 3: at least one, almost surely),
    the smallest abs(<D_A, x_k>) / (norm(D_A) norm(x_k)) over every cone A and point k, and the smallest abs(det(x_k, x_l))
    over pairs (Lemma 2: generic position): :func:`census_of` on ``count`` draws of :func:`random_2d` per size."""
    return {n: census_of(*random_2d(n, count, seed + 1000 * i)) for i, n in enumerate(sizes)}


def cluster_directions(W: torch.Tensor, cos_tol: float = 1e-3) -> list[torch.Tensor]:
    """Greedy clusters of the directions of W (k, d): each cluster holds the unassigned neurons within
    1 - cos <= cos_tol of the largest remaining neuron.  Returns index tensors, largest cluster first."""
    U = W / W.norm(dim=-1, keepdim=True)
    left = torch.ones(W.shape[0], dtype=torch.bool)
    order = torch.argsort(W.norm(dim=-1), descending=True)
    out = []
    for i in order.tolist():
        if not left[i]:
            continue
        members = left & (misalignment(W, U[i]) <= cos_tol)
        out.append(torch.nonzero(members).flatten())
        left &= ~members
    return sorted(out, key=lambda t: -t.numel())


def run_general_d(P) -> list[dict]:
    """Theorem 1 (ii) / Theorem 3 beyond d = 2: balanced runs on Gaussian data (x ~ N(0, I_d), y ~ N(0, 1)),
    stopped at tau = eps ln(1/lambda) / C with the Groenwall-safe C = (2/n) sum_k abs(y_k) norm(x_k) [R].  The positive
    and negative neurons active on some point are clustered; every cluster holding at least 2% of them should
    sit at a fixed point of the projected (sub)gradient flow of G: cos(c, +-D^0_c) >= 1 - 1e-3 (+ for a_j > 0,
    - for a_j < 0), and at a local maximum (a_j > 0) or minimum (a_j < 0) of G.  ``grows`` marks the clusters
    whose norm grows (a_j G(c) > 0), the "Condition-2-type" neurons of Theorem 3 [R]; the others shrink.
    Points with abs(cos(c, x_k)) <= 3 lr C count as on the boundary of their cone (GD with sigma'(0) = 0
    zigzags across it by about one step) [choice].  With ``P.resume`` (the paper profile) each run (one dimension and
    seed, seeded by them alone) is one chunk of :func:`shallowflow.engine.checkpoint.resumable`."""
    cells = [(int(d), int(n), s) for d, n in zip(P.general_dims, P.general_n) for s in P.general_seeds]
    return resumable("early-alignment/alignment/general-d", _key(P), cells, lambda c: _general_d_run(P, *c),
                     enabled=bool(getattr(P, "resume", False)))


def _general_d_run(P, d: int, n: int, s) -> dict:
    """One run of :func:`run_general_d`: dimension ``d``, ``n`` points, seed ``s``."""
    net = Network("relu")
    gen = torch.Generator().manual_seed(10_000 + 97 * d + int(s))
    X = torch.randn(n, d, generator=gen, dtype=DTYPE)
    y = torch.randn(n, generator=gen, dtype=DTYPE)
    C = grad_factor() / n * float((y.abs() * X.norm(dim=1)).sum())
    tau = P.general_eps * math.log(1 / P.general_scale) / C
    lr = min(P.general_lr, tau / 200)
    steps = int(round(tau / lr))
    p0 = initialise("balanced", [int(s)], P.general_width, d, P.general_scale)
    tr = gradient_descent(p0, (X, y), net, steps=steps, lr=lr, loss=LOSS)
    q = tr.final
    W, a = q.W[0], q.a[0]
    act = (W @ X.T > 0).any(-1)
    res = dict(d=d, n=n, seed=s, tau=tau, C=C, clusters=[], h_max=float(net.forward(q, X).abs().max()),
               finite=bool(finite_runs(tr.loss, q)[0]))
    gen2 = torch.Generator().manual_seed(int(s))
    for sign in (1, -1):
        sel = torch.nonzero(act & (a * sign > 0)).flatten()
        if sel.numel() == 0:
            continue
        for idx in cluster_directions(W[sel]):
            share = idx.numel() / sel.numel()
            if share < 0.02:
                continue
            c = W[sel][idx] / W[sel][idx].norm(dim=-1, keepdim=True)
            c = c.mean(0)
            c = c / c.norm()
            D0, _ = min_norm_subgradient(X, y, c[None], zero_tol=3 * lr * C)
            D0 = D0[0]
            fixed = float(misalignment(c[None], sign * D0)[0]) if float(D0.norm()) > 0 else math.nan
            # local extremum of G: G at random directions 0.01 rad away
            v = torch.randn(200, d, generator=gen2, dtype=DTYPE)
            v = v - (v @ c)[:, None] * c
            v = v / v.norm(dim=1, keepdim=True)
            near = math.cos(0.01) * c + math.sin(0.01) * v
            gc = float(G(X, y, c[None])[0])
            gn = G(X, y, near)
            extremum = bool((gn <= gc + 1e-15).all()) if sign > 0 else bool((gn >= gc - 1e-15).all())
            spread = float(misalignment(W[sel][idx], c).max())
            res["clusters"].append(dict(sign=sign, share=share, size=int(idx.numel()), fixed=fixed,
                                        extremum=extremum, spread=spread, G=gc, D_norm=float(D0.norm()),
                                        grows=sign * gc > 0))
    return res


def example1(steps: int, lr: float, leave_at: Sequence[int], scale: float = 1e-2) -> dict:
    """002, Example 1 and Condition 2 (Appendix E.1) [R]: one data point x = e_1 with y = 1, one balanced
    neuron with a > 0 started on its activation boundary, w(0) = (0, scale), <w(0), x> = 0.

    The Clarke flow has a one-parameter family of solutions: stay at w(0) until any t_0, then grow along x.
    The library's GD uses sigma'(0) = 0 and stays (the state is exactly stationary).  With sigma'(0) = 1 the
    first step has gradient (2/n) (h - y) a sigma'(0) x = -2 a x (mean squared error) and leaves the boundary;
    from there both conventions agree.  "Leave at k_0" runs k_0 iterations of the library's GD, then that one
    sigma'(0) = 1 step, then the library's GD: one run of the family per k_0.

    Returns the iterations, z_k = <w_k, x> and the loss of the staying run and of every leaving run, the largest
    change of the staying state, and the shift error (leaving at k_0 against leaving at 0, shifted by k_0).
    """
    leave_at = sorted({int(k) for k in leave_at})
    if leave_at and leave_at[-1] >= steps:
        raise ValueError(f"example_leave_at must be below example_steps ({steps}), got {leave_at[-1]}")
    X = torch.tensor([[1.0, 0.0]], dtype=DTYPE)
    y = torch.tensor([1.0], dtype=DTYPE)
    data = datasets.Dataset("example-1", X, y)
    net = Network("relu")
    p0 = Params(torch.tensor([[scale]], dtype=DTYPE), torch.tensor([[[0.0, scale]]], dtype=DTYPE))
    every = list(range(steps + 1))
    stay = gradient_descent(p0, data, net, steps=steps, lr=lr, loss=LOSS, snapshots=every)
    z_stay = stay.snap_W[:, 0, 0, :] @ X[0]
    moved = float(((stay.snap_W - p0.W).abs().amax() + (stay.snap_a - p0.a).abs().amax()))
    leaving = {}
    finite = [bool(finite_runs(stay.loss, stay.final)[0])]
    for k0 in leave_at:
        q = gradient_descent(p0, data, net, steps=k0, lr=lr, loss=LOSS).final if k0 else p0
        h = net.forward(q, X)  # (1, 1); sigma(0) = 0, so h = 0 and the a-gradient vanishes
        g = grad_factor(LOSS) * ((h - y) @ X) / X.shape[0]  # (R, d): d/dw of L with sigma'(0) = 1, per unit a
        q1 = Params(q.a.clone(), q.W - lr * q.a[..., None] * g[:, None, :])
        after = gradient_descent(q1, data, net, steps=steps - k0 - 1, lr=lr, loss=LOSS,
                                 snapshots=range(steps - k0))
        finite.append(bool(finite_runs(after.loss, after.final)[0]))
        leaving[k0] = dict(z=torch.cat([z_stay[:k0 + 1], after.snap_W[:, 0, 0, :] @ X[0]]),
                           loss=torch.cat([stay.loss[0, :k0 + 1], after.loss[0]]))
    shift = 0.0
    for k0, v in leaving.items():  # the family is one solution shifted in time
        d = k0 - leave_at[0]
        base = leaving[leave_at[0]]["z"]
        shift = max(shift, float((v["z"][d:] - base[:len(base) - d]).abs().max()))
    return dict(iterations=torch.arange(steps + 1), z_stay=z_stay, loss_stay=stay.loss[0], moved=moved,
                leaving=leaving, shift_error=shift, data=data, p0=p0, finite=torch.tensor(finite))
