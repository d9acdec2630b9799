"""000, Sections 3.1.3-3.1.4 and App. C.2: Dataset 1.1.4 with c = 75, the Sigmoid/Tanh S-curves of the hidden
neurons in the (w_1, w_2) plane, the thesis's curve-fitting procedure (Figs 3.21, 3.23) and Conjecture 3.

The fit: f(w) = K_1 sigma(k_1 w) + K_2 sigma(k_2 w) (eq. (3.1)), or its Tanh form (3.2)
(K_1/2) tanh(k_1 w/2) + (K_2/2) tanh(k_2 w/2), in a frame rotated so that the S-curve's symmetry axis is
the first axis.  :func:`scurve_frame` builds that frame the thesis's way (merge snapshots, add the
anti-neurons -w_j, PCA, the axis through the two most distant neuron pairs, an axial symmetry);
:func:`procedure_fit` reads k (slope at 0) and K (asymptote) and sets k_1 = -5, K = -K_1 = K_2,
k_2 = k_1 + 4k/K; :func:`lsq_fit` fits all four parameters by least squares from there.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import torch
from scipy.optimize import curve_fit, minimize_scalar

from ...engine import data as D
from ...engine import init, progress, train
from ...engine.models import Network
from ... import verdicts as C
from ...params import PROFILE, Float, Floats, Int, Ints, Rule, Sections, Str, gd_bytes, gd_work
from . import common as Cm
from . import measures

ACTS = ("sigmoid", "tanh")

SECTIONS = ("main", "appendix-c", "sweep")

SCHEMA = {
    "profile": PROFILE,
    "c": Float("label factor of Dataset 1.1.4 (y = -c, c)", low=0, low_open=True, high=1e3),
    "width": Int("m of Figs 3.18, 3.21, 3.23", low=2, high=5000),
    "width_c": Int("m of Figs C.15-C.18", low=2, high=5000),
    "init_scale": Float("lambda", low=0, low_open=True, high=1.0),
    "lr": Float("step size alpha (MSE loss)", low=0, low_open=True, high=1e-2),
    "steps": Int("epochs", low=100, high=10**7),
    "merge_step": Int("the early epoch merged with the final neurons for the fit (thesis: 1000)", low=1),
    "mid_step": Int("an epoch during the growth, for the same-curve check (footnote 9)", low=1),
    "seeds": Ints("one run per seed", low=0),
    "label_seeds": Ints("seeds of the Sigmoid and Tanh runs (m = width_c, lambda = init_scale) whose label-fit epochs "
                        "C.15/simultaneous and C.17/positive-first count, as a share of runs", low=0),
    "widths": Ints("m of Figs 3.19/C.19 (left), at init_scale", low=2, high=5000),
    "scales": Floats("lambda of Figs 3.19/C.19 (right), at width_c", low=0, low_open=True, min_len=2),
    "k1": Float("the slope the procedure fixes (thesis: -5)", low=-1e3, high=1e3),
    "record_every": Int("loss recorded every this many epochs", low=1),
    "fit_refine": Int("steps of the bounded search that refines the fit's frame angle (0: the grid only)", low=0,
                      high=100),
    "sections": Sections("the parts to run: main (Figs 3.18, 3.21, 3.23, Conjecture 3), appendix-c (Figs C.15-C.18), "
                         "sweep (Figs 3.19, C.19: the widths and the scales)", choices=SECTIONS),
}
RULES = (
    Rule(("merge_step", "steps"), lambda P: P.merge_step < P.steps, "the merged epoch must come before the end"),
    Rule(("mid_step", "steps"), lambda P: P.mid_step < P.steps, "the mid epoch must come before the end"),
    Rule(("k1",), lambda P: P.k1 != 0, "k1 = 0 makes the first term constant"),
    Rule(("record_every", "steps"), lambda P: P.record_every <= P.steps, "record at least twice"),
)


def _scurve_widths(P):
    """Widths of every ensemble (each of len(seeds) runs): per activation Fig 3.18, C.15-C.18, the widths and
    the scales (Sigmoid, Tanh), and ReLU at width."""
    per = [P.width, P.width_c] + list(P.widths) + [P.width_c] * len(P.scales)
    return per * len(ACTS) + [P.width]


#: the label-timing runs (C.15/simultaneous, C.17/positive-first) store their parameters on a geometric schedule of
#: this factor, so that a label-fit epoch is read to about 1% (the chapter's 1.05 schedule rounds it to about 5%, half
#: the 10% tolerance of C.15).
LABEL_SNAP_FACTOR = 1.01


def label_snapshots(steps: int) -> list[int]:
    return train.union(train.geometric_schedule(steps, LABEL_SNAP_FACTOR), [steps])


def memory_estimate(P) -> float:
    """Every ensemble (Dataset 1.1.4: n = d = 2) with its geometric snapshots and the loss every record_every
    epochs, and the label-timing runs (two activations, len(label_seeds) runs) with their denser snapshots."""
    S = len(train.geometric_schedule(P.steps, 1.05)) + 3
    return sum(gd_bytes(len(P.seeds), m, 2, 2, P.steps, P.record_every, S) for m in _scurve_widths(P)) + \
        len(ACTS) * gd_bytes(len(P.label_seeds), P.width_c, 2, 2, P.steps, P.record_every, len(label_snapshots(P.steps)))


def work_estimate(P) -> float:
    """The runs, the label-timing runs, and the S-curve fits (a few hundred least-squares solves per run, counted as
    1e7 each)."""
    return sum(gd_work(len(P.seeds), m, 2, 2, P.steps) for m in _scurve_widths(P)) + \
        len(ACTS) * gd_work(len(P.label_seeds), P.width_c, 2, 2, P.steps) + \
        1e7 * len(P.seeds) * len(_scurve_widths(P)) * (1 + P.fit_refine)


NAMES = ("width", "width_c", "steps", "seeds", "label_seeds", "widths", "scales", "record_every", "fit_refine")
RULES = RULES + (Rule.memory(NAMES, memory_estimate, what="the ensembles and their snapshots"),
                 Rule.work(NAMES, work_estimate, what="the runs and the fits"))


# --------------------------------------------------------------------------------------------
# the fit
def sig_form(w, K1, k1, K2, k2):
    """eq. (3.1): K_1 sigma(k_1 w) + K_2 sigma(k_2 w)."""
    return K1 / (1 + np.exp(-np.clip(k1 * w, -500, 500))) + K2 / (1 + np.exp(-np.clip(k2 * w, -500, 500)))


def tanh_form(w, K1, k1, K2, k2):
    """eq. (3.2): (K_1/2) tanh(k_1 w / 2) + (K_2/2) tanh(k_2 w / 2)."""
    return 0.5 * K1 * np.tanh(0.5 * k1 * w) + 0.5 * K2 * np.tanh(0.5 * k2 * w)


FORMS = {"sigmoid": sig_form, "tanh": tanh_form}


@dataclass
class Frame:
    """Neurons (and anti-neurons) in the rotated frame: u along the symmetry axis, v across it."""

    u: np.ndarray
    v: np.ndarray
    rotation: np.ndarray  # 2x2, rows: the axis and its normal in the original (w_1, w_2) plane
    n_neurons: int  # before adding anti-neurons


def _rotated(Q: np.ndarray, phi: float, base: np.ndarray, n: int) -> Frame:
    R = np.array([[math.cos(phi), math.sin(phi)], [-math.sin(phi), math.cos(phi)]])
    U = Q @ R.T
    u, v = U[:, 0], U[:, 1]
    near = np.abs(u) <= np.quantile(np.abs(u), 0.25)
    slope = float(np.sum(u[near] * v[near]) / max(np.sum(u[near] ** 2), 1e-300))
    flip = -1.0 if slope < 0 else 1.0  # axial symmetry: the S-curve rises like sigma
    return Frame(u, flip * v, np.diag([1.0, flip]) @ R @ base, n)


def _pca(points) -> tuple[np.ndarray, np.ndarray, int]:
    P = np.asarray(points, dtype=float)
    P = P[np.isfinite(P).all(1)]
    S = np.concatenate([P, -P])  # neurons and anti-neurons (central symmetry)
    _, _, Vt = np.linalg.svd(S, full_matrices=False)
    return S @ Vt.T, Vt, len(P)


def scurve_frame(points, axis: str = "pairs", phi: float = 0.0) -> Frame:
    """The thesis's frame (Fig. 3.21 (a)-(c)): the points (N, 2) and their images -w under central symmetry,
    pre-rotated by PCA, then (``axis="pairs"``) rotated so that the symmetry axis is the mean direction of
    the lines through the two most distant neuron pairs, or (``"pca"``) left on the first principal axis,
    or (``"angle"``) turned by ``phi`` from it; finally reflected so that v increases with u at 0."""
    if axis not in ("pairs", "pca", "angle"):
        raise ValueError(f"axis must be 'pairs', 'pca' or 'angle', got {axis!r}")
    Q, Vt, n = _pca(points)
    if axis == "pca":
        return _rotated(Q, 0.0, Vt, n)
    if axis == "angle":
        return _rotated(Q, phi, Vt, n)
    order = np.argsort(-np.linalg.norm(Q, axis=1))
    p1 = Q[order[0]]
    p2 = next(Q[i] for i in order[1:] if not np.allclose(Q[i], -p1) and not np.allclose(Q[i], p1))
    angles = [math.atan2(p[1], p[0]) for p in (p1, p2)]
    angles = [a - math.pi if a > math.pi / 2 else a + math.pi if a <= -math.pi / 2 else a for a in angles]
    return _rotated(Q, float(np.mean(angles)), Vt, n)


def r_squared(v: np.ndarray, fitted: np.ndarray) -> float:
    ss = float(np.sum((v - v.mean()) ** 2))
    return 1.0 - float(np.sum((v - fitted) ** 2)) / ss if ss > 0 else float("nan")


@dataclass
class Fit:
    form: str
    K1: float
    k1: float
    K2: float
    k2: float
    r2: float
    rms: float  # root-mean-square residual in v, relative to the largest |v| of the points

    def __call__(self, w):
        return FORMS[self.form](np.asarray(w, dtype=float), self.K1, self.k1, self.K2, self.k2)

    @property
    def K(self) -> float:
        return max(abs(self.K1), abs(self.K2))

    @property
    def intercept(self) -> float:
        return float(self(0.0))


def _fit(frame: Frame, form: str, params) -> Fit:
    f = FORMS[form](frame.u, *params)
    scale = max(float(np.abs(frame.v).max()), 1e-300)
    return Fit(form, *map(float, params), r_squared(frame.v, f), float(np.sqrt(np.mean((frame.v - f) ** 2)) / scale))


def procedure_fit(frame: Frame, form: str = "sigmoid", k1: float = -5.0, near: float = 0.1,
                  far: float = 0.8) -> Fit:
    """Fig. 3.21 (c)-(d): the tangent slope k at the origin (least squares through 0 over abs(u) <= near *
    max abs(u), at least 4 points), the asymptote K (mean abs(v) over abs(u) >= far * max abs(u)), then K_2 = K = -K_1
    and k_2 = k_1 + 4k/K (from f'(0) = (K_1 k_1 + K_2 k_2)/4 = k)."""
    if form not in FORMS:
        raise ValueError(f"form must be one of {sorted(FORMS)}, got {form!r}")
    u, v = frame.u, frame.v
    au = np.abs(u)
    sel = au <= near * au.max()
    if sel.sum() < 4:
        sel = au <= np.sort(au)[min(3, len(au) - 1)]
    k = float(np.sum(u[sel] * v[sel]) / max(np.sum(u[sel] ** 2), 1e-300))
    K = float(np.mean(np.abs(v[au >= far * au.max()])))
    k2 = k1 + 4.0 * k / K
    return _fit(frame, form, (-K, k1, K, k2))


def lsq_fit(frame: Frame, start: Fit) -> Fit:
    """All four parameters by least squares (scipy ``curve_fit``), started at the procedure's values (the
    start is returned only when the optimiser fails)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p, _ = curve_fit(FORMS[start.form], frame.u, frame.v, p0=[start.K1, start.k1, start.K2, start.k2],
                             maxfev=4000)
    except (RuntimeError, ValueError):
        return start
    out = _fit(frame, start.form, p)
    return out if np.isfinite(out.r2) else start


@dataclass
class ScurveFit:
    """The fits of one set of neuron positions."""

    pairs_frame: Frame  # the axis through the two most distant pairs (the text read literally)
    pairs: Fit  # the procedure's parameters in that frame
    frame: Frame  # the frame where the least-squares fit is best
    procedure: Fit  # the procedure's parameters (k_1 fixed, K and k read off) in that frame
    lsq: Fit  # all four parameters by least squares in that frame


def fit_scurve(points, form: str = "sigmoid", k1: float = -5.0, coarse: int = 9, fine: int = 6,
               refine: int = 12) -> ScurveFit:
    """The thesis's procedure and its least-squares alternative.  The frame: turned by phi from the first
    principal axis, phi on a grid of ``coarse`` values in [-40, 40] degrees refined by ``fine`` values
    around the best and a bounded scalar search of at most ``refine`` steps around that, keeping the largest least-squares R^2 (the thesis chose its axis by construction and
    by eye; the literal construction is kept as ``pairs``)."""
    fr = scurve_frame(points, "pairs")
    best = None

    def consider(phi):
        nonlocal best
        f2 = scurve_frame(points, "angle", float(phi))
        lf = lsq_fit(f2, procedure_fit(f2, form, k1))
        if best is None or (np.isfinite(lf.r2) and lf.r2 > best[2].r2):
            best = (phi, f2, lf)

    step = math.radians(80) / (coarse - 1)
    for phi in np.linspace(-math.radians(40), math.radians(40), coarse):
        consider(phi)
    for phi in best[0] + np.linspace(-step / 2, step / 2, fine):
        consider(phi)
    fine_step = step / max(fine - 1, 1)

    def loss(phi):
        consider(phi)
        f2 = scurve_frame(points, "angle", float(phi))
        return 1.0 - lsq_fit(f2, procedure_fit(f2, form, k1)).r2

    if refine > 0:
        minimize_scalar(loss, bounds=(best[0] - fine_step, best[0] + fine_step), method="bounded",
                        options={"xatol": 1e-4, "maxiter": refine})
    _, f2, lf = best
    return ScurveFit(fr, procedure_fit(fr, form, k1), f2, procedure_fit(f2, form, k1), lf)


def curve_residual(points, frame: Frame, fit: Fit) -> float:
    """RMS distance (in v, relative to the largest abs(v)) of other points from a fitted curve, in that fit's frame."""
    U = np.asarray(points, dtype=float) @ frame.rotation.T
    U = np.concatenate([U, -U])
    return float(np.sqrt(np.mean((U[:, 1] - fit(U[:, 0])) ** 2)) / max(float(np.abs(U[:, 1]).max()), 1e-300))


def curve_r2(points, frame: Frame, fit: Fit) -> float:
    """R^2 of other points (and their anti-neurons) against a fitted curve, in that fit's frame."""
    U = np.asarray(points, dtype=float) @ frame.rotation.T
    U = np.concatenate([U, -U])
    return r_squared(U[:, 1], fit(U[:, 0]))


# --------------------------------------------------------------------------------------------
# the runs
@dataclass
class Group:
    """One ensemble: activation, width, per-run seeds and scales, its trajectory."""

    label: str
    activation: str
    width: int
    seeds: list
    scales: list
    traj: train.Trajectory


def run_scurves(P) -> dict:
    """Train every ensemble of the chapter on Dataset 1.1.4 (c = P.c), MSE loss, step P.lr, balanced init:
    per activation (Sigmoid, Tanh) Fig 3.18 (m = P.width), C.15-C.18 (m = P.width_c), Fig 3.19/C.19
    (P.widths at P.init_scale, P.scales at P.width_c), and ReLU at P.width (Conjecture 3's ReLU case).
    Ensembles of equal width train as one computation (train.gradient_descent_many)."""
    ds = D.brisbois_alternative(P.c)
    snaps = train.union(train.geometric_schedule(P.steps, 1.05), [P.merge_step, P.mid_step, P.steps])
    specs = []
    for act in (*ACTS, "relu"):
        if "main" in P.sections:
            specs.append(("main", act, P.width, P.seeds, [P.init_scale] * len(P.seeds)))
        if act == "relu":
            continue
        if "appendix-c" in P.sections:
            specs.append(("appC", act, P.width_c, P.seeds, [P.init_scale] * len(P.seeds)))
        if "sweep" in P.sections:
            for m in P.widths:
                specs.append((f"m={m}", act, m, P.seeds, [P.init_scale] * len(P.seeds)))
            for lam in P.scales:
                specs.append((f"lambda={lam:g}", act, P.width_c, P.seeds, [lam] * len(P.seeds)))
    groups = []
    for act in (*ACTS, "relu"):
        mine = [s for s in specs if s[1] == act]
        if not mine:
            continue
        # groups that are the same runs (e.g. m = width_c at init_scale, Appendix C's and the lambda sweep's
        # lambda = init_scale) train once and share one trajectory (and, in fits_by_group, one fit)
        key = lambda spec: (spec[2], tuple(spec[3]), tuple(float(x) for x in spec[4]))
        distinct = list(dict.fromkeys(key(sp) for sp in mine))
        params = [init.balanced(list(seeds), m, 2, list(sc)) for (m, seeds, sc) in distinct]
        trajs = train.gradient_descent_many(params, ds, Network(act), lr=P.lr, steps=P.steps, loss="mean",
                                            snapshots=snaps, record_every=P.record_every)
        by_key = dict(zip(distinct, trajs))
        groups += [Group(lbl, a, m, list(seeds), list(sc), by_key[key((lbl, a, m, seeds, sc))])
                   for (lbl, a, m, seeds, sc) in mine]
    label = {}
    if "appendix-c" in P.sections:
        # C.15/C.17's label timing: their own runs (Figs C.15-C.18's settings) on a denser snapshot schedule
        for act in ACTS:
            p = init.balanced(list(P.label_seeds), P.width_c, 2, [P.init_scale] * len(P.label_seeds))
            tr = train.gradient_descent(p, ds, Network(act), lr=P.lr, steps=P.steps, loss="mean",
                                        snapshots=label_snapshots(P.steps), record_every=P.record_every)
            label[act] = Group("label", act, P.width_c, list(P.label_seeds), [P.init_scale] * len(P.label_seeds), tr)
    return dict(data=ds, groups=groups, snaps=snaps, label=label)


def find(run: dict, label: str, activation: str) -> Group:
    for g in run["groups"]:
        if g.label == label and g.activation == activation:
            return g
    raise KeyError((label, activation))


def points_of(g: Group, r: int, steps) -> np.ndarray:
    """Neuron positions (w_1, w_2) of run r at the given snapshot epochs, stacked."""
    return np.concatenate([g.traj.at(k).W[r].numpy() for k in steps])


def fits_of(g: Group, P, steps=None) -> list[ScurveFit]:
    """The S-curve fits of every run of a group (thesis: theta^merge_step merged with the final neurons)."""
    steps = steps or [P.merge_step, P.steps]
    form = g.activation if g.activation in FORMS else "sigmoid"
    return [fit_scurve(points_of(g, r, steps), form, P.k1, refine=P.fit_refine) for r in range(len(g.seeds))]


#: Figs 3.18 / 3.21 / 3.23 / C.16 / C.18, C3, Conjecture 3: the neurons lie on the fitted two-sigmoid (two-tanh) curve:
#: R^2 of the least-squares fit (and of the thesis's procedure, Figs 3.21 / 3.23)
GOOD_FIT = C.above(0.95)
#: Conjecture 3 (ReLU): the grown neurons point in at most two directions (metrics.distinct_directions)
TWO_RAYS = C.below(2, strict=False)
#: C.15 (footnote 9): the neurons of another epoch lie on the curve fitted to the merged epochs (:func:`curve_r2`)
SAME_CURVE = C.above(0.95)
#: Fig. 3.18: the neurons' own curve through the origin, :func:`neurons_intercept` below 0.05
THROUGH_ORIGIN = C.below(0.05)


def neurons_intercept(f: ScurveFit) -> float:
    """Fig. 3.18's "passing through the origin", read on the neurons themselves: abs(g(0)) / K of the least-squares
    fit g of the same form to the neurons alone (without the anti-neurons -w), in the frame of ``f`` and started
    from its fit.  The fit of :func:`fit_scurve` cannot say it: the thesis's frame adds the images -w, so any cloud,
    on a curve or not, gives a fit through (0, 0); a curve of neurons that misses the origin gives its offset here."""
    fr = f.frame
    n = fr.n_neurons
    g = lsq_fit(Frame(fr.u[:n], fr.v[:n], fr.rotation, n), f.lsq)
    return abs(g.intercept) / g.K


def fits_by_group(run, P) -> dict:
    """The S-curve fits of every group of the chapter, keyed by (group label, activation): the main runs,
    Appendix C's, each width and each scale (one progress bar over the groups)."""
    keys = ([("main", a) for a in ACTS] + [("appC", a) for a in ACTS]
            + [(f"m={m}", a) for m in P.widths for a in ACTS] + [(f"lambda={l:g}", a) for l in P.scales for a in ACTS])
    present = {(g.label, g.activation) for g in run["groups"]}
    keys = [k for k in keys if k in present]  # the sections that ran
    done = {}  # id(trajectory) -> fits: groups that share their runs share their fits
    out = {}
    for key in progress.each(keys, "S-curve fits (group, activation)", unit="group"):
        g = find(run, *key)
        if id(g.traj) not in done:
            done[id(g.traj)] = fits_of(g, P)
        out[key] = done[id(g.traj)]
    return out


def valid(g: Group) -> torch.Tensor:
    return measures.finite_runs(g.traj.loss, g.traj.final)


# Fig. 3.21's setting as the s-curves chapter runs it (its parameters cell; tests/test_controls_h000.py checks that
# they agree): Dataset 1.1.4 with c = 75, m = 100, lambda = 1e-6, alpha = 1e-4 on the MSE, theta^1000 merged with the
# final neurons, k_1 = -5, the frame's angle refined by 12 steps.  Another chapter that compares a fit with the one the
# thesis calls "very good" (C.13, activations) trains these runs with :func:`fig321_fits`.
FIG321 = dict(c=75.0, width=100, init_scale=1e-6, lr=1e-4, merge_step=1000, k1=-5.0, fit_refine=12)


def fig321_fits(seeds, steps: int, record_every: int = 10, data: D.Dataset | None = None
                ) -> tuple[list[ScurveFit], torch.Tensor, torch.Tensor]:
    """Fig3.21/procedure's fits, one per seed: the Sigmoid runs of Fig. 3.21 (:data:`FIG321`, ``steps`` epochs)
    fitted as :func:`fits_of` fits the chapter's main group, on Dataset 1.1.4 with c = 75, or on ``data`` with every
    other setting the same (C.13: "the same curve fitting ... but here for Dataset 1.1.0. The rest of the settings
    remain the same", 000:2100).  Returns the fits, the runs' finiteness flags and their final losses."""
    ds = D.brisbois_alternative(FIG321["c"]) if data is None else data
    seeds = list(seeds)
    scales = [FIG321["init_scale"]] * len(seeds)
    p = init.balanced(seeds, FIG321["width"], 2, scales)
    tr = train.gradient_descent(p, ds, Network("sigmoid"), lr=FIG321["lr"], steps=steps, loss="mean",
                                snapshots=train.union([FIG321["merge_step"]], [steps]), record_every=record_every)
    g = Group("fig3.21", "sigmoid", FIG321["width"], seeds, scales, tr)
    fits = [fit_scurve(points_of(g, r, [FIG321["merge_step"], steps]), "sigmoid", FIG321["k1"],
                       refine=FIG321["fit_refine"]) for r in range(len(seeds))]
    return fits, valid(g), g.traj.loss[:, -1]


#: Figs 3.19 / C.19: "more neurons, smaller norms" (:func:`norm_falls_with_m`, every seed) and, Fig. 3.19 right,
#: "smaller lambda, less spread" (:func:`spread_falls_with_lambda`): yes or no
FALLS = C.is_true()


def monotone_down(seq) -> bool:
    """Every value strictly below the one before it."""
    seq = list(seq)
    return all(b < a for a, b in zip(seq, seq[1:]))


def norm_falls_with_m(finals) -> bool:
    """Figs 3.19 / C.19 (left): ``finals``, the final hidden weights W (R, m, d) of one ensemble per width, in the
    order of the widths (the same seeds in each); whether every seed's mean ||w_j|| strictly falls along them."""
    per_seed = torch.stack([W.norm(dim=-1).mean(-1) for W in finals])  # (widths, R)
    return all(monotone_down(per_seed[:, r].tolist()) for r in range(per_seed.shape[1]))


def spread_falls_with_lambda(spreads) -> bool:
    """Fig. 3.19 (right): ``spreads``, the RMS spread around the fitted curve (:class:`Fit` ``rms``, mean over
    seeds) at each scale in increasing order of lambda; whether it strictly falls as lambda decreases."""
    return monotone_down(list(spreads)[::-1])


def label_fit_epochs(g: Group, data, network: Network, tol: float = 0.1) -> tuple[torch.Tensor, torch.Tensor]:
    """Per run, the epochs from which on the positive (resp. negative) label stays fitted within ``tol``."""
    pos, neg, _ = measures.label_fit_epochs(g.traj, data, network, tol)
    return pos, neg


#: C.15 (Sigmoid): both labels fitted "simultaneously": their fit epochs within this fraction of the later one
SIMULTANEOUS_TOL = 0.1
#: C.15/C.17: the thesis describes the typical dynamics ("Sigmoid ANNs ... fit the positive and negative labels
#: simultaneously", "Tanh ANNs first fit the positive label, then the negative one", Section 3.1.3) from one run per
#: figure: a share of runs, the lower end of its Wilson interval above one half (metrics.typical_share)
TYPICAL = Cm.TYPICAL


def label_gap(pos: torch.Tensor, neg: torch.Tensor) -> torch.Tensor:
    """Per run, abs(positive - negative fit epoch) / the later of the two; nan where a label is never fitted."""
    gap = (pos - neg).abs().double() / torch.maximum(pos, neg).double().clamp_min(1)
    return torch.where((pos > 0) & (neg > 0), gap, torch.full_like(gap, float("nan")))


def simultaneous_flags(pos: torch.Tensor, neg: torch.Tensor, tol: float = SIMULTANEOUS_TOL) -> torch.Tensor:
    """Per run: both labels fitted, at epochs within ``tol`` of the later one (a run that never fits a label does
    not show the behaviour)."""
    return label_gap(pos, neg) < tol


def positive_first_flags(pos: torch.Tensor, neg: torch.Tensor) -> torch.Tensor:
    """Per run: both labels fitted, the positive one strictly first."""
    return (pos > 0) & (neg > 0) & (neg > pos)


def findings(claims, fits: dict, P) -> str:
    """The chapter's summary, written from this execution's checks and fits."""
    def say(cid, yes, no):
        return yes if claims.passed(cid) else no
    missing = [n for n in ("main", "appendix-c") if n not in P.sections]
    if missing:
        return f"- Sections {', '.join(missing)} were not run in this run: the summary needs them."
    s = fits[("main", "sigmoid")]
    k1s = ", ".join(f"{f.lsq.k1:.2f}" for f in s)
    lines = [
        "- " + say("Fig3.18/sigmoid-s-curve", "The Sigmoid neurons lie on a two-sigmoid curve through the origin "
                   "after a rotation, for every seed", "The Sigmoid neurons do not all fit a two-sigmoid curve")
        + f" (least-squares R^2 from {min(f.lsq.r2 for f in s):.4f}); the free least-squares k_1 is {k1s}, "
          f"against the thesis's chosen {P.k1:g}.",
        "- " + say("Fig3.21/procedure", "The thesis's procedure (k_1 fixed, K and k read off) fits as well in the "
                   "best frame", "The thesis's procedure with k_1 fixed does not reach R^2 0.95 in the best frame")
        + "; " + say("Fig3.21/literal-axis", "the literal axis construction also works.",
                     "with the axis built literally through the two most distant neuron pairs it does not "
                     f"(R^2 from {min(f.pairs.r2 for f in s):.2f}): the text's construction is not what its "
                     "figure shows, the axis has to be chosen otherwise."),
        "- " + say("C.15/same-curve", "Neurons of a mid-growth epoch lie on the curve fitted to the final ones "
                   "(footnote 9).", "Neurons of a mid-growth epoch are off the final curve (footnote 9 not seen)."),
        "- In a typical run (a share of runs whose interval lies above one half), " + say(
            "C.17/positive-first", "Tanh fits the positive label first, ", "Tanh is not seen to fit the positive label first, ")
        + say("C.15/simultaneous", "and Sigmoid both labels together.",
              "and Sigmoid is not seen to fit both labels together (too few runs do, or too few runs to say)."),
        "- " + say("Conj3/two-term", "Conjecture 3's two-term form describes every Sigmoid and Tanh run at "
                   "lambda <= 1e-6 here", "Conjecture 3's two-term form fails for some run")
        + "; " + say("Conj3/relu-two-rays", "ReLU neurons lie on two rays.", "ReLU neurons use more than two rays."),
    ]
    return "\n".join(lines)
