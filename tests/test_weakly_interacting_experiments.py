"""Source 001 experiment helpers: the group-network mu formula against eq. (24) on the network, the exact
window constant, the threshold fit, the Lemma-8 bookkeeping on a tiny run."""
import math
from types import SimpleNamespace as NS

import numpy as np
import torch

from shallowflow import init
from shallowflow.experiments.weakly_interacting import local_pl as LP
from shallowflow.experiments.weakly_interacting import phase_transitions as PT
from shallowflow.experiments.weakly_interacting import reductions as RD
from shallowflow.experiments.weakly_interacting import theory as T
from shallowflow.experiments.weakly_interacting import threshold as TH


def test_group_network_mu_equals_eq24_on_the_network():
    n, p = 12, 3
    X = torch.eye(n, dtype=torch.float64)
    y = torch.tensor([1.0, 1.5, 1.2, 2.0] + [-1.0, -1.1, -1.9, -1.3] + [1.7, 1.1, 1.4, 1.6], dtype=torch.float64)
    G = init.group(X, y, p, [4], norm=0.7, device="cpu")
    Z = G.W  # x_i = e_i
    h = RD.NET.forward(G, X)
    mu_net = float(RD.ortho_mu(G.a, Z, y - h, torch.ones(n, dtype=torch.float64))[0])
    k = n // p
    yy = y.abs().reshape(p, k).numpy()
    D = np.sqrt((yy ** 2).mean(1))
    W = G.W[0].numpy()
    rho0 = np.array([(W[j, j * k:(j + 1) * k] * yy[j]).sum() / (np.linalg.norm(W[j]) * np.linalg.norm(yy[j])) for j in range(p)])
    mu_cf = T.group_network_mu(np.array([0.0]), k, D, n, p, np.full(p, 0.49), rho0)[0]
    assert abs(mu_cf - mu_net) < 1e-12 * mu_net


def test_window_constant_of_the_exact_solution():
    n, eps = 1e12, 0.1
    hi, lo = PT.transition_times(n, eps, 1.0)
    assert abs((hi - lo) * math.log(2 * n) - 2 * T.window_constant_corrected(eps)) < 1e-6


def test_threshold_fit_recovers_a_logistic():
    rng = np.random.default_rng(1)
    ns = np.repeat(np.arange(100, 401, 50), 40)
    conv = (rng.random(ns.size) < 1 / (1 + np.exp((ns - 250) / 20))).astype(float)
    fit = TH.fit_threshold(ns, conv)
    assert abs(fit["N"] - 250) < 15 and fit["bracketed"]
    assert not TH.fit_threshold(ns, np.ones_like(conv))["bracketed"]


def test_local_pl_run_bookkeeping():
    P = NS(d=60, eps=0.05, lr=1.0, horizon_mult=1.5, stop_factor=1e-6, final_seeds=2, seeds=2, first_layer="gauss")
    r = LP.run_n(40, P)
    assert r["finite"].all() and (r["lemma7"] == 0).all() and (r["mu_low"] <= r["mu_exact"]).all()
    assert (r["react"] == 0).all()
    assert torch.allclose(r["mu_spec"] * 0, torch.zeros_like(r["mu_spec"])) and (r["mu_spec"] > 0).all()
