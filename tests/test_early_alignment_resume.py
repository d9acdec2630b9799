"""002 staircase (and the other 002 chapters whose paper runs take hours): an interrupted run with ``resume`` on
gives the numbers of an uninterrupted one; the work rules bound every chapter before a kernel starts."""
import pytest
import torch
from types import SimpleNamespace

from shallowflow.params import chapters
from shallowflow.experiments.early_alignment import staircase as ex
from shallowflow.experiments.early_alignment.theory import initialise
from shallowflow.engine.models import Network
from shallowflow.engine.train import gradient_descent


def tiny(**kw):
    P = dict(profile="custom", n_points=12, data_seed=0, width=8, init_scale=1e-3, lr=0.05, time=40.0, seeds=[0, 1, 2],
             plateau_rtol=0.01, plateau_time=5.0, animation_frames=0, resume=False)
    P.update(kw)
    return SimpleNamespace(**P)


def same(a, b):
    assert torch.equal(a.loss, b.loss) and torch.equal(a.final.a, b.final.a) and torch.equal(a.final.W, b.final.W)
    assert torch.equal(a.snap_W, b.snap_W) and a.snap_steps == b.snap_steps


def test_an_interrupted_staircase_resumes_with_the_same_numbers(tmp_path, monkeypatch):
    monkeypatch.setenv("SHALLOWFLOW_CHECKPOINTS", str(tmp_path / "ck"))
    monkeypatch.setattr(ex, "SEGMENT", 200)  # 800 iterations: 4 pieces of the ensemble
    reference = ex.run_staircase(tiny())  # resume off: computes everything, stores nothing
    assert not (tmp_path / "ck").exists()
    real, calls = ex.gradient_descent, []

    def interrupted(*a, **k):
        if len(calls) == 2:
            raise KeyboardInterrupt  # the session's time limit, in the third piece
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(ex, "gradient_descent", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ex.run_staircase(tiny(resume=True))
    assert len(calls) == 2 and len(list((tmp_path / "ck").rglob("*.pt"))) == 2
    monkeypatch.setattr(ex, "gradient_descent", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    resumed = ex.run_staircase(tiny(resume=True))
    assert len(calls) == 4  # only the 2 unfinished pieces were computed
    same(resumed.traj, reference.traj)
    again = ex.run_staircase(tiny(resume=True, lr=0.025))  # another step size never reads these pieces
    assert len(calls) == 4 + 8 and again.traj.steps == 2 * reference.traj.steps
    alone = ex.run_staircase(tiny(resume=True, seeds=[1]))  # other seeds: other pieces; a seed's numbers alone
    assert len(calls) == 12 + 4
    assert torch.equal(alone.traj.loss[0], reference.traj.loss[1]) and torch.equal(alone.traj.final.W[0],
                                                                                  reference.traj.final.W[1])


@pytest.mark.parametrize("segment", [100_000, 200, 333])
def test_runs_trained_in_pieces_equal_one_call(segment, monkeypatch):
    monkeypatch.setattr(ex, "SEGMENT", segment)
    P = tiny()
    st = ex.run_staircase(P)
    steps = int(round(P.time / P.lr))
    p0 = initialise("unbalanced", P.seeds, P.width, 2, P.init_scale)
    tr = gradient_descent(p0, st.data, Network("relu"), steps=steps, lr=P.lr, loss="mean", snapshots=st.frames,
                          record_every=max(1, steps // 4000))
    same(st.traj, tr)


@pytest.mark.parametrize("chapter", ["alignment", "assumption3", "failure-rates", "spurious", "staircase"])
def test_every_002_chapter_bounds_its_work(chapter, monkeypatch):
    """Each chapter declares one Rule.work: its book, smoke and paper profiles are accepted on this machine (staircase's
    paper profile is refused in one line naming a GPU or a cluster and its cost), and a budget below the paper
    profile's estimate refuses it before a kernel starts, in one line naming the budget."""
    from shallowflow import executor

    name = f"early-alignment/{chapter}"
    _, rules = chapters.schema(name)
    work = [r for r in rules if "fit the work budget" in r.message]
    assert len(work) == 1
    monkeypatch.delenv("SHALLOWFLOW_WORK_BUDGET", raising=False)
    for profile in ("book", "smoke") if chapter == "staircase" else ("book", "smoke", "paper"):
        executor.prepare(name, profile)
    if chapter == "staircase":  # ten seeds at the authors' width 200,000: refused here, naming where it runs
        with pytest.raises(executor.ChapterError) as e:
            executor.prepare(name, "paper")
        assert "GPU or a cluster" in str(e.value) and "CPU-hours" in str(e.value) and "work budget" in str(e.value)
        monkeypatch.setenv("SHALLOWFLOW_WORK_BUDGET", "1e15")
        monkeypatch.setenv("SHALLOWFLOW_MEMORY_GB", "64")
        executor.prepare(name, "paper")  # accepted on the larger machine
    monkeypatch.setenv("SHALLOWFLOW_WORK_BUDGET", "1e6")
    with pytest.raises(executor.ChapterError) as e:
        executor.prepare(name, "paper")
    assert "work budget" in str(e.value) and "\n" not in str(e.value)


def test_an_interrupted_failure_grid_resumes_with_the_same_numbers(tmp_path, monkeypatch):
    from shallowflow.experiments.early_alignment import failure_rates as fr

    monkeypatch.setenv("SHALLOWFLOW_CHECKPOINTS", str(tmp_path / "ck"))
    data = fr.load_data("ea-three-point")
    grid = lambda resume: fr.run_grid(data, [2, 5, 10], [1e-3, 1.0], lambda m: [0, 1], 0.05, 10.0,  # noqa: E731
                                      resume=resume)
    reference = grid(False)
    assert not (tmp_path / "ck").exists()
    real, calls = fr.gradient_descent, []

    def interrupted(*a, **k):
        if len(calls) == 2:
            raise KeyboardInterrupt  # during the third width
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(fr, "gradient_descent", interrupted)
    with pytest.raises(KeyboardInterrupt):
        grid(True)
    monkeypatch.setattr(fr, "gradient_descent", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    resumed = grid(True)
    assert len(calls) == 3  # only the third width was trained again
    for cell in reference.loss:
        assert torch.equal(resumed.loss[cell], reference.loss[cell])
        assert torch.equal(resumed.escape[cell].nan_to_num(-1), reference.escape[cell].nan_to_num(-1))
        assert resumed.outcome[cell] == reference.outcome[cell]
