"""001, chapter *initialisation*: Lemma 5 (exact probability of the well-initialisation event against
Monte Carlo; p ~ log n), the orthogonal "iff" claim, Proposition 3's counterexample (App. C.1), the kink
convention of App. C.2."""
from __future__ import annotations

import math

import numpy as np
import torch

from shallowflow.engine import data as datasets
from shallowflow.engine import init, metrics, train
from shallowflow import verdicts as C
from shallowflow.engine.config import DTYPE
from shallowflow.engine.models import Params
from shallowflow.params import PROFILE, STEP_BUDGET, Float, Floats, Int, Ints, Rule, array_bytes, gd_work

from . import reductions as RD
from . import theory as T

# the chapter's criteria on Lemma 5 (the negative controls of tests/test_controls_weakly_interacting.py use them)
EXACT_VS_MC = C.below(4.0)  # the exact P(I) against Monte Carlo: largest deviation in standard errors
MARGIN = C.above(0.0)  # a probability margin of Lemma 5's bounds (P - (1 - eps) or (1 - eps) - P)
EXCEEDS = C.above(0.0, strict=True)  # the counterexample's Monte Carlo P(I) strictly above 1 - eps
IFF_BOTH_CASES = C.is_true()  # the iff study: runs with the event I and runs without it both occur
PROP3_COLLAPSE = C.below(1e-6)  # Prop. 3: |L - y_2^2/4| at the end, the loss stuck at 25
PROP3_SIGNS = C.is_true()  # Prop. 3: the second layer collapsed to one sign, <w_j, x_2> <= 0
PROP3_CONVERGES = C.below(1e-20)  # Prop. 3's control: with Assumption 1 the loss reaches 0

SCHEMA = {
    "profile": PROFILE,
    "lemma5_ns": Floats("Lemma 5: dataset sizes of the exact formula", low=2, high=1e9),
    "lemma5_eps": Floats("Lemma 5: failure probabilities", low=1e-4, high=0.99, low_open=True),
    "mc_ns": Ints("Lemma 5: dataset sizes of the Monte Carlo check", low=2, high=5000),
    "mc_draws": Int("Lemma 5: Monte Carlo draws per (n, p)", low=100, high=10**7),
    "iff_n": Int("iff claim: n (orthogonal data, d = 2n)", low=4, high=5000),
    "iff_p": Int("iff claim: width (P(I) near 1/2)", low=1, high=200),
    "iff_seeds": Ints("iff claim: the runs' seeds (run s draws its initialisation from seed s; the data set is fixed, seed 777)",
                      low=0, high=10**9, min_len=2, max_len=2000),
    "iff_horizon": Float("iff claim: horizon in units of t_n", low=1, high=100),
    "prop3_lr": Float("Prop. 3: GD step", low=1e-5, high=1e-1, low_open=True),
    "prop3_time": Float("Prop. 3: flow time", low=1, high=1e4),
}
# Lemma 5 (Appendix A): "if p >= 4 log(n/eps), then P(I) >= 1 - eps; if p <= 3 log(n/eps) - 2, then P(I) <= 1 - eps":
# the level both widths are measured against
SOURCE_LEMMA5_LEVEL = lambda eps: 1.0 - eps  # noqa: E731
MC_UNITS = 130  # work units of one (draw, neuron, point) of :func:`monte_carlo` (measured: about 90 ns)


def _mc_widths(n):
    return (T.lemma5_p_necessary(n, 0.05), T.width_rule(n, 0.05), T.lemma5_p_sufficient(n, 0.05),
            T.lemma5_p_necessary(n, 0.05))


def _iff_steps(P):
    return int(P.iff_horizon * T.t_n(P.iff_n, P.iff_p))


def memory_estimate(P) -> float:
    """The largest of: a Monte Carlo chunk (2000 draws x p x n pre-activations and their masks), the iff runs
    (data n x 2n, initialisation runs x p x 2n, the state, the loss and mu at every step)."""
    mc = max(array_bytes(min(2000, P.mc_draws), max(_mc_widths(n)), n, copies=2) for n in P.mc_ns)
    n, p, R = P.iff_n, P.iff_p, len(P.iff_seeds)
    iff = array_bytes(n, 2 * n) + array_bytes(R, p, 2 * n, copies=2) + array_bytes(R, p, n, copies=8) \
        + array_bytes(R, _iff_steps(P) + 1, copies=2)
    return max(mc, iff)


def work_estimate(P) -> float:
    """The Monte Carlo draws (:data:`MC_UNITS` per draw, neuron and point), the iff runs and Prop. 3's run."""
    mc = sum(MC_UNITS * P.mc_draws * p * n for n in P.mc_ns for p in _mc_widths(n))
    iff = 10 * gd_work(len(P.iff_seeds), P.iff_p, P.iff_n, 0, _iff_steps(P))
    return mc + iff + gd_work(2, 2, 2, 2, P.prop3_time / P.prop3_lr)


NAMES = ("mc_ns", "mc_draws", "iff_n", "iff_p", "iff_seeds", "iff_horizon", "prop3_lr", "prop3_time")
RULES = (
    Rule(("iff_seeds",), lambda P: len(set(P.iff_seeds)) == len(P.iff_seeds), "iff_seeds must be distinct"),
    Rule.budget(("prop3_time", "prop3_lr"), lambda P: P.prop3_time / P.prop3_lr, STEP_BUDGET,
                what="Prop. 3's run (time / lr)"),
    Rule.budget(("iff_horizon", "iff_n", "iff_p"), _iff_steps, STEP_BUDGET, what="the iff runs (horizon x t_n)"),
    Rule.memory(NAMES[:-2], memory_estimate, what="the Monte Carlo chunks and the iff runs"),
    Rule.work(NAMES, work_estimate, what="the chapter"),
)


def run_lemma5(P):
    """The exact P(I) (orthogonal data, n/2 positive labels) at three widths on the (n, eps) grid, and the
    identical-inputs counterexample 1 - (3/4)^p at the necessity width."""
    rows = []
    for n in P.lemma5_ns:
        n = int(n)
        npl, nmi = n - n // 2, n // 2
        for eps in P.lemma5_eps:
            ps = dict(nec=T.lemma5_p_necessary(n, eps), code=T.width_rule(n, eps), suf=T.lemma5_p_sufficient(n, eps))
            pr = {k: (T.well_init_probability(npl, nmi, p) if p >= 1 else 0.0) for k, p in ps.items()}
            rows.append(dict(n=n, eps=eps, p=ps, P=pr, bound=T.well_init_lower_bound(n, ps["suf"]),
                             identical=1 - 0.75 ** ps["nec"]))
    return rows


def monte_carlo(n, p, draws, seed, identical=False, chunk=2000):
    """Monte Carlo P(I) with App-B initialisations (Gaussian w, random signs) on orthogonal data (n/2
    positive labels) or on n identical inputs with positive labels."""
    gen = torch.Generator().manual_seed(seed)
    hits = 0
    y = torch.cat([torch.ones(n - n // 2), -torch.ones(n // 2)]).to(DTYPE) if not identical else torch.ones(n, dtype=DTYPE)
    for start in range(0, draws, chunk):
        R_ = min(chunk, draws - start)
        a = 2.0 * torch.randint(0, 2, (R_, p), generator=gen).to(DTYPE) - 1
        if identical:
            Z = torch.randn(R_, p, 1, generator=gen, dtype=DTYPE).expand(R_, p, n)
        else:
            Z = torch.randn(R_, p, n, generator=gen, dtype=DTYPE)
        hits += int(metrics.well_initialised(a, Z, y).sum())
    return hits / draws


def run_mc(P):
    out = []
    for n in P.mc_ns:
        for key in ("nec", "code", "suf"):
            p = dict(nec=T.lemma5_p_necessary(n, 0.05), code=T.width_rule(n, 0.05), suf=T.lemma5_p_sufficient(n, 0.05))[key]
            mc = monte_carlo(n, p, P.mc_draws, seed=n * 100 + p)
            ex = T.well_init_probability(n - n // 2, n // 2, p)
            se = math.sqrt(max(ex * (1 - ex), 1e-12) / P.mc_draws)
            out.append(dict(n=n, p=p, key=key, mc=mc, exact=ex, z=abs(mc - ex) / se))
        p = T.lemma5_p_necessary(n, 0.05)
        mc = monte_carlo(n, p, P.mc_draws, seed=n * 100 + p + 1, identical=True)
        ex = 1 - 0.75 ** p
        out.append(dict(n=n, p=p, key="identical", mc=mc, exact=ex, z=abs(mc - ex) / math.sqrt(max(ex * (1 - ex), 1e-12) / P.mc_draws)))
    return out


def run_iff(P):
    """Orthogonal data, App-B initialisation: does every residual vanish exactly when the event I holds?"""
    n, p = P.iff_n, P.iff_p
    d = 2 * n
    X, y = datasets.weakly_interacting_draw(n, d, 777, orthogonal=True)
    s = X[torch.arange(n), torch.arange(n)]
    seeds = [int(s) for s in P.iff_seeds]
    a, Wn, off = RD.orthogonal_init(seeds, p, n, d)
    Z0 = Wn * s
    event = metrics.well_initialised(a, Z0, y)
    steps = int(P.iff_horizon * T.t_n(n, p))
    run = RD.orthogonal_gd(a, Z0, off, y, s, 1.0, steps, stop_rel=1e-24)
    h = (run.a[:, :, None] * torch.clamp_min(run.Z, 0)).sum(1) / p
    rel = ((y - h).abs() / y.abs()).amax(-1)
    fitted = rel < 1e-3
    unfit = ((y - h).abs() / y.abs() > 0.5).sum(-1)
    finite = torch.isfinite(run.loss).all(1)
    return dict(n=n, p=p, seeds=seeds, event=event, fitted=fitted, rel=rel, unfit=unfit, L=run.loss[torch.arange(len(seeds)), run.stopped_at],
                finite=finite, predicted=T.well_init_probability(int((y > 0).sum()), int((y < 0).sum()), p), steps=steps)


def run_prop3(P):
    """App. C.1 instance of the spec: x = e_1, e_2, y = (20, -10), w_1 = (0.10, 0.10), w_2 = (0.11, 0.09);
    a(0) = (1e-3, -1e-3) violates Assumption 1; the control a_j = s_j(norm(w_j) + 0.5) satisfies it.  The
    library's GD (1/p output, step p * lr on the 1/(2n) loss = the paper's step lr)."""
    X = torch.eye(2, dtype=DTYPE)
    y = torch.tensor([20.0, -10.0], dtype=DTYPE)
    W = torch.tensor([[0.10, 0.10], [0.11, 0.09]], dtype=DTYPE)
    a_bad = torch.tensor([1e-3, -1e-3], dtype=DTYPE)
    a_ok = torch.tensor([1.0, -1.0], dtype=DTYPE) * (W.norm(dim=1) + 0.5)
    params = Params(torch.stack([a_bad, a_ok]), torch.stack([W, W]))
    steps = int(round(P.prop3_time / P.prop3_lr))
    tr = train.gradient_descent(params, (X, y), RD.NET, steps=steps, lr=2 * P.prop3_lr, record_every=max(1, steps // 1000))
    L = RD.NET.loss(tr.final, X, y)
    wmin = float(W.min())
    wmax = float(W.max())
    cond = (math.sqrt(wmax * 8 / 20), 0.5, wmin / wmax)
    return dict(L=L, a=tr.final.a, Zx2=tr.final.W[..., 1], condition=cond, steps=steps, finite=torch.isfinite(L))


#: App. C.2: with sigma'(0) = 0 the neuron at the kink stays there (max |<w, x>| along the path, 0); with
#: sigma'(0) = 1 it regrows (<w, x> after the steps)
NO_REACTIVATION = C.below(1e-300, strict=False)
REGROWS = C.above(1e-6)


def run_kink(steps=200, lr=0.1):
    """App. C.2: a pair (j, i) at <w_j, x_i> = 0 with a_j r_i > 0.  With sigma'(0) = 0 (the library, torch)
    it stays at 0; with sigma'(0) = 1 (a hand-written step) it regrows."""
    X = torch.eye(3, dtype=DTYPE)
    y = torch.tensor([1.0, 1.0, -1.0], dtype=DTYPE)
    W = torch.tensor([[[0.0, 0.5, 0.0], [0.0, 0.0, 0.5]]], dtype=DTYPE)
    a = torch.tensor([[1.0, -1.0]], dtype=DTYPE)
    p, n = 2, 3
    r0 = y - RD.NET.forward(Params(a, W), X)
    tr = train.gradient_descent(Params(a, W), (X, y), RD.NET, steps=steps, lr=p * lr, snapshots=range(steps + 1))
    zero_path = tr.snap_W[:, 0, 0, 0]  # <w_1, x_1> at every step
    a2, Z = a.clone(), W.clone()
    for _ in range(steps):  # sigma'(0) = 1
        h = (a2[:, :, None] * torch.clamp_min(Z, 0)).sum(1) / p
        r = y - h
        act = (Z >= 0).to(DTYPE)
        ga = (torch.clamp_min(Z, 0) * r[:, None, :]).sum(-1) / n
        Z = Z + lr * (a2[:, :, None] / n) * act * r[:, None, :]
        a2 = a2 + lr * ga
    return dict(a_r=float(a[0, 0] * r0[0, 0]), max_zero_path=float(zero_path.abs().max()), regrown=float(Z[0, 0, 0]),
                finite_zero=metrics.finite_runs(tr.loss, tr.final), finite_one=metrics.finite_runs(a2, Z))


def findings(claims, iff, prop3):
    ok = claims.passed
    return "\n".join([
        f"- Lemma 5: the exact formula {'agrees' if ok('Lemma5/exact-vs-mc') else 'disagrees'} with Monte Carlo; sufficiency "
        f"{'holds' if ok('Lemma5/sufficient') else 'fails'}; necessity {'holds' if ok('Lemma5/necessary-orthogonal') else 'fails'} "
        f"on orthogonal data and {'holds' if ok('Lemma5/necessary-general') else 'fails'} for identical inputs, which "
        f"{'lie outside' if ok('Lemma5/counterexample-outside-A2') else 'satisfy'} Assumption 2: the statement lacks the hypothesis "
        f"its proof uses, and the proof's step in eq. (18) {'runs the other way' if ok('Lemma5/proof-step') else 'holds'}.",
        f"- Orthogonal iff: {int((iff['event'] == iff['fitted']).sum())} of {len(iff['event'])} runs agree "
        f"({int(iff['event'].sum())} with the event I).",
        f"- Proposition 3: the run violating Assumption 1 ends at L = {float(prop3['L'][0]):.6f}; the control at "
        f"{float(prop3['L'][1]):.2e}.",
    ])
