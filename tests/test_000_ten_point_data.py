"""000 ten-point-data: the measures read off the loss record do not depend on the epoch budget.

The loss used to be recorded every ``steps // 2000`` epochs (600 at book scale, 1500 at the paper's 3e6), so the
plateau ends of Figs 3.30/C.20 were rounded to the budget's stride: on Dataset 1.3.1 they all lie below 8000 epochs,
and the paper run's C.20 R^2 (0.977 ReLU, 0.941 Tanh) came from that rounding.  Tiny sizes: seconds."""
from types import SimpleNamespace

import math

import torch

from shallowflow.engine import data as D
from shallowflow.engine import metrics
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


def _law_P(seeds, law_seeds, steps=10_000):
    return SimpleNamespace(lr=1e-3, stop_below=1e-10, width=30, steps=steps, scales=SCALES, seeds=seeds,
                           law_seeds=law_seeds, fig32_scale=1e-4, sections=["grid"])


def test_law_runs_stop_after_their_plateau_end_with_the_same_reading():
    """A law run stops once its loss is below 0.99 L(0) for every run of its ensemble; the recorded plateau end is that
    of the same run trained without stopping, and it costs fewer epochs."""
    ds = D.brisbois_nonorthogonal("1.3.1")
    P = _law_P([0], [0, 1])
    for act in ("relu", "tanh"):
        stopped = T._law_train(act, ds, SCALES, [0, 1], P, 10_000)
        full = T._train(act, ds, SCALES, [0, 1], 30, 10_000, P)
        assert (T.plateau_end(full) > 0).all()
        assert torch.equal(T.plateau_end(stopped), T.plateau_end(full))
        assert int(stopped.stopped_at.max()) < 10_000


def test_law_seed_alone_in_a_batch_or_from_the_grid():
    """run_law: a law seed's plateau ends are the same whether it is trained with other law seeds, alone, or read off
    the grid's runs (a grid seed is not trained again)."""
    def law(seeds, law_seeds):
        P = _law_P(seeds, law_seeds)
        run = {"data": {w: D.brisbois_nonorthogonal(w) for w in T.DATASETS}, "grid": {}}
        for w in T.DATASETS:
            for act in T.ACTS:
                steps = 2_000 if act == "sigmoid" else P.steps  # Sigmoid: only its share of the law's API is exercised
                run["grid"][(w, act)] = T.Ens((w, act), [s for s in SCALES for _ in seeds], [d for _ in SCALES for d in seeds],
                                              T._train(act, run["data"][w], SCALES, seeds, P.width, steps, P))
        return T.run_law(P, run)
    a, b, c = law([0], [0, 2]), law([2], [0, 2]), law([0], [2])
    for key in (("1.3.1", "relu"), ("1.3.1", "tanh")):
        assert a[key].seeds == b[key].seeds == [0] * 3 + [2] * 3 and a[key].scales == SCALES * 2
        val = lambda L, d: [v for v, k in zip(L.values, L.seeds) if k == d]
        assert val(a[key], 0) == val(b[key], 0) and val(a[key], 2) == val(b[key], 2) == val(c[key], 2)
        assert all(v > 0 for v in a[key].values)


def test_law_r2_without_the_largest_lambda():
    """The diagnostic of the note: a seed whose plateau end leaves the line at the largest lambda only is exact on the
    smaller ones; with fewer than three lambda left there is no fit (nan)."""
    scales = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2]
    ends = [5e5 + 2e4 * math.log(1 / s) for s in scales]
    ends[-1] -= 4e4
    law = T.Law(scales, [0] * 5, ends, torch.ones(5, dtype=torch.bool))
    assert T.law_r2(law)[0] < 0.98 < T.law_r2(law, below=1e-2)[0]
    assert math.isnan(T.law_r2(T.Law(SCALES, [0] * 3, [3e4, 2e4, 1e4], torch.ones(3, dtype=torch.bool)), below=1e-2)[0])


def test_late_fall_reads_the_last_tenth_of_the_record():
    """The note of C.21/C.23/C.25's converges: L(t_end) / L(0.9 t_end), read at recorded epochs (a closed-form
    record; and real runs sitting on their plateau read about 1)."""
    steps = torch.arange(0, 1001, 50)
    loss = torch.stack([1.0 / (1 + steps.double()), torch.ones(len(steps), dtype=torch.float64)])
    tr = SimpleNamespace(loss=loss, loss_steps=steps)
    fall = T.late_fall(tr)
    assert math.isclose(float(fall[0]), (1 + 900) / (1 + 1000)) and float(fall[1]) == 1.0
    real, _ = _ends(10_000)
    assert torch.allclose(T.late_fall(real), torch.ones(3, dtype=torch.float64), atol=1e-3)
    assert [T.trend_word(f) for f in (0.5, 0.995, 1.0, 1.5, float("nan"))] == \
        ["still falling", "flat", "flat", "rising", "no reading"]


def test_paper_run_resumes_each_ensemble_bit_identical(tmp_path, monkeypatch):
    """With ``resume`` (the paper profile) every ensemble (grid row, wide run, width, law ensemble) is a checkpointed
    chunk: a run interrupted after some ensembles and started again reads them back, computes the rest, and gives
    the numbers of a run without checkpoints (the paper run spans sittings: ten 1e6-epoch blocks per activation)."""
    from shallowflow.params import validate

    monkeypatch.setenv("SHALLOWFLOW_CHECKPOINTS", str(tmp_path))
    base = dict(profile="custom", width=10, lr=1e-3, stop_below=1e-10, goal=1e-5, wide_scale=1e-2, width_scale=1e-3,
                sections=["grid", "wide", "widths"], steps=2_000, steps_131=2_000, scales=[1e-3, 1e-2], seeds=[0], law_seeds=[0, 1],
                wide_width=10, wide_steps=1_000, widths=[4], width_steps=1_000, balance_scale=1e-3, fig32_scale=1e-3)
    calls = []
    real = T._train, T._law_train
    monkeypatch.setattr(T, "_train", lambda *a, **k: calls.append(("train", a[0])) or real[0](*a, **k))
    monkeypatch.setattr(T, "_law_train", lambda *a, **k: calls.append(("law", a[0])) or real[1](*a, **k))
    P = validate(dict(base, resume=True), T.SCHEMA, T.RULES)
    half = validate(dict(base, resume=True, sections=["wide"]), T.SCHEMA, T.RULES)
    T.run_ten_point(half)  # "interrupted" after the three wide runs
    assert len(calls) == 3
    run = T.run_ten_point(P)  # the wide runs read back; the grid (6) and the width (1) computed
    assert len(calls) == 3 + 7
    law = T.run_law(P, run)
    assert len(calls) == 3 + 7 + 5  # ReLU, Tanh on both datasets and Sigmoid on 1.3.2, for law seed 1
    again = T.run_ten_point(P)
    law_again = T.run_law(P, again)
    assert len(calls) == 15  # everything read back
    fresh = T.run_ten_point(validate(dict(base, resume=False), T.SCHEMA, T.RULES))
    law_fresh = T.run_law(validate(dict(base, resume=False), T.SCHEMA, T.RULES), fresh)
    assert len(calls) == 15 + 15  # resume off: everything computed, nothing read
    for part in ("wide", "widths"):
        for k in fresh[part]:
            for r in (run, again):
                assert torch.equal(r[part][k].loss, fresh[part][k].loss) and torch.equal(r[part][k].final.W, fresh[part][k].final.W)
    for k in fresh["grid"]:
        assert torch.equal(run["grid"][k].traj.loss, fresh["grid"][k].traj.loss)
    for k in law_fresh:
        assert law[k].seeds == law_again[k].seeds == law_fresh[k].seeds
        for other in (law_again, law_fresh):  # Sigmoid's reading is nan here: the budget stops before epoch 1e6
            assert torch.equal(torch.tensor(law[k].values), torch.tensor(other[k].values)) or \
                all(math.isnan(v) for v in law[k].values + other[k].values)
