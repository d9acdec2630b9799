"""002 (early alignment), chapter `spurious`: Figure 2 and Theorem 2 on the three-point data: one monitored
run, its phases (Lemmas 9-24), its limit (a spurious stationary point) and the tests of that limit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from ...engine import data as datasets
from ...engine import metrics
from ... import verdicts as C
from ...engine.checkpoint import resumable
from ...engine.config import DTYPE
from ...engine.models import Network, Params, loss_factor
from ...engine.monitor import Monitored, train_monitored
from ...params import Bool, Float, Int, Ints, PROFILE, Rule, STEP_BUDGET, ensemble_bytes, gd_work
from ...engine.train import animation_frames, gradient_descent
from .theory import (
    CPU, LOSS, OLS, activation_counts, authors_frames, grad_factor, initialise, key_vector, largest_frame_rise,
    masked_reduce, misalignment, neuron_sets, ols, phase_monitor)
from .alignment import EXPONENT_TOL


SCHEMA = {
    "profile": PROFILE,
    "width": Int("number of hidden neurons m of the Figure 2 run", low=1, high=1_000_000),
    "init_scale": Float("lambda of eq. (3): a, w of size lambda / sqrt(m)", low=0, low_open=True, high=100),
    "lr": Float("gradient-descent step on the mean squared error (flow time per step)", low=0, low_open=True, high=1),
    "steps": Int("gradient-descent iterations", low=1, high=100_000_000),
    "seeds": Ints("one balanced run per seed (the figure shows the first)", low=0, high=2 ** 63 - 1),
    "monitor_every": Int("iterations between two observations of the phase quantities", low=1, high=10_000_000),
    "eps": Float("epsilon of Theorem 1: tau = eps ln(1/lambda) / ||D|| [R]", low=0, low_open=True, high=1),
    "eps2": Float("Phase 2a ends when sum over S+ of ||w_j||^2 reaches eps2 [choice of the spec]", low=0, low_open=True, high=1),
    "eps3": Float("Phase 2b ends when ||sum over S+ of a_j w_j - beta*|| <= eps3 [choice of the spec]", low=0, low_open=True, high=1),
    "width_dominated": Int("width of the dominated-initialisation run (nature of the limit)", low=1, high=1_000_000),
    "steps_dominated": Int("iterations of the dominated run", low=1, high=100_000_000),
    "balance_width": Int("width of the two short runs that measure the balancedness drift", low=1, high=1_000_000),
    "balance_time": Float("flow time of those runs", low=0, low_open=True, high=1e6),
    "perturbations": Int("random perturbations of the local-minimum test", low=1, high=10_000_000),
    "animation_frames": Int("frames of the animation (E4), taken from the authors' snapshot schedule; 0: none",
                            low=0, high=1000),
    "control_width": Int("width of the two control runs that break a lemma's hypothesis (unbalanced initialisation "
                         "for Lemma 1, leaky ReLU for Lemma 4 (3))", low=1, high=1_000_000),
    "control_time": Float("flow time of the control runs", low=0, low_open=True, high=1e6),
    "resume": Bool("keep each finished ensemble (the monitored Figure 2 runs, the dominated run, the balancedness runs, "
                   "the control runs) on disk and read it back when the same parameters run again with the same package "
                   "code (shallowflow.engine.checkpoint): an interrupted paper run resumes at the first ensemble it had "
                   "not finished, with identical numbers; off in the book and smoke profiles"),
    "control_leak": Float("negative slope of the leaky ReLU of the Lemma 4 control", low=0, low_open=True, high=1),
}
def _phase1_iterations(P) -> float:
    """k_eps = eps ln(1/init_scale) / (||D|| lr): the iteration where Phase 1 ends (a snapshot is taken there)."""
    data = datasets.get("ea-three-point", device=CPU)
    return P.eps * math.log(1 / P.init_scale) / float(key_vector(data.X, data.y).norm()) / P.lr


def _lemma4_iterations(P) -> float:
    """Iterations to tau_eps at the smallest lambda of the Lemma 4 (1) runs (init_scale x min LEM4_SCALE_FACTORS)."""
    data = datasets.get("ea-three-point", device=CPU)
    lam = P.init_scale * min(LEM4_SCALE_FACTORS)
    return P.eps * math.log(1 / lam) / float(key_vector(data.X, data.y).norm()) / P.lr


# the source's level drawn on the loss figure (002 Theorem 2 and Section 7): gradient flow "only converges towards a
# spurious stationary point (corresponding to the least squares regressor)", i.e. its loss settles on the OLS loss
# L*_lin, a value the source states as a formula of the data (the figure evaluates it on the three points)
SOURCE_LIMIT = "Theorem 2: the OLS loss"
FINAL_AT_OLS = C.below(1e-5)  # E2/final-loss (spec E2.1): |L_final - L_lin*| <= 1e-5
NEVER_BELOW_OLS = C.above(-1e-6)  # E2/plateau-never-broken: min over the run of L - L_lin*
PREDICTIONS = C.below(1e-4)  # E2/predictions: max |h(x_k) - <beta*, x_k>|
LINEAR_EQUIVALENCE = C.below(1e-3)  # E2/linear-equivalence: |sum a_j w_j - beta*| over the all-active neurons
SINGLE_NEURON = C.above(0.999)  # E2/single-neuron: min cos(w_j, beta*) over the positive all-active neurons
RELU_OLS = C.below(1e-3)  # E2/relu-ols: sup distance of h to relu(<beta*, (x, 1)>) on [-1, 1]
OLS_ON_HULL = C.below(1e-4)  # E2/ols-on-hull: sup distance of h to the OLS line on [x_1, x_3]
MOVED_FROM_D = C.above(0.0, strict=True)  # E2/moved-from-D: median cos(w_j, beta*) minus median cos(w_j, D), S+ all-active
SADDLE_DESCENT = C.below(0.0)  # S5-limit/saddle-descent: largest dL of the one-neuron replacement at the balanced limit
DOMINATED_SPURIOUS = C.below(1e-5)  # S5-limit/dominated-spurious: |L - L_lin*| at the end of the dominated run
POSITIVITY = C.above(0.0, strict=True)  # Lem5/positivity, Lem6/positivity: min cos(w_j, x_k) over S+ on the window
NEGATIVE_SMALL_TAU3 = C.below(1e-2)  # Lem6/negative-small: max |a_j| over a_j < 0 at tau_3
DRIFT_BOUND = C.below(1e-3)  # Lem1/drift-bound: GD drift of a_j^2 - |w_j|^2 over max a_j^2 (balancedness runs, step lr)
PANEL_CD_ALIGNED = C.below(1e-4)  # E2/panel-cd-aligned: median 1 - cos(w_j, D) over S+ at tau_2
FINITE_PATH = C.below(1e-5)  # Lem9-24/finite-path: share of the path length in the last 20% of the run (tail_fit)
ANIMATION_ENDS_AT_OLS = C.below(1e-5)  # E4/figure2-ends-spurious: |L - L_lin*| at the last frame of the animation
ANIMATION_DESCENT = C.below(1e-12)  # E4/figure2-descent: largest loss rise between consecutive frames over L(0)
PANEL_CD_LOSS = C.above(0.9)  # E2/panel-cd-loss: L / L(0) at tau_2 (the function is still nearly 0)
SADDLE_PREDICTION = C.below(1e-3)  # S5-limit/saddle-prediction: max relative gap of dL to its first-order prediction
DRIFT_HALVES = C.within(1.8, 2.2)  # Lem1/drift-halves: balancedness drift at step lr over the drift at lr / 2
EXPONENTIAL_TAIL = C.above(1e4)  # Lem7/exponential-tail: the fall of L - L_lin* over the fitted window (tail_fit)
# S5-limit/dominated-no-zero-neuron: min |a_j| of the dominated limit (local_min_test's min_abs_a) over the
# balancedness bound min_j sqrt(a_j(0)^2 - |w_j(0)|^2) (dominated_bound): Lemma 1 keeps |a_j| above it.  A plain
# comment, as beside the other criteria here: a documented (#:) attribute of this module holding a Criterion made
# sphinx.ext.viewcode link verdicts/criteria.py's source page to anchors of this module that do not exist
DOMINATED_NO_ZERO = C.above(1 - 1e-6)


def dominated_bound(p0) -> float:
    """S5-limit/dominated-no-zero-neuron: the balancedness bound min_j sqrt(a_j(0)^2 - |w_j(0)|^2) of a start ``p0``
    (0 for a balanced start), below which gradient flow cannot take any |a_j| (Lemma 1)."""
    return float(((p0.a ** 2) - (p0.W ** 2).sum(-1)).clamp_min(0).sqrt().min())


# The invariants of Lemma 1 (the sign of every a_j is constant) and Lemma 4 (3) (the S0 neurons never move) hold for
# a network that does not train at all. Two safeguards make their checks able to fail for the right reason:
# - a learning gate, stated in advance [the book's choice]: a run counts only when its loss fell by at least the
#   factor LEARNED_LOSS_FALL (L(0) / L(T) >= 2; the OLS limit of Theorem 2 is a fall of L(0) / L_lin*, about 3.5 on
#   the Figure 2 data) and its parameters moved by at least LEARNED_MOVED times their initial norm
#   (|theta_T - theta_0| >= |theta_0|); a run that fails the gate measures NaN, and a check over it fails;
# - a control that breaks the lemma's hypothesis, on which the check's own criterion must fail: an unbalanced
#   initialisation for Lemma 1 (Eq. (4) is what fixes the signs; "without it, some of the weights change their sign
#   during the early alignment phase" [T, Section 5]) and a leaky ReLU for Lemma 4 (3) ("using leaky ReLU
#   activations, neurons in S0 become relevant" [T, Section 5]).
LEARNED_LOSS_FALL = 2.0
LEARNED_MOVED = 1.0
SIGNS_FIXED = C.below(0.5)  # Lem1/signs-fixed: no output weight changes sign (count over the run)
S0_FROZEN = C.below(0.0, strict=False)  # Lem4/s0-never-move: the largest change of an S0 neuron is exactly 0
CONTROL_OBSERVATIONS = 100  # observations of each control run (the same phase monitor as the Figure 2 run)


def fails(criterion: C.Criterion) -> C.Criterion:
    """The criterion of a control check: it holds where ``criterion`` fails on every measured value (and, as every
    criterion, never on a NaN, so a control that did not train cannot pass)."""
    return C.Criterion(f"fails '{criterion.text}'", lambda v: ~criterion.test(v))


def learning_gate(mon: Monitored) -> dict:
    """Per run: the loss fall L(0) / L(T), the distance moved |theta_T - theta_0| / |theta_0| (all parameters), and
    whether both pass the gate (LEARNED_LOSS_FALL, LEARNED_MOVED)."""
    p0, p = mon.p0, mon.final
    L = mon.series["loss"]
    fall = L[:, 0] / L[:, -1]
    dist = ((p.a - p0.a) ** 2).sum(-1).add(((p.W - p0.W) ** 2).sum((-1, -2))).sqrt()
    moved = dist / (p0.a ** 2).sum(-1).add((p0.W ** 2).sum((-1, -2))).sqrt()
    return dict(fall=fall, moved=moved, passed=(fall >= LEARNED_LOSS_FALL) & (moved >= LEARNED_MOVED))


def gated(values, passed: torch.Tensor) -> torch.Tensor:
    """Per-run values where the run passed its learning gate, NaN where it did not."""
    v = torch.as_tensor(values, dtype=DTYPE)
    return torch.where(passed, v, torch.full_like(v, math.nan))


def negative_norm_change(mon: Monitored, obs: int) -> torch.Tensor:
    """Lem4/negative-norms-decreased: per run, the largest norm of a negative neuron (a_j(0) < 0) at observation ``obs``
    over its initial norm, minus 1, gated by the run's learning gate."""
    return gated(mon.series["neg_norm_ratio"][:, obs] - 1, learning_gate(mon)["passed"])


def negative_norms_criterion(lr: float, D: torch.Tensor) -> C.Criterion:
    """Lem4/negative-norms-decreased and Lem5/negative-norms: at most the initial norm, up to (lr |D|)^2, the growth
    one GD step adds to the squared norm of a neuron orthogonal to its D_j (the lemmas are gradient-flow statements)."""
    return C.below((lr * float(D.norm())) ** 2, strict=False)


# Lemma 4 (1), "Positive neurons are aligned with D" at tau_eps (002:140), "a direct application of Theorem 1"
# (002:147): the bound is stripped from the text; the book reads Theorem 1 (ii) as 1 - cos(w_j(tau_eps), D) =
# O(lambda^(2 eps)) [R] (the chapter alignment: for a balanced neuron on one cone tan(theta/2) = tan(theta_0/2)
# e^(-||D|| t)). The O() has no constant to compare one lambda with, so the check measures, per run, the fitted
# exponent in lambda of max over S+ of 1 - cos(w_j(tau_eps), D) at the chapter's lambda and at LEM4_SCALE_FACTORS
# times it (the same seeds and width: the same initial directions, each run to its own tau_eps), against at least
# 2 eps less Theorem 1 (ii)'s tolerance (alignment.EXPONENT_TOL): the O() bounds the misalignment from above, so a
# faster alignment satisfies the lemma too. A network that does not align (untrained: the misalignment does not fall
# with lambda) has exponent 0 and fails it (tests/test_controls_h002.py).
LEM4_SCALE_FACTORS = (1.0, 0.1, 0.01)


def _tau_eps_iterations(eps: float, scale: float, D_norm: float, lr: float) -> int:
    return int(round(eps * math.log(1 / scale) / D_norm / lr))


def max_positive_misalignment(p: Params, plus: torch.Tensor, D: torch.Tensor) -> torch.Tensor:
    """Lem4/positive-aligned: per run, the largest 1 - cos(w_j, D) over the S+ neurons (``plus``, (R, m)) of ``p``."""
    return masked_reduce(misalignment(p.W, D), plus, "max")


def lemma4_alignment(P, data: datasets.Dataset, D: torch.Tensor, net: Network, at_scale: Params | None = None) -> dict:
    """Lemma 4 (1): for each lambda in init_scale x LEM4_SCALE_FACTORS, the balanced runs of the chapter's seeds and
    width trained to their own tau_eps (:func:`gradient_descent`, step lr), and per run the largest misalignment over
    S+ there (:func:`max_positive_misalignment`). ``at_scale``: the chapter's run at its own tau_eps (reused, not
    re-trained). Returns ``scales`` (S,), ``iterations`` (S,), ``max_mis`` (S, R) and ``valid`` (R,)."""
    scales = [P.init_scale * f for f in LEM4_SCALE_FACTORS]
    mis, its, valid = [], [], torch.ones(len(P.seeds), dtype=torch.bool)
    for f, sc in zip(LEM4_SCALE_FACTORS, scales):
        k = _tau_eps_iterations(P.eps, sc, float(D.norm()), P.lr)
        p0 = initialise("balanced", P.seeds, P.width, 2, sc)
        if f == 1.0 and at_scale is not None:
            q = at_scale
        else:
            q = gradient_descent(p0, data, net, steps=k, lr=P.lr, loss=LOSS, snapshots=[k]).final if k > 0 else p0
        valid &= metrics.finite_runs(q)
        mis.append(max_positive_misalignment(q, neuron_sets(p0, data.X)["plus"], D))
        its.append(k)
    return dict(scales=torch.tensor(scales, dtype=DTYPE), iterations=torch.tensor(its), max_mis=torch.stack(mis),
                valid=valid)


def alignment_exponent(scales: torch.Tensor, max_mis: torch.Tensor) -> torch.Tensor:
    """Lem4/positive-aligned: per run, the least-squares slope of log max_mis (S, R) against log scales (S,)."""
    lx = torch.log(scales)
    lx = lx - lx.mean()
    ly = torch.log(max_mis)
    return (lx[:, None] * (ly - ly.mean(0))).sum(0) / (lx ** 2).sum()


def positive_aligned_criterion(eps: float) -> C.Criterion:
    """Lem4/positive-aligned: 1 - cos = O(lambda^(2 eps)) bounds the misalignment from above, so the exponent must
    reach 2 eps, less the tolerance of Theorem 1 (ii)'s criterion (0.15, the chapter alignment); a faster alignment
    (a larger exponent) satisfies the lemma too, so the criterion is one-sided."""
    return C.above(2 * eps - EXPONENT_TOL)


def invariants(mon: Monitored) -> dict:
    """The invariant measurements of a monitored run (Figure 2's or a control's), each gated by the run's learning
    gate: sign changes of the output weights (Lemma 1), the largest change of an S0 neuron at any observation and
    at the end (Lemma 4 (3); NaN when S0 is empty), and the size of S0."""
    g = learning_gate(mon)
    s = mon.series
    return dict(gate=g, sign_flips=gated(s["sign_flips"].amax(1), g["passed"]),
                s0_moved=gated(s["zero_moved"].amax(1), g["passed"]),
                s0_moved_end=gated(s["zero_moved"][:, -1], g["passed"]))


# Lem1/control-flips-unbalanced: a start counts as a_j(0)^2 < |w_j(0)|^2 only beyond float64 rounding. A balanced draw
# a_j = +-|w_j| (engine.init.balanced) leaves a_j^2 - |w_j|^2 of either sign at a few ulps of |w_j|^2 (the norm, its
# square and the sum of squares each round once or twice: at most about 6 eps relative); counted as unbalanced, such
# a neuron made a balanced start whose weight crossed zero by GD's finite-step drift (not Lemma 1's reason) pass the
# check (tests/test_controls_h002.py). Neurons below -ROUNDING_ULPS eps |w_j(0)|^2 are unbalanced.
ROUNDING_ULPS = 8
FLIPS_UNBALANCED = C.above(1.0)  # Lem1/control-flips-unbalanced: every weight that changed sign started unbalanced


def flips_where_unbalanced(mon: Monitored) -> torch.Tensor:
    """Per run: the share of the output weights whose sign changed (final against initial) that started with
    a_j(0)^2 < |w_j(0)|^2 (beyond rounding: below -ROUNDING_ULPS eps |w_j(0)|^2), the only neurons Lemma 1's
    conserved quantity lets cross a_j = 0 under gradient flow; gated by the run's learning gate (NaN when no weight
    changed sign)."""
    flipped = (mon.final.a * mon.p0.a) <= 0
    neg = metrics.balancedness(mon.p0) < -ROUNDING_ULPS * torch.finfo(DTYPE).eps * (mon.p0.W ** 2).sum(-1)
    share = (flipped & neg).sum(-1).to(DTYPE) / flipped.sum(-1).to(DTYPE)
    return gated(share, learning_gate(mon)["passed"])


def run_controls(P, data: datasets.Dataset, o: OLS, D: torch.Tensor) -> dict:
    """The two control runs (first seed, ``control_width`` neurons, ``control_time`` of flow time at the chapter's
    step and scale), observed by the Figure 2 run's phase monitor: "unbalanced" (ReLU, independent Gaussian layers,
    Eq. (4) broken) and "leaky" (balanced, leaky ReLU of slope ``control_leak``)."""
    X, y = data.X, data.y
    k = max(1, int(round(P.control_time / P.lr)))
    every = max(1, k // CONTROL_OBSERVATIONS)
    out = {}
    for name, kind, net in (("unbalanced", "unbalanced", Network("relu")),
                            ("leaky", "balanced", Network("leaky_relu", leak=P.control_leak))):
        p0 = initialise(kind, P.seeds[:1], P.control_width, 2, P.init_scale)
        mon = phase_monitor(X, y, neuron_sets(p0, X), p0, o.beta, D, P.eps2, P.eps3, {"tau2": {}, "tau3": {}}, net)
        out[name] = train_monitored(p0, data, net, steps=k, lr=P.lr, every=every, monitor=mon)
    return out


RULES = (Rule.at_most("monitor_every", "steps", "the run is observed at least once after the start"),
         Rule(("eps", "init_scale", "lr", "steps"), lambda P: 0 <= _phase1_iterations(P) <= P.steps,
              "Phase 1 must end within the run: 0 <= eps ln(1/init_scale) / (||D|| lr) <= steps",
              lambda P: f"it ends at iteration {_phase1_iterations(P):.4g}"),
         Rule.budget(("balance_time", "lr"), lambda P: 2 * P.balance_time / P.lr, STEP_BUDGET,
                     what="the balancedness runs (balance_time / (lr / 2))"),
         Rule.budget(("control_time", "lr"), lambda P: P.control_time / P.lr, STEP_BUDGET,
                     what="the control runs (control_time / lr)"),
         Rule.budget(("eps", "init_scale", "lr"), lambda P: _lemma4_iterations(P), STEP_BUDGET,
                     what="the Lemma 4 (1) runs to tau_eps at the smallest of init_scale x LEM4_SCALE_FACTORS"),
         Rule.memory(("width", "seeds", "width_dominated", "balance_width", "control_width"),
                     lambda P: ensemble_bytes(len(P.seeds), P.width, 2, 60) + ensemble_bytes(1, P.width_dominated, 2, 8)
                     + ensemble_bytes(2, P.balance_width, 2, 8) + ensemble_bytes(2, P.control_width, 2, 8)
                     + ensemble_bytes(len(P.seeds), P.width, 2, 8)
                     + Network.evaluate_bytes(len(P.seeds), P.width, 2001),
                     what="the ensembles, their snapshots and the limit's evaluation on 2001 points"),
         Rule.work(("width", "seeds", "steps", "monitor_every", "width_dominated", "steps_dominated", "balance_width",
                    "balance_time", "lr", "perturbations", "control_width", "control_time"), lambda P: work_estimate(P),
                   what="the runs (above the budget: a GPU or a cluster)"))


def work_estimate(P) -> float:
    """Work units (:func:`shallowflow.params.gd_work`) on the three points (d = 2): the monitored runs (one per seed,
    steps; every observation counted as one more step), the dominated run, the balancedness runs at lr and lr / 2
    (3 balance_time / lr steps in all), the two control runs (control_time / lr steps each, observed
    :data:`CONTROL_OBSERVATIONS` times), the Lemma 4 (1) runs (one per seed at each smaller lambda of
    :data:`LEM4_SCALE_FACTORS`, to its tau_eps) and the two local-minimum tests (two radii x perturbations forward
    passes of the dominated and the balanced limit)."""
    return (gd_work(len(P.seeds), P.width, 3, 2, P.steps + P.steps / P.monitor_every)
            + gd_work(len(P.seeds), P.width, 3, 2, len(LEM4_SCALE_FACTORS) * max(_lemma4_iterations(P), 0))
            + 2 * gd_work(1, P.control_width, 3, 2, P.control_time / P.lr + CONTROL_OBSERVATIONS)
            + gd_work(1, P.width_dominated, 3, 2, P.steps_dominated) + gd_work(1, P.balance_width, 3, 2, 3 * P.balance_time / P.lr)
            + 2 * gd_work(P.perturbations, P.width_dominated, 3, 2, 1) + 2 * gd_work(P.perturbations, P.width, 3, 2, 1))


@dataclass
class Figure2Run:
    data: datasets.Dataset
    network: Network
    scale: float  # lambda
    run: Monitored  # the balanced runs (one per seed)
    sets: dict  # S+, S0, S- masks (R, m)
    ols: OLS
    D: torch.Tensor
    tau_eps: float  # flow time of the end of Phase 1 (Theorem 1, [R])
    k_eps: int  # its iteration
    captures: dict  # "tau2", "tau3" -> (iteration per run, Params of run 0)
    dominated: Monitored
    balance: dict
    frames: list  # iterations of the animation (E4): the authors' schedule, at most animation_frames of them
    valid: dict = field(default_factory=dict)  # "run" (R,), "dominated" (1,), "balance" (2,), "unbalanced", "leaky" (1,)
    controls: dict = field(default_factory=dict)  # "unbalanced", "leaky" -> Monitored (see run_controls)
    lemma4: dict = field(default_factory=dict)  # Lemma 4 (1) at tau_eps over LEM4_SCALE_FACTORS (lemma4_alignment)


def run_figure2(P) -> Figure2Run:
    """Figure 2 / Theorem 2: balanced runs on the three-point data, observed every ``monitor_every`` iterations;
    a dominated run for the nature of the limit; two short runs for the balancedness drift (Lemma 1); the two
    control runs of the invariants (:func:`run_controls`).  With ``P.resume`` (the paper profile) each of these four
    ensembles, seeded by its own seeds only, is one chunk of :func:`shallowflow.engine.checkpoint.resumable`, keyed by
    every parameter."""
    data = datasets.get("ea-three-point", device=CPU)
    X, y = data.X, data.y
    net = Network("relu")
    o = ols(X, y)
    D = key_vector(X, y)
    p0 = initialise("balanced", P.seeds, P.width, 2, P.init_scale)
    sets = neuron_sets(p0, X)
    tau_eps = P.eps * math.log(1 / P.init_scale) / float(D.norm())
    k_eps = int(round(tau_eps / P.lr))
    frames = animation_frames(authors_frames(P.steps), P.animation_frames) if P.animation_frames else []

    def main():
        captures = {"tau2": {}, "tau3": {}}
        mon = phase_monitor(X, y, sets, p0, o.beta, D, P.eps2, P.eps3, captures, net)
        run = train_monitored(p0, data, net, steps=P.steps, lr=P.lr, every=P.monitor_every, monitor=mon,
                              snapshots=[0, k_eps, P.steps] + frames)
        return run, captures

    def dominated():  # the nature of the limit: a dominated initialisation (|a~| > ||w~||) at the same scale
        pd = initialise("dominated", P.seeds[:1], P.width_dominated, 2, P.init_scale)
        return train_monitored(pd, data, net, steps=P.steps_dominated, lr=P.lr, every=P.steps_dominated)

    def balance():  # Lemma 1: balancedness drift of GD at step lr and lr / 2 over the same flow time
        pb = initialise("balanced", P.seeds[:1] * 2, P.balance_width, 2, P.init_scale)
        bal = {}
        for name, lr in (("lr", P.lr), ("half_lr", P.lr / 2)):
            k = int(round(P.balance_time / lr))
            q0 = pb.select(0)
            tr = gradient_descent(q0, data, net, steps=k, lr=lr, loss=LOSS, snapshots=[k])
            q = tr.final
            bal[name] = dict(drift=float((metrics.balancedness(q) - metrics.balancedness(q0)).abs().max()),
                             max_a_sq=float((q.a ** 2).max()), flips=int(((q.a * q0.a) <= 0).sum()),
                             valid=metrics.finite_runs(tr.loss, q))
        return bal

    parts = dict(main=main, dominated=dominated, balance=balance, controls=lambda: run_controls(P, data, o, D))
    key = {k: v for k, v in sorted(vars(P).items()) if k not in ("profile", "resume")}
    (run, captures), dom, bal, ctl = resumable("early-alignment/spurious", key, list(parts), lambda c: parts[c](),
                                               enabled=bool(getattr(P, "resume", False)))
    lem4 = lemma4_alignment(P, data, D, net, at_scale=run.snaps[k_eps])
    valid = dict(run=metrics.finite_runs(run.loss, run.final), dominated=metrics.finite_runs(dom.loss, dom.final),
                 balance=torch.cat([bal["lr"]["valid"], bal["half_lr"]["valid"]]),
                 **{name: metrics.finite_runs(c.loss, c.final) for name, c in ctl.items()})
    valid["lemma4"] = valid["run"] & lem4["valid"]
    return Figure2Run(data, net, P.init_scale, run, sets, o, D, tau_eps, k_eps, captures, dom, bal, frames, valid, ctl,
                      lem4)


def phase_times(fr: Figure2Run) -> dict:
    """tau_eps (end of Phase 1, [R]), tau_2 (end of Phase 2a) and tau_3 (end of Phase 2b) per run, in flow time."""
    R = fr.run.final.runs
    t2 = torch.tensor([fr.captures["tau2"].get(r, (-1, None))[0] for r in range(R)], dtype=DTYPE)
    t3 = torch.tensor([fr.captures["tau3"].get(r, (-1, None))[0] for r in range(R)], dtype=DTYPE)
    lr = fr.run.lr
    return dict(tau_eps=torch.full((R,), fr.tau_eps, dtype=DTYPE),
                tau2=torch.where(t2 >= 0, t2 * lr, torch.full_like(t2, math.nan)),
                tau3=torch.where(t3 >= 0, t3 * lr, torch.full_like(t3, math.nan)),
                k2=t2.long(), k3=t3.long())


def window(fr: Figure2Run, name: str, t_lo, t_hi, how: str) -> torch.Tensor:
    """min/max of a monitored series over the flow-time window [t_lo, t_hi] of each run."""
    s = fr.run.series[name]
    t = fr.run.time()
    lo = torch.as_tensor(t_lo, dtype=DTYPE).reshape(-1, 1)
    hi = torch.as_tensor(t_hi, dtype=DTYPE).reshape(-1, 1)
    inside = (t >= lo - 1e-12) & (t <= hi + 1e-12)
    return masked_reduce(s, inside, how)


def end_state(fr: Figure2Run, p: Params | None = None, grid=(-1.0, 1.0)) -> dict:
    """The limit checks of Figure 2 (g, h) and Theorems 2 and 4 for parameters p (default: the final ones)."""
    p = fr.run.final if p is None else p
    X, y = fr.data.X, fr.data.y
    o = fr.ols
    net = fr.network
    L = net.loss(p, X, y, LOSS)
    pred = net.forward(p, X)
    cnt = activation_counts(p, X)
    allact = cnt["all"]
    lin = torch.einsum("rm,rmd->rd", torch.where(allact, p.a, torch.zeros_like(p.a)), p.W)
    pos_all = allact & (p.a > 0)
    cos_beta = (p.W @ (o.beta / o.beta.norm())) / metrics.neuron_norms(p).clamp_min(1e-300)
    Dn = fr.D / fr.D.norm()
    cos_D = (p.W @ Dn) / metrics.neuron_norms(p).clamp_min(1e-300)
    xs = torch.linspace(grid[0], grid[1], 2001, dtype=DTYPE)
    Xg = datasets.augment_bias(xs)
    h = net.evaluate(p, Xg)  # 2001 points x width 20,000 at paper scale: blocks of runs, not 2 x 1 GB at once
    relu_ols = torch.clamp_min(Xg @ o.beta, 0.0)
    hx = fr.data.x1d
    inside = (xs >= hx.min()) & (xs <= hx.max())
    return dict(
        loss=L, pred_err=(pred - o.pred).abs().amax(-1), L_star=float(o.loss),
        n_all=allact.sum(-1), n_none=cnt["none"].sum(-1), n_partial=cnt["partial"].sum(-1),
        lin_err=(lin - o.beta).norm(dim=-1),
        min_cos_beta=masked_reduce(cos_beta, pos_all, "min"),
        median_cos_beta=masked_reduce(cos_beta, pos_all, "median"),
        median_cos_D=masked_reduce(cos_D, pos_all, "median"),
        neg_abs_a=masked_reduce(p.a.abs(), p.a < 0, "max"),
        neg_all_active=(allact & (p.a < 0)).sum(-1),
        sup_relu_ols=(h - relu_ols).abs().amax(-1),
        sup_hull=torch.where(inside, (h - Xg @ o.beta).abs(), torch.zeros_like(h)).amax(-1),
    )


def saddle_test(fr: Figure2Run, rhos=(1e-3, 1e-2), run: int = 0) -> dict:
    """Section 5, "Nature of the stationary point" [T], balanced case: replace the neuron of smallest norm of the
    limit by rho (1, w_+) with w_+ = (1, 0) (relu(x), active on the points with x > 0 only).  To first order
    L changes by (2/n) rho^2 sum_k r_k relu(x_k) [derived], negative when those residuals are negative."""
    p = fr.run.final.select(run)
    X, y = fr.data.X, fr.data.y
    net = fr.network
    L0 = float(net.loss(p, X, y, LOSS))
    j = int(((p.a[0] ** 2) + (p.W[0] ** 2).sum(-1)).argmin())
    wplus = torch.tensor([1.0, 0.0], dtype=DTYPE)
    out = dict(neuron=j, neuron_norm=float(((p.a[0, j] ** 2) + (p.W[0, j] ** 2).sum()).sqrt()), rho=[], dL=[],
               predicted=[])
    relu_x = torch.clamp_min(X @ wplus, 0.0)
    for rho in rhos:
        q = p.clone()
        q.a[0, j] = rho
        q.W[0, j] = rho * wplus
        out["rho"].append(rho)
        out["dL"].append(float(net.loss(q, X, y, LOSS)) - L0)
        out["predicted"].append(grad_factor(LOSS) / fr.data.n * rho ** 2 * float((fr.ols.resid * relu_x).sum()))
    return out


def local_min_test(p: Params, data: datasets.Dataset, count: int, radius_factor: float = 0.1, seed: int = 0,
                   radii=(1e-3,), directions: int = 64, grow_delta0: float | None = None) -> dict:
    """Section 5 [T], dominated case: delta_0 = the smallest distance of an inactive positive neuron to the
    hyperplane of a data point (how far the limit is from a neuron that could start to fit a residual);
    ``count`` random perturbations of norm radius_factor * delta_0, and of the norms in ``radii``; and, at the norm
    radius_factor * delta_0 (or * ``grow_delta0``: another limit's delta_0, to compare two limits at one radius),
    every neuron moved alone along (+-1, u) for ``directions`` unit vectors u (``grow_min``: the smallest second-order
    change over those moves, (dL - gradient . move) / radius^2): the move that takes a zero neuron down a saddle, which random draws miss."""
    X, y = data.X, data.y
    net = Network("relu")
    cnt = activation_counts(p, X)
    inactive_pos = cnt["none"][0] & (p.a[0] > 0)
    dist = ((p.W[0] @ X.T).abs() / X.norm(dim=1)).amin(-1)
    delta0 = float(dist[inactive_pos].min()) if bool(inactive_pos.any()) else math.inf
    L0 = float(net.loss(p, X, y, LOSS))
    gen = torch.Generator().manual_seed(int(seed))
    m, d = p.width, p.dim

    def trial(radius):
        out = []
        batch = max(1, int(2e6 // (m * (d + 1))))
        for start in range(0, count, batch):
            k = min(batch, count - start)
            v = torch.randn(k, m * (d + 1), generator=gen, dtype=DTYPE)
            v = v / v.norm(dim=1, keepdim=True) * radius
            q = Params(p.a + v[:, :m], p.W + v[:, m:].reshape(k, m, d))
            out.append(net.loss(q, X, y, LOSS) - L0)
        return torch.cat(out)

    def grow(radius):
        # the directions random draws miss: one neuron at a time moved by radius (s, u) / sqrt(2), s = +-1, u one of
        # ``directions`` unit vectors (d = 2) or a signed axis; at a zero neuron this is the saddle's descent direction
        # (saddle_test). The loss change is summed from the moved neuron's own output change df (not as a difference
        # of two losses), so a change of order radius^2 survives rounding: returned as (dL - g . move) / radius^2
        if d == 2:
            ang = torch.arange(directions, dtype=DTYPE) * (2 * math.pi / directions)
            U = torch.stack([torch.cos(ang), torch.sin(ang)], 1)
        else:
            U = torch.cat([torch.eye(d, dtype=DTYPE), -torch.eye(d, dtype=DTYPE)])
        c = net.scale(m)
        r = (net.forward(p, X) - y)[0]  # residuals at the point (n,)
        k = loss_factor(LOSS) / X.shape[0]
        _, ga, gW = net.gradients(p, X, y, LOSS)
        h = radius / math.sqrt(2)
        out = []
        for sgn in (1.0, -1.0):
            for j in range(m):
                a0, w0 = p.a[0, j], p.W[0, j]
                a1 = a0 + sgn * h
                w1 = w0 + U * h
                df = c * (a1 * torch.clamp_min(w1 @ X.T, 0.0) - a0 * torch.clamp_min(X @ w0, 0.0))  # (K, n)
                # the first-order term g . move is the end point's residual gradient (the run stops near, not at, the
                # stationary point): removed, what is left is the second-order change a minimum keeps >= 0
                first = ga[0, j] * sgn * h + (U * h) @ gW[0, j]
                out.append((k * (2 * df @ r + (df ** 2).sum(-1)) - first) / radius ** 2)
        return torch.cat(out)

    small = trial(radius_factor * delta0) if math.isfinite(delta0) else torch.tensor([math.nan])
    grow_radius = radius_factor * (delta0 if grow_delta0 is None else grow_delta0)
    grown = float(grow(grow_radius).min()) if math.isfinite(grow_radius) and grow_radius > 0 else math.nan
    return dict(grow_radius=grow_radius, delta0=delta0, min_dL=float(small.min()), radius=radius_factor * delta0,
                min_abs_a=float(p.a.abs().min()), by_radius={r: float(trial(r).min()) for r in radii},
                grow_min=grown)


def tail_fit(fr: Figure2Run, lo: float = 1e-12, hi: float = 1e-5, run: int = 0) -> dict:
    """Lemma 7 / Lemma 22: fit log(L - L*) against flow time where L - L* lies in [lo, hi]; the local PL ratio
    norm(grad L)^2 / (L - L*) of Lemma 21 on the same window, and the path length after it (Lemma 23)."""
    s = fr.run.series
    t = fr.run.time()[run]
    ex = s["loss"][run] - fr.ols.loss
    win = (ex >= lo) & (ex <= hi)
    tt, ll = t[win].numpy(), np.log(ex[win].numpy())
    out = dict(points=int(win.sum()))
    if win.sum() >= 3:
        A = np.vstack([tt, np.ones_like(tt)]).T
        coef, res, *_ = np.linalg.lstsq(A, ll, rcond=None)
        pred = A @ coef
        r2 = 1 - ((ll - pred) ** 2).sum() / ((ll - ll.mean()) ** 2).sum()
        ratio = (s["grad_sq"][run][win] / ex[win])
        out.update(rate=-coef[0], r2=r2, fall=float(ex[win].max() / ex[win].min()), t_lo=float(tt.min()),
                   t_hi=float(tt.max()), pl_min=float(ratio.min()), pl_median=float(ratio.median()),
                   pl_first=float(ratio[0]))
    path = s["path"][run]
    total = float(path.sum())
    cut = int(0.8 * path.numel())
    out.update(path_total=total, path_last20=float(path[cut:].sum()))
    return out
