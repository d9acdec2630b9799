"""000 s-curves: the label-timing runs of C.15/C.17 (a share of runs) give a seed the same numbers alone or in a
batch, and read the fit epochs on their denser snapshot schedule.  Tiny sizes: seconds."""
from types import SimpleNamespace

import torch

from shallowflow.engine.models import Network
from shallowflow.experiments.brisbois_thesis import s_curves as S


def _P(seeds, steps=6000):
    return SimpleNamespace(c=75.0, width_c=20, init_scale=1e-6, lr=1e-4, steps=steps, record_every=10, seeds=[0],
                           width=20, widths=[], scales=[], merge_step=100, mid_step=200, label_seeds=seeds,
                           sections=["appendix-c"])


def _epochs(seeds):
    run = S.run_scurves(_P(seeds))
    return {a: S.label_fit_epochs(run["label"][a], run["data"], Network(a)) for a in S.ACTS}


def test_a_label_seed_alone_or_in_a_batch():
    batch, alone = _epochs([0, 1, 2]), _epochs([2])
    for a in S.ACTS:
        assert (batch[a][0] > 0).all() and (batch[a][1] > 0).all()  # the labels are fitted: the comparison means something
        assert int(batch[a][0][2]) == int(alone[a][0][0]) and int(batch[a][1][2]) == int(alone[a][1][0])


def test_label_snapshots_resolve_one_percent():
    s = S.label_snapshots(300_000)
    big = [b / a - 1 for a, b in zip(s, s[1:]) if a >= 1000]
    assert max(big) < 0.0115 and s[-1] == 300_000


def test_label_gap_and_flags():
    pos, neg = torch.tensor([1000, 1000, -1, 1000]), torch.tensor([1050, 1200, 900, 900])
    gap = S.label_gap(pos, neg)
    assert abs(float(gap[0]) - 50 / 1050) < 1e-12 and torch.isnan(gap[2])
    assert S.simultaneous_flags(pos, neg).tolist() == [True, False, False, False]
    assert S.positive_first_flags(pos, neg).tolist() == [True, True, False, False]
