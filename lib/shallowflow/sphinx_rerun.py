"""Moved to :mod:`shallowflow.site.rerun`; this name re-exports it for ``tests/test_chapters.py`` and ``tests/test_shown_commands.py``."""
from .site.rerun import *  # noqa: F401,F403
