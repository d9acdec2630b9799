"""A tiny Sphinx extension for the book.

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


def setup(app):
    app.connect("env-before-read-docs", _scorecard_last)
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": True}
