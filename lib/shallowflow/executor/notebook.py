"""Executing a task's notebook: papermill in a kernel of its own over IPC sockets (killed with the run on
Ctrl-C or SIGTERM), or the same cells in this process (``direct``)."""
from __future__ import annotations

import contextlib
import functools
import os
import uuid
from pathlib import Path

from .common import Task, TaskFailed, _first_line, book_dir


def to_notebook(chapter: str, out: Path) -> Path:
    """The chapter's Jupytext script as an .ipynb at ``out``."""
    import jupytext

    nb = jupytext.read(book_dir() / f"{chapter}.py", fmt="py:percent")
    nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    out.parent.mkdir(parents=True, exist_ok=True)
    jupytext.write(nb, out, fmt="ipynb")
    return out


def _kernel_manager_class(ip: str, started: list, log: Path):
    """Kernels over IPC sockets at ``ip``-N: no TCP ports, and no 'running over TCP without encryption'
    warning.  Each kernel gets a path of its own (the default, ./kernel-ipc-N, is shared by kernels
    started in one folder, and two of them would talk over the same sockets).  The kernel process's
    own stdout and stderr (start-up and shutdown messages, not cell outputs, which travel over the
    sockets into the notebook) go to ``log``.  Managers are appended to ``started``, so that an
    interrupted run can end its kernel at once.  Kernels are forked from a warm parent where that gives the
    same kernel (:mod:`~shallowflow.executor.warm`)."""
    from jupyter_client.manager import AsyncKernelManager

    from .warm import warm

    class IPCKernelManager(warm(AsyncKernelManager)):
        def __init__(self, **kw):
            kw.setdefault("transport", "ipc")
            kw.setdefault("ip", ip)
            super().__init__(**kw)
            started.append(self)

        async def start_kernel(self, **kw):
            with open(log, "ab") as fh:  # the child keeps its own copy of the descriptor
                kw.setdefault("stdout", fh)
                kw.setdefault("stderr", fh)
                return await super().start_kernel(**kw)

    return IPCKernelManager


def _kill_kernels(started: list) -> None:
    import signal

    for km in started:
        pid = getattr(getattr(km, "provisioner", None), "pid", None)
        if pid:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            km.cleanup_connection_file()


@contextlib.contextmanager
def _environ(**env):
    old = {k: os.environ.get(k) for k in env}
    os.environ.update({k: str(v) for k, v in env.items()})
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@functools.lru_cache(maxsize=1)
def engine_and_device() -> tuple[str, str]:
    """The engine and device a chapter started in this environment uses (kernel or torch; cpu/cuda)."""
    from ..engine import config, kernel

    dev = config.default_device()
    engine = "kernel" if dev.type == "cpu" and kernel.available() else "torch"
    name = str(dev)
    if dev.type == "cuda":
        import torch

        name += f" ({torch.cuda.get_device_name(dev)})"
    return engine, name


def _execute_notebook(task: Task, out: Path, progress: bool) -> None:
    import papermill
    from papermill.exceptions import PapermillExecutionError

    import glob
    import logging
    import tempfile

    src = to_notebook(task.chapter, out.with_name("source.ipynb"))
    ip = os.path.join(tempfile.gettempdir(), f"shallowflow-kernel-{uuid.uuid4().hex[:12]}")
    started: list = []
    # papermill/nbclient log a dead kernel or a failed cell as several lines; the TaskFailed says it in one
    logging.getLogger("papermill").setLevel(logging.CRITICAL)
    try:
        papermill.execute_notebook(str(src), str(out), parameters=task.inject, kernel_name="python3",
                                   progress_bar=progress, cwd=str((book_dir() / task.chapter).parent),
                                   kernel_manager_class=_kernel_manager_class(ip, started, out.with_name("kernel.log")))
    except PapermillExecutionError as e:
        raise TaskFailed(f"chapter {task.chapter} failed in cell {e.exec_count}: {e.ename}: "
                         f"{_first_line(e.evalue)}") from None
    except Exception as e:  # a dead kernel, a timeout: one line, not a traceback
        from nbclient.exceptions import DeadKernelError

        if isinstance(e, DeadKernelError) or "Kernel died" in str(e):
            raise TaskFailed(f"the kernel died while executing chapter {task.chapter} "
                             f"(killed, or out of memory)") from None
        _kill_kernels(started)
        raise
    except BaseException:  # Ctrl-C, SIGTERM: the kernel must not outlive the run
        _kill_kernels(started)
        raise
    finally:
        src.unlink(missing_ok=True)
        for sock in glob.glob(ip + "-*"):
            with contextlib.suppress(OSError):
                os.unlink(sock)


def _execute_direct(task: Task, out: Path) -> None:
    """The same cells in this process, without a kernel (the 'direct' path of sweeps)."""
    import io

    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    os.environ.setdefault("MPLBACKEND", "Agg")
    src = to_notebook(task.chapter, out.with_name("source.ipynb"))
    nb = parameterize_notebook(load_notebook_node(str(src)), task.inject, report_mode=False)
    src.unlink()
    ns: dict = {"__name__": "__main__"}
    cwd = os.getcwd()
    os.chdir((book_dir() / task.chapter).parent)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            for i, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
                code = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
                try:
                    exec(compile(code, f"<{task.chapter} cell {i + 1}>", "exec"), ns)
                except Exception as e:
                    raise TaskFailed(f"chapter {task.chapter} failed in cell {i + 1}: {type(e).__name__}: "
                                     f"{_first_line(str(e))}") from None
    finally:
        os.chdir(cwd)
        import matplotlib.pyplot as plt

        plt.close("all")
