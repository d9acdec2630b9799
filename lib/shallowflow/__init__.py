"""shallowflow: gradient descent and gradient flow of shallow networks, batched over runs.

The library behind the reproducible book.  Modules, each about one idea:

- ``config``   float64 default, device choice, thread count
- ``models``   two-layer networks (ReLU, leaky ReLU, Sigmoid, Tanh) with a leading runs dimension
- ``init``     balanced and unbalanced initialisations, seeded per run
- ``data``     the datasets of the sources, built by name
- ``train``    full-batch gradient descent over ensembles, snapshot schedules, per-run stopping
- ``monitor``  gradient descent in segments, observed: per-run quantities on a time grid, captured states
- ``flow``     exact gradient flow: adaptive Dormand-Prince 5(4), per run, relative error per neuron
- ``kernel``   the fused C engine behind both on the CPU (torch is the fallback and the GPU path)
- ``metrics``  balancedness, kinks, alignment, exit times and plateaus
- ``theory``   closed forms (key directions D+/D-, minimum-norm interpolators)
- ``claims``   claim checks, their records and the verdict registry
- ``plots``    the figure types the chapters share
- ``params``   validation of chapter parameters
- ``cli``      re-run a chapter with a profile or single parameters
- ``experiments``  the library mirrors the book: one sub-package per source (book part), one module
  per chapter (its SCHEMA, RULES and experiment functions), the source's closed forms in ``theory``
"""
from . import config

config.configure()  # never raises: a bad SHALLOWFLOW_* variable is reported by config.check() at first use

__version__ = "0.1.0"
