"""Null scenarios for 003 (orthogonal inputs): the chapters' checks on what training reached fail on an untrained
network, with the criterion objects and measured quantities the chapters use (from the package)."""
from types import SimpleNamespace

import math

import torch

from shallowflow.experiments.orthogonal_inputs import appendix_a, implicit_bias, phases, remarks, theory, toy
from shallowflow.engine.monitor import segmented_descent


def _toy(steps, seeds=(0, 1)):
    P = SimpleNamespace(width=60, init_scale=1e-6, lr=1e-3, steps=steps, seeds=list(seeds), conventions="mean",
                        panels=[0])
    return toy.run_toy(P)


def test_toy_untrained_fails_E1():
    run = _toy(0)
    end = toy.end_state(run)
    assert not toy.FINAL_LOSS(end["loss"])
    assert not toy.norm_criterion(end["min_squared_norm"])(end["squared_norm"])
    assert not toy.KINKS(end["kink_deviation"])  # no grown neuron: NaN, not a vacuous 0
    assert torch.isnan(end["kink_deviation"]).all()


def test_toy_trained_passes_E1():
    end = toy.end_state(_toy(20_000, seeds=(0,)))
    assert toy.FINAL_LOSS(end["loss"]) and toy.KINKS(end["kink_deviation"])
    assert toy.norm_criterion(end["min_squared_norm"])(end["squared_norm"])


def test_remarks_R2_min_norm_fails_untrained():
    """R2/min-norm-small-init: an untrained network's rel. gap is -1; the chapter measures its absolute value."""
    sweep = remarks.run_toy_sweep(60, [1e-6], [0, 1], 1e-3, 2)  # two steps from lambda 1e-6: untrained
    S = remarks.toy_sweep_summary(sweep, 6 / math.sqrt(5))
    assert torch.allclose(S["rel_gap"], torch.full_like(S["rel_gap"], -1.0), atol=1e-6)
    assert not remarks.R2_MIN_NORM_SMALL(S["norm_gap"]) and not remarks.R2_MIN_NORM_LARGER(S["norm_gap"])


def test_phases_untrained_runs_fail_the_phase_order():
    """E0/phase-order: an untrained network never leaves the first saddle (no exit times), so no run shows the
    schematic's order and the share fails the criterion."""
    ens = theory.make_ensemble("ortho-B", 100, [1e-8, 1e-16], [0], [0.05])
    T = theory.phase_times(ens.k, ens.lams, 0.1)
    mon = segmented_descent(ens, 20, 20, 20)  # one unit of flow time from lambda <= 1e-8: untrained
    tl = phases.timeline(SimpleNamespace(times=T, ens=ens, mon=mon))
    assert not phases.PHASE_ORDER(float(tl["ordered"].double().mean()))
    assert torch.isnan(tl["exit1"]).all()


def _implicit_untrained(lams):
    ens = theory.make_ensemble("ortho-B", 100, lams, [0], [0.05])
    mon = segmented_descent(ens, 20, 20, 20)  # one unit of flow time from a tiny lambda: untrained
    return implicit_bias.implicit_bias(SimpleNamespace(ens={"ortho-B": ens}, mon={"ortho-B": mon}, eps=0.1), "ortho-B")


def test_implicit_bias_untrained_network_fails_the_gap_checks():
    """T1/gap-at-min-lam and T1/gap-decreasing: an untrained network has ||theta||^2 ~ 0, rel.gap = -1. The signed
    gap passed "< 1e-6" and "decreases" (the null scenario that made the chapter read |rel.gap|); |rel.gap| = 1
    fails both."""
    tb = _implicit_untrained([1e-8, 1e-16, 1e-30])
    assert torch.allclose(tb["gap"], torch.full_like(tb["gap"], -1.0), atol=1e-6)
    assert implicit_bias.GAP_AT_MIN_LAM(tb["gap"])  # the signed reading could not tell
    assert not implicit_bias.GAP_AT_MIN_LAM(tb["abs_gap"])
    ens = theory.make_ensemble("ortho-B", 100, [1e-8, 1e-16, 1e-30], [0], [0.05])
    assert not bool(implicit_bias.decreasing_to_floor(ens, tb["abs_gap"], 1e-12)["ok"].all())


def test_appendix_a_untrained_runs_fail_the_e3b_comparisons():
    """E3b: an untrained ensemble. Compared with the smallest scale whatever its state, large scales would show a
    larger norm (rel. gap -0.7 against -1) and more kinks (28 against 0) without any training; the package's
    reference is the smallest scale whose runs all converged, there is none, and both comparisons measure nan."""
    P = SimpleNamespace(width=60, seeds=[0, 1], variants="both", early_init_scale=1e-3, init_scales=[1e-3, 1.0, 3.0],
                        lr=1e-12, steps=20, record_every=1, panels=[0])
    run = appendix_a.run_nonorthogonal(P)
    S = appendix_a.nonorthogonal_summary(run)
    ref = appendix_a.reference_scale(run, S, P.init_scales)
    assert ref is None
    large = [1.0, 3.0]
    assert not appendix_a.NORM_ABOVE_SMALL_INIT(appendix_a.paired_with_reference(run, S["rel_gap"], large, ref))
    assert not appendix_a.MORE_KINKS(appendix_a.paired_with_reference(run, S["kinks"], large, ref))
    # the unguarded comparison with the smallest scale passes on this untrained ensemble: the guard is what fails it
    assert appendix_a.MORE_KINKS(appendix_a.paired_with_reference(run, S["kinks"], large, 1e-3))
