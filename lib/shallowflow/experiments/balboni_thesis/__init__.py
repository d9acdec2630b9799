"""004 (Balboni, PhD thesis, SNS 2025): one module per chapter of book/balboni-thesis/.

The deep models, measurements, datasets and optimizers live in :mod:`shallowflow.deep`; the chapters'
experiment functions in the module named after the chapter.
"""
