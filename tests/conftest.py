import os

import pytest
import torch

os.environ.setdefault("SHALLOWFLOW_DEVICE", "cpu")

from shallowflow import data as datasets  # noqa: E402


@pytest.fixture
def toy():
    return datasets.get("orthogonal-toy", device="cpu")


@pytest.fixture(autouse=True)
def _float64():
    torch.manual_seed(0)
    yield
