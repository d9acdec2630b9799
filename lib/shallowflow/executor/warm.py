"""Warm kernels: each chapter's kernel forked from a process that has already imported torch, numpy, matplotlib
and the IPython kernel, instead of a new interpreter importing them again.

Starting a kernel costs about 5 s of imports before the chapter's first cell (torch alone about 2.5 s), and the
test command starts 84 of them (every chapter executed by the smoke tier, then again by nbval).  A
:class:`WarmProvisioner` asks a *zygote* (:mod:`shallowflow.executor.zygote`, one per process that starts kernels,
started with that process's first kernel) to fork a kernel: the same ipykernel, on the same connection file, in
the same folder, with exactly the environment a cold kernel would get; only the third-party imports are already
done.  The book's own package is never imported in the zygote (it reads ``SHALLOWFLOW_*`` variables at import):
each kernel imports it under its own environment, as a cold kernel does.

A kernel is started cold, as before, when forking could make it differ from a cold one:
- ``SHALLOWFLOW_WARM_KERNELS=0`` (the default is 1 where the platform has ``os.pidfd_open``, i.e. Linux);
- its command is not this interpreter's ``-m ipykernel_launcher -f FILE [--Name.trait=value ...]`` (another
  kernelspec);
- its environment differs from the zygote's in a variable read when those modules load (``PYTHON*``, OpenMP and
  BLAS thread settings, ``TORCH*``, ``MPLBACKEND``, ``LD_*``, ...): the zygote imported them under its own.

The caller follows a forked kernel through a pidfd, which names that very process (no pid reuse); the zygote
reaps it only when asked, after the caller has seen it end.  Kernels die with the zygote, and the zygote with the
process that started it (see the zygote's docstring).
"""
from __future__ import annotations

import atexit
import itertools
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

from ..engine.environ import warm_kernels_from_env

#: imported once in the zygote: the modules every chapter's kernel imports before its first number
PRELOAD = ("numpy", "torch", "matplotlib", "matplotlib.pyplot", "IPython", "ipykernel.kernelapp", "ipykernel.ipkernel")
#: environment variables read while those modules load: a kernel whose value differs from the zygote's starts cold
IMPORT_TIME = re.compile(r"^(PYTHON|OMP_|GOMP_|KMP_|MKL_|OPENBLAS|BLIS_|NUMEXPR|TORCH|PYTORCH|CUDA|NVIDIA_|MPL|"
                         r"MATPLOTLIB|LD_|MALLOC_|SCIPY|NPY_|NUMPY|IPYTHON|JUPYTER|JPY_SESSION|PYDEVD|DEBUGPY)")
#: the backend ipykernel sets when the environment names none; the zygote sets it before importing matplotlib
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
ZYGOTE = Path(__file__).with_name("zygote.py")


def enabled() -> bool:
    """Whether kernels are forked from a zygote: SHALLOWFLOW_WARM_KERNELS (0 or 1; default 1), on Linux (pidfds);
    a bad value raises the engine's one-line ConfigError."""
    return warm_kernels_from_env() and hasattr(os, "pidfd_open") and sys.platform.startswith("linux")


def _import_time_env(env: dict) -> dict:
    out = {k: v for k, v in env.items() if IMPORT_TIME.match(k) and k != "JPY_PARENT_PID"}
    out.setdefault("MPLBACKEND", INLINE_BACKEND)  # what ipykernel itself would set
    return out


class Zygote:
    """The warm parent of this process's kernels (see :mod:`~shallowflow.executor.zygote`)."""

    def __init__(self, env: dict):
        self.env = _import_time_env(env)
        zenv = dict(env)
        zenv.update(self.env)
        zenv["ZYGOTE_PRELOAD"] = ",".join(PRELOAD)
        mine, theirs = socket.socketpair()
        self.proc = subprocess.Popen([sys.executable, str(ZYGOTE), str(theirs.fileno())], pass_fds=[theirs.fileno()],
                                     env=zenv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, cwd=os.getcwd(), start_new_session=True)
        theirs.close()
        self.sock = mine
        self.rfile = mine.makefile("r", encoding="utf-8")
        self.lock = threading.Lock()
        self.ids = itertools.count()

    def matches(self, env: dict) -> bool:
        return _import_time_env(env) == self.env

    def ask(self, **req) -> dict:
        """One request and its answer (ids pair them: an answer left unread by an interrupted call is skipped)."""
        with self.lock:
            rid = next(self.ids)
            self.sock.sendall((json.dumps({**req, "id": rid}) + "\n").encode())
            while True:
                line = self.rfile.readline()
                if not line:
                    raise ConnectionError("the warm-kernel parent ended")
                reply = json.loads(line)
                if reply.get("id") == rid:
                    return reply

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        for f in (self.rfile, self.sock):
            try:
                f.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


_zygote: Zygote | None = None
_zygote_lock = threading.Lock()


def zygote(env: dict) -> Zygote | None:
    """This process's zygote (started on first use), or None where a kernel of ``env`` must start cold."""
    global _zygote
    with _zygote_lock:
        if _zygote is not None and not _zygote.alive():
            _zygote.close()
            _zygote = None
        if _zygote is None:
            _zygote = Zygote(env)
            atexit.register(_zygote.close)
        return _zygote if _zygote.matches(env) else None


class ForkedKernel:
    """The ``subprocess.Popen`` face of a kernel forked by the zygote (what jupyter_client's provisioner uses)."""

    stdin = stdout = stderr = None

    def __init__(self, zyg: Zygote, pid: int, args: list):
        self.zygote, self.pid, self.args = zyg, pid, args
        self.pidfd = os.pidfd_open(pid)
        self.returncode: int | None = None

    def _ended(self, timeout: float | None) -> bool:
        return bool(select.select([self.pidfd], [], [], timeout)[0])

    def _reap(self) -> int:
        try:
            self.returncode = int(self.zygote.ask(reap=self.pid)["code"])
        except (OSError, ValueError, KeyError):  # the zygote ended: the kernel was killed with it
            self.returncode = -signal.SIGKILL
        os.close(self.pidfd)
        return self.returncode

    def poll(self) -> int | None:
        if self.returncode is None and self._ended(0):
            self._reap()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if not self._ended(timeout):
                raise subprocess.TimeoutExpired(self.args, timeout)
            self._reap()
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            signal.pidfd_send_signal(self.pidfd, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _warm_request(cmd: list, kw: dict) -> dict | None:
    """The zygote request for a kernel command, or None when the command is not this interpreter's ipykernel
    (``-m ipykernel_launcher -f FILE``, then only ``--Name.trait=value`` options, as papermill adds)."""
    extra = list(cmd[5:])
    if len(cmd) < 5 or cmd[1:3] != ["-m", "ipykernel_launcher"] or cmd[3] != "-f" or \
            not all(isinstance(a, str) and a.startswith("--") for a in extra):
        return None
    try:
        if os.path.realpath(cmd[0]) != os.path.realpath(sys.executable):
            return None
    except OSError:
        return None
    out = kw.get("stderr") if kw.get("stderr") is not None else kw.get("stdout")
    log = getattr(out, "name", None)
    return {"conn": os.path.abspath(cmd[4]), "argv": extra, "cwd": str(kw.get("cwd") or os.getcwd()),
            "env": dict(kw.get("env") if kw.get("env") is not None else os.environ),
            "log": log if isinstance(log, str) else os.devnull}


def provisioner_class():
    """jupyter_client's local provisioner, launching through the zygote wherever that is safe."""
    from jupyter_client.provisioning.local_provisioner import LocalProvisioner

    class WarmProvisioner(LocalProvisioner):
        async def launch_kernel(self, cmd, **kw):
            req = _warm_request(cmd, kw) if enabled() else None
            zyg = zygote(req["env"]) if req else None
            if zyg is None:
                return await super().launch_kernel(cmd, **kw)
            try:
                reply = zyg.ask(**req)
            except (OSError, ValueError):
                return await super().launch_kernel(cmd, **kw)
            if "pid" not in reply:
                raise RuntimeError(f"the kernel could not be started: {reply.get('error', reply)}")
            self.process = ForkedKernel(zyg, int(reply["pid"]), cmd)
            self.pid = self.pgid = self.process.pid  # the kernel leads a session of its own
            self.cwd = req["cwd"]
            return self.connection_info

        async def send_signal(self, signum: int) -> None:
            if isinstance(self.process, ForkedKernel):
                if self.process.poll() is None:  # the group only while its leader lives: its pgid cannot be reused
                    try:
                        os.killpg(self.pgid, signum)
                        return
                    except OSError:
                        pass
                self.process.send_signal(signum)
                return
            await super().send_signal(signum)

    return WarmProvisioner


def warm(manager_class):
    """``manager_class`` (a jupyter_client KernelManager) with its kernels started by :func:`provisioner_class`."""
    import uuid

    provisioner = provisioner_class()

    class WarmKernelManager(manager_class):
        def __init__(self, **kw):
            super().__init__(**kw)
            if enabled():
                self.kernel_id = self.kernel_id or str(uuid.uuid4())
                self.provisioner = provisioner(kernel_id=self.kernel_id, kernel_spec=self.kernel_spec,
                                               parent=self)

    WarmKernelManager.__name__ = WarmKernelManager.__qualname__ = "Warm" + manager_class.__name__
    return WarmKernelManager
