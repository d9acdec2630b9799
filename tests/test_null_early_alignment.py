"""Null scenarios for 002 (early alignment): the chapters' comparative checks fail on a network that did not learn.

Each test feeds the chapter's own package function a null scenario at tiny size and applies the very criterion
object the chapter uses (``ex.OLS_FRACTION``, ...) to the quantity the chapter measures: a criterion that
passed here could not tell a trained network from an untrained one.
"""
from types import SimpleNamespace

import torch

from shallowflow import data as datasets
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
    """E3/staircase on untrained runs (a step of 1e-9: the loss does not move): one plateau, not three levels.

    E3/final-loss-positive, E3/final-converged and E3/versus-no-bump do hold on such a run (its loss is L(0),
    constant, 36 times that of the teacher without bumps): the target's decision rests on this check and on
    E3/effective-neurons and E3/bump-cones-empty, which an untrained network fails."""
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
                        steps_dominated=2, balance_width=10, balance_time=1e-3, animation_frames=0)
    return spurious.run_figure2(P)


def test_spurious_untrained_network_is_not_at_the_ols_loss():
    """E2/final-loss: an untrained network sits at L(0), not at L_lin*: the criterion fails, and the predictions are
    not the OLS ones."""
    fr = _spurious(2)
    end = spurious.end_state(fr)
    assert not spurious.FINAL_AT_OLS((end["loss"] - end["L_star"]).abs())
    assert (end["pred_err"] > 1e-2).all()


def test_spurious_trained_network_passes_it():
    fr = _spurious(100_000)  # the book's step and iterations at the smoke width
    end = spurious.end_state(fr)
    assert spurious.FINAL_AT_OLS((end["loss"] - end["L_star"]).abs())
