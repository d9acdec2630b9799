"""002 (early alignment), chapter `failure-rates`: Theorem 2's failure probability over widths and initial
scales (the outcome grid) and the empirical lambda*.
"""
from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass

import torch

from ...engine import data as datasets
from ...engine import metrics
from ... import verdicts as C
from ...engine.config import DTYPE
from ...engine.models import Network
from ...params import Bool, DataFile, Float, Floats, Int, Ints, PROFILE, Rule, STEP_BUDGET, Sections, ensemble_bytes, gd_work
from ...engine.train import gradient_descent
from ...engine.checkpoint import resumable
from .theory import CPU, LOSS, SUCCESS, classify, initialise, ols


SECTIONS = ("grid", "contrasts")  # the phase diagram with its step-size check; the Section 5 contrasts


SCHEMA = {
    "profile": PROFILE,
    "widths": Ints("widths m of the phase diagram (one ensemble per width)", low=1, high=1_000_000),
    "scales": Floats("initialisation scales lambda of the phase diagram", low=0, low_open=True, high=10),
    "seeds": Ints("seeds of every (width, scale) cell for widths below large_width (one run each)", low=0,
                  high=2 ** 63 - 1),
    "large_width": Int("widths at or above this use large_seeds seeds", low=1, high=1_000_000),
    "large_seeds": Ints("seeds of every (width, scale) cell for the large widths", low=0, high=2 ** 63 - 1),
    "lr": Float("step on the mean squared error (flow time per step)", low=0, low_open=True, high=1),
    "time": Float("flow time of every run", low=0, low_open=True, high=1e6),
    "step_check_width": Int("width of the step-size check (the same grid at lr / step_check_factor)", low=1, high=1_000_000),
    "step_check_factor": Int("step-size reduction of the check", low=2, high=1000),
    "step_check_seeds": Ints("seeds of every scale of the step-size check (compared run for run with the same seeds "
                             "of the phase diagram)", low=0, high=2 ** 63 - 1),
    "contrast_widths": Ints("widths of the contrasts (unbalanced, dominated, leaky)", low=1, high=1_000_000),
    "contrast_scales": Floats("scales of the contrasts", low=0, low_open=True, high=10),
    "contrast_seeds": Ints("seeds of every (width, scale) cell of the contrasts", low=0, high=2 ** 63 - 1),
    "contrast_time": Float("flow time of the contrast runs", low=0, low_open=True, high=1e6),
    "leak": Float("negative slope gamma of the leaky ReLU", low=0, low_open=True, high=1),
    "leaky_small_scales": Floats("scales of the fixed-width leaky runs (footnote 7)", low=0, low_open=True, high=10),
    "level": Float("level of the Wilson intervals of the shares of runs (the Section 5 contrasts)", low=0.5,
                   high=0.999, low_open=True),
    "data": DataFile("the data of the phase diagram and the contrasts: 'ea-three-point' (the source's Figure 2 data, "
                     "three points with a bias coordinate) or a .npz (X, y) / .csv (y last) file, one label column, "
                     "inputs as they enter the network (append a column of ones for a bias): a custom run",
                     names=("ea-three-point",), min_n=1, max_n=10_000, min_d=1, max_d=100, outputs=1),
    "sections": Sections("the parts to run: grid (the (width, scale) phase diagram of Theorem 2 and its step-size "
                         "check) and contrasts (Section 5: unbalanced, dominated and leaky ReLU runs)", choices=SECTIONS),
    "resume": Bool("keep each finished ensemble (one per width of every grid) on disk and read it back when the same "
                   "data and parameters run again with the same package code (shallowflow.engine.checkpoint): an interrupted "
                   "paper run resumes where it stopped with identical numbers; off in the book and smoke profiles"),
}
RULES = (Rule.budget(("time", "lr", "step_check_factor"), lambda P: P.time * P.step_check_factor / P.lr, STEP_BUDGET,
                     what="the step-size check (time / (lr / step_check_factor))"),
         Rule.budget(("contrast_time", "lr"), lambda P: P.contrast_time / P.lr, STEP_BUDGET, what="the contrasts"),
         Rule.memory(("widths", "scales", "seeds", "large_width", "large_seeds", "data"),
                     lambda P: max(ensemble_bytes(len(P.scales) * len(P.seeds if m < P.large_width else P.large_seeds),
                                                  m, data_dim(P.data), 4) for m in P.widths),
                     what="the largest width's ensemble"),
         Rule.memory(("contrast_widths", "contrast_scales", "contrast_seeds", "data"),
                     lambda P: ensemble_bytes(len(P.contrast_scales) * len(P.contrast_seeds), max(P.contrast_widths),
                                              data_dim(P.data), 4),
                     what="the largest contrast ensemble"))


def load_data(value) -> datasets.Dataset:
    """The chapter's data: the source's three-point data by name, or the file of ``data`` (validated before the
    kernel)."""
    if value == "ea-three-point":
        return datasets.get("ea-three-point", device=CPU)
    return datasets.from_file(value, device=CPU, **SCHEMA["data"].limits.kwargs())


def _file_info(value):
    """A data file's shape as its validation read it (:func:`shallowflow.params.datafile.file_info`: the rules and the
    cost estimate do not read the file again)."""
    from ...params.datafile import file_info

    return file_info(value, **SCHEMA["data"].limits.kwargs())


def data_dim(value) -> int:
    """The input dimension of the chapter's data (2 for the three-point data: x and the bias coordinate)."""
    return 2 if value == "ea-three-point" else _file_info(value).d


def data_size(value) -> int:
    """The number of points of the chapter's data (3 for the three-point data)."""
    return 3 if value == "ea-three-point" else _file_info(value).n


def work_estimate(P) -> float:
    """Work units (:func:`shallowflow.params.gd_work`) of the sections run, every run to its step cap (runs that
    converge stop earlier): the phase diagram (scales x seeds per width, time / lr steps), its step-size check
    (time / (lr / step_check_factor) steps), and the contrasts (unbalanced and leaky: contrast_time / lr; dominated:
    time / lr; the fixed-width leaky runs at the smallest contrast width)."""
    n, d = data_size(P.data), data_dim(P.data)
    sections = getattr(P, "sections", SECTIONS)
    units = 0.0
    if "grid" in sections:
        units += sum(gd_work(len(P.scales) * len(P.large_seeds if m >= P.large_width else P.seeds), m, n, d,
                             P.time / P.lr) for m in P.widths)
        units += gd_work(len(P.scales) * len(P.step_check_seeds), P.step_check_width, n, d,
                         P.time * P.step_check_factor / P.lr)
    if "contrasts" in sections:
        R = len(P.contrast_scales) * len(P.contrast_seeds)
        units += sum(2 * gd_work(R, m, n, d, P.contrast_time / P.lr) + gd_work(R, m, n, d, P.time / P.lr)
                     for m in P.contrast_widths)
        units += gd_work(len(P.leaky_small_scales) * len(P.contrast_seeds), min(P.contrast_widths), n, d,
                         P.contrast_time / P.lr)
    return units


RULES = RULES + (Rule.work(("widths", "scales", "seeds", "large_width", "large_seeds", "lr", "time", "step_check_width",
                            "step_check_factor", "step_check_seeds", "contrast_widths", "contrast_scales",
                            "contrast_seeds", "contrast_time", "leaky_small_scales", "data", "sections"),
                           work_estimate, what="the runs (above the budget: a GPU or a cluster)"),)


# Pass criteria of the checks whose null scenario the tests run (tests/test_null_early_alignment.py): the
# chapter and the tests use these very objects.
OLS_FRACTION = C.above(0.95)  # Thm2/ols-fraction: smallest share of runs per cell ending at the OLS loss (spec)
ESCAPE_SHARE = C.above(1.0)  # Thm2/escape-large-scale: smallest share per width reaching a global minimum
NO_ESCAPE = C.below(0.5)  # Thm2/no-escape-small-scales: runs ending below the OLS loss (count)
LAMBDA_STAR_BAND = C.within(3e-2, 1e-1)  # Thm2/lambda-star-common: min over widths of the largest all-fail scale
LAMBDA_STAR_SAME = C.close_to(1.0, atol=1e-9)  # Thm2/lambda-star-width-independent: max / min of it over m >= 100


def escapes_below_ols(g: "Grid", widths, scales, L_star: float, atol: float = 1e-5) -> float:
    """Thm2/no-escape-small-scales: the number of runs of the cells (widths x scales) whose final loss is below the
    OLS loss ``L_star`` by more than ``atol`` (NaN without a scale)."""
    if not scales:
        return math.nan
    return sum(int((g.loss[(m, sc)] < L_star - atol).sum()) for m in widths for sc in scales)


def ols_fraction(g: "Grid", widths, scales) -> float:
    """Thm2/ols-fraction: the smallest share of runs ending at the OLS loss over the given cells (NaN: none)."""
    return min((sum(o == "ols" for o in g.outcome[(m, sc)]) / len(g.outcome[(m, sc)]) for m in widths for sc in scales),
               default=math.nan)


@dataclass
class Grid:
    """Final losses of an ensemble over (width, scale, seed), for one initialisation and activation."""

    kind: str
    activation: str
    widths: list
    scales: list
    seeds: dict  # width -> the list of seeds of every cell of that width
    loss: dict  # (width, scale) -> tensor (seeds,) final loss
    escape: dict  # (width, scale) -> tensor (seeds,) flow time of L < 0.99 L* (nan: never)
    outcome: dict  # (width, scale) -> list of outcomes
    valid: dict  # (width, scale) -> bool tensor (seeds,): loss history and final parameters finite
    seconds: dict  # width -> seconds
    lr: float
    time: float

    def fraction(self, width, scale, outcomes=SUCCESS) -> float:
        o = self.outcome[(width, scale)]
        return sum(v in outcomes for v in o) / len(o)

    def failing(self, width, scale) -> float:
        """The share of runs that end at a spurious point (invalid runs are not counted as failing)."""
        o = self.outcome[(width, scale)]
        return sum(v not in SUCCESS and v != "invalid" for v in o) / len(o)

    def outcomes_of(self, width, scale, seeds) -> list:
        """The outcomes of the runs of cell (width, scale) with the given seeds, in that order (seeds the cell did not
        run are left out)."""
        at = {s: i for i, s in enumerate(self.seeds[width])}
        return [self.outcome[(width, scale)][at[s]] for s in seeds if s in at]

    def valid_runs(self, widths=None, scales=None) -> torch.Tensor:
        """The finiteness flags of every run of the given cells (default: the whole grid), concatenated."""
        widths = self.widths if widths is None else widths
        scales = self.scales if scales is None else scales
        flags = [self.valid[(m, sc)] for m in widths for sc in scales]
        return torch.cat(flags) if flags else torch.ones(0, dtype=torch.bool)


def run_grid(data: datasets.Dataset, widths, scales, seeds_of, lr: float, T: float, kind: str = "balanced",
             activation: str = "relu", leak: float = 0.01, stop_below: float = 1e-7, resume: bool = False) -> Grid:
    """One ensemble per width: every (scale, seed) pair is a run with its own initial scale; ``seeds_of(m)`` is the
    list of seeds of every cell of width m.  With ``resume`` each width's finished ensemble (seeded by its own seeds
    only) is kept on disk (:func:`shallowflow.engine.checkpoint.resumable`) and read back by a run with the same data,
    parameters and package code."""
    net = Network(activation, leak=leak)
    o = ols(data.X.to(CPU), data.y.to(CPU))
    L_zero = float((data.y ** 2).mean())
    steps = int(round(T / lr))
    rec = max(1, steps // 2000)
    g = Grid(kind, activation, list(widths), list(scales), {}, {}, {}, {}, {}, {}, lr, T)
    digest = hashlib.sha256(data.X.cpu().numpy().tobytes() + data.y.cpu().numpy().tobytes()).hexdigest()[:16]
    key = dict(data=digest, kind=kind, activation=activation, leak=leak, lr=lr, T=T, stop_below=stop_below,
               scales=[float(sc) for sc in scales])

    def train(c):
        m, cell = c
        seeds = [s for _ in scales for s in cell]
        lam = [sc for sc in scales for _ in cell]
        p0 = initialise(kind, seeds, m, data.d, lam)
        t0 = time.perf_counter()
        tr = gradient_descent(p0, data.to(CPU), net, steps=steps, lr=lr, loss=LOSS, record_every=rec,
                              stop_below=stop_below, on_nonfinite="stop")
        seconds = time.perf_counter() - t0
        L = net.loss(tr.final, data.X.to(CPU), data.y.to(CPU), LOSS)
        ok = metrics.finite_runs(tr.loss, tr.final, L) & ~tr.info["diverged"]
        esc = metrics.first_below(tr.loss, 0.99 * float(o.loss), tr.loss_steps).to(DTYPE)
        return dict(L=L, ok=ok, esc=torch.where(esc >= 0, esc * lr, torch.full_like(esc, math.nan)), seconds=seconds)

    cells = [(int(m), [int(s) for s in seeds_of(m)]) for m in widths]
    for (m, cell), r in zip(cells, resumable(f"early-alignment/failure-rates/{kind}-{activation}", key, cells, train,
                                             enabled=resume)):
        S = len(cell)
        L, ok, esc = r["L"], r["ok"], r["esc"]
        g.seconds[m] = r["seconds"]
        g.seeds[m] = cell
        for i, sc in enumerate(scales):
            sl = slice(i * S, (i + 1) * S)
            g.loss[(m, sc)] = L[sl]
            g.escape[(m, sc)] = esc[sl]
            g.valid[(m, sc)] = ok[sl]
            g.outcome[(m, sc)] = ["invalid" if not bool(v) else c
                                  for v, c in zip(ok[sl], classify(L[sl], float(o.loss), L_zero))]
    return g


TRAINED = ("ols", "escaping", "global")  # outcomes of a run that left the zero network (Thm2/step-size's baseline)
STEP_SIZE = C.below(0.5)  # Thm2/step-size: disagreements between the two steps (tests/test_null_early_alignment.py)


def step_disagreements(g: Grid, small: Grid, width, scales, seeds) -> tuple[float, int]:
    """Thm2/step-size: the runs of cell (width, scale) whose outcome (escaped or not) differs between the grid ``g``
    and the same grid at a smaller step (``small``), compared seed by seed over ``scales``; NaN unless every compared
    run of both grids trained (ended at the OLS loss or below, :data:`TRAINED`): two untrained grids agree by
    construction.  Returns (disagreements or NaN, number of runs compared)."""
    if width not in g.widths or width not in small.widths:
        return math.nan, 0
    common = [s for s in seeds if s in g.seeds[width] and s in small.seeds[width]]
    d, n, trained = 0, 0, True
    for sc in scales:
        a, b = g.outcomes_of(width, sc, common), small.outcomes_of(width, sc, common)
        trained &= all(o in TRAINED for o in a + b)
        d += sum((x in SUCCESS) != (y in SUCCESS) for x, y in zip(a, b))
        n += len(a)
    return (float(d) if trained and n else math.nan), n


TINY_SPURIOUS = C.above(1.0)  # Thm2/tiny-widths-spurious: smallest share per cell ending at the OLS fit or at zero


def tiny_spurious_share(g: Grid, widths, scales) -> float:
    """Thm2/tiny-widths-spurious: the smallest share, over the cells, of runs ending at the OLS fit or at the zero network;
    NaN when some cell has no run at the OLS fit: an untrained network sits at the zero network by itself, so a cell
    counts only when gradient descent moved some of its runs to the OLS fit (its baseline learned)."""
    cells = [g.outcome[(m, sc)] for m in widths for sc in scales]
    if not cells or any("ols" not in o for o in cells):
        return math.nan
    return min(sum(v in ("ols", "zero") for v in o) / len(o) for o in cells)


FIXED_WIDTH_FAILS = C.above(1.0)  # S5-leaky/fixed-width-small-scale: share of failing runs at the smallest scale


def fixed_width_failing(g: Grid, width) -> float:
    """S5-leaky/fixed-width-small-scale (footnote 7: at a fixed width a small enough scale fails *again*): the share of
    failing runs at the grid's smallest scale, NaN unless some run of that width reached a global minimum or escaped at
    some scale of the grid (an untrained network fails by itself: the claim compares with a width that can learn)."""
    if not any(g.fraction(width, sc) > 0 for sc in g.scales):
        return math.nan
    return g.failing(width, min(g.scales))


def empirical_lambda_star(g: Grid, width) -> float:
    """The largest grid scale lambda such that every run at every scale <= lambda fails (0 if none; an invalid
    run is not a failure)."""
    best = 0.0
    for sc in sorted(g.scales):
        if g.failing(width, sc) == 1.0:
            best = sc
        else:
            break
    return best


def width_independence(g: Grid, widths) -> float:
    """Thm2/lambda-star-width-independent: max / min over ``widths`` of the largest all-fail scale
    (:func:`empirical_lambda_star`); NaN with fewer than two widths, or unless every one of them has its boundary in the
    grid: a scale at which some run escapes or reaches a global minimum. The source's scale "does not depend on the
    width m, but solely on the training data": a boundary between failure and escape that is the same for every
    width. An untrained grid, where every run fails at every scale, has no boundary to compare (its all-fail scales
    are all the top of the grid)."""
    if len(widths) < 2 or not all(any(g.fraction(m, sc) > 0 for sc in g.scales) for m in widths):
        return math.nan
    stars = [empirical_lambda_star(g, m) for m in widths]
    return max(stars) / max(min(stars), 1e-300)


def run_failure_rates(P) -> dict:
    """The (width, scale) phase diagram on the three-point data, the step-size check and the contrasts."""
    data = load_data(P.data)

    def seeds_of(m):
        return P.large_seeds if m >= P.large_width else P.seeds

    sections = getattr(P, "sections", SECTIONS)
    rs = bool(getattr(P, "resume", False))
    out = {"data": data, "ols": ols(data.X, data.y)}
    if "grid" in sections:
        out["balanced"] = run_grid(data, P.widths, P.scales, seeds_of, P.lr, P.time, resume=rs)
        out["step_check"] = run_grid(data, [P.step_check_width], P.scales, lambda m: P.step_check_seeds,
                                     P.lr / P.step_check_factor, P.time, resume=rs)
    if "contrasts" not in sections:
        return out
    cs = lambda m: P.contrast_seeds  # noqa: E731
    out["unbalanced"] = run_grid(data, P.contrast_widths, P.contrast_scales, cs, P.lr, P.contrast_time, "unbalanced",
                                 stop_below=1e-10, resume=rs)
    out["dominated"] = run_grid(data, P.contrast_widths, P.contrast_scales, cs, P.lr, P.time, "dominated", resume=rs)
    out["leaky"] = run_grid(data, P.contrast_widths, P.contrast_scales, cs, P.lr, P.contrast_time, "balanced",
                            "leaky_relu", P.leak, stop_below=1e-10, resume=rs)
    out["leaky_small"] = run_grid(data, [min(P.contrast_widths)], P.leaky_small_scales, cs, P.lr, P.contrast_time,
                                  "balanced", "leaky_relu", P.leak, stop_below=1e-10, resume=rs)
    return out


def grid_table(g: Grid, what: str = "outcomes") -> "pandas.DataFrame":  # noqa: F821
    """A width x scale table: outcome counts "ols/zero/other/escaping/global" or the failing fraction."""
    import pandas as pd

    rows = {}
    for m in g.widths:
        row = {}
        for sc in g.scales:
            o = g.outcome[(m, sc)]
            if what == "outcomes":
                row[f"{sc:g}"] = "/".join(str(sum(v == k for v in o)) for k in ("ols", "zero", "other", "escaping", "global"))
                if "invalid" in o:
                    row[f"{sc:g}"] += f" ({sum(v == 'invalid' for v in o)} invalid)"
            else:
                row[f"{sc:g}"] = g.failing(m, sc)
        rows[f"m = {m} ({len(g.seeds[m])} seeds)"] = row
    return pd.DataFrame.from_dict(rows, orient="index")
