"""Synthesis: one phenomenon across the five sources (book/synthesis).

Each chapter runs one experiment on every source's data with the core library only (no part's module is
imported: what two parts need lives in the core), and sets the sources' statements next to the measurement.
:mod:`~shallowflow.experiments.synthesis.sources` holds the data each source contributes.
"""
