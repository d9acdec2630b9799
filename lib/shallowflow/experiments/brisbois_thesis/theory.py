"""000 (Brisbois, master's thesis): closed forms shared by the chapters of the thesis's first half.

Everything here is computed from the data and the formulas of the thesis (Chapter 4, Appendix D) or
[derived] from them (the spec's checks T1, T2, T3, B1); nothing is typed in from a reference run.

Loss conventions.  Chapter 4 and Appendix D write L = 1/(2n) sum_k r_k^2 ("half"); the experiments
of Chapter 3 and Appendix C used torch's mean squared error 1/n sum_k r_k^2 ("mean"), which is twice
that (the spec, section 2.2).  Every function that depends on it takes ``loss``.

Parameters of one network are flattened as theta = (a_1..a_m, w_11..w_1d, ..., w_m1..w_md), the order
of :meth:`shallowflow.engine.models.Params.flat` and of the printed Hessian of Appendix D.2.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from ...engine.config import DTYPE
from ...engine.data import Dataset
from ...engine.models import loss_factor

ACTIVATIONS = ("relu", "sigmoid", "tanh")


# -- activations and their derivatives (Section 4.1) --------------------------------------------
def sigma(z: torch.Tensor, act: str) -> torch.Tensor:
    if act == "relu":
        return torch.clamp_min(z, 0.0)
    if act == "sigmoid":
        return torch.sigmoid(z)
    if act == "tanh":
        return torch.tanh(z)
    raise ValueError(f"activation must be one of {ACTIVATIONS}, got {act!r}")


def dsigma(z: torch.Tensor, act: str) -> torch.Tensor:
    """sigma'; ReLU uses sigma'(0) = 0 (the thesis's choice)."""
    if act == "relu":
        return (z > 0).to(z.dtype)
    if act == "sigmoid":
        e = torch.exp(-z)
        return e / (1 + e) ** 2
    if act == "tanh":
        return 1 - torch.tanh(z) ** 2
    raise ValueError(f"activation must be one of {ACTIVATIONS}, got {act!r}")


def d2sigma(z: torch.Tensor, act: str) -> torch.Tensor:
    """sigma'' as printed in Section 4.1 (0 for ReLU away from its kink)."""
    if act == "relu":
        return torch.zeros_like(z)
    if act == "sigmoid":
        e = torch.exp(-z)
        return e * (e - 1) / (1 + e) ** 3
    if act == "tanh":
        t = torch.tanh(z)
        return -2 * t * (1 - t ** 2)
    raise ValueError(f"activation must be one of {ACTIVATIONS}, got {act!r}")


def activation_constants(lo: float = -20.0, hi: float = 20.0, points: int = 2_000_001) -> dict:
    """max abs(sigma') (Lipschitz constant L) and max abs(sigma'') (smoothness beta) on a fine grid, per activation."""
    z = torch.linspace(lo, hi, points, dtype=DTYPE)
    out = {}
    for act in ("sigmoid", "tanh"):
        out[act] = dict(L=float(dsigma(z, act).abs().max()), beta=float(d2sigma(z, act).abs().max()))
    out["relu"] = dict(L=float(dsigma(z, "relu").abs().max()), beta=float("inf"))
    return out


STATED_CONSTANTS = {  # Section 1.2.1, as printed (closed forms)
    "relu": dict(L=1.0),
    "sigmoid": dict(L=0.25, beta=1 / (6 * math.sqrt(3))),
    "tanh": dict(L=1.0, beta=4 / (3 * math.sqrt(3))),
}


# -- the residual, its Jacobian and the closed-form gradient and Hessian (Section 4.1) -------------
def unflatten(theta: torch.Tensor, m: int, d: int):
    """theta (..., m + m d) -> a (..., m), W (..., m, d)."""
    return theta[..., :m], theta[..., m:].reshape(*theta.shape[:-1], m, d)


def loss_of_flat(theta: torch.Tensor, X: torch.Tensor, y: torch.Tensor, act: str, m: int,
                 loss: str = "half") -> torch.Tensor:
    """L(theta) for flat parameter vectors theta (..., D), written with plain torch operations
    (the reference that autograd differentiates)."""
    a, W = unflatten(theta, m, X.shape[-1])
    h = torch.einsum("...m,...mn->...n", a, sigma(W @ X.T, act))
    return loss_factor(loss) * ((h - y) ** 2).mean(-1)


def jacobian(theta: torch.Tensor, X: torch.Tensor, y: torch.Tensor, act: str, m: int):
    """Residuals r (R, n) and their Jacobian J (R, n, D), dr_k/da_I = sigma(z_Ik),
    dr_k/dw_IJ = a_I sigma'(z_Ik) x_kJ."""
    R = theta.shape[0]
    n, d = X.shape
    a, W = unflatten(theta, m, d)
    Z = W @ X.T  # (R, m, n)
    S, Dz = sigma(Z, act), dsigma(Z, act)
    r = torch.einsum("rm,rmn->rn", a, S) - y
    Ja = S.transpose(1, 2)  # (R, n, m)
    Jw = (a[:, :, None, None] * Dz[..., None] * X[None, None]).permute(0, 2, 1, 3).reshape(R, n, m * d)
    return r, torch.cat([Ja, Jw], dim=-1)


def gradient(theta, X, y, act, m, loss: str = "half") -> torch.Tensor:
    """Closed-form gradient (Section 4.1.1): 1/n J^T r for the 1/(2n) loss (twice that for the MSE)."""
    r, J = jacobian(theta, X, y, act, m)
    return (2 * loss_factor(loss) / X.shape[0]) * torch.einsum("rnD,rn->rD", J, r)


def hessian(theta, X, y, act, m, loss: str = "half") -> torch.Tensor:
    """Closed-form Hessian (Section 4.1.2): 1/n (J^T J + sum_k r_k Hess r_k), shape (R, D, D).

    Hess r_k has the a_I-w_IJ block sigma'(z_Ik) x_kJ and the w_I-w_I block a_I sigma''(z_Ik) x_k x_k^T
    (same neuron only); its a-a block is zero.
    """
    R = theta.shape[0]
    n, d = X.shape
    a, W = unflatten(theta, m, d)
    Z = W @ X.T
    r, J = jacobian(theta, X, y, act, m)
    Dz, D2 = dsigma(Z, act), d2sigma(Z, act)
    H = torch.einsum("rnD,rnE->rDE", J, J)
    eye = torch.eye(m, dtype=theta.dtype, device=theta.device)
    aw = torch.einsum("rmn,rn,ni->rmi", Dz, r, X)  # (R, m, d): sum_k r_k sigma'(z_mk) x_ki
    AW = (eye[None, :, :, None] * aw[:, :, None, :]).reshape(R, m, m * d)
    ww = torch.einsum("rm,rmn,rn,ni,nj->rmij", a, D2, r, X, X)  # (R, m, d, d)
    WW = torch.zeros(R, m, d, m, d, dtype=theta.dtype, device=theta.device)
    idx = torch.arange(m)
    WW[:, idx, :, idx, :] = ww.permute(1, 0, 2, 3)
    second = torch.zeros_like(H)
    second[:, :m, m:] = AW
    second[:, m:, :m] = AW.transpose(1, 2)
    second[:, m:, m:] = WW.reshape(R, m * d, m * d)
    return (2 * loss_factor(loss) / n) * (H + second)


def fd_gradient(theta, X, y, act, m, h: float = 1e-4, loss: str = "half", dtype=None) -> torch.Tensor:
    """Appendix D.1's central difference with half steps: [L(theta + h/2 e_i) - L(theta - h/2 e_i)] / h,
    computed in ``dtype`` (default: theta's) and returned in theta's dtype."""
    out_dtype = theta.dtype
    if dtype is not None:
        theta, X, y = theta.to(dtype), X.to(dtype), y.to(dtype)
    R, D = theta.shape
    E = torch.eye(D, dtype=theta.dtype, device=theta.device) * (h / 2)
    plus = loss_of_flat(theta[:, None, :] + E[None], X, y, act, m, loss)
    minus = loss_of_flat(theta[:, None, :] - E[None], X, y, act, m, loss)
    return ((plus - minus) / h).to(out_dtype)


STENCIL8 = (1 / 280, -4 / 105, 1 / 5, -4 / 5, 0.0, 4 / 5, -1 / 5, 4 / 105, -1 / 280)  # offsets -4..4


def fd_hessian(theta, X, y, act, m, h_a: float = 1.0, h_w: float = 1e-4, loss: str = "half",
               dtype=None) -> torch.Tensor:
    """Appendix D.2's finite-difference Hessian: the 8th-order central stencil applied to the closed-form
    gradient, step h_a along the a coordinates and h_w along the w coordinates (the thesis's steps);
    column j is the difference quotient along coordinate j.  ``dtype`` (default: theta's) is the
    arithmetic precision of the whole computation; the result is returned in theta's dtype."""
    out_dtype = theta.dtype
    dt = dtype or theta.dtype
    theta, X, y = theta.to(dt), X.to(dt), y.to(dt)
    R, D = theta.shape
    steps = torch.full((D,), h_w, dtype=dt, device=theta.device)
    steps[:m] = h_a
    H = torch.zeros(R, D, D, dtype=dt, device=theta.device)
    for off, coef in zip(range(-4, 5), STENCIL8):
        if coef == 0.0:
            continue
        shifted = theta[:, None, :] + off * torch.diag(steps)[None]  # (R, D, D): row j shifts coordinate j
        g = gradient(shifted.reshape(R * D, D), X, y, act, m, loss).reshape(R, D, D)  # [r, j, :] = grad at shift j
        H += coef * g.transpose(1, 2) / steps[None, None, :]
    return H.to(out_dtype)


def d2_example() -> tuple[torch.Tensor, int]:
    """Appendix D.2's point: W = [[log 4, log 1], [log 9, log 1/3]] (row j = neuron j), a = (1, -1), m = 2."""
    a = torch.tensor([1.0, -1.0], dtype=DTYPE)
    W = torch.log(torch.tensor([[4.0, 1.0], [9.0, 1.0 / 3.0]], dtype=DTYPE))
    return torch.cat([a, W.reshape(-1)])[None], 2


# Appendix D.2, as printed in the thesis (rows/columns in the order a_1, a_2, w_11, w_12, w_21, w_22)
PRINTED_D2_HESSIAN = (
    (0.49846213, 0.47044818, -0.09157311, 0.17180604, -0.02491297, -0.03120648),
    (0.47044818, 0.46992347, 0.0478305, 0.03780414, -0.09394345, 0.01677828),
    (-0.09157311, 0.0478305, 0.12368054, 0.01785879, -0.00631329, 0.00309335),
    (0.17180604, 0.03780414, 0.01785879, 0.09689236, 0.00309335, -0.01095332),
    (-0.02491297, -0.09394345, -0.00631329, 0.00309335, -0.07315118, -0.01135684),
    (-0.03120648, 0.01677828, 0.00309335, -0.01095332, -0.01135684, -0.05611592),
)
PRINTED_D2_FD_HESSIAN = (  # the thesis's finite-difference approximation of the same matrix
    (0.49846209, 0.47044818, -0.0915731, 0.17180604, -0.02491296, -0.03120648),
    (0.47044817, 0.46992343, 0.04783051, 0.03780414, -0.09394344, 0.01677827),
    (-0.09189404, 0.04740521, 0.12368531, 0.01790037, -0.00632838, 0.00317856),
    (0.17169331, 0.03767333, 0.01787625, 0.09683803, 0.0031547, -0.01098216),
    (-0.02459827, -0.09342212, -0.00620864, 0.0031516, -0.0731773, -0.01135956),
    (-0.03090288, 0.01705509, 0.00309199, -0.01095235, -0.01136098, -0.05610247),
)


# -- predictions of the thesis's and the spec's [derived] closed forms ---------------------------------
def key_vectors(data: Dataset):
    """D_plus = 1/n sum_{y>0} y_k x_k, D_minus = 1/n sum_{y<0} y_k x_k and v = 1/n sum_k y_k x_k = D_plus + D_minus."""
    X, y = data.X.cpu(), data.y.cpu()
    n = data.n
    dp = ((y > 0).to(DTYPE) * y) @ X / n
    dm = ((y < 0).to(DTYPE) * y) @ X / n
    return dp, dm, y @ X / n


def time_factor(loss: str) -> float:
    """c of the spec's T1/T3: a balanced neuron grows like exp(c ‖D‖ t); 1 for the 1/(2n) loss, 2 for the MSE."""
    return 2.0 * loss_factor(loss)


def phase_epochs(data: Dataset, scale, lr: float, loss: str = "mean"):
    """T1 ([derived]): epochs to fit the larger-‖D‖ and the smaller-‖D‖ label group,
    ln(1/lambda) / (c ‖D‖ lr), ordered (first, second) -- for 1.1.0 (positive, negative)."""
    dp, dm, _ = key_vectors(data)
    norms = sorted([float(dp.norm()), float(dm.norm())], reverse=True)
    ln = -np.log(np.asarray(scale, dtype=float))
    c = time_factor(loss)
    return ln / (c * norms[0] * lr), ln / (c * norms[1] * lr)


def plateau_slope(data: Dataset, act: str, loss: str = "mean") -> float:
    """T3 ([derived], linearisation at theta = 0): time units of the initial plateau per unit of ln(1/lambda),
    1 / (c sigma'(0) ‖v‖) with v = 1/n sum_k y_k x_k (ReLU: the D_plus group, sigma'(0+) = 1)."""
    dp, _, v = key_vectors(data)
    if act == "relu":
        return 1.0 / (time_factor(loss) * float(dp.norm()))
    s0 = float(dsigma(torch.zeros(1, dtype=DTYPE), act))
    return 1.0 / (time_factor(loss) * s0 * float(v.norm()))


def relu_min_norm(data: Dataset) -> float:
    """sqrt(2 sum_k abs(y_k) / ‖x_k‖): the minimum-norm interpolator's norm for orthogonal data (T0)."""
    X, y = data.X.cpu(), data.y.cpu()
    return math.sqrt(2 * float((y.abs() / X.norm(dim=1)).sum()))


def final_rate(data: Dataset, lr: float, loss: str = "mean") -> float:
    """T2 ([derived]): asymptotic per-epoch decay rate of L for ReLU on orthogonal data,
    lr * (4 c / n) min_k abs(y_k) ‖x_k‖ with c = 2 (MSE) or 1 (1/(2n))."""
    X, y = data.X.cpu(), data.y.cpu()
    return lr * (4 * time_factor(loss) / data.n) * float((y.abs() * X.norm(dim=1)).min())


def sigmoid_alpha_crit(m: int, loss: str = "mean") -> float:
    """Sigmoid at theta ~ 0: the a-block Hessian is (2 lf) sigma(0)^2 11^T with top eigenvalue 2 lf m / 4,
    so GD is unstable above 2 / that = 4/m (MSE) or 8/m (1/(2n))."""
    return 2.0 / (2 * loss_factor(loss) * m * 0.25)


def tanh_zero_spectrum(data: Dataset, m: int, loss: str = "half") -> np.ndarray:
    """[derived] eigenvalues of the Tanh loss Hessian at theta = 0: +-(2 lf) ‖v‖ (m each), 0 otherwise."""
    _, _, v = key_vectors(data)
    e = 2 * loss_factor(loss) * float(v.norm())
    D = m * (data.d + 1)
    return np.sort(np.concatenate([np.full(m, -e), np.zeros(D - 2 * m), np.full(m, e)]))


# -- measurements on trajectories -----------------------------------------------------------------
def plateaus(curve: np.ndarray, end: int, blocks: int = 100, tol: float = 0.01, every: int = 1) -> list[tuple[int, int]]:
    """Appendix C.1's plateau detector, as the spec proposes to read it: dt = max(1, end // blocks); block i
    (epochs ((i-1) dt, i dt]) is slow if abs(log10 L(i dt) - log10 L((i-1) dt)) < tol; a plateau is a run of
    >= 2 adjacent slow blocks.  ``curve`` is the loss at epochs 0, every, 2 every, ... up to ``end`` (at least):
    with ``every`` > 1 the block length is rounded down to a multiple of ``every`` (at least ``every``), so that
    every block edge is a recorded epoch and the detector reads only measured losses (never a record repeated
    over the epochs it did not see, which makes the count depend on the record stride).  Returns the plateaus
    as (first epoch, last epoch)."""
    every = max(1, int(every))
    dt = every * max(1, (int(end) // every) // blocks)
    idx = np.arange(0, int(end) + 1, dt)
    lg = np.log10(np.maximum(np.asarray(curve, dtype=float)[idx // every], 1e-300))
    return slow_stretches(lg, idx, tol)


def slow_stretches(lg: np.ndarray, grid: np.ndarray, tol: float = 0.01) -> list[tuple[int, int]]:
    """The plateaus of eq. (C.1) from log10 L sampled on the block grid: runs of >= 2 adjacent blocks whose
    change is below ``tol``, as (first epoch, last epoch)."""
    slow = np.abs(np.diff(lg)) < tol
    out, i = [], 0
    while i < len(slow):
        if slow[i]:
            j = i
            while j + 1 < len(slow) and slow[j + 1]:
                j += 1
            if j - i + 1 >= 2:
                out.append((int(grid[i]), int(grid[j + 1])))
            i = j + 1
        else:
            i += 1
    return out


def plateau_summary(curve: np.ndarray, end: int, every: int = 1) -> dict:
    """Number of plateaus, the initial plateau's length (0 if none starts at epoch 0) and the first
    intermediate plateau's length (0 if none); ``curve`` recorded every ``every`` epochs (see :func:`plateaus`)."""
    ps = plateaus(curve, end, every=every)
    initial = ps[0][1] - ps[0][0] if ps and ps[0][0] == 0 else 0
    rest = [p for p in ps if p[0] > 0]
    return dict(count=len(ps), initial=initial, intermediate=(rest[0][1] - rest[0][0]) if rest else 0, plateaus=ps)


def orientation_angles(W: torch.Tensor) -> torch.Tensor:
    """beta_j = arctan(w_j2 / w_j1) in (-pi/2, pi/2]: the axis of neuron j (sign-free), shape (..., m)."""
    return torch.atan(W[..., 1] / W[..., 0])


def axial_variance(W: torch.Tensor, weights: torch.Tensor | None = None) -> torch.Tensor:
    """Circular variance 1 - abs(mean exp(2 i beta_j)) of the axes beta_j (0: one axis; 1: uniform)."""
    b = orientation_angles(W)
    w = torch.ones_like(b) if weights is None else weights.to(b.dtype)
    c = (w * torch.cos(2 * b)).sum(-1) / w.sum(-1)
    s = (w * torch.sin(2 * b)).sum(-1) / w.sum(-1)
    return 1 - torch.sqrt(c ** 2 + s ** 2)


def balancedness_errors(a: torch.Tensor, W: torch.Tensor, s: torch.Tensor) -> dict:
    """Fig. 3.10's metrics per snapshot and run: l1-average and l-infinity of a_j - s_j ‖w_j‖, with the
    references mean abs(a_j) and mean ‖w_j‖."""
    dev = (a - s * W.norm(dim=-1)).abs()
    return dict(l1=dev.mean(-1), linf=dev.amax(-1), mean_a=a.abs().mean(-1), mean_w=W.norm(dim=-1).mean(-1))


# -- Chapter 4's PL example -------------------------------------------------------------------------
def pl_function(t):
    """F(theta) = theta^2 + 3 sin^2(theta) (Fig. 4.1), its derivative and second derivative."""
    t = np.asarray(t, dtype=float)
    return t ** 2 + 3 * np.sin(t) ** 2, 2 * t + 3 * np.sin(2 * t), 2 + 6 * np.cos(2 * t)
