"""Negative controls for source 004 (issue 42, item 6): each deciding check, fed a case where its claim is false
(built by the chapter's own package functions, at tiny size), must FAIL the chapter's own criterion on the same
measurement; each value is asserted finite first (a NaN that a criterion rejects proves nothing)."""
import numpy as np
import pytest

from shallowflow.experiments.balboni_thesis import part_one as PO
from shallowflow.verdicts.controls import rejects

SB2 = 0.05  # the chapter's bias variance of the mean-field networks
ORDERED, CHAOTIC = 0.8, 2.5  # the chapter's sigma_w^2 of the two phases


@pytest.fixture(scope="module")
def phases():
    """The chapter's mean-field tanh networks of both phases, narrow (width 100, depth 30)."""
    return {sw2: PO.simulate_mft(sw2, SB2, 100, 30, 0) for sw2 in (ORDERED, CHAOTIC)}


def test_i1_phase_criteria_reject_the_other_phase(phases):
    """I-1/ordered-correlation on the chaotic network (chi_1 > 1: the correlation does not go to 1, so 1 - c is far
    above 1e-3), and I-1/chaotic-correlation and I-1/chaotic-fixed-point on the ordered network (chi_1 < 1: c goes
    to 1, neither below 0.99 nor near the chaotic fixed point c*): each must fail the chapter's criterion."""
    ordered, chaotic = phases[ORDERED], phases[CHAOTIC]
    assert ordered["chi1"] < 1 < chaotic["chi1"]
    c_star = PO.correlation_fixed_point(CHAOTIC, SB2)
    assert rejects(PO.I1_ORDERED, 1 - chaotic["corr"][-1])
    assert rejects(PO.I1_CHAOTIC, ordered["corr"][-1])
    assert rejects(PO.I1_FIXED_POINT, abs(ordered["corr"][-1] - c_star))
    # the claim's own cases pass the same criteria at this size: the controls reject for the right reason
    assert PO.I1_ORDERED(1 - ordered["corr"][-1]) and PO.I1_CHAOTIC(chaotic["corr"][-1])


def test_i1_gradient_ratio_rejects_the_other_phases_chi1(phases):
    """I-1/gradient-ratio: each network's per-layer ratio of back-propagated squared gradients (geometric mean over
    layers) over the OTHER phase's chi_1 (the prediction of a network it is not) must fail I1_GRADIENT_RATIO."""
    gm = {k: float(np.exp(np.log(r["grad_ratio"]).mean())) for k, r in phases.items()}
    assert rejects(PO.I1_GRADIENT_RATIO, [gm[ORDERED] / phases[CHAOTIC]["chi1"], gm[CHAOTIC] / phases[ORDERED]["chi1"]])
    assert PO.I1_GRADIENT_RATIO([gm[k] / phases[k]["chi1"] for k in phases])


def test_thm2_full_rank_rejects_a_narrow_last_layer():
    """Thm2/full-rank: the smallest sigma_N / sigma_1 of the last-layer factor, measured where the theorem's
    hypothesis d_l >= N fails (a last layer of width N - 1: sigma_N = 0), must fail THM2_FULL_RANK; a.e. alpha with
    d_l >= N passes at the same size.  (The null set alpha^1 = 0 gives a zero factor, whose ratio 0/0 is NaN: no
    control, so it is not used.)"""
    from shallowflow.experiments.balboni_thesis import deep_kernels as DK

    N, width, layers = 6, 8, 3
    assert rejects(DK.THM2_FULL_RANK, DK.theorem2(5, N, width, layers, 2, d_last=N - 1).min())
    assert DK.THM2_FULL_RANK(DK.theorem2(5, N, width, layers, 0).min())
