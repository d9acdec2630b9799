"""A warm parent for kernels: imported once, forked per kernel (run as a script, never imported).

``python zygote.py FD`` imports the modules named in the environment variable ``ZYGOTE_PRELOAD`` (torch, numpy,
matplotlib, IPython, ipykernel: about 5 s of every kernel's start), then serves requests on the socket ``FD``: one
JSON line ``{"conn": connection file, "cwd": ..., "env": {...}, "log": path}`` per kernel.  For each it forks a
child that becomes an ipykernel on that connection file, in that folder, with exactly that environment, its
stdout and stderr appended to ``log``, in a session (and process group) of its own, and answers ``{"pid": N}``
once the child is in its session (so that the caller never signals the wrong group).  Nothing of the book's own
package is imported here: it reads ``SHALLOWFLOW_*`` variables at import, and each kernel imports it afresh under
its own environment.  A request ``{"reap": N}`` waits for child N (which the caller has seen end through a
pidfd) and answers ``{"code": exit status}``; a child is never reaped before, so its pid cannot be reused while the
caller still holds it.

The zygote ends when the caller's end of the socket closes (the caller exited or died; only the caller holds
it), and each kernel is killed when the zygote ends (``PR_SET_PDEATHSIG``: the zygote has one thread, the one
that forked it), so no kernel outlives the run that started it.  The zygote itself takes no such signal: it is
started from whichever thread of the caller starts the first kernel, and that thread may end before the run.  The script runs by path, so that ``import shallowflow`` never happens in the warm parent.
"""
import ctypes
import importlib
import json
import os
import signal
import socket
import sys

PR_SET_PDEATHSIG = 1
#: the signal dispositions of a new interpreter (SIGPIPE and SIGXFSZ ignored, SIGINT raising KeyboardInterrupt),
#: read before anything is imported; each kernel starts with them
FRESH = {s: signal.getsignal(s) for s in signal.valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP)}


def _die_with_parent(parent: int) -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent ended before the line above
        os._exit(1)


def _child(req: dict, ready_w: int, streams: tuple) -> None:
    """Become the kernel of ``req`` (runs in the forked child; never returns)."""
    code = 1
    try:
        for s in streams:  # the files over the socket first, then the socket itself: its descriptor closes
            s.close()
        os.setsid()
        _die_with_parent(int(req["zygote"]))
        os.write(ready_w, b"1")
        os.close(ready_w)
        null = os.open(os.devnull, os.O_RDONLY)
        log = os.open(req["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(null)
        os.close(log)
        os.chdir(req["cwd"])
        os.environ.clear()
        os.environ.update(req["env"])
        for s, handler in FRESH.items():  # a new interpreter's signal dispositions, whatever the zygote set
            try:
                signal.signal(s, handler)
            except (OSError, ValueError, TypeError):
                pass
        sys.argv = ["ipykernel_launcher", "-f", req["conn"], *req.get("argv", [])]
        from ipykernel import kernelapp

        kernelapp.launch_new_instance()
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:  # noqa: BLE001 - reported in the kernel's log, the exit code says it failed
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def main() -> None:
    fd = int(sys.argv[1])
    sock = socket.socket(fileno=fd)
    for name in filter(None, os.environ.get("ZYGOTE_PRELOAD", "").split(",")):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a module that fails here is imported (and fails) in the kernel
            pass
    rfile = sock.makefile("r", encoding="utf-8")
    wfile = sock.makefile("w", encoding="utf-8")
    for line in rfile:
        req = json.loads(line)
        if "reap" in req:
            _, status = os.waitpid(int(req["reap"]), 0)
            reply = {"code": os.waitstatus_to_exitcode(status)}
        else:
            req["zygote"] = os.getpid()
            ready_r, ready_w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(ready_r)
                _child(req, ready_w, (rfile, wfile, sock))
            os.close(ready_w)
            ok = os.read(ready_r, 1) == b"1"
            os.close(ready_r)
            reply = {"pid": pid} if ok else {"error": "the forked kernel ended before its session began"}
        reply["id"] = req.get("id")
        wfile.write(json.dumps(reply) + "\n")
        wfile.flush()


if __name__ == "__main__":
    main()
