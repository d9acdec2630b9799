"""Negative controls for the synthesis part (issue 42, item 6): each deciding check, fed a case where its claim is
false (built by the package's own functions, at tiny size), must FAIL the chapter's own criterion on the same
measurement; each value is asserted finite first (a NaN that a criterion rejects proves nothing)."""
import math

import numpy as np
import torch
import pytest

from shallowflow import verdicts as C
from shallowflow.experiments.synthesis import balancedness as BA
from shallowflow.params import validate
from shallowflow.verdicts.controls import rejects

RTOL = 1e-10  # the chapter's default relative tolerance of the exact flow


@pytest.fixture(scope="module")
def balance():
    """The chapter's experiment on 003's (orthogonal) data, tiny: m = 4, two seeds, T = 4, the chapter's steps."""
    P = validate(dict(profile="custom", sources=[3], width=4, init_scale=0.1, lrs=[0.004, 0.01], time=4.0, seeds=[0, 1],
                      rtol=RTOL, snapshots=65), BA.SCHEMA, BA.RULES)
    return P, BA.run_balancedness(P)


def test_balance_relu_lemma_checks_reject_the_smooth_activations(balance):
    """Balance/relu-gd-first-order and Balance/relu-flow-conserved on the other activation: sigmoid's and tanh's
    drift belongs to the flow (sigma(z) != z sigma'(z)), so GD's drift does not scale with the step (the ratio over
    the step ratio is near 1/2.5, outside FIRST_ORDER) and the exact flow's drift is far above conserved(rtol)."""
    P, run = balance
    steps = run.lrs[-1] / run.lrs[0]
    for act in ("sigmoid", "tanh"):
        assert rejects(BA.FIRST_ORDER, (BA.step_ratio(run, "003", act) / steps).numpy())
        assert rejects(BA.conserved(P.rtol), run.flow["003", act].numpy())
    # the claim's own case passes the same criteria on the same run: the controls reject for the right reason
    assert BA.FIRST_ORDER((BA.step_ratio(run, "003", "relu") / steps).numpy())
    assert BA.conserved(P.rtol)(run.flow["003", "relu"].numpy())


def test_balance_smooth_drift_checks_reject_relu(balance):
    """Balance/sigmoid-flow-drifts, Balance/tanh-flow-drifts and Balance/smooth-gd-matches-flow on ReLU, whose flow
    conserves a_j^2 - ||w_j||^2: the exact flow's drift is at rounding level (MOVES rejects it), and GD's drift at the
    smallest step, of order the step, is not the flow's (their quotient is far outside FIRST_ORDER)."""
    P, run = balance
    assert rejects(BA.MOVES, run.flow["003", "relu"].numpy())
    assert rejects(BA.FIRST_ORDER, (run.gd["003", "relu"][0] / run.flow["003", "relu"]).numpy())
    for act in ("sigmoid", "tanh"):
        assert BA.MOVES(run.flow["003", act].numpy())
        assert BA.FIRST_ORDER((run.gd["003", act][0] / run.flow["003", act]).numpy())


def test_balance_drift_law_rejects_the_other_activations_source_term():
    """Balance/drift-law: the drift of the exact sigmoid flow against the integral of tanh's source term
    sigma(z) - z sigma'(z) (the wrong law) must fail DRIFT_LAW; against sigmoid's own it passes."""
    from shallowflow.engine import init
    from shallowflow.experiments.synthesis.sources import chosen
    from shallowflow.engine.flow import gradient_flow
    from shallowflow.engine.models import Network

    data = chosen([3])[0].dataset()
    grid = [4.0 * j / 64 for j in range(65)]
    p0 = init.balanced([0, 1], 4, data.d, 0.1, device="cpu")
    fl = gradient_flow(p0, data, Network("sigmoid"), t_end=4.0, rtol=RTOL, snapshots_t=grid)
    wrong = BA.law_residual(Network("tanh"), fl.snap_t, fl.snap_a, fl.snap_W, data)
    assert rejects(BA.DRIFT_LAW, wrong.numpy())
    assert BA.DRIFT_LAW(BA.law_residual(Network("sigmoid"), fl.snap_t, fl.snap_a, fl.snap_W, data).numpy())


def _bias(source, scale, time):
    from shallowflow.experiments.synthesis import implicit_bias as IB

    P = validate(dict(profile="custom", sources=[source], width=10, init_scale=scale, seeds=[0, 1], lr=0.05, time=time),
                 IB.SCHEMA, IB.RULES)
    return IB, list(IB.run_implicit_bias(P).results.values())[0]


def test_bias_min_norm_rejects_a_large_initial_scale():
    """Bias/min-norm-003: the implicit bias needs lambda -> 0; from lambda = 1 GD still interpolates 003's data
    (loss below 1e-10, the check's own validity) but at a larger norm, so MIN_NORM must reject ||theta||^2 / min."""
    IB, r = _bias(3, 1.0, 100.0)
    assert bool((r.loss < 1e-10).all())
    assert rejects(IB.MIN_NORM, (r.norm2 / r.min_norm2).numpy())
    IB, small = _bias(3, 1e-5, 300.0)  # the claim's case passes on the same data
    assert IB.MIN_NORM((small.norm2 / small.min_norm2).numpy())


def test_bias_spurious_and_convergence_reject_untrained_networks():
    """Bias/spurious-002 and Bias/converges-001 on a network trained one step (flow time 0.05): it sits near the
    zero network, neither at the affine fit (AT_OLS rejects final loss / OLS loss on 002's data) nor at zero loss
    (ZERO_LOSS rejects the final loss on 001's data)."""
    IB, r2 = _bias(2, 1e-5, 0.05)
    assert rejects(IB.AT_OLS, (r2.loss / r2.ols).numpy())
    IB, r1 = _bias(1, 1e-5, 0.05)
    assert rejects(IB.ZERO_LOSS, r1.loss.numpy())


def test_pl_final_constant_rejects_an_untrained_network():
    """PL/final-local-pl-003: the PL ratio equals (2/n) min_k |y_k| ||x_k|| only at the balanced interpolator; after
    one step from the small scales (no interpolator reached) final_mu is far from it and the chapter's criterion
    final_local_pl(target) must reject it."""
    from shallowflow.experiments.synthesis import pl_conditioning as PC
    from shallowflow.experiments.synthesis.sources import SOURCES

    P = validate(dict(profile="custom", sources=[3], width=6, scales=[0.001, 0.01], seeds=[0, 1], lr=0.005, time=0.005),
                 PC.SCHEMA, PC.RULES)
    r = PC.run_pl(P).results["003"]
    assert bool((r.loss[-1] > 1e-10).all())  # the null is what it says: nothing fitted
    target = PC.local_pl_orthogonal(SOURCES["003"].dataset())
    assert rejects(PC.final_local_pl(target), PC.final_mu(r).numpy())


@pytest.fixture(scope="module")
def plateaus():
    from shallowflow.experiments.synthesis import plateau as PLA

    P = validate(dict(profile="custom", sources=[3], width=6, init_scales=[1e-3, 1e-5, 1e-7], seeds=[0], lr=0.05,
                      sigmoid_sources=[3], drop=0.5, horizon=3.0, level=0.95), PLA.SCHEMA, PLA.RULES)
    return PLA, PLA.run_plateaus(P)


def test_plateau_slopes_reject_the_other_activations_network(plateaus):
    """Plateau/tanh-003, Plateau/sigmoid-003 (and relu-003, the evidence of 003-constant-off-orthogonal): the slope's interval over a
    prediction, measured on the other activation's network (on 003's data ReLU's rate ||D+|| and tanh's linearised
    rate sigma'(0) ||v|| differ by 11%): a tanh plateau read against ReLU's prediction, and a ReLU plateau against
    tanh's, must fail BAND with the whole interval outside it; each against its own prediction passes.  The same for
    Plateau/sigmoid-003 against tanh (sigmoid'(0) = 1/4, tanh'(0) = 1)."""
    PLA, run = plateaus
    for key in ("003",):
        relu, tanh = run.fits[key, "relu"], run.fits[key, "tanh"]
        assert abs(relu.predicted / tanh.predicted - 1) > 0.1  # the two claims differ on these data
        for false in (PLA.interval_over(tanh, relu.predicted), PLA.interval_over(relu, tanh.predicted)):
            assert rejects(PLA.BAND, false)
            assert min(false) > 1.05 or max(false) < 0.95  # rejected for where the interval lies, not for its width
        assert PLA.BAND(PLA.interval_over(tanh, tanh.predicted)) and PLA.BAND(PLA.interval_over(relu, relu.predicted))
    # Plateau/sigmoid-003: sigmoid's linearised rate sigma'(0) ||v|| has sigma'(0) = 1/4, tanh's has 1
    sig, tanh = run.fits["003", "sigmoid"], run.fits["003", "tanh"]
    for false in (PLA.interval_over(sig, tanh.predicted), PLA.interval_over(tanh, sig.predicted)):
        assert rejects(PLA.BAND, false) and (min(false) > 1.05 or max(false) < 0.95)
    assert PLA.BAND(PLA.interval_over(sig, sig.predicted))


def test_bias_min_norm_exists_rejects_data_without_an_interpolator():
    """Bias/min-norm-exists-002's false case: 002's data with two points at the same x and opposite labels, which no
    network interpolates. The chapter's measurement (the relative least-squares residual of the linear program's
    neurons) is finite and far from 0 there, so INTERPOLABLE rejects it, and the program itself is infeasible (its
    minimum norm is inf); on 002's own data the residual is 0 to rounding."""
    from shallowflow.engine import theory
    from shallowflow.experiments.synthesis import implicit_bias as ex
    from shallowflow.experiments.synthesis.sources import chosen

    data = chosen([2])[0].dataset()
    X, y = data.X.cpu().clone(), data.y.cpu().clone()
    assert ex.INTERPOLABLE([theory.interpolation_residual_1d(X, y)])
    X[1], y[1] = X[0], -y[0]
    false_case = theory.interpolation_residual_1d(X, y)
    assert rejects(ex.INTERPOLABLE, [false_case]) and false_case > 0.1
    assert theory.min_squared_norm_1d(X, y) == math.inf


def _tiny_plateaus(sources, scales=(1e-3, 1e-5, 1e-7)):
    """The chapter's experiment on the data of ``sources``, tiny: m = 6, one seed, three scales (or ``scales``)."""
    from shallowflow.experiments.synthesis import plateau as PLA

    P = validate(dict(profile="custom", sources=list(sources), width=6, init_scales=list(scales), seeds=[0],
                      lr=0.05, sigmoid_sources=[3], drop=0.5, horizon=3.0, level=0.95), PLA.SCHEMA, PLA.RULES)
    return PLA, PLA.run_plateaus(P)


@pytest.fixture(scope="module")
def plateaus_000_001():
    """000's and 001's data (non-orthogonal), at five scales (1e-2 .. 1e-7: the trend checks compare two halves of
    at least three scales each)."""
    return _tiny_plateaus([0, 1], [1e-2, 1e-3, 1e-4, 1e-5, 1e-7])


def test_plateau_slopes_on_000_and_001_reject_the_other_activations_network(plateaus_000_001):
    """Plateau/relu-000, Plateau/relu-001, Plateau/tanh-000, Plateau/tanh-001: the slope's interval over a prediction,
    measured on the other activation's network: on these data ReLU's rate g* (002's function G) and tanh's linearised
    rate sigma'(0) ||v|| differ by 20% or more, so a tanh plateau read against ReLU's prediction, and a ReLU plateau
    against tanh's, must fail BAND with the whole interval outside it (rejected for where it lies, not for its
    width); tanh against its own prediction passes on the same run."""
    PLA, run = plateaus_000_001
    for key in ("000", "001"):
        relu, tanh = run.fits[key, "relu"], run.fits[key, "tanh"]
        assert abs(relu.predicted / tanh.predicted - 1) > 0.2  # the two claims differ on these data
        for false in (PLA.interval_over(tanh, relu.predicted), PLA.interval_over(relu, tanh.predicted)):
            assert rejects(PLA.BAND, false)
            assert min(false) > 1.05 or max(false) < 0.95
        assert PLA.BAND(PLA.interval_over(tanh, tanh.predicted))


def test_plateau_trend_on_001_rejects_the_other_activations_network(plateaus_000_001):
    """Plateau/relu-001-trend: how the slope approaches ReLU's predicted 1/g* as lambda decreases (plateau.approach
    over the two halves of the scales, 001's data, m = 6, one seed, scales 1e-2 .. 1e-7) on the tanh network, whose
    slope tends to its own linearised constant (20% below ReLU's), not to 1/g*: rejected. ReLU's own plateau on the
    same data passes."""
    PLA, run = plateaus_000_001
    relu, tanh = run.fits["001", "relu"], run.fits["001", "tanh"]
    v = PLA.approach(tanh, relu.predicted)
    assert math.isfinite(v) and rejects(PLA.TREND, [v])
    assert PLA.TREND([PLA.approach(relu, relu.predicted)])


def test_plateau_trend_on_000_rejects_the_other_activations_network(plateaus_000_001):
    """Plateau/relu-000-trend: the same measurement (plateau.approach, tanh's fit against ReLU's predicted 1/g*) on
    000's data, where 'the slope tends to 1/g*' is false for tanh (its slope is 1.6 times 1/g* at every scale).  A
    finding of the controls round, fixed: the old measurement (plateau.trend_towards, any drift towards the
    prediction) passed it, since tanh's slope drifts 0.4% towards 1/g* while staying 60% above it; approach also asks
    that the smaller half come within BAND's 5%, as a limit reached would."""
    PLA, run = plateaus_000_001
    relu, tanh = run.fits["000", "relu"], run.fits["000", "tanh"]
    assert PLA.TREND([PLA.trend_towards(tanh, relu.predicted)])  # what the old reading passed
    v = PLA.approach(tanh, relu.predicted)
    assert math.isfinite(v)
    assert rejects(PLA.TREND, [v])


def test_plateau_trend_on_001_rejects_the_other_datas_plateau(plateaus_000_001):
    """Plateau/relu-001-trend on another data's plateau: the ReLU fit on 000's data against 001's predicted 1/g*
    (plateau.approach), where 'the slope tends to 001's 1/g*' is false (it tends to 000's, 6 times larger).  A
    finding of the controls round, fixed as for 000: its slope falls as lambda decreases, so it moved towards any
    prediction below it, and the old reading passed."""
    PLA, run = plateaus_000_001
    v = PLA.approach(run.fits["000", "relu"], run.fits["001", "relu"].predicted)
    assert math.isfinite(v)
    assert rejects(PLA.TREND, [v])


def test_pl_not_global_rejects_a_sigmoid_network_at_the_origin():
    """PL/not-global: the exponent of mu_0 in the scale between two small scales (pl_quantities and
    near_zero_exponent, 002's data, the chapter's balanced initialisation at scales 1e-3 and 1e-2, two seeds) for a
    sigmoid network, where the claim is false: sigma(0) = 1/2, so on data whose labels do not sum to 0 the gradient
    in a does not vanish at theta = 0 (0 is not a stationary point) and mu_0 stays of order 1 (exponent ~ 0).
    The ReLU network of the chapter passes on the same draw."""
    from shallowflow.engine import init
    from shallowflow.engine.models import Network
    from shallowflow.experiments.synthesis import pl_conditioning as PC
    from shallowflow.experiments.synthesis.sources import SOURCES

    data = SOURCES["002"].dataset()
    assert abs(float(data.y.sum())) > 0.5
    scales, seeds = [1e-3, 1e-2], [0, 1]
    rs = [sc for sc in scales for _ in seeds]
    p0 = init.balanced([s for _ in scales for s in seeds], 10, data.d, [sc / math.sqrt(data.d) for sc in rs],
                       device="cpu")

    def exponent(act):
        q = PC.pl_quantities(Network(act), p0, data.X.cpu(), data.y.cpu())
        r = PC.PLResult("002", scales, [0], q["mu"][None], q["kappa"][None], q["kappa_max"][None], q["loss"][None],
                        torch.tensor(rs, dtype=torch.float64), torch.ones(len(rs), dtype=torch.bool))
        return PC.near_zero_exponent(r)

    assert rejects(PC.NOT_GLOBAL, exponent("sigmoid").numpy())
    assert PC.NOT_GLOBAL(exponent("relu").numpy())


def test_plateau_log_linear_rejects_mean_field_scales():
    """Plateau/log-linear: the R^2 of the plateau's fit against ln(1/lambda) (run_plateaus' fits, 002's data, m = 6,
    the chapter's step and drop) over the scales 1, 0.3, 0.1 instead of small ones: the law 'a plateau proportional
    to -ln(lambda)' is stated for small initialisations (lambda < lambda*, 000 line 1628), and at these scales the
    escape is not linear in ln(1/lambda) (R^2 0.56 for ReLU, 0.004 for tanh)."""
    from shallowflow.experiments.synthesis import plateau as PLA

    P = validate(dict(profile="custom", sources=[2], width=6, init_scales=[1.0, 0.3, 0.1], seeds=[0], lr=0.05,
                      sigmoid_sources=[3], drop=0.5, horizon=3.0, level=0.95), PLA.SCHEMA, PLA.RULES)
    run = PLA.run_plateaus(P)
    assert rejects(PLA.LOG_LINEAR, [f.fit["r2"] for f in run.fits.values()])


@pytest.fixture(scope="module")
def plateaus_002_004():
    """002's and 004's data."""
    return _tiny_plateaus([2, 4])


def test_plateau_slopes_on_002_and_004_reject_the_other_datas_plateau(plateaus_002_004):
    """Plateau/relu-002, Plateau/tanh-002, Plateau/relu-004, Plateau/tanh-004: on these data ReLU's rate g* and
    tanh's linearised rate coincide, so the other activation gives no false case; the other dataset does: 002's
    prediction is 1.42 and 004's 1.01, and each network's plateau on 004's data read against 002's prediction (and on
    002's against 004's) must fail BAND with the whole interval outside it; each against its own passes."""
    PLA, run = plateaus_002_004
    for act in ("relu", "tanh"):
        a, b = run.fits["002", act], run.fits["004", act]
        assert abs(a.predicted / b.predicted - 1) > 0.2  # the two claims differ
        for false in (PLA.interval_over(b, a.predicted), PLA.interval_over(a, b.predicted)):
            assert rejects(PLA.BAND, false)
            assert min(false) > 1.05 or max(false) < 0.95
        assert PLA.BAND(PLA.interval_over(a, a.predicted)) and PLA.BAND(PLA.interval_over(b, b.predicted))


def test_plateau_tanh_as_relu_rejects_mean_field_scales(plateaus):
    """Plateau/tanh-as-relu-orthogonal (000's Conjecture 2 on orthogonal data: tanh's and ReLU's first plateaus both
    grow linearly in ln(1/lambda), PLA.rising_r2 of the tanh then ReLU fits on 003's data, each above
    PLA.TANH_AS_RELU): the same reading over the scales 1, 0.3, 0.1 on the same orthogonal data, where the law is not
    stated (000 line 1628: lambda < lambda*) and the escape is not linear in ln(1/lambda), must fail; at the small
    scales of the ``plateaus`` fixture it passes (R^2 0.83 for tanh and 0.93 for ReLU here; no sigmoid run: 001's
    data are not among the sources)."""
    from shallowflow.experiments.synthesis import plateau as PLA

    P = validate(dict(profile="custom", sources=[3], width=6, init_scales=[1.0, 0.3, 0.1], seeds=[0], lr=0.05,
                      sigmoid_sources=[1], drop=0.5, horizon=3.0, level=0.95), PLA.SCHEMA, PLA.RULES)
    run = PLA.run_plateaus(P)
    false = PLA.rising_r2([run.fits["003", "tanh"], run.fits["003", "relu"]])
    assert rejects(PLA.TANH_AS_RELU, false)
    _, small = plateaus
    assert PLA.TANH_AS_RELU(PLA.rising_r2([small.fits["003", "tanh"], small.fits["003", "relu"]]))
