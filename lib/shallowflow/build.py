"""Moved to :mod:`shallowflow.site.build`; this name re-exports it for the CLI and ``benchmarks/executor.py``."""
from .site.build import *  # noqa: F401,F403
