"""Closed forms of the sources, computed from the data (never typed in).

For orthogonal inputs (003) everything the paper's theorems predict is explicit: the key
directions D_+ and D_-, the sets S_{+,1}, S_{-,1} of neurons that follow them, the minimum-l2-norm
interpolator (Prop. 1, whose proof is in the paper's missing appendix: here it is [derived] and
cross-checked numerically), the saddle's loss and the leading-order exit times.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .data import Dataset
from .models import Params


def key_directions(data: Dataset) -> tuple[torch.Tensor, torch.Tensor]:
    """D_+ = 1/n sum_{y_k>0} y_k x_k and D_- = 1/n sum_{y_k<0} y_k x_k (003, Section 4.1)."""
    X, y = data.X, data.y
    pos, neg = (y > 0).to(X.dtype), (y < 0).to(X.dtype)
    return (pos * y) @ X / data.n, (neg * y) @ X / data.n


def key_sets(p0: Params, data: Dataset) -> tuple[torch.Tensor, torch.Tensor]:
    """Boolean masks (R, m) of S_{+,1} and S_{-,1} (003, eqs. (5)-(6)) at the initial parameters.

    S_{+,1}: s_j = +1 and <w_j, x_k> >= 0 for every k with y_k > 0; S_{-,1} likewise with s_j = -1
    and the negative labels.
    """
    Z = p0.W @ data.X.T  # (R, m, n)
    s = torch.where(p0.a >= 0, 1.0, -1.0)
    pos_ok = (Z[..., data.y > 0] >= 0).all(-1)
    neg_ok = (Z[..., data.y < 0] >= 0).all(-1)
    return (s > 0) & pos_ok, (s < 0) & neg_ok


def assumption3_probability_product(n_pos: int, n_neg: int, m: int) -> float:
    """The spec's [derived] closed form (1 - (1 - p_+)^m)(1 - (1 - p_-)^m) for R3 of 003 -- WRONG.

    It multiplies the marginals P(S_{+,1} non-empty) and P(S_{-,1} non-empty) as if the two events were
    independent; they are not (a neuron cannot be in both sets), and the product overestimates the
    probability.  Kept only so that the book can show the discrepancy; use
    :func:`assumption3_probability`.
    """
    p_pos = 1 - (1 - 2.0 ** -(n_pos + 1)) ** m
    p_neg = 1 - (1 - 2.0 ** -(n_neg + 1)) ** m
    return p_pos * p_neg


@dataclass
class MinNormInterpolator:
    """h*(x) = sigma(<u_+, x>) - sigma(<u_-, x>), the minimum-l2-norm interpolator for orthogonal inputs.

    u_+ = sum_{y_k>0} y_k x_k / ||x_k||^2 and u_- = sum_{y_k<0} |y_k| x_k / ||x_k||^2, realised by two
    balanced neurons; min_{L=0} ||theta||^2 = 2 (||u_+|| + ||u_-||) [derived from 003, Prop. 1].
    """

    u_plus: torch.Tensor
    u_minus: torch.Tensor

    @property
    def squared_norm(self) -> float:
        return float(2 * (self.u_plus.norm() + self.u_minus.norm()))

    def __call__(self, X: torch.Tensor) -> torch.Tensor:
        return torch.clamp_min(X @ self.u_plus, 0) - torch.clamp_min(X @ self.u_minus, 0)

    def kinks(self) -> tuple[float, float]:
        """Kinks -u_2/u_1 of the two neurons (bias-augmented 1-D data)."""
        return float(-self.u_plus[1] / self.u_plus[0]), float(-self.u_minus[1] / self.u_minus[0])


def orthogonality_defect(data: Dataset) -> float:
    """max_{k != l} |<x_k, x_l>| / (||x_k|| ||x_l||)."""
    Xn = data.X / data.X.norm(dim=1, keepdim=True)
    G = Xn @ Xn.T
    return float((G - torch.diag(torch.diagonal(G))).abs().max()) if data.n > 1 else 0.0


def min_norm_interpolator(data: Dataset, atol: float = 1e-12) -> MinNormInterpolator:
    """The minimum-norm interpolator of orthogonal data (raises if the inputs are not orthogonal)."""
    defect = orthogonality_defect(data)
    if defect > atol:
        raise ValueError(f"inputs are not orthogonal (max |cos| = {defect:.3g}); no closed form")
    rho2 = (data.X ** 2).sum(1)
    y = data.y
    u_plus = ((y > 0) * y / rho2) @ data.X
    u_minus = ((y < 0) * (-y) / rho2) @ data.X
    return MinNormInterpolator(u_plus, u_minus)


def saddle_loss(data: Dataset) -> float:
    """L(theta_S) = 1/(2n) sum_{y_k<0} y_k^2: the loss once the positive labels are fitted (003, Fact 1)."""
    y = data.y
    return float((y[y < 0] ** 2).sum() / (2 * data.n))


def exit_times(data: Dataset, scale: float) -> tuple[float, float]:
    """Leading-order gradient-flow exit times -ln(lambda)/||D_+|| and -ln(lambda)/||D_-|| (003, Section 4)."""
    dp, dm = key_directions(data)
    ln = -math.log(scale)
    return ln / float(dp.norm()), ln / float(dm.norm())


def variation_norm_1d(f, interval: tuple[float, float], n_points: int = 200, n_directions: int = 2000,
                      extra_directions=()) -> float:
    """The F1 (variation) norm of a univariate function on an interval, by a linear program.

    min sum_i |c_i| subject to sum_i c_i sigma(<theta_i, (x, 1)>) = f(x) on ``n_points`` grid points,
    over ``n_directions`` unit vectors theta_i on the circle S^1 plus ``extra_directions`` (e.g. the
    exact kink directions).  This is the discretised form of 003, eq. (8).
    """
    import numpy as np
    from scipy.optimize import linprog

    x = np.linspace(*interval, n_points)
    phi = np.linspace(-np.pi, np.pi, n_directions, endpoint=False)
    thetas = np.stack([np.cos(phi), np.sin(phi)], 1)
    if len(extra_directions):
        extra = np.asarray(extra_directions, dtype=float).reshape(-1, 2)
        thetas = np.vstack([thetas, extra / np.linalg.norm(extra, axis=1, keepdims=True)])
    A = np.maximum(np.stack([x, np.ones_like(x)], 1) @ thetas.T, 0.0)  # (points, directions)
    k = A.shape[1]
    res = linprog(np.ones(2 * k), A_eq=np.hstack([A, -A]), b_eq=np.asarray(f(x), dtype=float),
                  bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"F1-norm linear program failed: {res.message}")
    return float(res.fun)


# --------------------------------------------------------------------------------------------
# 003 remarks and Appendix A: Assumption 3 exactly, minimal norm of 1-D interpolators by LP
def assumption3_probability(n_pos: int, n_neg: int, m: int) -> float:
    """P(S_{+,1} and S_{-,1} both non-empty) for Gaussian balanced init on orthonormal data [derived].

    Neuron j is in S_{+,1} with probability p_+ = 2^-(n_+ + 1), in S_{-,1} with p_- = 2^-(n_- + 1),
    and never in both (the sets need opposite signs s_j), independently over j; by inclusion-exclusion
    P = 1 - (1 - p_+)^m - (1 - p_-)^m + (1 - p_+ - p_-)^m.  The spec's form
    (:func:`assumption3_probability_product`) multiplies the two marginals, which treats the two events as independent: it overestimates P by
    (1 - p_+)^m (1 - p_-)^m - (1 - p_+ - p_-)^m > 0 (visible at small m).
    """
    pp, pm = 2.0 ** -(n_pos + 1), 2.0 ** -(n_neg + 1)
    return 1 - (1 - pp) ** m - (1 - pm) ** m + (1 - pp - pm) ** m


def _dictionary_1d(X, activation: str, leak: float, n_directions: int):
    """sigma(<theta_i, x_k>) for the unit directions of :func:`min_squared_norm_1d` (n, directions), as NumPy."""
    import numpy as np

    Xn = np.asarray(X, dtype=float)
    if Xn.ndim != 2 or Xn.shape[1] != 2:
        raise ValueError(f"need bias-augmented 1-D inputs of shape (n, 2), got {Xn.shape}")
    phi = np.linspace(-np.pi, np.pi, n_directions, endpoint=False)
    thetas = [np.stack([np.cos(phi), np.sin(phi)], 1)]
    for x in Xn[:, 0]:
        t = np.array([[1.0, -x], [-1.0, x]])
        thetas.append(t / np.linalg.norm(t, axis=1, keepdims=True))
    Z = Xn @ np.vstack(thetas).T  # (n, directions)
    if activation == "relu":
        return np.maximum(Z, 0.0)
    if activation == "leaky_relu":
        return np.where(Z > 0, Z, leak * Z)
    raise ValueError(f"activation must be 'relu' or 'leaky_relu', got {activation!r}")


def min_squared_norm_1d(X: torch.Tensor, y: torch.Tensor, activation: str = "relu", leak: float = 0.1,
                        n_directions: int = 4000) -> float:
    """min ||theta||^2 over interpolating networks sum_j a_j sigma(<w_j, x>) of bias-augmented 1-D data.

    For a positively homogeneous sigma, (a^2 + ||w||^2) / 2 >= |a| ||w|| with equality for balanced
    neurons, so min ||theta||^2 / 2 equals the linear program min sum_i |c_i| subject to
    sum_i c_i sigma(<theta_i, x_k>) = y_k over unit directions theta_i (003, eq. (8) with the
    constraints at the data points only).  The directions are ``n_directions`` points of the circle
    plus, for every data point, the two directions whose kink sits exactly on it; the value is an
    upper bound that is exact when an optimal network has its kinks at data points or on the grid.
    ``activation``: "relu" or "leaky_relu" (slope ``leak`` below 0).  Data that no such network
    interpolates (two points at one x with different labels) give ``inf``, the minimum over an empty set
    (the program is infeasible); :func:`interpolation_residual_1d` measures how far from interpolable they are.
    """
    import numpy as np
    from scipy.optimize import linprog

    A = _dictionary_1d(X, activation, leak, n_directions)
    k = A.shape[1]
    res = linprog(np.ones(2 * k), A_eq=np.hstack([A, -A]), b_eq=np.asarray(y, dtype=float),
                  bounds=(0, None), method="highs")
    if res.status == 2:  # infeasible: no network of these directions interpolates the data
        return math.inf
    if res.status != 0:
        raise RuntimeError(f"minimal-norm linear program failed: {res.message}")
    return 2.0 * float(res.fun)


def interpolation_residual_1d(X: torch.Tensor, y: torch.Tensor, activation: str = "relu", leak: float = 0.1,
                              n_directions: int = 4000) -> float:
    """||A c - y|| / ||y|| for the least-squares c over the neurons of :func:`min_squared_norm_1d`'s directions:
    0 (to rounding) when some network of them interpolates the data, and the relative distance of ``y`` from every
    such network's outputs otherwise (two points at one x with opposite labels: 1)."""
    import numpy as np

    A = _dictionary_1d(X, activation, leak, n_directions)
    yn = np.asarray(y, dtype=float)
    c = np.linalg.lstsq(A, yn, rcond=None)[0]
    return float(np.linalg.norm(A @ c - yn) / np.linalg.norm(yn))


# --------------------------------------------------------------------------------------------
# across the sources (book/synthesis): the balancedness source term and the escape rates of the
# first plateau, for any data
def balancedness_rate(network, p: Params, X: torch.Tensor, y: torch.Tensor, loss: str = "half") -> torch.Tensor:
    """d/dt (a_j^2 - ||w_j||^2) along the gradient flow, per run and neuron (R, m) [derived, 000 spec B2]:
    -2 c_m a_j sum_k g_k [sigma(z_jk) - z_jk sigma'(z_jk)] with g_k = dL/dh(x_k) and z_jk = <w_j, x_k>.

    It vanishes identically for positively homogeneous activations (ReLU, leaky ReLU: sigma(z) = z sigma'(z)),
    which is the balancedness lemma of 001, 002 and 003 (Lemma 1) and 000 (Lemma 5); for sigmoid and tanh it
    does not, so a_j^2 - ||w_j||^2 drifts even under the exact flow."""
    from .models import loss_factor

    Z = network.preactivations(p, X)  # (R, m, n)
    c = network.scale(p.width)
    r = network.forward(p, X) - y  # (R, n)
    g = (2.0 * loss_factor(loss) / r.shape[-1]) * r
    src = network.sigma(Z) - Z * network.dsigma(Z)  # (R, m, n)
    return -2.0 * c * p.a * torch.einsum("rmn,rn->rm", src, g)


def escape_rates(data: Dataset, starts: int = 512, iterations: int = 400, seed: int = 0) -> dict:
    """The rates at which ReLU neurons escape the saddle at 0 from a small balanced initialisation [derived].

    Near 0 a balanced neuron with sign s moves by dw/dt = s ||w|| D(w), D(w) = 1/n sum_k y_k 1{<w, x_k> > 0} x_k,
    so its norm grows at the rate s G(u), G(u) = 1/n sum_k y_k relu(<u, x_k>) at its direction u, and its direction
    ascends (s = +1) or descends (s = -1) G on the sphere (002, Theorem 1: it aligns with an extremal vector).  The
    fastest growth is g* = max(max G, -min G) on the unit sphere: the first plateau lasts ln(1/lambda) / g* to
    leading order.  For orthogonal inputs max G = ||D_+|| and -min G = ||D_-|| (003, Section 4).

    G is maximised by projected sub-gradient ascent on the sphere, u <- (u + eta D(u)) / ||u + eta D(u)|| (the
    direction flow of 002, Theorem 1, whose fixed points are the extremal vectors), with a step that shrinks
    geometrically, from ``starts`` seeded random directions plus every +-x_k / ||x_k|| (and, for d = 2, a grid
    of 3600 directions of the circle), all batched; the best value met is kept.  Returns ``plus`` (max G),
    ``minus`` (-min G), ``rate`` (their maximum) and the maximising unit directions."""
    X, yv = data.X.to("cpu", torch.float64), data.y.to("cpu", torch.float64)
    n, d = X.shape
    gen = torch.Generator().manual_seed(int(seed))
    cands = [torch.randn(starts, d, generator=gen, dtype=torch.float64), X, -X]
    if d == 2:
        phi = torch.linspace(-math.pi, math.pi, 3600, dtype=torch.float64)
        cands.append(torch.stack([phi.cos(), phi.sin()], 1))
    U0 = torch.cat(cands)
    U0 = U0 / U0.norm(dim=1, keepdim=True)
    eta0 = 0.5 / float((yv.abs() * X.norm(dim=1)).max())

    def best(labels):
        U = U0.clone()
        top = torch.full((U.shape[0],), -math.inf, dtype=torch.float64)
        arg = U.clone()
        for i in range(iterations):
            Z = U @ X.T
            G = (torch.clamp_min(Z, 0.0) * labels).sum(1) / n
            better = G > top
            top = torch.where(better, G, top)
            arg = torch.where(better[:, None], U, arg)
            D = ((Z > 0).to(X.dtype) * labels) @ X / n
            V = U + eta0 * 0.99 ** i * D
            U = V / V.norm(dim=1, keepdim=True)
        i = int(torch.argmax(top))
        return max(float(top[i]), 0.0), arg[i]

    plus, u_plus = best(yv)
    minus, u_minus = best(-yv)
    return dict(plus=plus, minus=minus, rate=max(plus, minus), u_plus=u_plus, u_minus=u_minus)


SIGMA_PRIME_0 = {"tanh": 1.0, "sigmoid": 0.25, "linear": 1.0}


def linearised_escape_rate(data: Dataset, activation: str) -> float:
    """sigma'(0) ||v||, v = 1/n sum_k y_k x_k: the escape rate of the network linearised at 0, sigma(z) ~ sigma(0) +
    sigma'(0) z (000 spec, T3/C2' [derived]; for sigmoid it assumes sum_k y_k = 0).  The first plateau lasts
    ln(1/lambda) / (sigma'(0) ||v||) on the 1/(2n) loss."""
    if activation not in SIGMA_PRIME_0:
        raise ValueError(f"activation must be one of {sorted(SIGMA_PRIME_0)}, got {activation!r}")
    v = data.y.to(data.X.dtype) @ data.X / data.n
    return SIGMA_PRIME_0[activation] * float(v.norm())


def first_phase_drop(data: Dataset, u: torch.Tensor, activation: str = "relu") -> float:
    """The loss one neuron direction can remove [derived]: min over c of 1/(2n) sum_k (c s_k - y_k)^2 subtracted from
    1/(2n) sum_k y_k^2, i.e. (sum_k y_k s_k)^2 / (2n sum_k s_k^2), with s_k = relu(<u, x_k>) for ReLU and the linear
    part s_k = <u, x_k> for the linearised tanh and sigmoid networks.  The first plateau ends with the growth of the
    neurons aligned with u (an extremal vector for ReLU, v for the linearised network), whose fit removes at most this."""
    X, y = data.X.to("cpu", torch.float64), data.y.to("cpu", torch.float64)
    u = torch.as_tensor(u, dtype=torch.float64).to("cpu")
    s = X @ u
    if activation == "relu":
        s = torch.clamp_min(s, 0.0)
    den = float(s @ s)
    return float((y @ s) ** 2 / (2 * data.n * den)) if den > 0 else 0.0
