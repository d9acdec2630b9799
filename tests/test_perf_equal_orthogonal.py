"""Performance changes that must not change a number: 001's orthogonal engine (reductions.orthogonal_gd, ortho_mu)
and local-pl's per-step tracking (local_pl.run_n) against frozen copies of the code they replaced, compared bit for
bit (torch.equal) at a small size.  The old code computed relu(Z) three times and 1{Z > 0} twice per step, and copied
Z for the tracking; the new one computes each once into buffers allocated once (the same operations on the same
values), so the trajectories, mu and every tracked count are identical, not merely close."""
import math
import types

import pytest
import torch

from shallowflow.engine.config import DTYPE
from shallowflow.engine.train import DivergenceError
from shallowflow.experiments.weakly_interacting import local_pl as LP
from shallowflow.experiments.weakly_interacting import reductions as RD
from shallowflow.experiments.weakly_interacting import theory as T
from shallowflow.engine import data, init


# ---- frozen reference: the code before the change (main at e02016e), progress bars left out -------------------
def old_ortho_mu(a, Z, r, s2):
    R_, p, n = Z.shape
    rb = r / r.norm(dim=-1, keepdim=True)
    act = (Z > 0).to(Z.dtype)
    t1 = (torch.clamp_min(Z, 0) * rb[:, None, :]).sum(-1) ** 2
    t2 = a ** 2 * (act * (s2 * rb ** 2)[:, None, :]).sum(-1)
    return 2.0 / (n * p) * (t1 + t2).sum(-1)


def old_orthogonal_gd(a, Z, off, y, s, lr, steps, stop_rel=None, stop_abs=None, track=None):
    a, Z = a.clone(), Z.clone()
    R_, p, n = Z.shape
    y = y.expand(R_, n) if y.dim() == 1 else y
    s2 = s ** 2
    loss = torch.empty(R_, steps + 1, dtype=DTYPE)
    mus = torch.empty(R_, steps + 1, dtype=DTYPE)
    alive = torch.ones(R_, dtype=torch.bool)
    stopped = torch.full((R_,), steps, dtype=torch.int64)
    L0 = None
    for k in range(steps + 1):
        h = (a[:, :, None] * torch.clamp_min(Z, 0)).sum(1) / p
        r = y - h
        L = (r ** 2).sum(-1) / (2 * n)
        if not bool(torch.isfinite(L).all()):
            raise DivergenceError("non-finite", iteration=k, run=int(torch.nonzero(~torch.isfinite(L))[0]))
        if L0 is None:
            L0 = L.clone()
        mu = old_ortho_mu(a, Z, r, s2)
        loss[:, k] = L
        mus[:, k] = mu
        if track is not None:
            track(k, a, Z, r, L, mu, alive)
        stop = torch.zeros_like(alive)
        if stop_abs is not None:
            stop |= L < stop_abs
        if stop_rel is not None:
            stop |= L < stop_rel * L0
        newly = alive & stop
        stopped[newly] = k
        alive &= ~stop
        if k == steps or not bool(alive.any()):
            loss[:, k + 1:] = L[:, None]
            mus[:, k + 1:] = mu[:, None]
            break
        act = (Z > 0).to(DTYPE)
        ga = (torch.clamp_min(Z, 0) * r[:, None, :]).sum(-1) / n
        gZ = (a[:, :, None] / n) * act * (r * s2)[:, None, :]
        m = (lr * alive.to(DTYPE))
        a = a + m[:, None] * ga
        Z = Z + m[:, None, None] * gZ
    return RD.OrthoRun(a=a, Z=Z, loss=loss, mu=mus, stopped_at=stopped)


def old_run_n(n, P, protocol="stated"):
    d = P.d
    p = T.width_rule(n, P.eps)
    wf, mult, given = (1.0, P.horizon_mult, P.seeds) if protocol == "stated" else (0.01, 10 * P.horizon_mult, P.final_seeds)
    seeds, rejected = LP.conditioned_seeds(n, p, d, list(given), P.data, P.first_layer, wf)
    gs = LP.generator_seeds(n, seeds)
    s, y = LP.orthogonal_data(n, d, gs, P.data)
    a0, Wn, off = RD.orthogonal_init(gs, p, n, d, first_layer=P.first_layer, w_factor=wf)
    Z0 = Wn * s[:, None, :]
    R_ = len(seeds)
    epochs = T.epochs_rule(n, p, P.lr, mult)
    wrong0 = (a0[:, :, None] * y[:, None, :] < 0)
    st = dict(t_ext=torch.full((R_,), -1, dtype=torch.int64), prev=Z0.clone(), mono_viol=torch.zeros(R_, dtype=torch.int64),
              react=torch.zeros(R_, dtype=torch.int64), resid_ext=torch.full((R_,), float("nan"), dtype=DTYPE),
              v64=torch.zeros(R_, dtype=torch.int64), n64=torch.zeros(R_, dtype=torch.int64))
    cxm, cxp, cyp = s.amin(-1), s.amax(-1), y.abs().amax(-1)
    cbar = (((a0 ** 2 - (Wn ** 2).sum(-1) - off) / p).sum(-1)).clamp_min(0)
    kappa64 = 2 * math.pi * math.sqrt(2 / 3) * cxp ** 2 / cxm * cyp * math.sqrt(p / n)

    def track(k, a, Z, r, L, mu, alive):
        act = Z > 0
        prev = st["prev"]
        before = st["t_ext"] < 0
        wrong_active = (act & wrong0).flatten(1).any(1)
        newly = before & ~wrong_active
        st["t_ext"][newly] = k
        st["resid_ext"][newly] = ((r - y).abs() / y.abs()).amax(-1)[newly]
        good = ~wrong0 & (prev > 0)
        dec = (good & (Z < prev - 1e-12 * prev.abs())).flatten(1).any(1)
        st["mono_viol"] += (dec & before).to(torch.int64)
        st["react"] += ((prev <= 0) & act).flatten(1).sum(1)
        after = ~before | newly
        bound = kappa64 * (1 - r / y).abs().amax(-1) + 2 / n * cxp ** 2 * cbar
        st["v64"] += (after & alive & (mu > bound * (1 + 1e-9))).to(torch.int64)
        st["n64"] += (after & alive).to(torch.int64)
        st["prev"] = Z.clone()

    run = old_orthogonal_gd(a0, Z0, off, y, s, P.lr, epochs, stop_abs=P.stop_factor / (2 * n), track=track)
    return run, st


# ---- the comparisons ------------------------------------------------------------------------------------------
def _same(x, y):
    return torch.equal(x, y) if isinstance(x, torch.Tensor) else x == y


def _recorder(store):
    def track(k, a, Z, r, L, mu, alive):
        store.append(tuple(t.clone() for t in (a, Z, r, L, mu, alive)))
    return track


@pytest.mark.parametrize("stop, per_run_s", [(dict(), False), (dict(stop_abs=0.3), True), (dict(stop_rel=0.3), False)])
def test_orthogonal_gd_bit_identical(stop, per_run_s):
    n, d, p = 12, 20, 6
    Xo, yo = data.weakly_interacting_draw(n, d, 4, orthogonal=True)
    s = Xo[torch.arange(n), torch.arange(n)]
    P = init.asymmetric([0, 1, 2], p, d, device="cpu")
    off = (P.W[..., n:] ** 2).sum(-1)
    if per_run_s:
        s = torch.stack([s, s.flip(0), 0.5 + s])
        yo = torch.stack([yo, -yo, yo.flip(0)])
    Z0 = P.W[..., :n] * (s[:, None, :] if per_run_s else s)
    old_rec, new_rec = [], []
    old = old_orthogonal_gd(P.a, Z0, off, yo, s, 0.7, 120, track=_recorder(old_rec), **stop)
    new = RD.orthogonal_gd(P.a, Z0, off, yo, s, 0.7, 120, track=_recorder(new_rec), **stop)
    for f in ("a", "Z", "loss", "mu", "stopped_at"):
        assert torch.equal(getattr(old, f), getattr(new, f)), f
    if stop:  # the stopping path ran: some runs frozen early, at least one went on
        assert int(new.stopped_at.min()) < 120 and int(new.stopped_at.max()) == 120
    assert len(old_rec) == len(new_rec)
    assert all(torch.equal(u, v) for so, sn in zip(old_rec, new_rec) for u, v in zip(so, sn))
    r = yo - (P.a[:, :, None] * torch.clamp_min(Z0, 0)).sum(1) / p
    assert torch.equal(old_ortho_mu(P.a, Z0, r, s ** 2), RD.ortho_mu(P.a, Z0, r, s ** 2))


@pytest.mark.parametrize("protocol", ["stated", "final"])
def test_local_pl_run_n_bit_identical(protocol):
    # lr 1.9: the stated runs' monotonicity count is not 0 (a path the comparison must cover)
    P = types.SimpleNamespace(d=80, seeds=[0, 1, 2, 3], final_seeds=[0, 1], data="fixed", eps=0.05,
                              lr=1.9 if protocol == "stated" else 1.0, horizon_mult=0.6, stop_factor=1e-6,
                              first_layer="gauss")
    new = LP.run_n(40, P, protocol)
    old_run, st = old_run_n(40, P, protocol)
    for f in ("loss", "mu"):
        assert torch.equal(new[f], getattr(old_run, f)), f
    assert torch.equal(new["stopped"], old_run.stopped_at)
    assert torch.equal(new["t_ext"], st["t_ext"] * P.lr)
    for f in ("mono_viol", "react", "v64", "n64"):
        assert torch.equal(new["mono" if f == "mono_viol" else f], st[f]), f
    assert torch.equal(new["resid_ext"][~new["never_extinct"]], st["resid_ext"][~new["never_extinct"]])
    if protocol == "stated":
        assert int(new["mono"].sum()) > 0
    # every run went extinct before its last step: the tracking's after-extinction path (the extinction and
    # monotonicity tests skipped once no run is before extinction) ran too
    assert not bool(new["never_extinct"].any()) and int((new["t_ext"] / P.lr).max()) < int(new["stopped"].min())
