"""Negative controls of the deciding checks added by fix3 (the third re-audit's targets): each computes the chapter's
own measurement with the chapter's own criterion object on a case where the claim is false, and asserts the criterion
rejects it (a non-finite measurement proves nothing and is refused)."""
from __future__ import annotations

from types import SimpleNamespace

from shallowflow.engine import data as D
from shallowflow.experiments.balboni_thesis import part_one as PO
from shallowflow.experiments.brisbois_thesis import non_orthogonal as N
from shallowflow.verdicts.controls import rejects


def test_lemma21_lipschitz_rejects_an_entrywise_constant():
    """Lemma21/lipschitz ((B.17), G_f = sigma_max(M) max|phi'|, 004:2026): the layer f(x) = M tanh(x)'s sampled
    Lipschitz ratio (part_one.lemma21, seed 0, the largest of the random pairs and the pair along M's top singular
    vector) over a constant that does NOT bound it, the entrywise max|M_ij| max|phi'| (the false statement, (B.18)'s
    form applied to (B.17)), must fail LEMMA21_B17; over (B.17) itself it passes at this size."""
    r = PO.lemma21(200, 0)
    ratio = max(r["lipschitz_random"], r["lipschitz_aligned"])
    entrywise = r["b18"] / PO.TANH_D2  # max|M_ij| (times max|tanh'| = 1)
    assert rejects(PO.LEMMA21_B17, ratio / entrywise)
    assert PO.LEMMA21_B17(ratio / r["b17"])


def test_c31_simpler_rejects_two_lazy_interpolators():
    """C.31/simpler (ReLU kinks at the smallest converged lambda over those at the largest, below 1; 000:2211 "the
    final interpolator becomes simpler with a decreasing lambda"): the claim is the passage from the lazy to the rich
    regime; between two lazy scales of the figure (lambda = 2.5 and 2, both >= LAZY, m = 20, three seeds trained to
    the loss goal on Dataset 1.3.3) the interpolator does not get simpler (median kinks 12 and 12), so the
    chapter's kink_ratio of the chapter's per_scale medians must fail RELU_SIMPLER. (An untrained network is no
    control here: the kink count's absolute jump threshold falls with lambda even without training, which is why the
    chapter counts converged runs only.)"""
    ds = D.brisbois_nonorthogonal("1.3.3")
    P = SimpleNamespace(width=20, steps=5000, lr=1e-3, record_every=50, stop_below=1e-12)
    e = N._train("relu", [2.5, 2.0], [0, 1, 2], P, ds)
    s = N.summary(e, ds, 1e-6)
    assert bool(s["converged"].all())
    ks = N.per_scale(s["kinks"], e.scales, list(range(len(e.scales))))
    assert rejects(N.RELU_SIMPLER, N.kink_ratio(ks))
