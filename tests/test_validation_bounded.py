"""Issue 38: validation is bounded. For every chapter, any combination drawn from its schema (every parameter within
its bounds, lists up to the longest the schema accepts, the combinations that made `--estimate` quadratic) is
validated, rules and dry plan included (what `shallowflow run` and `--estimate` do before a kernel starts), within a
bounded CPU time and with Python-side allocations under the memory limit. Measured in the test: process CPU time
(never the wall clock, which a loaded machine stretches) and tracemalloc's peak (numpy's arrays included)."""
from __future__ import annotations

import math
import time
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shallowflow.params import MAX_LEN, ParameterError, Spec, memory_limit, validate

from test_params_property import CHAPTERS, defaults, module_of

CPU_BOUND_S = 60.0  # per validation, generously: a refusal takes milliseconds, an accepted dry plan seconds
EXAMPLES = 6


def extreme(spec: Spec):
    """Accepted-looking values at the edges of one spec: its bounds, and lists at the longest it accepts."""
    lo = spec.low if spec.low is not None else -1e6
    hi = spec.high if spec.high is not None else 1e6
    if spec.kind == "str":
        return st.sampled_from(spec.choices) if spec.choices else st.just("x")
    if spec.kind == "data":
        return st.sampled_from(spec.choices)
    if spec.kind == "names":
        return st.just(list(spec.choices))
    if spec.kind == "bool":
        return st.booleans()
    if spec.kind in ("int", "ints"):
        lo_i, hi_i = int(math.ceil(lo)), int(math.floor(min(hi, 2 ** 62)))
        item = st.sampled_from(sorted({lo_i, hi_i, max(lo_i, min(hi_i, lo_i + 1))}))
    else:
        item = st.sampled_from(sorted({lo if not spec.low_open else (lo + min(hi, 1e12)) / 2, min(hi, 1e12)}))
    if spec.kind in ("ints", "floats"):
        longest = max(spec.min_len, min(spec.max_len, MAX_LEN))
        if spec.kind == "ints":  # distinct items (seeds must be): a run of integers from the low bound
            lo_i = int(math.ceil(lo))
            run = [lo_i + i for i in range(longest) if lo_i + i <= hi]
            return st.sampled_from([run[: max(spec.min_len, 1)], run]) if run else st.just([])
        return st.sampled_from([[min(hi, 1e12)] * max(spec.min_len, 1), [min(hi, 1e12)] * longest])
    return item


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_validation_is_bounded_in_time_and_memory(chapter):
    mod = module_of(chapter)
    base, rules = defaults(chapter), getattr(mod, "RULES", ())
    names = [n for n in mod.SCHEMA if n != "profile"]
    limit = memory_limit()
    worst = {"cpu": 0.0, "peak": 0}

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.fixed_dictionaries({n: extreme(mod.SCHEMA[n]) for n in names}),
           st.sets(st.sampled_from(names) if names else st.nothing(), max_size=len(names)))
    def run(drawn, keep):
        values = {**base, **{n: v for n, v in drawn.items() if n not in keep}}
        tracemalloc.start()
        t0 = time.process_time()
        try:
            validate(values, mod.SCHEMA, rules)  # rules, budgets, then the dry plan: what run and --estimate do
        except ParameterError as e:
            assert "\n" not in str(e), f"{chapter}: a refusal of {len(str(e).splitlines())} lines"
        finally:
            cpu = time.process_time() - t0
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        worst["cpu"], worst["peak"] = max(worst["cpu"], cpu), max(worst["peak"], peak)
        assert cpu < CPU_BOUND_S, f"{chapter}: validation took {cpu:.1f} CPU-s on {values}"
        assert peak < limit, f"{chapter}: validation allocated {peak / 2 ** 30:.2f} GiB (limit {limit / 2 ** 30:.2f})"

    run()
    print(f"{chapter}: worst validation {worst['cpu']:.2f} CPU-s, {worst['peak'] / 2 ** 20:.1f} MiB")
