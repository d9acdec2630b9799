"""000, Appendix D (and Fig. 1.4): the closed-form gradient and Hessian of Chapter 4 against autograd and
finite differences.

The formulas are those of :mod:`.theory` (Section 4.1, loss 1/(2n) sum r_k^2, the convention of
Chapter 4 and Appendix D).  Autograd differentiates :func:`.theory.loss_of_flat` with ``torch.func``;
the finite differences are the thesis's: half-step central differences with h = 1e-4 for the
gradient (D.1) and the 8th-order central stencil on the closed-form gradient with h_a = 1, h_w = 1e-4
for the Hessian (D.2).  Every comparison is made in float64 and, to test the thesis's error levels, with
the finite differences computed in float32.
"""
from __future__ import annotations

import numpy as np
import torch
from torch.func import grad, hessian, vmap

from ...engine import data as datasets
from ...engine import init
from ...engine.config import DTYPE
from ...engine.models import Network, loss_factor
from ...params import PROFILE, DataFile, Float, Floats, Int, Ints, Rule, array_bytes, gd_bytes, gd_work
from ...engine.train import gradient_descent
from ... import verdicts as C
from . import theory as T

SCHEMA = {
    "profile": PROFILE,
    "width": Int("m of Tables D.1, D.2 and Figs D.1-D.3", low=1, high=200),
    "draws": Int("random theta per (activation, lambda) for Table D.1", low=1, high=100_000),
    "hessian_draws": Int("random theta per (activation, lambda) for Table D.2 and check H1", low=1, high=10_000),
    "scales": Floats("lambda of the random draws theta_i ~ lambda N(0, 1)", low=0, low_open=True, high=100),
    "fd_step": Float("h of the gradient's central difference", low=0, low_open=True, high=1),
    "train_scale": Float("lambda of the training run of Figs D.1-D.3", low=0, low_open=True, high=10),
    "train_lr": Float("GD step size of Figs D.1-D.3 (MSE loss)", low=0, low_open=True, high=1),
    "train_steps": Int("GD epochs of Figs D.1-D.3", low=1, high=10_000_000),
    "every": Int("epochs between the points of Figs D.1-D.3", low=1, high=1_000_000),
    "seeds": Ints("seed of the random draws and of the training run (first one)", low=0),
    "data": DataFile("the data of Table D.1 / G1 and the first data set of Table D.2 / H1: '1.1.0' (the thesis's Dataset "
                     "1.1.0; Table D.2 adds 1.1.4) or a .npz (X, y) / .csv (y last) file, one label column: the formulas "
                     "hold for any data (a custom run)", names=("1.1.0",), min_n=1, max_n=1000, min_d=1, max_d=20,
                     outputs=1),
}
RULES = (Rule(("every", "train_steps"), lambda P: P.every <= P.train_steps, "every must be <= train_steps"),)


def table_data(P):
    """The data of the tables: Dataset 1.1.0 by name, or the file of ``P.data`` (validated before the kernel)."""
    if P.data == "1.1.0":
        return datasets.get("brisbois-orthogonal", device="cpu")
    return datasets.from_file(P.data, device="cpu", **SCHEMA["data"].limits.kwargs())


def _shape(P) -> tuple[int, int]:
    """(n, d) of the tables' data, from the file's header for a path (already checked by the DataFile spec)."""
    if P.data == "1.1.0":
        return 2, 2
    from ...params.datafile import read_xy
    X, _ = read_xy(P.data, **SCHEMA["data"].limits.kwargs())
    return int(X.shape[0]), int(X.shape[1])


def memory_estimate(P) -> float:
    """The largest of: Table D.1's draws (gradients of D = 3m entries, four ways), Table D.2's Hessians
    (hessian_draws x D x D, closed form, autograd and two finite-difference ones), the training runs'
    snapshots and their gradients."""
    n, d = _shape(P)
    D = (max(d, 2) + 1) * P.width
    S = P.train_steps // P.every + 1
    return max(array_bytes(P.draws, D, copies=8), array_bytes(P.hessian_draws, D, D, copies=6),
               3 * gd_bytes(1, P.width, 2, 2, P.train_steps, P.every, S) + array_bytes(S, D, copies=8))


def work_estimate(P) -> float:
    """Finite differences cost D network evaluations per gradient (each m x n x (d + 1)) and a Hessian D^2
    entries per point, per activation and scale (four ways, two datasets, two widths); plus the training runs."""
    n, d = _shape(P)
    D = (max(d, 2) + 1) * P.width
    per = gd_work(1, P.width, max(n, 2), max(d, 2), 1)
    grads = 3 * len(P.scales) * P.draws * 4 * D * per
    hess = 3 * len(P.scales) * 4 * P.hessian_draws * 4 * 10 * D * D * max(n, 2)  # (n = 2: the former factor 2)
    S = P.train_steps // P.every + 1
    return grads + hess + 3 * (gd_work(1, P.width, 2, 2, P.train_steps) + 4 * S * D * per)


NAMES = ("width", "draws", "hessian_draws", "scales", "train_steps", "every", "data")
RULES = RULES + (Rule.memory(NAMES, memory_estimate, what="the draws, their Hessians and the training snapshots"),
                 Rule.work(NAMES, work_estimate, what="the tables and the training runs"))


def random_thetas(count: int, m: int, d: int, scale: float, seed: int) -> torch.Tensor:
    """count parameter vectors with theta_i ~ lambda N(0, 1) (Appendix D.1), seeded."""
    gen = torch.Generator().manual_seed(int(seed))
    return scale * torch.randn(count, m * (d + 1), generator=gen, dtype=DTYPE)


def _autograd_grad(theta, X, y, act, m):
    return vmap(grad(lambda t: T.loss_of_flat(t, X, y, act, m)))(theta)


def _autograd_hessian(theta, X, y, act, m):
    return vmap(hessian(lambda t: T.loss_of_flat(t, X, y, act, m)))(theta)


def _near_kink(theta, X, m, tol=1e-8) -> torch.Tensor:
    """Draws with some abs(<w_j, x_k>) < tol (ReLU's kink), where closed form and autograd may differ."""
    _, W = T.unflatten(theta, m, X.shape[1])
    return ((W @ X.T).abs() < tol).flatten(1).any(1)


def gradient_table(P, data=None) -> dict:
    """Table D.1 and check G1: for each activation and lambda, the mean l2 error of the finite
    difference (float64 and float32) against the closed form, and the largest relative error of the
    closed form against autograd (ReLU: draws next to a kink left out, counted)."""
    data = data or table_data(P)
    X, y = data.X, data.y
    out = {}
    for act in T.ACTIVATIONS:
        for lam in P.scales:
            th = random_thetas(P.draws, P.width, data.d, lam, P.seeds[0])
            gF = T.gradient(th, X, y, act, P.width)
            gA = _autograd_grad(th, X, y, act, P.width)
            keep = ~_near_kink(th, X, P.width) if act == "relu" else torch.ones(len(th), dtype=torch.bool)
            rel = ((gF - gA).norm(dim=1) / gF.norm(dim=1).clamp_min(1.0))[keep]
            fd64 = T.fd_gradient(th, X, y, act, P.width, P.fd_step)
            fd32 = T.fd_gradient(th, X, y, act, P.width, P.fd_step, dtype=torch.float32)
            out[(act, lam)] = dict(fd64=float((fd64 - gF).norm(dim=1).mean()),
                                   fd32=float((fd32 - gF).norm(dim=1).mean()),
                                   autograd=float(rel.max()) if len(rel) else float("nan"),
                                   kinks=int((~keep).sum()))
    return out


def hessian_table(P, data_list=None) -> dict:
    """Table D.2 and check H1: mean Frobenius error of the thesis's finite-difference Hessian (float64 and
    float32) against the closed form, and the largest entry error of the closed form against autograd,
    per activation and lambda, over the given datasets and widths {2, m}."""
    data_list = data_list or [table_data(P), datasets.get("brisbois-orthogonal", variant="1.1.4", device="cpu")]
    out = {}
    for act in T.ACTIVATIONS:
        for lam in P.scales:
            fd64, fd32, auto, kinks = [], [], [], 0
            for di, data in enumerate(data_list):
                for m in sorted({2, P.width}):
                    th = random_thetas(P.hessian_draws, m, data.d, lam, P.seeds[0] + 7 * di + m)
                    HF = T.hessian(th, data.X, data.y, act, m)
                    HA = _autograd_hessian(th, data.X, data.y, act, m)
                    keep = ~_near_kink(th, data.X, m) if act == "relu" else torch.ones(len(th), dtype=torch.bool)
                    kinks += int((~keep).sum())
                    auto.append(float((HF - HA).abs().flatten(1).amax(1)[keep].max()) if keep.any() else 0.0)
                    if di == 0 and m == P.width:  # Table D.2's setting
                        fd64.append(float((T.fd_hessian(th, data.X, data.y, act, m) - HF).flatten(1).norm(dim=1).mean()))
                        fd32.append(float((T.fd_hessian(th, data.X, data.y, act, m, dtype=torch.float32) - HF)
                                          .flatten(1).norm(dim=1).mean()))
            out[(act, lam)] = dict(fd64=fd64[0], fd32=fd32[0], autograd=max(auto), kinks=kinks)
    return out


def error_table(table: dict, thesis: dict, autograd_label: str, width: int) -> str:
    """Tables D.1/D.2 as text: per (activation, lambda) the FD errors in float64 and float32, the thesis's
    printed value, the closed form against autograd and the draws near a kink."""
    lines = [f"{'activation':10s} {'lambda':>7s} {'FD float64':>11s} {'FD float32':>11s} {'thesis':>11s} "
             f"{autograd_label:>{width}s} kinks"]
    for (act, lam), v in table.items():
        th = thesis.get((act, lam))
        lines.append(f"{act:10s} {lam:7.0e} {v['fd64']:11.3e} {v['fd32']:11.3e} "
                     f"{th if th is None else format(th, '11.3e'):>11} {v['autograd']:{width}.2e} {v['kinks']:5d}")
    return "\n".join(lines)


def d2_example() -> dict:
    """Check H2: the closed-form and autograd Hessians at Appendix D.2's point against the printed matrix,
    and the finite-difference errors (float64, float32, and the thesis's printed approximation)."""
    data = datasets.get("brisbois-orthogonal", device="cpu")
    th, m = T.d2_example()
    HF = T.hessian(th, data.X, data.y, "sigmoid", m)[0]
    HA = _autograd_hessian(th, data.X, data.y, "sigmoid", m)[0]
    printed = torch.tensor(T.PRINTED_D2_HESSIAN, dtype=DTYPE)
    printed_fd = torch.tensor(T.PRINTED_D2_FD_HESSIAN, dtype=DTYPE)
    # the (W, a) order in which the thesis lists theta, for comparison
    perm = [2, 3, 4, 5, 0, 1]
    return dict(
        closed_vs_printed=float((HF - printed).abs().max()),
        autograd_vs_printed=float((HA - printed).abs().max()),
        autograd_vs_printed_listed_order=float((HA[perm][:, perm] - printed).abs().max()),
        printed_fd_error=float((printed_fd - printed).norm()),
        fd64_error=float((T.fd_hessian(th, data.X, data.y, "sigmoid", m)[0] - HF).norm()),
        fd32_error=float((T.fd_hessian(th, data.X, data.y, "sigmoid", m, dtype=torch.float32)[0] - HF).norm()),
        eigenvalues=torch.linalg.eigvalsh(HA).numpy(),
        hessian=HA.numpy(),
    )


#: Table D.1: the float64 finite-difference gradient error over the thesis's printed value, largest cell; Table D.2:
#: the same for the Sigmoid/Tanh Hessian, and ReLU's smallest error at lambda <= 1e-2 (the kink: O(1)); check H2: the
#: autograd Hessian at D.2's point against the printed matrix (largest entry error), the thesis's stencil in float32
#: against the closed form (an error of the thesis's printed order, within a factor 10 of 9.410e-4)
THESIS_D1 = {("relu", 1e-7): 1.91194e-7, ("relu", 1e-2): 6.95204e-5, ("relu", 5.0): 7.60822e-5,
             ("sigmoid", 1e-7): 4.22131e-8, ("sigmoid", 1e-2): 5.08386e-8, ("sigmoid", 5.0): 8.85910e-7,
             ("tanh", 1e-7): 3.02942e-12, ("tanh", 1e-2): 2.43728e-9, ("tanh", 5.0): 2.21812e-6}  # Table D.1 as printed
THESIS_D2 = {("relu", 1e-7): 0.882706, ("relu", 1e-2): 2.008855, ("relu", 5.0): 0.331454,
             ("sigmoid", 1e-7): 2.616767e-4, ("sigmoid", 1e-2): 4.529790e-4, ("sigmoid", 5.0): 3.316418e-3,
             ("tanh", 1e-7): 1.201516e-7, ("tanh", 1e-2): 2.384548e-5, ("tanh", 5.0): 6.629788e-3}  # Table D.2 as printed
TABLE_D1_FD = C.below(10.0)
TABLE_D2_SMOOTH = C.below(1.0)
TABLE_D2_RELU_KINK = C.above(0.1)
H2_PRINTED = C.below(1e-7)
H2_FLOAT32_FD = C.within(9.410e-5, 9.410e-3)

def d1_ratio(gt: dict) -> float:
    """Table D.1's check: the float64 finite-difference error over the thesis's printed value, largest over the
    cells of :func:`gradient_table` that the thesis prints."""
    return max(gt[k]["fd64"] / THESIS_D1[k] for k in THESIS_D1 if k in gt)


def d2_smooth_ratio(ht: dict, smooth=("sigmoid", "tanh")) -> float:
    """Table D.2's check on the smooth activations: the same ratio for the Hessian, largest cell."""
    return max(ht[k]["fd64"] / THESIS_D2[k] for k in THESIS_D2 if k[0] in smooth and k in ht)


def kink_error(ht: dict, act: str = "relu") -> float:
    """Table D.2's ReLU check: the smallest mean Frobenius error of the finite-difference Hessian at lambda <= 1e-2."""
    return min(ht[k]["fd64"] for k in ht if k[0] == act and k[1] <= 1e-2)


#: the thesis on Figs D.1 and D.2 (000_5bec2764affd87f0.txt, Appendix D, after Fig. D.2): "We can notice that the
#: l_2-norm error is always under 7x10^{-4}"
SOURCE_L2_BOUND = 7e-4
#: Fig. D.2: |grad L_App - grad L_F| along training under that bound
FIG_D2_BOUND = C.below(SOURCE_L2_BOUND)
#: Fig. D.3: |L_PT - L_F| along training, the training loop's recorded loss against the closed form (rounding only)
FIG_D3_LOSS = C.below(1e-12)


def training_errors(P) -> dict:
    """Figs D.1-D.3: along one GD run per activation (Dataset 1.1.0, MSE training loss, as in Chapter 3),
    the errors between autograd (grad L_PT), closed form (L_F) and finite differences (L_App) of the 1/(2n)
    loss, at every ``every`` epochs; the autograd gradient also in float32.  Fig. D.3's L_PT is the loss the
    training loop recorded (the engine's forward), against the closed form L_F on the same snapshots."""
    data = datasets.get("brisbois-orthogonal", device="cpu")
    X, y = data.X, data.y
    m = P.width
    snaps = list(range(0, P.train_steps + 1, P.every))
    out = {}
    for act in T.ACTIVATIONS:
        p0 = init.balanced(P.seeds[:1], m, data.d, P.train_scale, device="cpu")
        tr = gradient_descent(p0, data, Network(act), steps=P.train_steps, lr=P.train_lr, loss="mean",
                              snapshots=snaps, record_every=P.every)
        th = torch.cat([tr.snap_a[:, 0], tr.snap_W[:, 0].reshape(len(snaps), -1)], dim=1)
        gF = T.gradient(th, X, y, act, m)
        gA = _autograd_grad(th, X, y, act, m)
        gA32 = _autograd_grad(th.float(), X.float(), y.float(), act, m).double()
        gD = T.fd_gradient(th, X, y, act, m, P.fd_step)
        LF = 0.5 * ((torch.einsum("sm,smn->sn", th[:, :m], T.sigma(th[:, m:].reshape(-1, m, data.d) @ X.T, act))
                     - y) ** 2).mean(1)
        # L_PT: the loss the training loop itself recorded at the same epochs (the engine's Network forward and its
        # "mean" 1/n MSE, halved to the 1/(2n) convention), not a second copy of LF's expression: a copy of the
        # same arithmetic differs from LF by exactly 0 whatever either computes
        LA = tr.loss[0] * (loss_factor("half") / loss_factor("mean"))
        finite = bool(torch.isfinite(th).all() and torch.isfinite(tr.loss).all())
        out[act] = dict(steps=np.array(snaps), loss=tr.loss[0].numpy(),
                        pt_l2=(gA - gF).norm(dim=1).numpy(), pt_inf=(gA - gF).abs().amax(1).numpy(),
                        pt32_l2=(gA32 - gF).norm(dim=1).numpy(),
                        fd_l2=(gD - gF).norm(dim=1).numpy(), fd_inf=(gD - gF).abs().amax(1).numpy(),
                        loss_diff=(LA - LF).abs().numpy(), valid=finite)
    return out
