"""The run interface, the top floor: the ``shallowflow`` command (``cli``: run, list, describe, sweep, ...),
parameter sweeps expanded into executor tasks (``sweep``) and the terminal's summaries of a run (``terminal``).

No module of the package imports it; the installed command does (``shallowflow = shallowflow.run.cli:main``; ``shallowflow.cli`` and
``shallowflow.sweep`` are the same modules under their former names, see :data:`shallowflow.OLD_NAMES`).
"""
