"""004 (balboni-thesis): a seed's numbers are the same alone or inside a batch of seeds, and
conditioning-at-init reads a reader's data file (issue 29)."""
import numpy as np
import pytest

from shallowflow.experiments.balboni_thesis import conditioning_at_init as CI
from shallowflow.experiments.balboni_thesis import pl_training as PT
from shallowflow.params import ParameterError, validate

COND = dict(profile="custom", dataset="digits", depth=6, widths=[32, 48], examples=[8, 16], seeds=[0, 1],
            forward_dtype="float64", lemma23_widths=[256, 1024, 4096], lemma24_trials=10, level=0.95, resume=False)
PLT = dict(profile="custom", dataset="digits", depth=2, width=24, examples=[10], test_examples=12, lrs=[0.001, 0.01],
           epochs=10, seeds=[0, 1], accuracy_filter=0.0, hvp_every=5, hvp_iters=3, gen_every=5, delta=0.05,
           mse="mse_mean", level=0.95, sections=list(PT.SECTIONS), resume=False)


def test_conditioning_seed_alone_or_in_batch():
    a = CI.run_conditioning(validate(dict(COND, seeds=[0, 1]), CI.SCHEMA, CI.RULES))
    b = CI.run_conditioning(validate(dict(COND, seeds=[1, 2]), CI.SCHEMA, CI.RULES))
    for key in ("logcond", "lmin", "lmax"):
        np.testing.assert_allclose(a.arr("relu", False, key)[1], b.arr("relu", False, key)[0], rtol=1e-9)
        np.testing.assert_allclose(a.arr("tanh", True, key)[1], b.arr("tanh", True, key)[0], rtol=1e-9)


def test_pl_training_seed_alone_or_in_batch():
    a = PT.run_grid(validate(dict(PLT, seeds=[0, 1]), PT.SCHEMA, PT.RULES), "relu", "mse", 10)
    b = PT.run_grid(validate(dict(PLT, seeds=[1, 2]), PT.SCHEMA, PT.RULES), "relu", "mse", 10)
    # runs are seeds x lrs: seed 1 is the second block of a and the first of b
    np.testing.assert_allclose(a.f[:, 2:], b.f[:, :2], rtol=1e-6)
    np.testing.assert_allclose(a.lmin[:, 2:], b.lmin[:, :2], rtol=1e-6)


def test_conditioning_reads_a_data_file(tmp_path):
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "x.npz", X=rng.standard_normal((40, 12)), y=np.zeros(40))
    P = validate(dict(COND, dataset=str(tmp_path / "x.npz")), CI.SCHEMA, CI.RULES)
    res = CI.run_conditioning(P)
    assert np.isfinite(res.arr("relu", True, "logcond")).all()
    assert res.data_name.startswith("x.npz")
    with pytest.raises(ParameterError, match="examples"):
        validate(dict(COND, dataset=str(tmp_path / "x.npz"), examples=[8, 41]), CI.SCHEMA, CI.RULES)
    Z = rng.standard_normal((40, 12)); Z[5] = 0
    np.savez(tmp_path / "z.npz", X=Z, y=np.zeros(40))
    with pytest.raises(ParameterError, match="dataset"):
        validate(dict(COND, dataset=str(tmp_path / "z.npz")), CI.SCHEMA, CI.RULES)


def test_majority_is_the_core_wilson_share():
    s = PT.majority([True] * 20 + [False] * 4)
    assert s["k"] == 20 and s["n"] == 24 and 0.6 < s["low"] < s["share"] < s["high"] < 1
    assert "20/24 runs" in s["text"]


def test_pl_training_sections_train_only_what_they_read():
    P = validate(dict(PLT, sections=["generalisation"]), PT.SCHEMA, PT.RULES)
    assert PT.pairs(P) == [("relu", "mse")]
    P = validate(dict(PLT, sections=["bounds", "prediction"]), PT.SCHEMA, PT.RULES)
    assert P.sections == ["prediction", "bounds"] and len(PT.pairs(P)) == 4
    with pytest.raises(ParameterError, match="sections"):
        validate(dict(PLT, sections=["training"]), PT.SCHEMA, PT.RULES)


def test_deep_kernels_seed_alone_or_in_batch():
    from shallowflow.experiments.balboni_thesis import deep_kernels as DK

    batch = np.concatenate([DK.theorem2(12, 4, 6, 2, s) for s in (0, 1)])
    np.testing.assert_array_equal(batch[12:], DK.theorem2(12, 4, 6, 2, 1))
    P = validate(dict(profile="custom", draws=100, N=6, width=24, layers=3, inits=4, gd_steps=10, seeds=[0, 3]),
                 DK.SCHEMA, DK.RULES)
    assert P.seeds == [0, 3]
    with pytest.raises(ParameterError, match="seed"):
        validate(dict(profile="custom", draws=100, N=6, width=24, layers=3, inits=4, gd_steps=10, seed=0),
                 DK.SCHEMA, DK.RULES)
