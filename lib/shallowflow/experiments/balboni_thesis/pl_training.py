"""Experiment 6-B: full-batch GD of deep FCNs, measured along training (thesis Sec. 6.2-6.3).

One grid of runs serves Figures 6.5-6.8, 6.11-6.12 and 6.14-6.23: for every activation (ReLU, Tanh),
loss (MSE on the logits, cross-entropy) and number of examples n, the seeds x learning rates are ONE
ensemble (:class:`~shallowflow.deep.models.DeepFCN` with a leading runs axis, trained by
:class:`~shallowflow.deep.train.PerRunSGD` in :func:`shallowflow.deep.train.train`).  Each seed draws a
random subset of the data (and a held-out test subset) and a network; all learning rates of a seed
start from the same network.  At every epoch (= step, full batch) the callback records

- the loss f_t, norm(grad f_t)^2 and the local PL coefficient mu_t = norm(grad f)^2 / (2 f_t)   (6.2),
- the smoothness L_t: the top Hessian eigenvalue by HVP power iteration (warm-started every
  ``hvp_every`` steps, held in between), and the secant estimate as a cross-check,
- the feature Gram matrix of the tracked layer (the last hidden one): lambda_min, lambda_max, and the
  perturbation bounds of (4.11): the *oracle* lambda_min(G_0) - norm(G_t - G_0)_op and the *chain* bound
  lambda_min(G_0) - (Lipschitz-in-weights chain) x norm(W_t - W_0) (Lemmas 16 and 21's (B.17)),
- every ``gen_every`` steps for MSE: per-example gradient norms (vmap(grad)) for the generalisation
  bound (4.12)-(4.13), the training and test losses.
"""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field

import numpy as np
import torch

from ...engine.config import DTYPE, default_device
from ...deep import data as ddata
from ...deep import measure, models
from ...deep import train as dtrain
from ...engine import metrics, progress
from ...engine.checkpoint import resumable
from ... import verdicts as C
from ...verdicts.criteria import Criterion
from ...params import PROFILE, Bool, Float, Floats, Int, Ints, Rule, Sections, Str, array_bytes, gd_work

SECTIONS = ("prediction", "conditioning", "bounds", "generalisation")
# the (activation, loss) grids each section reads: a run trains only the grids its sections need
NEEDS = {"prediction": {("relu", "mse"), ("relu", "ce"), ("tanh", "ce")},
         "conditioning": {("relu", "mse"), ("relu", "ce"), ("tanh", "mse"), ("tanh", "ce")},
         "bounds": {("relu", "mse"), ("relu", "ce"), ("tanh", "mse"), ("tanh", "ce")},
         "generalisation": {("relu", "mse")}}

SCHEMA = {
    "profile": PROFILE,
    "dataset": Str("inputs: 'auto' (CIFAR-10 when present locally, else digits), 'digits' or 'correlated'",
                   choices=("auto", "digits", "correlated")),
    "depth": Int("hidden layers (the thesis: 6 and 9; Fig. 6.5: 6)", low=2, high=50),
    "width": Int("hidden width (the thesis: 500)", low=8, high=5000),
    "examples": Ints("numbers of training examples n (the thesis: 50, 100, 250, 500)", low=4, high=1500),
    "test_examples": Int("held-out examples per seed for the generalisation gap", low=10, high=1000),
    "lrs": Floats("learning rates of full-batch GD (the thesis: 0.0005, 0.001, 0.005, 0.01)", low=0, high=10, low_open=True),
    "epochs": Int("full-batch GD steps (the thesis: 80)", low=10, high=10000),
    "seeds": Ints("seeds: each draws a data subset and a network (the thesis: 3)", low=0, min_len=2),
    "accuracy_filter": Float("runs analysed: final training accuracy above this (the thesis: 0.12)", low=0, high=1),
    "hvp_every": Int("steps between HVP power iterations for L", low=1, high=10000),
    "hvp_iters": Int("power iterations at the first measurement (later ones are warm-started with a third)", low=3, high=500),
    "gen_every": Int("steps between per-example gradient measurements (generalisation bound)", low=1, high=10000),
    "delta": Float("confidence delta of the bound (4.13) (unstated; 0.05)", low=0, high=1, low_open=True),
    "mse": Str("the MSE convention: 'mse_mean' (torch's MSELoss, mean over examples and classes) or 'mse' "
               "(mean over examples of 1/2 the squared error summed over classes)", choices=("mse_mean", "mse")),
    "sections": Sections("parts to run: 'prediction' (Figs. 6.5, 6.14, 6.15), 'conditioning' (Figs. 6.7, 6.8, "
                         "6.16-6.19), 'bounds' (Figs. 6.6, 6.20-6.23), 'generalisation' (Figs. 6.11, 6.12); each trains "
                         "only the (activation, loss) grids it reads", choices=SECTIONS),
    "level": Float("level of the Wilson intervals of the shares of runs that decide the typical-curve checks",
                   low=0.5, high=0.999, low_open=True),
    "resume": Bool("keep each finished (activation, loss, n) grid on disk and read it back when the same parameters run "
                   "again with the same package code (shallowflow.engine.checkpoint): an interrupted paper run resumes at the "
                   "grids it has not finished, with identical numbers; off in the book and smoke profiles"),
}
RULES = (
    Rule(("examples", "width"), lambda P: max(P.examples) < P.width,
         "n must stay below the width, else the tracked Gram matrix is singular"),
    Rule(("hvp_every", "epochs"), lambda P: P.hvp_every <= P.epochs, "L must be measured at least once after step 0"),
    Rule(("gen_every", "epochs"), lambda P: P.gen_every <= P.epochs, "the bound needs at least two epochs"),
    Rule(("lrs",), lambda P: len(P.lrs) >= 2, "Fig. 6.7 compares small and large learning rates"),
)


def memory_estimate(P) -> float:
    """One grid: seeds x lrs MLPs (depth x width^2 parameters, about eight copies: weights, gradients, the initial
    and held ones, the HVP vectors), their features (n x width per layer) and per-example gradients."""
    R, n = len(P.seeds) * len(P.lrs), max(P.examples) + P.test_examples
    return array_bytes(R, P.depth, P.width, P.width, copies=8) + array_bytes(R, n, P.depth, P.width, copies=6) \
        + array_bytes(n, P.depth, P.width, P.width)


def work_estimate(P) -> float:
    """Every grid (2 activations x 2 losses x n): the GD steps, the HVP power iterations every hvp_every steps and
    the per-example gradients every gen_every steps, each about a forward and backward pass (3 n depth width^2)."""
    R = len(P.seeds) * len(P.lrs)
    passes = P.epochs * (1 + 2 * P.hvp_iters / P.hvp_every + 2 / P.gen_every)
    return len(pairs(P)) * sum(gd_work(R, P.depth * P.width, n, P.width, 3 * passes) for n in P.examples)


NAMES = ("depth", "width", "examples", "test_examples", "lrs", "epochs", "seeds", "hvp_every", "hvp_iters", "gen_every",
         "sections")
RULES = RULES + (Rule.memory(NAMES[:5] + ("seeds",), memory_estimate, what="the networks and their features"),
                 Rule.work(NAMES, work_estimate, what="the training grids"))
# Fig. 6.5's caption: "for the final epochs the prediction is almost perfect" (predicted / measured decrease 1),
# while "the initial few epochs the measured loss decrease is bigger than the predicted one" (below 1)
SOURCE_FIG65_LATE_RATIO = 1.0
ACTS = ("relu", "tanh")
LOSSES = ("mse", "ce")


def pairs(P) -> list[tuple[str, str]]:
    """The (activation, loss) grids the run's sections read, in the order (ReLU, Tanh) x (MSE, CE)."""
    need = set().union(*(NEEDS[s] for s in getattr(P, "sections", SECTIONS)))
    return [p for p in itertools.product(ACTS, LOSSES) if p in need]


@dataclass
class Grid:
    """The runs of one (activation, loss, n): R = seeds x lrs, every series (steps + 1, R) or (k, R)."""

    act: str
    loss: str
    n: int
    seeds: list
    lrs: list  # per run
    seed_of: list  # per run
    data_name: str
    f: np.ndarray  # (T + 1, R) training loss
    gsq: np.ndarray  # ||grad f||^2
    L: np.ndarray  # power-iteration smoothness (held between measurements)
    L_secant: np.ndarray  # secant estimate between t and t + 1 (T, R)
    lmin: np.ndarray  # tracked layer: lambda_min(G / width)
    lmax: np.ndarray
    oracle: np.ndarray  # lambda_min(G_0) - ||G_t - G_0||_op   (rescaled)
    chain_steps: list  # the epochs where the chain bound is computed (bound_schedule)
    chain: np.ndarray  # (k, R) lambda_min(G_0) - chain bound
    acc: np.ndarray  # final training accuracy (R,)
    gen_steps: list = field(default_factory=list)
    G_lip: np.ndarray | None = None  # (k, R) max_i ||grad l_i||
    M: np.ndarray | None = None  # (k, R) max per-example loss, training and held-out examples
    test_f: np.ndarray | None = None  # (k, R) test loss
    seconds: float = 0.0

    @property
    def mu(self) -> np.ndarray:
        return self.gsq / (2 * self.f)

    def valid(self) -> np.ndarray:
        return np.isfinite(self.f).all(0) & np.isfinite(self.gsq).all(0)

    def kept(self, filt: float) -> np.ndarray:
        """Runs passing the accuracy filter."""
        return self.acc > filt


def _chain_bound(w0, wt, h0, ht, x_norm: torch.Tensor, act: str, width: int, fixed: dict | None = None) -> torch.Tensor:
    """Upper bound on norm(G_t - G_0)_op / width for the last hidden layer, per run, by the layer-wise chain
    norm(dH_k)_F <= c norm(dW_k)_op B_{k-1} + c s_k norm(dH_{k-1})_F (Lemma 16 with the Lipschitz constants
    sigma_max(W) maxabs(phi') of (B.17)), with s_k = max(sigma_max(W_k^0), sigma_max(W_k^t)), B_{k-1} the larger
    norm(H_{k-1})_F of both ends (B_0 = norm(X)_F), then norm(G_t - G_0)_op <= norm(dF) (norm(F_t) + norm(F_0)).

    ``fixed`` caches the quantities of the initial network (sigma_max(W_k^0), norm(H_k^0)_F, norm(F_0)_op): they
    do not change along training, so they are computed once per grid (the same numbers, fewer SVDs)."""
    c = 1 / models.RELU_STD if act == "relu" else 1 / models.TANH_STD  # max |phi'| of the normalised activation
    if fixed is None:
        fixed = {}
    if not fixed:
        fixed["s0"] = [torch.linalg.matrix_norm(w0[k], ord=2) for k in range(len(h0))]
        fixed["h0"] = [h.flatten(1).norm(dim=1) for h in h0]
        fixed["F0"] = torch.linalg.matrix_norm(h0[-1], ord=2)
    dH = torch.zeros_like(x_norm)
    for k in range(len(h0)):
        dW = torch.linalg.matrix_norm(wt[k] - w0[k], ord=2)
        s = torch.maximum(torch.linalg.matrix_norm(wt[k], ord=2), fixed["s0"][k])
        B = x_norm if k == 0 else torch.maximum(fixed["h0"][k - 1], ht[k - 1].flatten(1).norm(dim=1))
        dH = c * dW * B + c * s * dH
    Fn = fixed["F0"] + torch.linalg.matrix_norm(ht[-1], ord=2)
    return dH * Fn / width


def bound_schedule(P) -> set:
    """Epochs where the chain bound is computed: 0..3, then every ``hvp_every``, and the last."""
    return set(range(min(4, P.epochs + 1))) | set(range(0, P.epochs + 1, P.hvp_every)) | {P.epochs}


def run_grid(P, act: str, loss: str, n: int) -> Grid:
    """Train the seeds x lrs ensemble of one (activation, loss, n) and measure it (see module doc)."""
    device = default_device()
    R_seeds, R_lrs = list(P.seeds), list(P.lrs)
    seed_of = [s for s in R_seeds for _ in R_lrs]
    lrs = [lr for _ in R_seeds for lr in R_lrs]
    R = len(lrs)
    Xs, ys, Xt, yt, name = [], [], [], [], ""
    for s in R_seeds:
        full = ddata.load(P.dataset, n=n + P.test_examples, seed=s, device=device).normalised()
        name = name or ddata.load(P.dataset, n=n, seed=s, device=device).describe()
        Xs.append(full.X[:n]); ys.append(full.y[:n]); Xt.append(full.X[n:]); yt.append(full.y[n:])
    rep = lambda ts: torch.stack([ts[R_seeds.index(s)] for s in seed_of])  # noqa: E731
    X, y, Xte, yte = rep(Xs), rep(ys), rep(Xt), rep(yt)
    classes = 10
    # every lr of a seed starts from the same network: seed the runs by their data seed
    model = models.DeepFCN(X.shape[-1], P.width, P.depth, classes, act, seeds=seed_of, device=device)
    params = list(model.parameters())
    w0 = [p.detach().clone() for p in params]
    x_norm = X.flatten(1).norm(dim=1)

    kind = P.mse if loss == "mse" else loss

    seen = {}  # the features of the objective's forward pass: the callback of the same step reads them

    def objective(step):
        out, feats = model.forward_features(X)
        seen["step"], seen["feats"] = step, [f.detach() for f in feats]
        return dtrain.loss_per_run(out, y, kind)

    def h(ps):
        out = models.apply(list(ps), X, act)
        return dtrain.loss_per_run(out, y, kind).sum()

    with torch.no_grad():
        h0 = [t.detach().clone() for t in model.features(X)]
    G0 = measure.gram(h0[-1]) / P.width
    lmin0 = torch.linalg.eigvalsh(G0)[:, 0]
    rec = {k: [] for k in ("gsq", "L", "lmin", "lmax", "oracle", "secant")}
    chain_steps = bound_schedule(P)
    chain = {"steps": [], "values": []}
    gen = {"steps": [], "G": [], "M": [], "test": []}
    state = {"v": None, "L": None, "g_prev": None, "p_prev": None}
    fixed = {}  # the chain bound's constants of the initial network, computed at its first call

    def callback(step, L_now):
        g = tuple(p.grad.detach().clone() for p in params)
        ps = tuple(p.detach().clone() for p in params)
        rec["gsq"].append(measure.sq_norm(g))
        if state["g_prev"] is not None:
            rec["secant"].append(measure.secant_smoothness(state["g_prev"], g, state["p_prev"], ps))
        state["g_prev"], state["p_prev"] = g, ps
        if step % P.hvp_every == 0:
            iters = P.hvp_iters if state["v"] is None else max(2, P.hvp_iters // 3)
            lam, state["v"] = measure.power_iteration(h, ps, iters, state["v"])
            state["L"] = lam
        rec["L"].append(state["L"])
        with torch.no_grad():
            # the parameters have not moved since the objective's forward pass of this step
            ht = seen["feats"] if seen.get("step") == step else model.features(X)
            Gt = measure.gram(ht[-1]) / P.width
            ev = torch.linalg.eigvalsh(Gt)
            rec["lmin"].append(ev[:, 0]); rec["lmax"].append(ev[:, -1])
            rec["oracle"].append(lmin0 - torch.linalg.eigvalsh(Gt - G0).abs().amax(-1))  # symmetric: ||.||_op
            if step in chain_steps:  # SVDs of every layer: on a schedule, not every epoch
                chain["steps"].append(step)
                chain["values"].append(lmin0 - _chain_bound(w0, ps, h0, ht, x_norm, act, P.width, fixed))
        if loss == "mse" and (step % P.gen_every == 0 or step == P.epochs):
            gi = measure.fc_per_example_grad_sq(ps, X, y, kind, act)
            with torch.no_grad():
                li = dtrain.example_loss(model(X), y, kind)
                lt = dtrain.example_loss(model(Xte), yte, kind)
                gen["steps"].append(step)
                # M must bound the loss of every example, not only the training ones: the largest loss
                # observed on the training and the held-out examples
                gen["G"].append(gi.sqrt().amax(1)); gen["M"].append(torch.maximum(li.amax(1), lt.amax(1)))
                gen["test"].append(lt.mean(1))
        return None

    opt = dtrain.PerRunSGD(params, lrs)
    hist = dtrain.train(params, objective, opt, P.epochs, callback)
    with torch.no_grad():
        acc = dtrain.accuracy(model(X), y)
    np_ = lambda xs: torch.stack(xs).detach().cpu().numpy()  # noqa: E731
    grid = Grid(act, loss, n, R_seeds, lrs, seed_of, name, hist.loss.cpu().numpy(), np_(rec["gsq"]), np_(rec["L"]),
                np_(rec["secant"]), np_(rec["lmin"]), np_(rec["lmax"]), np_(rec["oracle"]), chain["steps"],
                np_(chain["values"]), acc.cpu().numpy(), seconds=hist.seconds)
    if gen["steps"]:
        grid.gen_steps, grid.G_lip, grid.M, grid.test_f = gen["steps"], np_(gen["G"]), np_(gen["M"]), np_(gen["test"])
    return grid


def run_training(P) -> dict:
    """Every (activation, loss, n) grid of the chapter, keyed by (act, loss, n), with the thread count used."""
    t0 = time.perf_counter()
    out = {}
    # one thread: the per-epoch work is many small operations (eigvalsh, SVDs of width-sized matrices, HVPs)
    # that lose to OpenMP overhead; a second thread measured faster on the one big product but doubled the CPU
    # time of the whole run (528 s against 150 s) on the shared 2-core machine
    # each grid depends on these parameters and its own (act, loss, n) only: with P.resume a grid is one chunk of
    # shallowflow.engine.checkpoint.resumable (the paper profile), read back when an interrupted run starts again
    key = {k: getattr(P, k) for k in ("dataset", "depth", "width", "test_examples", "lrs", "epochs", "seeds", "hvp_every",
                                       "hvp_iters", "gen_every", "mse")}
    with models.fastest_threads(P.width, max(P.examples) * len(P.seeds) * len(P.lrs), candidates=(1,)) as threads:
        grids = [(act, loss, n) for act, loss in pairs(P) for n in P.examples]
        with progress.bar(len(grids), "training grids (activation, loss, n)", unit="grid", delay=0.0) as bar:
            def one(c):
                g = run_grid(P, *c)
                bar.update(1)
                return g

            done = resumable("balboni-thesis/pl-training", key, grids, one, enabled=bool(getattr(P, "resume", False)))
        out.update(zip(grids, done))
    out["threads"], out["seconds"] = threads, time.perf_counter() - t0
    return out


# ---------------------------------------------------------------------------------------------
# derived quantities
# ---------------------------------------------------------------------------------------------
def prediction_ratio(g: Grid) -> np.ndarray:
    """R_t = predicted / measured loss decrease at every epoch t (T, R).  The prediction is Lemma 1's
    step with the actual step size and the previous epoch's mu_t, L_t: D_hat = 2 eta mu_t (1 - L_t eta / 2) f_t
    = eta norm(grad f_t)^2 (1 - L_t eta / 2) when eta <= 1 / L_t, else (mu_t / L_t) f_t (the 1/L step's
    guarantee).  For cross-entropy, Lemma 22 with norm(x - x*) ~ 2 (f - f*) / G and the local weak-PL
    mu = (2 norm(grad f) / G)^2 reduces to the same expression (f* = 0)."""
    eta = np.asarray(g.lrs)[None, :]
    f, gsq, L = g.f[:-1], g.gsq[:-1], g.L[:-1]
    small = eta * L <= 1
    pred = np.where(small, eta * gsq * (1 - L * eta / 2), gsq / (2 * L))
    meas = g.f[:-1] - g.f[1:]
    return pred / meas


def early_ratio(g: Grid, epochs: int = 5) -> np.ndarray:
    """Figs. 6.5/6.14/6.15 'the initial few epochs': per run, the median of :func:`prediction_ratio` over the first
    ``epochs`` epochs (below 1 where the measured decrease is bigger than the predicted one)."""
    return np.median(prediction_ratio(g)[:epochs], axis=0)


def late_ratio(g: Grid, epochs: int = 20) -> np.ndarray:
    """Figs. 6.5/6.14/6.15 'for the final epochs': per run, the median of :func:`prediction_ratio` over the last
    ``epochs`` epochs."""
    return np.median(prediction_ratio(g)[-epochs:], axis=0)


def almost_perfect(late: np.ndarray) -> np.ndarray:
    """Per run, whether the late median ratio (:func:`late_ratio`) lies in [0.8, 1.25]: 'the prediction is almost
    perfect'."""
    return (late >= 0.8) & (late <= 1.25)


#: the typical-curve criterion of Figs. 6.5/6.14/6.15 early-conservative and late-accurate: the lower end of the
#: Wilson interval of the share of kept runs (:func:`majority`) above one half
MAJORITY = C.above(0.5, strict=True)


def generalisation_bound(g: Grid, delta: float, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(4.12)-(4.13) at the measured epochs, (k, R): beta = 2 sqrt(eps) sqrt(2 G^2 / mu) + 2 G^2 / ((n - 1) mu),
    bound = sqrt((M^2 + 12 M n beta) / (2 n delta)), with eps = f_t, mu = local PL (6.2), G = max_i norm(grad l_i),
    M = the largest per-example loss over the training and held-out examples.  ``scale`` multiplies the loss (the other MSE convention: 5 or 1/5 of it); returns
    (bound, M)."""
    idx = np.asarray(g.gen_steps)
    eps = g.f[idx] * scale
    mu = g.mu[idx] * scale  # mu scales like the loss
    G = g.G_lip * scale
    M = g.M * scale
    n = g.n
    beta = 2 * np.sqrt(eps) * np.sqrt(2 * G ** 2 / mu) + 2 * G ** 2 / ((n - 1) * mu)
    bound = np.sqrt((M ** 2 + 12 * M * n * beta) / (2 * n * delta))
    return bound, M


# ------------------------------------------------------------------------------------------------
# Fig. 6.8: the typical curve, as a share of runs
# ------------------------------------------------------------------------------------------------
SHAPES = ("rise then steady fall", "no initial rise", "rise without a steady fall below the start")


def curve_shapes(logk: np.ndarray) -> np.ndarray:
    """Per run (columns of ``logk``, epochs x runs): 0 when the log-conditioning rises to a peak in the first half
    and then decreases steadily (each epoch's increase at most 2% of the level) to end below where the fall began
    (the thesis's Fig. 6.8 shape), 1 when its first-half maximum is the start (no initial rise), 2 otherwise
    (a rise without such a fall); labels in :data:`SHAPES`."""
    out = []
    for r in range(logk.shape[1]):
        lk = logk[:, r]
        ts = int(np.argmax(lk[: len(lk) // 2]))
        after = lk[ts:]
        if not lk[ts] > lk[0]:
            out.append(1)
            continue
        steady = np.all(np.diff(after) <= 0.02 * abs(after).max())  # noise allowance: 2% of the level per epoch
        out.append(0 if steady and after[-1] < after[0] else 2)
    return np.array(out, dtype=int)


def rise_then_fall(logk: np.ndarray, lrs, big: float) -> np.ndarray:
    """Fig. 6.7 per run (columns of ``logk``, epochs x runs): 1.0 where the log-conditioning peaks in the first half
    of the epochs and ends below its start, 0.0 where not, NaN for runs whose learning rate is not ``big``."""
    half = logk.shape[0] // 2
    peak_first_half = np.argmax(logk, axis=0) < half
    return np.where(np.asarray(lrs) == big, (peak_first_half & (logk[-1] < logk[0])).astype(float), np.nan)


def seed_spread(grids: list) -> np.ndarray:
    """Figs. 6.21/6.23: per (n, lr) setting of the given grids (one per n, runs = seeds x lrs), the standard deviation
    over seeds of log lambda_min at the last epoch."""
    out = []
    for g in grids:
        v = np.log(g.lmin[-1]).reshape(len(g.seeds), -1)
        out.append(v.std(0, ddof=1))
    return np.concatenate(out)


def lmin_holds(g: Grid, keep: float = 0.5) -> np.ndarray:
    """Fig. 6.6's 'the lowest eigenvalues don't decrease as much as predicted', per run: the chain bound (4.11) at the
    last epoch predicts that lambda_min lost more than ``1 - keep`` of its start (bound < ``keep`` lambda_min,0),
    while the actual lambda_min kept at least ``keep`` of it (the spec's ratio 0.5).  A run whose weights did not move
    predicts no decrease and shows nothing."""
    start = g.lmin[0]
    return (g.lmin[-1] >= keep * start) & (g.chain[-1] < keep * start)


def majority(flags, level: float = 0.95) -> dict:
    """The share of ``flags`` (one per kept run) with its Wilson interval at ``level``
    (:func:`shallowflow.engine.metrics.share_interval`), and ``text``, how a check's claim states it.  Where the thesis
    describes a typical curve, a check passes when the interval's lower end is above one half (a majority of runs
    shows it, decided by the runs at hand) and is undecided by this many runs while the interval contains one half."""
    s = metrics.share_interval(flags, level)
    s["text"] = metrics.describe_share(flags, level)
    return s


# ------------------------------------------------------------------------------------------------
# the learning gate of the "stays constant" / "is slow" / "slightly improves" checks
# ------------------------------------------------------------------------------------------------
# A network that never trains satisfies these claims by construction (a change of 0 is "constant", "very slow" and,
# at >= 0, "improving"), so they count only runs that trained: the final training loss is at most this fraction of
# the initial one (the loss at least halved).  One gate for all of them, stated on the page; chosen before measuring.
LEARNED_LOSS_FRACTION = 0.5


def learned(g: Grid, fraction: float = LEARNED_LOSS_FRACTION) -> np.ndarray:
    """Per run, the learning gate: the final training loss is at most ``fraction`` of the initial training loss (a run
    with a non-finite loss does not pass)."""
    with np.errstate(invalid="ignore"):
        return np.asarray(g.f[-1] <= fraction * g.f[0], dtype=bool)


def slow_rise(logk: np.ndarray, lrs, small, rise: float = 0.5) -> np.ndarray:
    """Fig. 6.7 per run (columns of ``logk``, epochs x runs): 1.0 where the log-conditioning rises by at most ``rise``
    and does not fall (log k_T - log k_0 in [0, rise]), 0.0 where not, NaN for runs whose learning rate is not in
    ``small``."""
    d = logk[-1] - logk[0]
    return np.where(np.isin(np.asarray(lrs), small), ((d >= 0) & (d <= rise)).astype(float), np.nan)


def lmin_log_change(g: Grid) -> np.ndarray:
    """Figs. 6.16-6.19 per run: log lambda_min at the last epoch minus log lambda_min at the start."""
    return np.log(g.lmin[-1] / g.lmin[0])


def lmin_constant(g: Grid, tol: float = 0.25) -> np.ndarray:
    """Figs. 6.16/6.17 per run: 1.0 where lambda_min ends within a factor exp(``tol``) of its start, else 0.0."""
    return (np.abs(lmin_log_change(g)) < tol).astype(float)


def lmin_improves(g: Grid) -> np.ndarray:
    """Figs. 6.18/6.19 per run: 1.0 where lambda_min ends at or above its start, else 0.0."""
    return (lmin_log_change(g) >= 0).astype(float)


def gated_majority(flags, gate, level: float = 0.95, fraction: float = LEARNED_LOSS_FRACTION) -> dict:
    """:func:`majority` of ``flags`` (1.0 / 0.0 per run, NaN for runs the claim does not speak of) over the runs that
    pass the learning ``gate`` (:func:`learned`, one per run) only; adds ``gated`` (runs the claim speaks of that did
    not train, left out) and says both in ``text``.  With no run counted the share and its interval are NaN, so a
    typical-curve criterion fails: runs that never trained are evidence neither way."""
    f = np.asarray(flags, dtype=float).reshape(-1)
    g = np.asarray(gate, dtype=bool).reshape(-1)
    speaks = np.isfinite(f)
    s = majority(f[speaks & g] == 1, level)
    s["gated"] = int((speaks & ~g).sum())
    s["text"] = (f"{s['text']} among the runs that trained (final training loss at most {fraction:g} of the initial; "
                 f"{s['gated']} of {int(speaks.sum())} runs did not and are left out)")
    return s


# Figs. 6.11/6.12: the bounds "decrease ... but not as much as it would be expected with the number of considered
# examples": a log-log slope in n strictly between -1/2 (the expected rate) and 0 (no decrease).  The spec's criterion
# (slope > -1/2) also accepted a bound that grows with n; the source's words say it decreases.
SLOWER_THAN_SQRT_N = Criterion("in (-0.5, 0)", lambda v: (v > -0.5) & (v < 0))
GEN_DECREASES = C.below(-0.8)  # Figs. 6.11-6.12: Spearman rho of the bound against the epoch, every counted run


def bound_epoch_rhos(g: Grid, delta: float, scale: float, counted) -> np.ndarray:
    """Figs. 6.11/6.12 'the bounds effectively decrease with the number of epochs': per ``counted`` run (one boolean
    per run: the kept runs that passed the learning gate :func:`learned`, the thesis's "networks that actually learn"),
    the Spearman rho of the bound (4.13) against the measured epochs; ``[nan]`` when no run is counted (no trained run
    stands behind the claim, so the criterion fails).  Without the gate a network that does not move passes: steps of
    1e-9 still lower its loss, and so its bound, monotonically (by ~1e-7), a rank correlation of exactly -1."""
    from scipy.stats import spearmanr

    c = np.asarray(counted, dtype=bool)
    if not c.any():
        return np.array([np.nan])
    b, _ = generalisation_bound(g, delta, scale)
    return np.array([spearmanr(g.gen_steps, b[:, r]).statistic for r in np.flatnonzero(c)])
LEMMA1_REGIME = C.above(1.0, strict=True)  # the finding Lemma1-regime: the largest eta L_t over kept runs and epochs


def last_bound_slope(grids: list, delta: float, scale: float, counted: list) -> float:
    """Figs. 6.11/6.12 'not as much as expected with n': the log-log slope in n of the mean bound (4.13) at the last
    measured epoch over the ``counted`` runs of each grid (one grid per n, one boolean per run: the kept runs that passed
    the learning gate, since an untrained network's bound barely depends on n); NaN when a grid has no counted run."""
    ns, last = [], []
    for g, c in zip(grids, counted):
        b, _ = generalisation_bound(g, delta, scale)
        c = np.asarray(c, dtype=bool)
        ns.append(g.n)
        last.append(b[-1][c].mean() if c.any() else np.nan)
    if len(ns) < 2 or not np.all(np.isfinite(last)):
        return float("nan")
    return float(np.polyfit(np.log(ns), np.log(last), 1)[0])


# ------------------------------------------------------------------------------------------------
# Fig. 6.6: what holds by construction, and what the thesis observes
# ------------------------------------------------------------------------------------------------
def bounds_below_actual(g: Grid) -> np.ndarray:
    """Per run, the smallest lambda_min,t - bound_t over the epochs, both bounds of (4.11): the oracle
    lambda_min(G_0) - norm(G_t - G_0)_op and the chain bound.  Both are >= 0 for ANY weights (Weyl's inequality for the
    oracle; Lemma 16's chain bounds norm(G_t - G_0)_op from above), so this is an identity of the implementation, not a
    property of training: it is 0 at epoch 0, where both bounds equal lambda_min,0."""
    return np.minimum((g.lmin - g.oracle).min(0), (g.lmin[g.chain_steps] - g.chain).min(0))


# Fig. 6.6's empirical claim, "how pessimistic are current estimates ... the bound degrades significantly": at the last
# epoch the (4.11) chain bound lies below the actual lambda_min by at least this fraction of lambda_min,0 (the spec's
# ratio 0.5 of lmin-holds; fixed before measuring).  A network whose weights did not move has a gap of 0.
PESSIMISM_MARGIN = 0.5


def bound_pessimistic(g: Grid, margin: float = PESSIMISM_MARGIN) -> np.ndarray:
    """Fig. 6.6 per run: True where the chain bound (4.11) at the last epoch lies below the actual lambda_min by at least
    ``margin`` lambda_min,0 ((lambda_min,T - chain_T) / lambda_min,0 >= margin)."""
    return (g.lmin[-1] - g.chain[-1]) / g.lmin[0] >= margin


# Figs. 6.20-6.23: "in multiple cases the bounds even become vacuous after the first epochs of training": "multiple"
# is at least two; a case is one (n, learning rate) configuration (one graph of the figures), so two seeds of one
# configuration are one case; "after the first epochs" is read as by epoch VACUOUS_BY.
MULTIPLE = 2
VACUOUS_BY = 10
VACUOUS_EARLY = C.above(MULTIPLE)  # the criterion on the number of such configurations (the chapter's and its controls')


def vacuous_early(g: Grid, by: int = VACUOUS_BY) -> np.ndarray:
    """Per run: True where the chain bound (4.11) is <= 0 at some computed epoch <= ``by``."""
    rows = [i for i, s in enumerate(g.chain_steps) if s <= by]
    return (g.chain[rows] <= 0).any(0)


def vacuous_configurations(grids: list, kept: list, by: int = VACUOUS_BY) -> list:
    """Figs. 6.20-6.23: the (n, learning rate) configurations of ``grids`` (one per n) in which at least one kept run
    (``kept``: one boolean per run, per grid) has a vacuous chain bound by epoch ``by``; sorted."""
    out = set()
    for g, k in zip(grids, kept):
        hit = vacuous_early(g, by) & np.asarray(k, dtype=bool)
        out |= {(g.n, float(g.lrs[r])) for r in np.flatnonzero(hit)}
    return sorted(out)
