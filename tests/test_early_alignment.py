"""002 (early alignment): datasets, closed forms and the small helpers of experiments/early_alignment/.

Every expected value here is computed by hand from the definitions (never copied from a run).
"""
import math
import re
from types import SimpleNamespace

import pytest
import torch

from shallowflow.engine import data as datasets
from shallowflow.engine import monitor
from shallowflow.experiments.early_alignment import alignment, assumption3, failure_rates, spurious, staircase
from shallowflow.experiments.early_alignment import theory as ea_theory
from shallowflow.engine.models import Network, Params
from shallowflow.engine.train import animation_frames


@pytest.fixture
def three():
    return datasets.get("ea-three-point", device="cpu")


def test_three_point_dataset(three):
    assert three.bias and three.n == 3
    assert three.x1d.tolist() == [-0.75, -0.5, 0.125]
    assert three.y.tolist() == [1.1, 0.1, 0.8]
    assert torch.equal(three.X[:, 1], torch.ones(3, dtype=torch.float64))


def test_ols_by_hand(three):
    # normal equations for (slope, intercept): sums from the data
    x, y = three.x1d, three.y
    n, sx, sxx, sy, sxy = 3, x.sum(), (x * x).sum(), y.sum(), (x * y).sum()
    slope = (n * sxy - sx * sy) / (n * sxx - sx ** 2)
    intercept = (sy - slope * sx) / n
    o = ea_theory.ols(three.X, three.y)
    assert torch.allclose(o.beta, torch.stack([slope, intercept]), atol=1e-14)
    assert abs(float(o.beta[0]) + 0.8 / 13) < 1e-12  # slope -0.8/13 = -0.0615384...
    r = slope * x + intercept - y
    assert torch.allclose(o.resid, r, atol=1e-14)
    assert abs(float(o.loss) - float((r ** 2).mean())) < 1e-15  # mean convention
    assert abs(float(ea_theory.ols(three.X, three.y, loss="half").loss) - float((r ** 2).mean()) / 2) < 1e-15
    assert float(r[1]) > 0 > float(r[0]) and float(r[2]) < 0  # the middle point is below the OLS line


def test_key_vector_and_G(three):
    D = ea_theory.key_vector(three.X, three.y)
    # D = (2/3) sum_k y_k (x_k, 1) = (2/3) (-0.825 - 0.05 + 0.1, 2.0)
    assert torch.allclose(D, torch.tensor([2 / 3 * (-0.775), 2 / 3 * 2.0], dtype=torch.float64), atol=1e-15)
    assert torch.allclose(ea_theory.key_vector(three.X, three.y, loss="half"), D / 2)
    u = D / D.norm()
    # all three points are active along D, so G(u) = <D, u> = |D|
    assert abs(float(ea_theory.G(three.X, three.y, u[None])[0]) - float(D.norm())) < 1e-14
    # a direction inactive on every point: G = 0
    assert float(ea_theory.G(three.X, three.y, torch.tensor([[0.0, -1.0]], dtype=torch.float64))[0]) == 0.0


def test_critical_points_three_point(three):
    crit = ea_theory.critical_points(three)
    assert len(crit) == 1
    c = crit[0]
    D = ea_theory.key_vector(three.X, three.y)
    assert c.kind == "max" and c.where == "arc" and c.pattern == (0, 1, 2)
    assert abs(c.angle - math.atan2(float(D[1]), float(D[0]))) < 1e-14
    assert len(ea_theory.flat_arcs(three)) == 1
    grid = ea_theory.grid_extrema(three, points=200_000)
    assert abs(grid["argmax"] - c.angle) < 2 * math.pi / 200_000
    assert grid["maxima"].numel() == 1 and grid["minima"].numel() == 0


def test_critical_points_hand_example():
    # x_1 = (1, 0), y_1 = 1 and x_2 = (-1, 0.1), y_2 = -1 (2/n = 1).  On the arc where only x_1 is active,
    # D_A = (1, 0) lies inside it: a maximum at angle 0 with G = 1.  Where only x_2 is active, D_A = (1, -0.1)
    # and -D_A (angle pi - atan(0.1)) lies inside it: a minimum with G = -|D_A|.  Where both are active,
    # D_A = (2, -0.1) points out of the arc; no kink changes the sign of the tangential derivative.
    X = torch.tensor([[1.0, 0.0], [-1.0, 0.1]], dtype=torch.float64)
    y = torch.tensor([1.0, -1.0], dtype=torch.float64)
    crit = ea_theory.critical_points(datasets.Dataset("hand", X, y))
    assert len(crit) == 2
    mx, mn = sorted(crit, key=lambda c: c.kind)
    assert mx.kind == "max" and mx.where == "arc" and abs(mx.angle) < 1e-14 and abs(mx.G - 1.0) < 1e-14
    assert mn.kind == "min" and mn.where == "arc" and abs(mn.angle - (math.pi - math.atan(0.1))) < 1e-12
    assert abs(mn.G + math.hypot(1.0, 0.1)) < 1e-14
    g = ea_theory.grid_extrema(datasets.Dataset("hand", X, y), points=100_000)
    assert g["maxima"].numel() == 1 and g["minima"].numel() == 1


def test_ray_critical_point():
    # a negative label makes a concave kink.  x_1 = (1, 0), y_1 = 1; x_2 = (0.5, -1), y_2 = -1 (2/n = 1).
    # Only x_1 active: D = (1, 0), pointing out of that arc (angles above the boundary of x_2, ~ +0.46 rad);
    # both active: D = (0.5, 1), pointing out of that arc too.  So the maximum of G sits on the kink at the
    # direction orthogonal to x_2, u = (2, 1)/sqrt5, where the minimal-norm subgradient is G(u) u.
    X = torch.tensor([[1.0, 0.0], [0.5, -1.0]], dtype=torch.float64)
    y = torch.tensor([1.0, -1.0], dtype=torch.float64)
    crit = [c for c in ea_theory.critical_points(datasets.Dataset("ray", X, y)) if c.kind == "max"]
    assert len(crit) == 1 and crit[0].where == "ray"
    assert abs(crit[0].angle - math.atan2(1.0, 2.0)) < 1e-12
    assert abs(crit[0].G - 2 / math.sqrt(5)) < 1e-12
    assert torch.allclose(crit[0].D, torch.tensor([0.8, 0.4], dtype=torch.float64), atol=1e-12)


def test_min_norm_subgradient_on_a_boundary():
    # one neuron exactly orthogonal to x_2: D^0 is the minimal-norm point of D_{1} + eta v_2, eta in [0, 1]
    X = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
    y = torch.tensor([1.0, 1.0], dtype=torch.float64)
    W = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    D0, act = ea_theory.min_norm_subgradient(X, y, W, zero_tol=1e-9)
    assert torch.allclose(D0, torch.tensor([[1.0, 0.0]], dtype=torch.float64), atol=1e-6)  # eta = 0 is optimal
    D_open, _ = ea_theory.min_norm_subgradient(X, y, W)  # strict activations only
    assert torch.allclose(D_open, torch.tensor([[1.0, 0.0]], dtype=torch.float64))


def test_misalignment_is_accurate_below_float_resolution():
    W = torch.tensor([[1.0, 1e-9]], dtype=torch.float64)
    mis = ea_theory.misalignment(W, torch.tensor([1.0, 0.0], dtype=torch.float64))
    assert abs(float(mis[0]) - 0.5e-18) < 1e-24  # 1 - cos(1e-9) = 5e-19, invisible to 1 - cos


def test_two_neuron_interpolator(three):
    p = ea_theory.two_neuron_interpolator(three)
    assert p.width == 2
    assert float(Network("relu").loss(p, three.X, three.y, "mean")) < 1e-28
    assert torch.allclose(p.a.abs(), p.W.norm(dim=-1))  # balanced
    cen = datasets.get("assumption3", device="cpu", eta=0.1, centre=True)
    q = ea_theory.two_neuron_interpolator(cen)
    assert float(Network("relu").loss(q, cen.X, cen.y, "mean")) < 1e-28


def test_assumption3_sampler_boxes():
    for eta in (0.05, 0.16):
        X, y = datasets.assumption3_sample(eta, 500, seed=1)
        assert bool(assumption3.in_assumption3(X, y, eta).all())
        assert not bool(assumption3.in_assumption3(X, y, eta / 10).all())
    X1, _ = datasets.assumption3_sample(0.1, 3, seed=7)
    X2, _ = datasets.assumption3_sample(0.1, 3, seed=7)
    assert torch.equal(X1, X2)
    Xu, _ = datasets.assumption3_sample(0.1, 4, seed=0, univariate=True)
    assert torch.equal(Xu[..., 1], torch.ones(4, 3, dtype=torch.float64))
    cen = datasets.get("assumption3", device="cpu", eta=0.1, centre=True)
    assert cen.x1d.tolist() == pytest.approx([-0.95, 0.0, 0.95]) and cen.y.tolist() == pytest.approx([1.05, 0.05, 1.05])


def test_assumption_census_small_eta_and_a_counterexample():
    P = SimpleNamespace(flow_start=[1e-3], flow_time=20.0, flow_dt=0.2, flow_draws=50)
    X, y = datasets.assumption3_sample(0.1, 50, seed=3)
    cen = assumption3.assumption_census(X, y, P)
    for key in ("a4", "a5", "a5_linear", "a6"):
        assert bool(cen[key].all()), key
    # lift the middle label above the OLS line: residual signs flip and A6 must fail
    y2 = y.clone()
    y2[:, 1] = 2.0
    cen2 = assumption3.assumption_census(X, y2, P)
    assert not bool(cen2["a6_signs"].any())


def test_stewart_data():
    d = datasets.get("stewart", device="cpu")
    assert d.n == 40 and d.bias
    assert float(d.x1d.min()) >= -1 and float(d.x1d.max()) <= 1
    knots = datasets.STEWART_KNOTS
    t = torch.tensor(knots["x"], dtype=torch.float64)
    assert torch.allclose(datasets.stewart_teacher(t), torch.tensor(knots["y"], dtype=torch.float64))
    assert abs(float(datasets.stewart_teacher(torch.tensor([0.25]))[0]) - 0.5) < 1e-15  # between (0, 0) and (0.5, 1)
    assert torch.equal(d.X, datasets.get("stewart", device="cpu").X)  # seeded


def test_dominated_initialisation_is_dominated():
    p = ea_theory.initialise("dominated", [0, 1], 50, 2, [1e-3, 1.0])
    assert bool((p.a ** 2 >= (p.W ** 2).sum(-1)).all())
    assert abs(float(p.a[0].abs().max()) - 1e-3 * math.sqrt(2) / math.sqrt(50)) < 1e-15
    b = ea_theory.initialise("balanced", [0], 10, 2, 1e-2)
    assert torch.allclose(b.a.abs(), b.W.norm(dim=-1))


def test_classify_and_lambda_star():
    L = torch.tensor([1e-9, 0.1, 0.175, 0.62, 0.3, math.nan, math.inf])
    assert ea_theory.classify(L, 0.175, 0.62) == ["global", "escaping", "ols", "zero", "other", "invalid", "invalid"]
    ok = torch.ones(2, dtype=torch.bool)
    g = failure_rates.Grid("balanced", "relu", [10], [1e-3, 1e-2, 1e-1], {10: 2}, {}, {}, {
        (10, 1e-3): ["ols", "ols"], (10, 1e-2): ["ols", "zero"], (10, 1e-1): ["ols", "global"]},
        {(10, 1e-3): ok, (10, 1e-2): ok, (10, 1e-1): ok}, {}, 1e-2, 1.0)
    assert failure_rates.empirical_lambda_star(g, 10) == 1e-2
    assert g.failing(10, 1e-1) == 0.5
    # a non-finite run is neither a failure nor a success, and its flag reaches the checks
    g.outcome[(10, 1e-3)] = ["ols", "invalid"]
    g.valid[(10, 1e-3)] = torch.tensor([True, False])
    assert g.failing(10, 1e-3) == 0.5 and failure_rates.empirical_lambda_star(g, 10) == 0.0
    assert g.valid_runs().tolist() == [True, False, True, True, True, True]
    assert g.valid_runs(scales=[1e-2]).tolist() == [True, True]


def test_failure_grid_flags_diverged_runs(three):
    """A run whose loss overflows is flagged invalid (never counted as a failure); the others are kept."""
    g = failure_rates.run_grid(three, [5], [1e-3, 1e3], lambda m: [0, 1], lr=0.5, T=5.0)
    assert g.valid[(5, 1e-3)].all() and not g.valid[(5, 1e3)].any()
    assert g.outcome[(5, 1e3)] == ["invalid", "invalid"] and g.failing(5, 1e3) == 0.0


def test_plateaus():
    t = torch.arange(0, 1000, dtype=torch.float64)
    L = torch.cat([torch.full((300,), 1.0), torch.linspace(1.0, 0.5, 100), torch.full((600,), 0.5)]).double()
    pl = staircase.plateaus(t, L, 0.01, 50.0)
    assert len(staircase.distinct_levels(pl, 0.01)) == 2
    assert pl[0][2] == 1.0 and pl[-1][2] == 0.5


def test_train_monitored_matches_one_call(three):
    from shallowflow.engine.train import gradient_descent

    p0 = ea_theory.initialise("balanced", [0, 1], 20, 2, 1e-2)
    one = gradient_descent(p0, three, Network("relu"), steps=300, lr=1e-2, loss="mean")
    mon = monitor.train_monitored(p0, three, Network("relu"), steps=300, lr=1e-2, every=70, snapshots=[140],
                             monitor=lambda q, k: {"loss": Network("relu").loss(q, three.X, three.y, "mean")})
    assert torch.equal(mon.final.W, one.final.W) and torch.equal(mon.final.a, one.final.a)
    assert torch.allclose(mon.loss, one.loss)
    assert mon.steps_seen.tolist() == [0, 70, 140, 210, 280, 300]
    assert 140 in mon.snaps


def test_saddle_prediction_sign(three):
    """saddle_test on a hand-built spurious limit: one all-active neuron carrying the OLS line and one zero
    neuron.  Replacing the zero neuron by rho (1, (1, 0)) changes L by exactly
    (2/n) rho^2 sum_k r_k relu(x_k1) + (1/n) rho^4 sum_k relu(x_k1)^2 (r = OLS residuals): saddle_test must pick
    the zero neuron, measure that change, and predict its first-order term, which is negative (a saddle)."""
    o = ea_theory.ols(three.X, three.y)
    assert bool((o.pred > 0).all())  # one all-active ReLU neuron can carry the OLS line
    nb = float(o.beta.norm())
    a = torch.tensor([[math.sqrt(nb), 0.0]], dtype=torch.float64)
    W = torch.stack([o.beta / math.sqrt(nb), torch.zeros(2, dtype=torch.float64)])[None]
    fr = SimpleNamespace(run=SimpleNamespace(final=Params(a, W)), data=three, network=Network("relu"), ols=o)
    sad = spurious.saddle_test(fr, rhos=(1e-3, 1e-2))
    assert sad["neuron"] == 1 and sad["neuron_norm"] == 0.0
    z = torch.clamp_min(three.X[:, 0], 0.0)
    n = three.y.numel()
    for rho, dL, pred in zip(sad["rho"], sad["dL"], sad["predicted"]):
        first = 2 / n * rho ** 2 * float((o.resid * z).sum())
        exact = first + rho ** 4 * float((z ** 2).sum()) / n
        assert pred == pytest.approx(first, rel=1e-12)
        assert dL == pytest.approx(exact, rel=1e-6, abs=1e-18)
        assert dL < 0 and pred < 0
        assert abs(dL / pred - 1) < 2 * rho ** 2 * float((z ** 2).sum()) / abs(float((o.resid * z).sum()))


def test_example1_stays_with_relu_convention_and_leaves_with_sigma_prime_one():
    """Example 1: the library's GD (sigma'(0) = 0) keeps a boundary neuron exactly still; one step with
    sigma'(0) = 1 moves it by lr * 2 a y ||x||^2 into the active side, after which it fits the point; leaving
    later is the same path shifted in time."""
    r = alignment.example1(steps=600, lr=1e-2, leave_at=[0, 100], scale=1e-2)
    assert r["moved"] == 0.0 and float(r["z_stay"].abs().max()) == 0.0
    assert torch.all(r["loss_stay"] == 1.0)
    first = r["leaving"][0]
    assert float(first["z"][1]) == pytest.approx(1e-2 * 2 * 1e-2, rel=1e-12)
    assert float(first["loss"][-1]) < 1e-6 * float(first["loss"][0])
    assert r["shift_error"] == 0.0
    torch.testing.assert_close(r["leaving"][100]["z"][100:], first["z"][:-100])
    with pytest.raises(ValueError, match="below example_steps"):
        alignment.example1(steps=10, lr=1e-2, leave_at=[10])


def test_animation_frames_subsample_the_schedule():
    sched = ea_theory.authors_frames(100_000)
    f = animation_frames(sched, 10)
    assert len(f) == 10 and f[0] == sched[0] and f[-1] == sched[-1] and set(f) <= set(sched)
    assert animation_frames(sched, 10_000) == sched


def test_neuron_animation_embeds_one_png_per_frame(three):
    from shallowflow.site import plots

    p = ea_theory.initialise("balanced", [0], 30, 2, 1e-2)
    states = [(k, Params(p.a * (1 + k), p.W * (1 + k))) for k in range(3)]
    html = plots.neuron_animation(states, three, Network("relu"), fps=10)
    assert html.count("data:image/png;base64") == 3 and "<script" in html
    assert not re.search(r"(href|src)=[\"']?(https?:)?//", html), "the player must not load anything from the network"
    L = ea_theory.frame_losses([q for _, q in states], three)
    assert L.shape == (3,) and torch.all(L[1:] != L[0])


def test_one_neuron_moves_reject_the_saddle_that_random_draws_accept(three):
    """local_min_test on the hand-built saddle of test_saddle_prediction_sign (one all-active neuron carrying the
    OLS line, one zero neuron): random perturbations do not find its descent direction (it lives on the single zero
    neuron), the one-neuron moves do; the second-order change they report is that of saddle_test's replacement,
    (dL - g . move) / radius^2, about (1/n) sum_k r_k relu(u . x_k) for the best u."""
    o = ea_theory.ols(three.X, three.y)
    nb = float(o.beta.norm())
    a = torch.tensor([[math.sqrt(nb), 0.0]], dtype=torch.float64)
    W = torch.stack([o.beta / math.sqrt(nb), torch.zeros(2, dtype=torch.float64)])[None]
    p = Params(a, W)
    lm = spurious.local_min_test(p, three, 200, grow_delta0=1e-3)
    assert lm["grow_radius"] == pytest.approx(1e-4)
    assert lm["grow_min"] < -1e-6  # the saddle is rejected
    # the all-active neuron alone, moved: a smooth second-order change of a least-squares minimum, not negative
    # beyond rounding once the zero neuron is gone
    lone = Params(a[:, :1].clone(), W[:, :1].clone())
    assert spurious.local_min_test(lone, three, 200, grow_delta0=1e-3)["grow_min"] > -1e-9
