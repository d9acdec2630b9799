"""002 alignment (its paper sweep, six scales x three seeds of 10,000 neurons at step 1e-4, takes tens of minutes):
with ``resume`` the lambda sweep (one ensemble, with its phase captures) and each general-d run are checkpoints; a run
interrupted after k of them and started again computes only the rest and gives the numbers of an uninterrupted run,
bit for bit."""
from types import SimpleNamespace

import pytest
import yaml

from bit_identical import same

from shallowflow.experiments.early_alignment import alignment as ex


def tiny(**kw):
    P = dict(profile="custom", width=20, scales=[1e-2, 1e-4], seeds=[0, 1], epsilons=[0.5], lr=0.05, time=30.0,
             monitor_every=10, eps2=1e-2, eps3=1e-2, random_datasets=10, random_sizes=[3], general_dims=[3],
             general_n=[10], general_width=20, general_scale=1e-10, general_eps=0.5, general_seeds=[0, 1, 2],
             general_lr=2e-3, example_steps=10, example_lr=1e-2, example_leave_at=[0], resume=False,
             sections=["sweep", "general-d"])
    P.update(kw)
    return SimpleNamespace(**P)


def run(P):
    return ex.run_sweep(P), ex.run_general_d(P)


def test_an_interrupted_alignment_run_resumes_with_the_same_numbers(tmp_path, monkeypatch):
    monkeypatch.setenv("SHALLOWFLOW_CHECKPOINTS", str(tmp_path / "ck"))
    real_gd, real_mon, calls = ex.gradient_descent, ex.train_monitored, []

    def counted(real):
        return lambda *a, **k: (calls.append(real), real(*a, **k))[1]

    monkeypatch.setattr(ex, "gradient_descent", counted(real_gd))
    monkeypatch.setattr(ex, "train_monitored", counted(real_mon))
    reference = run(tiny())  # resume off: computes everything, stores nothing
    assert not (tmp_path / "ck").exists() and len(calls) == 1 + 3  # the sweep, three general-d runs
    assert reference[0].captures["tau2"], "the tiny sweep reaches Phase 2 (its captures are part of the checkpoint)"
    calls.clear()

    def interrupted(*a, **k):
        if len(calls) == 2:
            raise KeyboardInterrupt  # the session's time limit, in the second general-d run
        calls.append(real_gd)
        return real_gd(*a, **k)

    monkeypatch.setattr(ex, "gradient_descent", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run(tiny(resume=True))
    assert len(list((tmp_path / "ck").rglob("*.pt"))) == 2  # the sweep and the first general-d run
    monkeypatch.setattr(ex, "gradient_descent", counted(real_gd))
    calls.clear()
    resumed = run(tiny(resume=True))
    assert calls == [real_gd, real_gd]  # the two unfinished general-d runs only
    same(resumed, reference)
    calls.clear()
    same(run(tiny(resume=True, sections=["sweep"])), reference)  # what runs is not part of a key: all read back
    assert not calls
    ex.run_sweep(tiny(resume=True, width=21))  # another width: the sweep is trained again
    assert calls == [real_mon]


def test_alignment_resume_is_on_in_the_paper_profile_only():
    from shallowflow.verdicts import repo_root

    root = repo_root()
    assert yaml.safe_load((root / "params/paper/early-alignment/alignment.yml").read_text())["resume"] is True
    assert "resume" not in (yaml.safe_load((root / "params/smoke/early-alignment/alignment.yml").read_text()) or {})
    assert "\nresume = False" in (root / "book/early-alignment/alignment.py").read_text()
