"""Exact gradient flow (Dormand-Prince 5(4)): agreement with small-step GD at mapped times,
conservation of balancedness, batched against single runs, both implementations, tiny scales."""
import math

import pytest
import torch

from shallowflow.engine import data as datasets
from shallowflow.engine import init, kernel, metrics
from shallowflow.engine.flow import FlowError, gradient_flow
from shallowflow.engine.models import Network, flow_time_per_step
from shallowflow.engine.train import gradient_descent

DT = torch.float64
ENGINES = ["torch"] + (["kernel"] if kernel.available() else [])
needs_kernel = pytest.mark.skipif(not kernel.available(), reason=f"no C kernel: {kernel.reason()}")
TIMES = [6.0, 12.0, 18.0, 26.0, 40.0]  # toy: plateau at 0, escape, second saddle, convergence


def toy():
    return datasets.get("orthogonal-toy", device="cpu")


@pytest.fixture(scope="module")
def toy_flow():
    """003 toy, m = 60, lambda = 1e-6 / sqrt(60), two seeds, flow up to t = 40 (= 20000 GD steps)."""
    p = init.balanced([0, 1], 60, 2, 1e-6 / math.sqrt(60), device="cpu")
    return p, gradient_flow(p, toy(), t_end=40.0, snapshots_t=TIMES)


def test_flow_agrees_with_small_step_gd_at_mapped_times(toy_flow):
    """GD with step eta on the 1/(2n) loss at iteration k is the flow at t = k eta, up to O(eta)."""
    p, fl = toy_flow
    errors = []
    for eta in (2e-3, 1e-3, 5e-4):
        steps = round(TIMES[-1] / eta)
        gd = gradient_descent(p, toy(), steps=steps, lr=eta, snapshots=[round(t / eta) for t in TIMES])
        assert flow_time_per_step(eta, "half") * steps == pytest.approx(TIMES[-1])
        err = max(float((gd.at(round(t / eta)).W - fl.at(t).W).norm() / fl.at(t).W.norm()) for t in TIMES)
        errors.append(err)
        # the loss curves agree at mapped times too (log-interpolated flow loss at GD iterations)
        k = torch.arange(0, steps + 1, 50)
        Lf = fl.loss_at(k.to(DT) * eta)
        Lg = gd.loss[:, k]
        assert float(((Lf - Lg).abs() / Lg).max()) < 40 * eta
    # first order in eta: halving the step halves the distance to the flow
    assert 1.7 < errors[0] / errors[1] < 2.3 and 1.7 < errors[1] / errors[2] < 2.3
    assert errors[-1] < 5e-3


def test_flow_reaches_the_minimum_norm_interpolator(toy_flow):
    _, fl = toy_flow
    assert float(fl.loss[:, -1].max()) < 1e-10 or all(float(fl.losses(r)[-1]) < 1e-10 for r in range(2))
    sq = metrics.squared_norm(fl.final)
    torch.testing.assert_close(sq, torch.full_like(sq, 6 / math.sqrt(5)), rtol=1e-4, atol=0)


def test_balancedness_is_conserved(toy_flow):
    """a_j^2 - ||w_j||^2 is an invariant of the flow; rtol = 1e-10 keeps it to ~1e-10 per neuron."""
    p, fl = toy_flow
    b0 = metrics.balancedness(p)
    for i, t in enumerate(TIMES):
        q = fl.at(t)
        size = q.a ** 2 + (q.W ** 2).sum(-1)
        drift = (metrics.balancedness(q) - b0).abs() / size
        assert float(drift.max()) < 5e-10, (t, float(drift.max()))
    # and it is not conserved by a loose tolerance, so the check can fail
    loose = gradient_flow(p, toy(), t_end=40.0, snapshots_t=[40.0], rtol=1e-4)
    q = loose.final
    assert float(((metrics.balancedness(q) - b0).abs() / (q.a ** 2 + (q.W ** 2).sum(-1))).max()) > 1e-8


def test_unbalanced_balancedness_is_conserved():
    p = init.unbalanced([3], 6, 4, 0.3, output_scale=0.7, device="cpu")
    d = datasets.get("ortho-A", device="cpu")
    fl = gradient_flow(p, d, Network(), t_end=30.0)
    drift = (metrics.balancedness(fl.final) - metrics.balancedness(p)).abs()
    assert float(drift.max()) < 1e-9 * float((p.a ** 2).max())


def test_accuracy_follows_the_tolerance(toy_flow):
    p, fl = toy_flow
    ref = fl.at(40.0).W
    errs = [float((gradient_flow(p, toy(), t_end=40.0, rtol=rt).final.W - ref).norm() / ref.norm())
            for rt in (1e-5, 1e-7)]
    assert errs[1] < errs[0] / 20 and errs[1] < 1e-5


@pytest.mark.parametrize("engine", ENGINES)
def test_batched_equals_single_runs(engine):
    scales = [1e-30, 1e-3, 0.3] if engine == "kernel" else [1e-4, 1e-2, 0.3]
    p = init.balanced([0, 1, 2], 8, 2, scales, device="cpu")
    T = [90.0, 30.0, 20.0] if engine == "kernel" else [16.0, 12.0, 6.0]
    fl = gradient_flow(p, toy(), t_end=T, snapshots_t=[5.0, 15.0], engine=engine)
    for r in range(3):
        solo = gradient_flow(p.select(r), toy(), t_end=T[r], snapshots_t=[5.0, 15.0], engine=engine)
        assert int(solo.count[0]) == int(fl.count[r])
        torch.testing.assert_close(fl.times(r), solo.times(0), rtol=1e-12, atol=0)
        torch.testing.assert_close(fl.final.W[r], solo.final.W[0], rtol=1e-12, atol=0)
        torch.testing.assert_close(fl.snap_a[:, r], solo.snap_a[:, 0], rtol=1e-12, atol=0)
        assert float(fl.t_final[r]) == T[r]


@needs_kernel
def test_kernel_and_torch_integrators_agree():
    p = init.balanced([4, 5], 10, 2, 1e-8, device="cpu")
    kw = dict(t_end=30.0, snapshots_t=[10.0, 20.0, 30.0])
    a = gradient_flow(p, toy(), Network("relu"), engine="kernel", **kw)
    b = gradient_flow(p, toy(), Network("relu"), engine="torch", **kw)
    for t in kw["snapshots_t"]:  # per neuron, relative to its norm
        gap = (a.at(t).W - b.at(t).W).norm(dim=-1) / b.at(t).W.norm(dim=-1)
        assert float(gap.max()) < 1e-8, (t, float(gap.max()))
    c = gradient_flow(p, toy(), Network("tanh", "sqrt"), engine="kernel", t_end=5.0)
    e = gradient_flow(p, toy(), Network("tanh", "sqrt"), engine="torch", t_end=5.0)
    torch.testing.assert_close(c.final.a, e.final.a, rtol=1e-9, atol=1e-22)
    assert a.info["engine"] == "kernel" and b.info["engine"] == "torch"


def test_snapshots_hit_exactly_and_stop_below():
    p = init.balanced([0, 1], 10, 2, [1e-3, 1e-5], device="cpu")
    fl = gradient_flow(p, toy(), t_end=1e4, snapshots_t=[0.0, 1.234567, 25.0], stop_below=1e-12)
    assert fl.snap_t == [0.0, 1.234567, 25.0]
    assert torch.equal(fl.at(0.0).W, p.W)
    assert bool((fl.times(0) == 1.234567).any())
    for r in range(2):
        t_stop = float(fl.stopped_at[r])
        assert math.isfinite(t_stop) and t_stop < 1e4
        assert float(fl.t_final[r]) == t_stop
        L = fl.losses(r)
        assert float(L[-1]) < 1e-12 and float(L[-2]) >= 1e-12
    # the smaller initialisation leaves the saddle later: the plateau grows like log(1/lambda)
    assert float(fl.stopped_at[1]) > float(fl.stopped_at[0]) + 3


@pytest.mark.parametrize("lam", [1e-50, 1e-100])
def test_tiny_initialisations_reach_zero_loss(lam):
    """lambda = 1e-100: relative error control follows parameters of size 1e-100 through the plateau."""
    p = init.balanced([0], 60, 2, lam, device="cpu")
    fl = gradient_flow(p, toy(), t_end=1e4, stop_below=1e-20, max_steps=200_000)
    t_stop = float(fl.stopped_at[0])
    # the exit time scales like log(1/lambda): doubling -log(lambda) roughly doubles it
    assert 0.8 * math.log(1 / lam) < t_stop < 2.5 * math.log(1 / lam)
    sq = float(metrics.squared_norm(fl.final))
    assert abs(sq - 6 / math.sqrt(5)) / (6 / math.sqrt(5)) < 1e-6
    assert float(fl.final.W.norm(dim=-1).min()) > 0  # no neuron collapsed to zero


def test_errors():
    p = init.balanced([0], 4, 2, 0.1, device="cpu")
    with pytest.raises(ValueError):
        gradient_flow(p, toy(), t_end=-1.0)
    with pytest.raises(ValueError):
        gradient_flow(p, toy(), t_end=1.0, rtol=0.0)
    with pytest.raises(FlowError):
        gradient_flow(p, toy(), t_end=1e6, max_steps=10)
