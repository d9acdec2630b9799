"""000, negative controls of the checks changed on branch h000 (issue 42): each test builds a case where the check's
claim is false with the package's own functions, computes the chapter's own measurement with the chapter's own package
function, asserts it is finite, and asserts that the chapter's own criterion object REJECTS it.  Tiny sizes."""
import numpy as np

from shallowflow.engine import data as D
from shallowflow.params import chapters
from shallowflow.experiments.brisbois_thesis import activations as A
from shallowflow.experiments.brisbois_thesis import common as Cm
from shallowflow.experiments.brisbois_thesis import instability_transition as X
from shallowflow.experiments.brisbois_thesis import s_curves as S


def _rejects(criterion, measured) -> bool:
    v = np.atleast_1d(np.asarray(measured, dtype=float))
    assert np.isfinite(v).all(), v  # a nan that a criterion rejects proves nothing
    return not criterion(v)


def _cloud(noise: float, seed: int = 0) -> np.ndarray:
    """Neurons on a curve of the thesis's form (3.1) with the procedure's constraints (K = -K1 = K2, k1 = -5),
    turned by 0.7 rad, with Gaussian noise of ``noise`` across it."""
    w = np.linspace(-2, 2, 120)
    v = S.sig_form(w, -1.0, -5.0, 1.0, 20.0) + noise * np.random.default_rng(seed).normal(size=w.size)
    rot = np.array([[np.cos(0.7), -np.sin(0.7)], [np.sin(0.7), np.cos(0.7)]])
    return np.stack([w, v], 1) @ rot.T


def test_c13_worse_than_fig321_fails_on_a_perfect_and_on_an_equal_fit():
    """C.13/worse-than-fig321 (000:1423: after Fig. 3.21's "Here, the fit appears very good", "this is not always the
    case ... f(w) does not perfectly fit the data"; the measurement A.unexplained_ratio of the procedure's R^2,
    S.fit_scurve, against the same procedure's on Fig. 3.21's runs, criterion A.WORSE_THAN_FIG321): a cloud lying
    exactly on the thesis's curve is no imperfect fit beside a good fit with a little noise, and a fit exactly as
    good as the worst good fit is not worse than it.  The check can pass: a noisier cloud's fit is worse.  (The frame's
    angle search is coarser than the chapter's, for cost: the clouds are built in a known frame.)"""
    fit = lambda P_: S.fit_scurve(P_, "sigmoid", -5.0, coarse=3, fine=2, refine=0).procedure.r2
    good, perfect, worse = fit(_cloud(0.02)), fit(_cloud(0.0)), fit(_cloud(0.1, seed=1))
    assert S.GOOD_FIT(good) and S.GOOD_FIT(perfect)  # both are good fits by Fig3.21/procedure's criterion
    assert _rejects(A.WORSE_THAN_FIG321, A.unexplained_ratio(perfect, [good]))
    assert _rejects(A.WORSE_THAN_FIG321, A.unexplained_ratio(good, [good, perfect]))
    assert not _rejects(A.WORSE_THAN_FIG321, A.unexplained_ratio(worse, [good]))


def test_c13_worse_than_fig321_rejects_fits_of_the_same_quality():
    """The false case of 000:1423 at its run count: C.13's three fits of the same quality as Fig. 3.21's three (clouds
    with the same noise, other draws) are not "worse": the smallest 1 - R^2 of one group does not exceed the largest of
    the other, so the criterion rejects them; one fit as good as a reference among C.13's also fails the check."""
    fit = lambda P_: S.fit_scurve(P_, "sigmoid", -5.0, coarse=3, fine=2, refine=0).procedure.r2
    ref = [fit(_cloud(0.02, seed=k)) for k in (0, 1, 2)]
    same = [fit(_cloud(0.02, seed=k)) for k in (3, 4, 5)]
    assert _rejects(A.WORSE_THAN_FIG321, A.unexplained_ratio(same, ref))
    worse = [fit(_cloud(0.1, seed=k)) for k in (6, 7)]
    assert not _rejects(A.WORSE_THAN_FIG321, A.unexplained_ratio(worse, ref))
    assert _rejects(A.WORSE_THAN_FIG321, A.unexplained_ratio(worse + [ref[1]], ref))  # one as good as a reference


def test_fig321_reference_is_the_s_curves_chapters_setting():
    """C.13's reference runs (s_curves.FIG321, trained in the activations chapter) are Fig. 3.21's as the s-curves
    chapter runs them: its parameters cell's values, its seeds and its epochs at book scale."""
    sc = chapters.defaults("brisbois-thesis/s-curves")
    act = chapters.defaults("brisbois-thesis/activations")
    assert {k: sc[k] for k in S.FIG321} == S.FIG321
    assert act["fig321_seeds"] == sc["seeds"] and act["fig321_steps"] == sc["steps"]
    assert act["c13_seeds"] == act["fig321_seeds"]  # C.13's runs: three against three, the same draws


def test_unexplained_ratio_edges():
    """A.unexplained_ratio: nan when a value is nan or no reference is given, inf against perfect references."""
    assert np.isnan(A.unexplained_ratio(float("nan"), [0.99]))
    assert np.isnan(A.unexplained_ratio(0.9, []))
    assert np.isnan(A.unexplained_ratio(0.9, [0.99, float("nan")]))
    assert A.unexplained_ratio(0.9, [1.0]) == float("inf")
    assert np.isclose(A.unexplained_ratio(0.9, [0.99, 0.98]), 5.0)
    assert np.isclose(A.unexplained_ratio([0.9, 0.8], [0.99, 0.98]), 5.0)  # the best of several fits is compared
    assert np.isnan(A.unexplained_ratio([0.9, float("nan")], [0.99]))


def test_c11_converges_fails_on_a_short_budget():
    """C.11/converges ("before eventually converging to zero loss", 000:2082: X.final_loss, criterion
    X.C11_ZERO_LOSS): Fig. C.11's network (Sigmoid, m = 600, lambda = 1e-6, alpha = 1e-2, Dataset 1.1.0) stopped
    after 300 epochs has spiked (the peak near epoch 26) but not yet come back down to zero loss."""
    data = D.get("brisbois-orthogonal", device="cpu")
    e = Cm.train_grid(data, ["sigmoid"], 600, Cm.combos([1e-6], [0], lrs=[1e-2]), 300)["sigmoid"]
    assert float(e.traj.loss.max()) > 1e3  # the spike happened: the same regime, only shorter
    assert _rejects(X.C11_ZERO_LOSS, X.final_loss(e.traj))


def test_pl1_inequality_fails_on_the_printed_constant():
    """PL1/inequality (Theorem 7 corrected, mu_t >= lambda_min(J J^T) / n along GD: PL.inequality_gap, the smallest
    over the three activations, criterion PL.PL1_INEQUALITY): the same measurement against the thesis's printed chain,
    mu_t >= lambda_min(J J^T) without the 1/n (a bound that is false: near the interpolator mu_t -> lambda_min / n), is
    rejected on short lazy runs (Dataset 1.1.0, m = 10, lambda = 1), where the corrected bound holds."""
    from types import SimpleNamespace

    from shallowflow.experiments.brisbois_thesis import pl_analysis as PL

    pl = PL.run_pl1(SimpleNamespace(width=10, steps=300, pl_scales=[1.0], every=30, lr=1e-3))
    assert not _rejects(PL.PL1_INEQUALITY, min(PL.inequality_gap(v) for v in pl.values()))
    assert _rejects(PL.PL1_INEQUALITY, min(PL.inequality_gap(v, "lmin") for v in pl.values()))


def test_syn_pl_conditioning_bound_fails_on_the_printed_constant():
    """syn PL/conditioning-bound (mu_t >= kappa_t = lambda_min(J J^T) / n at every kept state: ex.bound_margin,
    criterion ex.BOUND_HOLDS): the same measurement against 000's printed constant lambda_min(J J^T) (n kappa_t, the
    1/n dropped; a bound that is false) is rejected on a short ReLU run on 003's data (n = 2), where the bound holds."""
    import dataclasses

    from shallowflow.experiments.synthesis import pl_conditioning as PC
    from shallowflow.experiments.synthesis.sources import SOURCES
    from shallowflow.params import validate

    P = validate(dict(profile="custom", sources=[3], width=6, scales=[0.01, 0.1], seeds=[0], lr=0.05, time=5.0),
                 PC.SCHEMA, PC.RULES)
    r = PC.run_pl(P).results["003"]
    n = SOURCES["003"].dataset().n
    assert not _rejects(PC.BOUND_HOLDS, PC.bound_margin(r))
    assert _rejects(PC.BOUND_HOLDS, PC.bound_margin(dataclasses.replace(r, kappa=n * r.kappa)))
