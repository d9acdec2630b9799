"""Warm kernels (shallowflow.executor.warm): a kernel forked from the zygote is the kernel a cold start gives,
follows interrupts and kills, and never outlives its zygote; where forking could make it differ, the kernel
starts cold.  Every wait here is for an event (a message, a pidfd), with a generous deadline."""
import json
import os
import select
import signal
import sys

import pytest

from shallowflow.engine import config
from shallowflow.engine.environ import ConfigError
from shallowflow.executor import warm

pytestmark = pytest.mark.skipif(not (hasattr(os, "pidfd_open") and sys.platform.startswith("linux")),
                                reason="warm kernels need Linux pidfds")
DEADLINE = 120  # seconds: an upper bound for events on a loaded machine, never a sleep


@pytest.fixture(scope="module", autouse=True)
def own_zygote():
    """This module's kernels come from a zygote of its own: a process keeps one zygote, for the import-time
    environment of its first kernel, so a zygote left by an earlier test of the same process (an executor run that
    set OMP_NUM_THREADS, say) would make these kernels start cold and the outcome depend on test order."""
    before = warm._zygote
    warm._zygote = None
    yield
    if warm._zygote is not None:
        warm._zygote.close()
    warm._zygote = before


@pytest.fixture(scope="module")
def manager_class():
    from jupyter_client.manager import KernelManager

    return warm.warm(KernelManager)


def _ipc(tmp_path) -> dict:
    """Kernels over IPC sockets in the test's own folder: no TCP port is picked, so none can be taken."""
    return dict(transport="ipc", ip=str(tmp_path / "k"))


def _start(cls, tmp_path):
    km = cls(kernel_name="python3", **_ipc(tmp_path))
    km.start_kernel(cwd=str(tmp_path), env={**os.environ, "SHALLOWFLOW_TEST_MARK": "warm-42"},
                    extra_arguments=["--HistoryManager.hist_file=:memory:"])  # as papermill starts its kernels
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=DEADLINE)
    return km, kc


def _run(kc, code):
    """Execute ``code``; its stdout and the reply's status."""
    out = []
    reply = kc.execute_interactive(code, timeout=DEADLINE,
                                   output_hook=lambda m: out.append(m["content"].get("text", ""))
                                   if m["msg_type"] == "stream" else None)
    return "".join(out), reply["content"]


def test_a_forked_kernel_is_a_fresh_kernel_in_its_own_folder_and_environment(manager_class, tmp_path):
    km, kc = _start(manager_class, tmp_path)
    try:
        assert isinstance(km.provisioner.process, warm.ForkedKernel)
        out, reply = _run(kc, "import json, os, sys; print(json.dumps([os.getcwd(), os.environ.get("
                              "'SHALLOWFLOW_TEST_MARK'), os.getpgid(0) == os.getpid(), 'torch' in sys.modules, "
                              "'shallowflow' in sys.modules, sorted(k for k in globals() if not k.startswith('_')), "
                              "get_ipython().history_manager.hist_file]))")
        assert reply["status"] == "ok"
        cwd, mark, leader, torch_warm, book_pkg, names, hist = json.loads(out.strip().splitlines()[-1])
        assert hist == ":memory:"  # the kernel's own options reach it
        assert os.path.samefile(cwd, tmp_path) and mark == "warm-42" and leader
        assert torch_warm and not book_pkg  # third-party imports done, the book's package imported afresh
        assert set(names) <= {"In", "Out", "exit", "quit", "get_ipython", "json", "os", "sys", "open"}
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=False)
    assert not km.is_alive()


def test_an_interrupt_reaches_a_forked_kernel_and_a_kill_ends_it(manager_class, tmp_path):
    km, kc = _start(manager_class, tmp_path)
    proc = km.provisioner.process
    try:
        # stop_on_error=False: after an error ipykernel aborts whatever request reaches it before its next loop
        # tick, so a request sent straight after the interrupt's reply could be answered "aborted" (a race)
        msg_id = kc.execute("import time\nprint('sleeping', flush=True)\ntime.sleep(3600)", stop_on_error=False)
        while True:  # the cell has started sleeping
            m = kc.get_iopub_msg(timeout=DEADLINE)
            if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "stream":
                break
        km.interrupt_kernel()
        reply = kc.get_shell_msg(timeout=DEADLINE)
        while reply["parent_header"].get("msg_id") != msg_id:  # a late kernel_info reply of the start
            reply = kc.get_shell_msg(timeout=DEADLINE)
        assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
        out, again = _run(kc, "print(6 * 7)")  # the kernel lives on after the interrupt
        assert again["status"] == "ok" and out.strip() == "42"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert proc.wait(timeout=DEADLINE) == -signal.SIGKILL


def test_kernels_die_with_their_zygote(manager_class, tmp_path):
    km, kc = _start(manager_class, tmp_path)
    kc.stop_channels()
    proc = km.provisioner.process
    pidfd = os.pidfd_open(proc.pid)
    try:
        proc.zygote.proc.kill()  # the zygote ends abruptly, as with its run
        assert select.select([pidfd], [], [], DEADLINE)[0], "the kernel outlived its zygote"
        assert proc.wait(timeout=DEADLINE) == -signal.SIGKILL  # reaped by init: the kernel was killed with it
    finally:
        os.close(pidfd)
        km.shutdown_kernel(now=True)
    km2, kc2 = _start(manager_class, tmp_path)  # a new zygote serves the next kernel
    try:
        assert isinstance(km2.provisioner.process, warm.ForkedKernel)
        assert km2.provisioner.process.zygote is not proc.zygote
    finally:
        kc2.stop_channels()
        km2.shutdown_kernel(now=True)


def test_a_kernel_whose_import_time_environment_differs_starts_cold(manager_class, tmp_path):
    zyg = warm.zygote(dict(os.environ))
    assert zyg is not None and zyg.matches(dict(os.environ))
    other = {**os.environ, "OMP_NUM_THREADS": str(int(os.environ.get("OMP_NUM_THREADS", "1")) + 7)}
    assert warm.zygote(other) is None
    assert warm._warm_request(["/bin/sh", "-m", "ipykernel_launcher", "-f", "c.json"], {}) is None
    assert warm._warm_request([sys.executable, "-m", "ipykernel_launcher", "-f", "c.json", "x"], {}) is None
    papermills = warm._warm_request([sys.executable, "-m", "ipykernel_launcher", "-f", "c.json",
                                     "--HistoryManager.hist_file=:memory:"], {})
    assert papermills["argv"] == ["--HistoryManager.hist_file=:memory:"]
    km = manager_class(kernel_name="python3", **_ipc(tmp_path))
    km.start_kernel(cwd=str(tmp_path), env=other)
    try:
        assert not isinstance(km.provisioner.process, warm.ForkedKernel)
        km.client().wait_for_ready(timeout=DEADLINE)
    finally:
        km.shutdown_kernel(now=True)


@pytest.mark.parametrize("value", ["2", "maybe", "-1"])
def test_a_bad_warm_kernels_variable_is_one_line_naming_it(monkeypatch, value):
    monkeypatch.setenv("SHALLOWFLOW_WARM_KERNELS", value)
    with pytest.raises(ConfigError, match=r"^environment variable SHALLOWFLOW_WARM_KERNELS=.* expected 0 or 1$"):
        config.check()


def test_warm_kernels_can_be_switched_off(monkeypatch, manager_class):
    monkeypatch.setenv("SHALLOWFLOW_WARM_KERNELS", "0")
    assert not warm.enabled()
    assert manager_class(kernel_name="python3").provisioner is None  # jupyter_client's own provisioner follows


def test_the_zygote_preloads_only_what_every_kernel_imports_anyway():
    """A forked kernel must not have a module a cold one lacks: every preloaded module is imported by a bare
    ipykernel or by the first cells of a chapter (the package and pyplot)."""
    import subprocess

    code = ("import sys, shallowflow, matplotlib.pyplot, IPython, ipykernel.kernelapp, ipykernel.ipkernel; "
            f"print([m for m in {list(warm.PRELOAD)!r} if m not in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "MPLBACKEND": warm.INLINE_BACKEND})
    assert out.stdout.strip() == "[]"
