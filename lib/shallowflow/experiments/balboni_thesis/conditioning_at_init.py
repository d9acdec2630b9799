"""Experiment 6-A: conditioning of the feature Gram matrices G^m at initialisation against depth.

Figures 6.1-6.4, 6.9, 6.10 and 6.13 of the thesis, Lemmas 23 and 24.  For every activation (ReLU,
Tanh, normalised), renormalisation (yes / no), width, number of examples and seed, the data subset and
the network are drawn, the features of every layer m = 1..depth computed once for the largest subset
(nested subsets share the network: the Gram matrix of the first n points is a sub-matrix), and the
spectra of ``G^m / width`` taken in float64.  The infinite-width line is the exact dual-kernel
recursion (:func:`shallowflow.deep.dual.infinite_width_grams`) from the same inputs.
"""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field

import numpy as np
import torch

from ...engine import metrics, progress
from ...engine.config import DTYPE, default_device
from ... import verdicts as C
from ...deep import data as ddata
from ...deep import dual, measure, models
from ...engine.checkpoint import resumable
from ...params import PROFILE, Bool, DataFile, Float, Int, Ints, Rule, Str, array_bytes

SCHEMA = {
    "profile": PROFILE,
    "dataset": DataFile("inputs: 'auto' (CIFAR-10 when present locally, else digits), 'digits', 'correlated', or a "
                        "path to a .npz (X, y) or .csv (y last) file whose rows are the inputs (labels unused; each seed "
                        "draws its own subset of the largest n rows)", names=("auto", "digits", "correlated"),
                        min_n=4, min_d=1, max_d=100_000),
    "depth": Int("number of hidden layers (the thesis: 30)", low=6, high=200),
    "widths": Ints("hidden widths (the thesis: 1000, 2000, 5000)", low=16, high=20000),
    "examples": Ints("numbers of examples n, nested random subsets (the thesis: 100, 200, 500, 1000)", low=4, high=1797),
    "seeds": Ints("seeds: each draws a data subset and a network (the thesis: 3)", low=0, min_len=2),
    "level": Float("level of the Student-t intervals over seeds (Fig. 6.2's bands and width order) and of the Wilson "
                   "intervals of the shares of runs (Figs. 6.1, 6.2, 6.9, 6.10)", low=0.5,
                   high=0.999, low_open=True),
    "forward_dtype": Str("dtype of the forward pass (eigenvalues are always float64)", choices=("float64", "float32")),
    "lemma23_widths": Ints("widths of the one-layer Monte Carlo check of Lemma 23", low=16, high=2 ** 20, min_len=3),
    "lemma24_trials": Int("random unit-diagonal Gram matrices per function for Lemma 24", low=10, high=100_000),
    "resume": Bool("keep each seed's finished statistics on disk and read them back when the same parameters run again "
                   "with the same package code (shallowflow.engine.checkpoint): an interrupted paper run resumes at the seeds it "
                   "has not finished, with identical numbers; off in the book and smoke profiles"),
}
RULES = (
    Rule(("widths", "examples"), lambda P: max(P.examples) < max(P.widths),
         "the largest n must be below the largest width (G^m is singular when n >= width)"),
    Rule(("examples",), lambda P: len(P.examples) >= 2, "Fig. 6.1 needs at least two n / width ratios"),
    Rule(("dataset", "examples"), lambda P: _file_rows(P.dataset) is None or max(P.examples) <= _file_rows(P.dataset),
         "the data file must have at least max(examples) rows (each seed draws that many distinct rows)"),
    Rule(("dataset",), lambda P: _file_rows(P.dataset) is None or _file_info(P.dataset)[1] == 0,
         "every row of the data file must be non-zero (the inputs are rescaled to norm sqrt(d))"),
)


def _file_info(value: str) -> tuple[int, int]:
    """(rows, zero rows) of a data-file value, as its validation read it (:func:`shallowflow.params.datafile.file_info`:
    the rules and the cost estimate do not read the file again)."""
    from ...params.datafile import file_info

    info = file_info(value, **SCHEMA["dataset"].limits.kwargs())
    return info.n, info.zero_rows


def _file_rows(value: str) -> int | None:
    """Rows of a data-file value (None for a named data set)."""
    return None if value in ("auto", "digits", "correlated") else _file_info(value)[0]


def memory_estimate(P) -> float:
    """The widest layer's weights for every seed (two width x width matrices each), the features (seeds x n x
    width, three arrays) and the Gram matrices; Lemma 23's widest single layer (n = 8, d = 16)."""
    R, w, n = len(P.seeds), max(P.widths), max(P.examples)
    return max(array_bytes(R, w, w, copies=2) + array_bytes(R, n, w, copies=3) + array_bytes(R, n, n, copies=4),
               array_bytes(max(P.lemma23_widths), 24, copies=4))


def work_estimate(P) -> float:
    """Six (activation, renormalisation) cases x every width and layer: the weight draws (about 10 units an
    entry) and the forward pass, the Gram statistics (n^3 per n and layer); Lemma 23's and 24's draws."""
    R, n = len(P.seeds), max(P.examples)
    forward = sum(6 * P.depth * R * (10 * w * w + 2 * n * w * w) for w in P.widths)
    stats = (6 * len(P.widths) + 2 + len(P.widths)) * P.depth * R * sum(10 * k ** 3 for k in P.examples)
    return forward + stats + 3 * 5 * sum(200 * w for w in P.lemma23_widths) + 4 * P.lemma24_trials * 1e5


NAMES = ("depth", "widths", "examples", "seeds", "lemma23_widths", "lemma24_trials")
# Fig. 6.13's caption: "the conditioning is effectively proportional to the factor according to Equation (6.8)",
# i.e. a log-log slope of 1 of kappa(G) against sqrt(examples width) / (sqrt(width) - sqrt(examples))
SOURCE_FIG613_SLOPE = 1.0
RULES = RULES + (Rule.memory(NAMES[:5], memory_estimate, what="the layers, features and Gram matrices"),
                 Rule.work(NAMES, work_estimate, what="the chapter"))


@dataclass
class InitResult:
    P: object
    data_name: str  # describe() of the seed-0 subset
    stats: dict  # (act, renorm) -> {key: array (seeds, widths, examples, depth)}
    infinite: dict  # renorm -> {key: array (seeds, examples, depth)} for ReLU (rescaled, G/width)
    infinite_width_reading: dict  # ReLU non-renormalised at infinite width with ||x|| = sqrt(width): width -> logcond (seeds, examples, depth)
    threads: int = 1
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    def arr(self, act: str, renorm: bool, key: str) -> np.ndarray:
        return self.stats[(act, renorm)][key]


def _inputs(P, seed: int, n: int, device) -> tuple[torch.Tensor, str]:
    if _file_rows(P.dataset) is not None:  # a reader's file: n distinct rows drawn with the seed
        from pathlib import Path

        from ...engine.data import load_xy

        X, y = load_xy(P.dataset, min_n=n, device="cpu")
        idx = np.sort(np.random.default_rng(seed).choice(X.shape[0], size=n, replace=False))
        Xs = ddata.normalise_norm(X[idx].to(DTYPE), float(np.sqrt(X.shape[1]))).to(device)
        return Xs, f"{Path(P.dataset).name} (n = {n}, d = {X.shape[1]}, seed {seed}, input_norm {np.sqrt(X.shape[1]):.4g})"
    d = ddata.load(P.dataset, n=n, seed=seed, device=device)
    d = d.normalised()  # ||x|| = sqrt(d), the fan-in reading of Sec. 6.3 (spec 2.2, amended)
    return d.X, d.describe()


def run_conditioning(P, normalised: bool = True) -> InitResult:
    """Every (activation, renormalisation, width, n, seed, layer) statistic of G^m / width at
    initialisation, the ReLU infinite-width line, and both input-norm readings at infinite width.
    ``normalised=False`` builds the finite networks with the plain activations (ReLU not centred: the negative control
    of tests/test_controls_balboni_thesis.py; the infinite-width lines stay the normalised ReLU's).

    With ``P.resume`` (the paper profile) every seed is one chunk of :func:`shallowflow.engine.checkpoint.resumable`, kept
    on disk, so an interrupted run resumes at the seeds it has not finished; otherwise all seeds are one batch (the
    same numbers: each seed's data and network come from its own seed)."""
    t0 = time.perf_counter()
    seeds = [int(s) for s in P.seeds]
    chunks = [[s] for s in seeds] if getattr(P, "resume", False) else [seeds]
    key = {k: getattr(P, k) for k in ("dataset", "depth", "widths", "examples", "forward_dtype")}
    if not normalised:  # the default's key (and its kept chunks) unchanged
        key["normalised"] = False
    chunk = (lambda c: _conditioning_chunk(P, c)) if normalised else (lambda c: _conditioning_chunk(P, c, False))
    parts = resumable("balboni-thesis/conditioning-at-init", key, chunks, chunk, enabled=getattr(P, "resume", False))
    cat = lambda xs: np.concatenate(xs, axis=0)  # noqa: E731
    stats = {case: {k: cat([p["stats"][case][k] for p in parts]) for k in parts[0]["stats"][case]} for case in parts[0]["stats"]}
    infinite = {rn: {k: cat([p["infinite"][rn][k] for p in parts]) for k in parts[0]["infinite"][rn]} for rn in parts[0]["infinite"]}
    reading = {w: cat([p["reading"][w] for p in parts]) for w in parts[0]["reading"]}
    return InitResult(P, parts[0]["names"][0], stats, infinite, reading, parts[0]["threads"], time.perf_counter() - t0)


def _conditioning_chunk(P, seeds: list, normalised: bool = True) -> dict:
    """:func:`run_conditioning`'s arrays for the given seeds (leading axis: these seeds), as plain numpy."""
    device = default_device()
    dtype = torch.float32 if P.forward_dtype == "float32" else DTYPE
    nmax = max(P.examples)
    Xs, names = zip(*[_inputs(P, s, nmax, device) for s in seeds])
    X = torch.stack(Xs)  # (R, nmax, d), one subset per seed
    d = X.shape[-1]
    keys = ("lmin", "lmax", "logcond", "diag_min", "offdiag_max", "offdiag_rowsum")
    shape = (len(seeds), len(P.widths), len(P.examples), P.depth)
    stats = {}
    with models.fastest_threads(max(P.widths), nmax, dtype=dtype) as threads:
        cases = list(itertools.product(models.ACTIVATIONS, (True, False)))
        for act, renorm in progress.each(cases, "Gram statistics (activation, renormalisation)", unit="case"):
            out = {k: np.zeros(shape) for k in keys}
            for wi, w in enumerate(P.widths):
                feats = models.stream_features(X, w, P.depth, act, normalised, renorm, seeds, dtype, device)
                for m, h in enumerate(feats):
                    G = measure.gram(h) / w  # (R, nmax, nmax), float64
                    for ni, n in enumerate(P.examples):
                        st = measure.gram_stats(G[:, :n, :n])
                        for k in keys:
                            out[k][:, wi, ni, m] = st[k].cpu().numpy()
            stats[(act, renorm)] = out
        # the infinite-width line (ReLU: closed form), from each seed's inputs
        S0 = X.to(DTYPE) @ X.to(DTYPE).transpose(-1, -2) / d
        infinite = {}
        for renorm in (True, False):
            per = {k: np.zeros((len(seeds), len(P.examples), P.depth)) for k in keys}
            for r in range(len(seeds)):
                Gs = dual.infinite_width_grams(S0[r], P.depth, "relu", renormalise=renorm)
                for ni, n in enumerate(P.examples):
                    st = measure.gram_stats(Gs[:, :n, :n])
                    for k in keys:
                        per[k][r, ni] = st[k].cpu().numpy()
            infinite[renorm] = per
        # the other reading of Sec. 6.3: ||x|| = sqrt(width) with fan_in = d multiplies Sigma0 by width / d
        reading = {}
        for w in P.widths:
            lc = np.zeros((len(seeds), len(P.examples), P.depth))
            for r in range(len(seeds)):
                Gs = dual.infinite_width_grams(S0[r] * (w / d), P.depth, "relu", renormalise=False)
                for ni, n in enumerate(P.examples):
                    lc[r, ni] = measure.gram_stats(Gs[:, :n, :n])["logcond"].cpu().numpy()
            reading[w] = lc
    return dict(names=list(names), stats=stats, infinite=infinite, reading=reading, threads=threads)


# ---------------------------------------------------------------------------------------------
# the quantities the checks compare (pure functions of the result arrays)
# ---------------------------------------------------------------------------------------------
def early_slopes(logcond: np.ndarray, layers: int = 5) -> np.ndarray:
    """Least-squares slope of log kappa over layers 1..``layers``, per configuration (last axis: layers)."""
    x = np.arange(1, layers + 1, dtype=float)
    y = logcond[..., :layers]
    xc = x - x.mean()
    return (y * xc).sum(-1) / (xc * xc).sum()


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic)


def configurations(P) -> list[tuple[int, int, float]]:
    """(width index, n index, n / width) of every configuration with n < width (G^m non-singular)."""
    return [(wi, ni, n / w) for wi, w in enumerate(P.widths) for ni, n in enumerate(P.examples) if n < w]


def seed_interval(a: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Mean over seeds (axis 0) and the half-width of its two-sided Student-t interval at ``level`` (the same interval
    as :func:`shallowflow.engine.metrics.mean_interval`, elementwise)."""
    from scipy import stats

    n = a.shape[0]
    return a.mean(0), float(stats.t.ppf(0.5 + level / 2, n - 1)) * a.std(0, ddof=1) / math.sqrt(n)


# The spec's stagnation criterion of Fig. 6.1(b): log k_30 - min_m log k_m <= 0.1 (log k_1 - min); a run "rises again"
# when it fails it, and two curves have "departed" once they differ by this share of the initial decrease
def width_violations(a: np.ndarray, level: float = 0.95) -> int:
    """Fig. 6.2's count: over the layers of ``a`` (seeds, widths, depth; widths ascending), the layers where a wider
    network is worse conditioned than the next narrower one beyond both Student-t intervals over the seeds."""
    m, half = seed_interval(a, level)
    return sum(int(np.sum(m[k + 1] - half[k + 1] > m[k] + half[k])) for k in range(a.shape[1] - 1))


def width_steps(a: np.ndarray, widths, examples) -> np.ndarray:
    """Fig. 6.1's 'smaller for higher width-examples ratio' along the direction the construction leaves open: from
    ``a`` (seeds, widths, examples, depth; widths ascending), the differences of the last layer's seed-mean value
    between consecutive widths at every n below both widths (at fixed n a wider network has the higher ratio, so the
    claim predicts a negative step). The other direction, n at fixed width, holds by construction: the subsets are
    nested, so G^m of a smaller n is a principal submatrix and Cauchy interlacing orders kappa in n whatever the width
    does (a conditioning that does not depend on the width gives Spearman rho 0.89 against the ratio; steps of 0)."""
    m = a.mean(0)[..., -1]  # (widths, examples)
    return np.array([m[k + 1, j] - m[k, j] for j, n in enumerate(examples) for k in range(len(widths) - 1)
                     if n < widths[k]])


def width_gaps(a: np.ndarray) -> np.ndarray:
    """Fig. 6.2's 'the wider the network, the lower conditioning is': from ``a`` (seeds, widths, depth; widths
    ascending), per pair of consecutive widths the mean over the layers of the difference of the seed-mean curves,
    wider minus narrower (the wider curve lies below where it is negative; 0 where the width does not matter)."""
    m = a.mean(0)  # (widths, depth)
    return (m[1:] - m[:-1]).mean(-1)


STAGNATION = 0.1


def stagnation_ratio(curve: np.ndarray) -> np.ndarray:
    """(last - min) / (first - min) over the last axis (layers): at most :data:`STAGNATION` where a curve that first
    decreased stagnates, above it where it rises again."""
    lo = curve.min(-1)
    return (curve[..., -1] - lo) / (curve[..., 0] - lo)


def late_change(curve: np.ndarray, last: int = 10) -> np.ndarray:
    """Fig. 6.4's 'later stabilizes', per row of ``curve`` (rows: widths, last axis: layers): the change over the last
    ``last`` layers, |curve[-last] - curve[-1]|, as a share of the total drop curve[0] - curve[-1]."""
    return np.abs(curve[:, -last] - curve[:, -1]) / (curve[:, 0] - curve[:, -1])


# the criteria of the Figs. 6.1-6.13 checks the negative controls feed false cases (tests/test_controls_balboni_thesis.py)
FIG61_EARLY_SLOPE = C.below(0)  # slope of log kappa over layers 1-5, every configuration, renormalised and not
FIG61_STAGNATES = C.below(0.1, strict=False)  # stagnation_ratio of the renormalised curves (Figs. 6.1 and 6.9)
FIG63_INFINITE_ONE = C.below(0.05, strict=False)  # |lambda_min - 1| of the infinite-width line at the last layer
FIG64_STABILISES = C.below(0.1)  # late_change of the rescaled highest eigenvalue, every width
FIG613_PROPORTIONAL = C.within(0.7, 1.3)  # per-layer log-log slope of kappa (or sqrt(kappa)) against the (6.8) factor
FIG61_ORDERED = C.below(0)  # width_steps of the last layer's log kappa (every n, renormalised and not): all negative
FIG62_WIDER = C.below(0)  # width_gaps of log kappa at the largest n (every pair of widths, renormalised and not): all negative
FIG63_WIDTH_ORDER = C.above(0, strict=True)  # differences of the last layer's rescaled lambda_min between consecutive widths
FIG63_FINITE_BELOW = C.below(1)  # largest seed-mean rescaled lambda_min over the infinite-width line's, last 10 layers
FIG610_DOMINANT = C.above(1)  # number of configurations with a diagonally dominant layer (dominant_configurations)
FIG63_GROWS = C.above(1, strict=True)  # the last layer's rescaled lambda_min over the first layer's, every width
FIG64_DECREASES = C.below(1)  # the last layer's rescaled lambda_max over the first layer's, every width


def dominant_configurations(diag_min: np.ndarray, offdiag_max: np.ndarray, configs) -> list[tuple[int, int]]:
    """Fig. 6.10's 'some intermediate layers in which the minimum entry on the diagonal is higher than the maximum off
    the diagonal': the (width index, n index) of the ``configs`` (:func:`configurations`) whose seed-mean curves
    (arrays (seeds, widths, examples, depth)) have such a layer."""
    dmin, omax = diag_min.mean(0), offdiag_max.mean(0)
    return [(wi, nj) for wi, nj, _ in configs if (dmin[wi, nj] > omax[wi, nj]).any()]


def rises_again(curve: np.ndarray) -> np.ndarray:
    """Per run (every leading index, e.g. seed x width x n): True where the curve over layers (last axis) rises
    again after its minimum, i.e. fails the stagnation criterion: last - min > :data:`STAGNATION` (first - min)."""
    return stagnation_ratio(curve) > STAGNATION


def departure_layers(renorm: np.ndarray, plain: np.ndarray) -> np.ndarray:
    """Per run (same seed: the same data and weights; leading axes (seeds, ...), last axis layers): the first layer
    (1-based) where the plain curve departs from the renormalised one by more than :data:`STAGNATION` times the
    renormalised curve's initial decrease (first - min); depth + 1 where it never does."""
    scale = renorm[..., 0] - renorm.min(-1)
    hit = np.abs(plain - renorm) > STAGNATION * scale[..., None]
    return np.where(hit.any(-1), hit.argmax(-1) + 1, renorm.shape[-1] + 1)


def later_departure(dep: np.ndarray, widths, examples, depth: int) -> np.ndarray:
    """Fig. 6.2's 'larger widths allow for a latter departure', one flag per (seed, n, consecutive widths) with n
    below both widths: the wider network's departure layer (:func:`departure_layers`, array (seeds, widths,
    examples)) is strictly later.  Pairs where neither network departs within the ``depth`` layers show nothing and
    are left out."""
    out = []
    for s in range(dep.shape[0]):
        for ni, n in enumerate(examples):
            for k in range(len(widths) - 1):
                a, b = dep[s, k, ni], dep[s, k + 1, ni]
                if n >= widths[k] or a == b == depth + 1:
                    continue
                out.append(bool(b > a))
    return np.array(out, dtype=bool)


def aligned_minima(log_rowsum: np.ndarray, logcond: np.ndarray, rising: np.ndarray, within: int = 2) -> np.ndarray:
    """Fig. 6.9's 'divergence point aligns with the raise in conditioning', one flag per run whose conditioning rises
    again (``rising``, :func:`rises_again`): the layer of the minimum of the log off-diagonal row sum is within
    ``within`` layers of the layer of the minimum of log-conditioning (the spec's +-2 layers).  Arrays (runs..., layers)."""
    gap = np.abs(log_rowsum.argmin(-1) - logcond.argmin(-1))
    return (gap <= within)[rising]


def shuffled_alignment(log_rowsum: np.ndarray, logcond: np.ndarray, rising: np.ndarray, within: int = 2) -> np.ndarray:
    """Fig. 6.9's cross-seed null, one value per run whose conditioning rises again (``rising``), in the order of
    :func:`aligned_minima`'s flags: the share of the OTHER seeds s' != s whose row-sum minimum (same width and n, another
    network and data subset) lies within ``within`` layers of run s's conditioning minimum.  Where the alignment is a
    property of the configuration only (the minima sit at the same layers for every seed), this baseline equals the
    within-run share; where the row sum tracks its own run's conditioning, it is lower.  Arrays (seeds, ..., layers)."""
    a_r, a_c = log_rowsum.argmin(-1), logcond.argmin(-1)  # (seeds, ...)
    S = a_r.shape[0]
    if S < 2:
        return np.full(int(rising.sum()), np.nan)
    hits = np.zeros(a_c.shape)
    for shift in range(1, S):  # every other seed once: seed s against s + shift (mod S)
        hits += np.abs(np.roll(a_r, -shift, axis=0) - a_c) <= within
    return (hits / (S - 1))[rising]


def run_specific_excess(log_rowsum: np.ndarray, logcond: np.ndarray, rising: np.ndarray, within: int = 2,
                        level: float = 0.95) -> dict:
    """Fig. 6.9: does the row sum's minimum align with ITS OWN run's conditioning minimum more often than with another
    seed's at the same configuration?  The within-run share (:func:`aligned_minima`) minus the cross-seed share (the mean
    of :func:`shuffled_alignment` over the same rising runs), with Newcombe's hybrid score interval for a difference of
    two shares at ``level`` (each share's Wilson interval over the n rising runs; the cross-seed share counted over the
    n runs, not its n (seeds - 1) pairs, which share networks; both choices widen the interval).  Keys ``within``,
    ``shuffled``, ``diff``, ``low``, ``high``, ``n``, ``text``; NaN without rising runs.  The excess is decided when
    ``low`` > 0, and is absent at this level when ``high`` < 0 or the difference is not positive."""
    own = aligned_minima(log_rowsum, logcond, rising, within).astype(float)
    other = shuffled_alignment(log_rowsum, logcond, rising, within)
    n = int(own.size)
    if n == 0 or not np.isfinite(other).all():
        nan = float("nan")
        return dict(within=nan, shuffled=nan, diff=nan, low=nan, high=nan, n=n, text=f"no rising run to pair ({n})")
    p1, p2 = float(own.mean()), float(other.mean())
    d = p1 - p2
    low, high = metrics.newcombe_difference(p1, p2, n, level)
    text = (f"within-run share {int(own.sum())}/{n} ({p1:.2f}), cross-seed share {p2:.2f} (mean over the other seeds), "
            f"difference {d:+.3f} with {level:.0%} Newcombe interval [{low:.3f}, {high:.3f}]")
    return dict(within=p1, shuffled=p2, diff=d, low=low, high=high, n=n, text=text)


def inverts_later(diag_min: np.ndarray, offdiag_max: np.ndarray, rising: np.ndarray) -> tuple[np.ndarray, int]:
    """Fig. 6.10's 'the condition later inverts', one flag per run that has a diagonal-dominance phase (some layer with
    min diagonal > max off-diagonal) and whose conditioning rises again (``rising``): True where a later layer
    breaks the dominance.  Returns the flags and the number of runs with a dominance phase.  Arrays (runs..., layers)."""
    dom = diag_min > offdiag_max
    has = dom.any(-1)
    first = dom.argmax(-1)
    later = np.arange(dom.shape[-1]) > first[..., None]
    inverts = np.any(~dom & later, axis=-1)
    return inverts[has & rising], int(has.sum())


def rmt_factor(n: int, w: int) -> float:
    """Equation (6.8)'s factor sqrt(n w) / (sqrt(w) - sqrt(n)) (Fig. 6.13's axis), for n < w."""
    return math.sqrt(n * w) / (math.sqrt(w) - math.sqrt(n))


def rmt_fit(res: InitResult, use_sqrt: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Per layer: the Pearson correlation across (n, w) configurations between kappa (or sqrt(kappa))
    and the factor of (6.8), and the log-log slope, for non-renormalised Tanh (seed means)."""
    lc = res.arr("tanh", False, "logcond").mean(0)  # (W, N, depth)
    confs = configurations(res.P)
    f = np.array([rmt_factor(res.P.examples[ni], res.P.widths[wi]) for wi, ni, _ in confs])
    corr, slope = [], []
    for m in range(lc.shape[-1]):
        k = np.exp(np.array([lc[wi, ni, m] for wi, ni, _ in confs]))
        k = np.sqrt(k) if use_sqrt else k
        corr.append(np.corrcoef(k, f)[0, 1])
        slope.append(np.polyfit(np.log(f), np.log(k), 1)[0])
    return np.array(corr), np.array(slope)


# ---------------------------------------------------------------------------------------------
# Lemmas 23 and 24
# ---------------------------------------------------------------------------------------------
def _unit_gram(n: int, rank: int, gen: torch.Generator) -> torch.Tensor:
    V = torch.randn(n, rank, generator=gen, dtype=DTYPE)
    return dual.to_correlation(V @ V.T + 1e-3 * torch.eye(n, dtype=DTYPE))


# Lemma 23's and Lemma 24's criteria (the chapter's; tests/test_controls_balboni_thesis.py feeds them false cases)
LEMMA23_ERROR_RATE = C.within(-0.6, -0.4)  # log-log slope of max |G / w - sigma_hat(S)| against the width w
LEMMA23_FIXED_RELU = C.below(1e-12, strict=False)  # |sigma_hat(1) - 1|, normalised ReLU
LEMMA23_FIXED_TANH = C.below(1e-7, strict=False)  # |sigma_hat(1) - 1|, normalised Tanh (quadrature)
LEMMA24_BOUND = C.above(-1e-10)  # smallest lambda_min(f[H]) - (f(1) - f(1 - delta)) over the trials and functions


def run_lemma23(P, n: int = 8, seeds: int = 5, normalised: bool = True) -> dict:
    """One random layer of width w on inputs with unit-diagonal Gram S: max abs(G / w - sigma_hat(S)) for
    every width of ``P.lemma23_widths`` (mean over seeds), per activation, and the log-log slope.  ``normalised=False``
    compares the (normalised) layers with the un-normalised dual instead, and reads its sigma_hat(1): the negative
    control of tests/test_controls_balboni_thesis.py (not the layers' limit, not a fixed point at 1)."""
    g = torch.Generator().manual_seed(23)
    d = 16
    Xr = torch.randn(n, d, generator=g, dtype=DTYPE)
    X = Xr * (math.sqrt(d) / Xr.norm(dim=1, keepdim=True))
    S = X @ X.T / d
    out = {}
    for act in models.ACTIVATIONS:
        target = dual.dual(S, act, normalised=normalised)
        errs = []
        for w in P.lemma23_widths:
            e = []
            for s in range(seeds):
                h = next(models.stream_features(X, w, 1, act, seeds=[1000 * s + w], device="cpu"))
                e.append(float((measure.gram(h)[0] / w - target).abs().max()))
            errs.append(np.mean(e))
        errs = np.array(errs)
        slope = np.polyfit(np.log(P.lemma23_widths), np.log(errs), 1)[0]
        fixed = float(dual.dual_scalar(torch.tensor(1.0), act, normalised=normalised))
        out[act] = {"errors": errs, "slope": float(slope), "sigma_hat_1": fixed}
    return out


def run_lemma24(P, fs: dict | None = None) -> dict:
    """Lemma 24 on ``P.lemma24_trials`` random unit-diagonal Gram matrices H (n = 3..30) per function f in
    {exp, normalised-ReLU dual, normalised-Tanh dual}: the smallest margin lambda_min(f[H]) - (f(1) - f(1 - delta)).
    ``fs`` replaces the functions (the negative control: one with a negative power-series coefficient)."""
    g = torch.Generator().manual_seed(24)
    fs = fs if fs is not None else {"exp": torch.exp,
          "relu dual": lambda r: dual.dual_scalar(r, "relu"),
          "tanh dual": lambda r: dual.dual_scalar(r, "tanh", order=48)}
    out = {}
    for name, f in fs.items():
        margins = []
        trials = P.lemma24_trials if name != "tanh dual" else max(10, P.lemma24_trials // 5)
        for _ in range(trials):
            n = int(torch.randint(3, 31, (1,), generator=g))
            rank = int(torch.randint(1, n + 1, (1,), generator=g))
            H = _unit_gram(n, rank, g)
            delta = torch.linalg.eigvalsh(H)[0].clamp_min(0)
            margins.append(float(torch.linalg.eigvalsh(f(H))[0] - dual.lemma24_bound(f, delta)))
        out[name] = {"trials": trials, "min_margin": min(margins)}
    return out
