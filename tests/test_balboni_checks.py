"""Checks of source 004 that must be able to fail: Lemma 19's facts 1 and 5 from the norms' definition (with their
negative controls), Lemma 3's (4.13) on ridge regression, and the in-scope measures of the Lemma 14/15 counterexamples."""
import math
from types import SimpleNamespace

import torch

from shallowflow.experiments.balboni_thesis import deep_kernels, part_one, pl_lemmas


def test_lemma19_facts_from_the_definition_and_their_controls():
    v = part_one.lemmas19_20(30, 0, n=6)
    assert v["fact1"] < 1e-12 and v["fact5"] < 1e-12  # the facts hold, computed from max ||A x|| over the vertices
    assert v["fact1_control"] > 1e-3 and v["fact5_control"] > 1e-3  # the same comparisons on false statements


def test_lemma19_definition_norm_is_not_the_row_sum_formula_on_a_known_matrix():
    # ||A||_inf = max row sum = 3 for this A, ||A||_1 = max column sum = 4: fact 5's control must see the gap
    A = torch.tensor([[1.0, 2.0], [3.0, 0.0]], dtype=torch.float64)
    signs = torch.tensor([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0]], dtype=torch.float64)
    assert float((A @ signs.T).abs().amax()) == 3.0
    assert float(A.abs().sum(-2).amax()) == 4.0


def test_ridge_generalisation_bound_holds_and_reports_its_share():
    r = pl_lemmas.ridge_generalisation(SimpleNamespace(seeds=[0], ridge_datasets=3), test=2000)
    assert r["sets"] == 3 and 0.0 <= r["share_over"] <= 1.0
    assert r["share_over"] == 0.0 and 0 < r["max_ratio"] < 1


def test_lemma14_15_counterexamples_are_in_scope():
    r = deep_kernels.lemma14(2, 2, 1, 0)
    assert r["outputs_def3"] and r["min_distance"] > 0 and r["asymmetry"] <= 1e-12
    assert r["rank_onehot"] < r["full"] and r["bound"] < r["full"]  # the counterexample itself
    q = deep_kernels.lemma15(2, 2, 0)
    assert q["min_distance"] > 0 and q["asymmetry"] <= 1e-12 and not math.isnan(q["min_eig_ratio"])
    assert q["rank"] < q["full"]
