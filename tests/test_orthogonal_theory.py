"""The 003 lemma machinery: segmented training, closed forms, exact GD identities, certificates."""
import math

import numpy as np
import pytest
import torch

from shallowflow.engine import data as datasets
from shallowflow.engine import train
from shallowflow.engine import monitor
from shallowflow.experiments.orthogonal_inputs import balancedness, implicit_bias, phases
from shallowflow.experiments.orthogonal_inputs import findings as oi_findings
from shallowflow.experiments.orthogonal_inputs import theory as oi_theory
from shallowflow.engine.models import Params


def test_constants_of_ortho_b():
    k = oi_theory.constants(datasets.get("ortho-B", device="cpu"))
    assert k.norm_plus == pytest.approx(math.sqrt(2) / 4)
    assert k.norm_minus == pytest.approx(math.sqrt(0.5) / 4)
    assert k.r == pytest.approx(2.0)
    assert k.min_sq_norm == pytest.approx(2 * (math.sqrt(2) + math.sqrt(0.5)))
    assert k.saddle_loss == pytest.approx(4 / 2 * k.norm_minus ** 2)
    T = oi_theory.phase_times(k, 1e-50, 0.1)
    assert float(T["t2_bound"]) == pytest.approx(1.3 * 50 * math.log(10) / k.norm_plus)
    assert float(T["fact1_start"]) < float(T["fact1_end"])  # eps = 0.1 < (r-1)/(r+3)


def test_segmented_descent_matches_one_call_and_captures():
    ens = oi_theory.make_ensemble("ortho-A", 12, [1e-3, 1e-6], [0, 1], [0.05, 0.1])
    mon = monitor.segmented_descent(ens, 600, 20, 140, capture=torch.tensor([[37, 300]] * ens.runs))
    ref = train.gradient_descent(ens.p0, ens.data, oi_theory.NET, steps=600, lr=ens.lrs, snapshots=[37, 300], record_every=20)
    # bit-identical with the C kernel; the torch engine (no C compiler) agrees to rounding
    same = dict(rtol=1e-12, atol=1e-300)
    assert torch.allclose(mon.final.a, ref.final.a, **same) and torch.allclose(mon.final.W, ref.final.W, **same)
    assert torch.equal(mon.loss_steps, ref.loss_steps)
    assert torch.allclose(mon.loss, ref.loss, **same)
    for r in range(ens.runs):
        assert torch.allclose(mon.state(r, 37).W[0], ref.snap_W[0, r], **same)
        assert torch.allclose(mon.state(r, 300).a[0], ref.snap_a[1, r], **same)


def test_summaries_frozen_runs_and_watch():
    ens = oi_theory.make_ensemble("ortho-A", 12, [1e-2], [0, 1], [0.1])
    thr = torch.full((ens.runs,), 0.5)
    mon = monitor.segmented_descent(ens, 4000, 20, 400, summarise=phases.OrthoSummaries(ens),
                               watch={"cross": ("u_plus", thr)}, stop_below=1e-12)
    S = mon.summaries
    assert S["u_plus"].shape == (ens.runs, 4000 // 20 + 1)
    for r in range(ens.runs):
        it = int(mon.crossings["cross"][r])
        assert it > 0
        i = int(torch.nonzero(mon.summary_steps == it)[0])
        assert float(S["u_plus"][r, i]) >= 0.5 > float(S["u_plus"][r, i - 1])
        W = mon.crossing_states["cross"][r].W[0]
        assert float((W[ens.s_plus[r]] ** 2).sum()) == pytest.approx(float(S["u_plus"][r, i]))
    # a frozen run keeps its last summary
    assert bool((mon.stopped_at < 4000).all())
    last = S["loss"][:, -1]
    assert bool((last < 1e-12).all())


def test_exit_time_interpolation():
    ens = oi_theory.make_ensemble("ortho-A", 4, [1e-3], [0], [0.1])
    mon = monitor.Segmented(ens, 30, 10, torch.tensor([0, 10, 20, 30]), torch.tensor([[1.0, 1e-1, 1e-3, 1e-5]], dtype=torch.float64),
                       torch.tensor([]), {}, ens.p0, torch.tensor([30]), {}, {}, {})
    # ln L is linear in time here: L = 10^-(t / 10): 1e-2 is crossed at t = 1.5 (iteration 15)
    assert float(mon.first_time_below(1e-2)[0]) == pytest.approx(1.5)
    assert float(mon.first_time_below(1e-2, interpolate=False)[0]) == pytest.approx(2.0)
    assert math.isnan(float(mon.first_time_below(1e-9)[0]))


def test_escape_curvature_is_minus_norm_d_minus():
    ens = oi_theory.make_ensemble("ortho-B", 10, [1e-2], [3], [0.05])
    k = ens.k
    # a saddle by hand: every S+ neuron along D+ with sum ||w||^2 = n||D+|| (or one neuron if S+ is empty)
    sp = ens.s_plus[0].clone()
    if not bool(sp.any()):
        sp[0] = True
        ens.s_plus[0] = sp
    u = k.d_plus / k.norm_plus
    share = ens.data.n * k.norm_plus / int(sp.sum())
    W = torch.where(sp[:, None], math.sqrt(share) * u[None, :], torch.zeros(10, ens.data.d, dtype=torch.float64))
    a = torch.where(sp, torch.full((10,), math.sqrt(share), dtype=torch.float64), torch.zeros(10, dtype=torch.float64))
    th = Params(a[None], W[None])
    L, ga, gW = monitor.gradients(th, ens.data.X, ens.data.y)
    assert float(L[0]) == pytest.approx(k.saddle_loss, rel=1e-12)
    assert float(ga.abs().max()) < 1e-12 and float(gW.abs().max()) < 1e-12
    assert phases.escape_curvature(ens, 0, th) == pytest.approx(-k.norm_minus, rel=1e-4)


def test_gd_drift_formula_is_exact_for_one_step():
    ens = oi_theory.make_ensemble("orthogonal-toy", 20, [0.3], [0, 1], [0.05])
    p0 = Params(ens.p0.a.clone(), ens.p0.W.clone())
    p0.a[:, :5] *= 1.3  # unbalanced neurons too: the identity does not need balance
    traj = train.gradient_descent(p0, ens.data, oi_theory.NET, steps=1, lr=ens.lrs, snapshots=[0, 1])
    before, after = traj.at(0), traj.at(1)
    measured = balancedness.exact_step_changes(before, after)
    formula = balancedness.drift_formula(before, ens.data.X, ens.data.y, ens.lrs)
    size = after.a ** 2 + (after.W ** 2).sum(-1)
    assert bool(((measured - formula).abs() <= 1e-12 * formula.abs() + 4 * oi_theory.U * size).all())
    assert float(formula.abs().max()) > 1e-6  # the check is not vacuous


def test_stray_exponents_and_prediction():
    c = datasets.get("ortho-C", device="cpu")
    e = implicit_bias.stray_exponents(c)
    assert e["subset"] == pytest.approx(2 * (1 - math.sqrt(0.74) / math.sqrt(0.83)))
    assert e["single"] == pytest.approx(2 * (1 - 0.7 / math.sqrt(0.83)))
    assert implicit_bias.predicted_stray(c) == (-1, [-0.7, -0.5])
    assert implicit_bias.stray_exponents(datasets.get("ortho-A", device="cpu"))["subset"] == math.inf


def test_lp_and_certificate_match_the_closed_form():
    b = datasets.get("ortho-B", device="cpu")
    k = oi_theory.constants(b)
    lp = oi_theory.variation_norm_lp(b, 500, extra=[k.d_plus.numpy(), -k.d_minus.numpy()])
    cert = implicit_bias.orthonormal_certificate(b, lp["directions"])
    assert lp["value"] == pytest.approx(k.min_sq_norm / 2, rel=1e-9)
    assert cert["lower"] == pytest.approx(k.min_sq_norm / 2, rel=1e-12)
    assert cert["sup_sampled"] <= cert["sup"] + 1e-12
    # without the two key directions the finite LP is strictly worse
    assert oi_theory.variation_norm_lp(b, 500)["value"] > k.min_sq_norm / 2 * (1 + 1e-4)


def test_lemma5_ray_closed_form():
    b = datasets.get("ortho-B", device="cpu")
    ens = oi_theory.make_ensemble("ortho-B", 4, [1e-3], [0], [0.05])
    k = ens.k
    # theta*: one neuron on D+, one on -D-, two zero neurons
    up, um = k.d_plus / k.norm_plus, -k.d_minus / k.norm_minus
    W = torch.zeros(1, 4, b.d, dtype=torch.float64)
    a = torch.zeros(1, 4, dtype=torch.float64)
    W[0, 0], a[0, 0] = math.sqrt(4 * k.norm_plus) * up, math.sqrt(4 * k.norm_plus)
    W[0, 1], a[0, 1] = math.sqrt(4 * k.norm_minus) * um, -math.sqrt(4 * k.norm_minus)
    ens.s_minus[0] = torch.tensor([False, True, False, False])
    ray = implicit_bias.lemma5_ray(ens, Params(a, W), 0.1, grid=2000)
    assert float(ray["rho_star"][0]) == pytest.approx(0.5 * math.sqrt(2 * 4 * k.norm_minus), rel=2e-3)


def test_binding_lambdas_and_step_sizes():
    k = oi_theory.constants(datasets.get("ortho-B", device="cpu"))
    bl = phases.binding_lambdas(k, 0.1)
    assert bl["L4_i"] == pytest.approx(14 * math.log10(k.norm_minus) / 0.1)
    assert bl["L4_ii"] == pytest.approx(-30.1, abs=0.01)
    assert bl["L3_ii"] == 0.0  # n||D+|| > 1: informative for every lambda < 1
    s = oi_findings.StepSizes()

    class FakeClaims:
        def check(self, *a, **k):
            pass

    from shallowflow import verdicts as C
    s.check(FakeClaims(), "X/a", "", [0.1, 0.2], [0.05, 0.025], C.below(0.15))
    s.check(FakeClaims(), "X/b", "", [0.1, 0.1], [0.05, 0.025], C.below(0.15))
    assert s.disagreements() == ["X/a"]
