"""002 assumption3 (its paper run takes hours): with ``resume`` every GD ensemble (one per eta and width of each group
of runs), the re-runs of each and the unbalanced contrast are checkpoints; a run interrupted after k ensembles and
started again computes only the rest and gives the numbers of an uninterrupted run, bit for bit."""
from types import SimpleNamespace

import pytest
import yaml

from bit_identical import same

from shallowflow.experiments.early_alignment import assumption3 as ex


def tiny(**kw):
    # gd_scale 0.5: runs escape the OLS point, change signs and end partially active, so the re-runs are not empty
    P = dict(profile="custom", lemma_etas=[0.05, 0.16], remark_etas=[0.5], gd_widths=[5, 10], gd_draws=[2, 2],
             gd_seeds=[0, 1], gd_scale=0.5, lr=0.05, gd_time=5.0, remark_width=5, fast_lr=0.1, fast_time=5.0,
             small_scale=1e-6, small_lr=0.05, small_time=5.0, small_draws=1, unbalanced_eta=0.15, unbalanced_width=5,
             unbalanced_seeds=[0, 1], unbalanced_time=5.0, resume=False)
    P.update(kw)
    return SimpleNamespace(**P)


def run(P):
    gd = ex.run_assumption3_gd(P)
    return gd, ex.a3_rerun_escaped(P, gd["main"])


def test_an_interrupted_assumption3_run_resumes_with_the_same_numbers(tmp_path, monkeypatch):
    monkeypatch.setenv("SHALLOWFLOW_CHECKPOINTS", str(tmp_path / "ck"))
    real, calls = ex.gradient_descent, []

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(ex, "gradient_descent", counted)
    reference = run(tiny())  # resume off: computes everything, stores nothing
    assert not (tmp_path / "ck").exists()
    assert reference[1], "the tiny case re-runs some runs (else the re-runs' checkpoints are not tested)"
    total = len(calls)  # 4 main + 1 remark + 2 fast + 2 small + 1 unbalanced ensembles, and the single re-runs
    assert total > 10
    calls.clear()

    def interrupted(*a, **k):
        if len(calls) == 3:
            raise KeyboardInterrupt  # the session's time limit, in the fourth ensemble
        return counted(*a, **k)

    monkeypatch.setattr(ex, "gradient_descent", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run(tiny(resume=True))
    monkeypatch.setattr(ex, "gradient_descent", counted)
    calls.clear()
    resumed = run(tiny(resume=True))
    assert len(calls) == total - 3  # the 3 finished ensembles were read back, the rest computed
    same(resumed, reference)
    calls.clear()
    again = run(tiny(resume=True))  # everything read back: no training at all, the same numbers
    assert not calls
    same(again, reference)
    # another flow time of the main runs: those ensembles and their re-runs are computed again (the groups that do
    # not depend on gd_time, the larger step, the smaller scale and the unbalanced contrast, are read back), and the
    # numbers are those of a run without checkpoints
    other = run(tiny(resume=True, gd_time=4.0))
    assert len(calls) >= 4 + 1
    same(other, run(tiny(gd_time=4.0)))


def test_assumption3_resume_is_on_in_the_paper_profile_only():
    from shallowflow.verdicts import repo_root

    root = repo_root()
    assert yaml.safe_load((root / "params/paper/early-alignment/assumption3.yml").read_text())["resume"] is True
    assert "resume" not in (yaml.safe_load((root / "params/smoke/early-alignment/assumption3.yml").read_text()) or {})
    assert "\nresume = False" in (root / "book/early-alignment/assumption3.py").read_text()
