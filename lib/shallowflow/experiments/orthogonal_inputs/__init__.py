"""003 (Boursier, Pillaud-Vivien and Flammarion, *Gradient flow dynamics of shallow ReLU networks for square
loss and orthogonal inputs*): one module per chapter of ``book/orthogonal-inputs/``.

Each chapter module (``toy``, ``implicit_bias``, ``phases``, ``balancedness``, ``remarks``, ``appendix_a``,
``high_dim``) defines the chapter's ``SCHEMA`` and ``RULES`` and its experiment functions; the closed forms
and the run grid several chapters share are in :mod:`.theory`, the findings text in :mod:`.findings`.
"""
