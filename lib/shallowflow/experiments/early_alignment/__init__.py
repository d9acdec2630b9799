"""002 (Boursier and Flammarion, *Early alignment in two-layer networks training is a two-edged sword*):
one module per chapter of ``book/early-alignment/``.

Each chapter module (``spurious``, ``failure_rates``, ``alignment``, ``assumption3``, ``staircase``) defines the
chapter's ``SCHEMA`` and ``RULES`` and its experiment functions; the closed forms, the initialisation
eq. (3) and the quantities several chapters share are in :mod:`.theory`, the findings text in
:mod:`.findings`.
"""
