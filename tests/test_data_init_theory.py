"""Datasets, initialisations and closed forms."""
import math

import pytest
import torch

from shallowflow.engine import data as datasets
from shallowflow.engine import init, metrics, theory


def test_toy_is_the_papers(toy):
    assert toy.X.tolist() == [[-0.5, 1.0], [2.0, 1.0]] and toy.y.tolist() == [-1.0, 1.0]
    assert float(toy.X[0] @ toy.X[1]) == 0.0
    assert toy.X.dtype == torch.float64


@pytest.mark.parametrize("name", ["ortho-A", "ortho-B", "ortho-C"])
def test_presets_are_orthonormal(name):
    d = datasets.get(name, device="cpu")
    torch.testing.assert_close(d.X @ d.X.T, torch.eye(d.n, dtype=torch.float64))
    assert d.d == d.n + 2


def test_random_orthonormal_frame():
    d = datasets.orthonormal([1.0, -1.0, 0.5], d=7, seed=3, device="cpu")
    torch.testing.assert_close(d.X @ d.X.T, torch.eye(3, dtype=torch.float64), rtol=0, atol=1e-14)
    again = datasets.orthonormal([1.0, -1.0, 0.5], d=7, seed=3, device="cpu")
    assert torch.equal(d.X, again.X)
    with pytest.raises(ValueError, match="d >= n"):
        datasets.orthonormal([1, 2, 3], d=2)


def test_unknown_dataset():
    with pytest.raises(ValueError, match="unknown dataset 'nope'"):
        datasets.get("nope")


def test_balanced_init_is_balanced_and_seeded_per_run():
    p = init.balanced([5, 6, 7], 11, 3, [1e-3, 1e-22, 2.0], device="cpu")
    torch.testing.assert_close(metrics.balancedness(p), torch.zeros(3, 11, dtype=torch.float64), rtol=0,
                               atol=1e-15 * 4)
    assert float(p.W[1].abs().max()) < 1e-20 and float(p.W[1].abs().max()) > 0  # no underflow in float64
    alone = init.balanced([6], 11, 3, 1e-22, device="cpu")
    assert torch.equal(alone.W[0], p.W[1]) and torch.equal(alone.a[0], p.a[1])
    assert set(torch.sign(p.a).unique().tolist()) <= {-1.0, 1.0}


def test_unbalanced_init_scales():
    p = init.unbalanced([0, 1], 500, 2, 1e-3, output_scale=1e-1, device="cpu")
    assert abs(float(p.W.std()) / 1e-3 - 1) < 0.1 and abs(float(p.a.std()) / 1e-1 - 1) < 0.1


def test_scale_per_run_length_is_checked():
    with pytest.raises(ValueError, match="one value per run"):
        init.balanced([0, 1], 3, 2, [1.0, 2.0, 3.0])


def test_toy_closed_forms(toy):
    dp, dm = theory.key_directions(toy)
    torch.testing.assert_close(dp, torch.tensor([1.0, 0.5], dtype=torch.float64))
    torch.testing.assert_close(dm, torch.tensor([0.25, -0.5], dtype=torch.float64))
    star = theory.min_norm_interpolator(toy)
    assert abs(star.squared_norm - 6 / math.sqrt(5)) < 1e-14
    k_plus, k_minus = star.kinks()
    assert abs(k_plus + 0.5) < 1e-14 and abs(k_minus - 2) < 1e-14
    torch.testing.assert_close(star(toy.X), toy.y)
    assert theory.saddle_loss(toy) == 0.25


def test_min_norm_interpolator_orthonormal():
    d = datasets.get("ortho-B", device="cpu")
    star = theory.min_norm_interpolator(d)
    assert abs(star.squared_norm - 2 * (math.sqrt(2) + math.sqrt(0.5))) < 1e-12
    torch.testing.assert_close(star(d.X), d.y)


def test_min_norm_refuses_non_orthogonal():
    d = datasets.univariate("x", [0.0, 1.0, 2.0], [1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="not orthogonal"):
        theory.min_norm_interpolator(d)


def test_key_sets_definition(toy):
    p = init.balanced([0, 1, 2], 50, 2, 1e-3, device="cpu")
    sp, sm = theory.key_sets(p, toy)
    Z = p.W @ toy.X.T
    s = torch.sign(p.a)
    torch.testing.assert_close(sp, (s > 0) & (Z[..., 1] >= 0))
    torch.testing.assert_close(sm, (s < 0) & (Z[..., 0] >= 0))


def test_assumption3_probability_against_monte_carlo():
    """P(S+ and S- non-empty) on orthonormal data (n+ = 2, n- = 1, m = 5): Monte Carlo agrees with the
    inclusion-exclusion form and rejects the spec's product form (gap 0.026, about 7 standard errors)."""
    d = datasets.orthonormal([1.0, 1.0, -1.0], device="cpu")
    R = 20000
    p = init.balanced(range(R), 5, 3, 1.0, device="cpu")
    sp, sm = theory.key_sets(p, d)
    mc = float((sp.any(1) & sm.any(1)).double().mean())
    exact = theory.assumption3_probability(2, 1, 5)
    se = math.sqrt(exact * (1 - exact) / R)
    assert abs(mc - exact) < 4 * se
    assert abs(mc - theory.assumption3_probability_product(2, 1, 5)) > 4 * se


def test_variation_norm_lp_on_toy(toy):
    star = theory.min_norm_interpolator(toy)
    f = lambda t: star(datasets.augment_bias(torch.as_tensor(t))).numpy()
    v = theory.variation_norm_1d(f, (-1.5, 3.0), n_points=60, n_directions=400,
                                 extra_directions=[star.u_plus.numpy(), star.u_minus.numpy()])
    assert abs(v - star.squared_norm / 2) < 1e-7
