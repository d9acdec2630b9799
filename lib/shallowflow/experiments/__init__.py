"""Experiment functions: the library mirrors the book, one sub-package per source named as its book part.

``book/<part>/<chapter-name>.py`` is computed by ``experiments/<part_pkg>/<chapter_name>.py`` (dashes become
underscores), which defines the chapter's ``SCHEMA`` and ``RULES`` (validated parameters in) and its experiment
functions (results out); a source's shared closed forms are in ``<part_pkg>/theory.py``, its findings text in
``<part_pkg>/findings.py``. Parts import the floors below (the engine, deep networks, the verdict machinery, the
parameter language) and their own modules, never another part's. Each function is pure (the same parameters give the
same numbers) and batched over runs; the chapters call them, plot their results and check the sources' claims
against them.
"""
