"""003 (orthogonal inputs): the closed forms and the run grid shared by the lemma chapters.

Source: 003_2cfc81695abc9c19.txt, Sections 2-4.  The datasets are the spec's orthonormal benchmarks
ORTHO-A/B/C (x_k = e_k in R^{n+2}, no bias) and the Section-5 toy; the initialisation is Eq. (4),
w_j = lambda g_j, a_j = s_j ||w_j||, with lambda itself the scale (no 1/sqrt(m) here).

Gradient descent runs on the paper's loss L = 1/(2n) sum_k (h(x_k) - y_k)^2 ("half") with step dt,
so that iteration k is gradient-flow time k * dt.  Every run of a dataset (lambdas x seeds x step
sizes) is one :class:`Ensemble`, trained by :func:`shallowflow.engine.monitor.segmented_descent`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from ...engine import data as datasets
from ...engine import init, metrics, theory
from ...engine.config import DTYPE
from ...engine.data import Dataset
from ...engine.models import Network, Params


NET = Network("relu")


@dataclass(frozen=True)
class Constants:
    """||D_+||, ||D_-||, r, the minimum squared norm and the saddle loss of a dataset (all computed)."""

    n: int
    d_plus: torch.Tensor  # D_+ (d,)
    d_minus: torch.Tensor  # D_- (d,)
    norm_plus: float
    norm_minus: float
    min_sq_norm: float  # min_{L=0} ||theta||^2 (closed form of Prop. 1, [derived])
    saddle_loss: float  # L(theta_S) = 1/(2n) sum_{y<0} y^2

    @property
    def r(self) -> float:
        return self.norm_plus / self.norm_minus


def constants(data: Dataset) -> Constants:
    dp, dm = theory.key_directions(data)
    star = theory.min_norm_interpolator(data)
    return Constants(data.n, dp, dm, float(dp.norm()), float(dm.norm()), star.squared_norm,
                     theory.saddle_loss(data))


def phase_times(k: Constants, lam, eps: float) -> dict:
    """The time bounds of Lemmas 2-4 and Fact 1 for each lambda (a float or a tensor)."""
    ln = -torch.log(torch.as_tensor(lam, dtype=DTYPE))
    return dict(
        t1=eps * ln / k.norm_minus,
        t2_bound=(1 + 3 * eps) * ln / k.norm_plus,
        fact1_start=(1 + 3 * eps) * ln / k.norm_plus,
        fact1_end=(1 - eps) * ln / k.norm_minus,
        t3_bound=(1 + 3 * eps * k.r) * ln / k.norm_minus,
        exit1=ln / k.norm_plus,
        exit2=ln / k.norm_minus,
        horizon=1.3 * ln / k.norm_minus + 60 / k.norm_minus,  # T1 check 1's time T
    )


@dataclass
class Ensemble:
    """One dataset's runs: every (step size, lambda, seed) combination, in that nesting order."""

    name: str
    data: Dataset
    width: int
    seeds: torch.Tensor  # (R,) int
    lams: torch.Tensor  # (R,)
    lrs: torch.Tensor  # (R,) step size on L ("half"): one iteration is lr units of flow time
    p0: Params
    s_plus: torch.Tensor  # (R, m) bool, S_{+,1}
    s_minus: torch.Tensor  # (R, m) bool, S_{-,1}
    c: torch.Tensor  # (R,) c = max_j ||w_j^0|| / lambda
    k: Constants

    @property
    def runs(self) -> int:
        return int(self.lams.numel())

    def index(self, lam=None, seed=None, lr=None) -> list[int]:
        keep = torch.ones(self.runs, dtype=torch.bool)
        if lam is not None:
            keep &= torch.isclose(self.lams, torch.tensor(float(lam), dtype=DTYPE), rtol=1e-9, atol=0)
        if seed is not None:
            keep &= self.seeds == int(seed)
        if lr is not None:
            keep &= torch.isclose(self.lrs, torch.tensor(float(lr), dtype=DTYPE), rtol=1e-9, atol=0)
        return torch.nonzero(keep).flatten().tolist()

    def select(self, runs) -> "Ensemble":
        """The sub-ensemble of the given run indices."""
        runs = list(runs)
        return Ensemble(self.name, self.data, self.width, self.seeds[runs], self.lams[runs], self.lrs[runs],
                        self.p0.select(runs), self.s_plus[runs], self.s_minus[runs], self.c[runs], self.k)

    def iteration_at(self, t) -> torch.Tensor:
        """Per run, the iteration nearest to flow time t (a float or an (R,) tensor)."""
        return torch.round(torch.as_tensor(t, dtype=DTYPE) / self.lrs).to(torch.int64)


def make_ensemble(name: str, width: int, lams: Sequence[float], seeds: Sequence[int], lrs: Sequence[float],
                  device="cpu") -> Ensemble:
    """Balanced initialisation (Eq. (4)) for every (lr, lambda, seed); one run each."""
    data = datasets.get(name, device=device)
    grid = [(lr, lam, s) for lr in lrs for lam in lams for s in seeds]
    lr_t = torch.tensor([g[0] for g in grid], dtype=DTYPE)
    lam_t = torch.tensor([g[1] for g in grid], dtype=DTYPE)
    seed_t = torch.tensor([g[2] for g in grid], dtype=torch.int64)
    p0 = init.balanced(seed_t.tolist(), width, data.d, lam_t, device=device)
    sp, sm = theory.key_sets(p0, data)
    c = metrics.neuron_norms(p0).amax(1) / lam_t
    return Ensemble(name, data, width, seed_t, lam_t, lr_t, p0, sp.cpu(), sm.cpu(), c.cpu(), constants(data))


def unit(v: torch.Tensor) -> torch.Tensor:
    return v / v.norm()


U = 2.0 ** -53  # float64 unit roundoff


def variation_norm_lp(data: Dataset, n_directions: int, extra=(), seed: int = 0) -> dict:
    """min sum_i |c_i| s.t. sum_i c_i sigma(<theta_i, x_k>) = y_k over random unit theta_i (plus ``extra``).

    The discretised Eq. (8): its value is an upper bound on the F1-norm interpolation problem over the
    whole sphere.  Returns the value, the directions carrying the solution and their coefficients.
    """
    from scipy.optimize import linprog

    X = data.X.cpu().numpy()
    y = data.y.cpu().numpy()
    gen = np.random.default_rng(seed)
    th = gen.standard_normal((n_directions, X.shape[1]))
    th /= np.linalg.norm(th, axis=1, keepdims=True)
    if len(extra):
        ex = np.asarray(extra, dtype=float).reshape(-1, X.shape[1])
        th = np.vstack([th, ex / np.linalg.norm(ex, axis=1, keepdims=True)])
    A = np.maximum(X @ th.T, 0.0)  # (n, N)
    N = A.shape[1]
    res = linprog(np.ones(2 * N), A_eq=np.hstack([A, -A]), b_eq=y, bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"linear program failed: {res.message}")
    c = res.x[:N] - res.x[N:]
    keep = np.abs(c) > 1e-9 * np.abs(c).max()
    return {"value": float(res.fun), "support": th[keep], "coef": c[keep], "directions": th}
