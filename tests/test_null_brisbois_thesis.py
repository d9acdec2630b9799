"""000, null scenarios: each comparative check's criterion, fed the chapter's own measurement of a network that did
not learn (a few GD steps from the initialisation, or its initial neurons), must FAIL.  A check that passed here
could not tell learning from no learning.  Tiny sizes: the whole file runs in seconds."""
from types import SimpleNamespace

import numpy as np
import torch

from shallowflow import data as D
from shallowflow import init, train, verdicts
from shallowflow.models import Network
from shallowflow.experiments.brisbois_thesis import multidimensional as MD
from shallowflow.experiments.brisbois_thesis import s_curves as S
from shallowflow.experiments.brisbois_thesis import ten_point_data as TP
from shallowflow.experiments.brisbois_thesis import toy_reproduction as X
from shallowflow.experiments.brisbois_thesis import common as Cm
from shallowflow.experiments.brisbois_thesis import theory as T


def _fails(criterion, measured) -> bool:
    return not criterion(np.atleast_1d(np.asarray(measured, dtype=float)))


def test_criteria_are_callable_as_the_notebooks_use_them():
    # the same criterion objects pass on what they should (a sanity check that _fails reads them right)
    assert not _fails(MD.TWO_COMPONENTS, [0.995, 1.0])
    assert not _fails(S.GOOD_FIT, [0.99])
    assert not _fails(TP.LN_LAMBDA, [0.999])


def test_fig3_33_two_components_fails_on_an_untrained_network():
    """Fig3.33/two-components: the final weights of a 10-step run (still the isotropic initial draw) do not lie in
    two principal directions."""
    P = SimpleNamespace(width=40, steps=10, lr=1e-3, stop_below=0.0, goal=1e-5)
    res = MD._train("relu", [D.brisbois_multid()], 1e-6, [0, 1], P, "orthogonal")
    assert _fails(MD.TWO_COMPONENTS, MD.two_components(res).numpy())


def test_fig3_18_s_curve_fit_fails_on_initial_neurons():
    """Fig3.18/*-s-curve: the least-squares two-sigmoid fit of neurons at initialisation (random directions, equal
    norms) is not good: the criterion must fail."""
    for form in ("sigmoid", "tanh"):
        W = init.balanced([0], 100, 2, 1.0).W[0].numpy()
        fit = S.fit_scurve(W, form, -5.0, refine=0)
        assert _fails(S.GOOD_FIT, [fit.lsq.r2]), (form, fit.lsq.r2)


def test_ln_lambda_fails_without_a_plateau_law():
    """Figs 3.30 / C.20: untrained runs (no plateau end), a plateau that does not depend on lambda, and one that
    shortens as lambda shrinks (a straight line of the wrong sign) all fail the criterion."""
    scales = [1e-6, 1e-4, 1e-2]
    ds = D.brisbois_nonorthogonal("1.3.2")
    p = init.balanced([0, 0, 0], 20, ds.d, scales)
    tr = train.gradient_descent(p, ds, Network("relu"), steps=50, lr=1e-3, loss="mean")
    assert _fails(TP.LN_LAMBDA, [TP.ln_lambda_r2(scales, TP.plateau_end(tr).tolist())])
    assert _fails(TP.LN_LAMBDA, [TP.ln_lambda_r2(scales, [5000, 5000, 5000])])
    ln = np.log(1 / np.array(scales))
    assert _fails(TP.LN_LAMBDA, [TP.ln_lambda_r2(scales, (20000 - 1000 * ln).tolist())])
    assert not _fails(TP.LN_LAMBDA, [TP.ln_lambda_r2(scales, (1000 * ln).tolist())])


def test_t1_timing_fails_on_an_untrained_network():
    """T1/dataset-1.1.0: measured / predicted fit epochs within [0.8, 1.1]; a run too short to fit either label has
    no fit epoch (-1), and the ratio the chapter forms fails."""
    data = D.get("brisbois-orthogonal", device="cpu")
    scale = 1e-6 / np.sqrt(20)
    ens = Cm.train_grid(data, ["relu"], 20, Cm.combos([scale], [0]), 100, snapshots=range(0, 101, 10))["relu"]
    fits = Cm.fit_epochs(ens.traj, data, "relu").numpy()
    pred = T.phase_epochs(data, scale, 1e-3, "mean")
    assert _fails(X.T1_RATIO, np.concatenate([fits[:, 1] / pred[0], fits[:, 0] / pred[1]]))


def test_fig2_7_typical_curve_share_fails_on_untrained_runs():
    """Fig2.7/*: the share of runs whose curve shows the behaviour (lower end of its Wilson interval against one
    half).  Runs of 100 epochs never reach L < 1e-6: no run shows it, and the typical-curve criterion fails; a
    single run showing it cannot pass either (one run does not make a typical curve)."""
    data = D.get("brisbois-orthogonal", device="cpu")
    ens = Cm.train_grid(data, ["relu"], 20, Cm.combos([1e-6 / np.sqrt(20)], [0, 1, 2, 3]), 100)["relu"]
    e6 = Cm.first_epoch_below(ens.traj, 1e-6)
    crit = verdicts.below(20_000, strict=False)
    flags = [crit(np.array([v])) for v in np.where(e6 < 0, np.inf, e6).astype(float)]
    assert not any(flags)
    assert _fails(Cm.TYPICAL, [Cm.typical_share(flags, 0.95)[0]])
    assert _fails(Cm.TYPICAL, [Cm.typical_share([True], 0.95)[0]])
    assert not _fails(Cm.TYPICAL, [Cm.typical_share([True] * 6, 0.95)[0]])


def test_fig3_11_rich_constant_fails_on_untrained_runs():
    """Fig3.11/*-rich-constant: ||theta*|| constant over the rich lambda.  After 50 epochs the norms are still the
    initial ones, proportional to lambda: the ratio is about 100 and the criterion fails."""
    from shallowflow.experiments.brisbois_thesis import balancedness_complexity as B
    data = D.get("brisbois-orthogonal", device="cpu")
    for act in ("relu", "tanh"):
        e = Cm.train_grid(data, [act], 20, Cm.combos([1e-4, 1e-2], [0]), 50)[act]
        assert _fails(B.RICH_CONSTANT, [B.rich_constant_ratio(B.final_norms(e))])
