"""Source 004, second half: the experiment functions behind the adler, adler-theory, deep-kernels and part-one
chapters, on tiny inputs (seconds)."""
import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from shallowflow.deep import optim as dopt
from shallowflow.deep import vision
from shallowflow.experiments.balboni_thesis import adler as A
from shallowflow.experiments.balboni_thesis import adler_theory as T
from shallowflow.experiments.balboni_thesis import deep_kernels as D
from shallowflow.experiments.balboni_thesis import part_one as P1
from shallowflow.params import ParameterError, validate


def _split(n=96, classes=3):
    g = torch.Generator().manual_seed(0)
    X = torch.randn(n, 1, 8, 8, generator=g)
    y = torch.randint(0, classes, (n,), generator=g)
    return A.Split("toy", "toy", X[:64], y[:64], X[64:], y[64:], classes)


def test_fit_records_every_step_and_the_same_minibatches_for_every_method():
    split = _split()
    init = vision.build("cnn", "tanh", 3, width=2, seed=0)
    runs = []
    for method, lr in (("sgd", 0.1), ("adler", float("nan")), ("gn", float("nan"))):
        import copy

        model = copy.deepcopy(init)
        opt = dopt.make(method, model, lr=lr if method == "sgd" else None)
        runs.append(A.fit(model, opt, split, 2, 16, 0, A.Run("toy", "cnn", "tanh", 0, method, lr)))
    for r in runs:
        assert r.steps_per_epoch == 4 and len(r.steps["eta"]) == 8 and len(r.test_acc) == 3
        assert r.passes["forward"] == r.passes["backward"] == 8
        assert r.passes["jvp"] == (0 if r.method == "sgd" else 8)
        assert r.finite and r.train_loss[0] == runs[0].train_loss[0]  # same initialisation
    assert np.all(runs[0].steps["eta_hat"] == 0.1)


def test_grid_best_and_cells():
    mk = lambda method, lr, acc, finite=True: A.Run("d", "cnn", "relu", 0, method, lr, train_loss=[1.0, 0.5 if finite else float("nan")],
                                                    test_loss=[1.0, 1.0], test_acc=[0.1, acc])
    runs = [mk("sgd", 0.1, 0.5), mk("sgd", 0.3, 0.95), mk("sgd", 1.0, 0.99, finite=False), mk("adler", math.nan, 0.92),
            mk("gn", math.nan, 0.4)]
    assert A.grid_best(runs).lr == 0.3  # the diverged rate is not a candidate
    X, y = torch.zeros(100, 1, 8, 8), torch.zeros(100, dtype=torch.long)
    comp = A.Comparison(runs, {"d": A.Split("d", "toy", X, y, X, y, 10)}, {}, 0.0)
    cells = A.cell_table(comp, "d")
    assert len(cells) == 1 and cells[0]["sgd"] == 0.95 and cells[0]["adler"] == 0.92 and cells[0]["valid"]
    assert cells[0]["learned"] and cells[0]["gate"] == A.learning_gate(10) == (0.9, 1.0)
    cmp = A.cell_comparisons(cells)
    assert cmp["above_gn"] == 1 and cmp["above_sgd"] == 0 and cmp["on_par"] == 0  # 0.92 < 0.95 - 0.02
    assert cmp["cells"] == cmp["total"] == 1 and cmp["gated"] == ["d/CNN+ResNet/relu"]
    # a cell whose grid-best SGD misses the gate (0.7 < 0.9) is undecided: no comparison counts it
    low = [mk("sgd", 0.1, 0.7), mk("adler", math.nan, 0.95), mk("gn", math.nan, 0.1)]
    cmp = A.cell_comparisons(A.cell_table(A.Comparison(low, comp.splits, {}, 0.0), "d"))
    assert cmp["cells"] == 0 and cmp["total"] == 1 and math.isnan(cmp["adler_vs_sgd"]) and cmp["valid"].size == 0


def test_hundred_class_gate_is_the_specs_regime():
    assert A.learning_gate(100) == (0.25, 0.40)
    with pytest.raises(ValueError):
        A.learning_gate(7)


def test_comparison_schema_rules():
    base = dict(profile="custom", datasets="digits10", models="cnn", activations="relu", activations_100="relu",
                seeds=[0], grid=[0.1], epochs=1, batch=64, n_train_mnist=400, n_test_mnist=100, side_mnist=7,
                n_train_100=500, n_test_100=100, separation_100=0.5, width=4, vit_dim=8, vit_depth=1, beta=0.99,
                eps=1e-10, sat_widths=[2], sat_epochs=1, sat_seeds=[0], threads=1, resume=False)
    validate(base, A.SCHEMA, A.RULES)
    for bad in (dict(models="cnn,mlp"), dict(datasets="imagenet"), dict(vit_dim=10), dict(activations=""),
                dict(activations_100="gelu"), dict(side_mnist=9), dict(n_train_mnist=4500, n_test_mnist=1000),
                dict(datasets="mnist10", models="vit", side_mnist=7), dict(seeds=[0, 0]), dict(sat_widths=[2, 2]), dict(sat_seeds=[1, 1])):
        with pytest.raises(ParameterError):
            validate({**base, **bad}, A.SCHEMA, A.RULES)


def test_mnist_loader_is_real_stratified_and_offline():
    from shallowflow.deep import data as ddata

    d = ddata.mnist(pool=4)
    assert d.n == 5000 and d.d == 49 and d.classes == 10 and 0 <= float(d.X.min()) and float(d.X.max()) <= 1
    tr, te = ddata.stratified_split(d.y, 400, 100)
    assert not set(tr) & set(te)
    assert np.all(np.bincount(d.y[tr].numpy(), minlength=10) == 40)
    with pytest.raises(ValueError):
        ddata.mnist(pool=3)


def test_step_checks_are_exact():
    r = A.step_checks()
    assert r["a_rel_err"] < 1e-10 and r["b_rel_err_f64"] < 1e-12 and r["b_rel_err_f32"] < 1e-5 and r["c_rel_err"] < 1e-10


def test_eq73_decomposition_and_lemma12():
    assert T.decomposition("mse", width=8)["rel_err"] < 1e-10
    l12 = T.lemma12(3, 0, width=8, steps=3)
    assert l12["min_lower_margin"] > -1e-10 and l12["min_upper_margin"] > -1e-10


def test_deep_kernel_lemmas():
    assert D.lemma8(0, trials=10) < 1e-9
    r = D.lemma9(3, 2, 1.5, 0.2)
    assert r["err"] < 1e-12 and r["rank"] == 6
    r14 = D.lemma14(2, 2, 1, 0)
    assert {k: r14[k] for k in ("rank_onehot", "rank_random", "full", "bound")} == dict(
        rank_onehot=16, rank_random=16, full=100, bound=16)  # Lemma 14 fails as stated
    r15 = D.lemma15(2, 2, 0)
    assert {k: r15[k] for k in ("rank", "full", "bound")} == dict(rank=8, full=16, bound=8)  # Lemma 15 fails as stated
    assert D.theorem2(5, 6, 8, 2, 0).min() > 1e-10
    assert D.theorem2(3, 6, 8, 2, 0, d_last=5, rank=True).max() <= 5
    assert D.representer(0) < 1e-8


def test_part_one_lemmas():
    kns = P1.kns_example(starts=(3.0, -40.0), steps=200)
    assert kns["worst_ratio"] <= kns["rate_bound"] and kns["empirical_mu"] >= 1 / 32
    assert abs(P1.q_fixed_point(0.5, 0.0)) < 1e-6  # ordered, no bias: q* = 0
    l18 = P1.lemma18(400, 0)
    assert l18["grad_sq_max"] <= 2 + 1e-12 and l18["hess_min_eig"] > -1e-12
    l21 = P1.lemma21(200, 0, n=10)
    assert l21["coord_hessian"] <= l21["b18"] * (1 + 1e-12)
    assert max(l21["random_ratio"], l21["aligned_ratio"]) <= l21["corrected"]
