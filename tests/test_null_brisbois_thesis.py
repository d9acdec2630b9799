"""000, null scenarios: each comparative check's criterion, fed the chapter's own measurement of a network that did
not learn (a few GD steps from the initialisation, or its initial neurons), must FAIL.  A check that passed here
could not tell learning from no learning.  Tiny sizes: the whole file runs in seconds."""
from types import SimpleNamespace

import numpy as np
import torch

from shallowflow.engine import data as D
from shallowflow.engine import init, train
from shallowflow import verdicts
from shallowflow.engine.models import Network
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


def test_fig3_35_36_s_curve_fails_on_an_untrained_network():
    """Fig3.35/s-curve, Fig3.36/s-curve: the final neurons of a 10-step run on the multidimensional orthogonal data
    (still the isotropic initial draw), projected on their two principal components, are no S-curve."""
    P = SimpleNamespace(width=100, steps=10, lr=1e-3, stop_below=0.0, goal=1e-5)
    for act in ("sigmoid", "tanh"):
        res = MD._train(act, [D.brisbois_multid()], 1.0, [0, 1], P, "orthogonal")
        r2 = MD.scurve_r2(res, act).numpy()
        assert _fails(MD.SCURVE, r2), (act, r2)


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


# -- activations, label-variants, instability-transition, width-grid, quasi-orthogonal --------------------------------
# "untrained": the chapter's own package function run with a step of 1e-12 (the trainer refuses lr = 0), so the
# parameters stay at their initial draw; a check whose measure comes from such a run must fail.
UNTRAINED_LR = 1e-12
NOT_LEARNED = "nan: the run never reached L < 0.01"


def test_activations_lazy_checks_fail_on_an_untrained_network():
    """Fig3.2/{act}-no-plateau (the detector finds the flat curve a plateau), Fig3.2/{act}-fast and Fig3.6 (the lazy
    ReLU network's orientations and movement): on an untrained lambda = 1 network the orientations are the initial
    ones and nothing moves, so the Fig3.6 measures pass unless they are read on runs that reached L < 0.01 only
    (Cm.converged_only, as the chapter now does); -fast divided T = -1 by T = -1 (or by a positive T: a negative ratio)."""
    from shallowflow.experiments.brisbois_thesis import activations as A
    data = D.get("brisbois-orthogonal", device="cpu")
    e = Cm.train_grid(data, ["relu"], 20, Cm.combos([1e-2, 1.0], [0, 1], lrs=(UNTRAINED_LR,)), 200,
                      snapshots=range(0, 201, 50))["relu"]
    tab = Cm.plateau_table(e)
    lz, rich = e.runs(scale=1.0), e.runs(scale=1e-2)
    T_lz, T_rich = [tab[r]["T"] for r in lz], [tab[r]["T"] for r in rich]
    assert _fails(verdicts.below(0, strict=False), [tab[r]["count"] for r in lz])  # Fig3.2/-no-plateau
    Lz = e.traj.loss[lz]
    incr = torch.where(Lz[:, :-1] > 1e-16, (Lz[:, 1:] - Lz[:, :-1]) / Lz[:, :-1].clamp_min(1e-300),
                       torch.zeros_like(Lz[:, 1:])).amax(1)
    assert not _fails(verdicts.below(0.0, strict=False), incr)  # a flat (untrained) curve never rises: monotone held
    assert _fails(verdicts.below(0.0, strict=False), Cm.converged_only(incr, T_lz))  # Fig3.2/-monotone
    assert _fails(verdicts.below(0.2), Cm.converged_only(T_lz, T_lz) / Cm.converged_only(T_rich, T_rich))  # -fast
    # the old reading, against a rich run that did converge: -1 / T < 0.2 passed
    assert not _fails(verdicts.below(0.2), np.array(T_lz, float) / np.array([5000.0, 5000.0]))
    assert _fails(verdicts.below(0.2), Cm.converged_only(T_lz, T_lz) / np.array([5000.0, 5000.0]))
    move = [A.relative_movement(e, r) for r in lz]
    v = A.cluster_variances(e, data, lz[0], 200)
    ratios = [v["plus"] / v["plus_init"], v["minus"] / v["minus_init"]]
    # the ungated measures pass on the initial draw: the reason for the gate
    assert not _fails(verdicts.below(0.2), move) and not _fails(verdicts.within(0.8, 1.25), ratios)
    assert _fails(verdicts.below(0.2), Cm.converged_only(move, T_lz))  # Fig3.6/small-movement
    assert _fails(verdicts.within(0.8, 1.25), Cm.converged_only(ratios, [T_lz[0]] * 2))  # Fig3.6/random-orientations


def test_label_variants_checks_fail_on_untrained_networks():
    """DS1.1.1/mirror and /same-curves (fit epochs and T of -1 on both datasets made ratios of 1), Fig3.14/
    relu-no-intermediate and Fig3.17/sigmoid-single (the flat curve is one plateau), Fig3.15/relu-two-directions and
    Fig3.16/two-directions (a random draw has many distinct directions): all passed on untrained networks before the
    chapter read them on runs that reached L < 0.01 only."""
    from shallowflow.experiments.brisbois_thesis import label_variants as LV
    P = SimpleNamespace(width=10, lr=UNTRAINED_LR, steps=500, seeds=[0, 1, 2, 3], switch_scale=1e-4,
                        rich_scales=[1e-6, 1e-3], factor=3.0, fig316_scale=1e-6, fit_every=100)
    res = LV.run(P)
    sw, Dd = res["switch"], res["data"]
    f0, f1 = LV.fit_epoch_table(sw["1.1.0"], Dd["1.1.0"]), LV.fit_epoch_table(sw["1.1.1"], Dd["1.1.1"])
    T0_, T1_ = Cm.first_epoch_below(sw["1.1.0"].traj, 0.01), Cm.first_epoch_below(sw["1.1.1"].traj, 0.01)
    near_one = verdicts.within(0.9, 1.1)
    assert not _fails(near_one, [f1[:, 1].mean() / f0[:, 1].mean(), T1_.mean() / T0_.mean()])  # the old reading passed
    assert _fails(near_one, [Cm.converged_only(f1[:, k], f1[:, k]).mean() / Cm.converged_only(f0[:, k], f0[:, k]).mean()
                             for k in (1, 0)])  # DS1.1.1/mirror
    assert _fails(near_one, Cm.converged_only(T1_, T1_).mean() / Cm.converged_only(T0_, T0_).mean())  # /same-curves
    assert _fails(verdicts.above(0.0, strict=True), f1[:, 0] - f1[:, 1])  # DS1.1.1/negative-first
    relu = res["same"]["relu"]
    tabs = Cm.plateau_table(relu)
    Ts = [t["T"] for t in tabs]
    assert _fails(verdicts.below(1, strict=False), Cm.converged_only([t["count"] for t in tabs], Ts))
    dirs = LV.directions(relu.traj.final).numpy()
    assert not _fails(verdicts.above(2), dirs)  # a random draw has more than two directions
    assert _fails(verdicts.above(2), Cm.converged_only(dirs, Ts))  # Fig3.15/relu-two-directions
    sc = res["scaled"]
    assert _fails(verdicts.above(2), Cm.converged_only(LV.directions(sc.traj.final).numpy(),
                                                        Cm.first_epoch_below(sc.traj, 0.01)))  # Fig3.16/two-directions
    sg = res["same"]["sigmoid"]
    Wn = sg.traj.final.W.flatten(1).norm(dim=1)
    assert not _fails(verdicts.below(1e-2), Wn)  # untrained hidden weights stay small: small-w held
    assert _fails(verdicts.below(1e-2), Cm.converged_only(Wn, Cm.first_epoch_below(sg.traj, 0.01)))  # Fig3.15/sigmoid-small-w
    at = Cm.plateau_table(res["alt"]["sigmoid"])
    assert _fails(verdicts.within(1, 1), Cm.converged_only([t["count"] for t in at], [t["T"] for t in at]))
    assert _fails(verdicts.within(7, 13), LV.fit_epoch_table(res["alt"]["relu"], Dd["1.1.4"]).astype(float)[:, 0]
                  / LV.fit_epoch_table(res["alt"]["relu"], Dd["1.1.4"]).astype(float)[:, 1])  # Fig3.17/relu-ratio


def test_instability_transition_trends_fail_on_untrained_networks():
    """Fig3.12 / C.4 / C.6 plateau-shrinks and Fig3.13 / C.5 / C.7 (final-)variance-grows: untrained runs have
    equal plateau lengths and equal orientation variances at every scale (the same seed's draw, rescaled), so
    'non-increasing' held, and the variance trend was 1 or 0 by rounding; read on runs that reached L < 0.01 only
    (the chapter's series), both fail."""
    from shallowflow.experiments.brisbois_thesis import instability_transition as X
    P = SimpleNamespace(width=10, steps=200, seeds=[0, 1], relu_scales=[1e-6, 1e-3, 1.0], sigmoid_scales=[1e-6, 1.0],
                        tanh_scales=[1e-6, 1.0], c8_scales=[1e-6, 1.0], lr=UNTRAINED_LR)
    tr = X.run_transition(P)
    for act, e in tr["ens"].items():
        tab, ea = tr["tables"][act], X.plateau_end(tr["tables"][act])
        scales = sorted({m["scale"] for m in e.meta})
        for s in tr["seeds"]:
            rs = [e.runs(scale=lam, seed=s)[0] for lam in scales]
            T_ = [tab[r]["T"] for r in rs]
            lengths = [tab[r]["intermediate"] if act == "relu" else sum(b - a for a, b in tab[r]["plateaus"]) for r in rs]
            assert np.all(np.diff(lengths) <= 0)  # the ungated reading held
            assert not np.all(np.diff(Cm.converged_only(lengths, T_)) <= 0)
            var = Cm.converged_only([X.plateau_variance(e, tr["data"], r, int(ea[r])) for r in rs], T_)
            final = Cm.converged_only([X.orientation_variance(e, tr["data"], r, P.steps) for r in rs], T_)
            assert _fails(verdicts.within(1, 1), [X.variance_trend(var)]), (act, s)
            assert _fails(verdicts.within(1, 1), [X.variance_trend(final)]), (act, s)


def test_plateau_shrinks_fails_where_nothing_shrinks():
    """Fig3.12 / C.4 / C.6 plateau-shrinks: 'non-increasing' alone held on an all-zero (no plateau at any scale) or
    constant series; the criterion now also asks for a strict net decrease, and fails on an unconverged (nan) run."""
    from shallowflow.experiments.brisbois_thesis import instability_transition as X
    assert not X.plateau_shrinks([0, 0, 0])
    assert not X.plateau_shrinks([5.0, 5.0, 5.0])
    assert not X.plateau_shrinks([5.0, 6.0, 1.0])
    assert not X.plateau_shrinks([5.0, float("nan"), 1.0])
    assert not X.plateau_shrinks([5.0])
    assert X.plateau_shrinks([9.0, 4.0, 4.0, 0.0])


def test_width_grid_fig3_3_fails_without_convergence():
    """Fig3.3/{act}-width needs every T > 0; Fig3.3/{act}-marginal divided spreads of T = -1 (a negative ratio, below
    1: a pass) until marginal_ratio gave nan for a run without T.  Runs of 1000 epochs at alpha = 1e-3 reach
    L < 0.01 at no scale of the grid."""
    from shallowflow.experiments.brisbois_thesis import width_grid as G
    P = SimpleNamespace(widths=[2, 10], lrs=[1e-3], scales=[1e-8, 1e-4, 1e-2], budget=1, max_epochs=1000, fig33_scale=1e-8)
    rows = G.run_grid(P)
    for act in T.ACTIVATIONS:
        Tm = [r["T"] for r in sorted(G.select(rows, act=act, scale=1e-8), key=lambda r: r["width"])]
        small, large = G.select(rows, act=act, scale=1e-8, width=10)[0]["T"], G.select(rows, act=act, scale=1e-2, width=10)[0]["T"]
        assert not np.all(np.asarray(Tm) > 0)
        old = (max(Tm) / min(Tm)) / (small / max(large, 1))
        assert not _fails(verdicts.below(1.0), [old])  # the old reading passed
        assert _fails(verdicts.below(1.0), [G.marginal_ratio(Tm, small, large)])
    assert _fails(verdicts.below(0, strict=False), [sum(1 for r in G.select(rows, act="relu") if r["scale"] <= 1e-4 and r["T"] < 0)])


def test_quasi_orthogonal_checks_fail_on_an_untrained_network():
    """Figs 3.25 / 3.26: every criterion of the chapter on the chapter's measure of untrained runs.  The count of
    neurons of one sign on the other sign's direction (both-signs-both-directions, >= 1) can reach 1 by chance on a
    random draw: it is read on runs that reached L < 0.01 only."""
    from shallowflow.experiments.brisbois_thesis import quasi_orthogonal as Q
    P = SimpleNamespace(width=20, init_scale=1e-10, lr=UNTRAINED_LR, steps=1000, seeds=[0, 1, 2, 3], deltas=[0.1],
                        delta_a=1.0, delta_b=10.0, snap_every=100)
    run = Q.run_quasi(P)
    a, b = Q.measure(run, Q.entry(run, "a")), Q.measure(run, Q.entry(run, "b"))
    sw = Q.measure(run, Q.entry(run, "sweep", -0.1))
    assert _fails(verdicts.below(0.02), a["dev_plus"]) and _fails(verdicts.below(0.02), a["dev_minus"])
    assert _fails(verdicts.within(2, 2), a["plateaus"]) and _fails(verdicts.within(2, 2), sw["plateaus"])
    assert _fails(verdicts.below(0.02), torch.maximum(sw["dev_plus"], sw["dev_minus"]))
    assert _fails(verdicts.above(1), Cm.converged_only(a["cross"], a["T"]))
    neg_first = (b["neg"] - b["pos"]).double()
    assert _fails(verdicts.below(0.0), neg_first[(b["pos"] > 0) & (b["neg"] > 0)])  # no run fitted either: no evidence
    small = float(b["data"].x1d.min())
    assert _fails(verdicts.below(0.05), (b["k_minus"] - small).abs().nan_to_num(0.0).amax(1))
    assert _fails(verdicts.below(0.0), b["k_plus"].nan_to_num(-1e9).amax(1))
    assert _fails(verdicts.above(0.1), b["later_neg"]) and _fails(verdicts.above(3), b["plateaus"])


def test_figs_3_37_to_3_39_spread_fails_on_an_untrained_network():
    """Figs 3.37-3.39 (*/spread, EVR_1 + EVR_2 < 0.99): the weights of a 10-step run are the isotropic initial draw,
    whose variance is spread over every component; ungated that passed.  The spread is read on runs that reached the
    loss goal only, so here it is nan and the criterion fails."""
    P = SimpleNamespace(width=40, steps=10, lr=1e-3, stop_below=0.0, goal=1e-8)
    ds = [D.brisbois_multid_nonorthogonal(seed=s, teacher="relu", teacher_std=0.1) for s in (0, 1)]
    for act in MD.ACTS:
        res = MD._train(act, ds, 1e-6, [0, 0], P, "non-orthogonal")
        assert not _fails(MD.SPREAD, MD.two_components(res).numpy())  # the ungated reading passed
        assert _fails(MD.SPREAD, MD.spread(res).numpy()), act


def test_fig3_4_alignment_tighter_fails_on_untrained_and_chance_orderings():
    """Fig3.4/alignment-tighter: one seed's ordering of three variances passes by chance one time in six; the check
    is the lower end of the Wilson interval of the share of seeds, above one half.  Untrained runs (alpha 1e-12:
    the initial draw, the same directions at every lambda) order nothing; orderings drawn at random hold in about a
    sixth of the seeds; both fail the chapter's criterion."""
    from shallowflow.engine import metrics
    from shallowflow.experiments.brisbois_thesis import activations as A
    P = SimpleNamespace(width=20, lr=UNTRAINED_LR, steps=200, rich_scales=[1e-6, 1e-2], lazy_scale=1.0, seeds=[0, 1],
                        snap_every=50, align_seeds=[0, 1, 2, 3, 4, 5])
    res = A.run(P)
    align = A.alignment_order(P, res)
    assert len(align["seeds"]) > len(res.seeds)  # the extra seeds were trained and read
    assert _fails(Cm.TYPICAL, [metrics.typical_share(align["flags"])[0]])
    rng = np.random.default_rng(0)
    v = rng.random((60, 3))
    chance = (v[:, 0] < v[:, 1]) & (v[:, 1] < v[:, 2])
    assert _fails(Cm.TYPICAL, [metrics.typical_share(chance)[0]])
    assert not _fails(Cm.TYPICAL, [metrics.typical_share(np.ones(6, dtype=bool))[0]])  # six of six seeds decide


def test_c9_no_convergence_counts_only_beside_training_that_works():
    """C.9/no-convergence ("no convergence at lambda = 100", <= 0 runs reaching L < 0.01): an untrained network does
    not converge either.  With 1000 epochs no (m, alpha) reaches L < 0.01 even at lambda = 1e-4, so no lambda = 100
    run is evidence: the gated count is nan and fails, where the ungated count (0) passed."""
    from shallowflow.experiments.brisbois_thesis import width_grid as G
    P = SimpleNamespace(widths=[10], lrs=[1e-3], scales=[1e-4, 100.0], budget=1, max_epochs=1000, fig33_scale=1e-4)
    relu = G.select(G.run_grid(P), act="relu")
    big = [r for r in relu if r["scale"] >= 100 and r["valid"]]
    assert big and not _fails(verdicts.below(0, strict=False), [sum(1 for r in big if r["T"] > 0)])
    n_conv, ev, left = G.no_convergence(relu)
    assert not ev and len(left) == 1
    assert _fails(verdicts.below(0, strict=False), [n_conv])


def test_ln_lambda_per_seed_fails_on_untrained_runs():
    """Figs 3.30 / C.20 as the chapter now measures them (one R^2 per seed): runs of 50 steps (no plateau end) give
    nan for every seed, and a per-seed plateau that does not depend on lambda fails too."""
    scales = [1e-6, 1e-4, 1e-2]
    ds = D.brisbois_nonorthogonal("1.3.2")
    sc, seeds = [s for s in scales for _ in (0, 1)], [d for _ in scales for d in (0, 1)]
    p = init.balanced(seeds, 20, ds.d, sc)
    tr = train.gradient_descent(p, ds, Network("relu"), steps=50, lr=1e-3, loss="mean")
    assert _fails(TP.LN_LAMBDA, TP.ln_lambda_r2_per_seed(sc, seeds, TP.plateau_end(tr).tolist()))
    assert _fails(TP.LN_LAMBDA, TP.ln_lambda_r2_per_seed(sc, seeds, [5000, 7000] * 3))


def test_c15_c17_label_shares_fail_on_untrained_and_reversed_runs():
    """C.15/simultaneous and C.17/positive-first (a share of runs, its Wilson lower end against one half): the
    chapter's label-timing runs cut to 50 epochs fit no label, so no run shows either behaviour and both typical-run
    criteria fail; Tanh runs whose labels are read with the signs swapped (the negative label fitted first) fail
    C.17's; one run showing a behaviour cannot make it typical."""
    P = SimpleNamespace(c=75.0, width_c=30, init_scale=1e-6, lr=1e-4, steps=50, record_every=10, seeds=[0], width=20,
                        widths=[], scales=[], merge_step=10, mid_step=20, label_seeds=[0, 1, 2, 3, 4, 5],
                        sections=["appendix-c"])
    run = S.run_scurves(P)
    for act in S.ACTS:
        pos, neg = S.label_fit_epochs(run["label"][act], run["data"], Network(act))
        assert _fails(S.TYPICAL, [verdicts_low(S.simultaneous_flags(pos, neg))])
        assert _fails(S.TYPICAL, [verdicts_low(S.positive_first_flags(pos, neg))])
    pos = torch.tensor([900, 1000, 1100, 950, 1200, 1000])
    neg = pos // 2  # every run fits its negative label first, at half the positive's epoch
    assert _fails(S.TYPICAL, [verdicts_low(S.positive_first_flags(pos, neg))])
    assert _fails(S.TYPICAL, [verdicts_low(S.simultaneous_flags(pos, neg))])
    assert _fails(S.TYPICAL, [verdicts_low(S.simultaneous_flags(pos[:1], pos[:1]))])
    assert not _fails(S.TYPICAL, [verdicts_low(S.simultaneous_flags(pos, pos + 10))])
    assert not _fails(S.TYPICAL, [verdicts_low(S.positive_first_flags(neg, pos))])


def verdicts_low(flags):
    from shallowflow.engine import metrics
    return metrics.typical_share(flags)[0]


def test_ten_point_typical_seed_shares_fail_on_untrained_and_learning_runs():
    """Figs 3.30 / C.20 as shares of seeds: the chapter's run_law on grid runs of 50 epochs (no plateau end: every
    seed's R^2 is nan) gives no seed with the law, and the typical-seed criterion fails; a Sigmoid that did decrease
    (L(10^6)/L(0) well below 1 for every seed) fails the stuck check's share; one seed cannot make a typical seed."""
    scales, seeds = [1e-6, 1e-4, 1e-2], [0, 1, 2, 3, 4]
    P = SimpleNamespace(lr=1e-3, stop_below=1e-10, width=20, steps=50, scales=scales, seeds=seeds, law_seeds=seeds,
                        fig32_scale=1e-6, sections=["grid"])
    run = {"data": {w: D.brisbois_nonorthogonal(w) for w in TP.DATASETS}, "grid": {}}
    for w in TP.DATASETS:
        for act in TP.ACTS:
            run["grid"][(w, act)] = TP.Ens((w, act), [s for s in scales for _ in seeds], [d for _ in scales for d in seeds],
                                           TP._train(act, run["data"][w], scales, seeds, 20, 50, P))
    law = TP.run_law(P, run)
    for key in (("1.3.2", "relu"), ("1.3.2", "tanh"), ("1.3.1", "relu"), ("1.3.1", "tanh")):
        flags = TP.per_seed_flags(TP.law_r2(law[key]), TP.LN_LAMBDA)
        assert not any(flags)
        assert _fails(TP.TYPICAL, [Cm.typical_share(flags)[0]])
    learned = [0.4, 0.2, 0.05, 0.3, 0.6]
    assert _fails(TP.TYPICAL, [Cm.typical_share(TP.per_seed_flags(learned, TP.STUCK))[0]])
    assert _fails(TP.TYPICAL, [Cm.typical_share(TP.per_seed_flags([0.998], TP.STUCK))[0]])
    assert not _fails(TP.TYPICAL, [Cm.typical_share(TP.per_seed_flags([0.998] * 5, TP.STUCK))[0]])


def test_fig3_7_typical_sigmoid_shares_fail_on_untrained_and_atypical_runs():
    """Fig3.7/one-direction, /simultaneous, /straight and Conj1/one-direction-simultaneous (shares of Sigmoid runs, the
    Wilson lower end against one half): the chapter's fig37_runs on untrained runs (alpha 1e-12: the initial draw,
    random orientations, no label fitted, h = 0 far from the chord through the data) shows none of the behaviours, and
    every share fails; runs fitting the positive label at half the negative's epoch fail simultaneous (and Conj1); one
    run showing all of them cannot make a typical run."""
    from shallowflow.experiments.brisbois_thesis import activations as A
    P = SimpleNamespace(width=20, lr=UNTRAINED_LR, steps=200, rich_scales=[1e-6, 1e-2], lazy_scale=1.0, seeds=[0, 1],
                        snap_every=50, align_seeds=[0], fig37_seeds=[0, 1, 2, 3, 4, 5], fig38_seeds=[0])
    res = A.run(P)
    f = A.fig37_runs(P, res)
    assert f["seeds"] == [0, 1, 2, 3, 4, 5] and f["valid"].all()  # the extra seeds were trained and read
    for key in ("one_dir_flags", "simultaneous_flags", "straight_flags", "both_flags"):
        assert not f[key].any(), key
        assert _fails(A.TYPICAL, [verdicts_low(f[key])]), key
    good = dict(one_dir=np.full(6, 1e-3), ratio=np.ones(6), chord=np.full(6, 0.04))
    assert all(not _fails(A.TYPICAL, [verdicts_low(v)]) for k, v in A.fig37_flags(good).items())
    late = A.fig37_flags(dict(good, ratio=np.full(6, 0.5)))  # the positive label fitted at half the negative's epoch
    assert _fails(A.TYPICAL, [verdicts_low(late["simultaneous_flags"])])
    assert _fails(A.TYPICAL, [verdicts_low(late["both_flags"])])
    one = A.fig37_flags({k: v[:1] for k, v in good.items()})
    assert all(_fails(A.TYPICAL, [verdicts_low(v)]) for v in one.values())


def test_fig3_8_typical_tanh_shares_fail_on_untrained_and_atypical_runs():
    """Fig3.8/positive-first, Fig3.8/straight and Conj2/sequential (shares of Tanh runs, the Wilson lower end against one half): the
    chapter's fig38_runs on untrained runs (alpha 1e-12: random orientations, no label fitted) shows neither behaviour
    and both shares fail; runs fitting both labels at the same epoch, or the negative label first, fail both; runs
    fitting the positive label first but not aligned in one direction fail Conj2/sequential; one run showing both
    cannot make a typical run."""
    from shallowflow.experiments.brisbois_thesis import activations as A
    P = SimpleNamespace(width=20, lr=UNTRAINED_LR, steps=200, rich_scales=[1e-6, 1e-2], lazy_scale=1.0, seeds=[0, 1],
                        snap_every=50, align_seeds=[0], fig37_seeds=[0], fig38_seeds=[0, 1, 2, 3, 4, 5])
    f = A.fig38_runs(P, A.run(P))
    assert f["seeds"] == [0, 1, 2, 3, 4, 5] and f["valid"].all() and f["act"] == "tanh"
    for key in ("one_dir_flags", "positive_first_flags", "sequential_flags", "straight_flags"):
        assert not f[key].any(), key
        assert _fails(A.TYPICAL, [verdicts_low(f[key])]), key
    good = dict(one_dir=np.full(6, 1e-3), gap=np.full(6, 1250.0), chord=np.full(6, 0.01))
    curved = A.fig38_flags(dict(good, chord=np.full(6, 0.5)))  # Fig3.8/straight: a model far from the chord
    assert _fails(A.TYPICAL, [verdicts_low(curved["straight_flags"])])
    assert all(not _fails(A.TYPICAL, [verdicts_low(v)]) for v in A.fig38_flags(good).values())
    for gap in (0.0, -1250.0):  # simultaneous fits (Sigmoid's Fig. 3.7), the negative label first
        bad = A.fig38_flags(dict(good, gap=np.full(6, gap)))
        assert _fails(A.TYPICAL, [verdicts_low(bad["positive_first_flags"])]), gap
        assert _fails(A.TYPICAL, [verdicts_low(bad["sequential_flags"])]), gap
    spread = A.fig38_flags(dict(good, one_dir=np.full(6, 0.5)))  # the positive label first, no single direction
    assert not _fails(A.TYPICAL, [verdicts_low(spread["positive_first_flags"])])
    assert _fails(A.TYPICAL, [verdicts_low(spread["sequential_flags"])])
    one = A.fig38_flags({k: v[:1] for k, v in good.items()})
    assert all(_fails(A.TYPICAL, [verdicts_low(v)]) for v in one.values())
