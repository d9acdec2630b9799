"""Issue 42 leftovers of 001 (weakly interacting) and 003 (orthogonal inputs), branch h13: checks that stop 48's
controls named "unable to fail", each either re-measured so that it can fail (a control below: a false case, built
with the package's own functions, whose finite measurement the chapter's own criterion rejects) or retired to a
printed line (a test below documents why it could not fail)."""
import math

import numpy as np
import torch

from shallowflow.experiments.weakly_interacting import theory as T


def test_lemma5_proof_bound_cannot_fail():
    """Why Lemma5/proof-bound was retired (the chapter prints it, unchecked): it compared the exact P(I) on orthogonal
    data with the proof's union bound P(I) >= 1 - n (3/4)^p (001:532, eq. (17)), a proved step: each example misses
    every neuron with probability (3/4)^p whatever the other examples do, so the bound holds for every n, p and label
    split, and the exact formula the check compares (theory.well_init_probability) is never below it, not only at the
    sufficiency width p = 4 log(n/eps) the check used. No case the package builds is a false one."""
    worst = math.inf
    for n in (1, 2, 3, 5, 10, 31, 100, 1000, 10 ** 4, 10 ** 6):
        for n_plus in sorted({0, n // 3, n - n // 2, n}):
            for p in range(1, 81):
                gap = T.well_init_probability(n_plus, n - n_plus, p) - T.well_init_lower_bound(n, p)
                worst = min(worst, gap)
    assert math.isfinite(worst) and worst >= -1e-12
