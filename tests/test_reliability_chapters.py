"""Issue 18, point 2: the bad values the issue reports are refused by the chapter's own schema and rules,
before training, with one message naming the parameter (validated on the chapter's smoke profile)."""
import pytest
import yaml

from shallowflow.params import chapters
from shallowflow.params import ParameterError, validate

CASES = [
    ("orthogonal-inputs/toy", {"steps": 10}, "panels"),  # was a KeyError in cell 10
    ("orthogonal-inputs/phases", {"lemma_lams": [1e-7]}, "lemma_lams"),  # was an IndexError in cell 10
    ("early-alignment/spurious", {"steps": 1}, "steps"),  # was an IndexError after training
    ("early-alignment/failure-rates", {"time": 1e12}, "time"),  # never finished
    ("orthogonal-inputs/phases", {"interval_points": 100_000_000}, "interval_points"),  # killed the kernel
    ("early-alignment/failure-rates", {"lr": 1e-300}, "lr"),  # overflow
    ("early-alignment/staircase", {"lr": 1e-300}, "lr"),
    ("orthogonal-inputs/balancedness", {"lrs_toy": [1e-300]}, "lrs_toy"),
    ("early-alignment/spurious", {"balance_time": 1e12}, "balance_time"),  # overflow / 8 PB allocation
    ("orthogonal-inputs/toy", {"seeds": [0, 2 ** 70]}, "seeds"),
    ("orthogonal-inputs/high-dim", {"seed": 2 ** 70}, "seed"),
    ("early-alignment/failure-rates", {"scales": [1e300]}, "scales"),  # NaN from iteration 0
    ("early-alignment/failure-rates", {"widths": [10 ** 6], "large_seeds": list(range(10_000))}, "widths"),  # memory estimate
]


def smoke(chapter: str) -> dict:
    values = chapters.defaults(chapter)
    path = chapters.profile_file(chapter, "smoke")
    if path.exists():
        values.update(yaml.safe_load(path.read_text()) or {})
    return {**values, "profile": "smoke"}


@pytest.mark.parametrize("chapter,override,name", CASES, ids=[f"{c}:{','.join(o)}" for c, o, _ in CASES])
def test_issue_cases_are_refused_before_training(chapter, override, name):
    mod = chapters.module(chapter)
    validate(smoke(chapter), mod.SCHEMA, mod.RULES)  # the profile itself is fine
    with pytest.raises(ParameterError) as e:
        validate({**smoke(chapter), **override}, mod.SCHEMA, mod.RULES)
    msg = str(e.value)
    assert repr(name) in msg and "\n" not in msg and len(msg) < 400, msg
