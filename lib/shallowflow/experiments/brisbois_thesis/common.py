"""000: the batched training runs shared by the chapters of the thesis's first half.

A *grid* trains every combination of activation, initial scale, seed, initialisation type (and
step size) on one dataset: one call of :func:`shallowflow.engine.train.gradient_descent` per activation (the
activation is a property of the network, shared by an ensemble), every other factor batched as runs.
The experiments of Chapter 3 minimise the mean squared error 1/n sum_k (h(x_k) - y_k)^2 (``loss="mean"``,
the spec's section 2.2); that is the default here.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from ...engine import init, theory
from ... import verdicts as _verdicts
from ...engine.data import Dataset
from ...engine.models import Network, Params
from ...engine.train import Trajectory, gradient_descent
from . import theory as T


@dataclass
class Ensemble:
    """The runs of one activation: ``meta[r]`` = dict(scale, seed, init, lr) of run r."""

    act: str
    traj: Trajectory
    p0: Params
    meta: list[dict] = field(default_factory=list)

    def runs(self, **where) -> list[int]:
        """Indices of the runs whose meta matches every given key (floats compared to 1e-12 relative)."""
        out = []
        for r, mt in enumerate(self.meta):
            if all(np.isclose(mt[k], v, rtol=1e-12, atol=0) if isinstance(v, float) else mt[k] == v
                   for k, v in where.items()):
                out.append(r)
        return out

    def valid(self) -> np.ndarray:
        """Runs whose recorded loss and final parameters are finite."""
        t = self.traj
        ok = torch.isfinite(t.loss).all(1) & torch.isfinite(t.final.a).all(1) & torch.isfinite(t.final.W).flatten(1).all(1)
        return ok.numpy()


#: where the thesis describes a typical curve: most runs show it (the lower end of the share's interval above one half)
TYPICAL = _verdicts.above(0.5, strict=True)


def typical_share(flags, level: float = 0.95) -> tuple[float, str]:
    """The core's reading of a typical behaviour (:func:`shallowflow.engine.metrics.typical_share`)."""
    from ...engine import metrics
    return metrics.typical_share(flags, level)


def converged_only(values, T) -> np.ndarray:
    """``values`` (one per run) where the run learned (``T > 0``: it reached the loss threshold of its
    table), nan where it did not.  A shape or a timing read off a run that never fitted its data is the
    initial draw's, not a measurement of training: a check over it must not pass (nan fails every criterion)."""
    v = np.asarray(values, dtype=float)
    return np.where(np.asarray(T) > 0, v, np.nan)


def assumption5_split(data: Dataset, m: int, seeds) -> tuple[list[int], dict[int, str]]:
    """The given seeds split by Assumption 5 (non-empty S_{+,1} and S_{-,1} for the balanced draw at width m,
    which the thesis "forced" for ReLU): the kept seeds in the given order, and the rejected ones with the reason.
    A rejected seed is named on the page, never replaced by another: a seed's run is the same alone or in any list."""
    kept, rejected = [], {}
    for s in seeds:
        p = init.balanced([int(s)], m, data.d, 1.0, device=data.X.device)
        sp, sm = theory.key_sets(p, data)
        why = [name for name, has_label, ok in (("S_{+,1}", bool((data.y > 0).any()), bool(sp.any())),
                                                 ("S_{-,1}", bool((data.y < 0).any()), bool(sm.any())))
               if has_label and not ok]
        if why:
            rejected[int(s)] = " and ".join(why) + " empty (Assumption 5)"
        else:
            kept.append(int(s))
    return kept, rejected


def assumption5_rule(seeds: str = "seeds", width: str = "width", variant: str = "1.1.0"):
    """A parameter rule: at least one of the seeds satisfies Assumption 5 on Dataset ``variant`` at the width
    (refused before a kernel starts, naming both parameters, instead of a chapter with no run)."""
    from ...engine import data as datasets
    from ...params import Rule

    def some_kept(P) -> bool:
        data = datasets.get("brisbois-orthogonal", variant=variant, device="cpu")
        return any(assumption5_split(data, getattr(P, width), [s])[0] for s in getattr(P, seeds))
    return Rule((seeds, width), some_kept, "at least one seed must satisfy Assumption 5 (non-empty S_{+,1} and "
                "S_{-,1}) at this width")


def describe_seeds(kept, rejected: dict) -> str:
    """One line for the page: the seeds run and the seeds rejected, with why."""
    out = f"seeds run: {list(kept)}"
    if rejected:
        out += "; rejected: " + ", ".join(f"{s} ({why})" for s, why in rejected.items())
    return out


def assumption5_seeds(data: Dataset, m: int, count: int, start: int = 0, limit: int = 10_000) -> list[int]:
    """The first ``count`` seeds from ``start`` whose balanced draw has non-empty S_{+,1} and S_{-,1}
    (Assumption 5, which the thesis "forced" for ReLU): re-draw until it holds."""
    out, s = [], start
    while len(out) < count:
        if s - start > limit:
            raise RuntimeError(f"no {count} seeds with Assumption 5 among {limit} draws (m = {m})")
        p = init.balanced([s], m, data.d, 1.0, device=data.X.device)
        sp, sm = theory.key_sets(p, data)
        if (not (data.y > 0).any() or bool(sp.any())) and (not (data.y < 0).any() or bool(sm.any())):
            out.append(s)
        s += 1
    return out


def initial(kind: str, seeds, m: int, d: int, scales, device="cpu") -> Params:
    """'balanced' (w = lambda g, a = s ‖w‖) or 'normal' (w = lambda g, a = lambda xi, the spec's default
    reading of the thesis's normal initialisation), one scale per run."""
    if kind == "balanced":
        return init.balanced(seeds, m, d, scales, device=device)
    if kind == "normal":
        return init.unbalanced(seeds, m, d, scales, device=device)
    raise ValueError(f"initialisation must be 'balanced' or 'normal', got {kind!r}")


def train_grid(data: Dataset, acts, m: int, combos: list[dict], steps: int, snapshots=(), record_every: int = 1,
               stop_below: float | None = None, loss: str = "mean") -> dict[str, Ensemble]:
    """Train every combo (dict with scale, seed, init and lr) for each activation; one batched call per
    activation.  Diverging runs are stopped (their later losses are NaN) and flagged by ``valid``."""
    out = {}
    data = data.to("cpu")
    for act in acts:
        parts = []
        for kind in sorted({c["init"] for c in combos}):
            idx = [i for i, c in enumerate(combos) if c["init"] == kind]
            parts.append((idx, initial(kind, [combos[i]["seed"] for i in idx], m, data.d,
                                       [combos[i]["scale"] for i in idx])))
        order = [i for idx, _ in parts for i in idx]
        p0 = Params(torch.cat([p.a for _, p in parts]), torch.cat([p.W for _, p in parts]))
        lr = [combos[i]["lr"] for i in order]
        tr = gradient_descent(p0, data, Network(act), steps=steps, lr=lr, loss=loss, snapshots=snapshots,
                              record_every=record_every, stop_below=stop_below, on_nonfinite="stop")
        out[act] = Ensemble(act, tr, p0, [dict(combos[i]) for i in order])
    return out


def combos(scales, seeds, inits=("balanced",), lrs=(1e-3,)) -> list[dict]:
    return [dict(scale=float(s), seed=int(sd), init=k, lr=float(l)) for k in inits for l in lrs for s in scales
            for sd in seeds]


def outputs(traj: Trajectory, data: Dataset, act: str) -> torch.Tensor:
    """h(x_k) at every snapshot, shape (S, R, n)."""
    X = data.X.cpu()
    Z = traj.snap_W @ X.T  # (S, R, m, n)
    return torch.einsum("srm,srmn->srn", traj.snap_a, T.sigma(Z, act))


def fit_epochs(traj: Trajectory, data: Dataset, act: str, rtol: float = 0.1) -> torch.Tensor:
    """Per run and sample: the first snapshot epoch with abs(h(x_k) - y_k) < rtol abs(y_k) (-1: never), (R, n)."""
    h = outputs(traj, data, act)
    y = data.y.cpu()
    ok = (h - y).abs() < rtol * y.abs()
    steps = torch.tensor(traj.snap_steps)
    hit = ok.any(0)
    first = ok.to(torch.int8).argmax(0)
    return torch.where(hit, steps[first], torch.full_like(first, -1))


def first_epoch_below(traj: Trajectory, threshold) -> np.ndarray:
    """First recorded epoch with L < threshold (scalar or per run), -1 where never; (R,)."""
    L = traj.loss.numpy()
    thr = np.broadcast_to(np.asarray(threshold, dtype=float), (L.shape[0],))
    out = np.full(L.shape[0], -1)
    steps = traj.loss_steps.numpy()
    for r in range(L.shape[0]):
        hit = np.nonzero(L[r] < thr[r])[0]
        if hit.size:
            out[r] = steps[hit[0]]
    return out


def regression(x, y) -> tuple[float, float, float]:
    """Least-squares line y = a x + b: (slope a, intercept b, R^2)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    A = np.vstack([x, np.ones_like(x)]).T
    (a, b), *_ = np.linalg.lstsq(A, y, rcond=None)
    ss = ((y - y.mean()) ** 2).sum()
    r2 = 1 - ((y - (a * x + b)) ** 2).sum() / ss if ss > 0 else float("nan")
    return float(a), float(b), float(r2)


# -- plateau and alignment measures shared by the chapters ---------------------------------------
def plateau_table(ens: Ensemble, threshold: float = 0.01) -> list[dict]:
    """Appendix C.1's detector on every run's curve up to T, the first epoch with L < threshold (the whole
    run if never): count of plateaus, initial and first intermediate plateau lengths, T."""
    T_ = first_epoch_below(ens.traj, threshold)
    out = []
    for r in range(ens.traj.runs):
        end = int(T_[r]) if T_[r] > 0 else ens.traj.steps
        s = T.plateau_summary(ens.traj.loss[r].numpy(), end)
        s["T"] = int(T_[r])
        out.append(s)
    return out


def snapshot_at(ens: Ensemble, r: int, epoch: int):
    """Parameters of run r at the last snapshot <= epoch, and that snapshot's epoch."""
    steps = np.array(ens.traj.snap_steps)
    i = int(np.searchsorted(steps, epoch, side="right") - 1)
    i = max(i, 0)
    return ens.traj.snap_a[i, r], ens.traj.snap_W[i, r], int(steps[i])


def end_of_alignment(ens: Ensemble, tables: list[dict] | None = None) -> np.ndarray:
    """The epoch at which the initial plateau ends, per run: the end of the plateau that the detector of
    Appendix C.1 finds at epoch 0 (:func:`plateau_table`), or, where it finds none, the first epoch with
    L < 0.99 L(theta^0)."""
    tables = tables or plateau_table(ens)
    first = first_epoch_below(ens.traj, 0.99 * ens.traj.loss[:, 0].numpy())
    return np.array([t["initial"] if t["initial"] > 0 else f for t, f in zip(tables, first)])


def axial_std(W: torch.Tensor, weights=None) -> float:
    """Circular standard deviation of the axes beta_j (radians): sqrt(-2 ln R) / 2 with R the mean resultant
    length of exp(2 i beta_j)."""
    R = 1 - float(T.axial_variance(W, weights))
    return float(np.sqrt(-2 * np.log(max(R, 1e-300))) / 2)


