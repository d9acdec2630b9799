"""003 (orthogonal inputs), chapter `remarks`: the remarks R1-R8 of Sections 3-4.

Conventions: training is on the paper's loss L = 1/(2n) sum_k (h(x_k) - y_k)^2 ("half"); the toy
experiments follow the authors' code (torch's mean MSE = 2L with step 1e-3, i.e. step 2e-3 on L, so GD
iteration k is gradient-flow time 2e-3 k, :func:`shallowflow.engine.models.flow_time_per_step`); the orthonormal
("ORTHO-B") experiments take steps of ``lr`` on L directly; the toy's initial scale is
lambda = init_scale / sqrt(m) (the authors' camera-ready convention).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ...engine import data as datasets
from ...engine import init, metrics, theory
from ... import verdicts as C
from ...engine.config import DTYPE
from ...engine.models import Network, Params, flow_time_per_step
from ...params import Float, Floats, Int, Ints, PROFILE, Rule, array_bytes, gd_bytes, gd_work
from ...engine.train import Trajectory, geometric_schedule, gradient_descent


ORTHO_B = dict(labels=[1.0, 1.0, -0.5, -0.5], d=6)


def sigma_prime_zero(step_sizes, c: float = 1.0, horizon: float = 1.0) -> dict:
    """The scalar system z' = -c sigma'(z), z(0) = 0, discretised by GD (explicit Euler), for both
    conventions sigma'(0) = 0 and sigma'(0) = 1 [derived illustration, spec R1].

    z is the pre-activation <w_j, x_k> of a neuron with s_j = +1 on a point with y_k < 0, at an
    activation boundary.  Returns, per convention and step size, the GD path on [0, horizon] and
    sup |z|; and, for the small-step limit z = 0, the residual |z'(0) + c sigma'(0)| of the ODE.
    """
    out = {}
    for conv in (0, 1):
        paths, sups = [], []
        for eta in step_sizes:
            K = int(round(horizon / eta))
            z = torch.zeros(K + 1, dtype=DTYPE)
            for k in range(K):  # K <= 1e4 scalar steps: an illustration, not a training loop
                dz = 1.0 if float(z[k]) > 0 else (float(conv) if float(z[k]) == 0 else 0.0)
                z[k + 1] = z[k] - eta * c * dz
            paths.append((torch.arange(K + 1, dtype=DTYPE) * eta, z))
            sups.append(float(z.abs().max()))
        out[conv] = dict(paths=paths, sup=torch.tensor(sups, dtype=DTYPE),
                         limit_residual=abs(0.0 + c * conv))  # the limit z = 0 has z'(0) = 0
    sup1 = out[1]["sup"]
    eta = torch.as_tensor(step_sizes, dtype=DTYPE)
    out["sup_slope_sigma1"] = float(torch.linalg.lstsq(
        torch.stack([eta.log(), torch.ones_like(eta)], 1), sup1.log()[:, None]).solution[0, 0])
    return out


def boundary_neuron_run(steps: int = 2000, lr: float = 0.05, scale: float = 1e-3) -> dict:
    """The library's GD from a neuron placed exactly on an activation boundary (spec R1).

    Data x_1 = e_1 (y = -1), x_2 = e_2 (y = +1) in R^2; one neuron w = (0, scale), a = +scale: its
    pre-activation on x_1 is exactly 0.  With sigma'(0) = 0 the update never has an e_1 component, so
    <w, x_1> stays exactly 0 (the flow solution z = 0); with sigma'(0) = 1 it would become
    -lr * a * (h(x_1) - y_1) / n < 0 at the first step.  Returns max_k |<w^k, x_1>| and the loss.
    """
    data = datasets.orthonormal([-1.0, 1.0], d=2, name="boundary", device="cpu")
    p0 = Params(torch.tensor([[scale]], dtype=DTYPE), torch.tensor([[[0.0, scale]]], dtype=DTYPE))
    traj = gradient_descent(p0, data, Network("relu"), steps=steps, lr=lr, loss="half",
                            snapshots=range(steps + 1))
    z1 = traj.snap_W[:, 0, 0, :] @ data.X[0]
    return dict(max_abs_z1=float(z1.abs().max()), final_loss=float(traj.loss[0, -1]),
                first_step_if_sigma1=lr * scale * (0.0 - (-1.0)) / data.n, traj=traj)


SCHEMA = {
    "profile": PROFILE,
    "width": Int("number of hidden neurons m of the toy", low=1, high=100_000),
    "seeds": Ints("toy seeds (one run per seed and per scale)", low=0, high=2 ** 63 - 1),
    "init_scales": Floats("toy initial scales; lambda = init_scale / sqrt(width)", low=0, low_open=True, high=10),
    "lr": Float("toy step on the authors' mean MSE (step 2 lr on L)", low=0, low_open=True, high=1),
    "steps": Int("toy GD iterations", low=1, high=10_000_000),
    "leak": Float("leaky-ReLU slope for R7", low=0, low_open=True, high=1),
    "sigma_steps": Floats("R1: GD step sizes of the scalar illustration", low=0, low_open=True, high=10),
    "a3_sizes": Ints("R3: numbers of data points n (balanced labels)", low=2, high=40),
    "a3_trials": Int("R3: Monte-Carlo trials per n", low=10, high=10_000_000),
    "a3_max_width": Int("R3: largest width m", low=1, high=10_000_000),
    "ortho_widths": Ints("R4: widths m on ORTHO-B (one ensemble per width)", low=1, high=100_000),
    "ortho_seeds": Ints("R4: seeds per width", low=0, high=2 ** 63 - 1),
    "ortho_scale": Float("R4: initial scale lambda on ORTHO-B", low=0, low_open=True, high=1),
    "ortho_lr": Float("R4-R6: GD step on L for ORTHO-B", low=0, low_open=True, high=1),
    "ortho_steps": Int("R4-R6: GD iterations on ORTHO-B", low=1, high=10_000_000),
    "wide_width": Int("R5, R6, R8: width of the ORTHO-B runs that satisfy Assumption 3", low=1, high=100_000),
    "wide_seeds": Ints("R5, R6, R8: seeds", low=0, high=2 ** 63 - 1),
    "near_scale": Float("R5: initial scale lambda", low=0, low_open=True, high=1),
    "near_delta_factors": Floats("R5: inner products delta between inputs, as multiples of near_scale", low=0, high=1e6),
    "near_delta_large": Float("R5: the large delta", low=0, low_open=True, high=0.3),
    "near_fine": Int("R5: the flow-limit replicate divides the step by this", low=1, high=1000),
    "unbalanced_scales": Floats("R6: initial scales lambda, largest first", low=0, low_open=True, high=10),
}


TOY_N, TOY_D = 2, 2  # the Section-5 toy (with the bias coordinate)
B_N, B_D = len(ORTHO_B["labels"]), ORTHO_B["d"]  # ORTHO-B and its variants (R4-R6, R8)
MC_UNITS = 10  # one Gaussian draw and its tests in the Assumption-3 Monte Carlo (R3)
LIBRARY_CELLS = ((2, 2), (2, 3), (2, 5), (4, 10), (6, 30))  # the (n, m) cells of the chapter's assumption3_library


def _sigma_steps(P) -> float:
    """Scalar Python steps of :func:`sigma_prime_zero` (R1): round(1 / eta) per step size, for both conventions."""
    return 2 * sum(1 / eta for eta in P.sigma_steps)


def _mc_draws(P) -> float:
    """Gaussian draws of :func:`assumption3_monte_carlo` (R3), an estimate: each trial draws n projections per
    neuron until both key sets are non-empty, which for n_+ = ceil(n/2) positive labels takes about 2^(n_+ + 1)
    neurons (a sign and n_+ non-negative projections); 4 times that (the doubling blocks overshoot), capped at
    a3_max_width."""
    return sum(P.a3_trials * n * min(P.a3_max_width, 4 * 2.0 ** ((n + 1) // 2 + 1)) for n in P.a3_sizes)


def _ensembles(P) -> list[tuple[int, int, int, int, int, int]]:
    """(runs, width, n, d, steps, stored snapshots) of every GD ensemble the chapter trains: the toy sweep (R2) and
    its leaky-ReLU twin (R7), the width sweep (R4: both datasets of a width in one call), the nearly orthogonal runs
    (R5) and their fine-step replicate, the balanced and unbalanced runs (R6), and the boundary neuron (R1)."""
    geo = geometric_schedule
    fine_seeds = min(2, len(P.wide_seeds))
    return ([(len(P.init_scales) * len(P.seeds), P.width, TOY_N, TOY_D, P.steps, len(geo(P.steps, 1.02))),
             (len(P.seeds), P.width, TOY_N, TOY_D, P.steps, len(geo(P.steps, 1.02)))]
            + [(2 * len(P.ortho_seeds), m, B_N, B_D, P.ortho_steps, 0) for m in sorted(set(P.ortho_widths))]
            + [((len(P.near_delta_factors) + 1) * len(P.wide_seeds), P.wide_width, B_N, B_D, P.ortho_steps,
                len(geo(P.ortho_steps, 1.05))),
               (3 * fine_seeds, P.wide_width, B_N, B_D, P.ortho_steps * P.near_fine,
                len(geo(P.ortho_steps * P.near_fine, 1.05))),
               (2 * len(P.unbalanced_scales) * len(P.wide_seeds), P.wide_width, B_N, B_D, P.ortho_steps, 0),
               (1, 1, 2, 2, 2000, 2001)])


def work_estimate(P) -> float:
    """Work units (:func:`shallowflow.params.gd_work`) of the chapter: every GD ensemble of :func:`_ensembles`
    (runs x width x points x dim x steps), R1's scalar Python loop (a step's overhead per step), R3's Monte Carlo
    (:func:`_mc_draws`, MC_UNITS each) and its library check (init.balanced of max(200, a3_trials // 2) seeds per
    cell)."""
    units = sum(gd_work(R, m, n, d, k) for R, m, n, d, k, _ in _ensembles(P))
    units += gd_work(1, 1, 1, 1, _sigma_steps(P))
    units += MC_UNITS * _mc_draws(P)
    units += max(200, P.a3_trials // 2) * sum(m * (n + 3) for n, m in LIBRARY_CELLS)
    return units


def memory_estimate(P) -> float:
    """Bytes of the largest allocation: one GD ensemble (:func:`shallowflow.params.gd_bytes`, its loss every
    iteration and its stored snapshots), R1's path of the smallest step, or R3's arrays (a block of at most 2e7
    draws, float32, with its signs and masks, and a few arrays per trial)."""
    return max([gd_bytes(R, m, n, d, k, snapshots=S) for R, m, n, d, k, S in _ensembles(P)]
               + [array_bytes(1 / min(P.sigma_steps) + 1, copies=3),
                  2e7 * 4 * 4 + array_bytes(P.a3_trials, copies=8)])


RULES = (Rule(("near_delta_factors", "near_scale"), lambda P: max(P.near_delta_factors) * P.near_scale <= 0.3,
              "the inner products delta = factor * near_scale must be at most 0.3 (like near_delta_large)"),
         Rule.memory(("width", "seeds", "init_scales", "steps", "ortho_widths", "ortho_seeds", "ortho_steps", "wide_width",
                      "wide_seeds", "near_delta_factors", "near_fine", "unbalanced_scales", "sigma_steps", "a3_trials"),
                     memory_estimate, what="the largest ensemble with its loss records and snapshots"),
         Rule.work(("width", "seeds", "init_scales", "steps", "sigma_steps", "a3_sizes", "a3_trials", "a3_max_width",
                    "ortho_widths", "ortho_seeds", "ortho_steps", "wide_width", "wide_seeds", "near_delta_factors",
                    "near_fine", "unbalanced_scales"), work_estimate,
                   what="every GD ensemble (runs x width x steps), R1's loop and R3's Monte Carlo"))


@dataclass
class ToySweep:
    """Toy runs (seeds x initial scales) trained as one ensemble."""

    data: datasets.Dataset
    network: Network
    seeds: list[int]
    init_scales: list[float]  # init_scale of each run
    traj: Trajectory
    p0: Params
    width: int

    def runs_at(self, init_scale: float) -> list[int]:
        return [i for i, s in enumerate(self.init_scales) if s == init_scale]

    @property
    def lam(self) -> torch.Tensor:
        return torch.tensor(self.init_scales, dtype=DTYPE) / math.sqrt(self.width)


# Pass criteria of the R2 checks whose null scenario the tests run (tests/test_null_orthogonal_inputs.py)
R2_MIN_NORM_SMALL = C.below(1e-3)  # init_scale <= 1e-2: ||theta||^2 within 1e-3 (relative) of the minimum
R2_MIN_NORM_LARGER = C.below(1e-2)  # init_scale 0.1 and 1: within 1e-2
R2_NO_PLATEAU = C.below(100)  # R2/no-plateau-large-init: longest stretch with L within 1% of 0.25 (iterations)
R2_SINGLE_ESCAPE = C.within(1, 1)  # R2/single-escape-large-init: number of saddle escapes
R4_NOT_MIN_NORM = C.above(1e-2)  # R4/not-min-norm: class B rel. gap of ||theta||^2 to the minimum
R4_MORE_KINKS = C.above(3)  # R4/more-kinks: class B number of kinks (grown directions)
R6_GAP_VANISHES = C.below(1e-6)  # R6/gap-vanishes: unbalanced |rel. gap| at the smallest lambda
R6_GAP_DECREASES = C.below(1.0)  # R6/gap-decreases: max over scales of gap(next smaller lambda) / gap
R5_SAME_LIMIT = C.below(1e-6)  # R5/delta-lambda-same-limit: rel. change of ||theta||^2 against delta = 0
NO_TURNING = C.below(1e-3)  # R5/delta-lambda-no-turning, R8/*: max turning of the grown neurons (rad)
R7_CONVERGES = C.below(1e-10)  # R7/converges: the leaky ReLU's final loss
R4_FEWER_NEURONS_MORE_KINKS = C.below(0.0)  # R4/fewer-neurons-more-kinks: width_kink_correlation (Spearman)
R7_NOT_MIN_NORM = C.above(1e-3)  # R7/not-min-norm: rel. gap of the leaky ReLU's ||theta||^2 to its LP minimal norm


def max_turning(turning: torch.Tensor) -> torch.Tensor:
    """Per run, the largest turning angle of its grown neurons (metrics.turning_angles; a neuron that never grew, NaN
    there, counts 0)."""
    return torch.nan_to_num(turning, nan=0.0).amax(1)


def gap_ratios(gaps: torch.Tensor) -> torch.Tensor:
    """R6/gap-decreases: per seed, the largest ratio gap(next smaller lambda) / gap over ``gaps`` (scales, seeds),
    the scales largest first (below 1: the gap decreases at every smaller lambda)."""
    return (gaps[1:] / gaps[:-1]).amax(0)


def width_kink_correlation(S4: dict) -> float:
    """R4/fewer-neurons-more-kinks: Spearman's correlation of the width and the number of kinks (grown directions)
    over the runs of :func:`width_sweep_summary` that converge (classes A and B); nan with fewer than three."""
    from scipy.stats import spearmanr

    conv = S4["cls"] < 2
    return spearmanr(S4["width"][conv].numpy(), S4["directions"][conv].numpy()).statistic if int(conv.sum()) > 2 \
        else float("nan")


def relative_change(values: torch.Tensor, reference: torch.Tensor) -> torch.Tensor:
    """|values - reference| / reference (R5: ||theta||^2 at a delta against the same seeds at delta = 0)."""
    return (values - reference).abs() / reference
# the source's level drawn on the R2 figure (003 Section 3.2): "For larger values of lambda [...] the parameters
# empirically seem to also converge towards a minimal norm interpolator" (Theorem 1 for small lambda); the minimal
# ||theta||^2 of the toy is a value of the data (6/sqrt(5), theory.min_norm_interpolator)
SOURCE_R2_LIMIT = "Section 3.2: a minimal-norm interpolator"


def run_toy_sweep(width: int, init_scales, seeds, lr: float, steps: int, network: Network = Network("relu"),
                  snapshot_factor: float = 1.02, data=None) -> ToySweep:
    """Every (init_scale, seed) pair on the orthogonal toy, one ensemble; step 2 lr on L (mean MSE)."""
    data = data if data is not None else datasets.get("orthogonal-toy")
    scales = [float(s) for s in init_scales for _ in seeds]
    run_seeds = [int(r) for _ in init_scales for r in seeds]
    p0 = init.balanced(run_seeds, width, data.d, [s / math.sqrt(width) for s in scales])
    traj = gradient_descent(p0, data, network, steps=steps, lr=flow_time_per_step(lr, "mean"), loss="half",
                            snapshots=geometric_schedule(steps, snapshot_factor))
    return ToySweep(data, network, run_seeds, scales, traj, p0.to("cpu"), width)


def toy_sweep_summary(sweep: ToySweep, min_squared_norm: float) -> dict:
    """Final loss, ||theta||^2, relative gap to the minimum, plateau length at L(theta_S), escapes."""
    data = sweep.data.to("cpu")
    p = sweep.traj.final
    L = sweep.traj.loss
    sq = metrics.squared_norm(p)
    return dict(
        final_loss=L[:, -1],
        squared_norm=sq,
        rel_gap=(sq - min_squared_norm) / min_squared_norm,
        # distance of ||theta||^2 to the minimum, relative: an untrained network (gap -1) is far from it
        norm_gap=((sq - min_squared_norm) / min_squared_norm).abs(),
        plateau=metrics.longest_run_within(L, theory.saddle_loss(data), 0.01) * int(sweep.traj.loss_steps[1]),
        saddles=metrics.saddle_visits(L, sweep.traj.loss_steps),
        turning=metrics.turning_angles(sweep.traj.snap_W, p.W),
    )


def assumption3_monte_carlo(sizes, trials: int, max_width: int, seed: int = 0,
                            widths=(1, 2, 3, 5, 10, 30, 100, 300, 1000, 3000, 10_000)) -> dict:
    """Monte Carlo of Assumption 3 for orthonormal data with n_+ = ceil(n/2) positive labels.

    For orthonormal x_k and g_j ~ N(0, I_d), the projections <g_j, x_k> are i.i.d. N(0, 1); each trial
    draws neurons (Gaussian projections and a sign s_j ~ U{-1, 1}) one after the other and records the
    critical width M* = the smallest m for which the first m neurons give non-empty S_{+,1} and
    S_{-,1} (censored above ``max_width``).  P(Assumption 3 at width m) is then P(M* <= m) for every
    m at once.  All trials of an n are one batched draw per block of neurons.
    """
    gen = torch.Generator().manual_seed(int(seed))
    widths = [w for w in widths if w <= max_width]
    res = {}
    for n in sizes:
        n_pos, n_neg = (n + 1) // 2, n // 2
        inf = max_width + 1
        first_p = torch.full((trials,), inf, dtype=torch.int64)
        first_m = torch.full((trials,), inf, dtype=torch.int64)
        pending = torch.arange(trials)
        done, block = 0, 64
        while done < max_width and pending.numel() > 0:
            c = max(1, min(block, max_width - done, int(2e7 // max(1, pending.numel() * n))))
            G = torch.randn(pending.numel(), c, n, generator=gen, dtype=torch.float32)
            s = torch.randint(0, 2, (pending.numel(), c), generator=gen)
            in_p = (s == 1) & (G[..., :n_pos] >= 0).all(-1)
            in_m = (s == 0) & (G[..., n_pos:] >= 0).all(-1)
            for hit, first in ((in_p, first_p), (in_m, first_m)):
                idx = torch.where(hit.any(1), hit.to(torch.int8).argmax(1) + done + 1, torch.full_like(pending, inf))
                first[pending] = torch.minimum(first[pending], idx)
            done += c
            block *= 2
            pending = pending[(first_p[pending] == inf) | (first_m[pending] == inf)]
        mstar = torch.maximum(first_p, first_m)
        p_hat = torch.tensor([float((mstar <= m).double().mean()) for m in widths], dtype=DTYPE)
        exact = torch.tensor([theory.assumption3_probability(n_pos, n_neg, m) for m in widths], dtype=DTYPE)
        product = torch.tensor([theory.assumption3_probability_product(n_pos, n_neg, m) for m in widths], dtype=DTYPE)
        q95 = float(torch.quantile(mstar.double(), 0.95, interpolation="higher"))
        res[n] = dict(n_pos=n_pos, n_neg=n_neg, mstar=mstar, p_hat=p_hat, exact=exact, product=product,
                      m95=q95 if q95 <= max_width else math.inf, m95_exact=_m95_exact(n_pos, n_neg))
    return dict(per_n=res, widths=widths, trials=trials)


def _m95_exact(n_pos: int, n_neg: int) -> int:
    lo, hi = 1, 2
    while theory.assumption3_probability(n_pos, n_neg, hi) < 0.95:
        hi *= 2
    while lo < hi:
        mid = (lo + hi) // 2
        if theory.assumption3_probability(n_pos, n_neg, mid) >= 0.95:
            hi = mid
        else:
            lo = mid + 1
    return lo


def z_scores(p_hat: torch.Tensor, p: torch.Tensor, trials: int) -> torch.Tensor:
    """(p_hat - p) / sqrt(p (1 - p) / trials); 0 where both agree exactly (degenerate p in {0, 1})."""
    se = (p * (1 - p) / trials).sqrt()
    diff = p_hat - p
    return torch.where(diff == 0, torch.zeros_like(diff), diff / se.clamp_min(1e-300))


def bonferroni_z(cells: int, level: float = 0.0027) -> float:
    """Two-sided critical |z| for a family-wise error ``level`` over ``cells`` comparisons (3 sigma: 0.0027)."""
    from scipy.stats import norm

    return float(norm.ppf(1 - level / (2 * max(1, cells))))


def library_criterion(cells) -> "C.Criterion":
    """R3/library-path: every cell's |z| within the 3-sigma family-wise bound over the cells (Bonferroni)."""
    return C.below(bonferroni_z(len(cells)), strict=False)


def assumption3_library(cells, trials: int, delta: float = 0.0) -> dict:
    """P(Assumption 3) from the library's own path: init.balanced on a random orthonormal frame
    (data.orthonormal, seeded) and theory.key_sets, one batch of ``trials`` seeds per (n, m) cell.  ``delta`` > 0:
    the inputs of data.nearly_orthonormal instead (<x_k, x_l> = +-delta, not orthonormal: the exact form's premise
    is false)."""
    out = []
    for n, m in cells:
        labels = [1.0] * ((n + 1) // 2) + [-1.0] * (n // 2)
        data = datasets.orthonormal(labels, d=n + 2, seed=1000 + n, device="cpu") if delta == 0 else \
            datasets.nearly_orthonormal(labels, delta, d=n + 2, seed=1000 + n, device="cpu")
        p0 = init.balanced(list(range(trials)), m, data.d, 1.0, device="cpu")
        sp, sm = theory.key_sets(p0, data)
        p_hat = float((sp.any(1) & sm.any(1)).double().mean())
        exact = theory.assumption3_probability((n + 1) // 2, n // 2, m)
        out.append(dict(n=n, m=m, p_hat=p_hat, exact=exact,
                        z=float(z_scores(torch.tensor([p_hat]), torch.tensor([exact]), trials)[0])))
    return dict(cells=out, trials=trials)


def covered_labels(p0: Params, data: datasets.Dataset) -> torch.Tensor:
    """(R, n): label k is *covered* when some neuron has s_j = sign(y_k) and <w_j, x_k> > 0 at init.

    For orthogonal inputs a neuron's pre-activation on an inactive x_k never changes under GF or GD
    (its update lies in the span of the points it is active on), so an uncovered label can never be
    fitted and the loss stays >= y_k^2 / (2n) [derived].  Assumption 3 implies that every label is
    covered; the converse fails."""
    Z = p0.W @ data.X.T  # (R, m, n)
    s = torch.where(p0.a >= 0, 1.0, -1.0)
    return ((Z > 0) & (s[..., None] == torch.sign(data.y)[None, None, :])).any(1)


def distinct_growth_rates(p: Params, data: datasets.Dataset, grown_rel: float = 0.1, grown_threshold: float = 1e-3,
                          rtol: float = 1e-6) -> torch.Tensor:
    """Number of distinct growth rates among the grown neurons, per run (grown as in
    :func:`shallowflow.engine.metrics.distinct_directions`).  A neuron of sign s active on the points A grows, once
    aligned, at the rate ||D_A|| of its key vector D_A = (1/n) sum over k in A with sign(y_k) = s of y_k x_k,
    which for orthonormal inputs is sqrt(sum of those y_k^2) / n [derived]; kinks of equal rate (tied labels)
    grow together, so they leave their saddle in one escape."""
    out = []
    for Wr, ar in zip(p.W, p.a):
        nr = Wr.norm(dim=-1)
        keep = (nr > grown_threshold) & (nr >= grown_rel * nr.max())
        act = (Wr[keep] @ data.X.T) > 0  # (grown, n)
        same = torch.sign(data.y)[None, :] == torch.sign(ar[keep])[:, None]
        rates = ((act & same) * data.y ** 2).sum(1).sqrt() / data.n
        reps: list[float] = []
        for r in sorted(rates.tolist()):
            if not reps or abs(r - reps[-1]) > rtol * max(abs(r), 1e-300):
                reps.append(r)
        out.append(len(reps))
    return torch.tensor(out)


ORTHO_GENERIC = dict(labels=[1.0, 0.8, -0.5, -0.35], d=6)  # distinct labels: no tied growth rates


def r4_datasets() -> list:
    """ORTHO-B (the spec's dataset: y = (1, 1, -0.5, -0.5)) and the same inputs with distinct labels."""
    return [datasets.get("ortho-B"), datasets.orthonormal(name="ortho-distinct", **ORTHO_GENERIC)]


@dataclass
class WidthSweep:
    data: list  # the datasets
    widths: list[int]
    seeds: list[int]
    entries: list[tuple[int, int]]  # (dataset index, width) of each trajectory
    trajs: list[Trajectory]
    p0s: list[Params]
    lr: float


def run_width_sweep(dsets, widths, seeds, scale: float, lr: float, steps: int) -> WidthSweep:
    """Every dataset at every width: one ensemble per (dataset, width), trained by
    gradient_descent_many, which groups the ensembles of equal width into one computation."""
    from ...engine.train import gradient_descent_many

    entries = [(i, int(m)) for i in range(len(dsets)) for m in widths]
    p0s = [init.balanced(list(seeds), m, dsets[i].d, scale) for i, m in entries]
    trajs = gradient_descent_many(p0s, [dsets[i] for i, _ in entries], Network("relu"), lr=lr, steps=steps,
                                  loss="half")
    return WidthSweep([d.to("cpu") for d in dsets], [int(m) for m in widths], list(seeds), entries, trajs,
                      [p.to("cpu") for p in p0s], lr)


def width_sweep_summary(sw: WidthSweep) -> dict:
    """Per run: dataset index, width, Assumption 3, label coverage, class (0: A3 holds, 1: A3 fails but
    every label is covered, 2: some label uncovered), final loss, relative gap to the minimal norm,
    number of grown directions (kinks), escapes, ends-on-plateau, loss floor of uncovered labels, number of
    distinct growth rates of the grown neurons."""
    cols = {k: [] for k in ("dataset", "width", "a3", "covered", "final_loss", "rel_gap", "directions",
                            "escapes", "ends_on_plateau", "uncovered_floor", "rates")}
    for (i, m), t, p0 in zip(sw.entries, sw.trajs, sw.p0s):
        data = sw.data[i]
        min_sq = theory.min_norm_interpolator(data).squared_norm
        sp, sm = theory.key_sets(p0, data)
        ok = covered_labels(p0, data)  # (R, n)
        sv = metrics.saddle_visits(t.loss, t.loss_steps)
        cols["dataset"].append(torch.full((p0.runs,), i))
        cols["width"].append(torch.full((p0.runs,), m))
        cols["a3"].append(sp.any(1) & sm.any(1))
        cols["covered"].append(ok.all(1))
        cols["final_loss"].append(t.loss[:, -1])
        cols["rel_gap"].append((metrics.squared_norm(t.final) - min_sq) / min_sq)
        cols["directions"].append(metrics.distinct_directions(t.final.W))
        cols["rates"].append(distinct_growth_rates(t.final.to("cpu"), data))
        cols["escapes"].append(sv["escapes"])
        cols["ends_on_plateau"].append(sv["ends_on_plateau"])
        cols["uncovered_floor"].append(((~ok) * data.y ** 2).sum(1) / (2 * data.n))
    out = {k: torch.cat(v) for k, v in cols.items()}
    out["cls"] = torch.where(out["a3"], 0, torch.where(out["covered"], 1, 2))  # A, B, C
    return out


def run_nearly_orthogonal(width: int, seeds, scale: float, deltas, lr: float, steps: int,
                          snapshot_factor: float = 1.05) -> dict:
    """ORTHO-B labels on inputs with <x_k, x_l> = +-delta (seeded signs), one ensemble over
    (delta, seed) with per-run data; delta = 0 is ORTHO-B itself.  Balanced init at ``scale``."""
    runs = [(float(dl), int(s)) for dl in deltas for s in seeds]
    dsets = [datasets.nearly_orthonormal(ORTHO_B["labels"], dl, d=ORTHO_B["d"], seed=0) for dl, _ in runs]
    p0 = init.balanced([s for _, s in runs], width, ORTHO_B["d"], scale)
    traj = gradient_descent(p0, dsets, Network("relu"), steps=steps, lr=lr, loss="half",
                            snapshots=geometric_schedule(steps, snapshot_factor))
    return dict(deltas=torch.tensor([dl for dl, _ in runs], dtype=DTYPE), seeds=[s for _, s in runs],
                traj=traj, p0=p0.to("cpu"), data=[d.to("cpu") for d in dsets],
                squared_norm=metrics.squared_norm(traj.final),
                turning=metrics.turning_angles(traj.snap_W, traj.final.W),
                final_loss=traj.loss[:, -1])


def run_unbalanced(width: int, seeds, scales, lr: float, steps: int) -> dict:
    """ORTHO-B with balanced and with unbalanced (a_j ~ lambda N(0, 1)) initialisations at each scale,
    same seeds (same g_j), one ensemble."""
    data = datasets.get("ortho-B")
    runs = [(kind, float(lam), int(s)) for kind in ("balanced", "unbalanced") for lam in scales for s in seeds]
    lam = [l for _, l, _ in runs]
    sd = [s for _, _, s in runs]
    pb = init.balanced(sd, width, data.d, lam)
    pu = init.unbalanced(sd, width, data.d, lam)
    bal = torch.tensor([k == "balanced" for k, _, _ in runs])
    p0 = Params(torch.where(bal[:, None], pb.a, pu.a.to(pb.a.device)), pb.W)
    traj = gradient_descent(p0, data, Network("relu"), steps=steps, lr=lr, loss="half")
    min_sq = theory.min_norm_interpolator(data.to("cpu")).squared_norm
    sq = metrics.squared_norm(traj.final)
    p0c = p0.to("cpu")
    imbalance = (metrics.balancedness(p0c).abs().amax(1) / metrics.neuron_norms(p0c).amax(1) ** 2)
    return dict(kind=[k for k, _, _ in runs], scale=torch.tensor(lam, dtype=DTYPE), seeds=sd, traj=traj,
                rel_gap=(sq - min_sq) / min_sq, final_loss=traj.loss[:, -1], min_squared_norm=min_sq,
                initial_imbalance=imbalance)
