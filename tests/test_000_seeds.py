"""000: explicit seed lists.  A seed's run is the same alone or inside any list (every draw of a run comes from its
own generator), a seed that violates Assumption 5 is rejected and named (never replaced by another), and a list
with no usable seed is refused before a kernel starts, naming the parameter."""
import pytest
import torch

from shallowflow.params import chapters
from shallowflow.engine import data as datasets
from shallowflow.experiments.brisbois_thesis import activations as A
from shallowflow.experiments.brisbois_thesis import balancedness_complexity as B
from shallowflow.experiments.brisbois_thesis import common as Cm
from shallowflow.params import ParameterError, validate

D110 = datasets.get("brisbois-orthogonal", device="cpu")


def test_rejected_seeds_are_named_not_replaced():
    kept, rejected = Cm.assumption5_split(D110, 2, range(8))
    assert kept == Cm.assumption5_seeds(D110, 2, len(kept))  # the old "first N" draw keeps the same seeds
    assert set(kept) | set(rejected) == set(range(8)) and not set(kept) & set(rejected)
    assert all("Assumption 5" in why for why in rejected.values())
    line = Cm.describe_seeds(kept, rejected)
    assert f"seeds run: {kept}" in line and all(f"{s} (" in line for s in rejected)


def test_today_defaults_are_kept():
    """The old counts drew the first seeds with Assumption 5; at the chapters' widths none is rejected, so the
    lists [0, ..., N-1] reproduce the same runs."""
    for chapter, module in (("book/brisbois-thesis/activations", A), ("book/brisbois-thesis/balancedness-complexity", B)):
        P = chapters.defaults(chapter)
        kept, rejected = Cm.assumption5_split(D110, P["width"], P["seeds"])
        assert kept == list(P["seeds"]) and not rejected


@pytest.mark.parametrize("chapter,module", [("book/brisbois-thesis/activations", A),
                                            ("book/brisbois-thesis/balancedness-complexity", B)])
def test_no_usable_seed_is_refused(chapter, module):
    kept, rejected = Cm.assumption5_split(D110, 2, range(8))
    values = {**chapters.defaults(chapter), "profile": "custom", "width": 2, "seeds": sorted(rejected)[:3]}
    if "c3_width" in values:
        values["c3_width"] = 2
    with pytest.raises(ParameterError, match="seeds"):
        validate(values, module.SCHEMA, module.RULES)


def test_a_seed_is_the_same_alone_and_in_a_batch():
    one = Cm.train_grid(D110, ["tanh"], 8, Cm.combos([1e-2], [3]), 200)["tanh"]
    many = Cm.train_grid(D110, ["tanh"], 8, Cm.combos([1e-2], [0, 3, 5]), 200)["tanh"]
    r = many.runs(seed=3)[0]
    assert torch.equal(one.p0.W[0], many.p0.W[r]) and torch.equal(one.p0.a[0], many.p0.a[r])
    assert torch.allclose(one.traj.final.W[0], many.traj.final.W[r], rtol=0, atol=1e-12)
    assert torch.allclose(one.traj.loss[0], many.traj.loss[r], rtol=0, atol=1e-14)
