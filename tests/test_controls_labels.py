"""Negative controls for the checks the labels fix of issue 42 made deciding (001 Lemma 8 read as its words, "with
probability at least 1 - epsilon"): the chapter's own measurement (local_pl.lemma8_flags, then lemma8_share, the lower
end of the Wilson interval of the share of runs) and its own criterion (local_pl.lemma8_criterion at the chapter's
eps) on cases where the lemma's conclusion is false must FAIL; each value is asserted finite first."""
import math
from types import SimpleNamespace as NS

import pytest

from shallowflow.experiments.weakly_interacting import local_pl as LP
from shallowflow.verdicts.controls import rejects

EPS = 0.05  # the chapter's eps (book/weakly-interacting/local-pl.py)


def _shares(n, d, horizon_mult, seeds=8):
    P = NS(d=d, seeds=list(range(seeds)), data="fixed", eps=EPS, lr=1.0, horizon_mult=horizon_mult, stop_factor=1e-6,
           first_layer="gauss")
    r = LP.run_n(n, P)
    assert bool(r["finite"].all()) and len(r["seeds"]) >= 5  # trained (or not) finitely, on well-initialised seeds
    flags = LP.lemma8_flags([r])
    return flags, {k: LP.lemma8_share(v)[0] for k, v in flags.items()}


@pytest.fixture(scope="module")
def small_d():
    """n = d = 40: the lemma needs d >= kappa log p log(np) log(1/eps)^2; at d = n the first layer's norms are of the
    order of the second's, and wrongly signed pairs outlive t_n while correctly signed ones decrease."""
    return _shares(40, 40, 1.5)


@pytest.fixture(scope="module")
def untrained():
    """The chapter's d = 2000 at n = 40, stopped after its first epoch (horizon 1e-3 t_n): no wrongly signed pair
    has gone extinct (but where none was active at all), so neither extinction by t_n nor a short extinction phase
    can be shown."""
    return _shares(40, 2000, 1e-3)


def test_lemma8_shares_reject_a_dimension_below_the_lemmas(small_d):
    """Lemma8/before-tn, Lemma8/monotone, Lemma8/short: at d = n every share's lower Wilson end fails 1 - eps."""
    flags, shares = small_d
    assert not bool(flags["monotone"].all()) and not bool(flags["before_tn"].all())  # the case is what it says
    for key in ("before_tn", "monotone", "short"):
        assert math.isfinite(shares[key]), key
        assert rejects(LP.lemma8_criterion(EPS), [shares[key]]), key


def test_lemma8_extinction_shares_reject_untrained_runs(untrained):
    """Lemma8/before-tn and Lemma8/short on untrained runs (one epoch): at most one run extinct, both shares fail."""
    flags, shares = untrained
    assert int(flags["before_tn"].sum()) <= 1 and int(flags["short"].sum()) <= 1
    for key in ("before_tn", "short"):
        assert math.isfinite(shares[key]), key
        assert rejects(LP.lemma8_criterion(EPS), [shares[key]]), key
