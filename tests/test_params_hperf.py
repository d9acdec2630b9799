"""The fast path of ``params.validation.check`` for plain in-bound int/float lists (``_plain_list``) gives what
the item-by-item path gives: the same list (same values, same item types) for every accepted value, and the same
one-line message for every refused one, since every refusal still goes through the item-by-item path. Generated
values: in and out of bounds, the edges themselves, bools, NaN, inf, huge ints, nested lists, strings, numpy
scalars, tuples, empty and too-long lists, duplicates in seeds lists."""
from __future__ import annotations

import fractions
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from shallowflow.params import ParameterError, validation
from shallowflow.params.spec import INT_MAX, INT_MIN, Floats, Ints, Seeds

SPECS = {
    "width": Ints(low=1, high=1000),
    "seeds": Seeds(max_len=8),
    "depths": Ints(),  # no bounds: only the 64-bit range
    "offsets": Ints(low=-5.5, high=7.5, min_len=0, max_len=6),
    "grid": Ints(low=0, high=INT_MAX, distinct=True),
    "lrs": Floats(low=0, high=1, low_open=True),
    "scales": Floats(low=-1e300, high=1e300, min_len=2, max_len=5),
    "alphas": Floats(min_len=0),
    "betas": Floats(low=1, high=1),
}
EDGES = [0, 1, -1, 5, 7, 8, 1000, 1001, -5, -6, INT_MAX, INT_MAX + 1, INT_MIN, INT_MIN - 1, 2 ** 200, 10 ** 400,
         0.0, -0.0, 0.5, 1.0, 1.5, 1e-300, 5e-324, 1e300, 1e308, -1e308, 1000.0, 7.5, -5.5, float("nan"),
         float("inf"), float("-inf"), True, False]
ITEMS = st.one_of(
    st.sampled_from(EDGES),
    st.integers(min_value=-2 ** 70, max_value=2 ** 70),
    st.integers(min_value=-3, max_value=1002),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-10, max_value=10),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
    st.lists(st.integers(0, 3), max_size=2),  # a nested list
    st.sampled_from([np.int64(3), np.float64(0.25), np.bool_(True), fractions.Fraction(1, 2), 3 + 0j]),
)
PLAIN = st.one_of(st.integers(-3, 1002), st.floats(-2, 1002, allow_nan=False), st.sampled_from(EDGES[:30]))
VALUES = st.one_of(
    st.lists(ITEMS, max_size=12),
    st.lists(PLAIN, max_size=12),  # mostly accepted somewhere
    st.lists(st.integers(0, 10), max_size=10),  # duplicates for the seeds lists
    st.lists(PLAIN, max_size=12).map(tuple),
    st.sampled_from(["", "12", b"1", 3, 2.5, None, {1: 2}, {1, 2}, range(4), np.arange(3)]),
)


def outcome(name, value, fast: bool):
    with pytest.MonkeyPatch.context() as mp:
        if not fast:
            mp.setattr(validation, "_plain_list", lambda value, spec: None)
        try:
            out = validation.check(name, value, SPECS[name])
        except ParameterError as e:
            assert "\n" not in str(e)
            return ("refused", str(e))
    return ("accepted", [(type(v), v if not (isinstance(v, float) and math.isnan(v)) else "nan") for v in out])


@settings(max_examples=600, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(sorted(SPECS)), value=VALUES)
@example(name="width", value=[1, 1000])
@example(name="width", value=[True])
@example(name="seeds", value=[0, 1, 1])
@example(name="lrs", value=[0])
@example(name="lrs", value=[0.0, 1])
@example(name="lrs", value=[1e-300, 1.0])
@example(name="betas", value=[1, 1.0])
@example(name="depths", value=[INT_MAX, INT_MIN])
@example(name="depths", value=[INT_MAX + 1])
@example(name="alphas", value=[10 ** 400])
@example(name="alphas", value=[2 ** 1023, -(2 ** 1023)])
@example(name="alphas", value=[float("nan")])
@example(name="scales", value=[1e300, -1e300])
@example(name="offsets", value=[-5, 7])
@example(name="offsets", value=[])
@example(name="width", value=[[1]])
def test_the_fast_path_and_the_item_by_item_path_agree(name, value):
    fast, slow = outcome(name, value, True), outcome(name, value, False)
    assert fast == slow, (name, value)


def test_the_fast_path_serves_plain_in_bound_lists_and_nothing_else():
    assert validation._plain_list(list(range(1, 1001)), SPECS["width"]) == list(range(1, 1001))
    assert validation._plain_list([0.5, 1], SPECS["lrs"]) == [0.5, 1.0]
    for name, value in [("width", [0]), ("width", [1, True]), ("lrs", [0]), ("alphas", [float("inf")]),
                        ("alphas", [10 ** 400]), ("depths", [INT_MAX + 1]), ("width", (x for x in [1])),
                        ("width", []), ("alphas", [np.float64(1)])]:
        assert validation._plain_list(value, SPECS[name]) is None, (name, value)


@pytest.mark.parametrize("name, value, message", [
    ("width", [1, 0], "parameter 'width' = 0 (item 1) is invalid: expected a list of integers >= 1 and <= 1000"),
    ("lrs", [0.5, float("nan")], "parameter 'lrs' = nan (item 1) is invalid"),
    ("depths", [1, 2 ** 63], "(item 1) is invalid: expected a list of integers (1 to 10000 items) (integers must fit"),
])
def test_a_refusal_names_the_first_bad_item_as_before(name, value, message):
    with pytest.raises(ParameterError) as e:
        validation.check(name, value, SPECS[name])
    assert message in str(e.value)
