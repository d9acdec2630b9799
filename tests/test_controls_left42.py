"""Negative controls for the checks that the left42 fixes of issue 42 made deciding: each builds a case where the
source's sentence is false, computes the chapter's own measurement with the chapter's own package function, asserts
it is finite, and asserts the chapter's own criterion rejects it (and, where cheap, that the true case passes)."""
import math

import numpy as np
import torch

from shallowflow.experiments.weakly_interacting import local_pl as LP
from shallowflow.experiments.weakly_interacting import reductions as RD
from shallowflow.experiments.weakly_interacting import theory as T
from shallowflow.experiments.weakly_interacting import threshold as TH
from shallowflow.verdicts.controls import rejects

EPS = 0.05  # book/weakly-interacting/local-pl.py's eps


def test_lemma8_first_line_at_tn_rejects_the_wrongly_signed_pairs():
    """Lemma8/monotone ((47)'s first line at Lemma 8's t_n, 001:719: a_j(0) y_i > 0 implies <w_j(t_n)|x_i>_+ >=
    <w_j(0)|x_i>_+; LP.lemma8_first_line per run, the Wilson lower end LP.lemma8_share against LP.lemma8_criterion):
    the chapter's orthogonal runs (n = 40, d = 2000, eight seeds, GD at lr 1 up to t_n or the stated horizon), read on
    the pairs where the implication's premise is false, a_j(0) y_i < 0 (the labels -y): those pairs go extinct (47's
    second line), so their pre-activations end below their start in every run and the share fails 1 - eps; on the
    pairs the lemma names (a_j(0) y_i > 0) every run holds."""
    n, d, lr = 40, 2000, 1.0
    p = T.width_rule(n, EPS)
    gs = LP.generator_seeds(n, range(8))
    s, y = LP.orthogonal_data(n, d, gs)
    a0, Wn, off = RD.orthogonal_init(gs, p, n, d)
    Z0 = Wn * s[:, None, :]
    steps = min(int(math.ceil(float(LP.lemma8_tn(n, y, s, a0, Wn, off, Z0).max()) / lr)), T.epochs_rule(n, p, lr))
    run = RD.orthogonal_gd(a0, Z0, off, y, s, lr, steps)
    assert bool(torch.isfinite(run.loss).all()) and bool(torch.isfinite(run.Z).all())
    sign = a0[:, :, None] * y[:, None, :]
    wrong, right = LP.lemma8_first_line(Z0, run.Z, sign < 0), LP.lemma8_first_line(Z0, run.Z, sign > 0)
    low_wrong, low_right = LP.lemma8_share(wrong)[0], LP.lemma8_share(right)[0]
    assert math.isfinite(low_wrong) and not bool(wrong.any())
    assert rejects(LP.lemma8_criterion(EPS), [low_wrong])
    assert bool(right.all())  # the lemma's own pairs: 8/8 (a Wilson lower end of 0.68 at 8 runs, undecided alone)


def _thresholds(ps, N_of, step=0.25):
    """Convergence outcomes whose threshold is exactly N_of(p) (every run below it converges, none above), four runs
    at each of N (1 +- step/2) and N (1 +- 3 step/2): a grid whose gap around N is step N (the book's n step of 75 at
    N = 300 is 0.25 N), through the chapter's own TH.fit_threshold."""
    rows = []
    for p in ps:
        N = N_of(p)
        ns = np.repeat(N * (1 + step * np.array([-1.5, -0.5, 0.5, 1.5])), 4)
        rows.append(dict(p=p, fit=TH.fit_threshold(ns, (ns < N).astype(float))))
    assert all(r["fit"]["bracketed"] for r in rows)
    return rows


def test_fig5_hard_to_tell_rejects_linear_thresholds():
    """Fig5/hard-to-tell ("it is hard to differentiate between a sub-linear polynomial growth or a logarithmic growth",
    001:952: TH.log_power_deviations' ``tell``, the largest relative difference between the power-law and the
    logarithmic fits over the thresholds' median relative interval half-width, below TH.HARD_TO_TELL's 1): thresholds
    exactly linear in p (N = 3p, p = 50, 100, 200, the book's widths), on a grid as fine as the book's, are easy to
    tell from a logarithm (the fits differ by 17% where the thresholds are known to +-12%), so the criterion fails;
    thresholds growing like p^0.26 (the book's measured exponent) on the same grids pass (1% against 12%)."""
    ps = np.array([50.0, 100.0, 200.0])
    lin = TH.log_power_deviations(ps, _thresholds(ps, lambda p: 3 * p))
    assert math.isfinite(lin["tell"])
    assert rejects(TH.HARD_TO_TELL, [lin["tell"]])
    sub = TH.log_power_deviations(ps, _thresholds(ps, lambda p: 80 * p ** 0.26))
    assert TH.HARD_TO_TELL([sub["tell"]])
