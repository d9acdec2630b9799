"""003 (orthogonal inputs), chapter `implicit-bias`: Theorem 1, Eq. (8) on ORTHO-B, and Lemma 5.

Every dataset's runs (lambdas x seeds x step sizes) train to convergence (loss below ``STOP``) as one
ensemble; the distance to the minimum-norm interpolator, its exponent in lambda, the F1 norm by linear
programming and the Polyak-Lojasiewicz ratio of Lemma 5 are measured here.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import torch

from ...engine import data as datasets
from ...engine import init, theory
from ... import verdicts as C
from ...engine.config import DTYPE
from ...engine.data import Dataset
from ...engine.models import Params
from ...engine.monitor import Segmented, flat_snapshots, gradients, segmented_descent
from ...params import Float, Floats, Int, Ints, PROFILE, Rule, STEP_BUDGET, array_bytes, ensemble_bytes, gd_work
from .theory import Ensemble, NET, constants, make_ensemble, phase_times, unit


SCHEMA = {
    "profile": PROFILE,
    "width_toy": Int("m for the Section-5 toy", low=1, high=100_000),
    "width_a": Int("m for ORTHO-A", low=1, high=100_000),
    "width_b": Int("m for ORTHO-B", low=1, high=100_000),
    "width_c": Int("m for ORTHO-C (0: skip ORTHO-C)", low=0, high=100_000),
    "lams": Floats("initial scales lambda of every dataset", low=0, low_open=True, high=1),
    "lams_b_extra": Floats("further lambdas for ORTHO-B (Cauchy sequence, Lemma 5)", low=0, low_open=True, min_len=0, high=1),
    "lams_c_extra": Floats("further lambdas for ORTHO-C (slow convergence)", low=0, low_open=True, min_len=0, high=1),
    "seeds": Ints("seeds of the toy, ORTHO-A and ORTHO-B", low=0, high=2 ** 63 - 1),
    "seeds_c": Ints("seeds of ORTHO-C", low=0, high=2 ** 63 - 1),
    "lrs": Floats("gradient-descent step sizes dt on L", low=0, low_open=True, high=1),
    "eps": Float("the epsilon of Lemma 5's ball radius lambda^(eps/40)", low=0, low_open=True, high=1),
    "every": Int("iterations between loss records", low=1, high=10_000_000),
    "segment": Int("iterations per kernel call", low=1, high=10_000_000),
    "pl_every": Int("iterations between recorded states in the Lemma-5 replay", low=1, high=10_000_000),
    "pl_samples": Int("random balanced perturbations per run (Lemma 5 (b))", low=1, high=10_000_000),
    "nec_width": Int("m of the Assumption-3 necessity runs (T1.5)", low=2, high=100_000),
    "nec_seeds": Ints("seeds tried for the necessity runs (T1.5): those whose initialisation has S+,1 empty, S-,1 "
                      "non-empty and every positive label covered by an s = +1 neuron run; the others are listed as "
                      "rejected, with the reason", low=0, high=2 ** 63 - 1),
    "nec_lam": Float("lambda of the necessity runs", low=0, low_open=True, high=1),
    "lp_directions": Int("random unit directions of the Eq. (8) linear program on ORTHO-B", low=10, high=100_000_000),
}


@lru_cache(maxsize=None)
def _shape(name: str) -> tuple[int, int, float]:
    """(n, d, ||D_-||) of a dataset (the horizon of :func:`.theory.phase_times` is a function of ||D_-||)."""
    data = datasets.get(name, device="cpu")
    return data.n, data.d, constants(data).norm_minus


def _planned(P) -> list[tuple[str, int, list, list]]:
    """(dataset, width, lambdas, seeds) of every ensemble :func:`run_implicit` trains to convergence (width 0: none)."""
    widths = {"orthogonal-toy": P.width_toy, "ortho-A": P.width_a, "ortho-B": P.width_b, "ortho-C": P.width_c}
    out = []
    for name in DATASETS:
        if widths[name] == 0:
            continue
        lams = list(P.lams) + (list(P.lams_b_extra) if name == "ortho-B" else []) + \
            (list(P.lams_c_extra) if name == "ortho-C" else [])
        out.append((name, widths[name], lams, P.seeds_c if name == "ortho-C" else P.seeds))
    return out


def _ensembles(P) -> list[tuple[str, int, int, list]]:
    """(dataset, runs, width, lambdas) of every ensemble :func:`run_implicit` trains to convergence."""
    return [(name, len(seeds) * len(lams) * len(P.lrs), width, lams) for name, width, lams, seeds in _planned(P)]


def _steps(name: str, lams, P, every: int) -> float:
    """Iterations of :func:`_train_to_convergence`: the horizon of the smallest lambda (1.3 ln(1/lambda) / ||D_-|| +
    60 / ||D_-||) at the smallest step, rounded up to a multiple of ``every``."""
    horizon = (1.3 * -math.log(min(lams)) + 60) / _shape(name)[2]
    return math.ceil(horizon / min(P.lrs) / every) * every


LP_ITERATIONS = 20  # simplex passes over the Eq. (8) program's columns, an estimate (HiGHS on n = 4 rows)


def work_estimate(P) -> float:
    """Work units (:func:`shallowflow.params.gd_work`) of the chapter: every dataset's ensemble (lambdas x seeds x
    lrs runs) to its horizon (runs converged below STOP stop earlier: an upper estimate); on ORTHO-B the Lemma-5
    replay (the same runs, the same number of iterations, a gradient every ``pl_every``), the necessity runs
    (nec_seeds x lrs at ``nec_width``, at most: the rejected seeds do not run), Lemma 5 (b)'s ``pl_samples`` random
    points per run (a gradient each, after 3 re-balancing passes), Lemma 5's ray (400 points per run) and the two
    Eq. (8) linear programs over ``lp_directions`` columns."""
    units = 0.0
    for name, R, m, lams in _ensembles(P):
        n, d, _ = _shape(name)
        units += gd_work(R, m, n, d, _steps(name, lams, P, P.every))
        if name == "ortho-B":
            units += gd_work(R, m, n, d, _steps(name, lams, P, P.pl_every) * (1 + 1 / P.pl_every))
            units += gd_work(len(P.nec_seeds) * len(P.lrs), P.nec_width, n, d, _steps(name, [P.nec_lam], P, P.every))
            units += gd_work(R * P.pl_samples, m, n, d, 4) + gd_work(R * 400, m, n, d, 1)
            units += 2 * gd_work(1, P.lp_directions + 2, n, d, LP_ITERATIONS)
    return units


def lemma5_memory(P) -> float:
    """Bytes of Lemma 5 (b)'s random points of one run (pl_samples states of ORTHO-B's width, a few arrays of
    them) and of the Eq. (8) programs' direction matrices (lp_directions x (n + d), a few copies)."""
    n, d, _ = _shape("ortho-B")
    return max(array_bytes(P.pl_samples, P.width_b, d + 1, copies=6), array_bytes(P.lp_directions + 2, n + d, copies=8))


RULES = (Rule.budget(("lams", "lams_b_extra", "lams_c_extra", "lrs"),
                     lambda P: math.log(1 / min(P.lams + P.lams_b_extra + P.lams_c_extra)) / min(P.lrs), STEP_BUDGET,
                     what="the escape time ln(1/lambda) at the smallest step (a lower estimate)"),
         Rule.at_most("every", "segment", "the losses are recorded within a kernel call (every <= segment)"),
         Rule.memory(("width_c", "seeds_c", "lams", "lams_c_extra", "lrs", "segment", "every"),
                     lambda P: ensemble_bytes(len(P.seeds_c) * len(P.lams + P.lams_c_extra) * len(P.lrs), P.width_c, 8,
                                              P.segment / P.every)
                     + ensemble_bytes(len(P.seeds) * len(P.lams + P.lams_b_extra) * len(P.lrs), P.width_b, 6,
                                      P.segment / P.every),
                     what="the states of one segment (ORTHO-B and ORTHO-C)"),
         Rule.memory(("pl_samples", "width_b", "lp_directions"), lemma5_memory,
                     what="Lemma 5 (b)'s random points of one run and the Eq. (8) programs"),
         Rule.work(("width_toy", "width_a", "width_b", "width_c", "lams", "lams_b_extra", "lams_c_extra", "seeds",
                    "seeds_c", "lrs", "every", "pl_every", "pl_samples", "nec_width", "nec_seeds", "nec_lam",
                    "lp_directions"), work_estimate,
                   what="the ensembles to convergence, the Lemma-5 replay and samples, the necessity runs and the LPs"),
         # last, once the budgets hold (it draws initialisations), and it stops at the first seed that qualifies
         Rule(("nec_seeds", "nec_width"), lambda P: bool(screen_necessity("ortho-B", P.nec_width, P.nec_seeds, first=True)[0]),
              "at least one of nec_seeds has S+,1 empty, S-,1 non-empty and its positive labels covered at width "
              "nec_width"))


DATASETS = ("orthogonal-toy", "ortho-A", "ortho-B", "ortho-C")


STOP = 1e-28  # runs stop at L < STOP: the parameters are then converged to ~1e-13

# the source's level drawn on the Lemma 5 figure (003 Section 4, Lemma 5): "inf over B(theta*, lambda^(eps/40)) of
# ||grad L||^2 / L >= ||D_-||", a bound the source states as a formula of the data (the figure evaluates it on ORTHO-B)
SOURCE_LEMMA5_BOUND = "Lemma 5: ||∇L||²/L ≥ ||D-||"

# T1/gap-at-min-lam-ortho-B (spec: rel.gap < 1e-6 at lambda = 1e-30), on |rel.gap|: the null scenario (an untrained
# network, ||theta||^2 ~ 0, rel.gap = -1) passed "rel.gap < 1e-6" and "rel.gap decreases"; a norm below the minimum
# is no implicit bias, so both checks read the absolute gap (a trained interpolator has rel.gap >= 0 up to rounding)
GAP_AT_MIN_LAM = C.below(1e-6)
GAP_DECREASING = C.is_true("every seed")  # T1/gap-decreasing-*: decreasing_to_floor(|rel.gap|)["ok"] per seed
LIMIT_LOSS = 1e-20  # Theorem 1's convergence level (T1/convergence-*): a run below it has reached its limit theta^infty
CONVERGENCE = C.below(1.0, strict=False)  # T1/convergence-*: time to L < LIMIT_LOSS divided by the horizon T
CAUCHY_DECREASING = C.is_true("every seed")  # T1/cauchy-decreasing-*: consecutive distances decrease, per seed
CAUCHY_LAST = C.below(1e-3)  # T1/cauchy-last-ortho-B: the last consecutive distance
NON_S_DECREASING = C.is_true("every seed")  # T1/non-S-decreasing-ortho-B: decreasing_to_floor(...)["ok"] per seed
NON_S_SMALL = C.below(1e-6)  # T1/non-S-small-ortho-B: max norm outside S+,1 u S-,1 at the smallest lambda
ALIGNED = C.below(1e-8)  # T1/aligned-ortho-B: 1 - min cos(w_j, D+ or -D-) over S+,1 u S-,1 at the smallest lambda
GAP_EXPONENT = C.below(0.1)  # T1/gap-exponent-*: |measured exponent of rel.gap in lambda - kappa| / kappa
STRAY_SUBSET = C.is_true("every run")  # T1/stray-subset-ortho-C: the largest stray neuron is active on the predicted labels
L5_RAY_RADIUS = C.below(0.02)  # L5/ray-radius: |rho* - sqrt(2n||D-||)/2| / (sqrt(2n||D-||)/2)
L5_RANDOM_BALL = C.above(1.0)  # L5/random-ball: min ||grad L||^2/L / ||D-|| over random balanced points of the ball
L5_RATE = C.above(1.0)  # L5/rate-*: fitted exponential rate of L (asymptotic_rates) divided by ||D-||
L5_RATE_VS_SLOWEST = C.above(0.99)  # L5/rate-vs-slowest-mode-*: fitted rate / the slowest linearised GD rate at theta^inf
NEC_CONVERGES = C.below(1e-20)  # T1/necessity-converges: final L of the runs with S+,1 empty
NEC_GAP = C.above(0.01)  # T1/necessity-gap: rel.gap of their limit to the minimal norm
NEC_DIRECTIONS = C.above(3.0)  # T1/necessity-directions: number of distinct directions of their grown neurons
STEP_SIZE_INDEPENDENT = C.below(0.5)  # T1/step-size-independent: checks whose verdict depends on dt (StepSizes)


def trained_criterion(lp_value: float) -> "C.Criterion":
    """E8/ortho-B-trained: (1/2)||theta_lambda^inf||^2 equals the Eq. (8) linear program's value (relative 1e-6)."""
    return C.close_to(lp_value, rtol=1e-6)


@dataclass
class ImplicitRun:
    ens: dict  # name -> Ensemble
    mon: dict  # name -> Segmented
    pl: Segmented | None  # Lemma-5 replay of ORTHO-B
    pl_start: torch.Tensor | None  # (R,) flow time at which the replay starts
    nec: Ensemble | None
    nec_mon: Segmented | None
    eps: float
    seconds: float = 0.0
    nec_rejected: dict = field(default_factory=dict)  # seed -> why it was not a necessity run


class DistanceSummaries:
    """loss, grad_sq = ||grad L||^2 and dist = ||theta - theta_ref|| of every run's snapshots."""

    def __init__(self, ens: Ensemble, ref: Params):
        self.X, self.y = ens.data.X.cpu(), ens.data.y.cpu()
        self.ref = ref

    def __call__(self, a, W, runs):
        p, lead = flat_snapshots(a, W)
        S = lead[0]
        L, ga, gW = gradients(p, self.X, self.y)
        ra = self.ref.a[runs].repeat(S, 1)
        rW = self.ref.W[runs].repeat(S, 1, 1)
        dist = (((p.a - ra) ** 2).sum(1) + ((p.W - rW) ** 2).sum((1, 2))).sqrt()
        out = dict(loss=L, grad_sq=(ga ** 2).sum(1) + (gW ** 2).sum((1, 2)), dist=dist)
        return {k: v.reshape(lead) for k, v in out.items()}


def _train_to_convergence(ens: Ensemble, every: int, segment: int, capture=None, summarise=None) -> Segmented:
    T = phase_times(ens.k, ens.lams, 0.1)["horizon"]
    steps = int(math.ceil(float((T / ens.lrs).max()) / every)) * every
    return segmented_descent(ens, steps, every, max(every, segment // every * every), summarise=summarise,
                             capture=capture, stop_below=STOP)


def screen_necessity(name: str, width: int, seeds, first: bool = False) -> tuple[list[int], dict]:
    """Split ``seeds`` into those whose initialisation has S_{+,1} empty, S_{-,1} non-empty and every positive
    input activating some s = +1 neuron (the necessity runs of T1.5), and the rejected ones with the reason (the
    first condition that fails).  Each seed is drawn alone: a seed's initialisation does not depend on the others.
    With ``first`` it stops at the first seed kept (the validation rule asks only whether one exists)."""
    data = datasets.get(name, device="cpu")
    keep, rejected = [], {}
    for seed in seeds:
        p0 = init.balanced([int(seed)], width, data.d, 1.0, device="cpu")
        sp, sm = theory.key_sets(p0, data)
        Z = p0.W[0] @ data.X.T  # (m, n)
        plus = p0.a[0] > 0
        covered = ((Z[:, data.y > 0] > 0) & plus[:, None]).any(0).all()
        if bool(sp.any()):
            rejected[int(seed)] = "S+,1 not empty (Assumption 3 holds for the positive labels)"
        elif not bool(sm.any()):
            rejected[int(seed)] = "S-,1 empty"
        elif not bool(covered):
            rejected[int(seed)] = "a positive label activates no s = +1 neuron"
        else:
            keep.append(int(seed))
            if first:
                break
    return keep, rejected


def necessity_seeds(name: str, width: int, count: int, scan: int = 10_000) -> list[int]:
    """The first ``count`` seeds whose initialisation has S_{+,1} empty, S_{-,1} non-empty, and every
    positive input activating some s = +1 neuron (so that the positive labels can still be fitted)."""
    data = datasets.get(name, device="cpu")
    out = []
    for seed in range(scan):
        p0 = init.balanced([seed], width, data.d, 1.0, device="cpu")
        sp, sm = theory.key_sets(p0, data)
        Z = p0.W[0] @ data.X.T  # (m, n)
        plus = p0.a[0] > 0
        covered = ((Z[:, data.y > 0] > 0) & plus[:, None]).any(0).all()
        if not bool(sp.any()) and bool(sm.any()) and bool(covered):
            out.append(seed)
            if len(out) == count:
                return out
    raise RuntimeError(f"fewer than {count} seeds with S+,1 empty among the first {scan}")


def run_implicit(P) -> ImplicitRun:
    """Train every dataset's ensemble to convergence, replay ORTHO-B for Lemma 5, and the T1.5 runs."""
    t0 = time.perf_counter()
    ens, mon = {}, {}
    for name, width, lams, seeds in _planned(P):
        e = make_ensemble(name, width, lams, seeds, P.lrs)
        cap = None
        if name == "ortho-B":  # the state at t = -ln(lambda)/||D_+||, before the second exit: the replay starts there
            cap = e.iteration_at(phase_times(e.k, e.lams, P.eps)["exit1"])[:, None]
        ens[name] = e
        mon[name] = _train_to_convergence(e, P.every, P.segment, capture=cap)
    pl = pl_start = None
    if "ortho-B" in ens:
        e, m = ens["ortho-B"], mon["ortho-B"]
        it = e.iteration_at(phase_times(e.k, e.lams, P.eps)["exit1"])
        starts = [m.state(r, int(it[r])) for r in range(e.runs)]
        p0 = Params(torch.cat([s.a for s in starts]), torch.cat([s.W for s in starts]))
        replay = Ensemble(e.name, e.data, e.width, e.seeds, e.lams, e.lrs, p0, e.s_plus, e.s_minus, e.c, e.k)
        pl = _train_to_convergence(replay, P.pl_every, P.segment, summarise=DistanceSummaries(e, m.final))
        pl_start = it.to(DTYPE) * e.lrs
    nec = nec_mon = None
    nec_rejected = {}
    if "ortho-B" in ens:
        seeds, nec_rejected = screen_necessity("ortho-B", P.nec_width, P.nec_seeds)
        nec = make_ensemble("ortho-B", P.nec_width, [P.nec_lam], seeds, P.lrs)
        nec_mon = _train_to_convergence(nec, P.every, P.segment)
    return ImplicitRun(ens, mon, pl, pl_start, nec, nec_mon, P.eps, time.perf_counter() - t0, nec_rejected)


def squared_norms(p: Params) -> torch.Tensor:
    return (p.a ** 2).sum(1) + (p.W ** 2).sum((1, 2))


def stray_exponents(data: Dataset) -> dict:
    """Exponents of the slowest lambda-convergence of ||theta_lambda||^2 [derived in this book].

    A neuron of sign s active on a proper subset A of the labels of that sign (and on no other label)
    sees, while h ~ 0, D_j = (1/n) sum_{k in A} y_k x_k and grows like exp(||y_A|| t / n); it stops when the
    cluster of its sign has fitted the labels, at t ~ -ln(lambda) n/||y_sign||, so its norm is
    ~ lambda^(1 - ||y_A||/||y_sign||) and it adds ~ lambda^(2 (1 - ||y_A||/||y_sign||)) to ||theta||^2.
    ``subset``: the smallest such exponent over proper subsets A (the slowest decay); ``single``: the
    smallest over single labels (the spec's formula).  inf when no proper subset exists (one label).
    """
    import itertools

    y = data.y.cpu()
    best_sub, best_single = math.inf, math.inf
    for sign in (1, -1):
        v = (y[sign * y > 0]).abs().tolist()
        tot = math.sqrt(sum(x * x for x in v))
        for size in range(1, len(v)):
            for A in itertools.combinations(v, size):
                e = 2 * (1 - math.sqrt(sum(x * x for x in A)) / tot)
                best_sub = min(best_sub, e)
                if size == 1:
                    best_single = min(best_single, e)
    return {"subset": best_sub, "single": best_single}


def implicit_bias(run: ImplicitRun, name: str) -> dict:
    """Per run of one dataset: final loss, time to L < 1e-20 and the horizon T, rel.gap, norms of the
    neurons outside S_{+,1} u S_{-,1}, alignment of the neurons inside, the stray neuron's activation."""
    ens, mon = run.ens[name], run.mon[name]
    k = ens.k
    p = mon.final
    X, y = ens.data.X.cpu(), ens.data.y.cpu()
    T = phase_times(k, ens.lams, run.eps)["horizon"]
    nrm = p.W.norm(dim=-1)
    inside = ens.s_plus | ens.s_minus
    up, um = unit(k.d_plus.cpu()), unit(-k.d_minus.cpu())
    cos = torch.where(ens.s_plus, (p.W @ up) / nrm, torch.where(ens.s_minus, (p.W @ um) / nrm, torch.ones_like(nrm)))
    other = torch.where(inside, torch.zeros_like(nrm), nrm)
    t_conv = mon.first_time_below(LIMIT_LOSS, interpolate=False)
    # theta^infty_lambda, the limit Theorem 1 describes, exists only for a run that reached L < LIMIT_LOSS: a run that
    # did not (an untrained network, whose norms are lambda times its draw) measures nan, never a vanishing neuron
    other_max = torch.where(torch.isfinite(t_conv), other.amax(1), torch.full_like(nrm[:, 0], float("nan")))
    return dict(run=torch.arange(ens.runs), lam=ens.lams, lr=ens.lrs, seed=ens.seeds,
                loss=NET.loss(p, X, y, "half"), t_conv=t_conv, horizon=T,
                gap=(squared_norms(p) - k.min_sq_norm) / k.min_sq_norm,
                abs_gap=((squared_norms(p) - k.min_sq_norm) / k.min_sq_norm).abs(), other_max=other_max,
                other_arg=other.argmax(1), inside_min_cos=cos.amin(1))


def stray_pattern(run: ImplicitRun, name: str, r: int) -> tuple[int, list[float]]:
    """The sign and the (sorted) labels of the inputs that run r's largest neuron outside S+ u S- is active on."""
    ens, p = run.ens[name], run.mon[name].final
    nrm = torch.where(ens.s_plus[r] | ens.s_minus[r], torch.zeros(ens.width, dtype=DTYPE), p.W[r].norm(dim=-1))
    j = int(nrm.argmax())
    act = (p.W[r, j] @ ens.data.X.cpu().T) > 0
    return int(torch.sign(p.a[r, j])), sorted(ens.data.y.cpu()[act].tolist())


def predicted_stray(data: Dataset) -> tuple[int, list[float]]:
    """The sign and (sorted) labels of the proper same-sign subset A with the largest ||y_A||/||y_sign||:
    the neurons active on exactly it vanish slowest as lambda -> 0 (see :func:`stray_exponents`)."""
    import itertools

    y = data.y.cpu().tolist()
    best, score = (0, []), -1.0
    for sign in (1, -1):
        v = [x for x in y if sign * x > 0]
        tot = math.sqrt(sum(x * x for x in v))
        for size in range(1, len(v)):
            for A in itertools.combinations(v, size):
                sc = math.sqrt(sum(x * x for x in A)) / tot
                if sc > score:
                    best, score = (sign, sorted(A)), sc
    return best


def gap_exponents(ens: Ensemble, gap: torch.Tensor, floor: float = 1e-12) -> dict:
    """Per (seed, step size): the slope of ln(rel.gap) against ln(lambda) between the two smallest
    lambdas whose gap is above ``floor`` (the asymptotic exponent; nan if fewer than two)."""
    out = {"slope": [], "lr": [], "seed": [], "lams": []}
    for lr in ens.lrs.unique().tolist():
        for seed in ens.seeds.unique().tolist():
            idx = sorted(ens.index(seed=seed, lr=lr), key=lambda i: float(ens.lams[i]))
            ok = [i for i in idx if float(gap[i]) > floor]
            if len(ok) >= 2:
                i, j = ok[0], ok[1]
                s = math.log(float(gap[j]) / float(gap[i])) / math.log(float(ens.lams[j]) / float(ens.lams[i]))
                out["lams"].append((float(ens.lams[i]), float(ens.lams[j])))
            else:
                s = float("nan")
                out["lams"].append(())
            out["slope"].append(s)
            out["lr"].append(lr)
            out["seed"].append(seed)
    return {"slope": torch.tensor(out["slope"], dtype=DTYPE), "lr": torch.tensor(out["lr"], dtype=DTYPE),
            "seed": torch.tensor(out["seed"]), "lams": out["lams"]}


def decreasing_to_floor(ens: Ensemble, values: torch.Tensor, floor: float) -> dict:
    """Per (seed, step size): 1 if values decrease strictly as lambda decreases, until they are below
    ``floor`` (rounding); also the values in order of decreasing lambda."""
    out = {"ok": [], "lr": [], "seed": [], "seq": []}
    for lr in ens.lrs.unique().tolist():
        for seed in ens.seeds.unique().tolist():
            idx = sorted(ens.index(seed=seed, lr=lr), key=lambda i: -float(ens.lams[i]))
            v = values[idx]
            good = all(float(v[i + 1]) < float(v[i]) or float(v[i + 1]) < floor for i in range(len(idx) - 1))
            out["ok"].append(float(good))
            out["lr"].append(lr)
            out["seed"].append(seed)
            out["seq"].append(v.tolist())
    return {"ok": torch.tensor(out["ok"], dtype=DTYPE), "lr": torch.tensor(out["lr"], dtype=DTYPE),
            "seed": torch.tensor(out["seed"]), "seq": out["seq"]}


def cauchy(run: ImplicitRun, name: str) -> dict:
    """||theta_lambda - theta_lambda'|| for consecutive lambdas (same seed and step size): (G, L-1); nan for a pair
    with a run that never reached L < LIMIT_LOSS (no limit theta^infty_lambda to compare: an untrained ensemble,
    lambda times one draw, would otherwise make a Cauchy sequence by construction)."""
    ens, p = run.ens[name], run.mon[name].final
    reached = torch.isfinite(run.mon[name].first_time_below(LIMIT_LOSS, interpolate=False)).tolist()
    rows, lrs, seeds, pairs = [], [], [], []
    for lr in ens.lrs.unique().tolist():
        for seed in ens.seeds.unique().tolist():
            idx = sorted(ens.index(seed=seed, lr=lr), key=lambda i: -float(ens.lams[i]))
            d = [float((((p.a[i] - p.a[j]) ** 2).sum() + ((p.W[i] - p.W[j]) ** 2).sum()).sqrt())
                 if reached[i] and reached[j] else float("nan") for i, j in zip(idx[:-1], idx[1:])]
            rows.append(d)
            lrs.append(lr)
            seeds.append(seed)
            pairs = [(float(ens.lams[i]), float(ens.lams[j])) for i, j in zip(idx[:-1], idx[1:])]
    return {"diff": torch.tensor(rows, dtype=DTYPE), "lr": torch.tensor(lrs, dtype=DTYPE), "seed": torch.tensor(seeds),
            "pairs": pairs}


def consecutive_decreasing(diff: torch.Tensor, floor: float = 1e-10) -> torch.Tensor:
    """T1/cauchy-decreasing-*: per row of :func:`cauchy`'s ``diff``, 1 if the consecutive distances decrease (a value
    below ``floor``, the accuracy of theta^infty_lambda, counts as decreasing), else 0."""
    return torch.tensor([float(all(float(r[i + 1]) < float(r[i]) or float(r[i + 1]) < floor for i in range(len(r) - 1)))
                         for r in diff], dtype=DTYPE)


def direction_count(p: Params, r: int, rel: float = 1e-3, tol: float = 1e-6) -> int:
    """Number of distinct directions (cos > 1 - tol) among run r's neurons with ||w_j|| > rel * max."""
    nrm = p.W[r].norm(dim=-1)
    keep = nrm > rel * nrm.max()
    U = p.W[r][keep] / nrm[keep, None]
    groups: list[torch.Tensor] = []
    for u in U:
        if not any(float(u @ g) > 1 - tol for g in groups):
            groups.append(u)
    return len(groups)


def necessity(run: ImplicitRun) -> dict:
    """T1.5: runs with S_{+,1} empty: final loss, rel.gap, number of grown directions (per run)."""
    ens, mon = run.nec, run.nec_mon
    X, y = ens.data.X.cpu(), ens.data.y.cpu()
    p = mon.final
    return dict(seed=ens.seeds, lr=ens.lrs, loss=NET.loss(p, X, y, "half"),
                gap=(squared_norms(p) - ens.k.min_sq_norm) / ens.k.min_sq_norm,
                directions=torch.tensor([direction_count(p, r) for r in range(ens.runs)], dtype=DTYPE),
                s_plus=ens.s_plus.sum(1), s_minus=ens.s_minus.sum(1))


# -- Eq. (8) on orthonormal data ------------------------------------------------------------------
def orthonormal_certificate(data: Dataset, directions: np.ndarray | None = None) -> dict:
    """A dual certificate for Eq. (8) on orthonormal inputs [derived]: nu_k = y_k/||y_+|| (y_k > 0) and
    y_k/||y_-|| (y_k < 0).  For any signed measure mu with sum_i c_i sigma(<theta_i, x_k>) = y_k,
    <nu, y> = int sum_k nu_k sigma(<theta, x_k>) dmu <= sup_theta |sum_k nu_k sigma(<theta, x_k>)| |mu|, and for
    orthonormal x_k the sup over the whole sphere is max(||nu_+||, ||nu_-||) = 1, so every interpolating
    measure has |mu| >= <nu, y> = ||y_+|| + ||y_-||.  ``directions``: where the sup is also evaluated
    numerically (it must not exceed the closed form)."""
    X = data.X.cpu().numpy()
    y = data.y.cpu().numpy()
    if theory.orthogonality_defect(data) > 1e-12 or not np.allclose((X ** 2).sum(1), 1.0):
        raise ValueError("the closed-form certificate needs orthonormal inputs")
    yp, ym = np.clip(y, 0, None), np.clip(-y, 0, None)
    nu = yp / np.linalg.norm(yp) - ym / np.linalg.norm(ym)
    sup = max(np.linalg.norm(np.clip(nu, 0, None)), np.linalg.norm(np.clip(-nu, 0, None)))
    out = {"nu": nu, "lower": float(nu @ y) / sup, "sup": float(sup)}
    if directions is not None:
        out["sup_sampled"] = float(np.abs(np.maximum(X @ directions.T, 0.0).T @ nu).max())
    return out


# -- Lemma 5 ------------------------------------------------------------------------------------
def pl_ratio(p: Params, X: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(||grad L||^2 / L, L) for every run of p."""
    L, ga, gW = gradients(p, X, y)
    return ((ga ** 2).sum(1) + (gW ** 2).sum((1, 2))) / L, L


def lemma5_trajectory(run: ImplicitRun, loss_floor: float = 1e-24) -> dict:
    """Lemma 5 (a) along the ORTHO-B replays: per run the radius lambda^(eps/40), the time t_in from which
    the trajectory stays within it of theta_lambda^inf, and min ||grad L||^2/L over t >= t_in (records with
    L > loss_floor: below it the ratio is rounding noise)."""
    ens, pl = run.ens["ortho-B"], run.pl
    S = pl.summaries
    ts = pl.summary_time() + run.pl_start[:, None]
    radius = ens.lams ** (run.eps / 40)
    inside = S["dist"] < radius[:, None]
    # stays inside from index i on: the suffix of all-True
    suffix = torch.flip(torch.cummin(torch.flip(inside.to(torch.int8), [1]), 1).values, [1]).bool()
    has = suffix.any(1)
    first = suffix.to(torch.int8).argmax(1)
    t_in = torch.where(has, ts.gather(1, first[:, None])[:, 0], torch.full_like(radius, float("nan")))
    ratio = S["grad_sq"] / S["loss"]
    valid = suffix & (S["loss"] > loss_floor)
    min_ratio = torch.where(valid, ratio, torch.full_like(ratio, math.inf)).amin(1)
    start_dist = S["dist"][:, 0]
    return dict(run=torch.arange(ens.runs), lam=ens.lams, lr=ens.lrs, seed=ens.seeds, radius=radius, t_in=t_in,
                min_ratio=min_ratio, start_dist=start_dist, points=valid.sum(1))


def lemma5_ray(ens: Ensemble, final: Params, eps: float, grid: int = 400) -> dict:
    """Lemma 5 along the balanced segment from theta_lambda^inf towards theta_S^inf (its S_{-,1} neurons
    scaled by 1 - s): per run, the ratio at distance lambda^(eps/40), the largest distance rho* at which
    the ratio is still >= ||D_-|| (on a grid of the segment) and the lambda with lambda^(eps/40) = rho*;
    [derived] for perfectly aligned neurons the ratio is 4(1-s)^2 ||D_-|| and rho* = sqrt(2 n ||D_-||)/2."""
    k = ens.k
    X, y = ens.data.X.cpu(), ens.data.y.cpu()
    out = {x: [] for x in ("ratio_at_radius", "rho_star", "log10_lam_bind", "segment_length")}
    svals = torch.linspace(0, 1, grid + 1, dtype=DTYPE)[1:-1]
    for r in range(ens.runs):
        sm = ens.s_minus[r]
        a0, W0 = final.a[r], final.W[r]
        scale = torch.where(sm, 1 - svals[:, None], torch.ones(grid - 1, ens.width, dtype=DTYPE))
        pa = a0[None] * scale
        pW = W0[None] * scale[..., None]
        seg = float((((a0 * sm) ** 2).sum() + ((W0 * sm[:, None]) ** 2).sum()).sqrt())
        ratio, _ = pl_ratio(Params(pa, pW), X, y)
        dist = svals * seg
        ok = ratio >= k.norm_minus
        # the first s (from theta_inf outwards) where the ratio falls below ||D_-||
        bad = torch.nonzero(~ok)
        rho = float(dist[int(bad[0])]) if bad.numel() else seg
        rad = float(ens.lams[r]) ** (eps / 40)
        s_r = min(rad / seg, 1.0)
        q = Params((a0 * torch.where(sm, 1 - s_r, 1.0))[None], (W0 * torch.where(sm, 1 - s_r, 1.0)[:, None])[None])
        out["ratio_at_radius"].append(float(pl_ratio(q, X, y)[0][0]))
        out["rho_star"].append(rho)
        out["log10_lam_bind"].append(40 / eps * math.log10(rho))
        out["segment_length"].append(seg)
    return {x: torch.tensor(v, dtype=DTYPE) for x, v in out.items()}


def lemma5_random(ens: Ensemble, final: Params, eps: float, samples: int, seed: int = 0) -> torch.Tensor:
    """Lemma 5 (b): per run, min ||grad L||^2/L over ``samples`` random balanced points of the ball
    B(theta_lambda^inf, lambda^(eps/40)): W + delta with a uniformly random direction and a radius
    uniform in (0, rho], then a_j = s_j ||w_j|| (re-balanced), then shrunk if needed to stay in the ball."""
    X, y = ens.data.X.cpu(), ens.data.y.cpu()
    gen = torch.Generator().manual_seed(seed)
    out = []
    for r in range(ens.runs):
        rho = float(ens.lams[r]) ** (eps / 40)
        a0, W0 = final.a[r], final.W[r]
        s = torch.sign(a0)
        d = torch.randn(samples, *W0.shape, generator=gen, dtype=DTYPE)
        d = d / d.reshape(samples, -1).norm(dim=1)[:, None, None]
        rad = rho * torch.rand(samples, generator=gen, dtype=DTYPE)
        for _ in range(3):  # re-balancing moves a: shrink delta until the point is inside the ball
            W = W0[None] + rad[:, None, None] * d
            a = s[None] * W.norm(dim=-1)
            dist = (((a - a0) ** 2).sum(1) + ((W - W0) ** 2).sum((1, 2))).sqrt()
            rad = torch.where(dist > rho, rad * rho / dist * 0.999, rad)
        W = W0[None] + rad[:, None, None] * d
        a = s[None] * W.norm(dim=-1)
        dist = (((a - a0) ** 2).sum(1) + ((W - W0) ** 2).sum((1, 2))).sqrt()
        ratio, L = pl_ratio(Params(a, W), X, y)
        ok = (dist <= rho) & (L > 0)
        out.append(float(ratio[ok].min()))
    return torch.tensor(out, dtype=DTYPE)


def asymptotic_rates(run: ImplicitRun, name: str, lo: float = 1e-24, hi: float = 1e-16) -> dict:
    """Lemma 5 (c): the slope of ln L(t) on the records with lo < L < hi (late, above rounding), per run,
    and the linearised rates at theta_lambda^inf [derived]: the eigenvalues mu of J J^T (J_k = dh(x_k)/dtheta)
    give the flow's rates 2 mu / n and GD's -2 ln(1 - dt mu / n) / dt."""
    ens, mon = run.ens[name], run.mon[name]
    n = ens.data.n
    t = mon.loss_time()
    out = {x: [] for x in ("slope", "mu_rates", "gd_rates")}
    p = mon.final
    X = ens.data.X.cpu()
    for r in range(ens.runs):
        L = mon.loss[r]
        w = (L > lo) & (L < hi)
        if int(w.sum()) >= 3:
            out["slope"].append(float(np.polyfit(t[r][w].numpy(), np.log(L[w].numpy()), 1)[0]))
        else:
            out["slope"].append(float("nan"))
        # Jacobian of h(x_k) with respect to (a, W): d/da_j = sigma(<w_j,x_k>), d/dw_j = a_j 1{<w_j,x_k> > 0} x_k
        Z = p.W[r] @ X.T  # (m, n)
        Ja = torch.clamp_min(Z, 0).T  # (n, m)
        JW = (p.a[r][None, :, None] * (Z.T > 0).to(DTYPE)[..., None] * X[:, None, :]).reshape(n, -1)
        J = torch.cat([Ja, JW], 1)
        mu = torch.linalg.eigvalsh(J @ J.T)
        out["mu_rates"].append((2 * mu / n).tolist())
        dt = float(ens.lrs[r])
        out["gd_rates"].append((-2 * torch.log(torch.clamp_min(1 - dt * mu / n, 1e-300)) / dt).tolist())
    return {"slope": torch.tensor(out["slope"], dtype=DTYPE), "mu_rates": torch.tensor(out["mu_rates"], dtype=DTYPE),
            "gd_rates": torch.tensor(out["gd_rates"], dtype=DTYPE), "lam": ens.lams, "lr": ens.lrs, "seed": ens.seeds}
