"""shallowflow: gradient descent and gradient flow of shallow networks, batched over runs.

The library behind the reproducible book.  Its folders are its floors: a module imports only from its own
package or from a package on a lower floor, and no two modules import each other, even through others
(``tests/test_import_graph.py`` checks both on every import statement, those inside functions included):

- ``outputs``      (floor 0) where a run may write; files published all or none (runnable by its path)
- ``params``       (floor 1) the parameter language (``spec``), data-file parameters (``datafile``), the book's
  layout rule (``chapters``) and the validation of a chapter's values (``validation``)
- ``engine``       (floor 2) the training engine: ``config`` and ``environ`` (float64, device, threads,
  ``SHALLOWFLOW_*``), ``kernel`` (the fused C engine), ``models``, ``init``, ``data``, ``train``, ``monitor``,
  ``flow``, ``metrics``, ``theory``, ``progress``, ``checkpoint``
- ``deep``         (floor 3) deep networks (source 004): ``nn.Module`` MLPs, CNNs, a tiny ViT, ADLER
- ``verdicts``     (floor 4) claim checks, their records, the verdict registry and its law, the scorecard
- ``experiments``  (floor 5) the library mirrors the book: one sub-package per source (book part), one module
  per chapter (its SCHEMA, RULES and experiment functions), the source's closed forms in ``theory``
- ``executor``     (floor 6) one executor for every chapter execution (papermill tasks on Dask)
- ``site``         (floor 7) the book's figures (``plots``) and web pages (the Sphinx extensions, the build)
- ``run``          (floor 8) the command line (``cli``), parameter sweeps (``sweep``), terminal summaries

Old names.  Executed notebooks of earlier builds import the flat modules of the former layout
(``from shallowflow import config, metrics, plots``, ``from shallowflow.models import Network``,
``from shallowflow import claims``); :data:`OLD_NAMES` maps each such name to its module now, and importing
an old name yields that module itself (``shallowflow.config is shallowflow.engine.config``: one device
setting, one set of caches), loaded on first use.
"""
import importlib
import importlib.abc
import importlib.machinery
import sys

from .engine import config

#: the module names of the former flat layout that executed notebooks (and the installed ``shallowflow`` command)
#: still import -> the module each is now (relative to this package)
OLD_NAMES = {"claims": "verdicts", "config": "engine.config", "data": "engine.data", "metrics": "engine.metrics",
             "models": "engine.models", "theory": "engine.theory", "train": "engine.train", "plots": "site.plots",
             "sweep": "run.sweep", "cli": "run.cli"}


class _OldName(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``import shallowflow.<old>``: the module of :data:`OLD_NAMES`, the same object under both names."""

    def find_spec(self, fullname, path=None, target=None):
        parent, _, old = fullname.rpartition(".")
        if parent == __name__ and old in OLD_NAMES:
            return importlib.machinery.ModuleSpec(fullname, self)
        return None

    def create_module(self, spec):
        module = importlib.import_module(f"{__name__}.{OLD_NAMES[spec.name.rpartition('.')[2]]}")
        spec.loader_state = module.__spec__  # the import system sets __spec__ to the old name's: put back below
        return module

    def exec_module(self, module):
        module.__spec__ = module.__spec__.loader_state


if not any(isinstance(f, _OldName) for f in sys.meta_path):
    sys.meta_path.append(_OldName())


def __getattr__(name: str):
    """``shallowflow.config`` (``from shallowflow import config``) for a name of :data:`OLD_NAMES`."""
    if name in OLD_NAMES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


config.configure()  # never raises: a bad SHALLOWFLOW_* variable is reported by config.check() at first use

__version__ = "0.1.0"
