"""Null scenarios for source 004's chapters part-one, pl-training, conditioning-at-init and deep-kernels (issue 24
item 3): each comparative check, fed a null scenario at tiny size through the chapter's own package function, must
FAIL the criterion the notebook applies to the same measured quantity, so that no such check holds by construction."""
import functools
import numpy as np

from shallowflow.engine import metrics
from shallowflow import verdicts as C
from shallowflow.experiments.balboni_thesis import conditioning_at_init as CI
from shallowflow.experiments.balboni_thesis import deep_kernels as DK
from shallowflow.experiments.balboni_thesis import part_one as PO
from shallowflow.experiments.balboni_thesis import pl_training as PT
from shallowflow.params import validate

MAJORITY = C.above(0.5, strict=True)  # the typical-curve checks: the Wilson interval's lower end above one half


def fails(criterion, measured):
    return not criterion(measured)


def _untrained_grid(act, loss, shuffled=False):
    """A tiny pl-training grid whose steps are 1e-9: the networks do not move (and, shuffled, learn nothing either)."""
    P = validate(dict(profile="custom", dataset="digits", depth=2, width=24, examples=[12], test_examples=12,
                      lrs=[1e-9, 2e-9], epochs=10, seeds=[0, 1, 2], accuracy_filter=0.0, hvp_every=5, hvp_iters=3,
                      gen_every=5, delta=0.05, mse="mse_mean", level=0.95, sections=list(PT.SECTIONS), resume=False), PT.SCHEMA, PT.RULES)
    return PT.run_grid(P, act, loss, 12)


def test_pl_training_untrained_networks_show_no_conditioning_curve():
    """Figs. 6.7 and 6.8 on networks that do not train: the log-conditioning is flat, so neither the large-lr
    'rise then fall' nor the 'rise then steady fall' shape may hold in a majority of runs."""
    g = _untrained("tanh", "ce")
    logk = np.log(g.lmax / g.lmin)
    assert np.abs(logk - logk[:1]).max() < 1e-5  # the null is what it says
    rf = PT.rise_then_fall(logk, g.lrs, max(g.lrs))
    assert fails(MAJORITY, PT.majority(rf[np.isfinite(rf)] == 1)["low"])
    assert fails(MAJORITY, PT.majority(PT.curve_shapes(logk) == 0)["low"])


def test_pl_training_same_activation_is_not_more_variable():
    """Figs. 6.21/6.23 compare Tanh's seed spread with ReLU's: the same grids on both sides must not pass."""
    g = _untrained("relu", "mse")
    s = PT.seed_spread([g])
    assert fails(MAJORITY, PT.majority(s > s)["low"])


def test_pl_training_untrained_networks_show_no_pessimistic_bound():
    """Fig. 6.6 on networks that do not move: the chain bound predicts no decrease, so neither 'lambda_min does not
    decrease as much as predicted' nor 'the chain bound becomes vacuous' may hold in a majority of runs."""
    g = _untrained("relu", "mse")
    assert np.abs(g.lmin[-1] / g.lmin[0] - 1).max() < 1e-5  # the null is what it says
    assert fails(MAJORITY, PT.majority(PT.lmin_holds(g))["low"])
    assert fails(MAJORITY, PT.majority((g.chain <= 0).any(0))["low"])


@functools.cache
def _tiny_conditioning():
    """A tiny conditioning-at-init run, computed once for the module (its tests only read it)."""
    P = validate(dict(profile="custom", dataset="digits", depth=12, widths=[48, 64], examples=[16, 32], seeds=[0, 1, 2],
                      forward_dtype="float64", lemma23_widths=[256, 1024, 4096], lemma24_trials=10, level=0.95, resume=False),
                 CI.SCHEMA, CI.RULES)
    return P, CI.run_conditioning(P)


def test_conditioning_renormalised_networks_do_not_rise_again():
    """Fig. 6.1(c) / 6.9: the share of runs that rise again, measured on the renormalised networks (the control, which
    stagnate) instead of the plain ones, must fail the criterion of plain-rises-again (conditioning and row sum)."""
    P, res = _tiny_conditioning()
    ratios = CI.configurations(P)
    top = sorted(ratios, key=lambda c: -c[2])[: max(1, len(ratios) // 3)]
    for key, f in (("logcond", lambda a: a), ("offdiag_rowsum", np.log)):
        rising = CI.rises_again(f(res.arr("relu", True, key)))
        assert fails(MAJORITY, metrics.typical_share([rising[:, wi, ni] for wi, ni, _ in top])[0])


def test_conditioning_renormalised_row_sum_does_not_align_with_the_raise():
    """Fig. 6.9: the renormalised row sum (which stagnates, with no divergence point) against the plain networks'
    conditioning, on the runs whose conditioning rises again, must fail the alignment criterion."""
    P, res = _tiny_conditioning()
    lcp = res.arr("relu", False, "logcond")
    rising = np.ones(lcp.shape[:-1], dtype=bool)
    flags = CI.aligned_minima(np.log(res.arr("relu", True, "offdiag_rowsum")), lcp, rising)
    assert flags.size == rising.sum()
    assert fails(MAJORITY, metrics.typical_share(flags)[0])


def test_conditioning_renormalised_dominance_does_not_invert():
    """Fig. 6.10: in renormalised networks the diagonal is 1 at every layer and the off-diagonal entries shrink, so a
    dominance phase, once reached, does not invert: counted over every run, the inversion criterion must fail."""
    P, res = _tiny_conditioning()
    dmin, omax = res.arr("relu", True, "diag_min"), res.arr("relu", True, "offdiag_max")
    inv, dominant = CI.inverts_later(dmin, omax, np.ones(dmin.shape[:-1], dtype=bool))
    assert dominant > 0 and inv.size == dominant
    assert fails(MAJORITY, metrics.typical_share(inv)[0])


def test_conditioning_same_width_departs_no_later():
    """Fig. 6.2: a width compared with itself never departs strictly later, so the criterion of later-departure fails."""
    P, res = _tiny_conditioning()
    dep = CI.departure_layers(res.arr("relu", True, "logcond"), res.arr("relu", False, "logcond"))
    same = np.repeat(dep[:, :1], 2, axis=1)  # the narrower width on both sides
    flags = CI.later_departure(same, P.widths, P.examples, P.depth)
    assert flags.size > 0
    assert fails(MAJORITY, metrics.typical_share(flags)[0])


def test_deep_kernels_untrained_dkm_is_not_at_a_global_minimum():
    """Thm. 4 proxy: one L-BFGS iteration from each start leaves the wide DKM far from zero loss."""
    wide = DK.theorem4_proxy(4, 6, 12, 2, 1, 0)
    assert fails(C.above(0.98), int((wide < 1e-8).sum()) / len(wide))


def test_part_one_untrained_kernel_does_not_vanish():
    """I-3: with a zero step the kernel does not change at any width, so "the change decreases with width" must fail."""
    ntk = PO.ntk_change([16, 64], 3, [0, 1], lr=0.0)
    assert np.all(ntk["change"] == 0)
    assert fails(C.below(0.0), np.diff(ntk["change"].mean(1)).max())


_UNTRAINED = {}


def _untrained(act, loss):
    """:func:`_untrained_grid`, computed once per (activation, loss) for the learning-gate nulls below."""
    if (act, loss) not in _UNTRAINED:
        _UNTRAINED[(act, loss)] = _untrained_grid(act, loss)
    return _UNTRAINED[(act, loss)]


def test_pl_training_untrained_networks_are_not_slow_conditioning():
    """Fig. 6.7/small-lr-slow: on networks that never train the log-conditioning does not move, which the ungated
    criterion counted as 'increases very slowly' whenever the rounding left it >= 0; behind the learning gate no run
    counts and the check fails."""
    g = _untrained("relu", "ce")
    logk = np.log(g.lmax / g.lmin)
    flags = PT.slow_rise(logk, g.lrs, list(g.lrs))
    assert not PT.learned(g).any()  # the null is what it says: no run trained
    assert np.abs(logk[-1] - logk[0]).max() < 1e-5  # a change of 0 up to rounding: in [0, 0.5] or not by its sign
    s = PT.gated_majority(flags, PT.learned(g))
    assert s["n"] == 0 and s["gated"] == len(g.lrs)
    assert fails(MAJORITY, s["low"])


def test_pl_training_untrained_networks_do_not_keep_lmin_constant():
    """Figs. 6.16/6.17 lmin-constant: an untrained network's lambda_min is constant by construction (the ungated share
    passed); behind the learning gate it counts for nothing and the check fails."""
    for act in ("relu", "tanh"):
        g = _untrained(act, "mse")
        assert np.abs(PT.lmin_log_change(g)).max() < 1e-5 and not PT.learned(g).any()
        assert not fails(MAJORITY, PT.majority(PT.lmin_constant(g) == 1)["low"])  # the defect the gate removes
        assert fails(MAJORITY, PT.gated_majority(PT.lmin_constant(g), PT.learned(g))["low"])


def test_pl_training_untrained_networks_do_not_improve_lmin():
    """Figs. 6.18/6.19 lmin-improves: a change of 0 is not an improvement; behind the learning gate an untrained
    network counts for nothing and the check fails."""
    for act in ("relu", "tanh"):
        g = _untrained(act, "ce")
        assert np.abs(PT.lmin_log_change(g)).max() < 1e-5 and not PT.learned(g).any()
        assert fails(MAJORITY, PT.gated_majority(PT.lmin_improves(g), PT.learned(g))["low"])


def test_pl_training_learning_gate_counts_trained_runs():
    """The gate is not a blanket refusal: runs whose loss at least halved count, the others are left out."""
    g = _untrained("relu", "mse")
    f = g.f.copy()
    f[-1, :3] = PT.LEARNED_LOSS_FRACTION * f[0, :3]  # three runs 'trained' exactly to the gate
    f[-1, 3:] = 0.9 * f[0, 3:]
    import dataclasses
    h = dataclasses.replace(g, f=f)
    assert PT.learned(h).tolist() == [True] * 3 + [False] * (f.shape[1] - 3)
    s = PT.gated_majority(np.ones(f.shape[1]), PT.learned(h))
    assert s["n"] == 3 and s["k"] == 3 and s["gated"] == f.shape[1] - 3


def test_pl_training_untrained_bound_is_not_slow_in_n():
    """Figs. 6.11/6.12 slow-in-n: an untrained network's bound (4.13) hardly depends on n (its slope in n is above
    -1/2, which the ungated criterion counted as 'not as much as expected'); behind the learning gate no run counts,
    the slope is NaN and the check fails."""
    P = validate(dict(profile="custom", dataset="digits", depth=2, width=24, examples=[8, 16], test_examples=12,
                      lrs=[1e-9, 2e-9], epochs=10, seeds=[0, 1], accuracy_filter=0.0, hvp_every=5, hvp_iters=3,
                      gen_every=5, delta=0.05, mse="mse_mean", level=0.95, sections=list(PT.SECTIONS), resume=False),
                 PT.SCHEMA, PT.RULES)
    grids = [PT.run_grid(P, "relu", "mse", n) for n in P.examples]
    old = C.above(-0.5, strict=True)  # the spec's one-sided criterion, before the gate and the source's "decrease"
    every = [np.ones(g.f.shape[1], dtype=bool) for g in grids]
    assert not fails(old, PT.last_bound_slope(grids, P.delta, 1.0, every))  # the defect the gate removes
    criterion = PT.SLOWER_THAN_SQRT_N  # the notebook's slow-in-n criterion
    assert fails(criterion, 0.72)  # a bound that grows with n (the book's runs) does not "decrease, but not as much"
    assert not fails(criterion, -0.3)
    assert not any(PT.learned(g).any() for g in grids)
    assert fails(criterion, PT.last_bound_slope(grids, P.delta, 1.0, [PT.learned(g) for g in grids]))


def test_pl_training_untrained_networks_show_no_pessimistic_gap():
    """Fig. 6.6/bound-pessimistic, the empirical half of 'actual above the bounds': a network that does not move keeps
    its chain bound at lambda_min,0 = lambda_min,T, so the gap is 0 and no run is 'pessimistic'; the check fails.  The
    identity (the actual lambda_min above the bounds, printed by the chapter since its check was retired) still holds
    there, as it must for any weights."""
    g = _untrained("relu", "mse")
    assert np.abs(g.lmin[-1] / g.lmin[0] - 1).max() < 1e-5  # the null is what it says
    assert (PT.bounds_below_actual(g) >= 0).all()  # the identity: true by construction, trained or not
    assert not PT.bound_pessimistic(g).any()
    assert fails(MAJORITY, PT.majority(PT.bound_pessimistic(g))["low"])


def test_pl_training_untrained_networks_show_no_vacuous_bound():
    """Figs. 6.20-6.23/vacuous-early: with networks that do not move, no configuration's chain bound goes vacuous, and
    one vacuous configuration is not 'multiple cases'."""
    for act, loss in (("relu", "ce"), ("tanh", "mse")):
        g = _untrained(act, loss)
        keep = np.ones(g.f.shape[1], dtype=bool)
        assert fails(C.above(PT.MULTIPLE), len(PT.vacuous_configurations([g], [keep])))
    import dataclasses
    g = _untrained("relu", "ce")
    chain = g.chain.copy()
    chain[1, g.lrs.index(g.lrs[0])] = -1.0  # one run of one (n, lr) configuration goes vacuous at epoch 1
    chain[1, len(set(g.lrs))] = -1.0  # and another seed of the SAME configuration
    h = dataclasses.replace(g, chain=chain)
    cases = PT.vacuous_configurations([h], [np.ones(chain.shape[1], dtype=bool)])
    assert len(cases) == 1  # two seeds of one configuration are one case
    assert fails(C.above(PT.MULTIPLE), len(cases))


def test_conditioning_cross_seed_pairing_is_not_run_specific():
    """Fig. 6.9/aligned-run-specific: pair each run's conditioning with ANOTHER seed's row sum (a cross-seed pairing fed
    as if it were the run's own): the 'within-run' alignment is then itself a cross-seed one and must not exceed the
    cross-seed baseline, so the criterion fails."""
    P, res = _tiny_conditioning()
    lcp = res.arr("relu", False, "logcond")
    rs = np.log(res.arr("relu", False, "offdiag_rowsum"))
    rising = np.ones(lcp.shape[:-1], dtype=bool)
    crossed = CI.run_specific_excess(np.roll(rs, 1, axis=0), lcp, rising)
    assert crossed["n"] == rising.sum()
    assert fails(C.above(0, strict=True), crossed["low"])


def test_conditioning_alignment_of_the_configuration_is_not_run_specific():
    """Fig. 6.9: where every seed of a (width, n) has its minima at the same layers (alignment by configuration only), the
    within-run alignment is perfect and Fig6.9/aligned-with-Fig6.1's criterion passes, but the cross-seed pairing aligns
    as often, so aligned-run-specific must fail; a row sum that follows its own run's conditioning (and not the other
    seeds') passes it."""
    rng = np.random.default_rng(0)
    S, configs, layers = 4, 10, 12
    base = rng.normal(size=(1, configs, 1, layers))
    lc = np.repeat(base, S, axis=0) + 1e-3 * rng.normal(size=(S, configs, 1, layers))  # same minimum layer per configuration
    rising = np.ones((S, configs, 1), dtype=bool)
    same = CI.run_specific_excess(lc.copy(), lc, rising)
    assert same["within"] == 1.0 and same["shuffled"] == 1.0
    assert not fails(MAJORITY, metrics.typical_share(CI.aligned_minima(lc, lc, rising))[0])  # the defect
    assert fails(C.above(0, strict=True), same["low"])
    own_lc = rng.normal(size=(S, configs, 1, layers))  # every run's minimum at its own layer
    own = CI.run_specific_excess(own_lc.copy(), own_lc, rising)
    assert own["within"] == 1.0 and own["shuffled"] < 0.6 and own["low"] > 0
