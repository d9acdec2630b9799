"""``same(a, b)``: two results of a chapter's run are bit-identical (NaNs included), every field but the wall-clock
``seconds``; tensors are compared byte for byte, dataclasses, dicts, lists and tuples field by field (the resume
tests' comparison of an interrupted-and-resumed run with an uninterrupted one)."""
import dataclasses

import torch


def same(a, b, path="out"):
    assert type(a) is type(b), path
    if isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape and a.numpy().tobytes() == b.numpy().tobytes(), path
    elif dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            if f.name != "seconds":
                same(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            if k != "seconds":
                same(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{i}]")
    else:
        assert a == b or (a != a and b != b), path
