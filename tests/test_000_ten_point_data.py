"""000 ten-point-data: the measures read off the loss record do not depend on the epoch budget.

The loss used to be recorded every ``steps // 2000`` epochs (600 at book scale, 1500 at the paper's 3e6), so the
plateau ends of Figs 3.30/C.20 were rounded to the budget's stride: on Dataset 1.3.1 they all lie below 8000 epochs,
and the paper run's C.20 R^2 (0.977 ReLU, 0.941 Tanh) came from that rounding.  Tiny sizes: seconds."""
from types import SimpleNamespace

import math

import torch

from shallowflow import data as D
from shallowflow import metrics
from shallowflow.experiments.brisbois_thesis import ten_point_data as T

P = SimpleNamespace(lr=1e-3, stop_below=1e-10)
SCALES = [1e-4, 1e-3, 1e-2]


def _ends(steps, record_every=None):
    tr = T._train("relu", D.brisbois_nonorthogonal("1.3.1"), SCALES, [0], 60, steps, P, record_every=record_every)
    return tr, T.plateau_end(tr)


def test_plateau_ends_are_the_same_at_two_budgets():
    _, short = _ends(10_000)
    _, long = _ends(30_000)
    assert (short > 0).all()
    assert torch.equal(short, long)


def test_the_old_budget_stride_rounded_the_plateau_ends():
    """What the paper run did: at its stride of 3e6 // 2000 = 1500 epochs the same runs' plateau ends move by up to
    a stride, as much as the gap between consecutive lambda (about 1800 epochs)."""
    tr, fine = _ends(10_000)
    keep = tr.loss_steps % 1500 == 0
    coarse = metrics.first_below(tr.loss[:, keep], 0.99 * tr.loss[:, :1], tr.loss_steps[keep])
    assert (coarse != fine).any()
    assert (coarse - fine).abs().max() < 1500
    gaps = (fine[:-1] - fine[1:]).abs().double()
    assert gaps.min() > 1000  # a 1500-epoch rounding is of the size of the effect measured


def test_sigmoid_stuck_is_read_at_the_thesis_epoch_or_not_at_all():
    tr = T._train("sigmoid", D.brisbois_nonorthogonal("1.3.2"), [1e-6], [0], 10, 2_000, P)
    at = T.loss_ratio_at(tr, [0], 1_000)
    k = int((tr.loss_steps == 1_000).nonzero())
    assert math.isclose(float(at[0]), float(tr.loss[0, k] / tr.loss[0, 0]))
    assert torch.isnan(T.loss_ratio_at(tr, [0], 1_000_000)).all()  # the budget stops earlier: no reading


def test_ln_lambda_is_fitted_per_seed():
    """Two seeds with the same law and different escape times: each seed's line is exact, the pooled one is not
    (what the paper run's Fig3.30/tanh-ln-lambda pooled over 3 seeds: R^2 0.02); one seed gives the pooled value."""
    scales = [1e-6, 1e-5, 1e-4, 1e-3]
    ln = [math.log(1 / s) for s in scales]
    ends = [5e5 + 2e4 * x for x in ln] + [1e6 + 2e4 * x for x in ln]
    sc, seeds = scales * 2, [0] * 4 + [1] * 4
    assert T.ln_lambda_r2(sc, ends) < 0.5
    assert all(r > 0.999999 for r in T.ln_lambda_r2_per_seed(sc, seeds, ends))
    assert [round(v) for v in T.ln_lambda_slopes_per_seed(sc, seeds, ends)] == [20000, 20000]
    assert T.ln_lambda_r2_per_seed(scales, [0] * 4, ends[:4]) == [T.ln_lambda_r2(scales, ends[:4])]
