"""Faults and hostile input that must cost one line and nothing else (issue 25, items 2-6 and 9).

Nothing here executes a chapter: a run is refused before its kernel starts, or the chapter's execution is
replaced by a fake one that writes what a chapter writes (a notebook and a claim record).  A full disk
is a write that raises ENOSPC; a read-only folder is a write that raises PermissionError (the tests may
run as root, which ignores permission bits; the chmod variant runs only as another user).
"""
import errno
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from shallowflow.run import cli
from shallowflow.engine import kernel
from shallowflow import outputs
from shallowflow import executor as X
from shallowflow.run import sweep as S

CHAPTER = "orthogonal-inputs/toy"
RUN = ["run", CHAPTER, "--profile", "smoke", "-p", "animation_frames", "0", "-p", "seeds", "[0]", "--quiet"]  # one seed: faults, not the chapter, are under test


def one_line(err: str) -> str:
    err = err.strip()
    assert err and "\n" not in err and "Traceback" not in err, err
    return err


def files_under(path: Path) -> dict:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def fake_result(tmp_path: Path, profile: str = "smoke", notebook: bytes = b'{"nb": "new"}') -> dict:
    """A finished task as execute_task leaves it, without executing the chapter."""
    task = X.prepare(CHAPTER, "smoke", {"animation_frames": 0} if profile == "custom" else None,
                     root=tmp_path / "tasks")
    task.dir.mkdir(parents=True)
    nb = task.dir / task.notebook.name
    nb.write_bytes(notebook)
    rec = {"source": "003", "chapter": f"book/{CHAPTER}", "profile": task.profile,
           "checks": [{"id": "E1/x", "measured": "1", "verdict": "pass"}]}
    result = dict(chapter=task.chapter, profile=task.profile, values=task.values, inject=task.inject, key=task.key,
                  code=task.code, label="", path="notebook", notebook=str(nb), dir=str(task.dir), records=[rec],
                  wall_s=1.0, started="now", host="h", pid=1, engine="torch", device="cpu", cached=False)
    (task.dir / "result.json").write_text(json.dumps(result))
    return result


# ---------------------------------------------------------------------------------------------
# item 2: a symlink never leads a run's writes (or its clean-up) out of the repository or --out
def test_a_symlinked_task_folder_is_refused_before_a_kernel_starts(roots, capsys):
    outside = roots / "outside"
    (outside / "smoke-0123456789abcdef").mkdir(parents=True)
    (outside / "custom-0123456789abcdef").mkdir()
    (outside / "smoke-0123456789abcdef" / "keep.txt").write_text("mine")
    (roots / "tasks" / "orthogonal-inputs").mkdir(parents=True)
    (roots / "tasks" / "orthogonal-inputs" / "toy").symlink_to(outside)
    before = files_under(outside)
    assert cli.main([*RUN, "--out", str(roots / "runs")]) == 1
    err = one_line(capsys.readouterr().err)
    assert "refusing to write" in err and str(roots / "tasks" / "orthogonal-inputs" / "toy") in err and "symlink" in err
    assert files_under(outside) == before and sorted(p.name for p in outside.iterdir()) == [
        "custom-0123456789abcdef", "smoke-0123456789abcdef"]
    assert not (roots / "runs").exists()


def test_a_symlinked_out_folder_is_refused(roots, capsys):
    outside = roots / "outside"
    outside.mkdir()
    (roots / "out").mkdir()
    (roots / "out" / "custom").symlink_to(outside)
    assert cli.main([*RUN, "--out", str(roots / "out")]) == 1
    assert "is a symlink to" in one_line(capsys.readouterr().err)
    assert not list(outside.iterdir()) and not (roots / "tasks").exists()


def test_publish_removes_only_task_folders_a_run_created(roots):
    result = fake_result(roots)
    here = Path(result["dir"])
    key = "fedcba9876543210"
    # an earlier run (other code version): a task folder with its own result -> superseded
    old = here.with_name(f"smoke-{key}")
    old.mkdir()
    (old / "result.json").write_text(json.dumps({"chapter": CHAPTER, "key": key}))
    # a link to a folder elsewhere, named like a task folder, holding a result-like file -> kept, and its target
    elsewhere = roots / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "result.json").write_text(json.dumps({"chapter": CHAPTER, "key": "0" * 16}))
    here.with_name("smoke-" + "0" * 16).symlink_to(elsewhere)
    # folders a run did not create: no result, another chapter's result, a name that is not a task's
    for name, doc in (("smoke-" + "1" * 16, None), ("smoke-" + "2" * 16, {"chapter": "other", "key": "2" * 16}),
                      ("smoke-mine", {"chapter": CHAPTER, "key": "mine"})):
        (here.parent / name).mkdir()
        if doc:
            (here.parent / name / "result.json").write_text(json.dumps(doc))
    X.publish(result, roots / "runs" / "smoke", out_root=roots / "runs")
    assert not old.exists() and here.exists()
    assert sorted(p.name for p in here.parent.iterdir()) == sorted(
        [here.name, "smoke-" + "0" * 16, "smoke-" + "1" * 16, "smoke-" + "2" * 16, "smoke-mine"])
    assert (elsewhere / "result.json").exists()
    assert (roots / "runs" / "smoke" / f"{CHAPTER}.ipynb").read_bytes() == b'{"nb": "new"}'


def test_publish_deletes_nothing_through_a_symlinked_chapter_folder(roots):
    result = fake_result(roots)
    real = Path(result["dir"]).parent
    outside = roots / "outside"
    real.rename(outside)
    real.symlink_to(outside)  # the chapter's task folder now leads out of the tasks' root
    (outside / "smoke-fedcba9876543210").mkdir()
    (outside / "smoke-fedcba9876543210" / "result.json").write_text(json.dumps({"chapter": CHAPTER,
                                                                                "key": "fedcba9876543210"}))
    result["notebook"] = str(outside / Path(result["notebook"]).relative_to(real))
    X.publish(result, roots / "runs" / "smoke", out_root=roots / "runs")
    assert (outside / "smoke-fedcba9876543210").exists()


# ---------------------------------------------------------------------------------------------
# item 3: the C kernel is loaded only from a folder this user owns that no one else may write
PLANTED = r"""
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void planted(void) {
    const char *p = getenv("PLANTED_MARKER"); if (p) { FILE *f = fopen(p, "w"); if (f) { fputs("ran", f); fclose(f); } }
}
int sf_grad(void) { return 0; } int sf_field(void) { return 0; } int sf_flow(void) { return 0; } int sf_gd(void) { return 0; }
"""


def plant(folder: Path, mode: int, tmp_path: Path) -> None:
    """A library whose constructor writes PLANTED_MARKER, with matching checksums, under every name the
    loader tries."""
    folder.mkdir(parents=True, exist_ok=True)
    src = tmp_path / "planted.c"
    src.write_text(PLANTED)
    so = tmp_path / "planted.so"
    subprocess.run([os.environ.get("CC") or shutil.which("cc") or "gcc", "-shared", "-fPIC", str(src), "-o", str(so)],
                   check=True, capture_output=True)
    key = hashlib.sha256((kernel.SOURCE + sys.platform + kernel._cpu_id() + " ".join(kernel._extra_flags())).encode()
                         ).hexdigest()[:16]
    for n in (0, 1, 2):
        dest = folder / f"kernel-{key}-{n}.so"
        shutil.copyfile(so, dest)
        dest.with_name(dest.name + ".sha256").write_text(kernel._digest(dest.read_bytes()) + "\n")
    os.chmod(folder, mode)


@pytest.fixture
def kernel_env(tmp_path, monkeypatch):
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv("SHALLOWFLOW_CFLAGS", "-O0")  # a quick build (part of the cache key)
    monkeypatch.delenv("SHALLOWFLOW_KERNEL", raising=False)
    monkeypatch.setenv("PLANTED_MARKER", str(tmp_path / "planted-ran"))
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmpdir))
    kernel._reset()
    yield tmp_path
    monkeypatch.undo()
    kernel._reset()  # the rest of the session loads the normal cache again


@pytest.mark.parametrize("how", ["writable by others", "writable by group", "a symlink", "owned by another user"])
def test_the_kernel_is_never_loaded_from_a_folder_another_user_controls(kernel_env, monkeypatch, how):
    tmp_path = kernel_env
    uid = os.getuid()
    cache, fallback = tmp_path / "cache", tmp_path / "tmpdir" / f"shallowflow-{uid}"
    if how == "owned by another user":
        if os.geteuid() != 0:
            pytest.skip("chown to another user needs root")
        for folder in (cache, fallback):
            plant(folder, 0o755, tmp_path)
            os.chown(folder, 65534, 65534)
    elif how == "a symlink":
        for folder in (tmp_path / "real-cache", tmp_path / "real-fallback"):
            plant(folder, 0o700, tmp_path)
        cache.symlink_to(tmp_path / "real-cache")
        fallback.symlink_to(tmp_path / "real-fallback")
    else:
        mode = 0o777 if how == "writable by others" else 0o770
        plant(cache, mode, tmp_path)
        plant(fallback, mode, tmp_path)  # the $TMPDIR/shallowflow-<uid> fallback, planted too
    monkeypatch.setenv("SHALLOWFLOW_CACHE", str(cache))
    assert kernel.available(), kernel.reason()
    assert not (tmp_path / "planted-ran").exists(), "a planted library's constructor ran"
    assert "private folder" in kernel.reason() and str(cache) not in kernel.reason().split(";")[-1]
    assert kernel._private(cache) is not None


def test_the_kernel_cache_in_a_private_folder_is_used(kernel_env, monkeypatch):
    cache = kernel_env / "mine"
    monkeypatch.setenv("SHALLOWFLOW_CACHE", str(cache))
    assert kernel.available(), kernel.reason()
    assert kernel.reason().startswith("built") and str(cache) in kernel.reason()
    assert kernel._private(cache) is None and cache.stat().st_mode & 0o077 == 0


# ---------------------------------------------------------------------------------------------
# item 4: a notebook and its claim records are published together or not at all
def _enospc_for(match: str, monkeypatch):
    real = outputs._write_file

    def write(path, data):
        if match in str(path):
            Path(path).touch()  # the 0-byte temporary file a full disk leaves
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real(path, data)

    monkeypatch.setattr(outputs, "_write_file", write)


def _published(roots, result):
    nb = roots / "runs" / "smoke" / f"{CHAPTER}.ipynb"
    claims = roots / "claims" / "smoke" / "003__book__orthogonal-inputs__toy.json"
    return nb, claims


@pytest.mark.parametrize("full", ["claims", "runs"])
def test_publishing_on_a_full_disk_changes_nothing_and_leaves_no_temporary_file(roots, monkeypatch, full):
    first = fake_result(roots / "first")
    X.publish(first, roots / "runs" / "smoke", out_root=roots / "runs")
    before = {**files_under(roots / "runs"), **files_under(roots / "claims")}
    second = fake_result(roots / "second", notebook=b'{"nb": "newer"}')
    second["records"][0]["checks"][0]["measured"] = "2"
    _enospc_for(str(roots / full), monkeypatch)
    with pytest.raises(X.OutputError, match="no space left.*nothing was published") as e:
        X.publish(second, roots / "runs" / "smoke", out_root=roots / "runs")
    one_line(str(e.value))
    assert {**files_under(roots / "runs"), **files_under(roots / "claims")} == before
    assert not [p for p in roots.rglob(".*") if ".tmp-" in p.name or ".bak-" in p.name]


def test_a_failed_rename_puts_back_the_files_already_renamed(roots, monkeypatch):
    X.publish(fake_result(roots / "first"), roots / "runs" / "smoke", out_root=roots / "runs")
    nb, claims = _published(roots, None)
    before = (nb.read_bytes(), claims.read_bytes())
    calls = []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(errno.EIO, "Input/output error", str(dst))
        os.replace(src, dst)

    monkeypatch.setattr(outputs, "_replace", replace)
    with pytest.raises(X.OutputError):
        X.publish(fake_result(roots / "second", notebook=b"other"), roots / "runs" / "smoke", out_root=roots / "runs")
    assert len(calls) == 2 and (nb.read_bytes(), claims.read_bytes()) == before
    assert not [p for p in roots.rglob(".*") if ".tmp-" in p.name or ".bak-" in p.name]


# ---------------------------------------------------------------------------------------------
# item 5: one line, never a traceback
def _read_only(folder: Path, monkeypatch):
    """Writes under ``folder`` fail as on a read-only file system (also as root)."""
    mkdir, tmpfile = Path.mkdir, tempfile.TemporaryFile

    def denied(path):
        return OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))

    def guarded_mkdir(self, *a, **kw):
        if str(self).startswith(str(folder)) and not self.exists():
            raise denied(self)
        return mkdir(self, *a, **kw)

    def guarded_tmpfile(*a, dir=None, **kw):
        if dir is not None and str(dir).startswith(str(folder)):
            raise denied(dir)
        return tmpfile(*a, dir=dir, **kw)

    monkeypatch.setattr(Path, "mkdir", guarded_mkdir)
    monkeypatch.setattr(tempfile, "TemporaryFile", guarded_tmpfile)


@pytest.mark.parametrize("where", ["tasks", "runs", "claims"])
def test_a_read_only_artifacts_folder_is_one_line_before_a_kernel_starts(roots, monkeypatch, capsys, where):
    _read_only(roots / where, monkeypatch)
    monkeypatch.setattr(X, "_execute_notebook", lambda *a: pytest.fail("a kernel was started"))
    assert cli.main([*RUN, "--out", str(roots / "runs")]) == 1
    err = one_line(capsys.readouterr().err)
    assert err.startswith(f"shallowflow: cannot write {roots / where}") and "read-only" in err.lower()


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores permission bits (the monkeypatched variant runs)")
def test_a_chmod_read_only_artifacts_folder_is_one_line(roots, capsys):
    (roots / "tasks").mkdir()
    os.chmod(roots / "tasks", 0o555)
    try:
        assert cli.main([*RUN, "--out", str(roots / "runs")]) == 1
        assert "Permission denied" in one_line(capsys.readouterr().err)
    finally:
        os.chmod(roots / "tasks", 0o755)


def test_a_read_only_sweep_folder_is_one_line_before_any_point_runs(roots, monkeypatch, capsys):
    _read_only(roots / "sweeps", monkeypatch)
    monkeypatch.setattr(X, "cluster", lambda *a, **k: pytest.fail("a cluster was started"))
    argv = ["sweep", CHAPTER, "--grid", "seeds", "[[0], [1]]", "-p", "animation_frames", "0",
            "--out", str(roots / "sweeps" / "table"), "--quiet"]
    assert cli.main(argv) == 1
    assert one_line(capsys.readouterr().err).startswith(f"shallowflow: cannot write {roots / 'sweeps'}")


def test_a_full_disk_when_publishing_a_run_is_one_line(roots, monkeypatch, capsys):
    result = fake_result(roots / "done", profile="custom")
    monkeypatch.setattr(X, "execute_task", lambda *a, **k: result)
    _enospc_for(str(roots / "out"), monkeypatch)
    assert cli.main([*RUN, "--out", str(roots / "out")]) == 1
    err = one_line(capsys.readouterr().err)
    assert "no space left on the device" in err and "nothing was published" in err
    assert not [p for p in roots.rglob("*") if ".tmp-" in p.name]


def test_a_full_disk_while_writing_the_sweep_table_is_one_line(roots, monkeypatch):
    import pandas as pd

    _enospc_for(".parquet", monkeypatch)
    with pytest.raises(X.OutputError, match="no space left.*the table was not written"):
        S.write(pd.DataFrame({"a": [1]}), roots / "t")
    assert not list(roots.glob("*t.*")) and not list(roots.glob(".*"))


BROKEN_SWEEP_FILES = {
    "python tag": "chapter: orthogonal-inputs/toy\ngrid: !!python/object/apply:os.system ['touch /tmp/x']\n",
    "a list document": "- chapter\n- grid\n",
    "grid is a list": "chapter: orthogonal-inputs/toy\ngrid: [1, 2]\n",
    "fixed is a list": "chapter: orthogonal-inputs/toy\nfixed: [1]\ngrid: {seeds: [[0]]}\n",
    "chapter is a list": "chapter: [a, b]\ngrid: {seeds: [[0]]}\n",
    "a grid of a scalar": "chapter: orthogonal-inputs/toy\ngrid: {seeds: 3}\n",
    "profile is unknown": "chapter: orthogonal-inputs/toy\nprofile: [x]\ngrid: {seeds: [[0]]}\n",
    "yaml syntax": "chapter: orthogonal-inputs/toy\ngrid: {seeds: [[0]\n",
    "binary bytes": b"\xff\xfe\x00\x01chapter\x80\x81",
    "a scalar document": "42\n",
    "missing": None,
    "a directory": "dir",
}


@pytest.mark.parametrize("name", list(BROKEN_SWEEP_FILES))
def test_every_broken_sweep_file_is_one_line_naming_it(tmp_path, capsys, name):
    content = BROKEN_SWEEP_FILES[name]
    path = tmp_path / "sweep.yml"
    if content == "dir":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    assert cli.main(["sweep", "--file", str(path)]) == 2
    err = one_line(capsys.readouterr().err)
    assert err.startswith(f"shallowflow: {path}") or str(path) in err, err


class SilentScheduler:
    """A TCP port that accepts connections and never says a word."""

    def __enter__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        return f"tcp://127.0.0.1:{self.sock.getsockname()[1]}"

    def __exit__(self, *exc):
        self.sock.close()


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_a_scheduler_that_does_not_answer_fails_fast_in_one_line(roots, monkeypatch, capfd, command):
    monkeypatch.setenv("SHALLOWFLOW_CONNECT_TIMEOUT", "1")
    with SilentScheduler() as address:
        argv = ([*RUN, "--out", str(roots / "runs")] if command == "run" else
                ["sweep", CHAPTER, "--grid", "seeds", "[[0]]", "-p", "animation_frames", "0", "--quiet",
                 "--out", str(roots / "t")])
        asked = []
        probe = X._cluster_mod._probe
        monkeypatch.setattr(X._cluster_mod, "_probe", lambda a, timeout: asked.append(timeout) or probe(a, timeout))
        t0 = time.monotonic()
        assert cli.main([*argv, "--scheduler", address]) == 2
        took = time.monotonic() - t0
    err = one_line(capfd.readouterr().err)
    assert f"no Dask scheduler answered at '{address}' within 1 s" in err
    assert asked == [1.0]  # the one wait is bounded by SHALLOWFLOW_CONNECT_TIMEOUT (the probe's own deadline)
    assert took < 300, took  # a guard against a hang only, never a speed goal


def test_a_malformed_scheduler_address_is_one_line(roots, capfd):
    assert cli.main([*RUN, "--out", str(roots / "runs"), "--scheduler", "nonsense://nowhere"]) == 2
    assert "no Dask scheduler answered at 'nonsense://nowhere'" in one_line(capfd.readouterr().err)


# ---------------------------------------------------------------------------------------------
# item 6: sweeps with bounds
def _cpu_s() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def test_a_yaml_alias_bomb_is_refused_before_it_expands(tmp_path, capsys, monkeypatch):
    lines = ["chapter: orthogonal-inputs/toy", "grid:", "  seeds: &a0 [[0], [1], [2], [3], [4], [5], [6], [7], [8]]"]
    lines += [f"  x{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, 12)]
    path = tmp_path / "bomb.yml"
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size < 2000
    monkeypatch.setattr(S, "expand", lambda *a, **k: pytest.fail("the grids were expanded"))
    t0 = _cpu_s()
    assert cli.main(["sweep", "--file", str(path)]) == 2
    assert _cpu_s() - t0 < 60  # generous CPU time (a fraction of a second here): nothing was expanded
    err = one_line(capsys.readouterr().err)
    assert "alias" in err and str(path) in err


def test_a_sweep_file_larger_than_the_bound_is_refused(tmp_path, capsys):
    path = tmp_path / "big.yml"
    path.write_text("chapter: orthogonal-inputs/toy\ngrid: {seeds: [" + ", ".join(["[0]"] * 300_000) + "]}\n")
    assert cli.main(["sweep", "--file", str(path)]) == 2
    assert "at most" in one_line(capsys.readouterr().err)


def test_a_grid_of_millions_of_points_is_refused_before_any_is_built(tmp_path, monkeypatch):
    monkeypatch.setattr(X, "prepare", lambda *a, **k: pytest.fail("a point was validated"))
    grids = {"seeds": [[i] for i in range(3400)], "width": list(range(3400))}
    monkeypatch.setattr(S, "expand", lambda *a, **k: pytest.fail("the grids were expanded"))
    with pytest.raises(X.ChapterError, match=r"more than 10,000 points \(3400 x 3400\)"):
        S.run(CHAPTER, grids, "smoke", {"animation_frames": 0}, root=tmp_path, out=tmp_path / "t")
    assert not list(tmp_path.iterdir())
    assert S.count({"a": list(range(100)), "b": list(range(100))}) == S.MAX_POINTS


@pytest.mark.parametrize("value", ["-1", "0", "abc", "1.5", str(10**9)])
@pytest.mark.parametrize("command", ["run", "sweep"])
def test_a_bad_worker_count_is_refused_in_one_line(capsys, command, value):
    argv = ["run", "--all", "--workers", value] if command == "run" else \
        ["sweep", CHAPTER, "--grid", "seeds", "[[0]]", "--workers", value]
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2
    err = one_line(capsys.readouterr().err)
    assert "--workers" in err and "whole number from 1 to" in err
    for bad in (0, -1, True, 10**9):
        with pytest.raises(X.ChapterError, match="--workers"):
            X.check_workers(bad)


@pytest.mark.parametrize("garbage", ["[]", "{}", "null", "42", '"text"', "not json", "", '{"chapter": 1}',
                                     '{"records": [], "key": "x"}'])
def test_a_cached_result_that_is_not_a_result_is_computed_again(tmp_path, monkeypatch, garbage):
    task = X.prepare(CHAPTER, "smoke", {"animation_frames": 0}, root=tmp_path / "tasks")
    task.dir.mkdir(parents=True)
    (task.dir / "result.json").write_text(garbage)
    assert X.read_result(task) is None
    executed = []

    def fake_execute(task_, out, progress):  # what a chapter writes: its notebook and its claim record
        executed.append(task_.key)
        out.write_text("{}")
        rec = {"source": "003", "chapter": f"book/{CHAPTER}", "profile": "smoke",
               "checks": [{"id": "E1/x", "measured": "1", "verdict": "pass"}]}
        claims = Path(os.environ["SHALLOWFLOW_CLAIMS_DIR"]) / "smoke"
        claims.mkdir(parents=True)
        (claims / "003__toy.json").write_text(json.dumps(rec))

    monkeypatch.setattr(X, "_execute_notebook", fake_execute)
    result = X.execute_task(task, force=False)
    assert executed == [task.key] and result["cached"] is False
    assert X.read_result(task)["key"] == task.key
    # the row of a sweep table is built from it
    assert S.row(1, {"seeds": [0]}, X.read_result(task))["E1/x verdict"] == "pass"


# ---------------------------------------------------------------------------------------------
# item 9: the site check without a browser says so in one line; with CI=true the browser is mandatory
@pytest.mark.parametrize("ci", ["", "true"])
def test_the_browser_check_is_skipped_in_one_line_without_chromium_unless_ci(tmp_path, ci):
    env = {k: v for k, v in os.environ.items() if k not in ("SHALLOWFLOW_CHROMIUM", "CI")}
    env.update(PATH=str(tmp_path), CI=ci)  # no chromium on PATH
    res = subprocess.run([sys.executable, "-m", "pytest", str(cli.repo_root() / "tests" / "site" / "test_browser.py"),
                          "-q", "-rs", "-x", "-p", "no:cacheprovider"], env=env, capture_output=True, text=True,
                         timeout=120, cwd=cli.repo_root())
    out = res.stdout + res.stderr
    if ci:
        assert res.returncode != 0 and "no chromium" in out, out[-2000:]
    else:
        assert res.returncode in (0, 5), out[-2000:]  # 5: this file alone, every test skipped (`make` runs all)
        lines = [line for line in out.splitlines() if "the browser check was skipped" in line]
        assert len(lines) == 1 and lines[0].startswith("SKIPPED"), out[-2000:]
