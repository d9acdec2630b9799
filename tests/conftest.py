import os

import pytest
import torch

os.environ.setdefault("SHALLOWFLOW_DEVICE", "cpu")

from shallowflow.engine import data as datasets  # noqa: E402


@pytest.fixture
def toy():
    return datasets.get("orthogonal-toy", device="cpu")


@pytest.fixture(autouse=True)
def _float64():
    torch.manual_seed(0)
    yield


@pytest.fixture
def roots(tmp_path, monkeypatch):
    """Tasks and claims under tmp_path (not the checkout)."""
    monkeypatch.setenv("SHALLOWFLOW_TASKS_DIR", str(tmp_path / "tasks"))
    monkeypatch.setenv("SHALLOWFLOW_CLAIMS_DIR", str(tmp_path / "claims"))
    monkeypatch.setenv("CI", "true")
    return tmp_path
