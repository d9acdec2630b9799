"""Issue 18, points 1 (divergence messages), 6 (a corrupt cached kernel) and 7 (environment variables,
float32): faults are injected and each must leave a clear one-line message and nothing broken behind."""
import os
import shutil
import subprocess
import sys

import pytest
import torch

from shallowflow.engine import config, flow, init, kernel, train
from shallowflow.engine.models import Network, Params

X = torch.tensor([[-0.5, 1.0], [2.0, 1.0]], dtype=torch.float64)
Y = torch.tensor([-1.0, 1.0], dtype=torch.float64)


# ---------------------------------------------------------------------------------------------
# point 1: the divergence message names the real cause, with the iteration and the run
@pytest.mark.parametrize("engine", ["kernel", "torch"])
def test_overflowing_initial_scale_is_named_not_lr(engine):
    if engine == "kernel" and not kernel.available():
        pytest.skip(kernel.reason())
    p = init.balanced([0, 1], 5, 2, 1e300)
    with pytest.raises(train.DivergenceError) as e:
        train.gradient_descent(p, (X, Y), steps=50, lr=1e-3, engine=engine)
    msg = str(e.value)
    assert e.value.cause == "init_scale" and e.value.iteration == 0 and e.value.run == 0
    assert "iteration 0" in msg and "run 0" in msg and "initial scale" in msg and "reduce 'lr'" not in msg


def test_initial_loss_overflow_with_finite_parameters_names_the_scale():
    p = Params(torch.full((1, 4), 1e200, dtype=torch.float64), torch.full((1, 4, 2), 1e200, dtype=torch.float64))
    # finite parameters, a * relu(<w, x>) ~ 1e400 overflows
    with pytest.raises(train.DivergenceError, match=r"iteration 0 .*initial loss is already not finite.*width m = 4"):
        train.gradient_descent(p, (X, Y), steps=5, lr=1e-3)


def test_unstable_first_steps_at_large_scale_name_the_scale_and_small_scale_names_lr():
    with pytest.raises(train.DivergenceError) as e:
        train.gradient_descent(init.balanced([0, 1], 5, 2, 1e3), (X, Y), steps=100, lr=1e-3)
    assert e.value.cause == "init_scale" and e.value.iteration > 0 and "initial scale" in str(e.value)
    with pytest.raises(train.DivergenceError) as e:
        train.gradient_descent(init.balanced([0, 1], 5, 2, 0.1), (X, Y), Network("tanh"), steps=1000, lr=3.0)
    assert e.value.cause == "lr" and str(e.value).endswith("reduce 'lr'") and f"iteration {e.value.iteration}" in str(e.value)


def test_non_finite_data_is_named():
    Xn = X.clone()
    Xn[0, 0] = float("nan")
    with pytest.raises(train.DivergenceError, match="the data") as e:
        train.gradient_descent(init.balanced([0], 3, 2, 1e-3), (Xn, Y), steps=3, lr=1e-3)
    assert e.value.cause == "data"


def test_flow_names_the_scale_at_t0():
    with pytest.raises(flow.FlowError, match=r"run 0 is not finite at t = 0.*initial scale"):
        flow.gradient_flow(init.balanced([0], 3, 2, 1e300), (X, Y), t_end=1.0)


# ---------------------------------------------------------------------------------------------
# point 7: float32 is refused with the reason (the engines compute in float64)
def test_float32_is_refused_with_the_reason():
    p = init.balanced([0], 3, 2, 1e-3)
    p32 = Params(p.a.float(), p.W.float())
    for fn in (lambda: train.gradient_descent(p32, (X, Y), steps=1, lr=1e-3),
               lambda: flow.gradient_flow(p32, (X, Y), t_end=1.0)):
        with pytest.raises(config.DtypeError, match=r"float32 are not supported.*underflow.*\.double\(\)"):
            fn()
    # float32 data are converted (no precision is lost on the data of the sources)
    t = train.gradient_descent(p, (X.float(), Y.float()), steps=2, lr=1e-3)
    assert t.loss.dtype == torch.float64


# ---------------------------------------------------------------------------------------------
# point 7: environment variables
@pytest.mark.parametrize("var,value", [("SHALLOWFLOW_THREADS", "abc"), ("SHALLOWFLOW_THREADS", "0"),
                                       ("SHALLOWFLOW_THREADS", "-3"), ("SHALLOWFLOW_THREADS", "1e9"),
                                       ("SHALLOWFLOW_DEVICE", "gpu"), ("SHALLOWFLOW_DEVICE", "cuda:99"),
                                       ("SHALLOWFLOW_KERNEL", "kernal")])
def test_bad_environment_variable_is_one_line_naming_it(monkeypatch, var, value):
    monkeypatch.setenv(var, value)
    for fn in (config.check, config.describe) + ((config.default_device,) if var != "SHALLOWFLOW_KERNEL" else ()):
        with pytest.raises(config.ConfigError) as e:
            fn()
        msg = str(e.value)
        assert msg.startswith(f"environment variable {var}=") and "\n" not in msg


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is visible")
def test_cuda_requested_on_a_cpu_machine(monkeypatch):
    monkeypatch.setenv("SHALLOWFLOW_DEVICE", "cuda")
    with pytest.raises(config.ConfigError, match="SHALLOWFLOW_DEVICE='cuda' is invalid: no CUDA device is visible"):
        init.balanced([0], 3, 2, 1e-3)


def test_import_never_raises_on_a_bad_variable():
    env = {**os.environ, "SHALLOWFLOW_THREADS": "abc", "SHALLOWFLOW_DEVICE": "cuda:99"}
    code = ("import shallowflow, shallowflow.params.chapters\nfrom shallowflow.engine import config\n"
            "print(type(config.problem).__name__)\n"
            "try:\n    config.check()\nexcept config.ConfigError as e:\n    print(e)\n")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stderr == "", p.stderr[-2000:]
    assert p.stdout.splitlines() == ["ConfigError",
                                     "environment variable SHALLOWFLOW_THREADS='abc' is invalid: expected an integer "
                                     f"from 1 to {config.MAX_THREADS}"]


# ---------------------------------------------------------------------------------------------
# point 6: a corrupt cached kernel is verified, rebuilt once with one line, and never crashes
@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv("SHALLOWFLOW_CACHE", str(tmp_path))
    monkeypatch.setenv("SHALLOWFLOW_CFLAGS", "-O0")  # a quick build (part of the cache key)
    monkeypatch.delenv("SHALLOWFLOW_KERNEL", raising=False)
    kernel._reset()
    yield tmp_path
    monkeypatch.undo()
    kernel._reset()  # the rest of the session loads the normal cache again


def train_once():
    t = train.gradient_descent(init.balanced([0, 1], 5, 2, 1e-2), (X, Y), steps=200, lr=1e-2, engine="kernel")
    assert t.info["engine"] == "kernel" and torch.isfinite(t.loss).all()
    return t.loss


def reload(capfd):
    kernel._reset()
    loss = train_once()
    err = capfd.readouterr().err
    return loss, [line for line in err.splitlines() if line.strip()]


def test_kernel_cache_faults(fresh_cache, capfd):
    good = train_once()
    so = next(fresh_cache.glob("kernel-*.so"))
    assert so.with_name(so.name + ".sha256").exists() and "built" in kernel.reason()
    assert "engine: C kernel" in config.describe()
    capfd.readouterr()
    faults = {
        "truncated": lambda: os.truncate(so, so.stat().st_size // 3),
        "foreign library": lambda: shutil.copyfile(next(p for p in ("/lib/x86_64-linux-gnu/libm.so.6",
                                                                      "/usr/lib/x86_64-linux-gnu/libm.so.6",
                                                                      sys.executable) if os.path.exists(p)), so),
        "checksum lost": lambda: so.with_name(so.name + ".sha256").unlink(),
        "garbage with a matching checksum": lambda: (so.write_bytes(b"\x7fELF" + b"\0" * 100),
                                                     so.with_name(so.name + ".sha256").write_text(
                                                         kernel._digest(so.read_bytes()))),
    }
    for name, inject in faults.items():
        inject()
        loss, lines = reload(capfd)
        assert len(lines) == 1 and "failed verification" in lines[0] and "rebuilding it" in lines[0], (name, lines)
        assert torch.equal(loss, good), name
        assert kernel.reason().startswith("rebuilt"), name
    loss, lines = reload(capfd)  # repaired: the next process loads it silently
    assert lines == [] and kernel.reason().startswith("cached")
    # the loaded library is a private copy: truncating the cache file under a running process is harmless
    os.truncate(so, 10)
    assert torch.equal(train_once(), good)
    assert sorted(p.name for p in fresh_cache.iterdir()) == sorted([so.name, so.name + ".sha256"])  # nothing left


def test_engine_is_printed_with_the_reason(monkeypatch):
    monkeypatch.setenv("SHALLOWFLOW_KERNEL", "torch")
    kernel._reset()
    try:
        assert config.describe().endswith("engine: torch (the C kernel is unavailable: disabled by SHALLOWFLOW_KERNEL)")
    finally:
        monkeypatch.undo()
        kernel._reset()


def test_two_builders_write_identical_libraries(tmp_path, monkeypatch):
    """Concurrent processes that both build the kernel must leave a matching library and checksum, whichever
    finishes last: the build does not depend on its temporary folder."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv("SHALLOWFLOW_CFLAGS", "-O0")
    libs = []
    for name in ("a", "b"):
        so = tmp_path / name / "kernel-x-0.so"
        kernel._compile(kernel.SOURCE, so, [])
        libs.append((so.read_bytes(), so.with_name(so.name + ".sha256").read_text()))
    assert libs[0] == libs[1]
