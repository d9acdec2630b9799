"""The training engine: two-layer networks trained as ensembles (a leading runs dimension), and what is
measured on them.

Modules, each about one idea:

- ``environ``     the ``SHALLOWFLOW_*`` variables, each read with a check (:class:`~.environ.ConfigError`)
- ``kernel``      the fused C engine behind gradient descent and gradient flow on the CPU (torch is the fallback
  and the GPU path)
- ``config``      float64 default, device choice, thread count; :func:`~.config.describe` (the engine line)
- ``models``      two-layer networks (ReLU, leaky ReLU, Sigmoid, Tanh) with a leading runs dimension
- ``init``        balanced and unbalanced initialisations, seeded per run
- ``data``        the datasets of the sources, built by name; a reader's own data file as tensors
- ``train``       full-batch gradient descent over ensembles, snapshot schedules, per-run stopping
- ``monitor``     gradient descent in segments, observed: per-run quantities on a time grid, captured states
- ``flow``        exact gradient flow: adaptive Dormand-Prince 5(4), per run, relative error per neuron
- ``metrics``     balancedness, kinks, alignment, exit times and plateaus
- ``theory``      closed forms (key directions D+/D-, minimum-norm interpolators)
- ``progress``    progress bars in a terminal or an interactive notebook
- ``checkpoint``  resumable long runs: finished chunks kept on disk, keyed to the package's code

The engine imports only the floors below it (:mod:`shallowflow.params`, :mod:`shallowflow.outputs`); importing this
package imports none of its modules.
"""
