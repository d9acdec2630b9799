"""Moved to :mod:`shallowflow.site.ext`; this name re-exports it for ``tests/test_spec_entries.py``."""
from .site.ext import *  # noqa: F401,F403
