"""003 (orthogonal inputs), chapter `balancedness`: Lemma 1 (a_j^2 - ||w_j||^2 is conserved by the flow)
on gradient descent, with the drift of one step in closed form and the float64 roundoff bound.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import torch

from ... import verdicts as C
from ...engine.config import DTYPE
from ...engine.metrics import finite_runs
from ...engine.models import Params
from ...engine.monitor import Segmented, flat_snapshots, gradients, segmented_descent
from ...params import Float, Floats, Int, Ints, PROFILE, Rule, STEP_BUDGET, ensemble_bytes, gd_work
from .theory import Ensemble, NET, U, make_ensemble


SCHEMA = {
    "profile": PROFILE,
    "width_toy": Int("m of the Section-5 toy", low=1, high=100_000),
    "init_scale": Float("the toy's lambda is init_scale / sqrt(width_toy) (Section 5)", low=0, low_open=True, high=10),
    "lrs_toy": Floats("GD step sizes on L for the toy", low=0, low_open=True, high=1),
    "time_toy": Float("flow time of the toy runs", low=0, low_open=True, high=1e6),
    "width_b": Int("m of ORTHO-B", low=1, high=100_000),
    "lam_b": Float("lambda of ORTHO-B", low=0, low_open=True, high=1),
    "lrs_b": Floats("GD step sizes on L for ORTHO-B", low=0, low_open=True, high=1),
    "time_b": Float("flow time of the ORTHO-B runs", low=0, low_open=True, high=1e6),
    "seeds": Ints("one run per seed (and step size)", low=0, high=2 ** 63 - 1),
    "every_b": Int("iterations between recorded ORTHO-B states (the toy's are recorded every iteration)", low=1, high=10_000_000),
    "step_pairs": Int("iterations k at which the step k -> k+1 is checked exactly, per run", low=1, high=1_000_000),
    "flow_rtol": Float("relative tolerance of the Dormand-Prince gradient flow", low=0, low_open=True, high=1e-3),
    "flow_points": Int("recorded times of the gradient flow", low=2, high=1_000_000),
}


TOY_N, TOY_D = 2, 2  # the Section-5 toy: 2 points in dimension 2 (with the bias coordinate)
B_N, B_D = 4, 6  # ORTHO-B: 4 orthonormal points in dimension 6 (datasets.ORTHO_PRESETS)
FRACTION_UNITS = 1e4  # one exact rational update of a coordinate (fractions.Fraction, a few Python calls)


def flow_steps(t_end: float, rtol: float, points: int) -> float:
    """Dormand-Prince attempts (accepted + rejected) of one of :func:`run_balance`'s flows, an upper estimate:
    measured (ortho-B, t 400, rtol 1e-10: 3700-4000 accepted and 2800-3400 rejected; rtol 1e-6: about 1000 each;
    the toy, t 40, rtol 1e-10: about 1500 and 1000) as about 8 ln(1 + t) rtol^(-1/5) accepted steps, as many
    rejected, plus one per recorded time, within the flow's cap of 1e6 attempts per run."""
    return min(2 * 8 * math.log1p(t_end) * (1 / rtol) ** 0.2, 1e6) + points


def work_estimate(P) -> float:
    """Work units (:func:`shallowflow.params.gd_work`) of :func:`run_balance`: the toy's GD (seeds x lrs_toy runs,
    time_toy / min(lrs_toy) steps, each step's state summarised with its gradient: two steps' work per step),
    ORTHO-B's GD (seeds x lrs_b runs, time_b / min(lrs_b) steps, a summary every every_b), the exact one-step
    checks (2 states per checked step, rational arithmetic per run x neuron x coordinate) and the two
    Dormand-Prince flows (one run per seed, 7 field evaluations per attempt)."""
    R = len(P.seeds)
    steps_t = P.time_toy / min(P.lrs_toy)
    steps_b = P.time_b / min(P.lrs_b)
    units = gd_work(R * len(P.lrs_toy), P.width_toy, TOY_N, TOY_D, 2 * steps_t)
    units += gd_work(R * len(P.lrs_b), P.width_b, B_N, B_D, steps_b * (1 + 1 / P.every_b))
    for m, d, k in ((P.width_toy, TOY_D, min(P.step_pairs, steps_t)), (P.width_b, B_D, min(P.step_pairs, steps_b))):
        units += 2 * R * m * (d + 1) * k * FRACTION_UNITS
    units += gd_work(R, P.width_toy, TOY_N, TOY_D, 7 * flow_steps(P.time_toy, P.flow_rtol, P.flow_points))
    units += gd_work(R, P.width_b, B_N, B_D, 7 * flow_steps(P.time_b, P.flow_rtol, P.flow_points))
    return units


RULES = (Rule.budget(("time_toy", "lrs_toy"), lambda P: P.time_toy / min(P.lrs_toy), STEP_BUDGET,
                     what="the toy runs (time_toy / lr)"),
         Rule.budget(("time_b", "lrs_b"), lambda P: P.time_b / min(P.lrs_b), STEP_BUDGET,
                     what="the ORTHO-B runs (time_b / lr)"),
         Rule.memory(("width_b", "seeds", "lrs_b", "every_b", "step_pairs", "flow_points"),
                     lambda P: ensemble_bytes(len(P.seeds) * len(P.lrs_b), P.width_b, 6,
                                              4000 / P.every_b + 2 * P.step_pairs + P.flow_points)
                     + ensemble_bytes(len(P.seeds) * len(P.lrs_toy), P.width_toy, 2, 2000 + 2 * P.step_pairs + P.flow_points),
                     what="the states of one segment, the step pairs and the flow snapshots"),
         Rule.work(("width_toy", "lrs_toy", "time_toy", "width_b", "lrs_b", "time_b", "seeds", "every_b", "step_pairs",
                    "flow_rtol", "flow_points"), work_estimate,
                   what="the GD runs, the exact one-step checks and the two flows"))


class BalanceSummaries:
    """Per-run maxima of the balancedness defect a_j^2 - ||w_j||^2 (and, with ``per_step``, the running sum of
    the GD drift formula eta^2 (<D_j, w_j>^2 - a_j^2 ||D_j||^2) of every neuron, for snapshots taken every step).

    Summaries: rel (max_j |a^2 - ||w||^2| / ||w_j||^2), spec (max_j |a^2 - ||w||^2| / max_j ||w_j^0||^2),
    abs (max_j |a^2 - ||w||^2|), pos (max_j (a^2 - ||w||^2)/(a^2 + ||w||^2)), signs_ok (1 if every a_j has the
    sign s_j of a_j^0 and ||w_j|| > 0), size (max_j a_j^2 + ||w_j||^2).
    """

    def __init__(self, ens: Ensemble, per_step: bool = False):
        self.ens = ens
        self.s0 = torch.sign(ens.p0.a.cpu())
        self.w0 = (ens.p0.W.cpu() ** 2).sum(-1).amax(1)
        self.per_step = per_step
        self.X, self.y = ens.data.X.cpu(), ens.data.y.cpu()
        self.drift_sum = torch.zeros(ens.runs, ens.width, dtype=DTYPE)
        self.max_size = torch.zeros(ens.runs, ens.width, dtype=DTYPE)  # per neuron, max over t of a^2 + ||w||^2

    def __call__(self, a, W, runs):
        n2 = (W ** 2).sum(-1)
        inv = a ** 2 - n2
        out = dict(rel=(inv.abs() / n2).amax(-1), spec=inv.abs().amax(-1) / self.w0[runs], abs=inv.abs().amax(-1),
                   pos=(inv / (a ** 2 + n2)).amax(-1),
                   signs_ok=(((a * self.s0[runs]) > 0) & (n2 > 0)).all(-1).to(DTYPE), size=(a ** 2 + n2).amax(-1))
        self.max_size[runs] = torch.maximum(self.max_size[runs], (a ** 2 + n2).amax(0))
        if self.per_step:
            p, lead = flat_snapshots(a, W)
            _, ga, gW = gradients(p, self.X, self.y)
            # dL/da_j = -<D_j, w_j>, dL/dw_j = -a_j D_j: the formula from the gradients of the state
            Dw = (-ga).reshape(lead + (-1,))
            aD2 = (gW ** 2).sum(-1).reshape(lead + (-1,))
            eta = self.ens.lrs[runs][None, :, None]
            f = eta ** 2 * (Dw ** 2 - aD2)
            self.drift_sum[runs] += f.sum(0)
            self.last = (runs, f[-1])  # the formula at the final state predicts a step that is never taken
        return out

    def steps_sum(self) -> torch.Tensor:
        """(R, m) the sum of the drift formula over every step taken (per_step mode, all runs active)."""
        runs, f = self.last
        out = self.drift_sum.clone()
        out[runs] -= f
        return out


SIGNS_KEPT = C.is_true("every run")  # L1/gf-signs, L1/gd-signs-*: sign(a_j) = s_j and ||w_j|| > 0 at every record
DRIFT_SIGN = C.below(1.0, strict=False)  # L1/gd-drift-sign-*: max_{j,t} (a^2 - ||w||^2)/(a^2 + ||w||^2) / (2uK)


def gd_balance(ens: Ensemble, mon: Segmented, T: float) -> dict:
    """The GD balancedness of every run over flow time [0, T], from :class:`BalanceSummaries` (``mon.summaries``):
    rel (max_{j,t} |a^2 - ||w||^2| / ||w_j||^2), pos (max_{j,t} (a^2 - ||w||^2)/(a^2 + ||w||^2)), k_in (the
    iterations within T), drift_sign (pos / (2 u k_in): at most 1 when GD keeps |a_j| <= ||w_j|| up to rounding)
    and signs (1 where every recorded iterate has sign(a_j) = s_j and ||w_j|| > 0)."""
    S, ts = mon.summaries, mon.summary_time()
    inside = ts <= T * (1 + 1e-12)
    pos = torch.where(inside, S["pos"], torch.full_like(S["pos"], -math.inf)).amax(1)
    k_in = torch.round(T / ens.lrs)
    return dict(rel=torch.where(inside, S["rel"], torch.zeros_like(S["rel"])).amax(1), pos=pos, k_in=k_in,
                drift_sign=pos / (2 * U * k_in),
                signs=torch.where(inside, S["signs_ok"], torch.ones_like(S["signs_ok"])).amin(1))


def drift_formula(p: Params, X: torch.Tensor, y: torch.Tensor, lr: torch.Tensor) -> torch.Tensor:
    """(R, m) the predicted change of a_j^2 - ||w_j||^2 in one GD step of size lr: lr^2 (<D_j,w_j>^2 - a_j^2||D_j||^2)."""
    _, ga, gW = gradients(p, X, y)
    return lr[:, None] ** 2 * (ga ** 2 - (gW ** 2).sum(-1))


def exact_step_changes(before: Params, after: Params) -> torch.Tensor:
    """(R, m) the exact change of a_j^2 - ||w_j||^2 between two float64 states (rational arithmetic)."""
    R, m, d = before.W.shape
    out = torch.empty(R, m, dtype=DTYPE)
    a0, a1 = before.a.tolist(), after.a.tolist()
    W0, W1 = before.W.tolist(), after.W.tolist()
    for r in range(R):
        for j in range(m):
            F = Fraction
            inv0 = F(a0[r][j]) ** 2 - sum(F(v) ** 2 for v in W0[r][j])
            inv1 = F(a1[r][j]) ** 2 - sum(F(v) ** 2 for v in W1[r][j])
            out[r, j] = float(inv1 - inv0)
    return out


@dataclass
class BalanceRun:
    toy: Ensemble
    toy_mon: Segmented
    toy_drift: torch.Tensor  # (R, m) sum over every step of the drift formula
    toy_final_inv: torch.Tensor  # (R, m) a^2 - ||w||^2 at the end (minus its initial value, 0 for balanced)
    toy_max_size: torch.Tensor  # (R, m) max over the run of a_j^2 + ||w_j||^2
    b: Ensemble
    b_mon: Segmented
    steps: dict  # name -> dict(err, tol, formula, measured) of the exact one-step checks
    flows: dict  # name -> (Ensemble, FlowTrajectory)
    seconds: float = 0.0


def _step_check(ens: Ensemble, mon: Segmented, iters: list[int]) -> dict:
    X, y = ens.data.X.cpu(), ens.data.y.cpu()
    errs, tols, forms, meas = [], [], [], []
    for k in iters:
        before = Params(torch.cat([mon.state(r, k).a for r in range(ens.runs)]),
                        torch.cat([mon.state(r, k).W for r in range(ens.runs)]))
        after = Params(torch.cat([mon.state(r, k + 1).a for r in range(ens.runs)]),
                       torch.cat([mon.state(r, k + 1).W for r in range(ens.runs)]))
        F = drift_formula(before, X, y, ens.lrs)
        M = exact_step_changes(before, after)
        _, ga, gW = gradients(before, X, y)
        size1 = after.a ** 2 + (after.W ** 2).sum(-1)
        tol = 1e-12 * F.abs() + 4 * U * size1 + 8 * U * ens.lrs[:, None] ** 2 * (ga ** 2 + (gW ** 2).sum(-1))
        errs.append((M - F).abs())
        tols.append(tol)
        forms.append(F)
        meas.append(M)
    return dict(err=torch.stack(errs, 1), tol=torch.stack(tols, 1), formula=torch.stack(forms, 1),
                measured=torch.stack(meas, 1), iters=iters)


def run_balance(P) -> BalanceRun:
    """GD on the toy (every step recorded) and on ORTHO-B at two step sizes, the exact one-step checks,
    and the Dormand-Prince gradient flow of both."""
    from ...engine import flow

    t0 = time.perf_counter()
    lam_toy = P.init_scale / math.sqrt(P.width_toy)
    toy = make_ensemble("orthogonal-toy", P.width_toy, [lam_toy], P.seeds, P.lrs_toy)
    steps_t = int(round(P.time_toy / min(P.lrs_toy)))
    sample = sorted({min(steps_t - 1, int(round(x))) for x in np.geomspace(1, steps_t - 1, P.step_pairs)} | {0})
    cap = torch.tensor([[k for s in sample for k in (s, s + 1)]] * toy.runs)
    summ = BalanceSummaries(toy, per_step=True)
    toy_mon = segmented_descent(toy, steps_t, 1, 2000, summarise=summ, capture=cap)
    inv_end = toy_mon.final.a ** 2 - (toy_mon.final.W ** 2).sum(-1)
    inv_0 = toy.p0.a.cpu() ** 2 - (toy.p0.W.cpu() ** 2).sum(-1)
    b = make_ensemble("ortho-B", P.width_b, [P.lam_b], P.seeds, P.lrs_b)
    steps_b = int(math.ceil(P.time_b / min(P.lrs_b) / P.every_b)) * P.every_b
    sample_b = sorted({min(steps_b - 1, int(round(x))) for x in np.geomspace(1, steps_b - 1, P.step_pairs)} | {0})
    cap_b = torch.tensor([[k for s in sample_b for k in (s, s + 1)]] * b.runs)
    b_mon = segmented_descent(b, steps_b, P.every_b, 4000, summarise=BalanceSummaries(b), capture=cap_b)
    checks = {"orthogonal-toy": _step_check(toy, toy_mon, sample), "ortho-B": _step_check(b, b_mon, sample_b)}
    flows = {}
    for name, e, T in (("orthogonal-toy", toy, P.time_toy), ("ortho-B", b, P.time_b)):
        first = e.index(lr=float(e.lrs[0]))
        sub = e.select(first)
        ts = np.linspace(0, T, P.flow_points).tolist()
        flows[name] = (sub, flow.gradient_flow(sub.p0, sub.data, NET, t_end=T, rtol=P.flow_rtol, snapshots_t=ts))
    return BalanceRun(toy, toy_mon, summ.steps_sum(), inv_end - inv_0, summ.max_size.clone(), b, b_mon, checks, flows,
                      time.perf_counter() - t0)


def flow_balance(ens: Ensemble, ft) -> dict:
    """Lemma 1 on a gradient-flow trajectory: per run, the same quantities as :class:`BalanceSummaries`
    over every recorded time, and the argmax neuron's |a^2 - ||w||^2| / (a^2 + ||w||^2) (its rounding level)."""
    a, W = ft.snap_a, ft.snap_W  # (S, R, m), (S, R, m, d)
    n2 = (W ** 2).sum(-1)
    inv = a ** 2 - n2
    w0 = (ens.p0.W.cpu() ** 2).sum(-1).amax(1)
    s0 = torch.sign(ens.p0.a.cpu())
    flat = inv.abs().permute(1, 0, 2).reshape(ens.runs, -1)
    arg = flat.argmax(1)
    size = (a ** 2 + n2).permute(1, 0, 2).reshape(ens.runs, -1)
    return dict(rel=(inv.abs() / n2).amax((0, 2)), spec=inv.abs().amax((0, 2)) / w0, abs=inv.abs().amax((0, 2)),
                argmax_level=flat.gather(1, arg[:, None])[:, 0] / size.gather(1, arg[:, None])[:, 0],
                rounding_bound=2 * U * (ft.steps.to(DTYPE) + W.shape[-1] + 1),
                signs_ok=(((a * s0[None]) > 0) & (n2 > 0)).all(2).all(0).to(DTYPE),
                final_loss=ft.loss.gather(1, (ft.count - 1)[:, None])[:, 0],
                # per run: the last loss, the final parameters and every snapshot stayed finite (``loss`` is NaN-padded)
                finite=finite_runs(ft.loss.gather(1, (ft.count - 1)[:, None])[:, 0], ft.final,
                                   a.transpose(0, 1), W.transpose(0, 1)))
