"""Source 001: Dana, Pillaud-Vivien and Bach, *Convergence of shallow ReLU networks on weakly interacting
data*.  One module per chapter of ``book/weakly-interacting/``; closed forms in :mod:`.theory`, the exact
reductions of the dynamics (canonical basis, Gram space) and the dense engine in :mod:`.reductions`."""
