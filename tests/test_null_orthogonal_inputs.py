"""Null scenarios for 003 (orthogonal inputs): the chapters' checks on what training reached fail on an untrained
network, with the criterion objects and measured quantities the chapters use (from the package)."""
from types import SimpleNamespace

import math

import torch

from shallowflow.experiments.orthogonal_inputs import phases, remarks, theory, toy
from shallowflow.monitor import segmented_descent


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
