"""004 conditioning-at-init and pl-training: with ``resume`` (their paper profiles) each seed (pl-training: each grid)
is a checkpointed chunk; a run that was interrupted after some chunks and started again reads them back and gives
bit-identical numbers, and the chunked numbers agree with the run of the book and smoke profiles."""
import numpy as np

from shallowflow.experiments.balboni_thesis import conditioning_at_init as CI
from shallowflow.params import validate

COND = dict(profile="custom", dataset="digits", depth=6, widths=[32, 48], examples=[8, 16], seeds=[0, 1],
            forward_dtype="float64", lemma23_widths=[256, 1024, 4096], lemma24_trials=10, level=0.95, resume=False)


def _arrays(res):
    out = {f"{a}{r}{k}": v for (a, r), st in res.stats.items() for k, v in st.items()}
    out.update({f"inf{r}{k}": v for r, st in res.infinite.items() for k, v in st.items()})
    out.update({f"read{w}": v for w, v in res.infinite_width_reading.items()})
    return out


def test_conditioning_resumes_bit_identical(tmp_path, monkeypatch):
    monkeypatch.setenv("SHALLOWFLOW_CHECKPOINTS", str(tmp_path))
    P = validate(dict(COND, seeds=[0, 1, 2], resume=True), CI.SCHEMA, CI.RULES)
    calls = []
    real = CI._conditioning_chunk
    monkeypatch.setattr(CI, "_conditioning_chunk", lambda P_, seeds: calls.append(list(seeds)) or real(P_, seeds))
    first = CI.run_conditioning(validate(dict(COND, resume=True), CI.SCHEMA, CI.RULES))  # stopped after seeds 0, 1
    assert calls == [[0], [1]]
    full = CI.run_conditioning(P)  # resumes: seeds 0 and 1 read back, seed 2 computed
    assert calls == [[0], [1], [2]]
    again = CI.run_conditioning(P)  # everything read back
    assert calls == [[0], [1], [2]]
    fresh = _arrays(CI.run_conditioning(validate(dict(COND, seeds=[0, 1, 2], resume=False), CI.SCHEMA, CI.RULES)))
    assert calls == [[0], [1], [2], [0, 1, 2]]  # one batch, nothing on disk
    a, b, f = _arrays(full), _arrays(again), _arrays(first)
    for k in a:
        assert np.array_equal(a[k], b[k], equal_nan=True), k
        assert np.array_equal(a[k][:2], f[k], equal_nan=True), k
        np.testing.assert_allclose(a[k], fresh[k], rtol=1e-9, err_msg=k)


def test_conditioning_resume_is_off_in_book_and_smoke():
    import yaml

    from shallowflow.verdicts import repo_root

    root = repo_root()
    assert yaml.safe_load((root / "params/paper/balboni-thesis/conditioning-at-init.yml").read_text())["resume"] is True
    assert "resume" not in (yaml.safe_load((root / "params/smoke/balboni-thesis/conditioning-at-init.yml").read_text()) or {})
    assert "resume = False" in (root / "book/balboni-thesis/conditioning-at-init.py").read_text()


PLT = dict(profile="custom", dataset="digits", depth=2, width=24, examples=[10, 12], test_examples=12, lrs=[0.001, 0.01],
           epochs=10, seeds=[0, 1], accuracy_filter=0.0, hvp_every=5, hvp_iters=3, gen_every=5, delta=0.05,
           mse="mse_mean", level=0.95, sections=["generalisation"])


def test_pl_training_resumes_each_grid_bit_identical(tmp_path, monkeypatch):
    """pl-training's paper profile: each (activation, loss, n) grid is a chunk; a second run reads them back."""
    import dataclasses

    from shallowflow.experiments.balboni_thesis import pl_training as PT

    monkeypatch.setenv("SHALLOWFLOW_CHECKPOINTS", str(tmp_path))
    calls = []
    real = PT.run_grid
    monkeypatch.setattr(PT, "run_grid", lambda P_, *c: calls.append(c) or real(P_, *c))
    P = validate(dict(PLT, resume=True), PT.SCHEMA, PT.RULES)
    a = PT.run_training(P)
    assert calls == [("relu", "mse", 10), ("relu", "mse", 12)]
    b = PT.run_training(P)
    assert len(calls) == 2  # both grids read back
    fresh = PT.run_training(validate(dict(PLT, resume=False), PT.SCHEMA, PT.RULES))
    assert len(calls) == 4  # resume off: computed, nothing read
    for k in (("relu", "mse", 10), ("relu", "mse", 12)):
        for f in dataclasses.fields(a[k]):
            if f.name == "seconds":
                continue
            x, y, z = getattr(a[k], f.name), getattr(b[k], f.name), getattr(fresh[k], f.name)
            if isinstance(x, np.ndarray):
                assert np.array_equal(x, y, equal_nan=True) and np.array_equal(x, z, equal_nan=True), f.name
            else:
                assert x == y == z, f.name
