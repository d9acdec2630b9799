"""The Dask cluster: a local one of one-thread worker processes, or a running scheduler; tasks submitted and
gathered as they finish (a failing task does not stop the others)."""
from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from typing import Callable

from ..outputs import OutputError
from .common import CONNECT_TIMEOUT, MAX_WORKERS, RETRIES, ChapterError, _first_line, _short
from .publish import materialise
from .tasks import Task, execute_task, read_result


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def check_workers(workers) -> int | None:
    """``workers`` when it is a count of worker processes (1 to MAX_WORKERS) or None; ChapterError otherwise."""
    if workers is None:
        return None
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= MAX_WORKERS:
        raise ChapterError(f"--workers must be a whole number from 1 to {MAX_WORKERS}, got {_short(workers, 40)}")
    return workers


# The local scheduler: no dashboard, and its HTTP server (health and metrics routes, which Dask starts even without
# a dashboard, on port 8787 unless told otherwise) on a port the system picks, so that a taken 8787 (another
# cluster, a notebook server) is neither a warning nor a dependency (issue 38 N11).
SCHEDULER_KWARGS = {"dashboard": False, "dashboard_address": "127.0.0.1:0"}


def check_scheduler(scheduler) -> str | None:
    """``--scheduler``: None (a local cluster, or ``DASK_SCHEDULER_ADDRESS``) or a non-empty address; an empty
    or blank one is refused (it would silently run locally)."""
    if scheduler is None:
        return None
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise ChapterError(f"--scheduler must be the address of a running Dask scheduler (tcp://host:8786), got "
                           f"{_short(scheduler, 40)}; leave it out to run here")
    return scheduler.strip()


def connect_timeout() -> float:
    """Seconds a scheduler has to answer: SHALLOWFLOW_CONNECT_TIMEOUT, else CONNECT_TIMEOUT."""
    text = os.environ.get("SHALLOWFLOW_CONNECT_TIMEOUT", "").strip()
    if not text:
        return CONNECT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.1 <= value <= 3600:
        raise ChapterError(f"SHALLOWFLOW_CONNECT_TIMEOUT must be seconds from 0.1 to 3600, got {_short(text, 40)}")
    return value


def _probe(address: str, timeout: float) -> None:
    """Ask the scheduler at ``address`` who it is, within ``timeout`` seconds (TimeoutError otherwise), in
    an event loop of its own (the caller may be inside one)."""
    import asyncio
    import threading

    from distributed.core import rpc

    async def ask():
        r = rpc(address)
        try:
            return await r.identity()
        finally:
            await r.close_rpc()

    box: dict = {}

    def run():
        try:
            box["identity"] = asyncio.run(asyncio.wait_for(ask(), timeout))
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            box["error"] = e

    t = threading.Thread(target=run, name="shallowflow-probe", daemon=True)
    t.start()
    t.join(timeout + 5)
    if "error" in box:
        raise box["error"]
    if "identity" not in box:
        raise TimeoutError("no answer")


def connect(address: str):
    """A Client on a running scheduler, or ChapterError in one line when none answers within
    :func:`connect_timeout` seconds (a wrong address, a closed port, a scheduler that does not reply)."""
    import logging

    from distributed import Client

    timeout = connect_timeout()
    quiet = [logging.getLogger(n) for n in ("distributed.client", "distributed.comm", "distributed.core")]
    levels = [lg.level for lg in quiet]
    for lg in quiet:
        lg.setLevel(logging.CRITICAL)
    try:
        _probe(address, timeout)  # Client's own timeout does not bound a peer that accepts and stays silent
        return Client(address, timeout=f"{timeout}s")
    except Exception as e:  # OSError, TimeoutError, ValueError (a malformed address)
        why = _first_line(str(e), 160)
        raise ChapterError(f"no Dask scheduler answered at {_short(address, 80)} within {timeout:g} s "
                           f"({type(e).__name__}{': ' + why if why else ''})") from None
    finally:
        for lg, level in zip(quiet, levels):
            lg.setLevel(level)


@contextlib.contextmanager
def cluster(scheduler: str | None = None, workers: int | None = None):
    """A Dask client: on ``scheduler`` (or ``DASK_SCHEDULER_ADDRESS``) when given, else on an in-process
    ``LocalCluster`` of ``workers`` one-thread processes (default: the cores this process may use)."""
    import logging

    import dask
    from distributed import Client, LocalCluster

    workers = check_workers(workers)
    address = check_scheduler(scheduler) or os.environ.get("DASK_SCHEDULER_ADDRESS")
    if address:
        with connect(address) as client:
            yield client
        return
    with dask.config.set({"distributed.scheduler.allowed-failures": RETRIES,
                          "distributed.worker.daemon": False,
                          "distributed.admin.tick.limit": "1h"}):
        with LocalCluster(n_workers=workers or default_workers(), threads_per_worker=1, processes=True,
                          memory_limit=0, dashboard_address=None, silence_logs=logging.CRITICAL,
                          host="127.0.0.1", scheduler_kwargs=SCHEDULER_KWARGS) as lc, Client(lc) as client:
            yield client


def show_progress(flag: bool | None = None) -> bool:
    """The CLI's task bar: where :func:`shallowflow.engine.progress.enabled` shows bars (a terminal, never in CI
    logs), or when asked (``flag=True``); never with ``flag=False`` (``--quiet``)."""
    if flag is False:
        return False
    from ..engine import progress

    if flag:
        return not progress._in_ci()
    return progress.enabled()


@dataclass
class Outcome:
    """What came back from a batch of tasks: results in task order (None where a task failed)."""

    results: list
    errors: dict = field(default_factory=dict)  # task index -> one-line message


def run_tasks(client, tasks: list[Task], force: bool = True, progress: bool = False, direct: bool = False,
              desc: str = "tasks", on_result: Callable[[int, dict], None] | None = None) -> Outcome:
    """Submit every task, gather results as they finish (a failing task does not stop the others)."""
    from distributed import as_completed
    from tqdm.auto import tqdm

    results: list = [None] * len(tasks)
    errors: dict = {}
    todo = []
    for i, t in enumerate(tasks):
        done = None if force else read_result(t)
        if done is not None:
            done["cached"] = True
            results[i] = done
            if on_result:
                on_result(i, done)
        else:
            todo.append(i)
    bar = tqdm(total=len(tasks), initial=len(tasks) - len(todo), desc=desc, unit="task",
               disable=not progress, dynamic_ncols=True)
    # the tasks start in the order given (a higher priority starts first), whatever Dask would choose
    futures = {client.submit(execute_task, tasks[i], force, False, direct, True, priority=len(todo) - rank,
                             key=f"{tasks[i].chapter}-{tasks[i].profile}-{tasks[i].key}", pure=False): i
               for rank, i in enumerate(todo)}
    try:
        for fut in as_completed(list(futures)):
            i = futures[fut]
            try:
                res = materialise(fut.result())
                results[i] = res
                if on_result:
                    on_result(i, res)
            except (ChapterError, OutputError) as e:
                errors[i] = str(e)
            except Exception as e:  # KilledWorker after RETRIES, a lost connection
                errors[i] = f"{tasks[i].label or tasks[i].chapter}: {type(e).__name__}: {_first_line(str(e))}"
            bar.update(1)
    except BaseException:
        for fut in futures:
            fut.cancel()
        raise
    finally:
        bar.close()
    return Outcome(results, errors)
