"""000 s-curves: the label-timing runs of C.15/C.17 (a share of runs) give a seed the same numbers alone or in a
batch, and read the fit epochs on their denser snapshot schedule.  Tiny sizes: seconds."""
from types import SimpleNamespace

import torch

from shallowflow.engine.models import Network
from shallowflow.experiments.brisbois_thesis import s_curves as S


def _P(seeds, steps=6000):
    return SimpleNamespace(c=75.0, width_c=20, init_scale=1e-6, lr=1e-4, steps=steps, record_every=10, seeds=[0],
                           width=20, widths=[], scales=[], merge_step=100, mid_step=200, label_seeds=seeds,
                           sections=["appendix-c"])


def _epochs(seeds):
    run = S.run_scurves(_P(seeds))
    return {a: S.label_fit_epochs(run["label"][a], run["data"], Network(a)) for a in S.ACTS}


def test_a_label_seed_alone_or_in_a_batch():
    batch, alone = _epochs([0, 1, 2]), _epochs([2])
    for a in S.ACTS:
        assert (batch[a][0] > 0).all() and (batch[a][1] > 0).all()  # the labels are fitted: the comparison means something
        assert int(batch[a][0][2]) == int(alone[a][0][0]) and int(batch[a][1][2]) == int(alone[a][1][0])


def test_label_snapshots_resolve_one_percent():
    s = S.label_snapshots(300_000)
    big = [b / a - 1 for a, b in zip(s, s[1:]) if a >= 1000]
    assert max(big) < 0.0115 and s[-1] == 300_000


def test_label_gap_and_flags():
    pos, neg = torch.tensor([1000, 1000, -1, 1000]), torch.tensor([1050, 1200, 900, 900])
    gap = S.label_gap(pos, neg)
    assert abs(float(gap[0]) - 50 / 1050) < 1e-12 and torch.isnan(gap[2])
    assert S.simultaneous_flags(pos, neg).tolist() == [True, False, False, False]
    assert S.positive_first_flags(pos, neg).tolist() == [True, True, False, False]


def _fit_scurve_before(points, form="sigmoid", k1=-5.0, coarse=9, fine=6, refine=12):
    """fit_scurve as it was before its bounded search reused the fit it had just made (a frozen copy: each step of
    the search fitted the same frame twice)."""
    import math

    import numpy as np
    from scipy.optimize import minimize_scalar

    fr = S.scurve_frame(points, "pairs")
    best = None

    def consider(phi):
        nonlocal best
        f2 = S.scurve_frame(points, "angle", float(phi))
        lf = S.lsq_fit(f2, S.procedure_fit(f2, form, k1))
        if best is None or (np.isfinite(lf.r2) and lf.r2 > best[2].r2):
            best = (phi, f2, lf)

    step = math.radians(80) / (coarse - 1)
    for phi in np.linspace(-math.radians(40), math.radians(40), coarse):
        consider(phi)
    for phi in best[0] + np.linspace(-step / 2, step / 2, fine):
        consider(phi)
    fine_step = step / max(fine - 1, 1)

    def loss(phi):
        consider(phi)
        f2 = S.scurve_frame(points, "angle", float(phi))
        return 1.0 - S.lsq_fit(f2, S.procedure_fit(f2, form, k1)).r2

    if refine > 0:
        minimize_scalar(loss, bounds=(best[0] - fine_step, best[0] + fine_step), method="bounded",
                        options={"xatol": 1e-4, "maxiter": refine})
    _, f2, lf = best
    return S.ScurveFit(fr, S.procedure_fit(fr, form, k1), f2, S.procedure_fit(f2, form, k1), lf)


def test_the_refined_fit_is_bit_identical_to_fitting_each_frame_twice(monkeypatch):
    """fit_scurve's bounded search takes the R^2 of the fit it just made at an angle (one fit per step, where it
    made the same fit twice): every frame, parameter and R^2 equals the frozen copy's, with fewer fits."""
    import dataclasses

    import numpy as np

    rng = np.random.default_rng(3)
    u = rng.uniform(-1.0, 1.0, 40)
    v = S.sig_form(u, -1.0, -5.0, 1.0, 7.0) + 0.01 * rng.standard_normal(40)
    c, s = np.cos(0.3), np.sin(0.3)
    points = np.stack([c * u - s * v, s * u + c * v], 1)  # an S-curve turned off its principal axis
    calls = {"n": 0}
    lsq = S.lsq_fit

    def counted(*a, **k):
        calls["n"] += 1
        return lsq(*a, **k)

    monkeypatch.setattr(S, "lsq_fit", counted)
    for form in S.FORMS:
        calls["n"] = 0
        before = _fit_scurve_before(points, form, refine=6)
        n_before, calls["n"] = calls["n"], 0
        after = S.fit_scurve(points, form, refine=6)
        assert calls["n"] < n_before, (calls["n"], n_before)
        for name in ("pairs_frame", "pairs", "frame", "procedure", "lsq"):
            a, b = getattr(after, name), getattr(before, name)
            for field in dataclasses.fields(a):
                x, y = getattr(a, field.name), getattr(b, field.name)
                assert np.array_equal(x, y, equal_nan=True) if isinstance(x, np.ndarray) else \
                    (x == y or (x != x and y != y)), (form, name, field.name, x, y)
        assert np.isfinite(after.lsq.r2) and after.lsq.r2 > 0.5  # a real fit: the comparison means something
