"""000 (Brisbois, master's thesis, UCLouvain 2024): one module per chapter of book/brisbois-thesis/.

Closed forms shared by several chapters live in :mod:`.theory`; the chapters' experiment functions
in the module named after the chapter.
"""
