"""Null scenario for 004's ADLER comparison: models that did not learn must not decide anything.

An untrained model (0 epochs) sits at chance, so its grid-best SGD fails the learning gate, every cell is
undecided, every comparison measures nan, and the chapter's checks built on it fail (never pass) instead of
reading "ADLER on par" or "better" out of untrained networks."""
import copy
import math

import numpy as np
import torch

from shallowflow import verdicts as C
from shallowflow.deep import optim as dopt
from shallowflow.deep import vision
from shallowflow.experiments.balboni_thesis import adler as A


def _untrained_comparison(classes=10, seeds=(0, 1, 2)):
    g = torch.Generator().manual_seed(0)
    X = torch.randn(200, 1, 8, 8, generator=g)
    y = torch.randint(0, classes, (200,), generator=g)
    split = A.Split("null", "random labels", X[:100], y[:100], X[100:], y[100:], classes)
    runs = []
    for seed in seeds:
        init = vision.build("cnn", "relu", classes, width=2, seed=seed)
        for method, lr in A.method_list([0.01, 0.1]):
            model = copy.deepcopy(init)
            opt = dopt.Adler(model) if method == "adler" else dopt.make(method, model, lr=lr)
            runs.append(A.fit(model, opt, split, 0, 32, seed, A.Run("null", "cnn", "relu", seed, method, lr)))
    return A.Comparison(runs, {"null": split}, {}, 0.0)


def test_untrained_model_fails_the_gate_and_the_comparison_is_undecided():
    for classes in (10, 100):
        comp = _untrained_comparison(classes)
        cells = A.cell_table(comp, "null")
        assert cells and not any(c["learned"] for c in cells)
        assert all(c["sgd"] < A.learning_gate(classes)[0] for c in cells)
        t = A.cell_comparisons(cells)
        assert t["cells"] == 0 and t["total"] == len(cells)
        for key in ("adler_vs_sgd", "adler_vs_gn", "on_par_share", "above_sgd_share", "above_gn_share"):
            assert math.isnan(t[key])
        assert A.gated_groups(comp) == set()
        # Fig. 7.1 and 7.2 count nothing from untrained runs
        assert not A.curves(comp, "null", "relu")["gated"].any()
        f72 = A.fig72_measures(comp, "cnn", "relu")
        assert f72["runs"] == [] and math.isnan(A.share(f72["cyclical"])["share"])
        # and a check on it cannot pass
        claims = C.Claims(source="004", chapter="book/balboni-thesis/adler", profile="custom")
        c = claims.check("C1/on-par", "null", t["adler_vs_sgd"], C.above(-0.02), valid=t["valid"])
        assert c.verdict == "fail"


def test_a_trained_baseline_passes_the_gate():
    """The gate can pass: the same code on a separable 10-class set trained a few epochs gates its cell."""
    g = torch.Generator().manual_seed(1)
    protos = 3 * torch.randn(10, 1, 8, 8, generator=g)
    y = torch.arange(400) % 10
    X = protos[y] + 0.3 * torch.randn(400, 1, 8, 8, generator=g)
    split = A.Split("easy", "separable", X[:300], y[:300], X[300:], y[300:], 10)
    runs = []
    init = vision.build("cnn", "relu", 10, width=2, seed=0)
    for method, lr in A.method_list([0.1]):
        model = copy.deepcopy(init)
        opt = dopt.Adler(model) if method == "adler" else dopt.make(method, model, lr=lr)
        runs.append(A.fit(model, opt, split, 5, 32, 0, A.Run("easy", "cnn", "relu", 0, method, lr)))
    cells = A.cell_table(A.Comparison(runs, {"easy": split}, {}, 0.0), "easy")
    assert cells[0]["learned"] and np.isfinite(A.cell_comparisons(cells)["adler_vs_sgd"])
