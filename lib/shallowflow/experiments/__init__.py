"""Experiment functions, one module per source: validated parameters in, results out.

Each function is pure (the same parameters give the same numbers) and batched over runs; the
chapters call them, plot their results and check the sources' claims against them.
"""
