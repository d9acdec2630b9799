"""000, Sections 3.1.2-3.1.3, 4.3 and Appendix C.3: balancedness (Fig. 3.10, Lemma 5 = Lemma 10, checks
B1-B4, Fig. C.3, Arora et al.'s delta-balancedness) and model complexity against lambda (Fig. 3.11, T0,
Theorem 6, C1).

Training as in Chapter 3: m = 60, balanced initialisation, GD on the mean squared error (the thesis's
experiments); the gradient-flow runs use :func:`shallowflow.engine.flow.gradient_flow` on the same loss.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ...engine import data as datasets
from ...engine import init, metrics
from ... import verdicts as _C
from ...engine.config import DTYPE
from ...engine.flow import gradient_flow
from ...engine.models import Network, Params
from ...params import PROFILE, Float, Floats, Int, Ints, Rule, Sections, STEP_BUDGET, array_bytes, gd_bytes, gd_work
from . import common as Cm
from . import theory as T

SCHEMA = {
    "profile": PROFILE,
    "width": Int("number of hidden neurons m", low=1, high=10_000),
    "balance_scales": Floats("lambda of the balancedness runs (Fig. 3.10, B2)", low=0, low_open=True, high=1),
    "balance_lrs": Floats("the two step sizes compared by B1/B2 (MSE)", low=0, low_open=True, high=0.05, min_len=2),
    "balance_time": Float("training time of the smallest step: every balancedness run takes balance_time / "
                          "min(balance_lrs) epochs (the larger step trains max/min times longer)", low=0, low_open=True,
                          high=1e4),
    "c3_width": Int("m of Fig. C.3", low=1, high=10_000),
    "c3_steps": Int("epochs of Fig. C.3", low=1, high=1_000_000),
    "complexity_scales": Floats("lambda grid of Fig. 3.11", low=0, low_open=True, high=1000, min_len=3),
    "complexity_steps": Int("epochs of Fig. 3.11's runs", low=1, high=10_000_000),
    "lr": Float("GD step size of Figs 3.11 and C.3 (MSE)", low=0, low_open=True, high=1),
    "seeds": Ints("one run per seed and setting (Fig. C.3 and the exact flow: the first kept seed); a seed whose draw "
                  "violates Assumption 5 is rejected and named, not replaced", low=0, high=10_000, max_len=100),
    "starts": Int("random starts of the min-norm solver (C1)", low=1, high=10_000),
    # a list of distinct names from the activations (the Sections spec's validation, not chapter sections)
    "t0_activations": Sections("activations trained on Datasets 1.1.1 and 1.1.4 at the rich scales (T0 and Theorem 6 "
                               "check ReLU's; the others' norms are shown)", choices=T.ACTIVATIONS),
}
RULES = (Rule(("balance_lrs",), lambda P: len(set(P.balance_lrs)) == len(P.balance_lrs), "step sizes must differ"),
         Cm.assumption5_rule("seeds", "width"), Cm.assumption5_rule("seeds", "c3_width"),
         Cm.assumption5_rule("seeds", "width", "1.1.1"), Cm.assumption5_rule("seeds", "width", "1.1.4"))


def _balance_steps(P) -> int:
    return int(round(P.balance_time / min(P.balance_lrs)))


def memory_estimate(P) -> float:
    """The balancedness ensembles of the three activations (at most 202 snapshots, 2001 recorded losses, and
    the per-snapshot errors), the C.3 runs, Fig. 3.11's ensembles and the min-norm solver's starts (L-BFGS
    keeps 50 pairs); Dataset 1.1.0: n = d = 2."""
    steps = _balance_steps(P)
    R = len(P.balance_scales) * len(P.seeds) * len(P.balance_lrs)
    S = min(steps + 1, 202)
    bal = 3 * (gd_bytes(R, P.width, 2, 2, min(steps, 2000), 1, S) + array_bytes(S, R, P.width, copies=4))
    c3 = 3 * gd_bytes(1, P.c3_width, 2, 2, P.c3_steps, 100, min(P.c3_steps + 1, 302))
    rich = len([s for s in P.complexity_scales if s <= 1e-2])
    cx = gd_bytes((3 * len(P.complexity_scales) + 2 * len(P.t0_activations) * rich) * len(P.seeds), P.width, 2, 2, P.complexity_steps, 100)
    return bal + c3 + cx + array_bytes(P.starts, P.width, 3, copies=110)


def work_estimate(P) -> float:
    R = len(P.balance_scales) * len(P.seeds) * len(P.balance_lrs)
    rich = len([s for s in P.complexity_scales if s <= 1e-2])
    return 3 * (gd_work(R, P.width, 2, 2, _balance_steps(P)) + gd_work(1, P.c3_width, 2, 2, P.c3_steps)
                + gd_work(len(P.complexity_scales) * len(P.seeds), P.width, 2, 2, P.complexity_steps)
                + gd_work(P.starts, P.width, 2, 2, 4 * 200 * 5)) \
        + 2 * len(P.t0_activations) * gd_work(rich * len(P.seeds), P.width, 2, 2, P.complexity_steps)


NAMES = ("width", "balance_scales", "balance_lrs", "balance_time", "c3_width", "c3_steps", "complexity_scales",
         "complexity_steps", "seeds", "starts", "t0_activations")
RULES = RULES + (
    Rule(("balance_lrs",), lambda P: len(P.balance_lrs) == 2, "B1/B2 compare exactly two step sizes"),
    Rule.budget(("balance_time", "balance_lrs"), _balance_steps, STEP_BUDGET,
                what="the balancedness runs (balance_time / min(balance_lrs) epochs)"),
    Rule.memory(NAMES, memory_estimate, what="the ensembles and their snapshots"),
    Rule.work(NAMES, work_estimate, what="the chapter"),
)


def kept_seeds(P, data, m: int | None = None) -> list[int]:
    """The seeds of ``P.seeds`` that satisfy Assumption 5 on ``data`` at width m (default P.width), in order."""
    return Cm.assumption5_split(data, P.width if m is None else m, P.seeds)[0]


def seed_report(P) -> str:
    """The page's line on the seeds: run and rejected (with why) for each dataset and width the chapter uses."""
    lines = []
    for variant in ("1.1.0", "1.1.1", "1.1.4"):
        d = datasets.get("brisbois-orthogonal", variant=variant, device="cpu")
        for m in sorted({P.width, P.c3_width}) if variant == "1.1.0" else [P.width]:
            lines.append(f"Dataset {variant}, m = {m}: " + Cm.describe_seeds(*Cm.assumption5_split(d, m, P.seeds)))
    return "\n".join(lines)


# -- balancedness ---------------------------------------------------------------------------------
def run_balancedness(P) -> dict:
    """Fig. 3.10 / B2: per activation, lambda and step size, GD for the same training time; returns per
    activation the ensemble, the per-snapshot errors (theory.balancedness_errors) and the drift
    max_j abs((a_j^2 - ‖w_j‖^2)(T) - (a_j^2 - ‖w_j‖^2)(0)) per run."""
    data = datasets.get("brisbois-orthogonal", device="cpu")
    seeds = kept_seeds(P, data)
    lr_min = min(P.balance_lrs)
    steps = int(round(P.balance_time / lr_min))
    snaps = sorted(set(range(0, steps + 1, max(1, steps // 200))) | {steps})
    grid = Cm.combos(P.balance_scales, seeds, lrs=P.balance_lrs)
    ens = Cm.train_grid(data, T.ACTIVATIONS, P.width, grid, steps, snapshots=snaps, record_every=max(1, steps // 2000))
    out = {}
    for act, e in ens.items():
        err = balance_errors(e)
        q0 = metrics.balancedness(e.p0)
        drift = (metrics.balancedness(e.traj.final) - q0).abs().amax(1)
        out[act] = dict(ens=e, err=err, drift=drift.numpy(), snap_steps=np.array(e.traj.snap_steps))
    return out


def balance_errors(e: Cm.Ensemble) -> dict:
    """Per snapshot and run: theory.balancedness_errors of a_j against s_j ||w_j||, s_j the initial output signs."""
    return T.balancedness_errors(e.traj.snap_a, e.traj.snap_W, metrics.signs(e.p0)[None])


#: Fig. 3.10: ReLU, the largest l-infinity error |a_j - s_j ||w_j|| | over training; Sigmoid/Tanh, the final l1-average
#: error over the mean |a_j| ("mostly balanced, slight deviations")
FIG310_RELU = _C.below(1e-8)
FIG310_SMOOTH = _C.below(0.1)
#: B3 / Fig. C.3: ReLU output weights keep their initial sign (:func:`sign_flips`, the neurons that flip)
SIGNS_KEPT = _C.below(0, strict=False)


def sign_flips(a: np.ndarray, s: np.ndarray) -> int:
    """The neurons whose output weight a_j^t (snapshots x m) leaves its initial sign s_j (m,) at some snapshot."""
    return int((np.sign(a) != s[None]).any(0).sum())


def min_signed(a: np.ndarray, s: np.ndarray) -> float:
    """B3 ("a_j^t = s_j ||w_j^t|| > 0 for all t"): the smallest s_j a_j^t over the snapshots (snapshots x m) and
    neurons, s_j = sign(a_j^0): positive when every output weight stayed nonzero AND of its initial sign.  The
    smallest abs(a_j^t) alone stays positive on a sampled path that crosses zero between two snapshots."""
    return float((np.asarray(a) * np.asarray(s)[None]).min())


#: B3: min_signed > 0
NONZERO = _C.above(0.0, strict=True)


def drift_ratios(v: dict, balance_lrs, balance_scales) -> dict:
    """B1 / B2: per lambda, the drift of a_j^2 - ||w_j||^2 at the larger step over that at the smaller, one per seed
    (``v``: one activation's :func:`run_balancedness` entry)."""
    e = v["ens"]
    lo, hi = sorted(balance_lrs)
    pairs = [(e.runs(scale=lam, lr=lo, seed=mt["seed"])[0], e.runs(scale=lam, lr=hi, seed=mt["seed"])[0])
             for lam in balance_scales for mt in [e.meta[r] for r in e.runs(scale=lam, lr=lo)]]
    return {lam: np.array([v["drift"][b] / v["drift"][a] for a, b in pairs if e.meta[a]["scale"] == lam])
            for lam in balance_scales}


#: B2 (Sigmoid, Tanh): the drift does not depend on the step (ratio of the drifts at the two steps within [0.8, 1.25])
B2_STEP_INDEPENDENT = _C.within(0.8, 1.25)


def flow_drift(P, t_end: float) -> dict:
    """Lemma 5 / B2 under the exact gradient flow of the MSE (no step at all): per activation, the drift of
    a_j^2 - ‖w_j‖^2 at t_end (max over neurons), lambda = the smallest balance scale, first seed."""
    data = datasets.get("brisbois-orthogonal", device="cpu")
    seeds = kept_seeds(P, data)[:1]
    p0 = init.balanced(seeds, P.width, data.d, min(P.balance_scales), device="cpu")
    out = {}
    for act in T.ACTIVATIONS:
        fl = gradient_flow(p0, data, Network(act), t_end=t_end, loss="mean", rtol=1e-11)
        q0, q1 = metrics.balancedness(p0), metrics.balancedness(fl.final)
        out[act] = dict(drift=float((q1 - q0).abs().max()), scale=float(fl.final.W.norm(dim=-1).max() ** 2),
                        loss=float(fl.losses(0)[-1]), finite=metrics.finite_runs(fl.final).numpy())
    return out


def discrete_identity(act: str, steps: int = 200, lr: float = 0.05, m: int = 7, scale: float = 0.5, seed: int = 0) -> dict:
    """B1 ([derived]): along GD on the MSE, the per-step change of a_j^2 - ‖w_j‖^2 against
    -2 lr [a_j g_aj - <w_j, g_wj>] + lr^2 [g_aj^2 - ‖g_wj‖^2]; the largest absolute discrepancy, and
    the largest first-order term abs(a_j g_aj - <w_j, g_wj>) (zero for ReLU)."""
    data = datasets.get("brisbois-orthogonal", device="cpu")
    net = Network(act)
    p = init.balanced([seed], m, data.d, scale, device="cpu")
    err, first = 0.0, 0.0
    for _ in range(steps):
        _, ga, gW = net.gradients(p, data.X, data.y, loss="mean")
        q0 = metrics.balancedness(p)
        lin = p.a * ga - (p.W * gW).sum(-1)
        pred = q0 - 2 * lr * lin + lr ** 2 * (ga ** 2 - (gW ** 2).sum(-1))
        p = Params(p.a - lr * ga, p.W - lr * gW)
        err = max(err, float((metrics.balancedness(p) - pred).abs().max()))
        first = max(first, float(lin.abs().max()))
    return dict(error=err, first_order=first, finite=metrics.finite_runs(p).numpy())


#: Arora et al.'s delta-balancedness under GD: the drift of a a^T - W W^T (:func:`linear_balance_drift`) halves with the
#: step (the ratio of the drifts at consecutive halved steps within [1.8, 2.2]: first order in the step)
LINEAR_DRIFT = _C.within(1.8, 2.2)


def linear_balance_drift(lrs, time: float = 2.0, m: int = 5, d: int = 3, seed: int = 0) -> dict:
    """Arora et al.'s delta-balancedness for a two-layer *linear* network h(x) = a^T W x on Dataset 1.1.0
    (d = 2 padded to ``d`` with zeros): the drift of ‖a a^T - W W^T‖_F over a GD run of the given time,
    per step size (``drift``, keyed by lr) and one finiteness flag per run (``finite``).  Gradient flow
    conserves a a^T - W W^T exactly; GD drifts by O(lr) in total."""
    data = datasets.get("brisbois-orthogonal", device="cpu")
    X = torch.zeros(data.n, d, dtype=DTYPE)
    X[:, :data.d] = data.X
    y = data.y
    gen = torch.Generator().manual_seed(seed)
    a0 = 0.5 * torch.randn(m, generator=gen, dtype=DTYPE)
    W0 = 0.5 * torch.randn(m, d, generator=gen, dtype=DTYPE)
    out, finite = {}, []
    for lr in lrs:
        a, W = a0.clone(), W0.clone()
        M0 = torch.outer(a, a) - W @ W.T
        for _ in range(int(round(time / lr))):
            r = (X @ W.T) @ a - y  # (n,)
            ga = (2 / data.n) * (X @ W.T).T @ r
            gW = (2 / data.n) * torch.outer(a, r @ X)
            a, W = a - lr * ga, W - lr * gW
        out[lr] = float((torch.outer(a, a) - W @ W.T - M0).norm())
        finite.append(bool(torch.isfinite(a).all() and torch.isfinite(W).all()))
    return dict(drift=out, finite=np.array(finite))


def run_c3(P) -> dict:
    """Fig. C.3: a_j^t of every neuron, m = c3_width, lambda = 1e-6, three activations; per activation the
    snapshots of a and the initial signs."""
    data = datasets.get("brisbois-orthogonal", device="cpu")
    seeds = kept_seeds(P, data, P.c3_width)[:1]
    snaps = sorted(set(range(0, P.c3_steps + 1, max(1, P.c3_steps // 300))) | {P.c3_steps})
    ens = Cm.train_grid(data, T.ACTIVATIONS, P.c3_width, Cm.combos([1e-6], seeds, lrs=[P.lr]), P.c3_steps,
                        snapshots=snaps, record_every=100)
    return {act: dict(ens=e, a=e.traj.snap_a[:, 0].numpy(), s=metrics.signs(e.p0)[0].numpy(),
                      steps=np.array(e.traj.snap_steps)) for act, e in ens.items()}


# -- model complexity -----------------------------------------------------------------------------------
def run_complexity(P) -> dict:
    """Fig. 3.11: final ‖theta‖ per activation, lambda and seed (Dataset 1.1.0), plus ReLU on Datasets 1.1.1
    and 1.1.4 (c = 1) at the rich scales (T0, Theorem 6).  Runs stop at L < 1e-24 (the loss no longer
    moves the parameters)."""
    data = datasets.get("brisbois-orthogonal", device="cpu")
    seeds = kept_seeds(P, data)
    grid = Cm.combos(P.complexity_scales, seeds, lrs=[P.lr])
    ens = Cm.train_grid(data, T.ACTIVATIONS, P.width, grid, P.complexity_steps, record_every=100, stop_below=1e-24)
    rich = [s for s in P.complexity_scales if s <= 1e-2]
    others, others_all = {}, {}
    for variant in ("1.1.1", "1.1.4"):
        dv = datasets.get("brisbois-orthogonal", variant=variant, device="cpu")
        sv = kept_seeds(P, dv)
        ev = Cm.train_grid(dv, P.t0_activations, P.width, Cm.combos(rich, sv, lrs=[P.lr]), P.complexity_steps,
                           record_every=100, stop_below=1e-24)
        others_all[variant] = (dv, ev)
        if "relu" in ev:  # T0's closed-form min-norm value is ReLU's
            others[variant] = (dv, ev["relu"])
    return dict(data=data, ens=ens, others=others, others_all=others_all)


def final_norms(e: Cm.Ensemble) -> np.ndarray:
    return metrics.squared_norm(e.traj.final).sqrt().numpy()


#: Fig. 3.11 (rich regime): ||theta*|| is "low and constant" over lambda <= 1e-2: max/min over those lambda, per seed
#: the scales the thesis states on Fig. 3.11 (000_5bec2764affd87f0.txt, Section 3.1.1 (v)): "for lambda <= 10^{-2} (in
#: the rich regime), the model complexity is low and constant across all lambda"; the transition between the lazy and
#: rich regimes "appears to occur for lambda values between 10^{-2} and 1"
SOURCE_FIG311 = dict(rich_up_to=1e-2, transition=(1e-2, 1.0))
RICH_CONSTANT = _C.below(1.01)
#: Fig. 3.11 (lazy regime, lambda >= 1): ||theta*|| / ||theta^0|| ("linear in lambda": the parameters barely move)
LAZY_LINEAR = _C.within(0.85, 1.15)
#: T0 / Theorem 6: |final_norms / the min-norm value - 1| at lambda <= 1e-4 and at 1e-2; the final MSE (zero loss)
T0_MIN_NORM = _C.below(1e-3)
T0_NEAR_MIN_NORM = _C.below(5e-3)
THM6_ZERO_LOSS = _C.below(1e-10)
#: Theorem 6's limit (every T0 check passes) and B4 (every Fig. 3.10 check passes)
ALL_PASS = _C.is_true()
#: Fig. 3.11, ReLU at lambda = 100: the initial MSE over 1e5 (the outputs explode) and the final MSE (no convergence)
EXPLODES = _C.above(1.0)
NO_CONVERGENCE = _C.above(0.01)


def rich_constant_ratio(norms: np.ndarray) -> float:
    """The Fig3.11/*-rich-constant measurement for one seed: largest over smallest final norm across the rich lambda."""
    return float(np.max(norms) / np.min(norms))


def initial_norms(e: Cm.Ensemble) -> np.ndarray:
    return metrics.squared_norm(e.p0).sqrt().numpy()


#: C1 and Conjectures 1/2's min-norm limit: a solver's smallest interpolator norm over gradient descent's smallest rich
#: ||theta*|| (:func:`c1_ratio`), at least 0.99 (the spec: ">= 0.99 supports, 2% or more below refutes")
C1_SUPPORTS = _C.above(0.99)


def c1_ratio(best: float, gd_norms) -> float:
    """C1: the solver's best feasible norm (:func:`min_norm_interpolator`) over the smallest GD final norm."""
    return float(best / np.min(np.asarray(gd_norms, dtype=float)))


def min_norm_interpolator(act: str, m: int, starts: int, seed: int = 0, scale: float = 0.5,
                          penalties=(1e2, 1e4, 1e6, 1e8), iters: int = 200) -> dict:
    """C1: min ‖theta‖^2 subject to h(x_k) = y_k on Dataset 1.1.0 by a quadratic-penalty method
    (L-BFGS on ‖theta‖^2 + mu sum_k r_k^2 for increasing mu), from ``starts`` random starts batched as one
    objective; returns the norms and constraint residuals of every start and the best feasible norm."""
    data = datasets.get("brisbois-orthogonal", device="cpu")
    X, y = data.X, data.y
    gen = torch.Generator().manual_seed(seed)
    a = (scale * torch.randn(starts, m, generator=gen, dtype=DTYPE)).requires_grad_(True)
    W = (scale * torch.randn(starts, m, data.d, generator=gen, dtype=DTYPE)).requires_grad_(True)
    for mu in penalties:
        opt = torch.optim.LBFGS([a, W], lr=1, max_iter=iters, tolerance_grad=1e-12, tolerance_change=1e-15,
                                history_size=50, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            h = torch.einsum("rm,rmn->rn", a, T.sigma(W @ X.T, act))
            f = ((a ** 2).sum() + (W ** 2).sum()) + mu * ((h - y) ** 2).sum()
            f.backward()
            return f
        opt.step(closure)
    with torch.no_grad():
        h = torch.einsum("rm,rmn->rn", a, T.sigma(W @ X.T, act))
        res = (h - y).abs().amax(1)
        norms = ((a ** 2).sum(1) + (W ** 2).sum((1, 2))).sqrt()
    feas = res < 1e-4
    best = float(norms[feas].min()) if feas.any() else float("nan")
    return dict(norms=norms.numpy(), residuals=res.numpy(), feasible=int(feas.sum()), best=best)


def _index(meta: list[dict], keys: tuple) -> dict:
    """The runs of an ensemble's ``meta`` by their exact values of ``keys`` (the dry plan's lookups)."""
    out: dict = {}
    for r, mt in enumerate(meta):
        out.setdefault(tuple(mt[k] for k in keys), []).append(r)
    return out


def plan(P) -> None:
    """Dry plan (issue 29 item 6, :func:`shallowflow.params.dry_plan`): the ensembles' layouts (kept seeds x
    lambda x step) and every run the chapter looks up in them (Figs 3.10, 3.11, B1/B2's pairs, C1 and T0's rich
    runs), without training; a combination that would leave a lookup empty is refused, naming the parameter."""
    from ...params import ParameterError, short

    lo, hi = sorted(P.balance_lrs)  # B2: the rule makes them two
    if not any(s <= 1e-4 for s in P.complexity_scales):  # C1 and T0 take the min over lambda <= 1e-4
        raise ParameterError(f"parameter 'complexity_scales' = {short(P.complexity_scales)} is invalid: it needs a "
                             f"lambda <= 1e-4 (C1, T0 and Fig. 3.11's rich runs are read there)")
    data = datasets.get("brisbois-orthogonal", device="cpu")
    seeds = kept_seeds(P, data)
    bal = Cm.Ensemble("relu", None, None, Cm.combos(P.balance_scales, seeds, lrs=P.balance_lrs))
    bal.runs(scale=min(P.balance_scales), lr=min(P.balance_lrs))[0]  # Fig. 3.10
    # the lookups below go through an exact index first (a run with exactly these values is a match of
    # Ensemble.runs, which compares to 1e-12 relative) and fall back to Ensemble.runs only when it has none:
    # the same lookups, linear in the grid's size instead of quadratic (issue 38 N4: 10,000 balance_scales)
    by_sl, by_sls = _index(bal.meta, ("scale", "lr")), _index(bal.meta, ("scale", "lr", "seed"))
    for lam in P.balance_scales:  # B2's pairs of steps per seed
        for r in by_sl.get((lam, lo)) or bal.runs(scale=lam, lr=lo):
            if (lam, hi, bal.meta[r]["seed"]) not in by_sls:
                bal.runs(scale=lam, lr=hi, seed=bal.meta[r]["seed"])[0]
    cx = Cm.Ensemble("relu", None, None, Cm.combos(P.complexity_scales, seeds, lrs=[P.lr]))
    by_ss = _index(cx.meta, ("scale", "seed"))
    for seed in sorted({mt["seed"] for mt in cx.meta}):  # Fig. 3.11 and its rich-constant check
        [by_ss.get((float(s), seed)) or cx.runs(scale=float(s), seed=seed)[0] for s in P.complexity_scales]
    kept_seeds(P, data, P.c3_width)[0]  # Fig. C.3
    for variant in ("1.1.1", "1.1.4"):  # T0 on the other datasets
        kept_seeds(P, datasets.get("brisbois-orthogonal", variant=variant, device="cpu"))[0]
