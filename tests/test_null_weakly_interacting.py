"""Null scenarios for source 001 (issue 24 item 3): each comparative check of the weakly-interacting chapters,
fed an untrained network at tiny size through the chapter's own package function, must FAIL its criterion
(the very criterion the notebook uses on the very measured quantity), so that no such check holds by construction."""
from types import SimpleNamespace as NS

from shallowflow import verdicts as C
from shallowflow.experiments.weakly_interacting import convergence as CV
from shallowflow.experiments.weakly_interacting import initialisation as IN
from shallowflow.experiments.weakly_interacting import local_pl as LP
from shallowflow.experiments.weakly_interacting import theory as T
from shallowflow.experiments.weakly_interacting import threshold as TH


def fails(criterion, measured):
    return not criterion(measured)


def test_threshold_untrained_runs_show_no_sharp_transition_and_no_interpolator():
    """threshold: zero GD epochs, so no run converges: Fig3/sharp, Fig4/increasing and Interp-cap/longer must fail."""
    rows = [TH.runs_at(n, 10, T.width_rule(n), [0, 1], epochs=0) for n in (20, 40, 60)]
    assert not any(bool(r["converged"].any()) for r in rows)
    ns, conv = TH.collect(rows)
    fit = TH.fit_threshold(ns, conv)
    assert not fit["bracketed"]
    sharp, _, _ = TH.sharp_transition(rows, fit["N"])
    assert fails(C.is_true(), sharp)
    # Fig. 4's curve of thresholds against d: untrained runs bracket no threshold, so N(d) is not increasing
    curve = [dict(d=d, fit=TH.fit_threshold(*TH.collect([TH.runs_at(n, d, 8, [0, 1], epochs=0) for n in (d, 3 * d, 6 * d)])))
             for d in (5, 8)]
    D, N, _ = TH.bracketed_curve(curve, "d")
    assert fails(C.is_true(), bool(len(N) >= 2 and (N[1:] > N[:-1]).all()))
    cap = TH.runs_at(40, 20, 30, [0, 1], epochs=0)
    assert fails(C.above(0.5), float(cap["converged"].double().mean()))


def test_convergence_untrained_runs_fail_the_success_rate():
    """convergence: lr 0 (no training): Thm1/success's binomial p-value of the failures must fall below 0.05."""
    n, d = 10, 1e6
    p = T.width_rule(n, 0.05)
    G, y, _ = CV._valid_gram(n, d, 8, seed=1000 + n)
    run, Cn = CV.run_gram(G, y, list(range(8)), p, int(d), 0.0, 50)
    s = CV.summary(run, Cn, n)
    assert not bool(s["converged"].any())
    assert fails(C.above(0.05), [CV.binom_pvalue(int((~s["converged"]).sum()), 8, 0.05)])


def _lp(lr, mult):
    return NS(d=200, eps=0.05, lr=lr, horizon_mult=mult, stop_factor=1e-6, final_seeds=[0], seeds=[0, 1, 2],
              first_layer="gauss", data="fixed", level=0.95)


def test_local_pl_untrained_curvature_does_not_decay_like_one_over_sqrt_n():
    """local-pl: a step so small that nothing trains measures the curvature at initialisation, of order 1/n
    (Lemma 4): Fig6/slope-avg, Conj1/slope-spec and Conj1/concentration must fail on it."""
    P = _lp(1e-7, 1e-6)
    rows = [LP.run_n(n, P) for n in (50, 100, 200)]
    sl = LP.slopes(rows, boot=0)
    assert fails(C.within(-0.65, -0.40), sl["mu_avg"][0])
    assert fails(C.within(-0.6, -0.4), sl["mu_spec"][0])
    sqm = [float((r["mu_spec"] * r["n"] ** 0.5).mean()) for r in rows]
    assert fails(C.below(1.3), max(sqm) / min(sqm))


def test_initialisation_untrained_runs_break_the_iff():
    """initialisation: a horizon too short to fit anything: Lemma5-iff/agreement (residuals vanish iff I) must fail."""
    P = NS(iff_n=60, iff_p=14, iff_seeds=list(range(3000, 3010)), iff_horizon=1e-3)
    iff = IN.run_iff(P)
    assert bool(iff["event"].any()) and not bool(iff["fitted"].any())
    agree = float((iff["event"] == iff["fitted"]).double().mean())
    assert fails(C.close_to(1.0, atol=1e-12), agree)


def test_threshold_untrained_wide_runs_fail_the_wide_transition():
    """threshold: Fig3/wide-width on untrained 4x-width runs (zero epochs, so none converges) on a grid that brackets
    the transition point: converging is not typical below it, so the chapter's criterion must fail; and shuffled
    outcomes (every n half converged) fail it too."""
    import torch

    rows = [TH.runs_at(n, 10, T.width_rule(n, factor=4), [0, 1, 2, 3], epochs=0) for n in (20, 60)]
    assert not any(bool(r["converged"].any()) for r in rows)
    flags, _ = TH.wide_transition(rows, at=40)
    assert fails(C.is_true(), flags)
    half = [dict(n=n, converged=torch.tensor([True, False, True, False])) for n in (20, 60)]
    assert fails(C.is_true(), TH.wide_transition(half, at=40)[0])


def test_threshold_fig4_trend_criteria_reject_a_curve_that_never_bends():
    """threshold: Fig4/authors-local-slopes and Fig4/authors-large-d, fed an exact power law d^2 (a curve that never
    bends toward linear) through the chapter's own functions and criteria, must fail; the authors' data pass them."""
    import numpy as np

    d = np.array(TH.AUTHORS_FIG4["d"], float)
    quad = 3.0 * d ** 2
    slopes = TH.local_slopes(d, quad)
    assert fails(TH.falling(), slopes[int(np.argmax(slopes)):])
    top = TH.power_fit_interval(d[-3:], quad[-3:] * (1 + 1e-3 * np.array([1.0, -1.0, 1.0])))
    assert fails(TH.exponent_test(1.0, 2.0), np.array([top["lo"], top["hi"]]))
    a = TH.local_slopes(d, TH.AUTHORS_FIG4["N"])
    assert TH.falling()(a[int(np.argmax(a)):])


def test_phase_transitions_two_transition_criterion_rejects_one_transition():
    """phase-transitions: Fig2/two-transitions' measurement (decay-rate peaks of the loss on each side of the midpoint
    of Theorem 2's times) must reject a curve with one transition: equal group norms, and the network's own n, where
    the source says the two transitions cannot be told apart."""
    import numpy as np

    from shallowflow.experiments.weakly_interacting import phase_transitions as PT

    P = NS(fig_ns=[400.0, 1e18], t_max=1.75)
    mid = float(np.mean(PT.SOURCE_THM2_TRANSITION_TIMES))
    sides = lambda pk: [int(np.sum(pk < mid)), int(np.sum(pk >= mid))]
    two, one = PT.fig2_transitions(P), PT.fig2_transitions(P, norms=(1.0, 1.0))
    assert sides(two[-1]["peaks"]) == [1, 1]
    assert sides(one[-1]["peaks"]) != [1, 1]
    assert sides(two[0]["peaks"]) != [1, 1]
