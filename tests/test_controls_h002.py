"""Negative controls added by h002 for 002 (early alignment): each test builds a case where the claim of a deciding
check is false with the package's own functions, measures it with the function the chapter uses, checks that the
measurement is finite, and asserts that the chapter's own criterion object rejects it (see
tests/test_controls_early_alignment.py for the pattern; the registry, verdicts/002.yml, links these tests with
``control:``)."""
from types import SimpleNamespace

import pytest
import torch

from shallowflow.engine import data as datasets
from shallowflow.engine.models import Network
from shallowflow.experiments.early_alignment import spurious
from shallowflow.experiments.early_alignment import theory as th


def _finite(x) -> bool:
    return bool(torch.isfinite(torch.as_tensor(x, dtype=torch.float64)).all())


@pytest.fixture(scope="module")
def three_points():
    data = datasets.get("ea-three-point", device=th.CPU)
    return data, th.key_vector(data.X, data.y)


def test_spurious_untrained_positive_neurons_do_not_align(three_points):
    """Lem4/positive-aligned (Lemma 4 (1), "Positive neurons are aligned with D", 002:140): the same measurement
    (spurious.lemma4_alignment, spurious.alignment_exponent) on a network that does not train (eps -> 0: tau_eps is
    iteration 0 at every lambda, the chapter's lambda 1e-3 and width 20) keeps its initial directions: the largest
    misalignment over S+ does not fall with lambda, its exponent is 0, and the chapter's criterion
    (spurious.positive_aligned_criterion at the chapter's eps 0.5) rejects it."""
    data, D = three_points
    P = SimpleNamespace(init_scale=1e-3, eps=1e-12, lr=1e-3, seeds=[0, 1], width=20)
    r = spurious.lemma4_alignment(P, data, D, Network("relu"))
    assert int(r["iterations"].max()) == 0
    v = spurious.alignment_exponent(r["scales"], r["max_mis"])
    assert _finite(v) and bool((r["max_mis"] > 1e-3).all())
    assert not spurious.positive_aligned_criterion(0.5)(v)


def test_spurious_positive_neurons_do_not_align_above_lambda_star(three_points):
    """Lem4/positive-aligned: the same measurement on trained runs far above lambda* (lambda in 1 x (1, 0.1, 0.01),
    the chapter's eps 0.5 and step, width 20), where the output is not small during the alignment (Lemma 4 holds for
    lambda <= lambda* only): the misalignment falls more slowly than lambda^(2 eps) and the criterion rejects it."""
    data, D = three_points
    P = SimpleNamespace(init_scale=1.0, eps=0.5, lr=1e-3, seeds=[0, 1], width=20)
    r = spurious.lemma4_alignment(P, data, D, Network("relu"))
    v = spurious.alignment_exponent(r["scales"], r["max_mis"])
    assert _finite(v)
    assert not spurious.positive_aligned_criterion(P.eps)(v)


def _monitored_with_captures(kind: str, net: Network, lr: float = 1e-2, width: int = 20, time: float = 8.0):
    """A run of the chapter spurious's phase monitor (theory.phase_monitor, the Figure 2 data, lambda 1e-3, eps2 =
    eps3 = 1e-2, as spurious.run_controls) that keeps its captures (tau_2, tau_3) for theory.series_at_capture."""
    from shallowflow.engine.monitor import train_monitored

    data = datasets.get("ea-three-point", device=th.CPU)
    X, y = data.X, data.y
    o, D = th.ols(X, y), th.key_vector(X, y)
    p0 = th.initialise(kind, [0], width, 2, 1e-3)
    captures = {"tau2": {}, "tau3": {}}
    mon = th.phase_monitor(X, y, th.neuron_sets(p0, X), p0, o.beta, D, 1e-2, 1e-2, captures, net)
    k = int(round(time / lr))
    run = train_monitored(p0, data, net, steps=k, lr=lr, every=max(1, k // spurious.CONTROL_OBSERVATIONS), monitor=mon)
    return run, captures, D


@pytest.mark.parametrize("kind,net", [("balanced", Network("leaky_relu", leak=0.1)), ("unbalanced", Network("relu"))],
                         ids=["leaky", "unbalanced"])
def test_spurious_negative_norms_grow_by_tau_2_of_the_controls(kind, net):
    """Lem5/negative-norms (Lemma 5 (4), "negative neurons' norm decreased", 002:166): the same measurement (the
    largest norm of a negative neuron over its initial norm, minus 1, at the run's tau_2: theory.series_at_capture of
    the phase monitor's neg_norm_ratio) and the same criterion (spurious.negative_norms_criterion at the run's step)
    on the chapter's two control cases (width 20, lambda 1e-3, step 1e-2, flow time 8): with a leaky ReLU (slope
    0.1, the failure-rates chapter's gamma) the negative neurons inactive on every point still get a gradient and
    grow; from an unbalanced start (Eq. (4) broken, Lemma 1's conserved a_j^2 - |w_j|^2 no longer 0) they grow too.
    Both reach tau_2, and the criterion rejects both."""
    run, captures, D = _monitored_with_captures(kind, net)
    assert 0 in captures["tau2"], "the control never reached tau_2"
    v = th.series_at_capture(run, captures, "tau2", "neg_norm_ratio") - 1
    assert _finite(v)
    assert not spurious.negative_norms_criterion(1e-2, D)(v)


def test_spurious_balanced_flips_at_a_large_step_are_not_counted_as_unbalanced(three_points):
    """Lem1/control-flips-unbalanced (Lemma 1, "Continuity of the neuron weights and Equation 4 then ensure that the
    sign of remains constant", 002:48): the same measurement (spurious.flips_where_unbalanced) on a run whose weights
    that changed sign did not start unbalanced: a balanced start (width 20, lambda 1e-3, the Figure 2 data) trained at
    the step 0.8 for flow time 20 (it trains: it passes the learning gate), where GD's finite-step drift takes one
    output weight across zero. No weight started with a_j^2 < |w_j|^2 beyond rounding, the share is 0 and
    FLIPS_UNBALANCED rejects it. (Before h002 the rounding-level a_j^2 - |w_j|^2 of about -5e-23, 7 of the 20
    balanced neurons, counted as unbalanced and the share read 1: a finding, fixed with ROUNDING_ULPS.)"""
    from shallowflow.engine.monitor import train_monitored

    data, D = three_points
    X, y = data.X, data.y
    p0 = th.initialise("balanced", [0], 20, 2, 1e-3)
    net = Network("relu")
    mon = th.phase_monitor(X, y, th.neuron_sets(p0, X), p0, th.ols(X, y).beta, D, 1e-2, 1e-2, {"tau2": {}, "tau3": {}}, net)
    run = train_monitored(p0, data, net, steps=25, lr=0.8, every=1, monitor=mon)
    assert int(((run.final.a * p0.a) <= 0).sum()) >= 1, "no weight changed sign: not the false case"
    v = spurious.flips_where_unbalanced(run)
    assert _finite(v)
    assert not spurious.FLIPS_UNBALANCED(v)
