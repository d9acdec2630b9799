"""Null scenarios for 003 (orthogonal inputs): the chapters' checks on what training reached fail on an untrained
network, with the criterion objects and measured quantities the chapters use (from the package)."""
from types import SimpleNamespace

import math

import torch

from shallowflow.experiments.orthogonal_inputs import remarks, toy


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
