"""A tiny Sphinx extension for the book.

Docstrings of the package are plain text with mathematical notation (|x|, D_+, <w, x>), not
reStructuredText: the API reference shows them verbatim, as literal blocks, so that no docstring
can break the warning-free build.

The scorecard page reads the claim records that the chapters write while they execute, so it must
be read (and executed) after every chapter.  Sphinx reads documents in sorted order and offers the
``env-before-read-docs`` event precisely to reorder them: pages named ``scorecard`` go last.
"""
from __future__ import annotations


def _scorecard_last(app, env, docnames: list[str]) -> None:
    last = [d for d in docnames if d.rsplit("/", 1)[-1] == "scorecard"]
    for d in last:
        docnames.remove(d)
        docnames.append(d)


def _verbatim_docstring(app, what, name, obj, options, lines: list[str]) -> None:
    if any(line.strip() for line in lines):
        lines[:] = ["::", ""] + ["    " + line for line in lines] + [""]


def setup(app):
    app.connect("env-before-read-docs", _scorecard_last)
    app.connect("autodoc-process-docstring", _verbatim_docstring)
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": True}
