"""Progress bars: where they are shown, that they count the work, and that they change no result."""
import re
import sys
import types

import pytest
import torch
from tqdm.std import tqdm as std_tqdm

from shallowflow.engine import init, progress, train
from shallowflow.engine.config import ConfigError
from shallowflow.engine.data import Dataset
from shallowflow.deep import train as dtrain
from shallowflow.engine.flow import gradient_flow
from shallowflow.engine.monitor import train_monitored


@pytest.fixture
def env(monkeypatch):
    """A neutral environment: no CI, no SHALLOWFLOW_PROGRESS, no Jupyter session, not in a kernel."""
    for var in ("CI", "SHALLOWFLOW_PROGRESS", "JPY_SESSION_NAME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(progress, "_kernel", lambda: None)
    return monkeypatch


class Recording(std_tqdm):
    """The text bar, remembered, so a test can read how far it counted."""

    made: list = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        Recording.made.append(self)


@pytest.fixture
def shown(env, capsys):
    """Bars forced on, drawn at once (into the captured standard error), each one recorded."""
    env.setenv("SHALLOWFLOW_PROGRESS", "1")
    env.setattr(progress, "DELAY", 0.0)
    env.setattr(progress, "MININTERVAL", 0.0)
    env.setattr(progress, "_tqdm_class", lambda: Recording)
    Recording.made = []
    return capsys


def fake_kernel(user_ns=None):
    events = types.SimpleNamespace(register=lambda *a: None)
    return types.SimpleNamespace(kernel=object(), user_ns=user_ns or {}, events=events)


# ------------------------------------------------------------------------------------------------
# where bars are shown
def test_terminal_shows_bars_and_a_pipe_does_not(env):
    env.setattr(sys, "stderr", types.SimpleNamespace(isatty=lambda: True))
    assert progress.enabled()
    env.setattr(sys, "stderr", types.SimpleNamespace(isatty=lambda: False))
    assert not progress.enabled()


def test_ci_hides_bars_even_in_a_terminal(env):
    env.setattr(sys, "stderr", types.SimpleNamespace(isatty=lambda: True))
    env.setenv("CI", "true")
    assert not progress.enabled()


@pytest.mark.parametrize("value, expected", [("1", True), ("on", True), ("0", False), ("off", False)])
def test_the_variable_forces_bars(env, value, expected):
    env.setenv("CI", "true")
    env.setenv("SHALLOWFLOW_PROGRESS", value)
    env.setattr(sys, "stderr", types.SimpleNamespace(isatty=lambda: not expected))
    assert progress.enabled() is expected


def test_a_bad_variable_is_refused_with_its_name(env):
    env.setenv("SHALLOWFLOW_PROGRESS", "sometimes")
    with pytest.raises(ConfigError, match="SHALLOWFLOW_PROGRESS='sometimes'"):
        progress.enabled()


def test_interactive_kernels_show_bars_headless_kernels_do_not(env):
    env.setattr(progress, "_kernel", lambda: fake_kernel())
    assert not progress.enabled()  # papermill, nbval, nbclient: no front-end session
    env.setenv("JPY_SESSION_NAME", "/home/reader/book/phases.ipynb")  # JupyterLab, Notebook 7
    assert progress.interactive_notebook() and progress.enabled()
    env.delenv("JPY_SESSION_NAME")
    env.setattr(progress, "_kernel", lambda: fake_kernel({"__vsc_ipynb_file__": "phases.ipynb"}))  # VS Code
    assert progress.enabled()


# ------------------------------------------------------------------------------------------------
# the bars themselves
def test_one_bar_at_a_time_and_the_slot_reopens(shown):
    with progress.bar(10, "outer") as outer:
        assert isinstance(outer, Recording)
        with progress.bar(5, "inner") as inner:
            assert inner is progress.SILENT
    with progress.bar(3, "next") as again:
        assert isinstance(again, Recording)


def test_each_counts_its_items_and_shows_time_left(shown):
    assert list(progress.each(range(7), "grid")) == list(range(7))
    (b,) = Recording.made
    assert b.n == 7 and b.total == 7
    err = shown.readouterr().err
    assert "grid" in err and re.search(r"7/7 \[\d\d:\d\d<\d\d:\d\d", err)  # elapsed<left (any speed)


def test_a_grid_bar_shows_at_once_and_a_computation_bar_only_when_long(shown):
    shown.readouterr()
    progress.DELAY = 100.0  # restored by the fixture's monkeypatch
    for _ in progress.each(range(3), "grid of long points"):
        assert "grid of long points" in shown.readouterr().err  # drawn before the first point ends
        break
    with progress.bar(10, "short computation") as b:
        b.update(10)
    assert "short computation" not in shown.readouterr().err


def test_a_loop_left_by_an_exception_does_not_silence_later_bars(shown):
    with pytest.raises(RuntimeError):
        for i in progress.each(range(5), "failing"):
            if i == 2:
                raise RuntimeError("boom")
    progress._release()  # what the notebook's post-cell hook does
    with progress.bar(2, "after") as b:
        assert b is not progress.SILENT


# ------------------------------------------------------------------------------------------------
# the engines count their work, and bars change nothing
def toy(runs=3, m=6):
    X = torch.eye(4, dtype=torch.float64)[:3]
    y = torch.tensor([1.0, -0.5, 0.7], dtype=torch.float64)
    return init.unbalanced(list(range(runs)), m, 4, scale=0.3), Dataset("toy", X, y)


@pytest.mark.parametrize("engine", ["kernel", "torch"])
def test_gradient_descent_counts_every_iteration_and_is_unchanged(shown, monkeypatch, engine):
    from shallowflow.engine import kernel
    if engine == "kernel" and not kernel.available():
        pytest.skip(kernel.reason())
    p0, d = toy()
    on = train.gradient_descent(p0, d, steps=2500, lr=0.05, engine=engine, check_every=100)
    (b,) = Recording.made
    assert b.n == 2501 and b.total == 2501
    monkeypatch.setenv("SHALLOWFLOW_PROGRESS", "0")
    off = train.gradient_descent(p0, d, steps=2500, lr=0.05, engine=engine, check_every=100)
    assert len(Recording.made) == 1
    assert torch.equal(on.loss, off.loss) and torch.equal(on.final.W, off.final.W)


def test_monitored_descent_shows_one_bar_for_all_its_segments(shown):
    p0, d = toy()
    m = train_monitored(p0, d, steps=600, lr=0.05, every=100)
    (b,) = Recording.made  # the segments' own calls stay silent
    assert b.n == 600
    assert m.loss.shape[1] == 601


def test_gradient_flow_reaches_all_of_its_time(shown, monkeypatch):
    p0, d = toy()
    on = gradient_flow(p0, d, t_end=50.0)
    (b,) = Recording.made
    assert b.n == pytest.approx(100.0)
    monkeypatch.setenv("SHALLOWFLOW_PROGRESS", "0")
    off = gradient_flow(p0, d, t_end=50.0)
    assert torch.equal(on.final.W, off.final.W)


def test_deep_training_counts_steps_and_can_be_silenced(shown):
    w = torch.nn.Parameter(torch.tensor([2.0], dtype=torch.float64))
    opt = torch.optim.SGD([w], lr=0.1)
    h = dtrain.train([w], lambda step: (w ** 2), opt, steps=30)
    (b,) = Recording.made
    assert b.n == 31 and h.loss.shape[0] == 31
    dtrain.train([w], lambda step: (w ** 2), opt, steps=5, progress=False)
    assert len(Recording.made) == 1



# ------------------------------------------------------------------------------------------------
# in real kernels: an interactive notebook shows the bar, a headless execution (papermill, nbval) does not
CELL = """
from shallowflow.engine import init, progress, train
from shallowflow.engine.data import Dataset
import torch
progress.DELAY = 0.0
X = torch.eye(3, dtype=torch.float64); y = torch.tensor([1.0, -1.0, 0.5], dtype=torch.float64)
t = train.gradient_descent(init.unbalanced([0, 1], 5, 3, scale=0.1), Dataset("d", X, y), steps=3000, lr=0.05)
"""


def run_in_kernel(**env_extra) -> str:
    import os

    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CELL)])
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "SHALLOWFLOW_PROGRESS", "JPY_SESSION_NAME")}
    NotebookClient(nb, timeout=120, kernel_name="python3").execute(env={**env, **env_extra})
    return "".join(o.get("text", "") for o in nb.cells[0].outputs if o.get("name") == "stderr")


def test_an_interactive_notebook_shows_the_bar_and_a_headless_one_does_not():
    shown = run_in_kernel(JPY_SESSION_NAME="/home/reader/phases.ipynb")
    assert "gradient descent (2 runs)" in shown and re.search(r"/3001 \[\d\d:\d\d<", shown)  # counted, time left
    assert "gradient descent" not in run_in_kernel()
