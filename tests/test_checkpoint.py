"""shallowflow.engine.checkpoint: a long run split into chunks resumes where it stopped, with identical results."""
import errno
import os

import pytest
import torch

from shallowflow.engine import checkpoint
from shallowflow.outputs import OutputError


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("SHALLOWFLOW_CHECKPOINTS", str(tmp_path / "ck"))
    return tmp_path / "ck"


def counted():
    calls = []

    def compute(seed):
        calls.append(seed)
        g = torch.Generator().manual_seed(seed)
        return {"w": torch.randn(3, generator=g, dtype=torch.float64), "seed": seed}

    return compute, calls


def test_an_interrupted_run_computes_only_the_chunks_it_had_not_finished(store):
    compute, calls = counted()

    def interrupted(seed):
        if seed == 2:
            raise KeyboardInterrupt  # the session's time limit, mid-run
        return compute(seed)

    with pytest.raises(KeyboardInterrupt):
        checkpoint.resumable("t/x", {"a": 1}, [0, 1, 2, 3], interrupted)
    assert calls == [0, 1]
    full, again = counted()
    first = checkpoint.resumable("t/x", {"a": 1}, [0, 1, 2, 3], full)
    assert again == [2, 3]
    fresh, _ = counted()
    reference = [fresh(s) for s in [0, 1, 2, 3]]
    for got, want in zip(first, reference):
        assert torch.equal(got["w"], want["w"]) and got["w"].dtype == torch.float64 and got["seed"] == want["seed"]


def test_other_parameters_never_read_an_old_result(store):
    compute, calls = counted()
    checkpoint.resumable("t/x", {"a": 1}, [0], compute)
    checkpoint.resumable("t/x", {"a": 2}, [0], compute)
    checkpoint.resumable("t/y", {"a": 1}, [0], compute)
    assert calls == [0, 0, 0]
    checkpoint.resumable("t/x", {"a": 1}, [0], compute)
    assert calls == [0, 0, 0]


def test_a_changed_package_never_reads_an_old_result(store, monkeypatch):
    compute, calls = counted()
    checkpoint.resumable("t/x", {}, [0], compute)
    monkeypatch.setattr(checkpoint, "package_version", lambda: "another version")
    checkpoint.resumable("t/x", {}, [0], compute)
    assert calls == [0, 0]


def test_a_damaged_or_half_written_chunk_counts_as_absent(store):
    compute, calls = counted()
    checkpoint.resumable("t/x", {}, [0, 1], compute)
    chunks = sorted(store.rglob("*.pt"))
    assert len(chunks) == 2 and not list(store.rglob("*.tmp*"))
    chunks[0].write_bytes(b"garbage")
    out = checkpoint.resumable("t/x", {}, [0, 1], compute)
    assert len(calls) == 3 and [o["seed"] for o in out] == [0, 1]


def test_switched_off_it_stores_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("SHALLOWFLOW_CHECKPOINTS", "0")
    compute, calls = counted()
    checkpoint.resumable("t/x", {}, [0], compute)
    checkpoint.resumable("t/x", {}, [0], compute)
    assert calls == [0, 0]
    assert checkpoint.root() is None


def test_a_full_disk_is_one_line_and_leaves_no_partial_file(store, monkeypatch):
    compute, _ = counted()
    checkpoint.resumable("t/x", {}, [0], compute)

    def full(obj, f, *a, **k):
        with open(f, "wb") as fh:
            fh.write(b"half")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(f))

    monkeypatch.setattr(torch, "save", full)
    with pytest.raises(OutputError) as e:
        checkpoint.resumable("t/x", {}, [0, 1], compute)
    msg = str(e.value)
    assert "\n" not in msg and "no space left" in msg
    assert not list(store.rglob("*.tmp*"))
    assert len(list(store.rglob("*.pt"))) == 1  # the chunk stored before is kept


def test_a_read_only_folder_runs_without_checkpoints_and_says_so(store, monkeypatch, capsys):
    real = type(store).mkdir

    def read_only(self, *a, **k):  # root ignores chmod, so the refusal is simulated where it would happen
        if str(self).startswith(str(store)):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))
        return real(self, *a, **k)

    monkeypatch.setattr(type(store), "mkdir", read_only)
    compute, calls = counted()
    out = checkpoint.resumable("t/x", {}, [0], compute)
    assert calls == [0] and out[0]["seed"] == 0
    said = capsys.readouterr().out.strip().splitlines()
    assert len(said) == 1 and "checkpoints off" in said[0] and "Permission denied" in said[0]


def test_editing_the_site_keeps_checkpoints_but_any_computing_module_does_not(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    (pkg / "site").mkdir(parents=True)
    (pkg / "train.py").write_text("x = 1\n")
    (pkg / "site" / "ext.py").write_text("y = 1\n")
    monkeypatch.setattr(checkpoint, "_PACKAGE", pkg)
    before = checkpoint.package_version()
    (pkg / "site" / "ext.py").write_text("y = 2  # a page's wording\n")
    assert checkpoint.package_version() == before
    (pkg / "train.py").write_text("x = 2\n")
    assert checkpoint.package_version() != before


def test_the_same_code_in_another_folder_finds_its_checkpoints(tmp_path, monkeypatch):
    """The code hash reads each file's path relative to the package, not where the checkout lies: a worktree or a
    moved clone of the same code resumes a run (it hashed absolute paths, so a paper run moved to another folder
    started again from nothing); a renamed module still changes it."""
    versions = []
    for where in ("one/pkg", "elsewhere/deeper/pkg"):
        pkg = tmp_path / where
        (pkg / "core").mkdir(parents=True)
        (pkg / "train.py").write_text("x = 1\n")
        (pkg / "core" / "engine.py").write_text("y = 1\n")
        monkeypatch.setattr(checkpoint, "_PACKAGE", pkg)
        versions.append(checkpoint.package_version())
    assert versions[0] == versions[1]
    (pkg / "core" / "engine.py").rename(pkg / "core" / "kernel.py")
    assert checkpoint.package_version() != versions[0]


def test_a_caller_that_sums_pieces_can_say_it_once(store, capsys):
    compute, _ = counted()
    checkpoint.resumable("t/x", {}, [0, 1], compute)
    capsys.readouterr()
    checkpoint.resumable("t/x", {}, [0, 1], compute, say=False)
    assert checkpoint.last_resumed == 2 and capsys.readouterr().out == ""
    checkpoint.resumable("t/x", {}, [0], compute, enabled=False)
    assert checkpoint.last_resumed == 0


def test_a_data_file_edited_in_place_never_reads_its_old_results(store, tmp_path):
    data = tmp_path / "data.csv"
    data.write_text("1,2,0\n")
    compute, calls = counted()
    checkpoint.resumable("t/x", {"dataset": str(data)}, [0], compute)
    checkpoint.resumable("t/x", {"dataset": str(data)}, [0], compute)
    assert calls == [0]
    data.write_text("1,2,1\n")  # same path, other contents
    checkpoint.resumable("t/x", {"dataset": str(data)}, [0], compute)
    assert calls == [0, 0]
