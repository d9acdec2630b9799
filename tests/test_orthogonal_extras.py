"""003 remarks and Appendix A: datasets, metrics, closed forms and experiment functions (fast)."""
import math

import pytest
import torch

from shallowflow.engine import data as datasets
from shallowflow.engine import metrics, theory
from shallowflow.experiments.orthogonal_inputs import high_dim, remarks
from shallowflow.engine.models import Params


# ---------------------------------------------------------------------------------------------- data
def test_nonorthogonal_toy_variants_differ_only_in_the_third_label():
    a = datasets.get("nonorthogonal-toy", device="cpu")
    b = datasets.get("nonorthogonal-toy", device="cpu", variant="early")
    assert torch.equal(a.X, b.X) and a.bias and a.X.shape == (5, 2)
    assert torch.equal(a.x1d, torch.tensor([-1.5, -1.0, 0.0, 0.25, 2.0], dtype=torch.float64))
    assert float(a.y[2]) == -0.3 and float(b.y[2]) == -0.4
    assert torch.equal(torch.cat([a.y[:2], a.y[3:]]), torch.cat([b.y[:2], b.y[3:]]))
    with pytest.raises(ValueError, match="variant"):
        datasets.nonorthogonal_toy("late")


@pytest.mark.parametrize("delta", [0.0, 1e-8, 0.1])
def test_nearly_orthonormal_has_the_requested_gram_matrix(delta):
    ds = datasets.nearly_orthonormal([1.0, 1.0, -0.5, -0.5], delta, d=6, seed=3, device="cpu")
    G = ds.X @ ds.X.T
    off = G - torch.diag(torch.diagonal(G))
    assert torch.allclose(torch.diagonal(G), torch.ones(4, dtype=torch.float64), atol=1e-14)
    if delta == 0:
        assert torch.equal(ds.X[:, :4], torch.eye(4, dtype=torch.float64)) and float(off.abs().max()) == 0
    else:
        mask = ~torch.eye(4, dtype=torch.bool)
        assert torch.allclose(off[mask].abs(), torch.full((12,), delta, dtype=torch.float64), rtol=1e-6, atol=1e-15)
    assert torch.all(ds.X[:, 4:] == 0)
    with pytest.raises(ValueError, match="too large"):
        datasets.nearly_orthonormal([1.0] * 4, 0.6, seed=0)


def test_teacher_draws_replay_the_torch_module_construction():
    """The explicit generator replays nn.Linear + init.normal_ + randn under torch.manual_seed."""
    n, d, w = 7, 11, 3
    with torch.random.fork_rng():
        torch.manual_seed(4)
        h = torch.nn.Linear(d, w, bias=False)
        torch.nn.init.normal_(h.weight.data, std=1 / math.sqrt(w * d))
        o = torch.nn.Linear(w, 1, bias=False)
        torch.nn.init.normal_(o.weight.data, std=1 / math.sqrt(w))
        x = torch.randn(n, d)
        y = o(torch.relu(h(x))).detach().reshape(-1)
    ds = datasets.teacher_relu(n, d, w, seed=4, device="cpu")
    assert torch.equal(ds.X, x.double()) and torch.equal(ds.y, y.double())
    assert torch.equal(ds.meta["teacher_W"], h.weight.data.double())


def test_highdim_student_is_balanced_in_float64_and_float32_norms_are_reported():
    data, p0, info = high_dim.highdim_draws(6, 9, 2, 5, 1e-22, seed=4)
    assert p0.a.shape == (1, 5) and p0.W.shape == (1, 5, 9)
    assert torch.allclose(p0.a.abs()[0], p0.W[0].norm(dim=1), rtol=1e-15)
    assert set(info["signs"].tolist()) <= {-1.0, 1.0}
    assert float(((info["norms32"] - info["norms64"]).abs() / info["norms64"]).max()) > 1e-3  # subnormal squares
    _, _, info_big = high_dim.highdim_draws(6, 9, 2, 5, 1.0, seed=4)
    assert float(((info_big["norms32"] - info_big["norms64"]).abs() / info_big["norms64"]).max()) < 1e-6


def test_highdim_row_space_reduction_trains_like_the_dense_network():
    """run_highdim trains on the inputs' row space (n < d): its losses, final a and full W agree with GD on the dense
    network to rounding, before and after the continuation, and its snapshots are full-width W."""
    import types

    from shallowflow.engine.models import Network, flow_time_per_step
    from shallowflow.engine.train import gradient_descent

    P = types.SimpleNamespace(n=8, d=16, teacher_width=3, width=12, init_scale=1e-3, lr=1e-2, steps=3000, seed=4,
                              record_every=50, continue_steps=500)
    run = high_dim.run_highdim(P)
    data, p0, _ = high_dim.highdim_draws(P.n, P.d, P.teacher_width, P.width, P.init_scale, P.seed)
    lr = flow_time_per_step(P.lr, "mean")
    dense = gradient_descent(p0, data, Network("relu"), steps=P.steps, lr=lr, loss="half", record_every=P.record_every)
    more = gradient_descent(dense.final, data, Network("relu"), steps=P.continue_steps, lr=lr, loss="half",
                            record_every=P.record_every)
    assert float(dense.loss[0, -1] / dense.loss[0, 0]) < 0.5  # it trained
    for got, want in ((run["traj"], dense), (run["more"], more)):
        assert got.final.W.shape == want.final.W.shape == (1, P.width, P.d)
        assert torch.allclose(got.loss, want.loss, rtol=1e-10, atol=0)
        assert torch.allclose(got.final.W, want.final.W, rtol=0, atol=1e-10 * float(want.final.W.abs().max()))
        assert torch.allclose(got.final.a, want.final.a, rtol=0, atol=1e-10 * float(want.final.a.abs().max()))
    assert run["traj"].snap_W.shape[-1] == P.d

# ---------------------------------------------------------------------------------------------- theory
def _a3_enumerated(n_pos, n_neg, m):
    """P(both sets non-empty) from the per-neuron categories (S+, S-, neither), by the multinomial law."""
    pp, pm = 2.0 ** -(n_pos + 1), 2.0 ** -(n_neg + 1)
    total = 0.0
    for i in range(m + 1):
        for j in range(m + 1 - i):
            if i and j:
                total += math.comb(m, i) * math.comb(m - i, j) * pp ** i * pm ** j * (1 - pp - pm) ** (m - i - j)
    return total


@pytest.mark.parametrize("n_pos,n_neg,m", [(1, 1, 1), (1, 1, 2), (1, 1, 5), (2, 1, 7), (3, 2, 9)])
def test_assumption3_exact_matches_enumeration_and_the_product_overestimates(n_pos, n_neg, m):
    exact = theory.assumption3_probability(n_pos, n_neg, m)
    assert exact == pytest.approx(_a3_enumerated(n_pos, n_neg, m), abs=1e-14)
    assert theory.assumption3_probability_product(n_pos, n_neg, m) > exact


def test_min_squared_norm_lp():
    toy = datasets.get("orthogonal-toy", device="cpu")
    assert theory.min_squared_norm_1d(toy.X, toy.y) == pytest.approx(6 / math.sqrt(5), rel=1e-6)
    leaky = theory.min_squared_norm_1d(toy.X, toy.y, "leaky_relu", 0.1)
    assert 0 < leaky < 6 / math.sqrt(5) + 1e-6
    with pytest.raises(ValueError, match="activation"):
        theory.min_squared_norm_1d(toy.X, toy.y, "tanh")


# ---------------------------------------------------------------------------------------------- metrics
def _steps_curve(levels, exits, K=200_001, width=0.02):
    """A loss that sits at levels[0], then drops to levels[i+1] around iteration exits[i] (log-time sigmoids)."""
    k = torch.arange(K, dtype=torch.float64)
    lnL = torch.full_like(k, math.log(levels[0]))
    lt = torch.log(k.clamp_min(1))
    for e, (a, b) in zip(exits, zip(levels[:-1], levels[1:])):
        lnL += (math.log(b) - math.log(a)) * torch.sigmoid((lt - math.log(e)) / width)
    return lnL.exp()[None], k.long()


def test_saddle_visits_counts_escapes_and_final_plateaus():
    L2, k = _steps_curve([1.0, 0.5, 1e-30], [5000, 20000])  # goes to 0 (below the rounding floor)
    sv = metrics.saddle_visits(L2, k)
    assert int(sv["escapes"][0]) == 2 and not bool(sv["ends_on_plateau"][0])
    assert abs(math.log(sv["escape_steps"][0][0] / 5000)) < 0.05
    L1, k = _steps_curve([1.0, 1e-30], [5000])
    assert int(metrics.saddle_visits(L1, k)["escapes"][0]) == 1
    L3, k = _steps_curve([1.0, 0.5, 0.1], [5000, 20000])  # ends on a non-zero floor
    sv3 = metrics.saddle_visits(L3, k)
    assert int(sv3["escapes"][0]) == 2 and bool(sv3["ends_on_plateau"][0])
    fp = metrics.flat_plateaus(L2, k)
    assert int(fp["intermediate"][0]) == 1  # the stretch at 0.5 between the two drops


def test_turning_angles_and_directions():
    S, m = 6, 3
    t = torch.linspace(0, 1, S, dtype=torch.float64)
    W = torch.zeros(S, 1, m, 2, dtype=torch.float64)
    W[:, 0, 0] = torch.stack([t, torch.zeros_like(t)], 1)  # grows along e1: no turning
    ang = 0.3 * t  # grows while turning by 0.3 rad overall
    W[:, 0, 1] = (t[:, None] * torch.stack([torch.cos(ang), torch.sin(ang)], 1))
    W[:, 0, 2] = 1e-6  # never grows
    turn = metrics.turning_angles(W)
    assert float(turn[0, 0]) == pytest.approx(0.0, abs=1e-12)
    assert float(turn[0, 1]) == pytest.approx(0.3 - 0.3 * float(t[1]), abs=1e-12)  # from the first >= 10% snapshot
    assert math.isnan(float(turn[0, 2]))
    Wd = torch.tensor([[[1.0, 0.0], [2.0, 1e-6], [0.0, 1.0], [1e-3, 1e-3]]], dtype=torch.float64)
    assert int(metrics.distinct_directions(Wd)[0]) == 2
    assert metrics.explained_variance_ratio(torch.eye(3, 5, dtype=torch.float64))[:2].sum() == pytest.approx(2 / 3)


def test_kinks_of_function_merges_and_thresholds():
    # kinks -w2/w1 at 0.5 (twice, merged), at -1 and at 10 (outside); jumps a |w1|
    W = torch.tensor([[[1.0, -0.5], [2.0, -1.0], [-1.0, -1.0], [1.0, -10.0], [1e-4, 0.0]]], dtype=torch.float64)
    a = torch.tensor([[1.0, 1.0, -1.0, 1.0, 1.0]], dtype=torch.float64)
    assert int(metrics.kinks_of_function(Params(a, W), (-2.0, 3.0))[0]) == 2


# ---------------------------------------------------------------------------------------------- experiments
def test_sigma_prime_zero_illustration_and_library_boundary():
    r = remarks.sigma_prime_zero([0.1, 0.01, 0.001])
    assert r[0]["sup"].abs().max() == 0 and r[0]["limit_residual"] == 0
    assert torch.allclose(r[1]["sup"], torch.tensor([0.1, 0.01, 0.001], dtype=torch.float64))
    assert r["sup_slope_sigma1"] == pytest.approx(1.0, abs=1e-9) and r[1]["limit_residual"] == 1.0
    b = remarks.boundary_neuron_run(steps=300)
    assert b["max_abs_z1"] == 0.0 and b["first_step_if_sigma1"] > 0


def test_assumption3_monte_carlo_agrees_with_the_exact_form():
    r = remarks.assumption3_monte_carlo([2, 4], trials=3000, max_width=300, seed=1)
    for v in r["per_n"].values():
        z = remarks.z_scores(v["p_hat"], v["exact"], 3000)
        assert float(z.abs().max()) < remarks.bonferroni_z(z.numel())
    v2 = r["per_n"][2]  # at m = 2 the product form is 0.191 against 0.125
    i = r["widths"].index(2)
    assert float(v2["product"][i]) == pytest.approx(0.19140625) and float(v2["exact"][i]) == pytest.approx(0.125)
    assert abs(float(v2["p_hat"][i]) - 0.125) < 0.03


def test_covered_labels_and_classes():
    data = datasets.get("ortho-B", device="cpu")
    # neuron 0: s=+1, active on x1 and x2 (S+); neuron 1: s=-1, active on x3 only
    W = torch.zeros(1, 2, 6, dtype=torch.float64)
    W[0, 0, :2] = 1.0
    W[0, 1, 2] = 1.0
    W[0, 1, 3] = -1.0  # inactive on x4 (on its boundary it would count in S-,1, whose definition has >= 0)
    p0 = Params(torch.tensor([[1.0, -1.0]], dtype=torch.float64), W)
    cov = remarks.covered_labels(p0, data)
    assert cov.tolist() == [[True, True, True, False]]
    sp, sm = theory.key_sets(p0, data)
    assert bool(sp.any()) and not bool(sm.any())


def test_small_runs_of_the_experiment_functions():
    sw = remarks.run_toy_sweep(8, [1e-6, 1.0], [0, 1], 1e-3, 300)
    assert sw.traj.runs == 4 and sw.runs_at(1.0) == [2, 3]
    assert torch.allclose(sw.lam, torch.tensor([1e-6, 1e-6, 1.0, 1.0], dtype=torch.float64) / math.sqrt(8))
    nr = remarks.run_nearly_orthogonal(6, [0], 1e-4, [0.0, 0.1], 0.05, 200)
    assert nr["traj"].runs == 2 and nr["deltas"].tolist() == [0.0, 0.1]
    ub = remarks.run_unbalanced(6, [0], [1e-2], 0.05, 50)
    assert ub["kind"] == ["balanced", "unbalanced"]
    assert float(ub["initial_imbalance"][0]) < 1e-12 < float(ub["initial_imbalance"][1])
