"""Algorithm 1's rate, measured: the per-minibatch rate against hand computations (spec section 4.4, P4), the
bookkeeping of every ADLER run of the comparison (Alg1), and the rate's saturation at the 1/eps cap.

**Saturation** (a finding of this book, not a claim of the thesis): ADLER's first estimate eta_0 = G^T G / v^T Q v is
large on a near-uniform softmax (the cross-entropy curvature along v is of order one over the classes), so the first
steps blow the logits up; once the softmax saturates on a minibatch, v^T Q v (the variance of v under the softmax)
falls to 0 and eta = G^T G / (v^T Q v + eps G^T G) reaches 1/eps. :func:`saturation_sweep` measures eta_0, v^T Q v /
G^T G, the largest eta, the softmax's saturation (mean 1 - max probability of the minibatch) at every step, on the
ReLU CNN over a sweep of widths, to find the smallest model where the cap appears.
"""
from __future__ import annotations

import math
import time

import numpy as np
import torch
import torch.nn.functional as F

from ... import verdicts as C
from ...deep import optim as dopt
from ...deep import vision


# P4 (a)'s criterion (the chapter's; tests/test_controls_balboni_thesis.py feeds it the Gauss-Newton variant's rate)
P4_LINE_SEARCH = C.below(1e-10)  # relative error of eta against the exact line-search step (linear model, MSE, eps = 0)
SAT_CAP_REACHED = C.above(0.0, strict=True)  # ADLER-sat: share of the sweep's runs whose eta reaches 1 / (2 eps)
SAT_SOFTMAX = C.below(0.5)  # ADLER-sat: 1 - max softmax at the first capped step / its value before the first step
SAT_FIRST_RATE = C.above(1.0, strict=True)  # ADLER-sat: the sweep's smallest eta_0 / the grid's largest rate
SAT_BRACKETED = C.is_true()  # ADLER-sat: a width below the smallest capped one never reaches the cap


def step_checks(seed: int = 0, method: str = "adler") -> dict:
    """Spec section 4.4 (a)-(d) in float64 (and (b) in float32): returns the measured errors.  ``method`` is the
    optimiser of (a) (``"gn"``: the Gauss-Newton variant, whose rate is not the quadratic model's minimiser: the
    negative control of P4 (a))."""
    from torch.func import functional_call, jacrev

    g = torch.Generator().manual_seed(seed)
    out = {}
    # (a) linear model F(theta) = Phi theta, MSE: eta is the exact line-search minimiser (eps = 0)
    Phi = torch.randn(32, 12, generator=g, dtype=torch.float64)
    y = torch.randn(32, 1, generator=g, dtype=torch.float64)
    lin = torch.nn.Linear(12, 1, bias=False).double()
    with torch.no_grad():
        lin.weight.copy_(torch.randn(1, 12, generator=g, dtype=torch.float64))
    w0 = lin.weight.detach().clone()
    mse = lambda o: 0.5 * ((o - y) ** 2).sum(1).mean()
    opt = dopt.Adler(lin, eps=0.0) if method == "adler" else dopt.make(method, lin, eps=0.0)
    opt.step(lambda: (Phi, mse))
    eta = opt.history[0]["eta"]
    r = Phi @ w0.T - y
    G = (Phi.T @ r / 32).T  # gradient of the batch-mean loss
    d = Phi @ G.T
    eta_ls = float((d * r).sum() / (d * d).sum())  # argmin_eta of 0.5/n ||r - eta d||^2
    out["a_rel_err"] = abs(eta - eta_ls) / eta_ls
    out["a_step_taken"] = float((lin.weight.detach() - (w0 - eta * G)).abs().max())
    # (b) JVP-based v^T Q v against the explicit Jacobian, on the small CNN, float64 and float32
    for dtype, key in ((torch.float64, "b_rel_err_f64"), (torch.float32, "b_rel_err_f32")):
        model = vision.build("cnn", "tanh", 10, width=4, seed=seed, dtype=dtype)
        x = torch.randn(6, 1, 8, 8, generator=g, dtype=torch.float64).to(dtype)
        yy = torch.arange(6) % 10
        opt = dopt.Adler(model, eps=0.0)
        names = [n for n, _ in model.named_parameters()]
        params = {n: p.detach().clone() for n, p in model.named_parameters()}
        opt.step(lambda: (x, lambda o: F.cross_entropy(o, yy)))
        rec = opt.history[0]
        f = lambda p: functional_call(model, p, (x,))
        J = jacrev(f)(params)  # dict of (6, 10, *shape)
        Gd = torch.func.grad(lambda p: F.cross_entropy(f(p), yy))(params)
        v = sum(J[n].reshape(60, -1) @ Gd[n].reshape(-1) for n in names).reshape(6, 10)
        o = functional_call(model, params, (x,)).detach()
        p = torch.softmax(o, -1)
        H = (torch.diag_embed(p) - p[:, :, None] * p[:, None, :]) / 6  # Hessian of the batch mean, per example
        q = float(torch.einsum("bi,bij,bj->", v, H, v))
        out[key] = abs(rec["vQv"] - q) / abs(q)
    # (c) closed-form cross-entropy quadratic form = autograd's v^T Hess v
    o = torch.randn(16, 7, generator=g, dtype=torch.float64)
    v = torch.randn(16, 7, generator=g, dtype=torch.float64)
    yy = torch.randint(0, 7, (16,), generator=g)
    closed = float(dopt.cross_entropy_quadratic_form(o, v))
    auto = float(dopt.output_quadratic_form(lambda z: F.cross_entropy(z, yy), o, v))
    out["c_rel_err"] = abs(closed - auto) / abs(auto)
    # (d) bookkeeping: constant eta gives eta_hat = eta exactly; the first step is eta_0
    s = c = 0.0
    errs = []
    for k in range(500):
        s, c, eh = dopt.geometric_mean_update(s, c, 0.0371, 0.99)
        errs.append(abs(eh - 0.0371) / 0.0371)
    out["d_const_err"] = max(errs)
    _, _, first = dopt.geometric_mean_update(0.0, 0.0, 2.5e-3, 0.99)
    out["d_first_err"] = abs(first - 2.5e-3) / 2.5e-3
    return out


def algorithm_checks(comp: Comparison, beta: float) -> dict:
    """Algorithm 1's bookkeeping on every ADLER run: passes per step, the first eta_hat equal to eta_0, eta_hat the
    geometric mean of the recorded eta (recomputed), and v^T Q v >= 0 at every step."""
    per_step, first, geo, vq, flags = [], [], [], [], []
    for r in comp.runs:
        if r.method != "adler" or len(r.steps["eta"]) == 0 or not r.finite:  # a diverged run's last step is unrecorded
            continue
        k = len(r.steps["eta"])
        per_step.append(max(abs(r.passes[p] - k) for p in ("forward", "backward", "jvp")))
        first.append(abs(r.steps["eta_hat"][0] - r.steps["eta"][0]) / r.steps["eta"][0])
        w = beta ** np.arange(k)[::-1]
        logs = np.log(r.steps["eta"])
        ref = np.array([math.exp(np.dot(w[k - i - 1:], logs[:i + 1]) / w[k - i - 1:].sum()) for i in range(k)])
        geo.append(float(np.max(np.abs(ref - r.steps["eta_hat"]) / ref)))
        vq.append(float(np.min(r.steps["vQv"])))
        flags.append(r.finite)
    nan = float("nan")
    if not flags:
        return dict(pass_mismatch=nan, first_err=nan, geo_err=nan, min_vqv=nan, valid=np.zeros(0, dtype=bool))
    return dict(pass_mismatch=max(per_step), first_err=max(first), geo_err=max(geo), min_vqv=min(vq),
                valid=np.array(flags, dtype=bool))



def saturation_sweep(split, widths, seeds, epochs: int, batch: int, beta: float = 0.99, eps: float = 1e-10,
                     kind: str = "cnn", act: str = "relu") -> dict:
    """ADLER alone on ``split`` for every width x seed (the ReLU CNN of :func:`shallowflow.deep.vision.build`,
    float32, minibatch order from the seed): per step eta, v^T Q v / G^T G and the minibatch's softmax saturation
    (mean of 1 - max probability, from one extra forward pass before the step). Per run: ``eta0``, ``max_eta``,
    ``capped`` (max eta >= 1 / (2 eps), the cap reached), ``sat_at_cap`` (saturation at the first capped step),
    ``sat0`` (saturation before the first step),
    ``final_acc`` (nan once the run diverged), ``finite``, ``params``."""
    out = {k: [] for k in ("width", "seed", "params", "eta0", "max_eta", "min_q", "capped", "sat_at_cap", "sat0", "cap_step",
                           "final_acc", "finite", "seconds")}
    n = len(split.Xtr)
    per_epoch = n // batch
    for w in widths:
        for seed in seeds:
            t0 = time.perf_counter()
            model = vision.build(kind, act, split.classes, split.image, split.channels, w, seed=seed)
            opt = dopt.Adler(model, beta, eps, quadratic_form="cross_entropy")
            gen = torch.Generator().manual_seed(seed)
            sat, finite = [], True
            for _ in range(epochs):
                order = torch.randperm(n, generator=gen)
                for b in range(per_epoch):
                    idx = order[b * batch:(b + 1) * batch]
                    xb, yb = split.Xtr[idx], split.ytr[idx]
                    with torch.no_grad():
                        sat.append(float((1 - torch.softmax(model(xb).double(), -1).max(-1).values).mean()))
                    try:
                        loss = opt.step(lambda: (xb, lambda o: F.cross_entropy(o, yb)))
                    except FloatingPointError:
                        loss = torch.tensor(float("nan"))
                    if not torch.isfinite(loss) or not all(torch.isfinite(p).all() for p in model.parameters()):
                        finite = False
                        break
                if not finite:
                    break
            eta = np.array([h["eta"] for h in opt.history], dtype=float)
            q = np.array([h["vQv"] / h["G2"] if h["G2"] > 0 else float("nan") for h in opt.history], dtype=float)
            capped = np.flatnonzero(eta >= 0.5 / eps) if eps > 0 else np.zeros(0, dtype=int)
            with torch.no_grad():
                acc = float((model(split.Xte).argmax(1) == split.yte).float().mean()) if finite else float("nan")
            out["width"].append(w), out["seed"].append(seed), out["params"].append(vision.parameter_count(model))
            out["eta0"].append(float(eta[0]) if eta.size else float("nan"))
            out["max_eta"].append(float(np.nanmax(eta)) if eta.size else float("nan"))
            out["min_q"].append(float(np.nanmin(q)) if q.size else float("nan"))
            out["capped"].append(bool(capped.size))
            out["cap_step"].append(int(capped[0]) if capped.size else -1)
            out["sat_at_cap"].append(sat[int(capped[0])] if capped.size else float("nan"))
            out["sat0"].append(sat[0] if sat else float("nan"))
            out["final_acc"].append(acc), out["finite"].append(finite)
            out["seconds"].append(time.perf_counter() - t0)
    res = {k: np.array(v) for k, v in out.items()}
    capped_w = sorted({int(w) for w, c in zip(res["width"], res["capped"]) if c})
    res["smallest"] = capped_w[0] if capped_w else float("nan")
    res["free_below"] = bool(capped_w) and any(not res["capped"][res["width"] == w].any() for w in widths
                                                if w < capped_w[0])
    res["per_epoch"] = per_epoch
    res["eps"] = eps
    return res
