"""Progress of long computations: a tqdm bar with the time left, shown only where a person watches.

A bar is shown in a terminal (standard error is a TTY) and in an *interactive* notebook: a kernel that a
Jupyter front-end started (JupyterLab and Notebook 7 set ``JPY_SESSION_NAME`` in the kernel's environment;
VS Code defines ``__vsc_ipynb_file__`` in its namespace).  It is never shown in CI logs (``CI=true``) or in
notebooks executed headless (papermill, nbval, the book build: their outputs become the built pages, and
the executor also sets ``SHALLOWFLOW_PROGRESS=0`` for every task).  ``SHALLOWFLOW_PROGRESS=1`` or ``0``
forces bars on or off (:func:`shallowflow.engine.config.progress_from_env`).

The bar of one computation (:func:`bar`: a training run, a flow) appears only once it has lasted
:data:`DELAY` seconds, so the many short calls of a chapter print nothing; the bar of a grid loop
(:func:`each`) appears at once, since its first point may take minutes while the calls inside it stay
silent.  Bars are removed when the work ends.  One bar at a time: inside an open bar, the bars of nested
calls are silent, so a chapter's grid loop shows one bar with the time left for the whole cell.

Usage, in an engine loop and around a grid::

    with progress.bar(steps + 1, "gradient descent", unit="it") as bar:
        ...; bar.update(k1 - k0)

    for n in progress.each(P.fig3_ns, "Fig 3: sample sizes"):
        ...

Progress never changes a result: bars only read counters, and the same parameters give the same numbers
with bars on or off (tested).
"""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Iterable, Iterator, TypeVar

from .environ import progress_from_env

DELAY = 2.0  # seconds of work before a bar appears
MININTERVAL = 0.5  # seconds between redraws

T = TypeVar("T")
_open: object | None = None  # the bar that is open: one at a time
_hooked = False


class _Silent:
    """What a hidden bar is: every update is a no-op."""

    n = 0

    def update(self, n: float = 1) -> None:
        pass


SILENT = _Silent()


def _kernel():
    """The running IPython kernel's shell, or None outside a kernel."""
    if "IPython" not in sys.modules:
        return None
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython half-imported
        return None
    ip = get_ipython()
    return ip if ip is not None and getattr(ip, "kernel", None) is not None else None


def interactive_notebook() -> bool:
    """True in a kernel that a Jupyter front-end started (JupyterLab/Notebook, VS Code), False in a kernel
    that papermill, nbval or nbclient started, and outside kernels."""
    ip = _kernel()
    if ip is None:
        return False
    return bool(os.environ.get("JPY_SESSION_NAME")) or "__vsc_ipynb_file__" in getattr(ip, "user_ns", {})


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes", "on")


def enabled() -> bool:
    """Whether bars are shown here (see the module doc): SHALLOWFLOW_PROGRESS decides if set; otherwise
    never under CI=true, yes in an interactive notebook or when standard error is a terminal."""
    forced = progress_from_env()
    if forced is not None:
        return forced
    if _in_ci():
        return False
    if _kernel() is not None:
        return interactive_notebook()
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


def _tqdm_class():
    """tqdm's notebook widget when ipywidgets is there in a kernel, else the text bar (also in a kernel:
    Jupyter redraws a line ending in a carriage return in place)."""
    if _kernel() is not None:
        try:
            import ipywidgets  # noqa: F401
            from tqdm.notebook import tqdm
            return tqdm
        except ImportError:
            pass
    from tqdm.std import tqdm
    return tqdm


def _release(*_args) -> None:
    """Close the open bar.  Registered after every notebook cell: a cell that raised inside :func:`each`
    leaves its loop's generator suspended (alive in the traceback), which must not silence later bars."""
    global _open
    if _open is not None:
        b, _open = _open, None
        b.close()


def _hook_cells() -> None:
    global _hooked
    ip = _kernel()
    if ip is not None and not _hooked:
        ip.events.register("post_run_cell", _release)
        _hooked = True


@contextmanager
def bar(total: float | None, desc: str, unit: str = "it", delay: float | None = None) -> Iterator[object]:
    """A progress bar over ``total`` units (None: unknown, no time left shown), or a silent stand-in when
    bars are off here or another bar is open.  It appears after ``delay`` seconds (default :data:`DELAY`).
    Use its ``update(n)``; the bar closes on exit."""
    global _open
    if _open is not None or not enabled():
        yield SILENT
        return
    _hook_cells()
    tqdm = _tqdm_class()
    b = _open = tqdm(total=total, desc=desc, unit=unit, delay=DELAY if delay is None else delay,
                     mininterval=MININTERVAL, leave=False, dynamic_ncols=True, file=sys.stderr)
    try:
        yield b
    finally:
        if _open is b:
            _open = None
        b.close()


def each(items: Iterable[T], desc: str, unit: str = "point", delay: float = 0.0) -> Iterator[T]:
    """The items, one by one, under one bar (its total is ``len(items)`` when it has one): the bar of a
    chapter's grid loop, shown at once (or after ``delay`` seconds: pass :data:`DELAY` for the steps of
    one computation), with the time left for the whole loop."""
    try:
        total = len(items)  # type: ignore[arg-type]
    except TypeError:
        total = None
    with bar(total, desc, unit, delay=delay) as b:
        for item in items:
            yield item
            b.update(1)


__all__ = ["DELAY", "SILENT", "bar", "each", "enabled", "interactive_notebook"]
