"""Issue 25 item 1 and issue 29 item 6: every chapter of the three newest parts (000 brisbois-thesis, 001
weakly-interacting, 004 balboni-thesis) estimates its memory (Rule.memory) and its work (Rule.work), checked in
the CLI's process before a kernel starts; the hostile combinations of the issues are refused in one line naming a
parameter; every profile validates (paper under a 128 GiB node's limits: it is the cluster's scale)."""
from __future__ import annotations

import importlib
import math
from pathlib import Path

import pytest
import yaml

from shallowflow import executor, params

ROOT = Path(__file__).resolve().parents[1]
PARTS = ("brisbois-thesis", "weakly-interacting", "balboni-thesis")
CHAPTERS = sorted(f"{p}/{f.stem}" for p in PARTS for f in (ROOT / "book" / p).glob("*.py") if not f.stem.startswith("_"))
PAPER_ENV = {"SHALLOWFLOW_MEMORY_GB": "64", "SHALLOWFLOW_WORK_BUDGET": "1e16"}  # a 128 GiB node, a few GPU days
# paper profiles that do not fit even there, each for a reason the chapter's code (not its schema) must fix
# (phase-transitions was one until Prop. 2's group states were taken a chunk of times at a time)
PAPER_TOO_BIG: dict[str, str] = {}


def module(chapter):
    part, name = chapter.split("/")
    return importlib.import_module(f"shallowflow.experiments.{part.replace('-', '_')}.{name.replace('-', '_')}")


def profile_values(chapter, profile):
    import sys
    sys.path.insert(0, str(ROOT / "tests"))
    from test_params_property import defaults

    values = defaults(chapter)
    path = ROOT / "params" / profile / f"{chapter}.yml"
    if profile != "book":
        if not path.exists():
            return None
        values.update(yaml.safe_load(path.read_text()) or {})
        values["profile"] = profile
    return values


def test_the_three_parts_are_found():
    assert len(CHAPTERS) == 25, CHAPTERS


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chapter_estimates_memory_and_work(chapter):
    mod = module(chapter)
    messages = [r.message for r in mod.RULES]
    assert any("must fit in" in m for m in messages), f"{chapter}: no Rule.memory"
    assert any("work budget" in m for m in messages), f"{chapter}: no Rule.work"
    assert callable(getattr(mod, "memory_estimate", None)) and callable(getattr(mod, "work_estimate", None))


@pytest.mark.parametrize("chapter", CHAPTERS)
@pytest.mark.parametrize("profile", ["book", "smoke", "paper"])
def test_every_profile_validates(chapter, profile, monkeypatch):
    values = profile_values(chapter, profile)
    if values is None:
        pytest.skip(f"{chapter} has no {profile} file")
    mod = module(chapter)
    if profile == "paper":
        for k, v in PAPER_ENV.items():
            monkeypatch.setenv(k, v)
    if profile == "paper" and chapter in PAPER_TOO_BIG:
        with pytest.raises(params.ParameterError, match="must fit in"):
            params.validate(values, mod.SCHEMA, mod.RULES)
        return
    P = params.validate(values, mod.SCHEMA, mod.RULES)
    assert math.isfinite(mod.memory_estimate(P)) and math.isfinite(mod.work_estimate(P))


# the hostile combinations of issue 25 item 1 and issue 29 item 6: refused by prepare (the CLI's validation),
# in one line naming a parameter, with the memory limit of a 16 GiB machine and the default work budget
HOSTILE = {
    "local-pl": ("weakly-interacting/local-pl", {"ns": [20000, 20000], "d": 1000000}, "must fit in"),
    "toy": ("brisbois-thesis/toy-reproduction", {"width": 10000, "runs": 1000, "steps": 10000000, "fit_every": 1}, "must fit in"),
    "convergence": ("weakly-interacting/convergence", {"scales": [100.0], "scale_seeds": list(range(1000))}, "must fit in"),
    "conditioning": ("balboni-thesis/conditioning-at-init", {"widths": [20000], "examples": [1000, 1797], "depth": 200}, ""),
    "threshold": ("weakly-interacting/threshold", {"fig3_ns": [20000, 19999, 19998], "fig3_d": 5000, "fig3_reps": 500},
                  "must fit in"),
    "initialisation": ("weakly-interacting/initialisation", {"mc_draws": 10000000, "mc_ns": [5000]}, "work budget"),
    "balance-lrs": ("brisbois-thesis/balancedness-complexity", {"balance_lrs": [1e-4, 1e-3, 1e-2]}, "exactly two"),
    "width-grid": ("brisbois-thesis/width-grid", {"lrs": [1.0, 0.5], "scales": [1000.0, 100.0, 10.0, 0.5],
                                                  "fig33_scale": 0.5}, "1e-3"),
}


RENAMED = {"runs": ("seeds", list(range(1000))), "fig3_reps": ("fig3_seeds", list(range(500)))}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_combinations_are_refused_before_a_kernel(case, tmp_path, monkeypatch):
    chapter, overrides, what = HOSTILE[case]
    declared = executor.parameters(chapter)
    for old, (new, value) in RENAMED.items():  # a count of runs became a list of seeds (issue 29 item 1)
        if old in overrides and old not in declared and new in declared:
            overrides = {**{k: v for k, v in overrides.items() if k != old}, new: value}
    monkeypatch.setenv("SHALLOWFLOW_MEMORY_GB", "8")
    monkeypatch.delenv("SHALLOWFLOW_WORK_BUDGET", raising=False)
    with pytest.raises(executor.ChapterError) as e:
        executor.prepare(chapter, "smoke", overrides, root=tmp_path)
    msg = str(e.value)
    assert "\n" not in msg and len(msg) < 600, msg
    assert any(repr(n) in msg for n in overrides), msg
    assert what in msg, msg
    assert not any(tmp_path.iterdir()), "nothing is written before validation"


def test_threshold_rules_have_real_conditions():
    mod = module("weakly-interacting/threshold")
    assert all(r.message for r in mod.RULES)
    values = profile_values("weakly-interacting/threshold", "smoke")
    with pytest.raises(params.ParameterError, match="fig4_mults"):
        params.validate({**values, "fig4_ds": [2, 3, 4], "fig4_mults": [0.5, 0.6, 0.7]}, mod.SCHEMA, mod.RULES)


def test_balance_time_says_what_it_runs():
    doc = module("brisbois-thesis/balancedness-complexity").SCHEMA["balance_time"].doc
    assert "min(balance_lrs)" in doc


def test_work_limit_reads_the_environment(monkeypatch):
    monkeypatch.setenv("SHALLOWFLOW_WORK_BUDGET", "1e3")
    assert params.work_limit() == 1e3
    monkeypatch.setenv("SHALLOWFLOW_WORK_BUDGET", "nan")
    with pytest.raises(params.ParameterError, match="SHALLOWFLOW_WORK_BUDGET"):
        params.work_limit()


def test_prop2_group_states_are_chunked_without_changing_mu():
    """Prop. 2 at n = 2^24 held thirteen (60, 2^24) arrays (98 GB): mu is now computed a chunk of times at a time,
    identical to the unchunked computation."""
    import numpy as np

    from shallowflow.experiments.weakly_interacting import theory as T

    rng = np.random.default_rng(0)
    p = 3000
    args = (np.full(p, 4.0), rng.uniform(1, 2, p), 1000, p, np.ones(p), rng.uniform(0.1, 1, p))
    ts = np.geomspace(1, 1e4, 60)
    whole = T._group_network_mu(ts, *args)
    old = T.MU_CHUNK_BYTES
    try:
        T.MU_CHUNK_BYTES = 13 * 8 * p * 7  # chunks of seven times
        assert T.mu_chunk(p) == 7
        assert np.array_equal(T.group_network_mu(ts, *args), whole)
    finally:
        T.MU_CHUNK_BYTES = old
    assert T.mu_chunk(2 ** 24) == 1
