"""004 adler (its paper run takes tens of CPU-hours, a GPU's work): with ``resume`` each cell of the comparison (one
dataset, model, activation and seed: its grid, ADLER and Gauss-Newton runs) is a checkpoint; a run interrupted after k
cells and started again computes only the rest and gives the numbers of an uninterrupted run, bit for bit."""
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from shallowflow.experiments.balboni_thesis import adler as A


def tiny(**kw):
    P = dict(profile="custom", datasets="digits10", models="cnn", activations="relu", activations_100="relu",
             seeds=[0, 1, 2], grid=[1e-2], epochs=1, batch=128, n_train_mnist=400, n_test_mnist=100, side_mnist=7,
             n_train_100=300, n_test_100=100, separation_100=0.47, width=2, vit_dim=4, vit_depth=1, beta=0.99,
             eps=1e-10, sat_widths=[2], sat_epochs=1, sat_seeds=[0], threads=1, resume=False)
    P.update(kw)
    return SimpleNamespace(**P)


def same(a: list, b: list):
    assert len(a) == len(b)
    for r, s in zip(a, b):  # every field but the wall-clock seconds
        assert (r.dataset, r.model, r.act, r.seed, r.method) == (s.dataset, s.model, s.act, s.seed, s.method)
        assert np.array_equal(r.lr, s.lr, equal_nan=True)
        assert r.train_loss == s.train_loss and r.test_loss == s.test_loss and r.test_acc == s.test_acc
        assert r.passes == s.passes and r.diverged_at == s.diverged_at and r.steps_per_epoch == s.steps_per_epoch
        assert r.steps.keys() == s.steps.keys()
        assert all(r.steps[k].tobytes() == s.steps[k].tobytes() for k in r.steps)


def test_an_interrupted_adler_comparison_resumes_with_the_same_numbers(tmp_path, monkeypatch):
    monkeypatch.setenv("SHALLOWFLOW_CHECKPOINTS", str(tmp_path / "ck"))
    real, calls = A.fit, []

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(A, "fit", counted)
    reference = A.run_comparison(tiny()).runs  # resume off: computes everything, stores nothing
    assert not (tmp_path / "ck").exists() and len(calls) == 9  # 3 cells x (SGD at one rate, ADLER, Gauss-Newton)
    calls.clear()

    def interrupted(*a, **k):
        if len(calls) == 4:
            raise KeyboardInterrupt  # the session's time limit, in the second run of the second cell
        return counted(*a, **k)

    monkeypatch.setattr(A, "fit", interrupted)
    with pytest.raises(KeyboardInterrupt):
        A.run_comparison(tiny(resume=True))
    assert len(list((tmp_path / "ck").rglob("*.pt"))) == 1  # the first cell, whole; no part of the second
    monkeypatch.setattr(A, "fit", counted)
    calls.clear()
    resumed = A.run_comparison(tiny(resume=True)).runs
    assert len(calls) == 6  # the two unfinished cells only
    same(resumed, reference)
    calls.clear()
    same(A.run_comparison(tiny(resume=True, sat_epochs=2)).runs, reference)  # the sweep's parameters: not a cell's
    same(A.run_comparison(tiny(resume=True, seeds=[2, 1])).runs, reference[6:] + reference[3:6])  # cells of a list
    assert not calls
    A.run_comparison(tiny(resume=True, seeds=[1], grid=[3e-2]))  # another rate: the cell is computed again
    assert len(calls) == 3


def test_adler_resume_is_on_in_the_paper_profile_only():
    from shallowflow.verdicts import repo_root

    root = repo_root()
    assert yaml.safe_load((root / "params/paper/balboni-thesis/adler.yml").read_text())["resume"] is True
    assert "resume" not in (yaml.safe_load((root / "params/smoke/balboni-thesis/adler.yml").read_text()) or {})
    assert "\nresume = False" in (root / "book/balboni-thesis/adler.py").read_text()
