"""001, chapter *convergence*: Theorem 1 / Corollary 1 in Gram space (any d), Lemmas 1, 2, 3, 4 and 6.

Everything runs through the exact Gram-space reduction :func:`.reductions.gram_gd` (Bartlett-sampled
Gram matrices, :func:`shallowflow.engine.data.bartlett_gram`), so the dimension d = 10^6 of Theorem 1 costs
the same as d = 100."""
from __future__ import annotations

import math

import numpy as np
import torch

from shallowflow.engine import checkpoint
from shallowflow import verdicts as C
from shallowflow.engine import data as datasets
from shallowflow.engine.config import DTYPE
from shallowflow.params import PROFILE, STEP_BUDGET, Bool, Float, Floats, Int, Ints, Rule, array_bytes, gd_work, memory_limit

from . import reductions as RD
from . import theory as T

# the chapter's criterion on the binomial p-value of the failures under a failure rate eps (Thm1, Cor1); the
# negative controls of tests/test_null_weakly_interacting.py and tests/test_controls_weakly_interacting.py use it
BINOMIAL = C.above(0.05)

#: Theorem 1, eq. (6): its violations over every iterate of every run (CV.summary's v6), none
THM1_BOUND6 = C.below(0.5)

#: Theorem 1: <mu_inf> >= C/n, the final mu n / C of every converged run (CV.summary's late) at least 1
THM1_LATE_MU = C.above(1.0)

SCHEMA = {
    "profile": PROFILE,
    "ns": Ints("Theorem 1: dataset sizes n", low=2, high=400),
    "log_ns": Ints("Theorem 1 also at these n, where the width rule's p ~ log n is below n (the theorem's regime); "
                   "empty: none", low=2, high=400, min_len=0),
    "d": Float("Theorem 1: input dimension (any: Gram space)", low=2, high=1e12),
    "seeds": Ints("Theorem 1 and Corollary 1: the runs' seeds, the same at every n (run s: initialisation from seed s, its own "
                  "data set from seed (tag, n, s); a data set that violates Assumption 2 rejects its seed, reported, not replaced)",
                  low=0, high=10**9, min_len=1, max_len=2000),
    "eps": Float("failure probability epsilon of Lemma 5's width rule", low=1e-4, high=0.5),
    "lr": Float("GD step (time per step, p-accelerated flow)", low=1e-4, high=2, low_open=True),
    "max_steps": Int("step cap per run", low=10, high=10**6),
    "scales": Floats("initialisation scales (w and a multiplied), for 'any scale'", low=1e-6, high=100, low_open=True),
    "scale_seeds": Ints("the any-scale runs' seeds, the same at every scale (data as Theorem 1's, rejected seeds reported)",
                        low=0, high=10**9, min_len=1, max_len=1000),
    "kappas": Floats("Corollary 1: d = kappa n^2", low=1, high=1e6),
    "cor_n": Int("Corollary 1: n", low=2, high=200),
    "lrs": Floats("Lemmas 1-2: step sizes at a fixed flow time", low=1e-4, high=2, low_open=True, min_len=2),
    "horizon": Float("Lemmas 1-2: flow time", low=1, high=1e5),
    "l12_n": Int("Lemmas 1-2: orthogonal dataset size (Exp-2 size)", low=2, high=20000),
    "l3_ns": Ints("Lemma 3: dataset sizes", low=2, high=300, min_len=2),
    "l3_draws": Int("Lemma 3: data sets per dimension", low=20, high=10**5),
    "l4_ns": Ints("Lemma 4: orthogonal dataset sizes", low=2, high=5000),
    "l4_ps": Ints("Lemma 4: widths", low=2, high=10**5, min_len=2),
    "l4_draws": Int("Lemma 4: initialisations per (n, p)", low=20, high=10**6),
    "l6_ns": Ints("Lemma 6: dataset sizes", low=2, high=10**4),
    "l6_ps": Ints("Lemma 6: widths", low=1, high=10**4),
    "l6_draws": Int("Lemma 6: initialisations per (n, p)", low=10, high=10**6),
    "resume": Bool("keep each finished unit (Theorem 1 at one n, one initialisation scale, Corollary 1 at one kappa, Lemma 4 "
                   "at one (n, p); each seeded by itself) on disk and read it back when the same parameters run again with "
                   "the same package code (shallowflow.engine.checkpoint): an interrupted paper run resumes where it stopped with "
                   "identical numbers; off in the book and smoke profiles"),
}


def _resumable(P, chunks, compute):
    """:func:`shallowflow.engine.checkpoint.resumable` under every parameter of the run (a changed one recomputes all),
    on only where ``P.resume``."""
    key = {k: v for k, v in sorted(vars(P).items()) if k not in ("profile", "resume")}
    return checkpoint.resumable("weakly-interacting/convergence", key, list(chunks), compute,
                                enabled=bool(getattr(P, "resume", False)))


def _scale_steps(P, s: float) -> tuple[float, int]:
    """Step size and step count of the any-scale run at scale s (as :func:`run_theorem1`)."""
    return P.lr / max(1.0, s * s), int(P.max_steps * max(1.0, s * s) * (1 + max(0.0, math.log10(1 / s))))


def _gram_runs(P):
    """(runs, n, p, steps, deltas) of every Gram-space GD run: Theorem 1 per n (and log_ns), the scales, Corollary 1,
    Lemmas 1-2 (the only run that records every neuron's balancedness, ``deltas``)."""
    out = [(len(P.seeds), n, T.width_rule(n, P.eps), P.max_steps, False) for n in sorted(set(P.ns) | set(P.log_ns))]
    out += [(len(P.scale_seeds), max(P.ns), T.width_rule(max(P.ns), P.eps), _scale_steps(P, s)[1], False) for s in P.scales]
    out += [(len(P.seeds), P.cor_n, T.width_rule(P.cor_n, P.eps), P.max_steps, False) for _ in P.kappas]
    out += [(1, min(P.ns), T.width_rule(min(P.ns), P.eps), int(round(P.horizon / max(P.lrs))), True)]
    return out


def _gram_bytes(R, n, p, steps, deltas):
    """gram_gd's records: five (runs, steps) series, the two (runs, steps, p) balancedness ones where ``deltas``,
    and the Gram matrices."""
    return (array_bytes(R, steps + 1, copies=5) + deltas * array_bytes(R, steps + 1, p, copies=2)
            + array_bytes(R, n, n, copies=4))


L4_CHUNK_BYTES = 2 ** 29  # a Lemma-4 chunk's arrays at most (512 MiB): larger batches are not faster
L4_COPIES = 6  # arrays of one Lemma-4 draw's (p, n) size alive at once in mu0_orthogonal (W, Z, relu(Z), act, products)


def l4_chunk(n, p, draws, limit=None):
    """Lemma 4's draws per chunk at (n, p): as many as fit a quarter of the memory limit (``limit``, default
    :func:`shallowflow.params.memory_limit`) and L4_CHUNK_BYTES (larger batches are not faster), at least one, at
    most ``draws``.  Every draw is seeded by itself, so the numbers do not depend on the chunk (tested)."""
    per = array_bytes(p, n, copies=L4_COPIES)
    budget = min((memory_limit() if limit is None else limit) / 4, L4_CHUNK_BYTES)
    return int(max(1, min(draws, budget // per)))


def memory_estimate(P) -> float:
    """Every Gram-space run's records (Theorem 1 and the scales keep theirs), or the largest of the Lemma 1-2
    orthogonal runs (data n x 2000, records per step), Lemma 3's Bartlett draws, Lemma 4's and 6's chunks."""
    n2 = P.l12_n
    d2 = max(2000, n2)
    lemma12 = array_bytes(n2, d2, copies=2) + max(array_bytes(int(round(P.horizon / lr)) + 1, copies=6) for lr in P.lrs)
    lemma3 = max(array_bytes(P.l3_draws, n, n, copies=4) for n in P.l3_ns)
    lemma4 = max(array_bytes(n, 2000) + array_bytes(l4_chunk(n, p, P.l4_draws), p, n, copies=L4_COPIES)
                 for n in P.l4_ns for p in P.l4_ps)
    lemma6 = max(array_bytes(n, 100) + array_bytes(100, p, 100, copies=3) + array_bytes(100, p, n, copies=3)
                 for n in P.l6_ns for p in P.l6_ps)
    return sum(_gram_bytes(*r) for r in _gram_runs(P)) + max(lemma12, lemma3, lemma4, lemma6)


def work_estimate(P) -> float:
    """Gram-space GD (runs x p x n^2 per step), the Lemma 1-2 orthogonal runs (about 10 operations per neuron
    and point per step), Lemma 3's 14 bisection steps (draws x n^3), Lemma 4's and 6's draws."""
    w = sum(gd_work(R, p, n, n, steps) for R, n, p, steps, _ in _gram_runs(P))
    p2 = T.width_rule(P.l12_n, P.eps)
    w += sum(10 * gd_work(1, p2, P.l12_n, 0, P.horizon / lr) for lr in P.lrs)
    w += sum(14 * gd_work(P.l3_draws, n, n, n, 1) for n in P.l3_ns)
    w += sum(10 * gd_work(P.l4_draws, p, n, 0, 1) for n in P.l4_ns for p in P.l4_ps)
    w += sum(gd_work(P.l6_draws, p, n, 100, 1) for n in P.l6_ns for p in P.l6_ps)
    return w


NAMES = ("ns", "seeds", "eps", "lr", "max_steps", "scales", "scale_seeds", "kappas", "cor_n", "lrs", "horizon",
         "l12_n", "l3_ns", "l3_draws", "l4_ns", "l4_ps", "l4_draws", "l6_ns", "l6_ps", "l6_draws")
RULES = (
    Rule(("seeds",), lambda P: len(set(P.seeds)) == len(P.seeds), "seeds must be distinct"),
    Rule(("scale_seeds",), lambda P: len(set(P.scale_seeds)) == len(P.scale_seeds), "scale_seeds must be distinct"),
    Rule(("ns", "d"), lambda P: max(P.ns) <= P.d, "Theorem 1 needs d >= n (Bartlett)"),
    Rule(("log_ns", "d"), lambda P: max(P.log_ns, default=0) <= P.d, "Theorem 1 needs d >= n (Bartlett)"),
    Rule(("l4_ns",), lambda P: max(P.l4_ns) <= 2000, "Lemma 4 uses d = 2000 >= n"),
    Rule.budget(("max_steps", "scales"), lambda P: max(_scale_steps(P, s)[1] for s in P.scales), STEP_BUDGET,
                what="the any-scale runs (max_steps x scale^2 steps)"),
    Rule.budget(("horizon", "lrs"), lambda P: P.horizon / min(P.lrs), STEP_BUDGET, what="Lemmas 1-2 (horizon / lr)"),
    Rule.memory(NAMES, memory_estimate, what="the runs' records"),
    Rule.work(NAMES, work_estimate, what="the chapter"),
    # last, once the budgets hold: it draws data sets (O(n^3) each), one seed at a time, stopping at the first valid
    Rule(("ns", "log_ns", "d", "seeds"), lambda P: _every_n_has_valid_data(P),
         "Theorem 1 is conditional on Assumption 2: at some n every seed's data set violates it (d too small for that "
         "n: the specification takes d of about 600 n^2)"),
)


def _every_n_has_valid_data(P) -> bool:
    """Whether at every n of ns and log_ns some seed's data set satisfies Assumption 2 (the draws the run makes: a
    few seconds at the paper's 200 seeds and n = 100, since Bartlett data cost O(n^3) whatever d)."""
    if max(list(P.ns) + list(P.log_ns)) > P.d:
        return True  # refused by the d >= n rule, in its own words
    return all(any(valid_gram_seeds(n, P.d, [s], tag=1)[2] for s in P.seeds)  # a seed's draw is its own
               for n in sorted(set(P.ns) | set(P.log_ns)))


def assumption2_ok(G, y):
    """Whether each data set satisfies Assumption 2, and the ratio norm(G - D) / bound."""
    n = G.shape[-1]
    dg = torch.diagonal(G, dim1=1, dim2=2)
    off = torch.linalg.matrix_norm(G - torch.diag_embed(dg), ord=2)
    cxm2 = dg.amin(-1)
    bound = cxm2 / (2 * math.sqrt(n)) * y.abs().amin(-1) / y.abs().amax(-1)
    return off < bound, off / bound


def data_constants(G, y):
    dg = torch.diagonal(G, dim1=1, dim2=2)
    return dg.amin(-1).sqrt(), dg.amax(-1).sqrt(), y.abs().amin(-1), y.abs().amax(-1)


def data_seed(tag, n, s, extra=0):
    """The data seed of run s at n (tag 1: Theorem 1, 2: the scales, 3: Corollary 1 with extra = 1000 kappa):
    one integer from NumPy's SeedSequence, so runs, sizes and experiments never share a draw."""
    return int(np.random.SeedSequence([int(tag), int(n), int(extra), int(s)]).generate_state(1)[0])


def gram_data(n, d, seeds, tag, extra=0):
    """One Bartlett data set per seed (its own draw: the same alone or in any batch): G (R, n, n), y (R, n)."""
    Gs, ys = zip(*[datasets.bartlett_gram(n, int(d), 1, seed=data_seed(tag, n, s, extra)) for s in seeds])
    return torch.cat(Gs), torch.cat(ys)


def valid_gram_seeds(n, d, seeds, tag):
    """The seeds whose data set satisfies Assumption 2 (Theorem 1 is conditional on it): (G, y, kept, rejected);
    a rejected seed is reported, never replaced by another draw."""
    seeds = [int(s) for s in seeds]
    G, y = gram_data(n, d, seeds, tag)
    ok = assumption2_ok(G, y)[0]
    return G[ok], y[ok], [s for s, o in zip(seeds, ok.tolist()) if o], [s for s, o in zip(seeds, ok.tolist()) if not o]


def _valid_gram(n, d, count, seed):
    """``count`` Bartlett data sets satisfying Assumption 2 (rejection), and the rejection rate."""
    Gs, ys, drawn = [], [], 0
    s = seed
    while sum(g.shape[0] for g in Gs) < count:
        G, y = datasets.bartlett_gram(n, int(d), count, seed=s)
        ok, _ = assumption2_ok(G, y)
        Gs.append(G[ok])
        ys.append(y[ok])
        drawn += count
        s += 1
    G, y = torch.cat(Gs)[:count], torch.cat(ys)[:count]
    return G, y, drawn


def run_gram(G, y, seeds, p, d, lr, steps, scale=1.0):
    a, V0, nw0 = RD.gram_init(G, seeds, p, d, scale=scale)
    cxm, cxp, cym, _ = data_constants(G, y)
    C = T.theorem1_C(cxm, cxp, cym)
    run = RD.gram_gd(G, y, a, V0, nw0, lr, steps, stop_rel=1e-20, C=C, deltas=False)
    return run, C


def run_theorem1(P):
    """Theorem 1 at every n of P.ns: p from the width rule, one Bartlett data set per seed (seeds whose data
    violate Assumption 2 are rejected and reported), App-B init from the seed; then the initialisation-scale
    sweep at the largest n."""
    def theorem1_at(chunk):
        n = chunk[1]
        p = T.width_rule(n, P.eps)
        G, y, kept, rejected = valid_gram_seeds(n, P.d, P.seeds, tag=1)
        if not kept:
            raise ValueError(f"n = {n}: every seed's data set violates Assumption 2 ({list(P.seeds)}); raise d or give other seeds")
        run, C = run_gram(G, y, kept, p, int(P.d), P.lr, P.max_steps)
        return dict(n=n, p=p, run=run, C=C, seeds=kept, rejected=rejected)

    # the scale sweep below stays at max(P.ns)
    out = {"per_n": _resumable(P, [("thm1", n) for n in list(P.ns) + sorted(set(P.log_ns) - set(P.ns))], theorem1_at)}
    n = max(P.ns)
    p = T.width_rule(n, P.eps)
    G, y, kept, rejected = valid_gram_seeds(n, P.d, P.scale_seeds, tag=2)
    if not kept:
        raise ValueError(f"n = {n}: every scale seed's data set violates Assumption 2 ({list(P.scale_seeds)})")
    out["scale_seeds"], out["scale_rejected"] = kept, rejected

    def at_scale(chunk):
        s = chunk[1]
        lr, steps = _scale_steps(P, s)
        run, C = run_gram(G, y, kept, p, int(P.d), lr, steps, scale=s)
        return dict(scale=s, lr=lr, run=run, C=C, n=n)

    out["scales"] = _resumable(P, [("scale", s) for s in P.scales], at_scale)
    return out


def binom_pvalue(fails, total, eps):
    """P(Binom(total, eps) >= fails): how compatible the failures are with a failure rate eps."""
    from scipy import stats

    return float(stats.binom.sf(fails - 1, total, eps)) if fails > 0 else 1.0


def summary(run, C, n):
    """Per run: converged (L/L0 < 1e-20), violations of eq. (6) and Lemma 7, final mu * n / C, finite."""
    L = run.loss
    ok = torch.isfinite(L).all(1) & torch.isfinite(run.mu).all(1)
    conv = L[:, -1] < 1e-20 * L[:, 0]
    tol = 1e-9
    v6 = (run.mu < run.rhs6 * (1 - tol)).sum(1)
    v7 = ((run.mu < run.low7 * (1 - tol)) | (run.mu > run.upp7 * (1 + tol))).sum(1)
    k = run.stopped_at
    late = run.mu[torch.arange(L.shape[0]), k] * n / C
    return dict(converged=conv, v6=v6, v7=v7, late=late, finite=ok, steps=k, event=run.event)


def run_corollary1(P):
    """Corollary 1: fresh random data (no rejection) in d = kappa n^2."""
    n = P.cor_n
    p = T.width_rule(n, P.eps)

    def at_kappa(chunk):
        kappa = chunk[1]
        d = int(kappa * n * n)
        G, y = gram_data(n, d, P.seeds, tag=3, extra=int(round(1000 * kappa)))
        ok, _ = assumption2_ok(G, y)
        run, C = run_gram(G, y, list(P.seeds), p, d, P.lr, P.max_steps)
        s = summary(run, C, n)
        s["late_mu_n"] = run.mu[torch.arange(len(P.seeds)), run.stopped_at] * n
        return dict(kappa=kappa, d=d, assumption2=ok, **s)

    return dict(n=n, p=p, rows=_resumable(P, [("cor1", k) for k in P.kappas], at_kappa))


def gd_with_sign_flips(a0, Wn, off, y, s, lr, steps):
    """Lemma 1's sign test: GD on orthogonal data (:func:`reductions.orthogonal_gd`) from (a0, Wn, off), and the
    number of (step, neuron) pairs at which a_j has another sign than a_j(0)."""
    flips = torch.zeros(1, dtype=torch.int64)

    def track(k, a, Z, r, L, mu, alive, flips=flips):
        flips += (torch.sign(a) != torch.sign(a0)).sum()

    return RD.orthogonal_gd(a0, Wn * s, off, y, s, lr, steps, track=track), int(flips)


#: Lemma 1: a_j keeps its sign (sign flips over all steps and step sizes, none)
NO_SIGN_FLIP = C.below(0.5)


#: Lemma 1: the largest one-step increase of delta_j = a_j^2 - norm(w_j)^2 (:func:`largest_delta_increase`) is 0 up to
#: round-off
LEMMA1_MONOTONE = C.below(1e-12)


def largest_delta_increase(g) -> float:
    """Lemma 1 on a :func:`reductions.gram_gd` run: the largest change delta_j(k+1) - delta_j(k) over neurons, steps
    and runs (non-positive when the lemma holds)."""
    return float((g.delta[:, 1:] - g.delta[:, :-1]).max())


def run_lemmas12(P):
    """Lemmas 1-2.  (i) The one-step identity delta' - delta = lr^2 (g_a^2 - norm(g_w)^2) and its sign, in
    Gram space (n = min(P.ns), d = P.d).  (ii) Drift and the average-PL identity on an Exp-2-size problem
    (orthogonal data, n = P.l12_n, d = 2000): the same initialisation trained at every step of P.lrs up
    to the flow time P.horizon, no early stop."""
    n = min(P.ns)
    p = T.width_rule(n, P.eps)
    G, y, _ = _valid_gram(n, P.d, 1, seed=77)
    a, V0, nw0 = RD.gram_init(G, [3], p, int(P.d))
    g = RD.gram_gd(G, y, a, V0, nw0, max(P.lrs), int(round(P.horizon / max(P.lrs))), stop_rel=0.0)
    inc = g.delta[:, 1:] - g.delta[:, :-1]
    ident = float((inc - g.delta_step[:, :-1]).abs().max() / g.delta[:, 0].abs().max())
    gram = dict(n=n, p=p, identity=ident, max_inc=largest_delta_increase(g), finite=bool(torch.isfinite(g.loss).all()))
    n2 = P.l12_n
    d = max(2000, n2)
    p2 = T.width_rule(n2, P.eps)
    X, yo = datasets.weakly_interacting_draw(n2, d, 12, orthogonal=True)
    s = X[torch.arange(n2), torch.arange(n2)]
    a0, Wn, off = RD.orthogonal_init([5], p2, n2, d)
    rows = []
    for lr in P.lrs:
        steps = int(round(P.horizon / lr))
        run, flips = gd_with_sign_flips(a0, Wn, off, yo, s, lr, steps)
        d0 = a0 ** 2 - (Wn ** 2).sum(-1) - off
        d1 = run.a ** 2 - ((run.Z / s) ** 2).sum(-1) - off
        logratio = torch.log(run.loss[:, 0] / run.loss[:, -1])
        musum = lr * run.mu[:, :-1].sum(1)
        rows.append(dict(lr=lr, steps=steps, drift=float(((d1 - d0).abs() / d0.abs()).max()), flips=int(flips),
                         lemma2=float(((musum - logratio).abs() / logratio.abs()).max()),
                         finite=bool(torch.isfinite(run.loss).all() and torch.isfinite(run.Z).all())))
    return dict(n=n2, p=p2, rows=rows, gram=gram)


def required_dimension(n, draws, seed=0, level=0.95, lo=None, hi=None, iters=14):
    """Lemma 3: the smallest d (bisection in log d) at which a fraction >= ``level`` of ``draws``
    Bartlett data sets satisfies Assumption 2."""
    lo = lo or float(n)
    hi = hi or 1e4 * n * n

    def frac(d):
        G, y = datasets.bartlett_gram(n, int(d), draws, seed=seed)
        return float(assumption2_ok(G, y)[0].double().mean())

    for _ in range(iters):
        mid = math.sqrt(lo * hi)
        if frac(mid) >= level:
            hi = mid
        else:
            lo = mid
    return hi


def run_lemma3(P):
    """Lemma 3: the dimension each n needs (bisection over d), and the log-log slope of d* against n."""
    ds = [required_dimension(n, P.l3_draws, seed=31 + n) for n in P.l3_ns]
    slope = float(np.polyfit(np.log(P.l3_ns), np.log(ds), 1)[0])
    return dict(ns=list(P.l3_ns), d_star=ds, slope=slope)


def _l4_draw(n, p, d, seed, i):
    """Draw i of Lemma 4 at (n, p): (W restricted to the data's n coordinates, a), from its own generator
    (seed, n, p, i), so a draw is the same whatever chunk it is computed in."""
    gen = torch.Generator().manual_seed(int(np.random.SeedSequence([int(seed), int(n), int(p), int(i)]).generate_state(1)[0]))
    Wn = torch.randn(p, n, generator=gen, dtype=DTYPE) / math.sqrt(d)
    offm = 2 * torch._standard_gamma(torch.full((p,), (d - n) / 2, dtype=DTYPE), generator=gen) / d
    nw = (Wn ** 2).sum(-1) + offm
    sg = 2.0 * torch.randint(0, 2, (p,), generator=gen).to(DTYPE) - 1
    return Wn, sg * (nw.sqrt() + torch.empty(p, dtype=DTYPE).exponential_(1.0, generator=gen))


def mu0_orthogonal(n, p, draws, seed, d=2000, chunk=None):
    """n mu(0) (eq. 24) for ``draws`` App-B initialisations on one orthogonal data set of size n, computed
    ``chunk`` draws at a time (default :func:`l4_chunk`: what a quarter of the memory limit holds); each draw
    has its own generator, so the values are the same for any chunk."""
    X, y = datasets.weakly_interacting_draw(n, d, seed, orthogonal=True)
    s = X[torch.arange(n), torch.arange(n)]
    chunk = l4_chunk(n, p, draws) if chunk is None else max(1, int(chunk))
    out = []
    for start in range(0, draws, chunk):
        Ws, As = zip(*[_l4_draw(n, p, d, seed, i) for i in range(start, min(draws, start + chunk))])
        Z = torch.stack(Ws) * s
        a = torch.stack(As)
        h = (a[:, :, None] * torch.clamp_min(Z, 0)).sum(1) / p
        out.append(n * RD.ortho_mu(a, Z, y - h, s ** 2))
        del Z, a, h
    return torch.cat(out).numpy()


#: Lemma 4: n mu(0) is asymptotically normal in p (the KS p-value of the standardised draws at the largest p)
LEMMA4_NORMAL = C.above(0.01)


def run_lemma4(P):
    """Lemma 4: mean, p-scaled variance and a normality test of n mu(0) over draws, on orthogonal data."""
    def at(chunk):
        _, n, p = chunk
        v = mu0_orthogonal(n, p, P.l4_draws, seed=4000 + n)
        return dict(n=n, p=p, mean=float(v.mean()), pvar=float(p * v.var(ddof=1)), ks=T.ks_normal_pvalue(v), values=v)

    return _resumable(P, [("lemma4", n, p) for n in P.l4_ns for p in P.l4_ps], at)


def pvar_ratio_interval(v1, v2, p1, p2, boot=2000, level=0.95, seed=0):
    """p2 Var(v2) / (p1 Var(v1)) for two independent samples of n mu(0) (Lemma 4 at widths p1 < p2), with a
    ``level`` bootstrap interval (each sample resampled by itself): what the draws resolve of the ratio."""
    v1, v2 = np.asarray(v1, float), np.asarray(v2, float)
    rng = np.random.default_rng(seed)
    b1 = v1[rng.integers(0, v1.size, (boot, v1.size))].var(axis=1, ddof=1)
    b2 = v2[rng.integers(0, v2.size, (boot, v2.size))].var(axis=1, ddof=1)
    tail = 100 * (1 - level) / 2
    lo, hi = np.percentile(p2 * b2 / (p1 * b1), [tail, 100 - tail])
    return float(p2 * v2.var(ddof=1) / (p1 * v1.var(ddof=1))), float(lo), float(hi)


def run_lemma6(P, d=100, chunk=100):
    """Lemma 6: the fraction of App-B initialisations with L(theta_0) <= 2 (C_y^+)^2 (sphere data, d)."""
    from shallowflow.engine import init

    rows = []
    for n in P.l6_ns:
        X, y = datasets.weakly_interacting_draw(n, d, 600 + n)
        bound = 2 * float(y.abs().max()) ** 2
        for p in P.l6_ps:
            Ls = []
            for start in range(0, P.l6_draws, chunk):
                seeds = list(range(start, min(P.l6_draws, start + chunk)))
                Pm = init.asymmetric([10_000 * p + s for s in seeds], p, d, device="cpu")
                Ls.append(RD.NET.loss(Pm, X, y))
            L = torch.cat(Ls)
            rows.append(dict(n=n, p=p, frac=float((L <= bound).double().mean()), mean=float(L.mean()),
                             max=float(L.max()), bound=bound))
    return rows


def findings(claims, P, l12, l3):
    """The chapter's summary, generated from its verdicts and measurements."""
    ok = claims.passed
    out = []
    out.append(f"- Theorem 1 at d = {P.d:g}: the success rate is {'compatible' if ok('Thm1/success') else 'not compatible'} "
               f"with 1 - eps, eq. (6) {'held' if ok('Thm1/bound6') else 'was violated'} at every iterate, and the "
               f"final curvature {'was' if ok('Thm1/late-mu') else 'was not'} above C/n in every converged run; "
               f"the any-scale claim {'holds' if ok('Thm1/any-scale') else 'fails'} on scales {P.scales}.")
    widths = {n: T.width_rule(n, P.eps) for n in sorted(set(P.ns) | set(P.log_ns))}
    small = [n for n, p in widths.items() if p < n]
    out.append(f"- The width rule gives p = {', '.join(f'{p} at n = {n}' for n, p in widths.items())}: "
               + (f"the theorem's regime p ~ log n < n is tested at n = {small} and "
                  f"{'holds' if ok('Thm1/log-width') else 'does not hold'} there." if small else
                  "p >= n at every n of this run, so the theorem's regime p ~ log n, far below n, is not tested "
                  "at this scale (the paper profile's larger n test it)."))
    out.append(f"- Lemma 1 under GD: the drift of a_j^2 - ||w_j||^2 is of order lr "
               f"({'confirmed' if ok('Lemma1/drift-order') else 'not confirmed'}); at lr = {min(P.lrs):g} it is "
               f"{l12['rows'][-1]['drift']:.2e}, {'below' if ok('Lemma1/drift-small') else 'above'} the spec's 1e-3 "
               f"(the drift is linear in lr, so the spec's tolerance is a statement about the step size).")
    out.append(f"- Lemma 3: the fitted exponent of d*(n) is {l3['slope']:.2f} on n = {l3['ns']} "
               f"({'inside' if ok('Lemma3/slope') else 'outside'} [1.8, 2.2]).")
    return "\n".join(out)
