"""000, negative controls (issue 42, item 6): each test builds a case where a deciding check's claim is false with the
package's own functions (an untrained network, a lazy start, an unbalanced start, a run stopped mid-alignment),
computes the chapter's own measurement with the chapter's own package function, asserts it is finite, and asserts
that the chapter's own criterion object REJECTS it.  A test marked xfail(strict=True) documents a check whose
criterion a false case passes (a finding, reported to the lead).  Tiny sizes: well under a second of CPU each."""
import functools
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from shallowflow.engine import data as D
from shallowflow.engine import metrics
from shallowflow.experiments.brisbois_thesis import common as Cm
from shallowflow.experiments.brisbois_thesis import theory as T
from shallowflow.experiments.brisbois_thesis import toy_reproduction as X

M = 20  # neurons (the chapter: 60)
SEEDS = [0, 1, 2, 3, 4, 5]  # six runs: the fewest whose Wilson share can clear one half at 95%
RICH = 1e-6 / np.sqrt(M)  # Fig. 2.7's lambda at this width
UNTRAINED_LR = 1e-12  # the trainer refuses lr = 0: the parameters stay at their initial draw


def _rejects(criterion, measured) -> bool:
    v = np.atleast_1d(np.asarray(measured, dtype=float))
    assert np.isfinite(v).all(), v  # a nan that a criterion rejects proves nothing
    return not criterion(v)


def _toy(scale, steps, lr=1e-3, init="balanced", seeds=SEEDS, data=None, snapshots=None):
    data = data or D.get("brisbois-orthogonal", device="cpu")
    return Cm.train_grid(data, ["relu"], M, Cm.combos([scale], seeds, inits=(init,), lrs=(lr,)), steps,
                         snapshots=snapshots or [0, steps])["relu"], data


def _typical_low(values, criterion):
    """The chapter's Fig. 2.7 reading: per-run flags of the criterion, the lower end of the share's Wilson interval."""
    return Cm.typical_share(X.run_flags(values, criterion), 0.95)[0]


def test_run_flags_and_typical_pass_where_every_run_shows_the_behaviour():
    # the reading can pass: six runs whose values meet the per-run criterion make a typical curve
    assert not _rejects(Cm.TYPICAL, [_typical_low([5000.0] * 6, X.FIG27_INTERMEDIATE_PLATEAU)])
    assert not _rejects(Cm.TYPICAL, [_typical_low([15000.0] * 6, X.FIG27_BELOW_1E6)])


def test_fig2_7_intermediate_plateau_fails_on_a_lazy_start():
    """Fig2.7/intermediate-plateau (epochs with L in [0.45, 0.55] L-factor, above 3000, as a typical share): a lazy
    start (lambda = 1, the claim is the rich regime's) fits both labels together in a few hundred epochs and
    crosses L = 0.5 without a plateau."""
    e, _ = _toy(1.0, 2000, snapshots=[0, 2000])
    assert float(e.traj.loss[:, -1].max()) < 1e-6  # it did learn: the false case is no plateau, not no training
    near = X.plateau_epochs(e.traj, 1.0).astype(float)
    assert _rejects(Cm.TYPICAL, [_typical_low(near, X.FIG27_INTERMEDIATE_PLATEAU)])


def test_fig2_7_zero_loss_epochs_fail_on_an_untrained_network():
    """Fig2.7/below-1e-6 and Fig2.7/below-1e-10 (first epoch with L below, as a typical share): an untrained network
    (step 1e-12) never leaves L(0) = 1, so no run reaches either level (never: inf, as the chapter reads -1)."""
    e, _ = _toy(RICH, 200, lr=UNTRAINED_LR)
    inf = lambda v: np.where(v < 0, np.inf, v).astype(float)
    e6, e10 = inf(Cm.first_epoch_below(e.traj, 1e-6)), inf(Cm.first_epoch_below(e.traj, 1e-10))
    assert np.isinf(e6).all() and np.isinf(e10).all()
    assert _rejects(Cm.TYPICAL, [_typical_low(e6, X.FIG27_BELOW_1E6)])
    assert _rejects(Cm.TYPICAL, [_typical_low(e10, X.FIG27_BELOW_1E10)])


def test_fig2_8_labels_not_reached_by_an_untrained_network():
    """Fig2.8/positive-8000 (|h(x_2) - 1|) and Fig2.8/negative-15000 (|h(x_1) + 1|), below 0.1: an untrained rich
    network outputs h ~ 0 at both points."""
    e, data = _toy(RICH, 200, lr=UNTRAINED_LR)
    h = X.h_at(e.traj.final, data)
    assert _rejects(X.FIG28_LABEL_REACHED, (h[:, 1] - 1).abs())
    assert _rejects(X.FIG28_LABEL_REACHED, (h[:, 0] + 1).abs())


def test_fig2_8_aligned_fails_mid_alignment():
    """Fig2.8/aligned-8000 (largest orientation error of the grown neurons below 0.01) and Fig2.8/final-breakpoints
    (below 1e-3): a rich run stopped at epoch 3000, during the alignment phase, has grown neurons still turning
    towards their data direction."""
    e, data = _toy(RICH, 3000)
    err = X.orientation_errors(e.traj.final, RICH, data)
    assert (metrics.neuron_norms(e.traj.final) >= 10 * RICH).any(1).all()  # every run has grown neurons to read
    assert _rejects(X.FIG28_ALIGNED, err)
    assert _rejects(X.FIG28_FINAL_BREAKPOINTS, err)


def test_fig2_8_aligned_on_networks_without_grown_neurons():
    """Fig2.8/aligned-4000, Fig2.8/aligned-8000, Fig2.8/final-breakpoints on an untrained rich network (nothing
    aligned) and a lazy network trained to zero loss (its breakpoints are not at the data): a finding of the controls
    round, fixed. orientation_errors read only neurons with ||w|| >= 10 lambda and gave 0 where none had grown, so both
    passed; it now measures nan there (no kink to read), and the checks fail (a gate, not a negative control)."""
    for scale, steps, lr in ((RICH, 200, UNTRAINED_LR), (1.0, 2000, 1e-3)):
        e, data = _toy(scale, steps, lr=lr)
        err = X.orientation_errors(e.traj.final, scale, data)
        assert torch.isnan(err).all(), (scale, err)
        assert not X.FIG28_ALIGNED(err) and not X.FIG28_FINAL_BREAKPOINTS(err) and not X.FIG28_ALIGNED_4000(err)


def test_fig2_8_balanced_fails_on_an_unbalanced_start():
    """Fig2.8/balanced (largest |a_j - s_j ||w_j|| | at the end, below 1e-8; Lemma 5): a 'normal' start (a_j drawn
    independently of w_j, the chapter's other initialisation) is not balanced, and GD keeps the imbalance."""
    e, _ = _toy(RICH, 200, init="normal")
    assert _rejects(X.FIG28_BALANCED, X.balance_error(e.traj.final, e.p0))


def test_fig2_9_at_most_n_fails_on_a_lazy_interpolator():
    """Fig2.9/at-most-n (at lambda <= 1e-6 at most n = 2 breakpoints): the claim is the rich regime's; a lazy
    (lambda = 1) network trained to zero loss interpolates the two points with many breakpoints."""
    e, data = _toy(1.0, 2000, seeds=[0])
    assert float(e.traj.loss[:, -1].max()) < 1e-6
    kinks = metrics.kinks_of_function(e.traj.final, (float(data.x1d.min()), float(data.x1d.max())))
    assert _rejects(X.fig29_at_most_n(data), kinks.numpy())


def test_t1_negative_ratio_and_slope_fail_on_untrained_networks():
    """T1/negative-ratio (measured / predicted negative-fit epoch on Dataset 1.1.4, lambda <= 1e-6, within
    [0.8, 1.1]) and T1/slope (negative-fit epochs per unit ln(1/lambda) / the predicted 1/(c alpha ||D_-||), within
    [0.95, 1.05]): runs of 100 epochs at the chapter's step (untrained: the predicted fits are thousands of epochs
    later) fit no label (fit epoch -1 at every lambda): the ratio is negative and the slope is 0."""
    d4 = D.get("brisbois-orthogonal", variant="1.1.4", device="cpu")
    scales = [1e-8, 1e-7, 1e-6]
    seed = Cm.assumption5_split(d4, M, [0, 1, 2, 3, 4, 5])[0][:1]
    e = Cm.train_grid(d4, ["relu"], M, Cm.combos(scales, seed, lrs=(1e-3,)), 100,
                      snapshots=range(0, 101, 10))["relu"]
    tf = Cm.fit_epochs(e.traj, d4, "relu").numpy()
    _, p_second = T.phase_epochs(d4, np.array(scales), 1e-3, "mean")
    assert _rejects(X.T1_RATIO, tf[:, 0] / p_second)
    slope = Cm.regression(np.log(1 / np.array(scales)), tf[:, 0])[0]
    _, dm, _ = T.key_vectors(d4)
    pred_slope = 1 / (T.time_factor("mean") * 1e-3 * float(dm.norm()))
    assert _rejects(X.T1_SLOPE, [slope / pred_slope])


# -- balancedness-complexity ---------------------------------------------------------------------------------------------
from shallowflow.experiments.brisbois_thesis import balancedness_complexity as B  # noqa: E402


def _grid(act, scales, steps, init="balanced", seeds=(0, 1), data=None, snaps=None, lr=1e-3):
    data = data or D.get("brisbois-orthogonal", device="cpu")
    return Cm.train_grid(data, [act], M, Cm.combos(scales, list(seeds), inits=(init,), lrs=(lr,)), steps,
                         snapshots=snaps or range(0, steps + 1, max(1, steps // 20)), record_every=100,
                         stop_below=1e-24)[act], data


def test_fig3_10_balancedness_fails_on_an_unbalanced_start():
    """Fig3.10/relu (largest l-infinity error |a_j - s_j ||w_j|| | over training, below 1e-8) and Fig3.10/sigmoid,
    Fig3.10/tanh (final l1-average error / mean |a_j|, below 0.1), and B4/fig3.10 (all three hold): the chapter's 'normal' start (a_j drawn
    independently of w_j) is not balanced: ReLU at lambda = 1e-6 keeps an absolute error far above 1e-8 (its
    conserved a_j^2 - ||w_j||^2 is not 0); Sigmoid and Tanh at lambda = 1 (lazy: no neuron grows to hide its
    initial imbalance) keep relative errors of the order of the weights."""
    e, _ = _grid("relu", [1e-6], 1000, init="normal")
    passed = [B.FIG310_RELU(B.balance_errors(e)["linf"].amax(0))]
    assert _rejects(B.FIG310_RELU, B.balance_errors(e)["linf"].amax(0))
    for act in ("sigmoid", "tanh"):
        e, _ = _grid(act, [1.0], 1000, init="normal")
        err = B.balance_errors(e)
        assert _rejects(B.FIG310_SMOOTH, err["l1"][-1] / err["mean_a"][-1]), act
        passed.append(B.FIG310_SMOOTH(err["l1"][-1] / err["mean_a"][-1]))
    # B4/fig3.10 ("Fig. 3.10 reproduced: the ReLU and the Sigmoid/Tanh criteria hold") on the same false case
    assert _rejects(B.ALL_PASS, [all(passed)])


def test_b3_relu_signs_fail_for_the_other_activation():
    """B3/relu-signs and C.3/relu-signs (ReLU output weights keep their sign: no neuron flips): the claim is ReLU's
    (a_j = s_j ||w_j|| along the flow); the same measurement on Sigmoid, same start (lambda = 1e-6, balanced), finds
    neurons whose a_j changes sign."""
    e, _ = _grid("sigmoid", [1e-6], 2000, seeds=(0,))
    assert _rejects(B.SIGNS_KEPT, [B.sign_flips(e.traj.snap_a[:, 0].numpy(), metrics.signs(e.p0)[0].numpy())])


def test_fig3_11_lazy_linear_fails_in_the_rich_regime():
    """Fig3.11/{relu,sigmoid,tanh}-lazy-linear (||theta*|| / ||theta^0|| within [0.85, 1.15] at lambda >= 1): in the
    rich regime (lambda = 1e-6, the claim is false there) the neurons grow by orders of magnitude."""
    for act in T.ACTIVATIONS:
        e, _ = _grid(act, [1e-6], 5000)
        assert _rejects(B.LAZY_LINEAR, B.final_norms(e) / B.initial_norms(e)), act


def test_fig3_11_sigmoid_rich_constant_fails_on_untrained_runs():
    """Fig3.11/sigmoid-rich-constant (max/min of ||theta*|| over the rich lambda, below 1.01; ReLU and Tanh:
    tests/test_null_brisbois_thesis.py): untrained runs keep their initial norms, proportional to lambda."""
    e, _ = _grid("sigmoid", [1e-4, 1e-2], 20, seeds=(0,), lr=UNTRAINED_LR)
    assert _rejects(B.RICH_CONSTANT, [B.rich_constant_ratio(B.final_norms(e))])


def test_t0_min_norm_fails_on_a_lazy_interpolator():
    """T0/relu-min-norm, T0/dataset-1.1.1, T0/dataset-1.1.4 (|| theta* || within 1e-3 of the min-norm value
    sqrt(2 sum |y_k| / ||x_k||)) and T0/relu-1e-2 (within 5e-3), and Thm6/min-norm-limit (every T0 check holds): the claim is the rich limit's; a lazy (lambda = 1)
    ReLU network trained to zero loss on each dataset interpolates with a norm far from the minimum."""
    passed = []
    for variant in ("1.1.0", "1.1.1", "1.1.4"):
        d = D.get("brisbois-orthogonal", variant=variant, device="cpu")
        e, _ = _grid("relu", [1.0], 2000, data=d)
        assert float(e.traj.loss[:, -1].max()) < 1e-10  # an interpolator: the false case is its norm, not its fit
        dist = np.abs(B.final_norms(e) / T.relu_min_norm(d) - 1)
        assert _rejects(B.T0_MIN_NORM, dist) and _rejects(B.T0_NEAR_MIN_NORM, dist), variant
        passed.append(B.T0_MIN_NORM(dist))
    # Thm6/min-norm-limit ("the limit is the min-norm interpolator": every T0 check passes) on the same false case
    assert _rejects(B.ALL_PASS, [all(passed)])


def test_thm6_zero_loss_fails_without_training_and_for_a_stuck_sigmoid():
    """Thm6/zero-loss (final MSE below 1e-10): an untrained ReLU network keeps L(0) = 1; a rich Sigmoid network (the
    theorem is ReLU's) is still on its plateau after 5000 epochs."""
    e, _ = _grid("relu", [1e-6], 20, lr=UNTRAINED_LR)
    assert _rejects(B.THM6_ZERO_LOSS, e.traj.loss[:, -1].numpy())
    e, _ = _grid("sigmoid", [1e-6], 5000)
    assert _rejects(B.THM6_ZERO_LOSS, e.traj.loss[:, -1].numpy())


# -- activations ----------------------------------------------------------------------------------------------------------
from shallowflow.experiments.brisbois_thesis import activations as A  # noqa: E402


@functools.lru_cache(maxsize=None)
def _act_runs(act, scale, steps, lr=1e-3, seeds=(0, 1)):  # shared by the tests that read the same false case (not mutated)
    data = D.get("brisbois-orthogonal", device="cpu")
    return Cm.train_grid(data, [act], M, Cm.combos([scale], list(seeds), lrs=(lr,)), steps,
                         snapshots=range(0, steps + 1, 500))[act], data


def test_fig3_1_and_fig3_5_plateau_counts_fail_in_the_lazy_regime():
    """Fig3.1/{relu,sigmoid,tanh}-plateaus (plateaus per rich curve: ReLU 2, Sigmoid/Tanh 1) and Fig3.5/phases (ReLU:
    two plateaus): at lambda = 1 (lazy, where the thesis shows no plateau, Fig. 3.2) the detector finds none on
    curves that do converge."""
    for act in T.ACTIVATIONS:
        e, _ = _act_runs(act, 1.0, 3000)
        tab = Cm.plateau_table(e)
        assert all(t["T"] > 0 for t in tab), act  # converged: the false case is the regime, not a failed run
        counts = np.array([t["count"] for t in tab])
        assert _rejects(A.FIG31_PLATEAUS[act], counts), act
        if act == "relu":
            assert _rejects(A.FIG35_PHASES, counts)


def test_fig3_2_no_plateau_fails_in_the_rich_regime():
    """Fig3.2/{relu,sigmoid,tanh}-no-plateau (no plateau detected at lambda = 1): a rich start (lambda = 1e-6, the
    plateaus of Fig. 3.1) trained to L < 0.01 has them."""
    for act in T.ACTIVATIONS:
        e, _ = _act_runs(act, 1e-6, 25000)
        tab = Cm.plateau_table(e)
        assert all(t["T"] > 0 for t in tab), act
        assert _rejects(A.NO_PLATEAU, [t["count"] for t in tab]), act


def test_fig3_2_linear_rate_fails_on_a_rich_run():
    """Fig3.2/{act}-linear-rate (eq. (2.33)'s linear convergence, one rate from the start: the largest c with
    L(t) <= L(0) e^{-c t} over the run, over the final phase's rate, A.rate_from_start, above one half): a rich run
    (lambda = 1e-6: plateaus, then saddle-to-saddle) trained to L < 1e-20 converges at a linear rate only at its end.
    A finding of round 2, fixed: the check read the R^2 of log L on the final window 1e-20 < L < 1e-3 alone, which this
    run passes too (asserted: that reading cannot tell it)."""
    for act in T.ACTIVATIONS:
        e, _ = _act_runs(act, 1e-6, 40000 if act == "sigmoid" else 25000)  # Sigmoid's final phase starts later
        curves = [e.traj.loss[r].numpy() for r in range(e.traj.runs)]
        assert all(A.loglinear_r2(c) > 0.999 for c in curves), act  # the old reading (R^2 on the final window) passes it
        assert _rejects(A.LINEAR_RATE, [A.rate_from_start(c) for c in curves]), act


def test_fig3_6_lazy_measures_fail_on_a_rich_network():
    """Fig3.6/random-orientations (cluster variances at the end / at initialisation within [0.8, 1.25]) and
    Fig3.6/small-movement (||theta_T - theta_0|| / ||theta_0|| below 0.2), read on runs that reached L < 0.01 as the
    chapter reads them: a rich ReLU network (lambda = 1e-6) trained to zero loss aligned its clusters and grew by
    orders of magnitude."""
    e, data = _act_runs("relu", 1e-6, 20000)
    T_ = [t["T"] for t in Cm.plateau_table(e)]
    assert all(t > 0 for t in T_)
    v = A.cluster_variances(e, data, 0, 20000)
    assert _rejects(A.RANDOM_ORIENTATIONS, Cm.converged_only([v["plus"] / v["plus_init"], v["minus"] / v["minus_init"]],
                                                             [T_[0]] * 2))
    assert _rejects(A.SMALL_MOVEMENT, Cm.converged_only([A.relative_movement(e, r) for r in range(2)], T_))


def test_fig3_9_directions_fail_in_the_lazy_regime():
    """Fig3.9/directions and Fig3.20/two-relus (smallest cosine of a grown neuron with its data direction, above
    0.999): a lazy ReLU network (lambda = 1) interpolates without aligning its neurons."""
    e, data = _act_runs("relu", 1.0, 3000)
    cos = [A.direction_cosines(e, data, r) for r in range(2)]
    assert _rejects(A.ALIGNED_DIRECTIONS, [min(c["plus"], c["minus"]) for c in cos])


def test_activation_zero_loss_checks_fail_on_untrained_networks():
    """C.1/converged, C.2/converged, Conj1/zero-loss, Conj2/zero-loss (final MSE below 1e-10): untrained Sigmoid and
    Tanh networks (step 1e-12) keep L(0) = 1."""
    for act in ("sigmoid", "tanh"):
        e, _ = _act_runs(act, 1e-6, 500, lr=UNTRAINED_LR)
        assert _rejects(A.ZERO_LOSS, e.traj.loss[:, -1].numpy()), act


def test_c2_s_curve_fails_on_initial_neurons():
    """C.2/s-curve (the free least-squares R^2 of the two-tanh form (3.2) to the final Tanh neurons and anti-neurons,
    at least 0.95): neurons at initialisation (random directions, equal norms, the figure's width 60) lie on no
    S-curve, and the same fit of them is rejected."""
    for seed in (0, 1):
        W = init.balanced([seed], 60, 2, 1.0).W[0]
        assert _rejects(A.C2_S_CURVE, A.s_curve_fit(W, "tanh")["r2"]), seed


# -- s-curves -------------------------------------------------------------------------------------------------------------
from shallowflow.engine import init  # noqa: E402
from shallowflow.experiments.brisbois_thesis import s_curves as S  # noqa: E402


def test_scurve_procedure_fit_fails_on_initial_neurons():
    """Fig3.23/procedure (Tanh): R^2 of the thesis's procedure (k1 = -5, K and k read off) in the best frame, above
    0.95: neurons at initialisation (random directions, equal norms) lie on no S-curve.  The least-squares R^2 of the same fit (Figs 3.18 / 3.23 / C.16 / C.18, C3, Conj3/two-term) is
    tests/test_null_brisbois_thesis.py::test_fig3_18_s_curve_fit_fails_on_initial_neurons."""
    W = init.balanced([0], 100, 2, 1.0).W[0].numpy()
    assert _rejects(S.GOOD_FIT, [S.fit_scurve(W, "tanh", -5.0, refine=0).procedure.r2])


def test_conj3_two_rays_fail_in_the_lazy_regime():
    """Conj3/relu-two-rays (grown neurons point in at most two directions, metrics.distinct_directions with the
    chapter's cos_tol 1e-3): a lazy ReLU network (lambda = 1) trained to zero loss keeps its random directions."""
    e, _ = _act_runs("relu", 1.0, 3000)
    assert float(e.traj.loss[:, -1].max()) < 1e-10
    assert _rejects(S.TWO_RAYS, metrics.distinct_directions(e.traj.final.W, cos_tol=1e-3).numpy())


# -- multidimensional -----------------------------------------------------------------------------------------------------
from shallowflow.experiments.brisbois_thesis import multidimensional as MD  # noqa: E402


def test_multidimensional_checks_fail_on_untrained_networks():
    """Fig3.35/one-component, Fig3.36/one-component (EVR_1 of the final weights above 0.999), C4/two-neurons (EVR_1 +
    EVR_2 above 0.99, every activation; Fig3.33's ReLU half: tests/test_null_brisbois_thesis.py) and Fig3.33/zero-loss,
    Fig3.35/zero-loss, Fig3.36/zero-loss (final loss below the goal): the final weights of a 10-step run are still
    the isotropic initial draw on the multidimensional orthogonal data, and its loss is the initial one."""
    P = SimpleNamespace(width=40, steps=10, lr=1e-3, stop_below=0.0, goal=1e-5)
    for act in MD.ACTS:
        res = MD._train(act, [D.brisbois_multid()], 1e-6, [0, 1], P, "orthogonal")
        assert _rejects(MD.TWO_COMPONENTS, MD.two_components(res).numpy()), act
        assert _rejects(MD.zero_loss(P.goal), res.traj.loss[:, -1].numpy()), act
        if act != "relu":
            assert _rejects(MD.ONE_COMPONENT, res.evr[:, 0].numpy()), act


# -- pl-analysis ----------------------------------------------------------------------------------------------------------
from shallowflow.experiments.brisbois_thesis import pl_analysis as PL  # noqa: E402


def test_pl1_regimes_and_t2_rate_fail_on_the_other_regime():
    """PL1/rich-saddle (min_t mu_t below 1e-6) and PL1/lazy-bounded (above 1e-2), three activations, and T2/relu-rate
    (|ReLU final-phase decay rate / the rich interpolator's local PL rate - 1| below 0.01): each regime is the other's
    false case.  The lazy runs (lambda = 1) have mu_t bounded away from 0 along the path (no saddle) and the lazy
    ReLU converges at an NTK rate, not the rich interpolator's; the rich runs (lambda = 1e-6) start on the saddle,
    mu_t ~ 0."""
    P = SimpleNamespace(width=10, steps=3000, pl_scales=[1e-6, 1.0], every=300, lr=1e-3)
    pl = PL.run_pl1(P)
    rich = [PL.min_mu(pl[a])[1e-6] for a in T.ACTIVATIONS]
    lazy = [PL.min_mu(pl[a])[1.0] for a in T.ACTIVATIONS]
    assert _rejects(PL.RICH_SADDLE, lazy) and _rejects(PL.LAZY_BOUNDED, rich)
    v = pl["relu"]
    lazy_relu = v["ens"].runs(scale=1.0)[0]
    assert float(v["ens"].traj.loss[lazy_relu, -1]) < 1e-20  # converged through the rate window
    data = D.get("brisbois-orthogonal", device="cpu")
    rate = PL.final_rate(v["ens"].traj.loss[lazy_relu].numpy())
    assert _rejects(PL.T2_RATE, [abs(rate / T.final_rate(data, P.lr) - 1)])


# -- quasi-orthogonal -----------------------------------------------------------------------------------------------------
from shallowflow.experiments.brisbois_thesis import quasi_orthogonal as Q  # noqa: E402


def test_quasi_orthogonal_alignment_checks_fail_in_the_lazy_regime():
    """Fig3.25/orientation-plus, /orientation-minus, /delta-sweep-directions (grown neurons within 0.02 of -1/xbar_k),
    Fig3.25/two-plateaus, /delta-sweep (two plateaus), Fig3.26/orientation-2 (s = -1 neurons within 0.05 of the smaller
    abscissa), /other-negative (s = +1 orientations negative), /moves-away (a later residual above 0.1 at the negative
    point): the claims are the rich regime's; a lazy start (lambda = 1) trained to zero loss keeps its random
    orientations, has no two-plateau profile and fits the negative point without leaving it."""
    P = SimpleNamespace(width=20, init_scale=1.0, lr=1e-3, steps=3000, seeds=[0, 1, 2, 3], deltas=[0.1], delta_a=1.0,
                        delta_b=10.0, snap_every=100)
    run = Q.run_quasi(P)
    a, b = Q.measure(run, Q.entry(run, "a")), Q.measure(run, Q.entry(run, "b"))
    sw = Q.measure(run, Q.entry(run, "sweep", -0.1))
    assert float(torch.cat([a["final_loss"], b["final_loss"], sw["final_loss"]]).max()) < 1e-6  # they did learn
    assert _rejects(Q.ORIENTATION, a["dev_plus"]) and _rejects(Q.ORIENTATION, a["dev_minus"])
    assert _rejects(Q.ORIENTATION, torch.maximum(sw["dev_plus"], sw["dev_minus"]))
    assert _rejects(Q.TWO_PLATEAUS, a["plateaus"]) and _rejects(Q.TWO_PLATEAUS, sw["plateaus"])
    small = float(b["data"].x1d.min())
    assert _rejects(Q.ORIENTATION_2, (b["k_minus"] - small).abs().nan_to_num(0.0).amax(1))
    assert _rejects(Q.OTHER_NEGATIVE, b["k_plus"].nan_to_num(-1e9).amax(1))
    assert _rejects(Q.MOVES_AWAY, b["later_neg"])


def test_quasi_orthogonal_slowdown_fails_on_an_untrained_network():
    """Fig3.26/slowdown (more than three plateaus on the delta = 10 curve): the flat curve of an untrained network
    (step 1e-12) shows no new slowdown."""
    P = SimpleNamespace(width=20, init_scale=1e-10, lr=UNTRAINED_LR, steps=1000, seeds=[0, 1, 2, 3], deltas=[0.1],
                        delta_a=1.0, delta_b=10.0, snap_every=100)
    run = Q.run_quasi(P)
    assert _rejects(Q.SLOWDOWN, Q.measure(run, Q.entry(run, "b"))["plateaus"])


# -- non-orthogonal -------------------------------------------------------------------------------------------------------
from shallowflow.experiments.brisbois_thesis import non_orthogonal as N  # noqa: E402


def _nonorth(act, scale, lr, steps, seeds=(0, 1, 2)):
    ds = D.brisbois_nonorthogonal("1.3.3")
    P = SimpleNamespace(width=M, steps=steps, lr=lr, record_every=10, stop_below=1e-12)
    return N.summary(N._train(act, [scale], list(seeds), P, ds), ds, 1e-6)


def test_non_orthogonal_convergence_checks_fail_on_untrained_networks():
    """Fig3.28/converges-0.001, C.30/converges, C.32/converges, C.34/converges (the fraction of runs reaching the loss
    goal is one) and Fig3.29/converges (final loss below the goal), Dataset 1.3.3: untrained networks (step 1e-12)
    keep L(0)."""
    for act in ("relu", "sigmoid", "tanh"):
        s = _nonorth(act, 1e-3, UNTRAINED_LR, 100)
        assert _rejects(N.ALL_CONVERGED, [float(s["converged"].double().mean())]), act
        assert _rejects(N.zero_loss(1e-6), s["last"].numpy()), act


def test_c31_few_kinks_fails_on_a_lazy_interpolator():
    """C.31/few-kinks (at the smallest converged lambda at most n = 5 kinks of h in [-2, 2]): the claim is the rich
    regime's; lazy ReLU networks (lambda = 2.5) trained to the loss goal on Dataset 1.3.3 interpolate with many kinks."""
    s = _nonorth("relu", 2.5, 1e-3, 5000)
    assert bool(s["converged"].all())
    assert _rejects(N.FEW_KINKS, s["kinks"].numpy())


# -- ten-point-data -------------------------------------------------------------------------------------------------------
from shallowflow.experiments.brisbois_thesis import measures as MS  # noqa: E402
from shallowflow.experiments.brisbois_thesis import ten_point_data as TP  # noqa: E402


def _ten(act, scale, steps, lr=1e-3, width=M, dataset="1.3.2", seeds=(0, 1)):
    ds = D.brisbois_nonorthogonal(dataset)
    P = SimpleNamespace(lr=lr, stop_below=1e-12)
    return TP._train(act, ds, [scale], list(seeds), width, steps, P, record_every=10)


def test_wide_alignment_checks_fail_on_untrained_networks():
    """C.24/align, C.26/align (norm-weighted axial concentration of the Sigmoid/Tanh weights, above 0.9) and
    C.22/groups (at most 2n = 20 distinct directions of grown ReLU neurons, within cos 0.999): untrained wide networks
    (m = 60, step 1e-12) on Dataset 1.3.1 keep their isotropic initial draw."""
    for act in TP.ACTS:
        w = TP.wide_measures(_ten(act, 1e-2, 100, lr=UNTRAINED_LR, width=60, dataset="1.3.1", seeds=(0,)))
        if act == "relu":
            assert _rejects(TP.WIDE_GROUPS, w["dirs"].numpy())
        else:
            assert _rejects(TP.WIDE_ALIGN, w["conc"].numpy()), act


def test_c22_align_fails_on_untrained_and_lazy_networks():
    """C.22/align (the distinct directions, within cos 0.99, of the grown ReLU neurons at the end over those of the
    same neurons at initialisation, below 0.5: "neurons align and then grow"): an untrained wide network (the
    isotropic initial draw, step 1e-12) keeps every direction (1), and a lazy one (lambda = 1, trained to a small
    loss on Dataset 1.3.1) barely turns its neurons (about 1).  A finding of round 1, fixed: the old measure
    (directions per grown neuron) held by construction in the plane, and the untrained draw passed it."""
    for scale, steps, lr in ((1e-2, 100, UNTRAINED_LR), (1.0, 3000, 1e-3)):
        tr = _ten("relu", scale, steps, lr=lr, width=60, dataset="1.3.1", seeds=(0,))
        if scale == 1.0:
            assert float(tr.loss[:, -1].max()) < 0.05  # it did learn: the false case is no alignment, not no training
        assert _rejects(TP.WIDE_ALIGN_RELU, TP.wide_measures(tr)["gathered"].numpy()), scale


def test_fig3_32_one_orientation_fails_on_an_untrained_network():
    """Fig3.32/one-orientation (axial concentration of the Tanh neurons at the end of alignment, above 0.99): the
    untrained draw (step 1e-12) has random orientations."""
    tr = _ten("tanh", 1e-6, 100, lr=UNTRAINED_LR)
    assert _rejects(TP.ONE_ORIENTATION, MS.axial_concentration(tr.at(100).W).numpy())


def test_c28_doubts_and_c29_signs_fail_for_the_other_activation():
    """C.28/sigmoid-doubts, C.28/tanh-doubts (the l1 balance error / mean |a| is not negligible: above 1e-3) and
    C.29/relu-signs (every ReLU a_j keeps its initial sign), Dataset 1.3.2, lambda = 1e-6: each claim is false for the
    other activation.  ReLU stays balanced to rounding (no doubt); Sigmoid output weights change sign."""
    err, _ = TP.balance_error(_ten("relu", 1e-6, 5000))
    assert _rejects(TP.DOUBTS, err.numpy())
    _, kept = TP.balance_error(_ten("sigmoid", 1e-6, 30000, seeds=(0,)))
    assert _rejects(TP.SIGNS_KEPT, [bool(kept.all())])


# -- label-variants -------------------------------------------------------------------------------------------------------
from shallowflow.experiments.brisbois_thesis import label_variants as LV  # noqa: E402


def _variant(variant, act, scale, steps, lr=1e-3, seeds=(0, 1)):
    d = D.get("brisbois-orthogonal", variant=variant, device="cpu") if variant != "1.1.0" else \
        D.get("brisbois-orthogonal", device="cpu")
    seeds = Cm.assumption5_split(d, M, list(seeds))[0]
    e = Cm.train_grid(d, [act], M, Cm.combos([scale], seeds, lrs=(lr,)), steps, snapshots=range(0, steps + 1, 50))[act]
    return e, d


def test_label_variant_timing_checks_fail_on_the_other_dataset():
    """DS1.1.1/mirror and /same-curves (fit epochs and epochs to L < 0.01 against Dataset 1.1.0's, within 10%) and
    Fig3.17/relu-ratio (negative / positive fit epoch within [7, 13] on 1.1.4), read on trained rich ReLU runs
    (lambda = 1e-6 / sqrt(m)): the claims are false for another dataset.  Dataset 1.1.4 (||D+|| / ||D-|| = 10) is no
    mirror of 1.1.0: its fits and T differ; Dataset 1.1.0's fit-epoch ratio is about 2, not 10."""
    lam = 1e-6 / np.sqrt(M)
    e0, d0 = _variant("1.1.0", "relu", lam, 25000)
    e4, d4 = _variant("1.1.4", "relu", lam, 25000)
    f0, f4 = LV.fit_epoch_table(e0, d0), LV.fit_epoch_table(e4, d4)
    assert (f0 > 0).all() and (f4 > 0).all()  # both labels fitted: trained runs
    assert _rejects(LV.SAME_DYNAMICS, [Cm.converged_only(f4[:, k], f4[:, k]).mean() / Cm.converged_only(f0[:, k], f0[:, k]).mean()
                                       for k in (1, 0)])
    T0_, T4_ = Cm.first_epoch_below(e0.traj, 0.01), Cm.first_epoch_below(e4.traj, 0.01)
    assert _rejects(LV.SAME_DYNAMICS, [Cm.converged_only(T4_, T4_).mean() / Cm.converged_only(T0_, T0_).mean()])
    assert _rejects(LV.RELU_RATIO, f0[:, 0].astype(float) / f0[:, 1])


def test_label_variant_plateau_checks_fail_where_the_plateaus_differ():
    """Fig3.14/relu-no-intermediate (at most the initial plateau on 1.1.2) and Fig3.17/sigmoid-single (one plateau),
    read on runs that reached L < 0.01: ReLU on Dataset 1.1.0 (labels of opposite signs) has an intermediate plateau,
    two in all."""
    e, _ = _variant("1.1.0", "relu", 1e-6 / np.sqrt(M), 25000)
    tab = Cm.plateau_table(e)
    counts = Cm.converged_only([t["count"] for t in tab], [t["T"] for t in tab])
    assert _rejects(LV.NO_INTERMEDIATE, counts) and _rejects(LV.SINGLE_DROP, counts)


def test_label_variant_fig3_14_3_15_fail_on_other_regimes():
    """Fig3.14/sigmoid-lazy (L < 0.01 within 100 epochs at rich lambda: Sigmoid on 1.1.2 fits through its output
    layer): a rich ReLU network on 1.1.2 needs thousands.  Fig3.15/relu-min-norm (||theta||^2 / 2 within 2% of the
    min-norm 1): a lazy ReLU network (lambda = 1) trained to zero loss on 1.1.2 ends far from it.
    Fig3.15/sigmoid-output-layer (sum_j a_j / 2 within 1%) and /sigmoid-norm (||theta||^2 within 10% of 4/m): an
    untrained Sigmoid network has neither.  Fig3.15/sigmoid-small-w (final ||W||_F below 1e-2, read on runs that
    reached L < 0.01): on Dataset 1.1.0 the rich Sigmoid neurons grow to fit the opposite labels."""
    e, _ = _variant("1.1.2", "relu", 1e-6, 20000)
    assert _rejects(LV.SIGMOID_LAZY, Cm.first_epoch_below(e.traj, 0.01))
    e, _ = _variant("1.1.2", "relu", 1.0, 3000)
    assert float(e.traj.loss[:, -1].max()) < 1e-10
    assert _rejects(LV.RELU_MIN_NORM, metrics.squared_norm(e.traj.final).numpy() / 2)
    e, _ = _variant("1.1.2", "sigmoid", 1e-6, 100, lr=UNTRAINED_LR)
    assert _rejects(LV.OUTPUT_LAYER, e.traj.final.a.sum(1) / 2)
    assert _rejects(LV.SIGMOID_NORM, metrics.squared_norm(e.traj.final).numpy() / (4 / M))
    e, _ = _variant("1.1.0", "sigmoid", 1e-6, 30000)
    Ts = Cm.first_epoch_below(e.traj, 0.01)
    assert (Ts > 0).all()
    assert _rejects(LV.SMALL_W, Cm.converged_only(e.traj.final.W.flatten(1).norm(dim=1), Ts))


# -- instability-transition -----------------------------------------------------------------------------------------------
from shallowflow.experiments.brisbois_thesis import instability_transition as IT  # noqa: E402


def test_c8_plateau_counts_fail_on_the_other_panel():
    """C.8/relu-1 (no plateau at lambda = 1), C.8/relu-0.01, C.8/relu-1e-06 (two plateaus) and C.8/sigmoid-1e-06 (one):
    each panel's count is the other regime's false case.  The chapter's run_transition (ReLU at lambda = 1e-6 and 1,
    Sigmoid at 1e-6, m = 10, 25000 epochs) and Appendix C.1's detector: the rich ReLU curve fails the lazy panel's
    criterion, the lazy one fails the rich panels', the lazy ReLU curve fails Sigmoid's."""
    scales = [1e-6, 1e-2, 1.0]
    P = SimpleNamespace(width=10, steps=25000, seeds=[0], relu_scales=[1e-6, 1.0], sigmoid_scales=[1e-6],
                        tanh_scales=[1e-6], c8_scales=[1e-6, 1.0], lr=1e-3)
    tr = IT.run_transition(P)
    e, tab = tr["ens"]["relu"], tr["tables"]["relu"]
    rich, lazy = [[tab[r]["count"] for r in e.runs(scale=lam)] for lam in (1e-6, 1.0)]
    assert all(t["T"] > 0 for t in tab)  # both regimes trained to L < 0.01
    assert _rejects(IT.c8_criterion("relu", 1.0, scales), rich)
    assert _rejects(IT.c8_criterion("relu", 1e-6, scales), lazy)
    assert _rejects(IT.c8_criterion("relu", 1e-2, scales), lazy)
    assert _rejects(IT.c8_criterion("sigmoid", 1e-6, scales), lazy)


def test_c11_spike_fails_below_the_critical_step():
    """C.11/peak-epoch (the largest loss at epoch 15-40) and C.11/peak-value (in [1e4, 5e4]): the spike is the claim
    for alpha above alpha_crit = 4/m; the chapter's Sigmoid, m = 600, lambda = 1e-6 at 0.75 alpha_crit has none (its
    largest loss is the initial one).  C.11/initial-loss (L(theta^0) within 1e-4 of 1, a small start): a lazy start
    (lambda = 1) is far from it."""
    data = D.get("brisbois-orthogonal", device="cpu")
    lr = 0.75 * T.sigmoid_alpha_crit(600)
    e = Cm.train_grid(data, ["sigmoid"], 600, Cm.combos([1e-6], [0], lrs=(lr,)), 200)["sigmoid"]
    k, v = IT.spike(e.traj.loss)
    assert _rejects(IT.C11_PEAK_EPOCH, k) and _rejects(IT.C11_PEAK_VALUE, v)
    e = Cm.train_grid(data, ["sigmoid"], 600, Cm.combos([1.0], [0], lrs=(1e-2,)), 1)["sigmoid"]
    assert _rejects(IT.C11_INITIAL_LOSS, e.traj.loss[:, 0].numpy())


# -- width-grid -----------------------------------------------------------------------------------------------------------
from shallowflow.experiments.brisbois_thesis import width_grid as G  # noqa: E402


def test_width_grid_appendix_checks_fail_on_the_other_regime():
    """The chapter's run_grid (m = 10, alpha in {1e-3, 0.6}, lambda in {1e-6, 1}, 30 time units): C.9/two-plateaus
    (ReLU: two plateaus per converged curve) and C.10/one-plateau (Sigmoid: one) fail on the lazy (lambda = 1) curves,
    which converge without a plateau; C.9/explodes (ReLU's initial MSE / 1e5 above 1, the claim at lambda = 100)
    fails at lambda = 1; C.12/stable (largest max_t L / L0 at most 1.05, Tanh) fails for Sigmoid at alpha = 0.6 > 4/m,
    the other activation's unstable step."""
    P = SimpleNamespace(widths=[10], lrs=[1e-3, 0.6], scales=[1e-6, 1.0], budget=30, max_epochs=30000, fig33_scale=1e-6)
    rows = G.run_grid(P)
    lazy = {a: G.select(rows, act=a, scale=1.0, lr=1e-3) for a in ("relu", "sigmoid")}
    assert all(r["T"] > 0 for rs in lazy.values() for r in rs)
    assert _rejects(G.TWO_PLATEAUS, [r["count"] for r in lazy["relu"]])
    assert _rejects(G.ONE_PLATEAU, [r["count"] for r in lazy["sigmoid"]])
    assert _rejects(G.EXPLODES, [r["L0"] / 1e5 for r in lazy["relu"]])
    assert _rejects(G.STABLE, [max(r["Lmax"] / r["L0"] for r in G.select(rows, act="sigmoid", scale=1e-6, lr=0.6))])


def test_width_grid_convergence_counts_fail_on_a_short_budget():
    """C.9/converges, C.10/low-alpha-converges, C.12/converges (no run at small lambda fails to reach L < 0.01 within
    its budget): with 1000 epochs at alpha = 1e-3 no rich run (lambda = 1e-6) of any activation is trained."""
    P = SimpleNamespace(widths=[10], lrs=[1e-3], scales=[1e-6], budget=1, max_epochs=1000, fig33_scale=1e-6)
    rows = G.run_grid(P)
    for act in T.ACTIVATIONS:
        assert _rejects(G.ALL_REACH, [sum(1 for r in G.select(rows, act=act) if r["T"] < 0)]), act


# -- more activations and balancedness-complexity ------------------------------------------------------------------------
def test_fig3_2_fast_and_monotone_fail_outside_the_lazy_regime():
    """Fig3.2/{act}-fast (epochs to L < 0.01 at the lazy scale / at lambda = 1e-2, below 0.2), read on converged runs:
    a rich numerator (lambda = 1e-6, no lazy run) is slower than lambda = 1e-2, not five times faster.
    Fig3.2/{act}-monotone (the largest relative loss increase, none): the chapter's Sigmoid at a step above
    alpha_crit = 4/m (m = 600, alpha = 1e-2, Fig. C.11) spikes before it converges."""
    for act in T.ACTIVATIONS:
        e, _ = _act_runs(act, 1e-6, 30000, seeds=(0,))
        e2, _ = _act_runs(act, 1e-2, 30000, seeds=(0,))
        T6, T2 = Cm.first_epoch_below(e.traj, 0.01), Cm.first_epoch_below(e2.traj, 0.01)
        assert (T6 > 0).all() and (T2 > 0).all(), act
        assert _rejects(A.FAST, Cm.converged_only(T6, T6) / Cm.converged_only(T2, T2)), act
    data = D.get("brisbois-orthogonal", device="cpu")
    e = Cm.train_grid(data, ["sigmoid"], 600, Cm.combos([1e-6], [0], lrs=(1e-2,)), 4000)["sigmoid"]
    T_ = Cm.first_epoch_below(e.traj, 0.01)
    assert (T_ > 0).all()
    assert _rejects(A.MONOTONE, Cm.converged_only(A.largest_increase(e.traj.loss), T_))


def test_b2_step_independent_fails_for_relu():
    """B2/sigmoid-step-independent, B2/tanh-step-independent (the drift of a_j^2 - ||w_j||^2 at alpha = 1e-2 over that at
    1e-3, within [0.8, 1.25]): for ReLU the drift is GD's O(alpha) finite-step effect (B1), so the same ratio is about
    the step ratio 10 (read at lambda = 1e-2, where ReLU's drift is above rounding, as B1 reads it)."""
    P = SimpleNamespace(width=M, seeds=[0], balance_scales=[1e-2], balance_lrs=[1e-3, 1e-2], balance_time=5.0)
    bal = B.run_balancedness(P)
    assert _rejects(B.B2_STEP_INDEPENDENT, B.drift_ratios(bal["relu"], P.balance_lrs, P.balance_scales)[1e-2])


def test_fig3_11_relu_explosion_fails_at_a_moderate_scale():
    """Fig3.11/relu-explodes (initial MSE / 1e5 above 1) and Fig3.11/relu-no-convergence (final MSE at least 0.01): the
    claims are lambda = 100's; at lambda = 1 the ReLU network starts with a moderate loss and converges."""
    e, _ = _grid("relu", [1.0], 2000)
    assert _rejects(B.EXPLODES, e.traj.loss[:, 0].numpy() / 1e5)
    assert _rejects(B.NO_CONVERGENCE, e.traj.loss[:, -1].numpy())


def test_fig3_31_groups_turn_fails_on_orthogonal_data():
    """Fig3.31/groups-turn (the largest turn of a tight cluster's mean direction after the alignment, above 0.1 rad):
    the claim needs non-orthogonal data (Dataset 1.3.2); on the orthogonal Dataset 1.1.0 the chapter's ReLU run
    (lambda = 1e-6, trained to zero loss) aligns its groups on the data directions and they keep them."""
    ds = D.get("brisbois-orthogonal", device="cpu")
    tr = TP._train("relu", ds, [1e-6], [0, 1], M, 25000, SimpleNamespace(lr=1e-3, stop_below=1e-12), record_every=10)
    assert float(tr.loss[:, -1].max()) < 1e-10
    ends = TP.plateau_end(tr)
    assert (ends > 0).all()
    turns = [TP.cluster_turn(tr, r, int(ends[r])) for r in range(tr.loss.shape[0])]
    assert all(turns)  # tight clusters to read
    assert _rejects(TP.GROUPS_TURN, TP.largest_tight_turn(turns))


# -- round 2: activations (C2, T3) --------------------------------------------------------------------------------------
import itertools  # noqa: E402

LAW_RICH, LAW_LAZY = [1e-6, 1e-4, 1e-2], [0.25, 0.5, 1.0]


@pytest.fixture(scope="module")
def plateau_law_runs():
    """One balanced run per activation and lambda at three rich and three lazy scales (m = 20, 25000 epochs)."""
    data = D.get("brisbois-orthogonal", device="cpu")
    out = {}
    for act in T.ACTIVATIONS:
        e = Cm.train_grid(data, [act], M, Cm.combos(LAW_RICH + LAW_LAZY, [0], lrs=(1e-3,)), 25000,
                          snapshots=[0, 25000])[act]
        tab = Cm.plateau_table(e)
        half = Cm.first_epoch_below(e.traj, 0.5 * e.traj.loss[:, 0].numpy())
        out[act] = {lams: ([tab[e.runs(scale=lam)[0]]["initial"] for lam in lams],
                           [half[e.runs(scale=lam)[0]] for lam in lams]) for lams in (tuple(LAW_RICH), tuple(LAW_LAZY))}
        out[act]["tables"] = {lam: tab[e.runs(scale=lam)[0]] for lam in LAW_RICH + LAW_LAZY}
    return data, out


def test_c2_slope_and_t3_fail_in_the_lazy_range(plateau_law_runs):
    """C2/{act}-slope-positive (the slope of the initial plateau's length against ln(1/lambda), positive) and
    T3/sigmoid, T3/tanh (the slope of the first epoch with L < L(0)/2 against ln(1/lambda) over 1/(2 alpha sigma'(0)
    ||v||), within [0.95, 1.05]): the -ln(lambda) law is the rich regime's; at lazy scales (lambda = 0.25, 0.5, 1) the
    initial plateau has vanished ("with a higher lambda, the plateaus become so small that they disappear"), so the
    plateau lengths do not grow with ln(1/lambda) and the half-loss epochs are a few dozen, not ~1600 / 400 per unit."""
    data, runs = plateau_law_runs
    ln = np.log(1 / np.array(LAW_LAZY))
    for act in T.ACTIVATIONS:
        init_len, half = runs[act][tuple(LAW_LAZY)]
        assert _rejects(A.C2_SLOPE, [Cm.regression(ln, init_len)[0]]), act
        if act != "relu":
            pred = T.plateau_slope(data, act) / 1e-3
            assert _rejects(A.T3_SLOPE, [Cm.regression(ln, half)[0] / pred]), act


def test_c2_r2_fails_when_lengths_and_lambda_are_unpaired(plateau_law_runs):
    """C2/{act}-r2 (R^2 of the initial plateau's length against ln(1/lambda), above 0.98): the rich lengths measured
    at lambda = 1e-6, 1e-4, 1e-2, paired with the wrong lambda (every order but the measured one and its reverse, which
    has the same R^2 and a negative slope, rejected by C2/slope-positive) follow no line in ln(1/lambda).  The measured
    pairing passes (the criterion can pass)."""
    _, runs = plateau_law_runs
    ln = np.log(1 / np.array(LAW_RICH))
    for act in T.ACTIVATIONS:
        lengths = runs[act][tuple(LAW_RICH)][0]
        assert A.C2_R2(Cm.regression(ln, lengths)[2]) and A.C2_SLOPE(Cm.regression(ln, lengths)[0]), act
        for perm in itertools.permutations(range(3)):
            if list(perm) in ([0, 1, 2], [2, 1, 0]):
                continue
            assert _rejects(A.C2_R2, [Cm.regression(ln, [lengths[i] for i in perm])[2]]), (act, perm)


# -- round 2: width-grid (C.9, C.10) ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_grid():
    """The chapter's run_grid at m = 10, alpha in {1e-3, 0.6}, lambda in {1e-8, 1e-6, 1e-4, 1}, 30 time units."""
    P = SimpleNamespace(widths=[10], lrs=[1e-3, 0.6], scales=[1e-8, 1e-6, 1e-4, 1.0], budget=30, max_epochs=30000,
                        fig33_scale=1e-6)
    return P, G.run_grid(P)


def test_c9_ln_lambda_fails_when_t_and_lambda_are_unpaired(small_grid):
    """C.9/ln-lambda (R^2 of T against ln(1/lambda) over lambda <= 1e-4, smallest over (m, alpha), above 0.98): the
    ReLU epochs T measured at lambda = 1e-8, 1e-6, 1e-4 (alpha = 1e-3), each paired with another lambda (every order
    but the measured one and its reverse) follow no line in ln(1/lambda); the measured pairing passes."""
    P, rows = small_grid
    small = [r for r in G.select(rows, act="relu", lr=1e-3) if r["scale"] <= 1e-4]
    assert len(small) == 3 and all(r["T"] > 0 for r in small)
    assert G.LN_LAMBDA_R2(float(np.min(G.ln_lambda_r2(small, [10], [1e-3]))))
    scales = sorted(r["scale"] for r in small)
    small = sorted(small, key=lambda r: r["scale"])
    for perm in itertools.permutations(range(3)):
        if list(perm) in ([0, 1, 2], [2, 1, 0]):
            continue
        unpaired = [dict(r, scale=scales[i]) for r, i in zip(small, perm)]
        assert _rejects(G.LN_LAMBDA_R2, [float(np.min(G.ln_lambda_r2(unpaired, [10], [1e-3])))]), perm


def test_c9_no_convergence_fails_at_a_moderate_scale(small_grid):
    """C.9/no-convergence (ReLU at lambda = 100: the evidence runs, finite and of an (m, alpha) that trains at lambda
    <= 1e-4, that reach L < 0.01; none): the claim is lambda = 100's; read at lambda = 1 (G.no_convergence with
    big = 1), the ReLU runs are finite, their (m, alpha) trains, and they converge."""
    _, rows = small_grid
    n_conv, ev, _ = G.no_convergence(G.select(rows, act="relu"), big=1.0)
    assert ev  # evidence runs to read
    assert _rejects(G.NONE_CONVERGE, [n_conv])


def test_c10_unstable_above_crit_fails_for_tanh(small_grid):
    """C.10/unstable-above-crit (Sigmoid at lambda <= 1e-2: the loss rises above 1.05 L0 exactly when alpha > 4/m; the
    runs that disagree, none): the rule is Sigmoid's (sigma(0) = 1/2 puts m/2 in the output block of the Hessian);
    Tanh (sigma(0) = 0) stays stable at alpha = 0.6 > 4/m = 0.4, so its runs there disagree.  Sigmoid's own rows pass."""
    _, rows = small_grid
    sig = [r for r in G.select(rows, act="sigmoid") if r["scale"] <= 1e-2]
    assert G.NO_DISAGREEMENT(G.crit_disagreements(sig))
    tanh = [r for r in G.select(rows, act="tanh") if r["scale"] <= 1e-2]
    assert all(r["valid"] for r in tanh)
    assert _rejects(G.NO_DISAGREEMENT, [G.crit_disagreements(tanh)])


def test_plateau_shrinks_fails_beyond_the_transition(plateau_law_runs):
    """Fig3.12/plateau-shrinks (ReLU: the intermediate plateau's length over increasing lambda non-increasing and
    shorter at the largest scale, every seed), C.4/plateau-shrinks and C.6/plateau-shrinks (Sigmoid, Tanh: the total
    plateau length, the same reading): the claim is the transition's ("progressively convex" as lambda grows towards the
    lazy regime); at lazy scales only (lambda = 0.25, 0.5, 1, every run trained to L < 0.01) there is no plateau left to
    shrink, so the lengths are all 0.  Across the transition (lambda = 1e-4, 1e-2, 1) the same reading passes."""
    _, runs = plateau_law_runs
    for act, key in (("relu", "intermediate"), ("sigmoid", "total"), ("tanh", "total")):
        tabs = runs[act]["tables"]
        read = (lambda t: t["intermediate"]) if key == "intermediate" else (lambda t: sum(b - a for a, b in t["plateaus"]))
        lazy = Cm.converged_only([read(tabs[lam]) for lam in LAW_LAZY], [tabs[lam]["T"] for lam in LAW_LAZY])
        assert np.isfinite(lazy).all(), act  # trained: no nan (an unconverged run), the false case is no plateau
        assert _rejects(IT.SHRINKS, [IT.plateau_shrinks(lazy)]), act
        across = Cm.converged_only([read(tabs[lam]) for lam in (1e-4, 1e-2, 1.0)], [tabs[lam]["T"] for lam in (1e-4, 1e-2, 1.0)])
        assert IT.SHRINKS(IT.plateau_shrinks(across)), act


def test_fig3_28_saddle_to_saddle_fails_on_a_lazy_interpolator():
    """Fig3.28/saddle-to-saddle (at least two plateaus of the thesis's detector on every converged ReLU run, Dataset
    1.3.3): the claim is the rich regime's (lambda = 1e-6 / 1e-3, "alternating fast and slow phases"); lazy ReLU
    networks (lambda = 2.5) fit the five points in a few hundred epochs without a plateau.  The loss is recorded at
    every epoch: where the record is coarser than the detector's block (T / 100 epochs; the chapter records every
    1000 epochs, its rich runs have T ~ 75000), blocks read the same record twice and count as slow, so a run
    converging within ~2000 epochs showed 1-2 spurious plateaus (seeds 0-3 here at record_every = 1000: 1, 1, 2, 1; since
    measures.thesis_plateaus reads each record once, 0, 0, 0, 0: test_thesis_plateaus_reads_each_coarse_record_once)."""
    ds = D.brisbois_nonorthogonal("1.3.3")
    P = SimpleNamespace(width=M, steps=5000, lr=1e-3, record_every=1, stop_below=1e-12)
    s = N.summary(N._train("relu", [2.5], [0, 1, 2, 3], P, ds), ds, 1e-6)
    assert bool(s["converged"].all())  # trained: the false case is no plateau, not no fit
    assert _rejects(N.SADDLE_TO_SADDLE, s["plateaus"].numpy())


def test_two_directions_fail_on_untrained_and_lazy_networks():
    """Fig3.15/relu-two-directions and Fig3.16/two-directions (the distinct directions of the grown ReLU neurons on
    Dataset 1.1.2, LV.directions: two, "an unexpected second direction in neuron alignment"): an untrained network
    (step 1e-12) and a lazy one (lambda = 1, trained to zero loss) did not align, and keep a direction per neuron.  A
    finding of this round, fixed: the criterion was "at least two", which both passed."""
    for lam, steps, lr in ((1e-6, 100, UNTRAINED_LR), (1.0, 3000, 1e-3)):
        e, _ = _variant("1.1.2", "relu", lam, steps, lr=lr)
        if lr > UNTRAINED_LR:
            assert float(e.traj.loss[:, -1].max()) < 1e-10  # it did learn
        assert _rejects(LV.TWO_DIRECTIONS, LV.directions(e.traj.final).numpy()), lam


def test_ds111_negative_first_fails_on_dataset_1_1_0():
    """DS1.1.1/negative-first (fit epoch of the positive label minus that of the negative one, positive: on Dataset
    1.1.1, ||D_-|| > ||D_+||, [5]'s theory fits the negative label first): on Dataset 1.1.0 (||D_+|| > ||D_-||, the
    roles swapped back) the trained rich ReLU runs fit the positive label first."""
    e0, d0 = _variant("1.1.0", "relu", 1e-6 / np.sqrt(M), 25000)
    f0 = LV.fit_epoch_table(e0, d0)
    assert (f0 > 0).all()  # both labels fitted
    # column k is the point x_k: on 1.1.1 x_1 is the positive point (the chapter's f1[:, 0] - f1[:, 1]); on 1.1.0 x_2 is
    assert _rejects(LV.NEGATIVE_FIRST, f0[:, 1] - f0[:, 0])


def test_fig3_17_ln_lambda_fails_when_fits_and_lambda_are_unpaired():
    """Fig3.17/relu-ln-lambda (R^2 of the negative-fit epoch on Dataset 1.1.4 against ln(1/lambda), above 0.98): the
    fit epochs of trained rich ReLU runs at lambda = 1e-6, 1e-4, 1e-2, each paired with another lambda (every order
    but the measured one and its reverse) follow no line in ln(1/lambda); the measured pairing passes."""
    d = D.get("brisbois-orthogonal", variant="1.1.4", device="cpu")
    lams = [1e-6, 1e-4, 1e-2]
    seed = Cm.assumption5_split(d, M, [0, 1, 2, 3])[0][:1]
    e = Cm.train_grid(d, ["relu"], M, Cm.combos(lams, seed, lrs=(1e-3,)), 20000, snapshots=range(0, 20001, 50))["relu"]
    f = LV.fit_epoch_table(e, d)
    neg = [float(f[e.runs(scale=lam)[0], 0]) for lam in lams]  # x_1 carries the negative label on 1.1.4
    assert all(v > 0 for v in neg)
    ln = np.log(1 / np.array(lams))
    assert LV.LN_LAMBDA(Cm.regression(ln, neg)[2])
    for perm in itertools.permutations(range(3)):
        if list(perm) in ([0, 1, 2], [2, 1, 0]):
            continue
        assert _rejects(LV.LN_LAMBDA, [Cm.regression(ln, [neg[i] for i in perm])[2]]), perm


def test_fig3_26_negative_first_fails_on_fig3_25s_data():
    """Fig3.26/negative-first (delta = 10, both inputs positive: negative-fit epoch minus positive-fit epoch, below 0):
    the claim is the delta = 10 case's; on Fig. 3.25's data (delta = 1) the chapter's rich runs (lambda = 1e-6,
    trained to zero loss) fit the positive label first, by thousands of epochs.  Delta = 10 on the same runs passes."""
    P = SimpleNamespace(width=20, init_scale=1e-6, lr=1e-3, steps=20000, seeds=[0, 1], deltas=[0.1], delta_a=1.0,
                        delta_b=10.0, snap_every=100)
    run = Q.run_quasi(P)
    a, b = Q.measure(run, Q.entry(run, "a")), Q.measure(run, Q.entry(run, "b"))
    assert bool(a["valid"].all()) and bool((a["pos"] > 0).all()) and bool((a["neg"] > 0).all())  # both labels fitted
    assert _rejects(Q.NEGATIVE_FIRST, (a["neg"] - a["pos"]).double())
    assert Q.NEGATIVE_FIRST((b["neg"] - b["pos"]).double())


def test_c11_alpha_crit_fails_for_tanh():
    """C.11/alpha-crit (a spike, max L > 1.05 L0, exactly when alpha > alpha_crit = 4/m, at 0.75x and 1.5x of 4/m):
    the threshold is Sigmoid's (sigma(0) = 1/2 puts m/2 in the output block of the Hessian at a small start); the
    chapter's threshold study run on Tanh (sigma(0) = 0, m = 60, lambda = 1e-6, 200 epochs) shows no spike above 4/m,
    so its rows disagree with the rule.  The same study on Sigmoid agrees."""
    data = D.get("brisbois-orthogonal", device="cpu")

    def study(act):
        ac = T.sigmoid_alpha_crit(60)
        lrs = [0.75 * ac, 1.5 * ac]
        ens = Cm.train_grid(data, [act], 60, Cm.combos([1e-6], [0], lrs=lrs), 200, record_every=1)[act]
        return IT.crit_rows({60: dict(alpha_crit=ac, lrs=lrs, ens=ens)})

    rows = study("tanh")
    assert all(bool(ok) for *_, ok in rows) and all(np.isfinite(r[3]) for r in rows)
    assert _rejects(IT.ALPHA_CRIT, [IT.alpha_crit_agrees(rows)])
    assert IT.ALPHA_CRIT(IT.alpha_crit_agrees(study("sigmoid")))


def test_c15_same_curve_fails_at_initialisation():
    """C.15/same-curve (R^2 of the neurons of another epoch against the S-curve fitted to the trained ones,
    S.curve_r2, above 0.95: "the same curve at every epoch" once aligned): the neurons at initialisation, before any
    alignment (a rich Sigmoid run on Dataset 1.1.4, lambda = 1e-6, m = 30, trained to zero loss; the curve fitted to
    its final neurons), lie on no such curve.  The final neurons' own R^2 passes."""
    d = D.get("brisbois-orthogonal", variant="1.1.4", device="cpu")
    e = Cm.train_grid(d, ["sigmoid"], 30, Cm.combos([1e-6], [0], lrs=(1e-3,)), 30000, snapshots=[0, 30000])["sigmoid"]
    assert float(e.traj.loss[:, -1].max()) < 1e-10
    f = S.fit_scurve(e.traj.final.W[0].numpy(), "sigmoid", -5.0, coarse=3, fine=2, refine=0)  # a coarse frame search
    assert S.SAME_CURVE(f.lsq.r2)
    assert _rejects(S.SAME_CURVE, [S.curve_r2(e.traj.at(0).W[0].numpy(), f.frame, f.lsq)])


def test_fig3_28_stuck_at_spurious_fails_on_untrained_networks():
    """Fig3.28/stuck-at-spurious (the seeds that do not converge at lambda = 1e-6 and are NOT at the spurious point of
    early alignment, L = 1/n with h(0) ~ 0: none, N.off_spurious): untrained networks (step 1e-12) do not converge
    either, but they sit at L(0) ~ 1 with no point fitted, not at the spurious point."""
    ds = D.brisbois_nonorthogonal("1.3.3")
    P = SimpleNamespace(width=M, steps=100, lr=UNTRAINED_LR, record_every=1, stop_below=1e-12)
    s = N.summary(N._train("relu", [1e-6], [0, 1, 2], P, ds), ds, 1e-3)
    assert not bool(s["converged"].any())
    x0 = int(torch.argmin(ds.x1d.cpu().abs()))
    assert _rejects(N.AT_SPURIOUS, [N.off_spurious(s, range(3), x0, ds.n)])


def test_b3_relu_nonzero_fails_where_an_output_weight_crosses_zero():
    """B3/relu-nonzero ("|a_j^t| = ||w_j^t|| > 0 ... a_j^t = s_j ||w_j^t|| for all t": the smallest s_j a_j^t over the
    snapshots, s_j = sign(a_j^0), above 0): the claim is ReLU's; the chapter's Fig. C.3 run on Sigmoid (m = 20,
    lambda = 1e-6, 2000 epochs) has an output weight that crosses zero.  A finding of this round, fixed: the old
    measure, the smallest |a_j^t| over the snapshots, stays positive on that run (1.5e-10: the crossing falls between
    two snapshots), so it passed.  The ReLU run of the same study passes."""
    P = SimpleNamespace(c3_width=20, c3_steps=2000, lr=1e-3, seeds=[0, 1, 2], width=20)
    c3 = B.run_c3(P)
    sig = c3["sigmoid"]
    assert B.sign_flips(sig["a"], sig["s"]) >= 1 and float(np.abs(sig["a"]).min()) > 0  # the old measure's blind spot
    assert _rejects(B.NONZERO, [B.min_signed(sig["a"], sig["s"])])
    assert B.NONZERO(B.min_signed(c3["relu"]["a"], c3["relu"]["s"]))


@pytest.fixture(scope="module")
def fig33_false_rows():
    """Fig. 3.3's false case: the chapter's grid (G.run_grid, Dataset 1.1.0, balanced init, Assumption-5 seeds) at
    widths 2 and 10 with a step size that shrinks as 1/m^2 (alpha = 0.1 (2/m)^2: 0.1 and 0.004), so that the wider
    network needs MORE epochs: the width is not marginal there."""
    rows = []
    for m in (2, 10):
        P = SimpleNamespace(widths=[m], lrs=[0.1 * (2 / m) ** 2], scales=[1e-10, 1e-8, 1e-2], budget=100,
                            max_epochs=300_000)
        rows += G.run_grid(P)
    return rows


@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh"])
def test_fig3_3_width_and_marginal_fail_where_the_wider_network_is_slower(fig33_false_rows, act):
    """Fig3.3/<act>-width (T non-increasing in m within 10%, G.nonincreasing, G.FIG33_WIDTH) and Fig3.3/<act>-marginal
    (spread of T across m over its spread across lambda in [1e-10, 1e-2], G.marginal_ratio, G.FIG33_MARGINAL):
    with a step size falling as 1/m^2 the wider network takes many times more epochs (every run reaches L < 0.01,
    so the T's are finite and positive), and the width's spread exceeds lambda's."""
    rr = sorted(G.select(fig33_false_rows, act=act, scale=1e-8), key=lambda r: r["width"])
    Tm = np.array([r["T"] for r in rr], dtype=float)
    assert all(r["valid"] for r in fig33_false_rows) and (Tm > 0).all() and Tm[1] > 2 * Tm[0]
    assert _rejects(G.FIG33_WIDTH, [G.nonincreasing(Tm)])
    lam = {s: G.select(fig33_false_rows, act=act, scale=s, width=10)[0]["T"] for s in (1e-10, 1e-2)}
    assert _rejects(G.FIG33_MARGINAL, [G.marginal_ratio(Tm, lam[1e-10], lam[1e-2])])


@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh"])
def test_fig3_13_final_variance_grows_rejects_an_untrained_network(act):
    """Fig3.13/final-variance-grows (ReLU), C.5/ and C.7/final-variance-grows (Sigmoid, Tanh): the trained network's
    orientation variance (IT.orientation_variance) grows over lambda in {1e-2, 3.5e-2, 7.5e-2, 1}, every seed
    (IT.variance_trend, IT.VARIANCE_GROWS).  An untrained network (step 1e-12: the orientations are the initial draw,
    the same at every scale) has no growth: its variances differ by about 1e-11 relative, rounding, and the trend
    reads 0 (the finding of the controls round: it read 1 when any non-decrease counted as growth)."""
    data = D.get("brisbois-orthogonal", device="cpu")
    scales = [1e-2, 3.5e-2, 7.5e-2, 1.0]
    e = Cm.train_grid(data, [act], M, Cm.combos(scales, [0, 1], lrs=[UNTRAINED_LR]), 2, snapshots=[0, 2])[act]
    trends = []
    for s in (0, 1):
        v = np.array([IT.orientation_variance(e, data, e.runs(scale=lam, seed=s)[0], 2) for lam in scales])
        assert np.ptp(v) < 1e-9 * v.max()  # no growth: the same orientations at every scale
        trends.append(IT.variance_trend(v))
    assert _rejects(IT.VARIANCE_GROWS, trends)


def test_fig3_1_normal_like_balanced_fails_on_an_unbalanced_start():
    """Fig3.1/{relu,sigmoid,tanh}-normal-like-balanced (epochs to L < 0.01 from a Gaussian start over those from the
    balanced start, same lambda and seed, Cm.plateau_table's T, within A.NORMAL_LIKE_BALANCED): the claim is that the
    thesis's normal start (both layers at scale lambda) behaves like the balanced one; an unbalanced Gaussian start
    (init.unbalanced, first layer at lambda = 1e-2, output layer at 30 lambda) fits in a fraction of the epochs
    (ratios 0.15 to 0.43), every run reaching L < 0.01."""
    from shallowflow.engine import init
    from shallowflow.engine.models import Network
    from shallowflow.engine.train import gradient_descent
    data = D.get("brisbois-orthogonal", device="cpu")
    lam, seeds, steps = 1e-2, [0, 1], 20000
    for act in T.ACTIVATIONS:
        eb = Cm.train_grid(data, [act], M, Cm.combos([lam], seeds), steps, stop_below=1e-3)[act]
        p0 = init.unbalanced(seeds, M, data.d, [lam] * 2, output_scale=[30 * lam] * 2, device="cpu")
        tr = gradient_descent(p0, data, Network(act), steps=steps, lr=1e-3, loss="mean", record_every=1, stop_below=1e-3,
                              on_nonfinite="stop")
        eu = Cm.Ensemble(act, tr, p0, [dict(scale=lam, seed=s, init="normal", lr=1e-3) for s in seeds])
        Tb = np.array([t["T"] for t in Cm.plateau_table(eb)], dtype=float)
        Tu = np.array([t["T"] for t in Cm.plateau_table(eu)], dtype=float)
        assert (Tb > 0).all() and (Tu > 0).all(), act  # both trained: the ratio is of two real T's
        assert A.NORMAL_LIKE_BALANCED(np.ones(2)), act
        assert _rejects(A.NORMAL_LIKE_BALANCED, Tu / Tb), act


def test_fig3_18_through_origin_rejects_an_s_curve_that_misses_the_origin():
    """Fig3.18/through-origin (S.neurons_intercept below S.THROUGH_ORIGIN): the claim is that the neurons' S-curve
    passes through (0, 0).  The false case: 100 neurons on a two-sigmoid S-curve (the form (3.1), turned by 30
    degrees) moved off the origin by 0.3 K across the curve.  The measurement on the neurons alone gives that offset
    and is rejected; the same curve through the origin passes.  (The finding of the controls round: the fit of the
    thesis's frame, which adds the anti-neurons -w, passes through 0 on any cloud, so it was no measurement.)"""
    u = np.linspace(-1.0, 1.5, 100)
    K = 0.8
    v = S.sig_form(u, -K, -5.0, K, 15.0)
    turn = np.array([[np.cos(0.5), -np.sin(0.5)], [np.sin(0.5), np.cos(0.5)]])
    normal = turn @ np.array([0.0, 1.0])
    for offset, missed in ((0.0, False), (0.3 * K, True)):
        pts = np.stack([u, v], 1) @ turn.T + offset * normal
        f = S.fit_scurve(pts, "sigmoid", -5.0, refine=0)
        measured = S.neurons_intercept(f)
        assert _rejects(S.THROUGH_ORIGIN, [measured]) == missed, (offset, measured)
        assert abs(f.lsq.intercept) / f.lsq.K < 0.05  # the symmetrised fit passes through 0 either way


def test_thesis_plateaus_reads_each_coarse_record_once():
    """measures.thesis_plateaus on a loss recorded more coarsely than one detector block (T // 100 epochs): a block
    edge reads the first record at or after it, so with the chapter's record of every 1000 epochs a run converging
    in ~2000 epochs read one record for ~10 edges in a row, each a zero change counted slow (Fig3.28's lazy false
    case showed 1-2 spurious plateaus).  Each record is now read once: a curve falling two decades per record has no
    plateau; the two-plateau curve of eq. (C.1)'s unit test keeps its two plateaus and its initial one at every
    record stride; at stride 1 the grid is the detector's own (unchanged)."""
    k = torch.arange(0, 10001, 1000)
    L = (10.0 ** (-k.double() / 500))[None]
    assert int(MS.thesis_plateaus(L, k)["count"][0]) == 0
    e = torch.arange(0, 10001)
    two = torch.where(e < 3000, torch.ones(1), torch.where(e < 4000, 10 ** (-(e - 3000) / 1000 * 0.3),
                      torch.where(e < 7000, torch.full((1,), 10 ** -0.3), 10 ** (-0.3 - (e - 7000) / 1000 * 3)))).double()
    for every in (1, 10, 250, 1000):
        out = MS.thesis_plateaus(two[None, ::every], e[::every], T=torch.tensor([10000]))
        assert (int(out["count"][0]), int(out["initial"][0])) == (2, 3000), every


from shallowflow.experiments.brisbois_thesis import gradients_hessians as GH  # noqa: E402

# Appendix D at tiny sizes: the thesis's width (10), two of its scales, a handful of draws, a two-epoch "training run"
# from lambda = 1 (where the gradient is of order 1 at once; at the chapter's 1e-6 it is of order lambda until growth)
GH_P = SimpleNamespace(width=10, draws=4, hessian_draws=2, scales=[1e-7, 1e-2], fd_step=1e-4, seeds=[0], data="1.1.0",
                       train_scale=1.0, train_lr=1e-3, train_steps=2, every=1)


def _mse_convention(f):
    """The closed form of the other loss convention (the MSE, twice the 1/(2n) loss of Chapter 4 and App. D): a
    formula off by the factor a convention mix-up makes, which the finite differences of the 1/(2n) loss must catch."""
    return lambda theta, X, y, act, m, loss="half": f(theta, X, y, act, m, loss="mean")


def test_appendix_d_gradient_checks_fail_on_a_wrong_closed_form(monkeypatch):
    """TableD.1/fd-at-most-thesis (float64 FD gradient error over the thesis's printed value, below 10) and
    FigD.2/smooth (|grad L_App - grad L_F| along training, Sigmoid/Tanh, under the thesis's 7e-4): with the closed-form
    gradient of the other loss convention (twice the right one; the finite differences still of the 1/(2n) loss)
    the closed form no longer agrees with the differences."""
    monkeypatch.setattr(GH.T, "gradient", _mse_convention(T.gradient))
    assert _rejects(GH.TABLE_D1_FD, GH.d1_ratio(GH.gradient_table(GH_P)))
    tr = GH.training_errors(GH_P)
    assert _rejects(GH.FIG_D2_BOUND, max(tr[a]["fd_l2"].max() for a in ("sigmoid", "tanh")))


def test_fig_d3_loss_fails_on_the_other_convention(monkeypatch):
    """FigD.3/loss (|L_PT - L_F| along training below 1e-12, L_PT the loss the training loop recorded): false when
    the recorded loss is read in the other convention (the 1/n MSE the loop trains on, not halved to the closed
    form's 1/(2n)), the mix-up the comparison must catch; a second copy of L_F's own expression, which the check
    compared before, differed from it by exactly 0 whatever either computed."""
    monkeypatch.setattr(GH, "loss_factor", lambda loss: 1.0)
    tr = GH.training_errors(GH_P)
    assert _rejects(GH.FIG_D3_LOSS, max(tr[a]["loss_diff"].max() for a in ("relu", "sigmoid", "tanh")))


def test_appendix_d_hessian_checks_fail_on_false_cases(monkeypatch):
    """TableD.2/smooth-fd64 (float64 FD Hessian error over the thesis's value, Sigmoid/Tanh, below 1): false with the
    closed-form Hessian of the other loss convention (twice the right one).  TableD.2/relu-kink (ReLU's smallest FD
    Hessian error at lambda <= 1e-2 above 0.1, the kink): false for a smooth activation, whose differences are
    accurate (the same GH.kink_error read on the Sigmoid and Tanh cells of the right table)."""
    right = GH.hessian_table(GH_P)
    for act in ("sigmoid", "tanh"):
        assert _rejects(GH.TABLE_D2_RELU_KINK, GH.kink_error(right, act)), act
    monkeypatch.setattr(GH.T, "hessian", _mse_convention(T.hessian))
    assert _rejects(GH.TABLE_D2_SMOOTH, GH.d2_smooth_ratio(GH.hessian_table(GH_P)))


def test_h2_checks_fail_on_false_cases():
    """H2/printed (autograd Hessian at App. D.2's point against the printed matrix, largest entry error below 1e-7):
    false for the Hessian in the (W, a) order in which theta is listed (d2_example's listed-order reading: the same
    matrix, rows and columns permuted).  H2/float32-fd (the thesis's stencil in float32: an error within a factor 10
    of the printed 9.410e-4): false for the same stencil in float64 (the thesis's error is a float32 one)."""
    d2 = GH.d2_example()
    assert _rejects(GH.H2_PRINTED, d2["autograd_vs_printed_listed_order"])
    assert _rejects(GH.H2_FLOAT32_FD, d2["fd64_error"])


def test_c1_tanh_min_norm_fails_on_a_lazy_limit():
    """C1/tanh and Conj2/min-norm (a solver's smallest Tanh interpolator norm over gradient descent's smallest
    ||theta*||, B.c1_ratio, at least 0.99: the GD limit is in argmin ||theta||): a lazy Tanh network (lambda = 1)
    trained to zero loss interpolates far from the minimum norm (its norm stays near the initial one).  The solver is
    the chapter's (one start, 20 L-BFGS steps per penalty; feasible: the best is finite)."""
    e, _ = _grid("tanh", [1.0], 2000)
    assert float(e.traj.loss[:, -1].max()) < 1e-10  # an interpolator: the false case is its norm, not its fit
    best = B.min_norm_interpolator("tanh", M, 1, iters=20)["best"]
    assert _rejects(B.C1_SUPPORTS, B.c1_ratio(best, B.final_norms(e)))


def test_fig3_27_vanishing_fails_where_every_rich_run_trains():
    """Fig3.27/vanishing ("gradient vanishing often occurs" for very small lambda on Dataset 1.3.3: the share of rich
    runs, lambda <= 1e-2, every activation, not converged within the budget, N.unconverged_share, above 0): on the
    orthogonal Dataset 1.1.0 the rich runs (lambda = 1e-2) of all three activations reach the chapter's goal (L < 1e-3)
    within the budget: no run stalls."""
    ds = D.get("brisbois-orthogonal", device="cpu")
    P = SimpleNamespace(width=M, steps=20000, lr=1e-3, record_every=10, stop_below=1e-6)  # each run stops at 1e-6
    runs = {act: N._train(act, [1e-2], [0], P, ds) for act in N.ACTS}
    assert all(float(e.traj.loss[0, -1]) < 1e-3 for e in runs.values())  # trained: the false case is that none stalls
    conv = {act: N.summary(e, ds, 1e-3)["converged"] for act, e in runs.items()}
    assert _rejects(N.VANISHING, N.unconverged_share(conv, {act: e.scales for act, e in runs.items()}))


def test_chizat_kappa_decrease_fails_for_sigmoid():
    """Chizat-kappa/relu (kappa(theta^0) = ||h - y|| ||D^2 h|| / ||D h||^2 at the balanced initialisation strictly
    decreasing as lambda grows over the chapter's scales: "lazy for large scale"): false for Sigmoid, whose
    sigma(0) = 1/2 keeps the Jacobian large at every lambda while the residual and the Hessian grow with it (the
    other activation; the chapter's Chizat-kappa/sigmoid fails for this reason)."""
    scales = [1e-3, 1e-2, 1e-1, 0.3, 1.0, 3.0, 10.0]  # the chapter's kappa_scales
    kap = PL.kappa("sigmoid", M, scales)
    assert np.isfinite(kap).all()
    assert _rejects(PL.KAPPA_DECREASES, [PL.kappa_decreasing(kap)])


def test_fig3_30_sigmoid_stuck_fails_on_a_learning_sigmoid():
    """Fig3.30/sigmoid-stuck (the share of seeds whose Sigmoid loss ratio L(E) / L(0) on Dataset 1.3.2 is above 0.99,
    TP.loss_ratio_at and TP.STUCK, its Wilson lower end above one half, TP.TYPICAL; the chapter reads E = 10^6 at
    lambda = 1e-6): a Sigmoid network that does learn (lambda = 1, lazy: no plateau) has left L(0) far behind by
    E = 2000 on every seed."""
    ds = D.brisbois_nonorthogonal("1.3.2")
    tr = TP._train("sigmoid", ds, [1.0], [0, 1, 2], M, 2000, SimpleNamespace(lr=1e-3, stop_below=1e-12), record_every=10)
    ratios = TP.loss_ratio_at(tr, [0, 1, 2], 2000)
    assert _rejects(TP.TYPICAL, [metrics.typical_share(TP.per_seed_flags(ratios.tolist(), TP.STUCK))[0]])
    assert float(ratios.max()) < 0.9  # it learned (0.18-0.55 here): the false case is the regime, not a numerical accident


def test_c14_imperfect_fails_on_a_perfect_s_curve():
    """C.14/imperfect (Tanh, Dataset 1.1.0: R^2 of the thesis's procedure, k1 = -5 with K and k read off, below 0.95,
    "does not perfectly fit"): neurons lying exactly on a curve of the thesis's form (3.2) with the procedure's own
    constraints (K1 = -K2, k1 = -5), in any rotation, are fitted by the procedure (S.fit_scurve, which A.procedure_fit
    applies to the merged neurons) with R^2 0.999: a perfect S-curve is no imperfect fit."""
    w = np.linspace(-2, 2, 120)
    W = np.stack([w, S.tanh_form(w, -1.0, -5.0, 1.0, 20.0)], 1)
    rot = np.array([[np.cos(0.7), -np.sin(0.7)], [np.sin(0.7), np.cos(0.7)]])
    assert _rejects(A.IMPERFECT, [S.fit_scurve(P_, "tanh", -5.0).procedure.r2 for P_ in (W, W @ rot.T)])


def test_fig3_14_tanh_unchanged_fails_in_the_lazy_range():
    """Fig3.14/tanh-unchanged (Dataset 1.1.2, Tanh: one plateau per curve, the initial one growing as lambda decreases,
    every init and seed, LV.one_plateau_growing): Tanh networks trained to L < 0.01 from lambda = 0.5 and 1 (lazy)
    have no plateau at all (the thesis's Fig. 3.2 regime): the rich picture is not "unchanged" there."""
    d = D.get("brisbois-orthogonal", variant="1.1.2", device="cpu")
    scales = [0.5, 1.0]
    e = Cm.train_grid(d, ["tanh"], M, Cm.combos(scales, [0], inits=("balanced", "normal")), 3000)["tanh"]
    tab = Cm.plateau_table(e)
    assert all(t["T"] > 0 for t in tab)  # trained to L < 0.01: the false case is the regime, not a failed run
    assert _rejects(LV.TANH_UNCHANGED, [LV.one_plateau_growing(e, tab, scales)])


def test_fig2_9_simpler_on_untrained_networks():
    """Fig2.9/simpler (toy_reproduction.fig29_simpler: every network interpolates, and the breakpoints of h on
    [x_1, x_2], metrics.kinks_of_function, are non-increasing as lambda decreases over 2.5, 1, 1e-6, fewer at the
    smallest): untrained networks (step 1e-12) are no interpolators, simpler or not.  They read [24, 24, 0] kinks at
    m = 60 ([10, 10, 0] here: equal draws give equal kink positions at every lambda, and at 1e-6 every jump
    a_j |w_j1| ~ lambda^2 is below the counter's 1e-2), which the old reading (non-increasing counts alone) passed: a
    finding of the controls round, fixed by reading the caption's "Final interpolator" (line 1121) and line 1116's
    "For larger initialization scale, they retrieve more complex resulting models".  Rejected now on both counts:
    the residuals are those of the untrained networks, and equal counts at every lambda fail on their own."""
    data = D.get("brisbois-orthogonal", device="cpu")
    scales = [2.5, 1.0, 1e-6]  # the chapter's interp_scales, in decreasing lambda
    e = Cm.train_grid(data, ["relu"], M, Cm.combos(scales, [0], lrs=(UNTRAINED_LR,)), 10, snapshots=[10])["relu"]
    kk = metrics.kinks_of_function(e.traj.final, (float(data.x1d.min()), float(data.x1d.max()))).numpy()
    resid = (X.h_at(e.traj.final, data) - data.y).abs().amax(1).numpy()
    assert np.all(np.isfinite(resid)) and resid.min() > 0.5  # nothing is fitted
    assert bool(np.all(np.diff(kk) <= 0))  # what the old reading passed
    assert _rejects(X.FIG29_SIMPLER, [X.fig29_simpler(kk, resid)])
    assert not X.fig29_simpler([5, 5, 5], [0.0, 0.0, 0.0])  # interpolators, but no simpler at small lambda
    assert X.fig29_simpler([25, 22, 2], [0.01, 0.01, 0.01])


def test_arora_linear_drift_is_not_first_order_at_large_steps():
    """Arora-dbal/linear-drift (the drift of a a^T - W W^T of the linear network on Dataset 1.1.0 over flow time 2,
    B.linear_balance_drift, halves with the step: ratios at consecutive halved steps under B.LINEAR_DRIFT): the drift is
    O(alpha) only in the small-step regime; at steps 0.2, 0.1, 0.05 (the chapter: 1e-2, 5e-3, 2.5e-3), still finite
    runs, it falls by 3.1 and 2.9 per halving, not 2, and the criterion rejects it."""
    lrs = [0.2, 0.1, 0.05]
    r = B.linear_balance_drift(lrs)
    assert bool(np.all(r["finite"]))
    assert _rejects(B.LINEAR_DRIFT, [r["drift"][lrs[i]] / r["drift"][lrs[i + 1]] for i in range(len(lrs) - 1)])


# -- round 6 --------------------------------------------------------------------------------------------------------------
from shallowflow.engine import train  # noqa: E402
from shallowflow.engine.models import Network  # noqa: E402
from shallowflow.verdicts import above  # noqa: E402


def test_fig3_17_tanh_two_stages_fails_in_the_lazy_regime():
    """Fig3.17/tanh-two-stages (Dataset 1.1.4, c = 1, Tanh: every run has a slow segment between the two halves of the
    drop or a second half more than three times the first, LV.two_stages): "first half much faster" is the rich
    regime's; lazy Tanh networks (lambda = 1, the chapter's m and step) fit both labels in one drop, both by epoch
    ~1000: one plateau, the second half a fraction of the first."""
    e, d = _variant("1.1.4", "tanh", 1.0, 3000)
    fits, tab = LV.fit_epoch_table(e, d), Cm.plateau_table(e)
    assert (fits > 0).all()  # both labels fitted: a trained network, not a failed run
    assert _rejects(LV.TANH_TWO_STAGES, [LV.two_stages(tab, fits)])


def test_fig3_35_36_second_nonzero_fails_on_a_symmetric_start():
    """Fig3.35/second-nonzero-as-stated and Fig3.36/second-nonzero-as-stated (EVR_2 of the final weights above float64
    noise, MD.SECOND_NONZERO; the thesis: "although small, is non-zero"): a start whose m neurons are one neuron
    repeated (the balanced draw's first neuron, for every j) stays so under gradient descent (identical neurons get
    identical gradients), so its final W has rank one: EVR_2 is rounding, the false case of "non-zero".  Sigmoid and
    Tanh, the multidimensional orthogonal data, 200 steps at the chapter's step."""
    ds = D.brisbois_multid()
    p = init.balanced([0, 1], 40, ds.d, 1e-2)
    sym = type(p)(p.a[:, :1].expand_as(p.a).clone(), p.W[:, :1].expand_as(p.W).clone())
    for act in ("sigmoid", "tanh"):
        tr = train.gradient_descent(sym, ds, Network(act), steps=200, lr=1e-3, loss="mean", snapshots=[0, 200])
        assert float((tr.final.W - tr.final.W[:, :1]).abs().max()) == 0.0 and float(tr.final.W.abs().max()) > 0
        assert float((tr.final.W - sym.W).abs().max()) > 0  # it trained
        assert _rejects(MD.SECOND_NONZERO, metrics.explained_variance_ratio(tr.final.W)[:, 1].numpy()), act


@pytest.mark.parametrize("act", ["sigmoid", "tanh"])
def test_fig3_19_c19_norm_falls_with_m_fails_on_untrained_networks(act):
    """Fig3.19/norm-falls-with-m (Sigmoid) and C.19/norm-falls-with-m (Tanh): every seed's mean final ||w_j|| strictly
    falls over the widths 20, 60, 100, 600 (S.norm_falls_with_m, S.FALLS).  "More neurons, smaller norms" comes from
    training (the neurons share the fit of the labels c = 75); untrained networks (step 1e-12, the chapter's lambda
    1e-6, seeds 0-2) keep the initial draw, whose mean norm does not depend on m, and the criterion rejects them."""
    ds = D.brisbois_alternative(75.0)
    params = [init.balanced([0, 1, 2], m, 2, [1e-6] * 3) for m in (20, 60, 100, 600)]
    trajs = train.gradient_descent_many(params, ds, Network(act), lr=UNTRAINED_LR, steps=2, loss="mean", snapshots=[0, 2])
    finals = [tr.final.W for tr in trajs]
    assert all(bool(torch.isfinite(W).all()) for W in finals)
    assert _rejects(S.FALLS, [S.norm_falls_with_m(finals)])


def test_fig3_19_spread_falls_with_lambda_fails_when_lambda_is_held_fixed():
    """Fig3.19/spread-falls-with-lambda (Sigmoid: the RMS spread around the fitted S-curve, S.Fit.rms, strictly falls
    as lambda decreases over the chapter's three scales; S.spread_falls_with_lambda, S.FALLS): the null sweep, the
    chapter's three scales replaced by one (lambda = 1e-6 three times, the same seed: the same trained network, m = 20,
    trained to zero loss on Dataset 1.1.4 with c = 75), where lambda does not fall and neither does the spread."""
    ds = D.brisbois_alternative(75.0)
    tr = train.gradient_descent(init.balanced([0], 20, 2, 1e-6), ds, Network("sigmoid"), lr=1e-4, steps=30000,
                                loss="mean", snapshots=[1000, 30000])
    assert float(tr.loss[0, -1]) < 1e-6
    pts = np.concatenate([tr.at(1000).W[0].numpy(), tr.final.W[0].numpy()])
    rms = S.fit_scurve(pts, "sigmoid", -5.0, coarse=3, fine=2, refine=0).lsq.rms  # a coarse frame search
    assert _rejects(S.FALLS, [S.spread_falls_with_lambda([rms] * 3)]) and np.isfinite(rms)


@pytest.fixture(scope="module")
def lazy_end_1_3_3():
    """C.30/C.32/C.34's false case: the lazy end of the lambda grid on Dataset 1.3.3 at the chapter's m = 60, step 1e-3,
    loss goal 1e-3 and 1000-epoch record interval (ReLU and Tanh at lambda 2.5, 2, 1.5 or 1; Sigmoid at 4, 3):
    every run is below L = 0.01 within the first 1000 epochs, so no slow phase appears as lambda decreases."""
    ds = D.brisbois_nonorthogonal("1.3.3")
    P = SimpleNamespace(width=60, steps=4000, lr=1e-3, record_every=1000, stop_below=1e-12)
    out = {}
    for act, scales in (("relu", [2.5, 2, 1]), ("sigmoid", [4, 3]), ("tanh", [2.5, 2, 1.5])):
        e = N._train(act, scales, [0], P, ds)
        out[act] = (e, N.summary(e, ds, 1e-3))
    return out


@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh"])
def test_c30_32_34_slower_as_lambda_falls_fails_where_no_slow_phase_appears(lazy_end_1_3_3, act):
    """C.30/, C.32/, C.34/slower-as-lambda-falls (N.slower_as_lambda_falls of the epochs to L < 0.01, median per
    lambda, largest lambda first; N.SLOWER): the lazy end of the grid (fixture) converges, and at every lambda in the
    same 1000 epochs: a flat timeline, no "phases of slow convergence as lambda decreases" (000:2211).  The old
    reading, the smallest consecutive ratio at least 1 ("do not decrease"), passed it (ratio 1; the book-scale C.30
    record read exactly 1): a finding of the controls round, fixed by also requiring the smallest lambda to be slower
    than the largest; the new reading rejects it."""
    e, s = lazy_end_1_3_3[act]
    assert bool(s["converged"].all())
    Ts = N.per_scale(s["T"], e.scales, range(len(e.scales)))
    assert min(N.slowdown_ratios(Ts)) >= 1.0  # what the old reading (C.above(1.0) on it) passed
    assert above(1.0)(min(N.slowdown_ratios(Ts)))
    assert _rejects(N.SLOWER, [N.slower_as_lambda_falls(Ts)])
    assert N.SLOWER(N.slower_as_lambda_falls([1000.0, 1000.0, 3000.0]))  # non-decreasing and slower at the end: passes


@pytest.mark.parametrize("act", ["sigmoid", "tanh"])
def test_c33_c35_simpler_fails_when_lambda_is_held_fixed(lazy_end_1_3_3, act):
    """C.33/simpler (Sigmoid) and C.35/simpler (Tanh): the total variation of h' on [-2, 2] at the smallest converged
    lambda over that at the largest (N.tv_ratio, N.SIMPLER: below 1).  The null sweep: the same converged network
    (the fixture's largest lambda) at both ends, lambda held fixed, is no simpler (ratio 1), and the criterion rejects
    it; the fixture's own lazy sweep, from its largest lambda to its smallest, does get smoother (it passes)."""
    e, s = lazy_end_1_3_3[act]
    tv = N.per_scale(s["tv"], e.scales, range(len(e.scales)))
    assert _rejects(N.SIMPLER, [N.tv_ratio([tv[0], tv[0]])])
    assert N.SIMPLER(N.tv_ratio(tv))


def test_fig3_32_small_until_400k_fails_in_the_lazy_regime():
    """Fig3.32/small-until-400k (Tanh, Dataset 1.3.2: L at epoch 400,000 over L(0) above 0.99, "small norm, no fit yet";
    TP.SMALL_UNTIL_400K, the chapter's criterion): a lazy Tanh network (lambda = 1, the chapter's step 1e-3) fits the ten points long before
    that epoch; its L at the end of 3000 epochs over L(0) is far below 0.99."""
    tr = _ten("tanh", 1.0, 3000)
    ratio = (tr.loss[:, -1] / tr.loss[:, 0]).numpy()
    assert _rejects(TP.SMALL_UNTIL_400K, ratio) and ratio.max() < 0.5


def test_fig3_21_lsq_fit_is_never_below_the_procedure_by_construction():
    """Why Fig3.21's former check `lsq-at-least-as-good` (least-squares R^2 minus the procedure's >= 0) was retired: it
    could not fail. On neurons at initialisation (random directions, no S-curve, the false case of "the S-curve fits")
    the difference is still >= 0, because the least-squares fit starts at the procedure's parameters and cannot end
    below its start. The chapter prints the difference instead of checking it."""
    W = init.balanced([0], 20, 2, 1.0).W[0].numpy()
    f = S.fit_scurve(W, "sigmoid", -5.0, coarse=3, fine=2, refine=0)
    assert not S.GOOD_FIT(f.lsq.r2)  # the false case is what it says: no S-curve
    assert f.lsq.r2 - f.procedure.r2 >= 0.0
