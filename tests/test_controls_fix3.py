"""Negative controls of the deciding checks added by fix3 (the third re-audit's targets): each computes the chapter's
own measurement with the chapter's own criterion object on a case where the claim is false, and asserts the criterion
rejects it (a non-finite measurement proves nothing and is refused)."""
from __future__ import annotations

from shallowflow.experiments.balboni_thesis import part_one as PO
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

