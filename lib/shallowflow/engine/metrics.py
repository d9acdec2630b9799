"""Quantities measured on parameters and loss curves, for whole ensembles at once.

Parameter metrics take a :class:`Params` with shapes (R, m) / (R, m, d) and return one value per
run and neuron; curve metrics take a loss history (R, K) and the iterations it was recorded at.
"""
from __future__ import annotations

import torch

from .models import Params


def finite_runs(*tensors) -> torch.Tensor:
    """One flag per run: True where every value of every tensor is finite, shape (R,).

    Each argument is a tensor with the runs first ((R,), (R, K), (R, m, d), ...) or a :class:`Params`
    (both a and W are checked).  Pass the result as ``valid=`` to :meth:`shallowflow.verdicts.checks.Claims.check`:
    a run whose loss or parameters stopped being finite never counts as evidence.
    """
    flags = None
    for t in tensors:
        parts = (t.a, t.W) if isinstance(t, Params) else (torch.as_tensor(t),)
        for x in parts:
            finite = torch.isfinite(x)
            ok = finite.reshape(x.shape[0], -1).all(-1) if x.ndim else finite.reshape(1)
            flags = ok if flags is None else flags & ok.to(flags.device)
    if flags is None:
        raise ValueError("finite_runs needs at least one tensor")
    return flags


def signs(p: Params) -> torch.Tensor:
    """s_j = sign(a_j) (+1 where a_j = 0), shape (R, m)."""
    return torch.where(p.a >= 0, torch.ones_like(p.a), -torch.ones_like(p.a))


def neuron_norms(p: Params) -> torch.Tensor:
    """||w_j||, shape (R, m)."""
    return p.W.norm(dim=-1)


def signed_norms(p: Params) -> torch.Tensor:
    """s_j ||w_j|| (equal to a_j for balanced parameters), shape (R, m)."""
    return signs(p) * neuron_norms(p)


def balancedness(p: Params) -> torch.Tensor:
    """a_j^2 - ||w_j||^2, conserved by gradient flow (003, Lemma 1), shape (R, m)."""
    return p.a ** 2 - (p.W ** 2).sum(-1)


def kinks(p: Params) -> torch.Tensor:
    """Kink position -w_j2 / w_j1 of each neuron for bias-augmented 1-D inputs (x, 1), shape (R, m)."""
    if p.dim != 2:
        raise ValueError(f"kinks need 1-D inputs augmented with a bias (d = 2), got d = {p.dim}")
    return -p.W[..., 1] / p.W[..., 0]


def cosines(W: torch.Tensor, direction: torch.Tensor) -> torch.Tensor:
    """cos(w_j, direction) for W (..., m, d) and a direction (d,) or (..., d): shape (..., m)."""
    u = direction / direction.norm(dim=-1, keepdim=True)
    if u.ndim == 1:
        return (W @ u) / W.norm(dim=-1)
    return torch.einsum("...md,...d->...m", W, u) / W.norm(dim=-1)


def squared_norm(p: Params) -> torch.Tensor:
    """||theta||^2 = ||a||^2 + ||W||_F^2 of each run, shape (R,)."""
    return (p.a ** 2).sum(-1) + (p.W ** 2).sum((-1, -2))


def first_below(curve: torch.Tensor, threshold, steps: torch.Tensor) -> torch.Tensor:
    """First recorded iteration at which curve < threshold, per run; -1 where it never happens.

    curve: (R, K); threshold: scalar or (R,); steps: (K,) iterations of the recordings.
    """
    thr = torch.as_tensor(threshold, dtype=curve.dtype)
    thr = thr.reshape(-1, 1) if thr.ndim else thr
    below = curve < thr
    hit = below.any(dim=1)
    idx = below.to(torch.int8).argmax(dim=1)
    return torch.where(hit, steps[idx], torch.full_like(idx, -1))


def longest_run_within(curve: torch.Tensor, value, rtol: float) -> torch.Tensor:
    """Length (in recordings) of the longest stretch with |curve - value| <= rtol * |value|, per run."""
    v = torch.as_tensor(value, dtype=curve.dtype)
    v = v.reshape(-1, 1) if v.ndim else v
    inside = ((curve - v).abs() <= rtol * v.abs()).to(torch.int64)
    # run lengths via cumulative sums reset at every "outside" sample
    c = inside.cumsum(dim=1)
    reset = torch.where(inside == 0, c, torch.zeros_like(c)).cummax(dim=1).values
    return (c - reset).max(dim=1).values


def max_relative_increase(curve: torch.Tensor) -> torch.Tensor:
    """max_k (L_{k+1} - L_k) / L_k per run: <= 0 means the curve never increases."""
    return ((curve[:, 1:] - curve[:, :-1]) / curve[:, :-1].abs().clamp_min(1e-300)).max(dim=1).values


# --------------------------------------------------------------------------------------------
# saddles, plateaus, turning, kinks (003 remarks and Appendix A)
import math  # noqa: E402

import numpy as np  # noqa: E402


def loglog_slopes(curve: torch.Tensor, steps: torch.Tensor, factor: float = 1.02, floor_rel: float = 1e-24,
                  stopped_at: torch.Tensor | None = None):
    """-d ln L / d ln k on a geometric grid of recorded iterations k >= 1 (the decay rate per e-fold of time).

    curve (R, K) recorded at ``steps`` (K,).  Returns (grid (G,), midpoints (G-1,), slopes (R, G-1)),
    with NaN where the loss is below ``floor_rel`` times its initial value (rounding level), not
    finite, or after the run was stopped.  A plateau has slope ~0; a saddle escape a slope >> 1.
    """
    steps = torch.as_tensor(steps)
    pos = torch.nonzero(steps >= 1).flatten()
    if pos.numel() < 2:
        raise ValueError("need at least two recordings at iterations >= 1")
    first, last = int(steps[pos[0]]), int(steps[-1])
    targets = [first]
    while targets[-1] < last:
        targets.append(max(targets[-1] + 1, int(targets[-1] * factor)))
    idx = torch.searchsorted(steps, torch.tensor(targets, dtype=steps.dtype)).clamp(max=steps.numel() - 1)
    idx = torch.unique(idx)
    grid = steps[idx].to(torch.float64)
    L = curve[:, idx].to(torch.float64)
    bad = ~torch.isfinite(L) | (L <= floor_rel * curve[:, :1].abs().to(torch.float64)) | (L <= 0)
    if stopped_at is not None:
        bad |= grid[None, :] > torch.as_tensor(stopped_at, dtype=torch.float64)[:, None]
    lnL = torch.where(bad, torch.full_like(L, float("nan")), L).log()
    lnt = grid.log()
    slopes = -(lnL[:, 1:] - lnL[:, :-1]) / (lnt[1:] - lnt[:-1])[None, :]
    mid = (grid[1:] * grid[:-1]).sqrt()
    return grid, mid, slopes


def saddle_visits(curve: torch.Tensor, steps: torch.Tensor, ratio: float = 0.2, min_peak: float = 1.0,
                  factor: float = 1.02, floor_rel: float = 1e-24, stopped_at=None) -> dict:
    """Escapes from saddles seen in loss curves (R, K), by the log-log decay rate s = -d ln L / d ln k.

    An *escape* is a peak of s (at least ``min_peak``: faster than L ~ 1/k); two peaks are separate
    escapes when the rate between them falls below ``ratio`` times the smaller peak (the loss slows
    down by a factor >= 1/ratio: a saddle visit), otherwise they are merged.  Returns per run:
    ``escapes`` (number), ``escape_steps`` (list of iterations of the peaks), ``ends_on_plateau``
    (the rate at the last valid recording is below ``ratio`` times the last peak: the run ends near a
    saddle or a non-zero floor), and the slope curves for plotting.
    """
    grid, mid, slopes = loglog_slopes(curve, steps, factor, floor_rel, stopped_at)
    S = slopes.numpy()
    out_n, out_steps, out_end, out_valley = [], [], [], []
    for s in S:
        valid = np.isfinite(s)
        if not valid.any():
            out_n.append(0); out_steps.append([]); out_end.append(False); out_valley.append([])
            continue
        end = int(np.nonzero(valid)[0][-1]) + 1
        s = np.where(valid[:end], s[:end], np.nan)
        peaks = [i for i in range(end) if np.isfinite(s[i]) and s[i] >= min_peak
                 and (i == 0 or not np.isfinite(s[i - 1]) or s[i] >= s[i - 1])
                 and (i == end - 1 or not np.isfinite(s[i + 1]) or s[i] >= s[i + 1])]
        merged = True
        while merged and len(peaks) > 1:
            merged = False
            for j in range(len(peaks) - 1):
                p, q = peaks[j], peaks[j + 1]
                valley = np.nanmin(s[p:q + 1])
                if valley >= ratio * min(s[p], s[q]):
                    peaks.pop(j + 1 if s[p] >= s[q] else j)
                    merged = True
                    break
        valleys = [float(np.nanmin(s[p:q + 1])) for p, q in zip(peaks[:-1], peaks[1:])]
        last_ok = end - 1
        ends = bool(peaks) and last_ok > peaks[-1] and s[last_ok] < ratio * s[peaks[-1]]
        out_n.append(len(peaks))
        out_steps.append([float(mid[i]) for i in peaks])
        out_end.append(ends)
        out_valley.append(valleys)
    return dict(escapes=torch.tensor(out_n), escape_steps=out_steps, valleys=out_valley,
                ends_on_plateau=torch.tensor(out_end), grid=grid, mid=mid, slopes=slopes)


def flat_plateaus(curve: torch.Tensor, steps: torch.Tensor, max_change: float = 0.05, min_span: float = 1.1,
                  factor: float = 1.02, floor_rel: float = 1e-24, stopped_at=None) -> dict:
    """Strictly flat stretches: maximal intervals [k1, k2] with k2 >= min_span * k1 on which the loss
    changes by less than ``max_change`` (relative) per ``min_span`` factor of iterations, i.e.
    |d ln L / d ln k| <= ln(1 + max_change) / ln(min_span) everywhere on the interval.

    Returns per run the list of (k1, k2, loss at k1) and ``intermediate``: the number of flat stretches
    that begin after the loss has dropped below 99% of its initial value and end before the last
    valid recording (saddles that are entered and left).
    """
    grid, mid, slopes = loglog_slopes(curve, steps, factor, floor_rel, stopped_at)
    tol = math.log(1 + max_change) / math.log(min_span)
    S = slopes.numpy()
    g = grid.numpy()
    idx = torch.searchsorted(torch.as_tensor(steps), grid.to(torch.as_tensor(steps).dtype)).numpy()
    Lg = curve[:, idx].numpy()
    out, inter = [], []
    for r, s in enumerate(S):
        flat = np.isfinite(s) & (np.abs(s) <= tol)
        valid_end = int(np.nonzero(np.isfinite(s))[0][-1]) if np.isfinite(s).any() else -1
        stretches, i = [], 0
        while i < len(s):
            if flat[i]:
                j = i
                while j + 1 < len(s) and flat[j + 1]:
                    j += 1
                if g[j + 1] >= min_span * g[i]:
                    stretches.append((float(g[i]), float(g[j + 1]), float(Lg[r, i]), j))
                i = j + 1
            else:
                i += 1
        L0 = float(curve[r, 0])
        inter.append(sum(1 for (k1, k2, lev, j) in stretches if lev < 0.99 * L0 and j < valid_end))
        out.append([(k1, k2, lev) for (k1, k2, lev, j) in stretches])
    return dict(stretches=out, intermediate=torch.tensor(inter), tolerance=tol)


def turning_angles(snap_W: torch.Tensor, final_W: torch.Tensor | None = None, frac: float = 0.1,
                   grown_rel: float = 0.1, grown_threshold: float = 1e-3) -> torch.Tensor:
    """Angle (radians) between w_j at the first snapshot with ||w_j|| >= frac * ||w_j^final|| and w_j^final.

    snap_W (S, R, m, d) in time order; final_W (R, m, d) defaults to the last snapshot.  Only *grown*
    neurons are measured: final norm above ``grown_threshold`` and at least ``grown_rel`` times the
    largest final norm of the run; the others get NaN.  Small angles: the neuron stopped turning once
    it had grown (003, Section 3: true for orthogonal data).
    """
    final = snap_W[-1] if final_W is None else final_W
    fn = final.norm(dim=-1)  # (R, m)
    norms = snap_W.norm(dim=-1)  # (S, R, m)
    reached = norms >= frac * fn[None]
    first = reached.to(torch.int8).argmax(dim=0)  # (R, m)
    W0 = torch.gather(snap_W, 0, first[None, ..., None].expand(1, *snap_W.shape[1:]))[0]
    cos = (W0 * final).sum(-1) / (W0.norm(dim=-1) * fn).clamp_min(1e-300)
    ang = torch.arccos(cos.clamp(-1.0, 1.0))
    grown = (fn > grown_threshold) & (fn >= grown_rel * fn.amax(-1, keepdim=True))
    return torch.where(grown, ang, torch.full_like(ang, float("nan")))


def kinks_of_function(p: Params, interval: tuple[float, float], min_jump: float = 1e-2,
                      merge_tol: float = 1e-2) -> torch.Tensor:
    """Number of kinks of h on an interval for bias-augmented 1-D inputs, per run.

    Neuron j puts a slope jump a_j |w_j1| at -w_j2/w_j1; jumps closer than ``merge_tol`` are summed,
    and a kink counts when its summed jump exceeds ``min_jump`` in absolute value.
    """
    k = kinks(p)
    jump = p.a * p.W[..., 0].abs()
    out = []
    for r in range(p.runs):
        inside = torch.isfinite(k[r]) & (k[r] >= interval[0]) & (k[r] <= interval[1])
        ks, js = k[r][inside], jump[r][inside]
        order = torch.argsort(ks)
        ks, js = ks[order].tolist(), js[order].tolist()
        count, i = 0, 0
        while i < len(ks):
            j, total = i, js[i]
            while j + 1 < len(ks) and ks[j + 1] - ks[j] <= merge_tol:
                j += 1
                total += js[j]
            count += abs(total) > min_jump
            i = j + 1
        out.append(count)
    return torch.tensor(out)


def distinct_directions(W: torch.Tensor, grown_rel: float = 0.1, grown_threshold: float = 1e-3,
                        cos_tol: float = 1e-3) -> torch.Tensor:
    """Number of distinct directions among grown neurons, per run: final norm above ``grown_threshold``
    and at least ``grown_rel`` times the largest norm of the run (greedy clustering: a neuron joins a
    cluster when cos(w_j, representative) > 1 - cos_tol).  For bias-free ReLU neurons on orthogonal
    data these are the distinct kink hyperplanes of h."""
    out = []
    for Wr in W:
        nr = Wr.norm(dim=-1)
        keep = (nr > grown_threshold) & (nr >= grown_rel * nr.max())
        U = Wr[keep] / nr[keep, None]
        reps: list[torch.Tensor] = []
        for u in U:
            if not any(float(u @ v) > 1 - cos_tol for v in reps):
                reps.append(u)
        out.append(len(reps))
    return torch.tensor(out)


def explained_variance_ratio(W: torch.Tensor) -> torch.Tensor:
    """Uncentred PCA of the rows of W (m, d) or (R, m, d): squared singular values over their sum."""
    s = torch.linalg.svdvals(W)
    return s ** 2 / (s ** 2).sum(-1, keepdim=True)


def well_initialised(a: torch.Tensor, Z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """001, Lemma 5, the event I: every example i has a neuron j with <w_j, x_i> > 0 and a_j y_i > 0.
    a (R, m), pre-activations Z (R, m, n), labels y (n,) or (R, n); returns a bool per run."""
    yy = y if y.dim() == 2 else y.unsqueeze(0)
    good = (Z > 0) & (a.unsqueeze(-1) * yy.unsqueeze(1) > 0)
    return good.any(dim=1).all(dim=1)


def converged_runs(loss_end: torch.Tensor, n: int, c_y_minus: float = 1.0) -> torch.Tensor:
    """001, App. B convergence test: the loss went below C_y^- / (2n) (the authors use C_y^- = 1)."""
    return loss_end < c_y_minus / (2 * n)


# --------------------------------------------------------------------------------------------
# across the sources (book/synthesis)
def balancedness_drift(snap_a: torch.Tensor, snap_W: torch.Tensor, keep: torch.Tensor | None = None) -> dict:
    """Drift of a_j^2 - ||w_j||^2 along recorded states (S, R, m) / (S, R, m, d), state 0 the initialisation.

    Returns per run ``absolute`` = max over states and neurons of abs(b_j(t) - b_j(0)) and ``relative`` = that over
    the largest a_j^2 + ||w_j||^2 seen (the drift in units of the parameters' own size).  ``keep`` (S, R), optional,
    says which states count for each run (e.g. those within a flow time)."""
    b = snap_a ** 2 - (snap_W ** 2).sum(-1)  # (S, R, m)
    size = snap_a ** 2 + (snap_W ** 2).sum(-1)
    if keep is None:
        keep = torch.ones(b.shape[:2], dtype=torch.bool)
    dev = torch.where(keep[..., None], (b - b[:1]).abs(), torch.zeros_like(b)).amax(dim=(0, 2))
    big = torch.where(keep[..., None], size, torch.zeros_like(size)).amax(dim=(0, 2))
    return dict(absolute=dev, relative=dev / big)


def first_crossing_times(t: torch.Tensor, curve: torch.Tensor, count: torch.Tensor, threshold) -> torch.Tensor:
    """First time each run's curve goes below ``threshold`` (scalar or (R,)), linearly interpolated between the
    recorded points (t, curve of shape (R, K), ``count[r]`` valid points in row r); NaN where it never does."""
    R = t.shape[0]
    thr = torch.as_tensor(threshold, dtype=curve.dtype).expand(R)
    out = torch.full((R,), float("nan"), dtype=torch.float64)
    for r in range(R):  # post-processing of recorded curves, not training
        k = int(count[r])
        below = torch.nonzero(curve[r, :k] < thr[r]).flatten()
        if below.numel() == 0:
            continue
        i = int(below[0])
        if i == 0:
            out[r] = float(t[r, 0])
            continue
        t0, t1, c0, c1 = (float(v) for v in (t[r, i - 1], t[r, i], curve[r, i - 1], curve[r, i]))
        out[r] = t0 + (t1 - t0) * (c0 - float(thr[r])) / (c0 - c1)
    return out


class IntervalEnd(float):
    """One end of an interval that knows what it is: ``end`` ("low" or "high"), its ``level``, the ``n`` units (runs,
    points) it rests on and its ``method`` ("t", "Wilson", "logit-t", ...). It is a float everywhere else; a check
    measuring it, or the pair of its two ends, prints the numbers as an interval with its level and count
    (:func:`shallowflow.verdicts.criteria.describe`), never as a range over runs."""

    def __new__(cls, value: float, n: int, level: float = 0.95, end: str = "low", method: str = "t"):
        self = super().__new__(cls, value)
        self.n, self.level, self.end, self.method = int(n), float(level), end, method
        return self

    def __reduce__(self):  # pickles (Dask, multiprocessing) as itself
        return (IntervalEnd, (float(self), self.n, self.level, self.end, self.method))

    # An end shifted or scaled by a constant is the same end of the shifted or scaled quantity's interval (the end
    # swaps under a negative factor); combined with another measured number it is a plain float.
    def _keep(self, value: float, flip: bool = False) -> "IntervalEnd":
        end = {"low": "high", "high": "low"}.get(self.end, self.end) if flip else self.end
        return IntervalEnd(value, self.n, self.level, end, self.method)

    @staticmethod
    def _constant(other) -> bool:
        return isinstance(other, (int, float)) and not isinstance(other, (bool, IntervalEnd))

    def __add__(self, other):
        return self._keep(float(self) + other) if self._constant(other) else float(self) + _plain(other)

    __radd__ = __add__

    def __sub__(self, other):
        return self._keep(float(self) - other) if self._constant(other) else float(self) - _plain(other)

    def __rsub__(self, other):
        return self._keep(other - float(self), flip=True) if self._constant(other) else _plain(other) - float(self)

    def __mul__(self, other):
        return self._keep(float(self) * other, flip=other < 0) if self._constant(other) and other != 0 \
            else float(self) * _plain(other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self._keep(float(self) / other, flip=other < 0) if self._constant(other) and other != 0 \
            else float(self) / _plain(other)

    def __neg__(self):
        return self._keep(-float(self), flip=True)


def _plain(x):
    """An interval end as a plain float (so that combining two ends never calls back into IntervalEnd)."""
    return float(x) if isinstance(x, IntervalEnd) else x


def interval_ends(low: float, high: float, n: int, level: float = 0.95, method: str = "t") -> tuple[IntervalEnd, IntervalEnd]:
    """An interval's two ends as :class:`IntervalEnd` (for an interval a chapter computes itself: a check measuring
    ``[low, high]`` then prints them as an interval with its level, method and count, not as a range of values)."""
    return IntervalEnd(low, n, level, "low", method), IntervalEnd(high, n, level, "high", method)


_ends = interval_ends


def slope_interval(x, y, level: float = 0.95) -> dict:
    """Least-squares line y = a + b x with the two-sided ``level`` t-interval of the slope and R^2.

    Returns ``slope``, ``low``, ``high``, ``intercept``, ``r2`` and ``points``; NaN where fewer than three finite
    points remain (a slope needs an interval)."""
    from scipy import stats

    x = np.asarray(x, dtype=float).reshape(-1)
    y = np.asarray(y, dtype=float).reshape(-1)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    nan = dict(slope=math.nan, low=math.nan, high=math.nan, intercept=math.nan, r2=math.nan, points=int(x.size))
    if x.size < 3 or np.ptp(x) == 0:
        return nan
    fit = stats.linregress(x, y)
    q = _t(level, x.size - 2)
    low, high = _ends(float(fit.slope - q * fit.stderr), float(fit.slope + q * fit.stderr), x.size, level, "t")
    return dict(slope=float(fit.slope), low=low, high=high,
                intercept=float(fit.intercept), r2=float(fit.rvalue ** 2), points=int(x.size))


# --- shares and means of several runs, with their intervals (every printed mean comes with its spread) ---

# The quantiles come from scipy.special (ndtri and stdtrit are the functions scipy.stats.norm.ppf and t.ppf call, so
# the numbers are bit-identical): importing scipy.stats costs about 0.8 s per kernel, scipy.special about 0.3 s, and
# the test command starts every chapter's kernel twice.

def _z(level: float) -> float:
    from scipy.special import ndtri

    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    return float(ndtri(0.5 + level / 2))


def _t(level: float, dof: int) -> float:
    """The two-sided Student-t quantile at ``level`` with ``dof`` degrees of freedom (scipy.stats.t.ppf's value)."""
    from scipy.special import stdtrit

    return float(stdtrit(dof, 0.5 + level / 2))


def share_interval(flags, level: float = 0.95) -> dict:
    """The share of true ``flags`` with its Wilson score interval at ``level``.

    Returns ``share``, ``low``, ``high``, ``k`` (true flags), ``n`` (runs) and ``level``; NaN without runs.
    Where a source describes a typical curve, a check states this share and its interval, not "every run"."""
    f = np.asarray(torch.as_tensor(flags).cpu() if isinstance(flags, torch.Tensor) else flags, dtype=bool).reshape(-1)
    n, k = int(f.size), int(f.sum())
    if n == 0:
        return dict(share=math.nan, low=math.nan, high=math.nan, k=0, n=0, level=level)
    low, high = _ends(*wilson(k / n, n, level), n, level, "Wilson")
    return dict(share=k / n, low=low, high=high, k=k, n=n, level=level)


def wilson(p: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a share ``p`` over ``n`` runs at ``level`` (``p`` may be a mean of per-run shares)."""
    z = _z(level)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(max(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # the interval contains p; at p = 0 or 1 centre -/+ half equals p only up to rounding (a low end of 1e-17 above
    # a share of 0 made an error bar negative and stopped 001 threshold's paper run)
    return min(max(0.0, centre - half), p), max(min(1.0, centre + half), p)


def newcombe_difference(p1: float, p2: float, n: int, level: float = 0.95, n2: int | None = None) -> tuple[float, float]:
    """Newcombe's hybrid score interval (his method 10) of the difference ``p1 - p2`` of two shares over ``n`` and
    ``n2`` (default ``n``) runs, from each share's Wilson interval at ``level``."""
    l1, u1 = wilson(p1, n, level)
    l2, u2 = wilson(p2, n if n2 is None else n2, level)
    d = p1 - p2
    return d - math.hypot(p1 - l1, u2 - p2), d + math.hypot(u1 - p1, p2 - l2)


def mean_interval(values, level: float = 0.95, bounds: tuple[float, float] | None = None) -> dict:
    """Mean of finite ``values`` with its sample standard deviation, run count and two-sided interval at ``level``:
    ``mean``, ``sd``, ``low``, ``high``, ``n``, ``level``, ``method`` (``sd``/interval NaN for one run).

    Without ``bounds`` the interval is Student's t. With ``bounds=(lo, hi)`` (a bounded quantity: an accuracy, a
    share of examples) it never leaves them: the t-interval of the values' logits, mapped back (``logit-t``), when
    every value lies strictly inside; else (a value on a bound, where a logit is infinite) the score interval of a
    mean of values in [lo, hi] (Wilson's, with the variance bound (mean - lo)(hi - mean) of any such quantity:
    ``bounded score``). Three accuracies 0.1, 0.87, 0.87 give a logit-t interval inside [0, 1] where the
    t-interval is [-0.5, 1.7]."""
    v = np.asarray(torch.as_tensor(values).double().cpu() if isinstance(values, torch.Tensor) else values,
                   dtype=float).reshape(-1)
    v = v[np.isfinite(v)]
    n = int(v.size)
    method = "t"
    if bounds is not None:
        lo_b, hi_b = (float(b) for b in bounds)
        if not hi_b > lo_b:
            raise ValueError(f"bounds must be (low, high) with low < high, got {bounds!r}")
        if n and (v.min() < lo_b or v.max() > hi_b):
            raise ValueError(f"values outside their declared bounds {bounds!r}: {v.min():.6g} .. {v.max():.6g}")
    if n == 0:
        return dict(mean=math.nan, sd=math.nan, low=math.nan, high=math.nan, n=0, level=level, method=method)
    mean = float(v.mean())
    if n == 1:
        return dict(mean=mean, sd=math.nan, low=math.nan, high=math.nan, n=1, level=level, method=method)
    sd = float(v.std(ddof=1))
    if bounds is None:
        half = _t(level, n - 1) * sd / math.sqrt(n)
        low, high = mean - half, mean + half
    elif v.min() > lo_b and v.max() < hi_b:
        method = "logit-t"
        u = (v - lo_b) / (hi_b - lo_b)
        z = np.log(u / (1 - u))
        half = _t(level, n - 1) * float(z.std(ddof=1)) / math.sqrt(n)
        zc = float(z.mean())
        expit = lambda x: 1.0 / (1.0 + math.exp(-x))  # noqa: E731
        low, high = (lo_b + (hi_b - lo_b) * expit(zc - half), lo_b + (hi_b - lo_b) * expit(zc + half))
        low, high = min(low, mean), max(high, mean)  # the interval holds the mean it is printed with
    else:
        method = "bounded score"
        w_lo, w_hi = wilson((mean - lo_b) / (hi_b - lo_b), n, level)
        low, high = lo_b + (hi_b - lo_b) * w_lo, lo_b + (hi_b - lo_b) * w_hi
    low, high = _ends(low, high, n, level, method)
    return dict(mean=mean, sd=sd, low=low, high=high, n=n, level=level, method=method)


def describe_mean(values, level: float = 0.95, digits: int = 3, bounds: tuple[float, float] | None = None) -> str:
    """'mean ± sd (n runs; level interval [lo, hi])', or 'value (1 run)': how a chapter prints a mean (``bounds``:
    a bounded quantity's interval, named by its method, see :func:`mean_interval`)."""
    m = mean_interval(values, level, bounds)
    if m["n"] <= 1:
        return f"{m['mean']:.{digits}g} ({m['n']} run)"
    kind = "" if m["method"] == "t" else f" {m['method']}"
    return (f"{m['mean']:.{digits}g} ± {m['sd']:.2g} ({m['n']} runs; {level:.0%}{kind} interval "
            f"[{m['low']:.{digits}g}, {m['high']:.{digits}g}])")


def describe_share(flags, level: float = 0.95) -> str:
    """'k/n runs (share, level Wilson interval [lo, hi])': how a chapter prints a share of runs."""
    s = share_interval(flags, level)
    return f"{s['k']}/{s['n']} runs ({s['share']:.0%}, {level:.0%} interval [{s['low']:.2f}, {s['high']:.2f}])"


def share_outcomes(n: int, level: float = 0.95, end: str = "low") -> tuple[list, int]:
    """``(values, n)``: every value a check of a share over ``n`` units can measure when it reads one end of the
    share's Wilson interval (``end``: "low", the reading of :func:`typical_share`, or "high"), one per count
    ``k = 0 .. n``; pass it as ``Claims.check(..., outcomes=...)`` so the check records whether it could pass and
    could fail at all. With ``n = 3`` the low end is at most 0.44: "low end above 1/2" cannot pass there."""
    if end not in ("low", "high"):
        raise ValueError(f"end must be 'low' or 'high', got {end!r}")
    n = int(n)
    i = 0 if end == "low" else 1
    return [wilson(k / n, n, level)[i] for k in range(n + 1)] if n > 0 else [], n


class ShareEnd(IntervalEnd):
    """One end of a share's Wilson interval that knows its unit count: a check measuring it records whether its
    criterion could pass and could fail over that many units (``Claims.check`` reads :meth:`share_outcomes`)."""

    def __new__(cls, value: float, n: int, level: float = 0.95, end: str = "low"):
        return super().__new__(cls, value, n, level, end, "Wilson")

    def __reduce__(self):  # pickles (Dask, multiprocessing) as itself
        return (ShareEnd, (float(self), self.n, self.level, self.end))

    def share_outcomes(self) -> tuple[list, int]:
        return share_outcomes(self.n, self.level, self.end)


def typical_share(flags, level: float = 0.95) -> tuple[float, str]:
    """A typical behaviour (a source's "typical curve"): the lower end of the Wilson interval of the share of runs
    showing it, to compare with 1/2 (a :class:`ShareEnd`: it carries its run count, so the check records whether it
    could decide at all), and its description (:func:`describe_share`) for the check's note."""
    s = share_interval(flags, level)
    return ShareEnd(s["low"], s["n"], level, "low"), describe_share(flags, level)
