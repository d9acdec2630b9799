"""002 spurious (its paper run, two runs of 20,000 neurons over 2,000,000 iterations, takes tens of minutes): with
``resume`` each of its four ensembles (the monitored Figure 2 runs, the dominated run, the balancedness runs, the control
runs) is a checkpoint; a run interrupted after the first and started again computes only the rest and gives the
numbers of an uninterrupted run, bit for bit."""
from types import SimpleNamespace

import pytest
import yaml

from bit_identical import same

from shallowflow.experiments.early_alignment import spurious as ex


def tiny(**kw):
    P = dict(profile="custom", width=20, init_scale=1e-3, lr=0.05, steps=300, seeds=[0, 1], monitor_every=10, eps=0.5,
             eps2=1e-2, eps3=1e-2, width_dominated=10, steps_dominated=300, balance_width=5, balance_time=2.0,
             perturbations=10, animation_frames=0, control_width=5, control_time=2.0, control_leak=0.1, resume=False)
    P.update(kw)
    return SimpleNamespace(**P)


def test_an_interrupted_spurious_run_resumes_with_the_same_numbers(tmp_path, monkeypatch):
    monkeypatch.setenv("SHALLOWFLOW_CHECKPOINTS", str(tmp_path / "ck"))
    real, calls = ex.train_monitored, []

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(ex, "train_monitored", counted)
    reference = ex.run_figure2(tiny())  # resume off: computes everything, stores nothing
    assert not (tmp_path / "ck").exists() and len(calls) == 4  # the Figure 2 runs, the dominated run, 2 controls
    assert reference.captures["tau2"], "the tiny run reaches Phase 2 (its captures are part of the checkpoint)"
    calls.clear()

    def interrupted(*a, **k):
        if len(calls) == 1:
            raise KeyboardInterrupt  # the session's time limit, in the dominated run
        return counted(*a, **k)

    monkeypatch.setattr(ex, "train_monitored", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ex.run_figure2(tiny(resume=True))
    assert len(list((tmp_path / "ck").rglob("*.pt"))) == 1
    monkeypatch.setattr(ex, "train_monitored", counted)
    calls.clear()
    resumed = ex.run_figure2(tiny(resume=True))
    assert len(calls) == 3  # the Figure 2 runs were read back
    same(resumed, reference)
    calls.clear()
    same(ex.run_figure2(tiny(resume=True)), reference)  # all four read back
    assert not calls
    ex.run_figure2(tiny(resume=True, steps=280))  # another run length: every ensemble computed again
    assert len(calls) == 4


def test_spurious_resume_is_on_in_the_paper_profile_only():
    from shallowflow.verdicts import repo_root

    root = repo_root()
    assert yaml.safe_load((root / "params/paper/early-alignment/spurious.yml").read_text())["resume"] is True
    assert "resume" not in (yaml.safe_load((root / "params/smoke/early-alignment/spurious.yml").read_text()) or {})
    assert "\nresume = False" in (root / "book/early-alignment/spurious.py").read_text()
