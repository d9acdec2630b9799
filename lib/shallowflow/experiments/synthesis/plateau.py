"""Synthesis, the first plateau: how long does it last, on every source's data, and which constant sets it?

From a balanced initialisation of scale lambda, every source describes the first phase the same way: the network
stays near the saddle at 0 while its neurons align, then the loss drops after a time proportional to ln(1/lambda)
(003, Section 4 and Theorem 1's proof: t_1 = ln(1/lambda) / ||D_+|| on orthogonal inputs; 002, Theorem 1: the
early-alignment phase lasts a time of order ln(1/lambda), with the constant stripped from the text; 000, Section
3.1.1 and Conjecture 2: the same law for ReLU and tanh, "inversely proportional to the norm of a value that depends
on the data").  The book's derived constants, computed from each dataset (:mod:`shallowflow.engine.theory`):

- ReLU: the fastest growth rate g* = max(max G, -min G) of 002's function G on the sphere
  (:func:`shallowflow.engine.theory.escape_rates`), which is 003's ||D_+|| on orthogonal inputs;
- tanh and sigmoid: the rate sigma'(0) ||v|| of the network linearised at 0, v = 1/n sum_k y_k x_k
  (:func:`shallowflow.engine.theory.linearised_escape_rate`, 000 specification T3).

Gradient descent with step eta multiplies a neuron's norm by (1 + eta g) per step in the linear phase, so the
plateau grows by eta / ln(1 + eta g) units of flow time per unit of ln(1/lambda) (1/g as eta -> 0): that is the
prediction each slope is compared with.

One experiment: for each source's dataset and activation, scales x seeds as one gradient-descent ensemble; the
plateau ends at the first time the loss has fallen by ``drop`` times what the escaping direction can fit
(:func:`shallowflow.engine.theory.first_phase_drop`: one neuron along the extremal vector for ReLU, along v for the
linearised network), and the slope of that time against ln(1/lambda) is fitted with its ``level`` regression
interval.
"""
from __future__ import annotations

import math
import time as _time
from dataclasses import dataclass, field

import torch

from ...engine import init, metrics, theory
from ... import verdicts as C
from ...engine.models import Network
from ...params import PROFILE, STEP_BUDGET, Float, Floats, Int, Ints, Rule, gd_bytes, gd_work
from ...engine.train import gradient_descent
from .sources import KEYS, chosen

ACTIVATIONS = ("relu", "tanh", "sigmoid")
BAND = C.within(0.95, 1.05)  # the chapter's criterion on a slope's interval over a prediction (000 spec T3's band)
LOG_LINEAR = C.above(0.98)  # Plateau/log-linear: R^2 of the plateau's fit against ln(1/lambda), every data and activation
TREND = C.below(0.0)  # Plateau/relu-000-trend, relu-001-trend: approach(f, f.predicted) (negative: closer, within BAND)
MAX_DIM = 100  # the largest input dimension among the sources' datasets (001's d = 100)
SLOWEST_RATE = 0.01  # a lower bound on every dataset's escape rate (sigmoid on 000's data: 0.0139), for the budget

SCHEMA = {
    "profile": PROFILE,
    "sources": Ints("which sources' data (0..4 for 000..004)", low=0, high=len(KEYS) - 1, max_len=len(KEYS)),
    "width": Int("number of hidden neurons m", low=1, high=10_000),
    "init_scales": Floats("initial scales lambda (w_j = lambda g_j), one ensemble member each", low=1e-300, high=1,
                          min_len=3, max_len=100),
    "seeds": Ints("one run per seed and scale", low=0, high=2 ** 63 - 1, max_len=1000),
    "lr": Float("gradient-descent step size (flow time per iteration)", low=0, low_open=True, high=0.5),
    "sigmoid_sources": Ints("sources whose data are also trained with sigmoid (their labels must sum to 0)", low=0,
                            high=len(KEYS) - 1, max_len=len(KEYS)),
    "drop": Float("the plateau ends when the loss has fallen by this fraction of what its escaping direction can fit",
                  low=0, low_open=True, high=0.99),
    "horizon": Float("iterations allowed: horizon x the predicted plateau at the smallest scale", low=1, high=100),
    "level": Float("confidence level of the slope's regression interval", low=0.5, high=0.999),
}
MAX_N = 10  # the most points among the sources' datasets


def _steps(P) -> float:
    """Gradient-descent iterations for the slowest dataset at the smallest scale (an upper estimate)."""
    return P.horizon * math.log(1 / min(P.init_scales)) / SLOWEST_RATE / P.lr


def memory_estimate(P) -> float:
    """Bytes of one ensemble (scales x seeds) with its loss at every iteration, for the slowest dataset."""
    return gd_bytes(len(P.seeds) * len(P.init_scales), P.width, MAX_N, MAX_DIM, _steps(P))


def work_estimate(P) -> float:
    """Work units of the whole chapter, every ensemble costed as the slowest (an upper estimate)."""
    return len(set(P.sources)) * len(ACTIVATIONS) * gd_work(len(P.seeds) * len(P.init_scales), P.width, MAX_N,
                                                            MAX_DIM, _steps(P))


RULES = (
    Rule.budget(("init_scales", "lr", "horizon"), _steps, STEP_BUDGET, "iterations",
                "gradient-descent iterations for the slowest dataset at the smallest scale"),
    Rule.memory(("width", "seeds", "init_scales", "lr", "horizon"), memory_estimate,
                what="the parameters and the loss of every iteration of one ensemble"),
    Rule.work(("sources", "width", "seeds", "init_scales", "lr", "horizon"), work_estimate,
              what="every source x activation"),
)


def gd_slope(rate: float, lr: float) -> float:
    """Flow time per unit of ln(1/lambda) of a plateau escaped at ``rate`` by GD with step ``lr``: lr / ln(1 + lr rate)."""
    return lr / math.log1p(lr * rate) if rate > 0 else math.inf


@dataclass
class Fit:
    key: str
    activation: str
    x: torch.Tensor  # ln(1/lambda) per run
    t: torch.Tensor  # plateau end (flow time) per run, NaN where the loss never dropped
    valid: torch.Tensor  # finite run that left the plateau
    fit: dict  # metrics.slope_interval
    rate: float  # the book's escape rate for this activation on these data
    predicted: float  # gd_slope(rate, lr)
    rate_003: float  # 003's constant: max(||D_+||, ||D_-||)
    predicted_003: float
    seconds: float = 0.0


@dataclass
class PlateauRun:
    fits: dict = field(default_factory=dict)  # (key, act) -> Fit
    sources: list = field(default_factory=list)
    seconds: float = 0.0

    def of(self, act: str) -> list[Fit]:
        return [self.fits[k, act] for k in self.sources if (k, act) in self.fits]


def activations_for(data, key: str, sigmoid_keys) -> list[str]:
    """ReLU and tanh on every dataset; sigmoid on the chosen ones whose labels sum to 0 (the linearised prediction
    assumes it: sigma(0) = 1/2 otherwise drives the output weights linearly)."""
    sig = key in sigmoid_keys and abs(float(data.y.sum())) < 1e-12
    return [a for a in ACTIVATIONS if a != "sigmoid" or sig]


def run_plateaus(P) -> PlateauRun:
    """Every source's data x activation: one GD ensemble over scales x seeds, the plateau's end per run, the fit."""
    t0 = _time.perf_counter()
    out = PlateauRun(sources=[s.key for s in chosen(P.sources)])
    scales = [lam for lam in P.init_scales for _ in P.seeds]
    seeds = [s for _ in P.init_scales for s in P.seeds]
    x = torch.tensor([math.log(1 / lam) for lam in scales], dtype=torch.float64)
    for src in chosen(P.sources):
        data = src.dataset()
        relu = theory.escape_rates(data)
        dp, dm = theory.key_directions(data)
        r003 = max(float(dp.norm()), float(dm.norm()))
        zero_loss = float((data.y ** 2).mean() / 2)
        for act in activations_for(data, src.key, [KEYS[i] for i in P.sigmoid_sources]):
            t1 = _time.perf_counter()
            rate = relu["rate"] if act == "relu" else theory.linearised_escape_rate(data, act)
            if act == "relu":
                u = relu["u_plus"] if relu["plus"] >= relu["minus"] else relu["u_minus"]
            else:
                u = data.y.to("cpu") @ data.X.to("cpu") / data.n
            threshold = zero_loss - P.drop * theory.first_phase_drop(data, u, act)
            steps = int(math.ceil(P.horizon * math.log(1 / min(P.init_scales)) / rate / P.lr))
            p0 = init.balanced(seeds, P.width, data.d, scales, device="cpu")
            tr = gradient_descent(p0, data, Network(act), steps=steps, lr=P.lr,
                                  stop_below=threshold, on_nonfinite="stop")
            times = (tr.loss_steps.to(torch.float64) * P.lr).expand(tr.runs, -1)
            count = torch.full((tr.runs,), tr.loss.shape[1])
            t_end = metrics.first_crossing_times(times, tr.loss, count, threshold)
            valid = metrics.finite_runs(tr.final) & torch.isfinite(t_end)
            fit = metrics.slope_interval(x[valid], t_end[valid], P.level)
            out.fits[src.key, act] = Fit(src.key, act, x, t_end, valid, fit, rate, gd_slope(rate, P.lr), r003,
                                         gd_slope(r003, P.lr), _time.perf_counter() - t1)
    out.seconds = _time.perf_counter() - t0
    return out


def halves(f: Fit) -> tuple[float, float]:
    """Slopes fitted on the larger-scale and on the smaller-scale half of the scales (a trend towards the asymptotic
    constant shows as the second closer to it than the first)."""
    xs = torch.unique(f.x)
    cut = float(xs[len(xs) // 2])
    lo = f.valid & (f.x <= cut)
    hi = f.valid & (f.x >= cut)
    return (metrics.slope_interval(f.x[lo], f.t[lo])["slope"], metrics.slope_interval(f.x[hi], f.t[hi])["slope"])


def trend_towards(f: Fit, predicted: float) -> float:
    """|slope / predicted - 1| on the smaller-scale half of the scales minus the same on the larger-scale half
    (:func:`halves`): negative when the slope moves towards ``predicted`` as lambda decreases."""
    big, small = halves(f)
    return abs(small / predicted - 1) - abs(big / predicted - 1)


def approach(f: Fit, predicted: float) -> float:
    """How the slope approaches ``predicted`` as lambda decreases, in fractions of ``predicted``: the larger of
    :func:`trend_towards` (the gap on the smaller-scale half minus that on the larger-scale half) and the gap on the
    smaller-scale half minus BAND's half-width 0.05.  Negative when the slope moves towards the prediction AND has
    come within BAND of it on the smaller half: "tends to" a limit, read at finite scales.  A drift of any size
    towards a prediction it stays far from (tanh's slope 60% above ReLU's 1/g*, or another data's 1/g*) is positive:
    the controls round found that ``trend_towards`` alone passed both."""
    big, small = halves(f)
    return max(abs(small / predicted - 1) - abs(big / predicted - 1), abs(small / predicted - 1) - 0.05)


#: Plateau/tanh-as-relu-orthogonal (000's Conjecture 2, "the same dependency on -ln(lambda)" as ReLU, 000:1639): on
#: the orthogonal data both plateaus grow linearly in ln(1/lambda): :func:`rising_r2`, each above LOG_LINEAR's 0.98
TANH_AS_RELU = C.above(0.98)


def rising_r2(fits) -> list[float]:
    """Per fit (:class:`Fit`), the R^2 of the plateau against ln(1/lambda) where the fitted slope is positive, 0 where
    it is not (a plateau that shrinks or stays as lambda falls does not grow linearly in ln(1/lambda))."""
    return [f.fit["r2"] if f.fit["slope"] > 0 else 0.0 for f in fits]


def interval_over(f: Fit, predicted: float) -> list[float]:
    """The slope's interval endpoints divided by a predicted slope (both within [0.95, 1.05]: a 5% agreement that
    the interval itself resolves)."""
    return [f.fit["low"] / predicted, f.fit["high"] / predicted]


def table(run: PlateauRun) -> list[dict]:
    """One row per source and activation: the fitted slope with its interval, R^2, and the predicted constants."""
    rows = []
    for (key, act), f in run.fits.items():
        rows.append({"source": key, "activation": act, "runs": int(f.valid.sum()), "slope": f.fit["slope"],
                     "interval low": f.fit["low"], "interval high": f.fit["high"], "R^2": f.fit["r2"],
                     "book's rate": f.rate, "predicted slope (book)": f.predicted,
                     "003's rate max||D+-||": f.rate_003, "predicted slope (003's constant)": f.predicted_003})
    return rows


STATEMENTS = (
    ("003", "Sec. 4, Thm 1's proof", "ReLU, orthogonal inputs: the first saddle is left at t = ln(1/lambda) / ||D_+||",
     "relu", "003"),
    ("002", "Theorem 1", "ReLU: early alignment lasts a time of order ln(1/lambda) (constant stripped); neurons align "
     "with extremal vectors of G", "relu", "book"),
    ("001", "Sec. 4 (citing 002)", "near-orthogonal inputs make early alignment benign; no constant stated", "relu",
     "book"),
    ("000", "Sec. 3.1.1, Conj. 1", "ReLU and sigmoid: phase speeds proportional to -ln(lambda), inversely to 'the norm "
     "of a value that depends on the data'", "relu", "book"),
    ("000", "Conj. 2, Sec. 3.5", "tanh, orthogonal input data: 'the same dependency on -ln(lambda) and the data' as "
     "003's ReLU (measured on the orthogonal data only, as the conjecture is stated)", "tanh", "003"),
    ("000", "spec T3 [derived]", "tanh and sigmoid: slope 1 / (sigma'(0) ||v||), v = 1/n sum_k y_k x_k", "smooth",
     "book"),
    ("004", "(none)", "no statement on plateaus (deep networks, PL conditions)", "relu", "book"),
)


def source_rows(run: PlateauRun, criterion) -> list[dict]:
    """The table 'what each source says / what the book measures': each statement's constant against the slope
    measured on that source's own data (for 000's tanh reading, on the orthogonal data it is stated for), with the criterion
    (a :class:`~shallowflow.verdicts.criteria.Criterion` on the interval over the prediction) applied there."""
    rows = []
    for key, where, statement, act, which in STATEMENTS:
        acts = ("tanh", "sigmoid") if act == "smooth" else (act,)
        keys = [k for k in run.sources if k == "003"] if (key == "000" and act == "tanh") else [key]
        cells, verdicts = [], []
        for a in acts:
            for k in keys:
                f = run.fits.get((k, a))
                if f is None:
                    continue
                pred = f.predicted_003 if which == "003" else f.predicted
                ratio = interval_over(f, pred)
                cells.append(f"{a} on {k}'s data: slope {f.fit['slope']:.4g} [{f.fit['low']:.4g}, {f.fit['high']:.4g}]"
                             f" vs {pred:.4g}")
                verdicts.append(f"{a}/{k}: {'agrees' if criterion(ratio) else 'disagrees'}")
        if key not in run.sources and not cells:
            continue
        rows.append({"source": key, "where": where, "the source says": statement,
                     "the book measures": "; ".join(cells) or "not measured at this scale",
                     "within 5% (interval)": "; ".join(verdicts) or "(no constant)"})
    return rows
