"""003 (orthogonal inputs), chapter `high-dim`: the high-dimensional experiment of Appendix A (E3c).

The data are a *reconstruction* of the authors' code's random stream (see :func:`highdim_draws`);
training is on the paper's loss ("half").
"""
from __future__ import annotations

import dataclasses
import math

import torch

from ...engine import data as datasets
from ...engine import metrics, theory
from ...engine.config import DTYPE, default_device
from ...engine.models import Network, Params, flow_time_per_step
from ...params import Float, Int, PROFILE, Rule, gd_work
from ...engine.train import geometric_schedule, gradient_descent


SCHEMA = {
    "profile": PROFILE,
    "n": Int("number of samples", low=1, high=100_000),
    "d": Int("input dimension", low=1, high=100_000),
    "teacher_width": Int("teacher width", low=1, high=100_000),
    "width": Int("student width m", low=1, high=100_000),
    "init_scale": Float("student scale; weights ~ N(0, (init_scale^2 / (width d)))", low=0, low_open=True, high=10),
    "lr": Float("step on the authors' mean MSE (step 2 lr on L)", low=0, low_open=True, high=1),
    "steps": Int("GD iterations", low=1, high=100_000_000),
    "seed": Int("torch seed of the authors' notebook", low=0),
    "record_every": Int("loss recorded every this many iterations", low=1, high=10_000_000),
    "continue_steps": Int("further iterations after the authors' horizon (0: none)", low=0, high=100_000_000),
}


def work_estimate(P) -> float:
    """Work units (:func:`shallowflow.params.gd_work`) of :func:`run_highdim`: one run of ``width`` neurons on
    ``n`` points in dimension ``min(n, d)`` (the inputs' row space, :func:`row_space_reduction`), ``steps`` GD
    iterations and then ``continue_steps`` more (the teacher draw, the reduction and the summaries are single passes:
    negligible)."""
    return gd_work(1, P.width, P.n, min(P.n, P.d), P.steps + P.continue_steps)


RULES = (Rule.at_most("record_every", "steps", "the loss is recorded at least once after the start"),
         Rule.memory(("n", "d", "width"), lambda P: 8.0 * 16 * (P.n * P.d + P.width * (P.d + 1) + P.n * P.width),
                     what="the data, the student and its activations"),
         Rule.work(("n", "d", "width", "steps", "continue_steps"), work_estimate,
                   what="the run (width x n x min(n, d) x (steps + continue_steps))"))


def highdim_draws(n: int, d: int, teacher_width: int, width: int, init_scale: float, seed: int = 4):
    """The data and the student initialisation of the authors' high-dimensional notebook, drawn from
    one torch CPU stream seeded with ``seed`` in the notebook's order (a reconstruction from the
    specification's description of the code; torch's CPU sampling routines must not have changed
    since the authors' version for the draws to be bit-identical):

    1. the teacher (:func:`shallowflow.engine.data.teacher_relu`: hidden layer, output layer, then x);
    2. the student's hidden layer: torch's default Linear init (consumed, overwritten), then
       N(0, init_scale^2 / (width d)) in float32;
    3. the student's output layer: default init (consumed), then signs 2 Bernoulli(1/2) - 1;
    4. a_j = s_j ||w_j||.  The authors compute ||w_j|| in float32, where the squares (~1e-45) are
       subnormal; here it is computed in float64 from the same float32 weights (the initialisation
       is then exactly balanced), and the float32 value is returned for comparison.
    """
    gen = torch.Generator().manual_seed(int(seed))
    data = datasets.teacher_relu(n, d, teacher_width, seed=seed, generator=gen, device="cpu")
    W32 = datasets._torch_linear_draw(gen, width, d, init_scale / math.sqrt(width * d))
    datasets._torch_linear_draw(gen, 1, width, None)  # the output layer's default init (consumed)
    s = 2.0 * torch.bernoulli(0.5 * torch.ones(1, width), generator=gen) - 1.0
    W = W32.to(DTYPE)
    norms64 = W.norm(dim=1)
    norms32 = W32.norm(dim=1).square().sqrt()  # the authors' float32 computation
    p0 = Params((s.reshape(-1).to(DTYPE) * norms64)[None], W[None])
    return data, p0, dict(norms32=norms32.to(DTYPE), norms64=norms64, signs=s.reshape(-1).to(DTYPE))


def row_space_reduction(X: torch.Tensor, W: torch.Tensor):
    """GD on a two-layer network sees the inputs only through Z = W X^T, and its W-gradient, a (D * res) X, lies in
    the row space of X: with Q (d, r) an orthonormal basis of that space (r = min(n, d)), W(t) = W(0) (I - Q Q^T)
    + C(t) Q^T, where C(t) follows GD on the inputs X Q (n, r) from C(0) = W(0) Q (the same step, the same losses in
    exact arithmetic).  Returns (X Q, C(0), the fixed part W(0) (I - Q Q^T), Q); W of a reduced iterate C is
    ``fixed + C Q^T``.  With n < d a step costs r / d of the dense one (here 75 / 150)."""
    Q, _ = torch.linalg.qr(X.T, mode="reduced")  # (d, r), r = min(n, d)
    C0 = W @ Q
    return X @ Q, C0, W - C0 @ Q.T, Q


def run_highdim(P) -> dict:
    """E3c: GD with step lr on the mean MSE (step 2 lr on L) from the reconstructed draws, trained on the inputs' row
    space (:func:`row_space_reduction`, exact up to rounding; the returned parameters are the full W)."""
    data, p0, info = highdim_draws(P.n, P.d, P.teacher_width, P.width, P.init_scale, P.seed)
    dev = default_device()
    snaps = geometric_schedule(P.steps, 1.1)
    Xr, C0, fixed, Q = row_space_reduction(data.X, p0.W[0])
    reduced = dataclasses.replace(data, X=Xr)
    full = lambda q: Params(q.a, (fixed + q.W[0] @ Q.T)[None])  # a reduced iterate's full parameters
    # one run with m n r ~ 1e6 multiply-adds per product: BLAS (the torch engine) beats the fused C loop,
    # which wins on small problems (the smoke scale) where torch's per-operation overhead dominates
    engine = "torch" if P.width * P.n * Xr.shape[1] > 200_000 else "auto"
    traj = gradient_descent(Params(p0.a, C0[None]).to(dev), reduced.to(dev), Network("relu"), steps=P.steps,
                            lr=flow_time_per_step(P.lr, "mean"), loss="half", snapshots=snaps,
                            record_every=P.record_every, engine=engine)
    more = None
    if P.continue_steps > 0:  # the same GD, continued from the last iterate
        more = gradient_descent(traj.final.to(dev), reduced.to(dev), Network("relu"), steps=P.continue_steps,
                                lr=flow_time_per_step(P.lr, "mean"), loss="half", record_every=P.record_every,
                                engine=engine)
        more = dataclasses.replace(more, final=full(more.final), snap_W=fixed + more.snap_W @ Q.T)
    traj = dataclasses.replace(traj, final=full(traj.final), snap_W=fixed + traj.snap_W @ Q.T)
    return dict(data=data, p0=p0, info=info, traj=traj, more=more)


def highdim_summary(run: dict) -> dict:
    traj = run["traj"]
    L = traj.loss
    sv = metrics.saddle_visits(L, traj.loss_steps)
    fp = metrics.flat_plateaus(L, traj.loss_steps)
    W = traj.final.W[0]
    evr = metrics.explained_variance_ratio(W)
    info = run["info"]
    out = dict(initial_mse=2 * float(L[0, 0]), final_mse=2 * float(L[0, -1]), loss_ratio=float(L[0, -1] / L[0, 0]),
               saddles=sv, flat=fp, evr=evr, top2=float(evr[:2].sum()),
               grown=int((W.norm(dim=1) > 1e-3).sum()),
               norm32_error=float(((info["norms32"] - info["norms64"]).abs() / info["norms64"]).max()),
               max_cos=theory.orthogonality_defect(run["data"]))
    more = run.get("more")
    if more is not None:
        steps = torch.cat([traj.loss_steps, traj.steps + more.loss_steps[1:]])
        curve = torch.cat([L, more.loss[:, 1:]], dim=1)
        evr2 = metrics.explained_variance_ratio(more.final.W[0])
        out.update(all_steps=steps, all_loss=curve, continued_mse=2 * float(more.loss[0, -1]),
                   continued_factor=float(more.loss[0, -1] / L[0, -1]),
                   saddles_all=metrics.saddle_visits(curve, steps), top2_continued=float(evr2[:2].sum()))
    return out
