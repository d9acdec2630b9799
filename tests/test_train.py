"""Gradient descent engines: hand gradients against autograd, batched against single runs, the
C kernel against the torch engine, per-run stopping, divergence reporting, snapshots, grouping."""
import math

import pytest
import torch

from shallowflow.engine import data as datasets
from shallowflow.engine import init, kernel
from shallowflow.engine.models import ACTIVATIONS, LOSSES, OUTPUT_SCALINGS, Network, Params, loss_factor
from shallowflow.engine.train import DivergenceError, geometric_schedule, gradient_descent, gradient_descent_many

DT = torch.float64
ENGINES = ["torch"] + (["kernel"] if kernel.available() else [])
needs_kernel = pytest.mark.skipif(not kernel.available(), reason=f"no C kernel: {kernel.reason()}")


def toy():
    return datasets.get("orthogonal-toy", device="cpu")


def random_problem(R=3, m=7, n=5, d=3, per_run=False, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(R, m, generator=g, dtype=DT)
    W = torch.randn(R, m, d, generator=g, dtype=DT)
    X = torch.randn(*((R,) if per_run else ()), n, d, generator=g, dtype=DT)
    y = torch.randn(*((R,) if per_run else ()), n, generator=g, dtype=DT)
    return Params(a, W), X, y


def autograd_gradients(net, p, X, y, loss):
    a = p.a.clone().requires_grad_(True)
    W = p.W.clone().requires_grad_(True)
    L = net.loss(Params(a, W), X, y, loss)
    ga, gW = torch.autograd.grad(L.sum(), (a, W))
    return L.detach(), ga, gW


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("scaling", OUTPUT_SCALINGS)
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("per_run", [False, True])
def test_hand_gradients_match_autograd(activation, scaling, loss, per_run):
    net = Network(activation, scaling, leak=0.1)
    p, X, y = random_problem(per_run=per_run)
    L0, ga0, gW0 = autograd_gradients(net, p, X, y, loss)
    L, ga, gW = net.gradients(p, X, y, loss)
    torch.testing.assert_close(L, L0, rtol=1e-13, atol=0)
    torch.testing.assert_close(ga, ga0, rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(gW, gW0, rtol=1e-12, atol=1e-14)
    if kernel.available():
        L2, ga2, gW2 = kernel.grad(p.a, p.W, X, y, kernel.ACT_CODES[activation], net.leak,
                                   net.scale(p.width), loss_factor(loss))
        torch.testing.assert_close(L2, L0, rtol=1e-13, atol=0)
        torch.testing.assert_close(ga2, ga0, rtol=1e-12, atol=1e-14)
        torch.testing.assert_close(gW2, gW0, rtol=1e-12, atol=1e-14)


def test_relu_derivative_at_zero_is_zero():
    """A neuron exactly on its kink for a sample gets no gradient from it (sigma'(0) = 0)."""
    X = torch.tensor([[1.0, 0.0]], dtype=DT)
    y = torch.tensor([1.0], dtype=DT)
    p = Params(torch.tensor([[1.0]], dtype=DT), torch.tensor([[[0.0, 1.0]]], dtype=DT))
    _, ga, gW = Network("relu").gradients(p, X, y)
    assert float(gW.abs().max()) == 0.0 and float(ga.abs().max()) == 0.0
    if kernel.available():
        _, ga2, gW2 = kernel.grad(p.a, p.W, X, y, 0, 0.0, 1.0, 0.5)
        assert float(gW2.abs().max()) == 0.0 and float(ga2.abs().max()) == 0.0


@pytest.mark.parametrize("engine", ENGINES)
def test_one_step_is_the_gradient_step(engine):
    net = Network("tanh", "sqrt")
    p, X, y = random_problem()
    lr = torch.tensor([0.1, 0.01, 0.3], dtype=DT)
    tr = gradient_descent(p, (X, y), net, steps=1, lr=lr, loss="mean", engine=engine)
    L, ga, gW = net.gradients(p, X, y, "mean")
    torch.testing.assert_close(tr.final.a, p.a - lr[:, None] * ga, rtol=1e-14, atol=1e-15)
    torch.testing.assert_close(tr.final.W, p.W - lr[:, None, None] * gW, rtol=1e-14, atol=1e-15)
    torch.testing.assert_close(tr.loss[:, 0], L, rtol=1e-14, atol=0)


def ensemble_case():
    """Runs differing in seed, initial scale and step size on the 003 toy."""
    seeds = [0, 1, 2, 3, 4, 5]
    scales = [1e-3, 1e-2, 1e-1, 1e-3, 0.5, 1e-6]
    lrs = [2e-3, 4e-3, 1e-3, 8e-3, 2e-3, 2e-2]
    return init.balanced(seeds, 12, 2, scales, device="cpu"), lrs


@pytest.mark.parametrize("engine", ENGINES)
def test_batched_equals_single_runs(engine):
    p, lrs = ensemble_case()
    steps = 3000 if engine == "kernel" else 300
    snaps = geometric_schedule(steps, 1.3)
    batch = gradient_descent(p, toy(), steps=steps, lr=lrs, snapshots=snaps, engine=engine)
    for r in range(p.runs):
        solo = gradient_descent(p.select(r), toy(), steps=steps, lr=lrs[r], snapshots=snaps, engine=engine)
        if engine == "kernel":  # independent loops: bit-identical
            assert torch.equal(batch.final.W[r], solo.final.W[0])
            assert torch.equal(batch.loss[r], solo.loss[0])
            assert torch.equal(batch.snap_a[:, r], solo.snap_a[:, 0])
        else:
            torch.testing.assert_close(batch.final.W[r], solo.final.W[0], rtol=1e-12, atol=0)
            torch.testing.assert_close(batch.loss[r], solo.loss[0], rtol=1e-12, atol=0)
            torch.testing.assert_close(batch.snap_W[:, r], solo.snap_W[:, 0], rtol=1e-12, atol=0)


@needs_kernel
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_kernel_matches_torch_engine(activation):
    net = Network(activation, "mean", leak=0.2)
    p, X, y = random_problem(R=4, m=9, n=6, d=3, per_run=True, seed=3)
    kw = dict(steps=400, lr=[0.05, 0.1, 0.2, 0.02], loss="half", snapshots=[0, 7, 100, 400], record_every=3)
    a = gradient_descent(p, (X, y), net, engine="kernel", **kw)
    b = gradient_descent(p, (X, y), net, engine="torch", **kw)
    torch.testing.assert_close(a.loss, b.loss, rtol=1e-11, atol=0)
    torch.testing.assert_close(a.snap_W, b.snap_W, rtol=1e-11, atol=1e-15)
    torch.testing.assert_close(a.final.a, b.final.a, rtol=1e-11, atol=1e-15)
    assert a.info["engine"] == "kernel" and b.info["engine"] == "torch"


@pytest.mark.parametrize("engine", ENGINES)
def test_snapshots_are_the_parameters_at_those_iterations(engine):
    p, lrs = ensemble_case()
    traj = gradient_descent(p, toy(), steps=120, lr=lrs, snapshots=[0, 5, 50, 120], engine=engine)
    assert traj.snap_steps == [0, 5, 50, 120]
    assert torch.equal(traj.at(0).W, p.W)
    part = gradient_descent(p, toy(), steps=50, lr=lrs, engine=engine)
    assert torch.equal(traj.at(50).W, part.final.W)
    assert torch.equal(traj.at(120).a, traj.final.a)
    torch.testing.assert_close(traj.loss[:, :51], part.loss, rtol=0, atol=0)


@pytest.mark.parametrize("engine", ENGINES)
def test_per_run_stopping_below_threshold(engine):
    """A converged run freezes at the first iteration with L < stop_below; the others go on as alone."""
    p = init.balanced([0, 1, 2], 10, 2, 0.5, device="cpu")
    lrs = [0.2, 0.0002, 0.05]
    steps, thr = 800, 1e-6
    tr = gradient_descent(p, toy(), steps=steps, lr=lrs, stop_below=thr, engine=engine)
    free = gradient_descent(p, toy(), steps=steps, lr=lrs, engine=engine)
    for r in range(3):
        below = torch.nonzero(free.loss[r] < thr)
        k = int(below[0]) if len(below) else steps
        assert int(tr.stopped_at[r]) == k
        torch.testing.assert_close(tr.loss[r, : k + 1], free.loss[r, : k + 1], rtol=1e-12, atol=0)
        if k < steps:  # frozen: the loss stays the one at the stop, parameters are those at k
            assert torch.all(tr.loss[r, k:] == tr.loss[r, k])
            again = gradient_descent(p.select(r), toy(), steps=k, lr=lrs[r], engine=engine)
            torch.testing.assert_close(tr.final.W[r], again.final.W[0], rtol=1e-12, atol=0)
    assert int(tr.stopped_at[0]) < steps and int(tr.stopped_at[1]) == steps  # the test means something
    assert bool(tr.info["converged"][0]) and not bool(tr.info["converged"][1])


def first_bad_iteration(p, lr, steps, explode=1e12):
    """Reference: plain loop with the reference gradients, first k with a non-finite/exploded loss."""
    net, d = Network(), toy()
    a, W = p.a.clone(), p.W.clone()
    L0 = None
    for k in range(steps + 1):
        L, ga, gW = net.gradients(Params(a, W), d.X, d.y)
        L0 = L if L0 is None else L0
        if not math.isfinite(float(L)) or float(L) > explode * float(L0):
            return k
        a, W = a - lr * ga, W - lr * gW
    return None


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("stop_below", [None, 1e-30])
def test_divergence_error_names_the_iteration(engine, stop_below):
    p = init.balanced([0, 1], 10, 2, 1.0, device="cpu")
    lrs = [1e-3, 5.0]
    k_ref = first_bad_iteration(p.select(1), 5.0, 200)
    assert k_ref is not None and k_ref > 0
    with pytest.raises(DivergenceError) as info:
        gradient_descent(p, toy(), steps=200, lr=lrs, engine=engine, check_every=7, stop_below=stop_below)
    assert info.value.iteration == k_ref and info.value.run == 1
    assert f"iteration {k_ref}" in str(info.value)


@pytest.mark.parametrize("engine", ENGINES)
def test_nonfinite_stop_freezes_only_the_diverging_run(engine):
    p = init.balanced([0, 1, 2], 10, 2, 1.0, device="cpu")
    lrs = [1e-2, 5.0, 2e-2]
    steps = 300
    tr = gradient_descent(p, toy(), steps=steps, lr=lrs, on_nonfinite="stop", engine=engine)
    k = first_bad_iteration(p.select(1), 5.0, steps)
    assert int(tr.stopped_at[1]) == k and bool(tr.info["diverged"][1])
    assert torch.isnan(tr.loss[1, k:]).all() and torch.isfinite(tr.loss[1, :k]).all()
    for r in (0, 2):
        solo = gradient_descent(p.select(r), toy(), steps=steps, lr=lrs[r], engine=engine)
        torch.testing.assert_close(tr.loss[r], solo.loss[0], rtol=1e-12, atol=0)
        assert int(tr.stopped_at[r]) == steps


@pytest.mark.parametrize("engine", ENGINES)
def test_per_run_datasets_and_label_factors(engine):
    """Runs on different datasets of equal shape (here: scaled labels) equal separate trainings."""
    base = toy()
    ds = [datasets.Dataset(f"toy-{f}", base.X, f * base.y) for f in (0.5, 1.0, 2.0)]
    p = init.balanced([7, 7, 7], 8, 2, 1e-2, device="cpu")
    tr = gradient_descent(p, ds, steps=200, lr=0.01, engine=engine)
    for r, dset in enumerate(ds):
        solo = gradient_descent(p.select(r), dset, steps=200, lr=0.01, engine=engine)
        torch.testing.assert_close(tr.final.W[r], solo.final.W[0], rtol=1e-12, atol=0)
    assert not torch.allclose(tr.final.W[0], tr.final.W[2])


def test_different_widths_are_grouped():
    ps = [init.balanced([0, 1], 5, 2, 0.1, device="cpu"), init.balanced([2], 9, 2, 0.1, device="cpu"),
          init.balanced([3], 5, 2, 0.1, device="cpu")]
    out = gradient_descent_many(ps, toy(), steps=150, lr=[0.01, 0.02, [0.03]], snapshots=[0, 150])
    assert [t.runs for t in out] == [2, 1, 1]
    assert out[0].info["group"] == 2 and out[1].info["group"] == 1  # widths 5 and 5 trained together
    for p, lr, t in zip(ps, [0.01, 0.02, 0.03], out):
        solo = gradient_descent(p, toy(), steps=150, lr=lr, snapshots=[0, 150])
        torch.testing.assert_close(t.final.W, solo.final.W, rtol=1e-12, atol=0)
        torch.testing.assert_close(t.loss, solo.loss, rtol=1e-12, atol=0)


def test_argument_validation():
    p = init.balanced([0], 4, 2, 0.1, device="cpu")
    with pytest.raises(ValueError):
        gradient_descent(p, toy(), steps=10, lr=0.0)
    with pytest.raises(ValueError):
        gradient_descent(p, toy(), steps=10, lr=[0.1, 0.2])
    with pytest.raises(ValueError):
        gradient_descent(p, toy(), steps=10, lr=0.1, engine="fast")
    with pytest.raises(ValueError):
        gradient_descent(p, toy(), steps=10, lr=0.1, on_nonfinite="ignore")
    with pytest.raises(ValueError):  # inputs of the wrong dimension never reach the kernel
        gradient_descent(p, datasets.get("ortho-A", device="cpu"), steps=10, lr=0.1)
