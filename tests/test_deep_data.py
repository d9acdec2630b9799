"""shallowflow.deep.data: offline datasets, and the CIFAR loader on files written in CIFAR's own format."""
import pickle

import numpy as np
import pytest
import torch

from shallowflow.deep import data


def _write_cifar(root, classes, n=7):
    rng = np.random.default_rng(0)
    if classes == 10:
        folder = root / "cifar-10-batches-py"
        names, key = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"], b"labels"
    else:
        folder = root / "cifar-100-python"
        names, key = ["train", "test"], b"fine_labels"
    folder.mkdir(parents=True)
    written = {}
    for name in names:
        X = rng.integers(0, 256, size=(n, 3072), dtype=np.uint8)
        y = list(rng.integers(0, classes, size=n))
        with open(folder / name, "wb") as fh:
            pickle.dump({b"data": X, key: y, b"batch_label": name.encode()}, fh, protocol=2)
        written[name] = (X, y)
    return written


@pytest.mark.parametrize("classes", [10, 100])
def test_cifar_loader_reads_the_pickle_batches(tmp_path, classes, monkeypatch):
    written = _write_cifar(tmp_path, classes)
    assert data.cifar_available(classes, tmp_path) and not data.cifar_available(110 - classes, tmp_path)
    train = data.cifar(classes, "train", root=tmp_path, device="cpu")
    first = "data_batch_1" if classes == 10 else "train"
    assert train.n == (35 if classes == 10 else 7) and train.d == 3072 and train.classes == classes
    np.testing.assert_allclose(train.X[:7].numpy(), written[first][0] / 255.0)
    assert train.y[:7].tolist() == [int(v) for v in written[first][1]]
    test = data.cifar(classes, "test", n=3, seed=1, root=tmp_path, device="cpu")
    assert test.n == 3 and f"CIFAR-{classes}" in test.describe()
    monkeypatch.setenv(data.CIFAR_ENV, str(tmp_path))
    if classes == 10:
        assert data.load("auto", n=4, device="cpu").name.startswith("CIFAR-10")


def test_cifar_missing_or_malformed(tmp_path, monkeypatch):
    monkeypatch.delenv(data.CIFAR_ENV, raising=False)
    assert not data.cifar_available(10)
    with pytest.raises(FileNotFoundError):
        data.cifar(10, root=tmp_path)
    assert data.load("auto", n=5, device="cpu").name.startswith("digits")
    folder = tmp_path / "cifar-100-python"
    folder.mkdir()
    for name in ("train", "test"):
        with open(folder / name, "wb") as fh:
            pickle.dump({b"data": np.zeros((2, 10), np.uint8), b"fine_labels": [0, 1]}, fh)
    with pytest.raises(ValueError, match="3072"):
        data.cifar(100, root=tmp_path)
    with pytest.raises(ValueError):
        data.cifar(20, root=tmp_path)


def test_digits_subset_and_description():
    a = data.digits(50, seed=3, device="cpu")
    b = data.digits(50, seed=3, device="cpu")
    assert torch.equal(a.X, b.X) and a.n == 50 and a.d == 64 and a.classes == 10
    assert "n = 50" in a.describe() and "10 classes" in a.describe()
    nrm = a.normalised()
    torch.testing.assert_close(nrm.X.norm(dim=1), torch.full((50,), 8.0, dtype=torch.float64))
    with pytest.raises(ValueError):
        data.digits(5000)


def test_synthetic_sets():
    c = data.correlated(400, d=64, cosine=0.8, seed=0, device="cpu")
    Xn = c.X / c.X.norm(dim=1, keepdim=True)
    cos = Xn @ Xn.T
    mean_off = float((cos.sum() - cos.diagonal().sum()) / (400 * 399))
    assert 0.75 < mean_off < 0.87
    g = data.gaussian_mixture(100, 16, 100, seed=1, device="cpu")
    assert g.classes == 100 and g.y.max() < 100
    with pytest.raises(ValueError):
        data.correlated(10, cosine=1.0)
    with pytest.raises(ValueError):
        data.load("imagenet")
