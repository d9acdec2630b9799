"""Negative controls for 002 (early alignment): each test builds a case where the claim of a deciding check is false
(an untrained network, a scale above lambda*, the other activation, an unbalanced start, a step far above the
authors') with the package's own functions, measures it with the function the chapter uses, checks that the
measurement is finite, and asserts that the chapter's own criterion object rejects it.

The registry (verdicts/002.yml) names these tests in the ``control:`` of the checks they control.  A criterion that
passes a false case is a finding, kept here as ``xfail(strict=True)`` (FINDING) until its check is fixed; round 1's
three are fixed (see test_alignment_remark1_share_does_not_grow_on_an_untrained_sweep,
test_alignment_switched_off_neurons_move_under_leaky_relu and test_failure_rates_width_independence_*). Costly false
cases are built once per module (fixtures).
"""
import math
from types import SimpleNamespace

import pytest
import torch

from shallowflow.engine import data as datasets
from shallowflow.experiments.early_alignment import alignment, assumption3, failure_rates, spurious
from shallowflow.experiments.early_alignment import theory as th


FINDING = dict(strict=True, raises=AssertionError)  # a criterion that passes a false case: a finding


def _finite(x) -> bool:
    return bool(torch.isfinite(torch.as_tensor(x, dtype=torch.float64)).all())


def _untrained_figure2():
    """The Figure 2 run (balanced, lambda 1e-3, the book's step) stopped after 2 steps: the network has not trained."""
    P = SimpleNamespace(width=300, init_scale=1e-3, lr=1e-3, steps=2, seeds=[0], monitor_every=1, eps=1e-9, eps2=1e-2,
                        eps3=1e-2, width_dominated=20, steps_dominated=2, balance_width=10, balance_time=1e-3,
                        animation_frames=0, control_width=50, control_time=2e-3, control_leak=0.1)
    return spurious.run_figure2(P)


def test_spurious_untrained_network_fails_the_limit_checks():
    """E2/predictions, E2/linear-equivalence, E2/single-neuron, E2/relu-ols, E2/ols-on-hull (Figure 2 (g, h), Theorem 4):
    an untrained network (2 steps from lambda = 1e-3) is not the OLS limit: h ~ 0 is far from the OLS predictions and
    from relu(OLS) on [-1, 1], sum a_j w_j is far from beta*, and the all-active positive neurons point anywhere."""
    end = spurious.end_state(_untrained_figure2())
    for key, crit in (("pred_err", spurious.PREDICTIONS), ("lin_err", spurious.LINEAR_EQUIVALENCE),
                      ("min_cos_beta", spurious.SINGLE_NEURON), ("sup_relu_ols", spurious.RELU_OLS),
                      ("sup_hull", spurious.OLS_ON_HULL)):
        assert _finite(end[key]), key
        assert not crit(end[key]), key


@pytest.fixture(scope="module")
def untrained_sweep():
    """Theorem 1's sweep with eps -> 0: tau_eps = eps ln(1/lambda) is iteration 0, the network has not trained
    (shared by the tests of this module that read it)."""
    P = SimpleNamespace(width=20, scales=[1e-2, 1e-4, 1e-6, 1e-8], seeds=[0], epsilons=[1e-12], lr=1e-3, time=1e-3,
                        monitor_every=1, eps2=1e-2, eps3=1e-2)
    sw = alignment.run_sweep(P)
    assert int(sw.at_tau[1e-12]["k"].max()) == 0
    return sw


def test_alignment_untrained_sweep_fails_theorem1_ii_shares(untrained_sweep):
    """Thm1(ii)/positive-to-maximum and Thm1(ii)/negative-to-minimum at the smallest lambda, before any alignment (tau at
    iteration 0): the positive neurons are spread over every cone and the negative ones are not switched off."""
    sw = untrained_sweep
    at, at_min = sw.at_tau[1e-12], sw.lam == float(sw.lam.min())
    for key, crit in (("plus_in_max_cone", alignment.POSITIVE_TO_MAXIMUM), ("minus_inactive", alignment.NEGATIVE_TO_MINIMUM)):
        v = at[key][at_min]
        assert _finite(v) and not crit(v), key


def test_alignment_remark1_share_does_not_grow_on_an_untrained_sweep(untrained_sweep):
    """Rem1/aligned-share-grows on an untrained sweep (tau at iteration 0: no neuron aligned at any lambda): the share
    stays at 0 as lambda falls, so it does not grow (growth 0), and REM1_GROWS rejects it. (Round 1's finding: the
    check then measured the largest drop, which is 0 on this case too, and passed it.)"""
    growth = alignment.share_growth(alignment.aligned_shares(untrained_sweep, 1e-12))
    assert _finite(growth) and growth == 0
    assert not alignment.REM1_GROWS(growth)


def test_alignment_switched_off_neurons_move_under_leaky_relu():
    """Thm1(ii)/switched-off-never-move (Lemma 11: D_j = 0, the neuron never moves) with the other activation: the
    chapter's sweep (balanced, the three points, eps = 0.5) with leaky ReLU (gamma = 0.1), where a neuron inactive on
    every point still has the gradient gamma a_j sum_k r_k x_k: the neurons inactive at tau_eps move after it, and
    SWITCHED_OFF_FROZEN rejects their largest change. An untrained ReLU sweep (round 1's xfail) is no false case: for
    ReLU the invariant holds at every step, trained or not (sigma' = 0 off the cone), and the check passes it rightly."""
    P = SimpleNamespace(width=20, scales=[1e-2, 1e-4], seeds=[0], epsilons=[0.5], lr=1e-3, time=5.0,
                        monitor_every=100, eps2=1e-2, eps3=1e-2)
    sw = alignment.run_sweep(P, activation="leaky_relu", leak=0.1)
    v = sw.at_tau[0.5]["frozen_moved"]
    assert _finite(v) and bool((sw.at_tau[0.5]["n_inactive"] > 0).all())
    assert not alignment.SWITCHED_OFF_FROZEN(v)


def test_failure_rates_no_escape_count_fails_above_lambda_star():
    """Thm2/no-escape-small-scales: the same count (runs ending below the OLS loss) at lambda = 1, above lambda*, where
    Theorem 2's hypothesis fails and the runs escape (the book's step and flow time, width 100): the count is positive
    and the criterion rejects it."""
    data = datasets.get("ea-three-point", device="cpu")
    g = failure_rates.run_grid(data, [100], [1.0], lambda m: [0, 1], lr=1e-2, T=100.0)
    Ls = float(th.ols(data.X, data.y).loss)
    n = failure_rates.escapes_below_ols(g, [100], [1.0], Ls)
    assert math.isfinite(n) and n > 0
    assert not failure_rates.NO_ESCAPE(n)


def test_assumption3_untrained_gd_is_not_at_the_ols_loss():
    """E1/gd-spurious (Figure 1): balanced GD stopped before its first step (flow time 1e-9) sits at L(0), not at the
    OLS loss of the Assumption-3 data: |L - L_lin*| is far above the criterion's bound."""
    P = SimpleNamespace(eta=0.1, gd_widths=[10], gd_scale=1e-3, gd_time=1e-9, lr=1e-2)
    f1 = assumption3.figure1(P)
    v = abs(f1["gd_loss"] - float(f1["ols"].loss))
    assert math.isfinite(v)
    assert not assumption3.GD_SPURIOUS(v)


BOOK_SCALES = [1e-4, 1e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0]  # the chapter's scales of the phase diagram


def _untrained_grid(widths):
    """The phase diagram on the chapter's scales with zero steps (flow time 1e-9 at step 1e-2): no run trains."""
    data = datasets.get("ea-three-point", device="cpu")
    return failure_rates.run_grid(data, widths, BOOK_SCALES, lambda m: [0, 1], lr=1e-2, T=1e-9)


def test_failure_rates_untrained_grid_has_no_threshold_in_the_band():
    """Thm2/lambda-star-common: on an untrained grid every run fails at every scale, lambda = 1 included, so there is
    no threshold above which runs escape: the largest all-fail scale is the top of the grid, outside the spec's band."""
    g = _untrained_grid([1, 10, 100])
    v = min(failure_rates.empirical_lambda_star(g, m) for m in g.widths)
    assert math.isfinite(v) and v == max(BOOK_SCALES)
    assert not failure_rates.LAMBDA_STAR_BAND(v)


def test_failure_rates_width_independence_refuses_an_untrained_grid():
    """Thm2/lambda-star-width-independent on an untrained grid (m = 100, 1000): every width fails at every scale, so
    neither has a boundary, and the measurement is NaN: the check cannot pass it. (Round 1's finding: the ratio of the
    all-fail scales, both the top of the grid, was 1 and passed.) Not a control (a NaN proves nothing): the control
    is the next test."""
    v = failure_rates.width_independence(_untrained_grid([100, 1000]), [100, 1000])
    assert math.isnan(v) and not failure_rates.LAMBDA_STAR_SAME(v)


def test_failure_rates_width_independence_fails_where_the_boundary_moves():
    """Thm2/lambda-star-width-independent: the same ratio (the chapter's step and flow time, 2 seeds) on widths 5 and
    100, where the boundary is not the same (the book's phase diagram: the largest all-fail scale is 0.3 at m = 5 and
    0.03 at m = 100; the spec's check takes m >= 100 for this reason): both widths escape at some scale, so the ratio is
    finite, and it is far from 1."""
    data = datasets.get("ea-three-point", device="cpu")
    g = failure_rates.run_grid(data, [5, 100], [0.03, 0.1, 0.3, 1.0], lambda m: [0, 1], lr=1e-2, T=100.0)
    v = failure_rates.width_independence(g, [5, 100])
    assert math.isfinite(v) and v > 1
    assert not failure_rates.LAMBDA_STAR_SAME(v)


@pytest.mark.parametrize("eps", [0.25, 0.5, 0.75])
def test_alignment_exponents_fail_before_the_early_phase(eps, untrained_sweep):
    """Thm1(i)/exponent-eps*, Thm1(i)/output-eps*, Thm1(ii)/median-exponent-eps*, Thm1(ii)/max-exponent-eps* (the
    chapter's three epsilons): Theorem 1's exponents measured at iteration 0 (eps -> 0 puts tau there), before the
    early alignment: the output weights have not grown (ratio 1, exponent 0, not eps), h is still of order lambda^2
    (exponent 2, not 2(1 - eps)) and the misalignment does not depend on lambda (exponent 0, not 2 eps)."""
    sw = untrained_sweep
    s = alignment.sweep_exponents(sw, 1e-12)
    for key, crit in (("R", alignment.ratio_exponent_criterion(eps)), ("h", alignment.output_exponent_criterion(eps)),
                      ("med", alignment.alignment_exponent_criterion(eps)),
                      ("max", alignment.alignment_exponent_criterion(eps))):
        assert math.isfinite(s[key]), key
        assert not crit(s[key]), (key, s[key])


def test_alignment_spread_does_not_shrink_before_the_early_phase(untrained_sweep):
    """S5-omni/spread-exponent (eps = 0.5, the chapter's): the arc around D covered by S+ measured at iteration 0,
    before the early alignment: the positive neurons still point anywhere at every lambda, so the arc does not
    shrink as lambda^eps (fitted exponent 0)."""
    sw = untrained_sweep
    lam = sw.lam.numpy()
    small = lam <= 1e-3
    v = alignment.loglog_slope(lam[small], alignment.spread_arc(sw, 1e-12).numpy()[small])[0]
    assert math.isfinite(v)
    assert not alignment.spread_exponent_criterion(0.5)(v)


def test_assumption3_far_outside_assumption3_some_draws_fail():
    """Lem8/assumption4, Lem8/assumption5, Lem8/assumption5-linear, Lem8/assumption6, Lem8/remark3-not-tight: the same
    census (the chapter's flow settings, 300 draws, all of them integrated for A5) at eta = 0.9, far above Lemma 8's 1/6 and
    Remark 3's etas: some draws violate each of A4-A6, so every share is below 1."""
    P = SimpleNamespace(lemma_etas=[], remark_etas=[0.9], draws=300, flow_draws=300, flow_start=[1e-6, 1e-3],
                        flow_time=40.0, flow_dt=0.2)
    cen = assumption3.run_lemma8(P)[0.9]
    for key in ("a4", "a5", "a5_linear", "a6", "all"):
        v = [float(cen[key].double().mean())]
        assert _finite(v) and not assumption3.EVERY_DRAW(v), key


@pytest.fixture(scope="module")
def figure2_end_of_phase_2a():
    """A Figure 2 run (lambda = 1e-3, width 50, step 1e-2) stopped at 400 iterations, just after tau_2 (the end of
    Phase 2a): the neurons are aligned with D and growing, the network has not converged."""
    P = SimpleNamespace(width=50, init_scale=1e-3, lr=1e-2, steps=400, seeds=[0], monitor_every=10, eps=0.5,
                        eps2=1e-2, eps3=1e-2, width_dominated=5, steps_dominated=2, balance_width=5, balance_time=1e-2,
                        animation_frames=0, control_width=5, control_time=2e-2, control_leak=0.1)
    return spurious.run_figure2(P)


@pytest.fixture(scope="module")
def figure2_above_lambda_star():
    """The Figure 2 run (balanced, the three-point data) from lambda = 1, above lambda*, where Theorem 2's hypothesis
    fails (width 50, step 1e-2, flow time 50, 2 seeds), with its dominated run (width 20) as long: both escape the OLS
    plateau towards a global minimum."""
    P = SimpleNamespace(width=50, init_scale=1.0, lr=1e-2, steps=5000, seeds=[0, 1], monitor_every=50, eps=0.5,
                        eps2=1e-2, eps3=1e-2, width_dominated=20, steps_dominated=5000, balance_width=10, balance_time=1e-3,
                        animation_frames=6, control_width=10, control_time=1e-3, control_leak=0.1)
    return spurious.run_figure2(P)


def test_spurious_above_lambda_star_the_plateau_is_broken(figure2_above_lambda_star):
    """E2/plateau-never-broken and E2/final-loss: the Figure 2 run from lambda = 1, above lambda*: the loss leaves the
    OLS plateau and ends far below L_lin*, so min_t L - L_lin* < 0 and |L_final - L_lin*| is not small."""
    fr = figure2_above_lambda_star
    end = spurious.end_state(fr)
    Ls = float(end["L_star"])
    for v, crit in ((fr.run.loss.amin(1) - Ls, spurious.NEVER_BELOW_OLS), ((end["loss"] - Ls).abs(), spurious.FINAL_AT_OLS)):
        assert _finite(v) and not crit(v)


def test_spurious_no_saddle_descent_at_a_global_minimum(figure2_above_lambda_star):
    """S5-limit/saddle-descent: the same one-neuron replacement (smallest neuron -> rho (1, (1, 0))) at the end of the
    lambda = 1 run, which is near a global minimum (L about 5e-4), not the balanced spurious saddle: its residuals no
    longer have the sign that makes relu(x) a descent direction, so the replacement raises L and SADDLE_DESCENT
    rejects it."""
    dL = max(spurious.saddle_test(figure2_above_lambda_star)["dL"])
    assert math.isfinite(dL) and dL > 0
    assert not spurious.SADDLE_DESCENT(dL)


def test_spurious_dominated_run_escapes_above_lambda_star(figure2_above_lambda_star):
    """S5-limit/dominated-spurious: the dominated run (|a_j| > |w_j|) from lambda = 1, above lambda*, where the spurious
    convergence of Theorem 2 does not hold: it escapes, |L - L_lin*| is large, and DOMINATED_SPURIOUS rejects it."""
    fr = figure2_above_lambda_star
    end = spurious.end_state(fr, fr.dominated.final)
    v = (end["loss"] - end["L_star"]).abs()
    assert _finite(v) and not spurious.DOMINATED_SPURIOUS(v)


def test_spurious_at_the_end_of_phase_2a_the_neurons_still_point_at_d(figure2_end_of_phase_2a):
    """E2/moved-from-D (Figure 2 (d) against (h)): the same measurement (median cos(w_j, beta*) minus median cos(w_j, D)
    over the positive all-active neurons, spurious.end_state) on the parameters at tau_2, the end of Phase 2a of a
    Figure 2 run (lambda = 1e-3, width 50, step 1e-2), before Phase 2b has turned them: they are aligned with D, not
    beta*, so the difference is negative and MOVED_FROM_D rejects it."""
    fr = figure2_end_of_phase_2a
    k, q = fr.captures["tau2"][0]
    end = spurious.end_state(fr, q)
    v = end["median_cos_beta"] - end["median_cos_D"]
    assert 0 < k < 400 and _finite(v)
    assert not spurious.MOVED_FROM_D(v)


def test_alignment_no_pairwise_alignment_at_a_large_scale():
    """Lem5/pairwise and Lem6/pairwise: the same measurement (min pairwise cos over S+ at the tau_2 and tau_3 captures of
    the sweep, theory.series_at_capture) on the chapter's sweep at lambda = 0.1 (width 20, step 2e-2), a scale far
    above the small lambda of Lemmas 5 and 6: the early alignment phase is too short (tau_2 comes before
    tau_eps), the S+ neurons grow from wherever they started, and PAIRWISE_ALIGNED rejects both captures."""
    P = SimpleNamespace(width=20, scales=[1e-1], seeds=[0], epsilons=[0.5], lr=2e-2, time=23.0, monitor_every=20,
                        eps2=1e-2, eps3=1e-2)
    sw = alignment.run_sweep(P)
    for name in ("tau2", "tau3"):
        v = th.series_at_capture(sw.run, sw.captures, name, "pair_min_cos")
        assert _finite(v), name
        assert not alignment.PAIRWISE_ALIGNED(v), (name, v)


@pytest.fixture(scope="module")
def figure2_large_scale():
    """The Figure 2 run (balanced, width 20, step 2e-2) from lambda = 0.1, above the small lambda of Lemmas 5 and 6,
    stopped at 1150 iterations (flow time 23, just after its tau_3 at 21.8); eps = 0.05 puts tau_eps (0.08) before its
    tau_2 (0.2): Lemma 5's window is not empty (eps only sets tau_eps: the run is the same for every eps)."""
    P = SimpleNamespace(width=20, init_scale=1e-1, lr=2e-2, steps=1150, seeds=[0], monitor_every=10, eps=0.05,
                        eps2=1e-2, eps3=1e-2, width_dominated=5, steps_dominated=2, balance_width=5, balance_time=1e-2,
                        animation_frames=0, control_width=5, control_time=2e-2, control_leak=0.1)
    return spurious.run_figure2(P)


def test_spurious_phase_2b_fails_at_a_large_scale(figure2_large_scale):
    """Lem6/negative-small, Lem6/positivity and E2/panel-cd-aligned: the Figure 2 run (balanced, width 20, step 2e-2) from lambda = 0.1, above
    the small lambda of Lemmas 5 and 6: at tau_2 the S+ neurons are not aligned with D (Figure 2 (c, d)'s median
    1 - cos far above 1e-4), at tau_3 the negative neurons still have output weights of order lambda (not below
    1e-2), and on [tau_2, tau_3] some S+ neuron is negatively correlated with a data point: NEGATIVE_SMALL_TAU3 and
    POSITIVITY reject the chapter's measurements (theory.series_at_capture, spurious.window). (A hypothesis that fails
    need not break the claim in every run: at width 10 the positivity happens to hold; at width 20 it does not.)"""
    fr = figure2_large_scale
    pt = spurious.phase_times(fr)
    aligned = th.series_at_capture(fr.run, fr.captures, "tau2", "misalign_median")
    assert _finite(aligned) and not spurious.PANEL_CD_ALIGNED(aligned)
    neg = th.series_at_capture(fr.run, fr.captures, "tau3", "neg_abs_a")
    pos = spurious.window(fr, "pos_margin", pt["tau2"], pt["tau3"], "min")
    assert _finite(neg) and _finite(pos)
    assert not spurious.NEGATIVE_SMALL_TAU3(neg)
    assert not spurious.POSITIVITY(pos)


def test_spurious_balancedness_drifts_at_a_large_step():
    """Lem1/drift-bound: the same balancedness runs (spurious.run_figure2's two short runs, width 10, flow time 2) at
    the step 0.5, 500 times the authors', where gradient descent no longer follows the flow that conserves
    a_j^2 - |w_j|^2 (Lemma 1): the drift over max a_j^2 is above the bound, and DRIFT_BOUND rejects it."""
    P = SimpleNamespace(width=5, init_scale=1e-3, lr=0.5, steps=4, seeds=[0], monitor_every=2, eps=0.0, eps2=1e-2,
                        eps3=1e-2, width_dominated=5, steps_dominated=2, balance_width=10, balance_time=2.0,
                        animation_frames=0, control_width=5, control_time=1.0, control_leak=0.1)
    fr = spurious.run_figure2(P)
    v = fr.balance["lr"]["drift"] / fr.balance["lr"]["max_a_sq"]
    assert bool(fr.valid["balance"].all()) and _finite(v)
    assert not spurious.DRIFT_BOUND(v)


def test_failure_rates_tiny_width_escapes_above_lambda_star():
    """Thm2/tiny-widths-spurious: the same share (runs ending at the OLS fit or at zero, counted when some run of the cell
    reached the OLS fit) at m = 5 and lambda = 1, above the tiny width's all-fail scale (0.3 in the book's phase
    diagram), with the chapter's step and flow time (4 seeds): some run escapes to a global minimum, the share is below
    1 and TINY_SPURIOUS rejects it."""
    data = datasets.get("ea-three-point", device="cpu")
    g = failure_rates.run_grid(data, [5], [1.0], lambda m: [0, 1, 2, 3], lr=1e-2, T=100.0)
    v = failure_rates.tiny_spurious_share(g, [5], [1.0])
    assert math.isfinite(v)
    assert not failure_rates.TINY_SPURIOUS(v)


def test_assumption3_larger_etas_escape_above_lambda_star():
    """Thm2/remark3-gd (Remark 3: "a similar result" holds for a larger eta): the same share (runs ending at their
    dataset's OLS loss, assumption3.a3_gd, one share per eta) at the chapter's etas 0.2 and 0.3, its flow time and
    draws (seed base 600) and the step 1e-2 (its fast_lr), from lambda = 1, above every dataset's lambda*, where
    Theorem 2's conclusion is false (width 20, 3 draws each): the runs escape to a global minimum, the shares are 0,
    and REMARK3_GD rejects them."""
    res = assumption3.a3_gd([0.2, 0.3], [20], [3], [0], 1.0, 1e-2, 40.0, seed_base=600)
    v = [assumption3.ols_share({key: cell}) for key, cell in res.items()]
    assert _finite(v)
    assert not assumption3.REMARK3_GD(v)


def test_spurious_the_path_is_still_long_before_convergence(figure2_end_of_phase_2a):
    """Lem9-24/finite-path (Lemma 23): the same share (path length in the last 20% of the run over the whole path,
    spurious.tail_fit) on a run stopped just after tau_2, long before the limit: its neurons are growing fastest at
    the end, so most of the path is in the last 20%, and FINITE_PATH rejects it."""
    tail = spurious.tail_fit(figure2_end_of_phase_2a)
    v = tail["path_last20"] / tail["path_total"]
    assert math.isfinite(v)
    assert not spurious.FINITE_PATH(v)


def test_spurious_animation_ends_away_from_ols_above_lambda_star(figure2_above_lambda_star):
    """E4/figure2-ends-spurious: the same measurement (|L - L_lin*| at the animation's last frame, theory.frame_losses on
    the frames the chapter draws, the authors' schedule) on the lambda = 1 run, above lambda*: its last frame is near
    a global minimum, far below the OLS loss, and ANIMATION_ENDS_AT_OLS rejects it."""
    fr = figure2_above_lambda_star
    frames = [fr.run.snaps[k] for k in fr.frames]
    assert len(frames) >= 2
    L = th.frame_losses(frames, fr.data, fr.network)
    v = abs(float(L[-1]) - float(fr.ols.loss))
    assert math.isfinite(v)
    assert not spurious.ANIMATION_ENDS_AT_OLS(v)


def test_alignment_unbalanced_outputs_outgrow_the_bound():
    """Thm1(i)/bound: the same measurement (max_j |a_j(tau_eps)| / |a_j(0)| times lambda^eps, alignment.output_growth) on
    the chapter's sweep from an unbalanced start (theory.initialise "unbalanced": independent layers, Equation 4,
    "crucial to our analysis", broken; width 20, lambda 1e-2 and 1e-4, eps = 0.5, step 1e-2): an output weight that
    starts much smaller than its hidden weight grows far faster than lambda^(-eps), and THM1_BOUND rejects it."""
    P = SimpleNamespace(width=20, scales=[1e-2, 1e-4], seeds=[0], epsilons=[0.5], lr=1e-2, time=4.0, monitor_every=10,
                        eps2=1e-2, eps3=1e-2)
    v = alignment.output_growth(alignment.run_sweep(P, kind="unbalanced"), P.epsilons)
    assert _finite(v)
    assert not alignment.THM1_BOUND(v)


def test_spurious_animation_does_not_descend_at_a_large_step():
    """E4/figure2-descent: the same measurement (largest loss rise between consecutive frames of the authors' schedule
    over L(0), spurious.largest_frame_rise of theory.frame_losses) on the Figure 2 run (width 20, lambda 1e-3) at the
    step 0.8, 800 times the authors': gradient descent overshoots (the run stays finite), the loss rises between two
    frames, and ANIMATION_DESCENT rejects it."""
    P = SimpleNamespace(width=20, init_scale=1e-3, lr=0.8, steps=400, seeds=[0], monitor_every=10, eps=0.0, eps2=1e-2,
                        eps3=1e-2, width_dominated=5, steps_dominated=2, balance_width=5, balance_time=1.6,
                        animation_frames=6, control_width=5, control_time=1.6, control_leak=0.1)
    fr = spurious.run_figure2(P)
    v = spurious.largest_frame_rise(th.frame_losses([fr.run.snaps[k] for k in fr.frames], fr.data, fr.network))
    assert bool(fr.valid["run"].all()) and math.isfinite(v)
    assert not spurious.ANIMATION_DESCENT(v)


def test_spurious_the_function_is_not_small_at_tau_2_above_lambda_star(figure2_above_lambda_star):
    """E2/panel-cd-loss (Figure 2 (c, d): at the end of Phase 2a the function is still nearly 0): the same measurement
    (L / L(0) at the tau_2 capture, theory.series_at_capture) on the lambda = 1 run: its neurons start large, Phase
    2a's threshold is met at iteration 0, where the network is not near 0 (L / L(0) about 0.87 and 0.88 for the two
    seeds, below 0.9 by a small margin: the case is deterministic), and PANEL_CD_LOSS rejects it."""
    fr = figure2_above_lambda_star
    v = th.series_at_capture(fr.run, fr.captures, "tau2", "loss") / float((fr.data.y ** 2).mean())
    assert _finite(v)
    assert not spurious.PANEL_CD_LOSS(v)


def test_failure_rates_leaky_wide_network_does_not_fail_at_a_moderate_scale():
    """S5-leaky/fixed-width-small-scale (footnote 7: at a fixed width, a small enough scale fails again): the same share
    (failing runs at the grid's smallest scale, counted when some run of the width succeeds, failure_rates.
    fixed_width_failing) on a leaky-ReLU grid (gamma = 0.1, the chapter's step, flow time and stopping loss) at
    m = 100 whose only scale, 1e-3, is not small enough for that width (Section 5: leaky ReLU keeps
    omnidirectionality there and converges): a run reaches a global minimum, the share is below 1, and
    FIXED_WIDTH_FAILS rejects it."""
    data = datasets.get("ea-three-point", device="cpu")
    g = failure_rates.run_grid(data, [100], [1e-3], lambda m: [0, 1], lr=1e-2, T=400.0, activation="leaky_relu",
                               leak=0.1, stop_below=1e-10)
    v = failure_rates.fixed_width_failing(g, 100)
    assert math.isfinite(v)
    assert not failure_rates.FIXED_WIDTH_FAILS(v)


def test_spurious_first_order_prediction_fails_away_from_the_ols_limit(figure2_above_lambda_star):
    """S5-limit/saddle-prediction: the same relative gap (dL of spurious.saddle_test's one-neuron replacement against
    its first-order prediction (2/n) rho^2 sum_k r_k relu(x_k), r the OLS residuals) at the end of the lambda = 1 run,
    which is near a global minimum, not at the OLS limit the prediction assumes: the residuals are near 0, dL is
    positive where the prediction is negative, and SADDLE_PREDICTION rejects the gap."""
    sad = spurious.saddle_test(figure2_above_lambda_star)
    v = max(abs(a / b - 1) for a, b in zip(sad["dL"], sad["predicted"]))
    assert math.isfinite(v)
    assert not spurious.SADDLE_PREDICTION(v)


def test_spurious_tail_has_not_fallen_before_convergence(figure2_large_scale):
    """Lem7/exponential-tail: the same fall of L - L_lin* over the window [1e-12, 1e-5] (spurious.tail_fit) on a run
    that is not converged: the lambda = 0.1 run stopped at flow time 23, just after tau_3, whose loss has only
    entered the window (4 observations): L - L_lin* has fallen by about 1.2, not 1e4, and EXPONENTIAL_TAIL rejects
    it. (The same run's constant-rate, PL-ratio and rate-equals-PL measurements pass on those 4 points: a local
    exponential decay, which those checks rightly accept; no control for them here.)"""
    tail = spurious.tail_fit(figure2_large_scale)
    assert tail["points"] >= 3 and math.isfinite(tail["fall"])
    assert not spurious.EXPONENTIAL_TAIL(tail["fall"])


def _a3_untrained_cells(etas):
    """Balanced GD on Assumption-3 draws (width 10, 2 draws per eta, lambda 1e-3) stopped before its first step:
    no run has trained (assumption3.a3_gd, the chapter's function)."""
    return assumption3.a3_gd(etas, [10], [2], [0], 1e-3, 1e-2, 1e-9, seed_base=500)


def test_assumption3_untrained_runs_are_not_the_theorem4_limit():
    """Thm4/linear-equivalence, Thm4/ols-on-hull, Thm4/relu-ols: the same per-run limit quantities of
    assumption3.a3_gd (|sum a_j w_j - beta*| over the all-active neurons, the sup distance of h to the OLS line on the
    hull and to relu(<beta*, u>) on the unit circle) on untrained runs (eta = 0.1, lambda = 1e-3, no step): h is of
    order lambda^2, far from the OLS line, and each criterion rejects it. (The chapter counts the runs that ended at
    their OLS loss; an untrained run is not one, so its quantities are taken without that selection.)"""
    cell = _a3_untrained_cells([0.1])[(0.1, 10)]
    for key, crit in (("lin_err", assumption3.THM4_LINEAR_EQUIVALENCE), ("sup_hull", assumption3.THM4_OLS_ON_HULL),
                      ("sup_circle", assumption3.THM4_RELU_OLS)):
        v = cell[key].double()
        assert _finite(v), key
        assert not crit(v), key


def test_assumption3_untrained_runs_do_not_escape():
    """Thm2/finite-step-escapes: the same count (runs at eta < 1/6 that escaped the OLS point, assumption3.
    escape_count) on untrained runs (no step): none has moved, none escaped, and FINITE_STEP_ESCAPES rejects 0."""
    v = assumption3.escape_count(_a3_untrained_cells([0.05, 0.1]))
    assert math.isfinite(v) and v == 0
    assert not assumption3.FINITE_STEP_ESCAPES(v)


def test_assumption3_figure1_properties_fail_on_other_data():
    """E1/in-boxes, E1/positive-gram, E1/middle-below-ols (Figure 1's dataset): the same measurements on datasets where
    each property is false, built with the package's builders: the Figure 2 three points (x_1 = -0.75, outside
    Assumption 3's box (-1, -0.9] at eta = 0.1) for in_assumption3; inputs x = (-2, 0, 2) with a bias (<x_1, x_3> =
    -3) for the Gram; a middle label above the OLS line (y = (1.05, 2, 1.05), concave) for the residual signs."""
    eta = 0.1
    fig2 = datasets.get("ea-three-point", device="cpu")
    v = float(assumption3.in_assumption3(fig2.X[None], fig2.y[None], eta)[0])
    assert _finite(v) and not assumption3.E1_IN_BOXES(v)
    wide = datasets.univariate("c2-wide", [-2.0, 0.0, 2.0], [1.05, 0.05, 1.05], device="cpu")
    v = float((wide.X @ wide.X.T).min())
    assert _finite(v) and not assumption3.E1_POSITIVE_GRAM(v)
    concave = datasets.univariate("c2-concave", [-1 + eta / 2, 0.0, 1 - eta / 2], [1.05, 2.0, 1.05], device="cpu")
    v = assumption3.middle_below_ols(th.ols(concave.X, concave.y).resid)
    assert _finite(v) and not assumption3.E1_MIDDLE_BELOW_OLS(v)


def test_alignment_lemmas_2_3_fail_on_degenerate_data():
    """Lem2/independent-pairs, Lem2/generic-position, Lem3/at-least-one ("almost surely", for data drawn from an
    absolutely continuous law): the same census (alignment.census_of, what lemma23_census computes per size) on
    datasets of the null set the lemmas exclude: two collinear inputs (x_2 = 2 x_1: det 0); orthogonal inputs
    x_1 = (1, 0), x_2 = (0, 1), where D of the cone of x_1 alone is orthogonal to x_2 (on a cone boundary); labels all
    zero, where G vanishes and has no extremal vector."""
    X = torch.tensor([[[1.0, 0.5], [2.0, 1.0], [-0.3, 1.0]]], dtype=torch.float64)
    y = torch.tensor([[1.0, -0.5, 0.7]], dtype=torch.float64)
    v = alignment.census_of(X, y)["min_det"]
    assert _finite(v) and not alignment.LEM2_INDEPENDENT([v])
    X = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]], dtype=torch.float64)
    v = alignment.census_of(X, torch.tensor([[1.0, 0.5]], dtype=torch.float64))["min_boundary"]
    assert _finite(v) and not alignment.LEM2_GENERIC([v])
    X = torch.tensor([[[1.0, 0.2], [-0.4, 1.0], [0.3, -1.0]]], dtype=torch.float64)
    v = [int(alignment.census_of(X, torch.zeros(1, 3, dtype=torch.float64))["count"].min())]
    assert _finite(v) and not alignment.LEM3_AT_LEAST_ONE(v)


def test_spurious_drift_does_not_halve_far_outside_the_small_step_regime():
    """Lem1/drift-halves ([derived]: GD changes a_j^2 - |w_j|^2 by O(lr^2) per step, so at a fixed flow time the
    drift is O(lr) and halves with the step): the same ratio (spurious.run_figure2's two balancedness runs, drift at
    lr over drift at lr / 2, width 10, flow time 2) at the step 1.0, 1000 times the authors', where the
    expansion in lr no longer holds (2 steps against 4): the ratio is 4, not 2, and DRIFT_HALVES rejects it."""
    P = SimpleNamespace(width=5, init_scale=1e-3, lr=1.0, steps=4, seeds=[0], monitor_every=2, eps=0.0, eps2=1e-2,
                        eps3=1e-2, width_dominated=5, steps_dominated=2, balance_width=10, balance_time=2.0,
                        animation_frames=0, control_width=5, control_time=1.0, control_leak=0.1)
    fr = spurious.run_figure2(P)
    v = fr.balance["lr"]["drift"] / fr.balance["half_lr"]["drift"]
    assert bool(fr.valid["balance"].all()) and math.isfinite(v)
    assert not spurious.DRIFT_HALVES(v)


def test_failure_rates_outcomes_change_with_the_step_far_above_the_authors():
    """Thm2/step-size (gradient descent approximates the flow: outcomes unchanged with a 4x smaller step): the same
    count (failure_rates.step_disagreements, seed by seed, every compared run trained) at m = 100 and lambda = 1e-3,
    1e-2 (the check's scales, 4 seeds, the chapter's flow time 100) with the step 0.4 against 0.1, 40 times the
    chapter's: at lambda = 1e-2 three of the four runs escape at the large step and none at its quarter, and
    STEP_SIZE rejects the disagreements."""
    data = datasets.get("ea-three-point", device="cpu")
    scales, seeds = [1e-3, 1e-2], [0, 1, 2, 3]
    big = failure_rates.run_grid(data, [100], scales, lambda m: seeds, lr=0.4, T=100.0)
    small = failure_rates.run_grid(data, [100], scales, lambda m: seeds, lr=0.1, T=100.0)
    v, n = failure_rates.step_disagreements(big, small, 100, scales, seeds)
    assert n == 8 and math.isfinite(v)
    assert not failure_rates.STEP_SIZE(v)


def test_spurious_phase_2a_positivity_fails_at_a_large_scale(figure2_large_scale):
    """Lem5/positivity: the same minimum (min cos(w_j, x_k) over S+ on [tau_eps, tau_2], spurious.window) on the
    lambda = 0.1 run, above Lemma 5's small lambda: the S+ neurons reach the norm threshold before the early alignment
    has turned them into the data cone, some S+ neuron is negatively correlated with a data point on the window,
    and POSITIVITY rejects it."""
    fr = figure2_large_scale
    pt = spurious.phase_times(fr)
    assert bool((pt["tau2"] > fr.tau_eps).all())
    v = spurious.window(fr, "pos_margin", fr.tau_eps, pt["tau2"], "min")
    assert _finite(v)
    assert not spurious.POSITIVITY(v)


def test_spurious_negative_norms_grow_in_phase_1_of_the_controls():
    """Lem4/negative-norms-decreased (Phase 1, ReLU, balanced: the negative neurons' norms do not grow until tau_eps):
    the same measurement (spurious.negative_norm_change at the observation of tau_eps, gated by the learning gate;
    negative_norms_criterion at the run's step) on the chapter's two control runs (width 20, lambda 1e-3, step 1e-2,
    flow time 20, both trained): with a leaky ReLU (slope 0.1) the negative neurons inactive on every point still get
    the gradient gamma a_j sum_k r_k x_k and grow, and from an unbalanced start (Eq. (4) broken) they grow too: the
    criterion rejects both."""
    P = SimpleNamespace(width=5, init_scale=1e-3, lr=1e-2, steps=300, seeds=[0], monitor_every=10, eps=0.5, eps2=1e-2,
                        eps3=1e-2, width_dominated=5, steps_dominated=2, balance_width=5, balance_time=1e-2,
                        animation_frames=0, control_width=20, control_time=20.0, control_leak=0.1)
    fr = spurious.run_figure2(P)
    every = max(1, int(round(P.control_time / P.lr)) // spurious.CONTROL_OBSERVATIONS)
    crit = spurious.negative_norms_criterion(P.lr, fr.D)
    for name in ("leaky", "unbalanced"):
        v = spurious.negative_norm_change(fr.controls[name], fr.k_eps // every)
        assert _finite(v), name
        assert not crit(v), name


def test_alignment_tau2_is_not_logarithmic_at_large_scales():
    """Lem5/tau2-linear and Lem5/tau2-slope (tau_2 of the sweep, alignment.sweep_phase_times: linear in ln(1/lambda),
    R^2 under TAU2_LINEAR, with slope 1/|D|, the fitted over the predicted slope under TAU2_SLOPE): Lemma 5 (1) is a
    small-lambda statement (tau_2 ~ ln(1/lambda)/|D| after the early alignment phase); the chapter's sweep (width 20,
    step 2e-2, flow time 1) at lambda = 0.3, 0.2, 0.14, 0.1, above that regime, reaches the norm threshold at once
    (tau_2 = 0, 0, 0, 0.4): the fit's R^2 is 0.56 and its slope 0.46 of 1/|D|, both rejected.  (Lem6/duration on the
    same sweep, run to flow time 30: tau_3 - tau_2 = 22, 22, 21.6 where tau_3 is reached, independent of lambda as the
    lemma says: no false case there.)"""
    P = SimpleNamespace(width=20, scales=[0.3, 0.2, 0.14, 0.1], seeds=[0], epsilons=[0.5], lr=2e-2, time=1.0,
                        monitor_every=20, eps2=1e-2, eps3=1e-2)
    pt = alignment.sweep_phase_times(alignment.run_sweep(P))
    assert _finite(pt["tau2"]) and _finite([pt["r2"], pt["slope"]])
    assert not alignment.TAU2_LINEAR(pt["r2"])
    assert not alignment.TAU2_SLOPE(pt["slope"] / pt["predicted_slope"])


@pytest.fixture(scope="module")
def staircase_large_step():
    """The Figure 3 run (the 40-point data, unbalanced, lambda 1e-3; width 10, flow time 400, the authors' frames)
    at the step 2, 100 times the book's 2e-2, and the same run at half that step (staircase.run_staircase twice)."""
    from shallowflow.experiments.early_alignment import staircase

    P = SimpleNamespace(n_points=40, data_seed=0, width=10, init_scale=1e-3, lr=2.0, time=400.0, seeds=[0],
                        plateau_rtol=0.01, plateau_time=50.0, animation_frames=6, level=0.95, resume=False,
                        profile="custom")
    return P, staircase.run_staircase(P), staircase.run_staircase(SimpleNamespace(**{**vars(P), "lr": P.lr / 2}))


def test_staircase_animation_does_not_descend_at_a_large_step(staircase_large_step):
    """E4/figure3-descent: the same measurement (staircase.largest_frame_rise of theory.frame_losses on the animation
    frames of the authors' schedule, engine.train.animation_frames) at the step 2, where gradient descent overshoots
    (the run stays finite): the loss rises by about half of L(0) between two frames, and FIGURE3_DESCENT rejects it."""
    from shallowflow.engine import metrics, train
    from shallowflow.engine.models import Network
    from shallowflow.experiments.early_alignment import staircase

    P, st, _ = staircase_large_step
    assert bool(metrics.finite_runs(st.traj.loss, st.traj.final).all())
    frames = [st.traj.at(k) for k in train.animation_frames(st.frames, P.animation_frames)]
    v = staircase.largest_frame_rise(th.frame_losses(frames, st.data, Network("relu")))
    assert math.isfinite(v)
    assert not staircase.FIGURE3_DESCENT(v)


def test_staircase_plateau_levels_move_with_a_large_step(staircase_large_step):
    """E3/step-size (gradient descent approximates the flow: the plateau levels at lr and lr / 2 agree, staircase.level_gap
    of staircase.distinct_levels of staircase.plateaus, STEP_SIZE_LEVELS): at the step 2 the run settles at a level
    (about 0.30) that the run at step 1 does not show (0.054, the flow's): the gap is about 4.7."""
    from shallowflow.engine import metrics
    from shallowflow.experiments.early_alignment import staircase

    P, st, half = staircase_large_step
    assert bool(metrics.finite_runs(half.traj.loss, half.traj.final).all())

    def levels(s, lr):
        t = s.traj.loss_steps.double() * lr
        return staircase.distinct_levels(staircase.plateaus(t, s.traj.loss[0], P.plateau_rtol, P.plateau_time),
                                         P.plateau_rtol)

    v = staircase.level_gap(levels(st, P.lr), levels(half, P.lr / 2))
    assert math.isfinite(v)
    assert not staircase.STEP_SIZE_LEVELS(v)


def test_spurious_dominated_output_weight_falls_below_its_bound_at_a_large_step():
    """S5-limit/dominated-no-zero-neuron ("if on the other hand we only consider dominated neurons ... the convergence
    point does not include zero neurons": Lemma 1 keeps a_j^2 - |w_j|^2 = a_j(0)^2 - |w_j(0)|^2 > 0, so |a_j| never
    falls below sqrt(a_j(0)^2 - |w_j(0)|^2)): the same ratio (local_min_test's min |a_j| of the dominated run's end over
    spurious.dominated_bound of its start, DOMINATED_NO_ZERO) on the dominated run (width 20, lambda 1e-3, 100 steps)
    at the step 1, 1000 times the authors': gradient descent drifts the conserved quantity, and the smallest |a_j|
    ends at about 0.81 of the bound (at the step 0.5 it stays above it, 1.13)."""
    P = SimpleNamespace(width=5, init_scale=1e-3, lr=1.0, steps=2, seeds=[0], monitor_every=1, eps=0.0, eps2=1e-2,
                        eps3=1e-2, width_dominated=20, steps_dominated=100, balance_width=5, balance_time=2.0,
                        animation_frames=0, control_width=5, control_time=2.0, control_leak=0.1)
    fr = spurious.run_figure2(P)
    assert bool(fr.valid["dominated"].all())
    v = spurious.local_min_test(fr.dominated.final, fr.data, 1)["min_abs_a"] / spurious.dominated_bound(fr.dominated.p0)
    assert math.isfinite(v)
    assert not spurious.DOMINATED_NO_ZERO(v)
