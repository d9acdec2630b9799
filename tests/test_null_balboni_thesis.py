"""Null scenarios for source 004's chapters part-one, pl-training, conditioning-at-init and deep-kernels (issue 24
item 3): each comparative check, fed a null scenario at tiny size through the chapter's own package function, must
FAIL the criterion the notebook applies to the same measured quantity, so that no such check holds by construction."""
import numpy as np

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
                      gen_every=5, delta=0.05, mse="mse_mean", level=0.95, sections=list(PT.SECTIONS)), PT.SCHEMA, PT.RULES)
    return PT.run_grid(P, act, loss, 12)


def test_pl_training_untrained_networks_show_no_conditioning_curve():
    """Figs. 6.7 and 6.8 on networks that do not train: the log-conditioning is flat, so neither the large-lr
    'rise then fall' nor the 'rise then steady fall' shape may hold in a majority of runs."""
    g = _untrained_grid("tanh", "ce")
    logk = np.log(g.lmax / g.lmin)
    assert np.abs(logk - logk[:1]).max() < 1e-5  # the null is what it says
    rf = PT.rise_then_fall(logk, g.lrs, max(g.lrs))
    assert fails(MAJORITY, PT.majority(rf[np.isfinite(rf)] == 1)["low"])
    assert fails(MAJORITY, PT.majority(PT.curve_shapes(logk) == 0)["low"])


def test_pl_training_same_activation_is_not_more_variable():
    """Figs. 6.21/6.23 compare Tanh's seed spread with ReLU's: the same grids on both sides must not pass."""
    g = _untrained_grid("relu", "mse")
    s = PT.seed_spread([g])
    assert fails(MAJORITY, PT.majority(s > s)["low"])


def test_conditioning_renormalised_networks_do_not_rise_again():
    """Fig. 6.1(c) / 6.9: the rise after the minimum, in units of two seed-std, measured on the renormalised networks
    (the control, which stagnate) instead of the plain ones, must fail the criterion of plain-rises-again."""
    P = validate(dict(profile="custom", dataset="digits", depth=12, widths=[48], examples=[16, 32], seeds=[0, 1, 2],
                      forward_dtype="float64", lemma23_widths=[256, 1024, 4096], lemma24_trials=10, level=0.95),
                 CI.SCHEMA, CI.RULES)
    res = CI.run_conditioning(P)
    rises = CI.paired_rise(res.arr("relu", True, "logcond"))
    ratios = CI.configurations(P)
    top = sorted(ratios, key=lambda c: -c[2])[: max(1, len(ratios) // 3)]
    rise = [rises[:, wi, ni].mean() / (2 * rises[:, wi, ni].std(ddof=1)) for wi, ni, _ in top]
    assert fails(C.above(1, strict=True), rise)


def test_deep_kernels_untrained_dkm_is_not_at_a_global_minimum():
    """Thm. 4 proxy: one L-BFGS iteration from each start leaves the wide DKM far from zero loss."""
    wide = DK.theorem4_proxy(4, 6, 12, 2, 1, 0)
    assert fails(C.above(0.98), int((wide < 1e-8).sum()) / len(wide))


def test_part_one_untrained_kernel_does_not_vanish():
    """I-3: with a zero step the kernel does not change at any width, so "the change decreases with width" must fail."""
    ntk = PO.ntk_change([16, 64], 3, [0, 1], lr=0.0)
    assert np.all(ntk["change"] == 0)
    assert fails(C.below(0.0), np.diff(ntk["change"].mean(1)).max())
