"""Null scenarios for 002 (early alignment): the chapters' comparative checks fail on a network that did not learn.

Each test feeds the chapter's own package function a null scenario at tiny size and applies the very criterion
object the chapter uses (``ex.OLS_FRACTION``, ...) to the quantity the chapter measures: a criterion that
passed here could not tell a trained network from an untrained one.
"""
from types import SimpleNamespace

import torch

from shallowflow.engine import data as datasets
from shallowflow import verdicts as C
from shallowflow.experiments.early_alignment import assumption3, failure_rates, spurious
from shallowflow.experiments.early_alignment import theory as th


def test_failure_rates_untrained_grid_fails_both_share_criteria():
    """Zero steps: no run ends at the OLS loss (Thm2/ols-fraction) nor at a global minimum (Thm2/escape-large-scale)."""
    data = datasets.get("ea-three-point", device="cpu")
    g = failure_rates.run_grid(data, [100], [1e-2, 1.0], lambda m: [0, 1, 2], lr=1e-2, T=1e-9)  # 0 iterations
    assert int(round(1e-9 / 1e-2)) == 0 and all(bool(v.all()) for v in g.valid.values())
    assert not failure_rates.OLS_FRACTION(failure_rates.ols_fraction(g, [100], [1e-2]))
    assert not failure_rates.ESCAPE_SHARE(g.fraction(100, 1.0, ("global",)))


def test_failure_rates_trained_grid_passes_them():
    """The same criteria pass on trained runs (the null test is not vacuous)."""
    data = datasets.get("ea-three-point", device="cpu")
    g = failure_rates.run_grid(data, [100], [1e-3, 1.0], lambda m: [0, 1], lr=1e-2, T=100.0)  # the book's step and time
    assert failure_rates.OLS_FRACTION(failure_rates.ols_fraction(g, [100], [1e-3]))
    assert failure_rates.ESCAPE_SHARE(g.fraction(100, 1.0, ("global",)))


def test_assumption3_untrained_runs_fail_the_ols_share():
    """Thm2/assumption3-all-fail on untrained Assumption-3 runs (lr 0): none ends at its OLS loss."""
    cells = assumption3.a3_gd([0.1], [10], [3], [0], 1e-3, lr=1e-12, T=1e-9)
    assert not assumption3.ALL_FAIL_SHARE(assumption3.ols_share(cells))
    trained = assumption3.a3_gd([0.1], [10], [3], [0], 1e-3, lr=1e-2, T=30.0)
    assert all(o in th.OUTCOMES for r in trained.values() for o in r["outcome"])
    assert assumption3.ols_share(trained) > assumption3.ols_share(cells)


def test_alignment_remark1_untrained_sweep():
    """Rem1 at initialisation (eps -> 0 puts tau_eps at iteration 0: the network has not trained): the shares are 0
    at every scale, so 'never drops' holds by itself; the companion check that every neuron is aligned at the
    smallest lambda fails, as it must."""
    from types import SimpleNamespace

    from shallowflow.experiments.early_alignment import alignment
    P = SimpleNamespace(width=20, scales=[1e-2, 1e-6], seeds=[0], epsilons=[1e-12], lr=1e-3, time=1e-3,
                        monitor_every=1, eps2=1e-2, eps3=1e-2)
    sw = alignment.run_sweep(P)
    assert int(sw.at_tau[1e-12]["k"].max()) == 0
    shares = alignment.aligned_shares(sw, 1e-12)
    assert alignment.REM1_NO_DROP(alignment.largest_drop(shares))  # vacuous on the null: why the companion exists
    assert not alignment.REM1_ALL_AT_SMALLEST(sw.at_tau[1e-12]["plus_aligned"][sw.lam == 1e-6])


def test_staircase_untrained_curve_is_no_staircase():
    """E3/staircase's per-run threshold on untrained runs (a step of 1e-9: the loss does not move): one plateau, not
    three levels.  The shares of every Figure 3 behaviour, which also count only runs that learned, are tested below."""
    from types import SimpleNamespace

    from shallowflow.experiments.early_alignment import staircase
    P = SimpleNamespace(n_points=40, data_seed=0, width=20, init_scale=1e-3, lr=1e-9, time=2e-6, seeds=[0, 1],
                        plateau_rtol=0.01, plateau_time=2e-7)
    st = staircase.run_staircase(P)
    t = st.traj.loss_steps.double() * P.lr
    levels = [staircase.distinct_levels(staircase.plateaus(t, st.traj.loss[r], P.plateau_rtol, P.plateau_time),
                                        P.plateau_rtol) for r in range(len(P.seeds))]
    assert not staircase.STAIRCASE([len(lv) for lv in levels])


def _spurious(steps, width=300):
    P = SimpleNamespace(width=width, init_scale=1e-3, lr=1e-3, steps=steps, seeds=[0], monitor_every=max(1, steps // 50),
                        eps=1e-9 if steps < 1000 else 0.5, eps2=1e-2, eps3=1e-2, width_dominated=20,
                        steps_dominated=2, balance_width=10, balance_time=1e-3, animation_frames=0,
                        control_width=50, control_time=20.0 if steps >= 1000 else 2e-3, control_leak=0.1)
    return spurious.run_figure2(P)


def test_spurious_untrained_network_is_not_at_the_ols_loss():
    """E2/final-loss: an untrained network sits at L(0), not at L_lin*: the criterion fails, and the predictions are
    not the OLS ones."""
    fr = _spurious(2)
    end = spurious.end_state(fr)
    assert not spurious.FINAL_AT_OLS((end["loss"] - end["L_star"]).abs())
    assert (end["pred_err"] > 1e-2).all()


def test_spurious_untrained_network_does_not_pass_the_invariants():
    """Lem1/signs-fixed, Lem4/s0-never-move, E2/s0-frozen: an untrained network keeps both invariants by doing nothing
    (the ungated measurements pass); the learning gate makes the chapter's criteria fail on it, and the controls'
    criteria (Lem1/control-can-fail, Lem4/control-can-fail) fail on untrained controls too."""
    fr = _spurious(2)
    s = fr.run.series
    assert spurious.SIGNS_FIXED(s["sign_flips"].amax(1)) and spurious.S0_FROZEN(s["zero_moved"].amax(1))  # the null
    inv = spurious.invariants(fr.run)
    assert not bool(inv["gate"]["passed"].any())
    assert not spurious.SIGNS_FIXED(inv["sign_flips"])
    assert not spurious.S0_FROZEN(inv["s0_moved"]) and not spurious.S0_FROZEN(inv["s0_moved_end"])
    ctl = {name: spurious.invariants(c) for name, c in fr.controls.items()}
    assert not spurious.fails(spurious.SIGNS_FIXED)(ctl["unbalanced"]["sign_flips"])
    assert not spurious.fails(spurious.S0_FROZEN)(ctl["leaky"]["s0_moved"])
    assert not C.above(1.0)(spurious.flips_where_unbalanced(fr.controls["unbalanced"]))  # Lem1/control-flips-unbalanced


def test_spurious_trained_network_passes_it():
    fr = _spurious(100_000)  # the book's step and iterations at the smoke width
    end = spurious.end_state(fr)
    assert spurious.FINAL_AT_OLS((end["loss"] - end["L_star"]).abs())
    # the gated invariants pass on the trained run, and their criteria fail on the trained controls
    inv = spurious.invariants(fr.run)
    assert bool(inv["gate"]["passed"].all())
    assert spurious.SIGNS_FIXED(inv["sign_flips"]) and spurious.S0_FROZEN(inv["s0_moved"])
    ctl = {name: spurious.invariants(c) for name, c in fr.controls.items()}
    assert bool(ctl["unbalanced"]["gate"]["passed"].all()) and bool(ctl["leaky"]["gate"]["passed"].all())
    assert not spurious.SIGNS_FIXED(ctl["unbalanced"]["sign_flips"])
    assert spurious.fails(spurious.SIGNS_FIXED)(ctl["unbalanced"]["sign_flips"])
    assert not spurious.S0_FROZEN(ctl["leaky"]["s0_moved"])
    assert spurious.fails(spurious.S0_FROZEN)(ctl["leaky"]["s0_moved"])
    assert spurious.S0_FROZEN(ctl["unbalanced"]["s0_moved"])  # the ReLU, not balancedness, freezes S0
    assert C.above(1.0)(spurious.flips_where_unbalanced(fr.controls["unbalanced"]))


def test_staircase_untrained_runs_fail_every_typical_behaviour():
    """Every Figure 3 behaviour check (a share of runs with its Wilson interval, th.TYPICAL) on untrained runs (a step of
    1e-9: the loss stays at L(0)) at the book's width: no run learned, so no run counts, and each share fails.  Without
    the learned gate a flat, constant, converged curve far from the teacher would pass four of them by itself."""
    from shallowflow.experiments.early_alignment import staircase

    P = SimpleNamespace(n_points=40, data_seed=0, width=250, init_scale=1e-3, lr=1e-9, time=2e-6, seeds=[0, 1, 2, 3, 4],
                        plateau_rtol=0.01, plateau_time=2e-7, level=0.95)
    st = staircase.run_staircase(P)
    t = st.traj.loss_steps.double() * P.lr
    pls = [staircase.plateaus(t, st.traj.loss[r], P.plateau_rtol, P.plateau_time) for r in range(len(P.seeds))]
    levels = [staircase.distinct_levels(p, P.plateau_rtol) for p in pls]
    L_nobump = float(((staircase.no_bump_teacher(st.data.x1d) - st.data.y) ** 2).mean())
    beh = staircase.behaviour(st, levels, pls, L_nobump, P)
    assert not staircase.LEARNED_CHECK(st.traj.loss[:, -1] / st.traj.loss[:, 0])
    assert len(beh["flags"]) == 9
    for name, flags in beh["flags"].items():
        low, _ = staircase.typical(flags, P.level)
        assert not th.TYPICAL(low), name
    raw = beh["values"]
    assert bool((raw["final-loss-positive"] >= 1e-3).all()) and bool((raw["versus-no-bump"] >= 0.1).all())
    assert bool((raw["final-converged"] < 1e-6).all())  # what the gate is for


def test_failure_rates_step_check_counts_only_trained_runs():
    """Thm2/step-size on two untrained grids (zero steps at both step sizes): they agree by construction, so the check
    measures NaN and its criterion fails; trained grids (the book's step and time) are compared and agree."""
    data = datasets.get("ea-three-point", device="cpu")
    grid = lambda lr, T: failure_rates.run_grid(data, [100], [1e-3, 1e-2], lambda m: [0, 1], lr=lr, T=T)  # noqa: E731
    d, n = failure_rates.step_disagreements(grid(1e-2, 1e-9), grid(2.5e-3, 1e-9), 100, [1e-3, 1e-2], [0, 1])
    assert n == 4 and not failure_rates.STEP_SIZE(d)
    d, n = failure_rates.step_disagreements(grid(1e-2, 100.0), grid(2.5e-3, 100.0), 100, [1e-3, 1e-2], [0, 1])
    assert n == 4 and failure_rates.STEP_SIZE(d)


def test_failure_rates_no_escape_is_vacuous_on_the_null_and_its_companion_fails():
    """Thm2/no-escape-small-scales (no run ends below the OLS loss) holds on an untrained grid by itself: what decides the
    target there is its companion Thm2/ols-fraction, which fails on the same grid."""
    data = datasets.get("ea-three-point", device="cpu")
    g = failure_rates.run_grid(data, [100], [1e-2], lambda m: [0, 1, 2], lr=1e-2, T=1e-9)
    Ls = float(th.ols(data.X, data.y).loss)
    assert int((g.loss[(100, 1e-2)] < Ls - 1e-5).sum()) == 0
    assert not failure_rates.OLS_FRACTION(failure_rates.ols_fraction(g, [100], [1e-2]))


def test_failure_rates_tiny_widths_need_a_run_that_moved():
    """Thm2/tiny-widths-spurious on an untrained grid (zero steps): every run sits at the zero network, which the check's
    outcome set holds, so the cell counts only when some run reached the OLS fit; untrained, none did and it fails."""
    data = datasets.get("ea-three-point", device="cpu")
    g = failure_rates.run_grid(data, [1, 5], [1e-3], lambda m: list(range(6)), lr=1e-2, T=1e-9)
    assert all(o == "zero" for m in (1, 5) for o in g.outcome[(m, 1e-3)])  # the share without the gate would be 1
    assert not failure_rates.TINY_SPURIOUS(failure_rates.tiny_spurious_share(g, [1, 5], [1e-3]))
    trained = failure_rates.run_grid(data, [1, 5], [1e-3], lambda m: list(range(6)), lr=1e-2, T=100.0)
    assert failure_rates.TINY_SPURIOUS(failure_rates.tiny_spurious_share(trained, [1, 5], [1e-3]))


def test_failure_rates_contrasts_fail_on_untrained_runs():
    """Section 5's contrasts on untrained grids (zero steps): no run converges or escapes (S5-unbal/converges,
    S5-unbal/escape-in-time, S5-leaky/converges: shares with their Wilson intervals), none ends at the OLS loss
    (Thm2/dominated-fails), and footnote 7's fixed-width failure is not counted without a run that learned at the width."""
    data = datasets.get("ea-three-point", device="cpu")
    seeds = lambda m: list(range(6))  # noqa: E731
    ub = failure_rates.run_grid(data, [50], [1e-3], seeds, 1e-2, 1e-9, "unbalanced", stop_below=1e-10)
    lk = failure_rates.run_grid(data, [50], [1e-3, 1e-30], seeds, 1e-2, 1e-9, "balanced", "leaky_relu", 0.1,
                                stop_below=1e-10)
    dom = failure_rates.run_grid(data, [50], [1e-3], seeds, 1e-2, 1e-9, "dominated")
    for flags in (ub.loss[(50, 1e-3)] < 1e-6, torch.isfinite(ub.escape[(50, 1e-3)]), lk.loss[(50, 1e-3)] < 1e-8):
        assert not th.TYPICAL(th.typical_share(flags, 0.95)[0])
    assert not failure_rates.C.above(1.0)(dom.fraction(50, 1e-3, ("ols",)))
    assert lk.failing(50, 1e-30) == 1.0  # without the gate the untrained grid would pass footnote 7's check
    assert not failure_rates.FIXED_WIDTH_FAILS(failure_rates.fixed_width_failing(lk, 50))


def test_assumption3_unbalanced_contrast_fails_untrained():
    """S5-unbal/assumption3-converges on untrained unbalanced runs: no run reaches L < 1e-6."""
    P = SimpleNamespace(lemma_etas=[0.1], gd_widths=[10], gd_draws=[2], gd_seeds=[0], gd_scale=1e-3, lr=1e-2, gd_time=1e-9,
                        remark_etas=[0.2], remark_width=10, fast_lr=1e-2, fast_time=1e-9, small_scale=1e-6,
                        small_lr=1e-2, small_time=1e-9, small_draws=1, unbalanced_eta=0.15, unbalanced_width=50,
                        unbalanced_seeds=[0, 1, 2, 3, 4], unbalanced_time=1e-9)
    ub = assumption3.run_assumption3_gd(P)["unbalanced"]
    assert not th.TYPICAL(th.typical_share(ub["loss"] < 1e-6, 0.95)[0])
