"""Negative controls for deciding checks of source 004 that had none (issue 42, stop h004): each feeds the chapter's
own measurement, computed by the chapter's own package function at tiny size, a case where the claim is false, asserts
the value is finite, and asserts the chapter's own criterion REJECTS it (and, where the same size allows, that the
claim's own case passes it)."""
import numpy as np
import pytest

from shallowflow.verdicts.controls import rejects


# ------------------------------------------------------------------------------------------------
# part-one, I-5: the KNS16 example f(x) = x^2 + 3 sin^2 x is 1/32-PL and 8-smooth
# ------------------------------------------------------------------------------------------------
def test_i5_constants_reject_a_function_that_is_neither_pl_nor_8_smooth():
    """I-5/pl-constant ('f is 1/32-PL': the grid minimum of f'^2 / (2 f)) and I-5/smoothness ('f is 8-smooth': the
    grid maximum of f''), measured by part_one.kns_example on f(x) = x^2 + 5 sin^2 x (a = 5 instead of the example's
    3; one GD step, the grid measurements do not depend on it): f'' = 2 + 10 cos 2x reaches 12, and f' = 2x + 5 sin 2x
    vanishes near x = 2.1 where f > 0 (a stationary point that is not a minimum: no PL constant at all), so both must
    fail I5_PL_CONSTANT and I5_SMOOTHNESS; the example itself (a = 3) passes both."""
    from shallowflow.experiments.balboni_thesis import part_one as PO

    bad, good = PO.kns_example(steps=1, a=5.0), PO.kns_example(steps=1)
    assert rejects(PO.I5_PL_CONSTANT, bad["empirical_mu"]) and rejects(PO.I5_SMOOTHNESS, bad["max_curvature"])
    assert PO.I5_PL_CONSTANT(good["empirical_mu"]) and PO.I5_SMOOTHNESS(good["max_curvature"])


# ------------------------------------------------------------------------------------------------
# conditioning-at-init, Fig. 6.3: the value one is 'only reached in the case of infinite-width networks'
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_conditioning():
    """conditioning_at_init.run_conditioning on digits at depth 12, widths 48 and 64, n = 16 and 32, seeds 0 and 1
    (about 0.3 s CPU): the result and the largest n's index (the chapter's ``ni``)."""
    from shallowflow.experiments.balboni_thesis import conditioning_at_init as CI
    from shallowflow.params import validate

    P = validate(dict(profile="custom", dataset="digits", depth=12, widths=[48, 64], examples=[16, 32], seeds=[0, 1],
                      forward_dtype="float64", lemma23_widths=[256, 1024, 4096], lemma24_trials=10, level=0.95,
                      resume=False), CI.SCHEMA, CI.RULES)
    return CI.run_conditioning(P), len(P.examples) - 1


def test_fig63_finite_below_rejects_finite_networks_that_reach_the_infinite_width_line(small_conditioning):
    """Fig6.3/finite-below (004:1339 'to stabilize at the end at values around one, which is however only reached in
    the case of infinite-width networks'): the largest ratio of the seed-mean rescaled lambda_min over the
    infinite-width line's over the last 10 layers (largest n), measured where the finite widths DO reach it (the
    infinite-width line, the exact dual recursion (4.10) from each seed's inputs, in place of every width) is 1, not
    below 1: it must fail FIG63_FINITE_BELOW. The finite widths of the same run pass (ratio ~0.16)."""
    from shallowflow.experiments.balboni_thesis import conditioning_at_init as CI

    res, ni = small_conditioning
    depth, widths = res.P.depth, len(res.P.widths)
    late = slice(depth - 10, depth)
    inf_min = res.infinite[True]["lmin"][:, ni].mean(0)
    reached = np.repeat(res.infinite[True]["lmin"][:, None], widths, axis=1)[:, :, ni].mean(0)  # (widths, depth)
    finite = res.arr("relu", True, "lmin")[:, :, ni].mean(0)
    assert rejects(CI.FIG63_FINITE_BELOW, (reached[:, late] / inf_min[late]).max())
    assert CI.FIG63_FINITE_BELOW((finite[:, late] / inf_min[late]).max())


def test_fig610_diagonal_dominant_rejects_an_uncentred_relu():
    """Fig6.10/diagonal-dominant (004:1412 'there are some intermediate layers in which the minimum entry on the
    diagonal is higher than the maximum off the diagonal', non-renormalised ReLU networks): the number of
    configurations with such a layer (conditioning_at_init.dominant_configurations of the seed-mean curves), measured
    on networks built with the plain, UN-centred ReLU (run_conditioning normalised=False: every layer raises the
    correlations towards 1, so the off-diagonal entries approach the diagonal and no layer is dominant) is 0: it must
    fail FIG610_DOMINANT. The centred (the chapter's) networks of the same configuration (digits, depth 12, width 128,
    n = 8 and 16, seeds 0 and 1; about 0.4 s CPU for both) have such a layer and pass."""
    from shallowflow.experiments.balboni_thesis import conditioning_at_init as CI
    from shallowflow.params import validate

    P = validate(dict(profile="custom", dataset="digits", depth=12, widths=[128], examples=[8, 16], seeds=[0, 1],
                      forward_dtype="float64", lemma23_widths=[256, 1024, 4096], lemma24_trials=10, level=0.95,
                      resume=False), CI.SCHEMA, CI.RULES)
    for normalised, ok in ((False, False), (True, True)):
        r = CI.run_conditioning(P, normalised=normalised)
        dmin, omax = r.arr("relu", False, "diag_min"), r.arr("relu", False, "offdiag_max")
        assert np.isfinite(dmin).all() and np.isfinite(omax).all()
        assert CI.FIG610_DOMINANT(len(CI.dominant_configurations(dmin, omax, CI.configurations(P)))) is ok
