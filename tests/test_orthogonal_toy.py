"""003 toy (Figures 2-3, E4): the batched run, its exits and its animation (short runs)."""
import re

import pytest
import torch

from shallowflow.experiments.orthogonal_inputs import toy
from shallowflow.params import ParameterError, validate


def small(**kw):
    P = dict(profile="custom", width=12, init_scale=1e-2, lr=1e-2, steps=400, seeds=[0, 1], conventions="both",
             panels=[0, 400], animation_frames=5, level=0.95)
    P.update(kw)
    return validate(P, toy.SCHEMA)


def test_animation_frames_follow_the_authors_schedule_and_the_loss():
    run = toy.run_toy(small())
    states, L = toy.animation(run, 5)
    ks = [k for k, _ in states]
    assert len(ks) == 5 and ks[0] == 0 and ks[-1] == 400 and ks == sorted(ks)
    assert L.shape == (run.traj.runs, 5)
    for j, k in enumerate(ks):
        torch.testing.assert_close(L[:, j], run.traj.loss[:, k], rtol=0, atol=0)
        torch.testing.assert_close(states[j][1].W, run.traj.at(k).W, rtol=0, atol=0)
    # every frame is a snapshot of the schedule, and all of it when count exceeds it
    states_all, _ = toy.animation(run, 10_000)
    assert len(states_all) > 5 and states_all[-1][0] == 400


def test_kink_animation_is_an_offline_player_with_one_png_per_frame():
    from shallowflow.site import plots

    run = toy.run_toy(small())
    states, _ = toy.animation(run, 3)
    html = plots.kink_animation(states, run.data.to("cpu"), run.network, run=1, time_per_step=0.02)
    assert html.count("data:image/png;base64") == 3 and "<script" in html
    assert not re.search(r"(href|src)=[\"']?(https?:)?//", html), "the player must not load anything from the network"


def test_animation_frames_parameter_is_validated():
    with pytest.raises(ParameterError, match="animation_frames"):
        small(animation_frames=-1)


def test_animation_consistency_catches_frames_that_are_not_the_run():
    """E4/spans-training is falsifiable: frames taken from the run pass; a frame holding another iteration's
    state, or a frame list that stops before the run's last iteration, is caught."""
    run = toy.run_toy(small())
    states, _ = toy.animation(run, 5)
    good = toy.animation_consistency(run, states, 0)
    assert good["gap"] < 1e-12 and (good["first"], good["last"]) == (good["start"], good["end"]) == (0, 400)
    swapped = states[:2] + [(states[2][0], states[3][1])] + states[3:]
    assert toy.animation_consistency(run, swapped, 0)["gap"] > 1e-6
    short = toy.animation_consistency(run, states[:-1], 0)
    assert short["last"] != short["end"]


def test_min_f1_interpolator_of_the_toy_is_three_over_sqrt5():
    import math

    assert toy.min_f1_interpolator(500) == pytest.approx(3 / math.sqrt(5), rel=1e-8)
