"""pytest plugin of the smoke tier's nbval run (``make test-smoke``: ``-p tests.nbval_kernel_retry``).

nbval starts each notebook's kernel over TCP on ports it picks free and then releases; with two xdist workers
starting kernels at once, a kernel can lose a port to the other's and die before it answers ``kernel_info``
(nbval sends the kernel's stderr to /dev/null, so the test only says "Kernel died before replying to
kernel_info"; seen once, on conditioning-at-init, in a fresh-clone ``make test``).  That is the test rig failing,
not the notebook: the kernel is started again, at most twice more, each failure named in a warning.  A notebook
whose own cells fail is reported by nbval as before.

Its kernels are forked from a warm parent (:mod:`shallowflow.executor.warm`), as the executor's are: the same
kernel, without paying torch's and matplotlib's imports again for every notebook.
"""
import warnings

import nbval.kernel as _kernel

from shallowflow.executor.warm import warm

_kernel.KernelManager = warm(_kernel.KernelManager)

_start = _kernel.start_new_kernel
TRIES = 3


def start_new_kernel(*args, **kwargs):
    for attempt in range(1, TRIES + 1):
        try:
            return _start(*args, **kwargs)
        except RuntimeError as e:  # "Kernel died before replying to kernel_info"
            if attempt == TRIES:
                raise
            warnings.warn(f"nbval: kernel start {attempt} of {TRIES} failed ({e}); starting it again")


_kernel.start_new_kernel = start_new_kernel
