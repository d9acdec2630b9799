"""Hostile data files (issue 38: N1, N5, N15): every file a reader could pass as a ``DataFile`` value is refused in
one line or accepted, inside the memory limit, in bounded CPU time, and read once per validation.

Each file is read in a child forked from one driver subprocess (``_DRIVER``), which reports the child's own peak
RSS (``resource.getrusage``: its growth over the RSS it started with), its CPU time, the times the data file was
opened (an audit hook) and the outcome.  The memory limit is ``SHALLOWFLOW_MEMORY_GB`` = 1/32 (32 MiB); a file's
reading may take that plus ``SLACK`` (block buffers and numpy's parser).  CPU bounds are generous; no wall clock.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from shallowflow.params.datafile import DataFileError, read_xy

LIMIT_GB = 1 / 32
LIMIT = LIMIT_GB * 2 ** 30
SLACK = 24 * 2 ** 20  # over the child's starting RSS, beyond the limit: the blocks being parsed, numpy's buffers
CPU_S = 30.0  # generous: the largest file here is parsed in about a second of CPU on the 2-core CI machine
LIB = str(Path(__file__).resolve().parents[1] / "lib")

_DRIVER = r'''
import contextlib, io, json, os, resource, sys, traceback

jobs = json.loads(sys.stdin.read())
from shallowflow.params import datafile
from shallowflow.run import cli


def call(job):
    if "argv" in job:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = cli.main(job["argv"])
        return dict(rc=rc, out=out.getvalue(), err=err.getvalue())
    try:
        X, y = datafile.read_xy(job["path"], **job["kwargs"])
    except datafile.DataFileError as e:
        return dict(refused=str(e))
    return dict(X=list(X.shape), y=list(y.shape), X_head=X[:2].tolist(), y_head=y[:2].tolist())


for job in jobs["warm"]:  # imports every module the estimate path uses: a child's growth is then its file's
    call(job)
getattr(datafile, "forget", lambda: None)()  # (a file_info cache, where there is one)


def mem():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


results = []
for job in jobs["jobs"]:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            target = os.path.realpath(job["path"])
            opens = []
            sys.addaudithook(lambda ev, a: opens.append(1) if ev == "open" and isinstance(a[0], (str, bytes))
                             and os.path.realpath(os.fsdecode(a[0])) == target else None)
            u0, m0 = resource.getrusage(resource.RUSAGE_SELF), mem()
            try:
                res = call(job)
            except BaseException as e:  # noqa: BLE001 - what the test reports: a traceback is a failure
                res = dict(crash=f"{type(e).__name__}: {e}", tb=traceback.format_exc()[-2000:])
            u1 = resource.getrusage(resource.RUSAGE_SELF)
            res.update(name=job["name"], grew=mem() - m0, opens=len(opens),
                       cpu=(u1.ru_utime + u1.ru_stime) - (u0.ru_utime + u0.ru_stime))
            os.write(w, json.dumps(res).encode())
        finally:
            os._exit(0)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 1 << 16)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    results.append(json.loads(b"".join(chunks)) if chunks else dict(name=job["name"], crash=f"status {status}"))
print(json.dumps(results))
'''


def _drive(folder: Path, jobs: list, warm: list) -> dict:
    script = folder / "driver.py"
    script.write_text(_DRIVER)
    env = dict(os.environ, SHALLOWFLOW_MEMORY_GB=repr(LIMIT_GB), PYTHONPATH=LIB + os.pathsep +
               os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, str(script)], input=json.dumps(dict(jobs=jobs, warm=warm)),
                       capture_output=True, text=True, env=env, cwd=folder, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    return {r["name"]: r for r in json.loads(p.stdout.strip().splitlines()[-1])}


def _bounded(r: dict, base: float = 0.0) -> None:
    """No traceback; peak RSS grown by at most the limit and ``SLACK`` over ``base`` (what the same call grows by on
    a small file); CPU time bounded."""
    assert "crash" not in r, r
    assert r["grew"] <= base + LIMIT + SLACK, f"{r['name']}: peak RSS grew by {r['grew'] / 2 ** 20:.0f} MiB"
    assert r["cpu"] <= CPU_S, f"{r['name']}: {r['cpu']:.1f} s of CPU"


def _one_line(msg: str) -> None:
    assert msg and "\n" not in msg.strip() and len(msg) < 400 and "Traceback" not in msg, msg


# -- the hostile files ------------------------------------------------------------------------------------------
def _huge_rows(path: Path, row: bytes) -> Path:
    """As many rows as the size pre-check lets through at the test's limit (4 x size x copies <= the limit)."""
    n = int(LIMIT / 4 - 4096) // len(row)
    with open(path, "wb") as fh:
        for _ in range(8):
            fh.write(row * (n // 8))
    return path


def _zip_member_flag(path: Path, *, flag: int = 0, method: int | None = None) -> Path:
    """Set a general-purpose flag bit (1: encrypted) or the compression method of every member, in place."""
    data = bytearray(path.read_bytes())
    for sig, flag_at, method_at in ((b"PK\x03\x04", 6, 8), (b"PK\x01\x02", 8, 10)):
        i = data.find(sig)
        while i >= 0:
            data[i + flag_at] |= flag
            if method is not None:
                data[i + method_at:i + method_at + 2] = method.to_bytes(2, "little")
            i = data.find(sig, i + 4)
    path.write_bytes(bytes(data))
    return path


def _npy_bytes(shape, dtype="<f8", data: bytes = b"") -> bytes:
    header = repr({"descr": dtype, "fortran_order": False, "shape": tuple(shape)}).encode()
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + data


def _hostile(t: Path) -> dict:
    """name -> (path, expected: a substring of the refusal, or None for accepted, or a dict of shapes)."""
    t.mkdir(exist_ok=True)
    f = {}

    def text(name, s, expect, enc="utf-8"):
        (t / name).write_bytes(s.encode(enc) if isinstance(s, str) else s)
        f[name] = (t / name, expect)

    f["huge.csv"] = (_huge_rows(t / "huge.csv", b"1,1\n"), {"X": [int(LIMIT / 4 - 4096) // 4 // 8 * 8, 1]})
    text("bom.csv", "\ufeff" + "".join(f"{i},{i + 1},{i % 2}\n" for i in range(10)), {"X": [10, 2]})
    text("bom_header.csv", "\ufeffx1,x2,y\n" + "1,2,3\n" * 10, {"X": [10, 2]})
    text("blank_cell_first.csv", "1,,1\n" + "1,2,3\n" * 9, "line 1, column 2")
    text("mixed_header.csv", "x,1,y\n" + "1,2,3\n" * 9, "line 1, column 1")
    text("header_only.csv", "x1,x2,y\n", "0 rows")
    text("empty.csv", "", "0 rows")
    text("blank.csv", "  \n\t\n\n", "0 rows")
    text("ragged.csv", "1,2,3\n" * 200_000 + "4,5\n" + "1,2,3\n" * 10, "line 200001 has 2 columns")
    text("nan_late.csv", "1,2,3\n" * 200_000 + "1,nan,3\n", "X holds a NaN or an infinity at row 200000")
    text("inf_label.csv", "1,2,3\n" * 5 + "1,2,-inf\n", "y holds a NaN or an infinity at row 5")
    text("not_a_number_late.csv", "1,2,3\n" * 200_000 + "1,2,x3\n", "line 200001, column 3")
    text("latin1_late.csv", b"1,2,3\n" * 200_000 + "1,2,\u00e9\n".encode("latin-1"), "not UTF-8: line 200001")
    text("utf16.csv", "1,2\n3,4\n", "not UTF-8", enc="utf-16")
    text("one_long_line.csv", b"0," * (int(LIMIT / 4 - 4096) // 2), "longer than")
    text("wide_header.csv", ",".join(f"x{i}" for i in range(300)) + "\n" + ",".join(["1"] * 300) + "\n",
         "d = 299 columns")
    text("comments.csv", "# a comment\n1,2,3\n# another\n\n4,5,6\n", {"X": [2, 2]})
    text("cr_only.csv", "1,2,3\r4,5,6\r", {"X": [2, 2]})
    text("crlf.csv", "x,y\r\n1,2\r\n3,4\r\n", {"X": [2, 1]})
    text("trailing_comment.csv", "1,2,3 # no\n", "line 1, column 3")
    text("nul_bytes.csv", b"1,2,3\n\x00\x00\x00\n", "line 2")
    (t / "folder.csv").mkdir(exist_ok=True)
    f["folder.csv"] = (t / "folder.csv", "not a regular file")
    if hasattr(os, "mkfifo"):
        os.mkfifo(t / "fifo.csv")
        f["fifo.csv"] = (t / "fifo.csv", "not a regular file")
    (t / "loop.csv").symlink_to(t / "loop.csv")
    f["loop.csv"] = (t / "loop.csv", "")
    # .npz
    rows = int(0.8 * LIMIT / 8 / 64)
    np.savez_compressed(t / "bomb.npz", X=np.ones((rows, 63)), y=np.ones(rows))
    f["bomb.npz"] = (t / "bomb.npz", {"X": [rows, 63]})
    big = int(1.1 * LIMIT / 8 / 64)
    np.savez_compressed(t / "bomb_over.npz", X=np.zeros((big, 63)), y=np.zeros(big))
    f["bomb_over.npz"] = (t / "bomb_over.npz", "in memory, the limit is")
    np.savez(t / "object.npz", X=np.array([[object()] * 2] * 5, dtype=object), y=np.ones(5), allow_pickle=True)
    f["object.npz"] = (t / "object.npz", "expected real numbers")
    np.savez(t / "pickled_y.npz", X=np.ones((5, 2)), y=np.array([{"a": 1}] * 5, dtype=object))
    f["pickled_y.npz"] = (t / "pickled_y.npz", "expected real numbers")
    np.savez(t / "good.npz", X=np.random.default_rng(0).normal(size=(400, 4)), y=np.ones(400))
    data = (t / "good.npz").read_bytes()
    (t / "truncated.npz").write_bytes(data[: len(data) // 2])
    f["truncated.npz"] = (t / "truncated.npz", "truncated or corrupt")
    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 0xFF  # inside X's stored (uncompressed) numbers: only the CRC can tell
    (t / "flipped.npz").write_bytes(bytes(flipped))
    f["flipped.npz"] = (t / "flipped.npz", "truncated or corrupt")
    (t / "encrypted.npz").write_bytes(data)
    f["encrypted.npz"] = (_zip_member_flag(t / "encrypted.npz", flag=1), "truncated or corrupt")
    (t / "method.npz").write_bytes(data)
    f["method.npz"] = (_zip_member_flag(t / "method.npz", method=99), "truncated or corrupt")
    with zipfile.ZipFile(t / "short_data.npz", "w") as z:
        z.writestr("X.npy", _npy_bytes((100_000, 4), data=b"\0" * 100))
        z.writestr("y.npy", _npy_bytes((100_000,), data=b"\0" * 100))
    f["short_data.npz"] = (t / "short_data.npz", "truncated or corrupt")
    with zipfile.ZipFile(t / "huge_shape.npz", "w") as z:
        z.writestr("X.npy", _npy_bytes((10 ** 15, 50)))
        z.writestr("y.npy", _npy_bytes((10 ** 15,)))
    f["huge_shape.npz"] = (t / "huge_shape.npz", "in memory, the limit is")
    np.savez(t / "fortran.npz", X=np.asfortranarray(np.arange(12.0).reshape(4, 3)), y=np.arange(4, dtype=np.float32))
    f["fortran.npz"] = (t / "fortran.npz", {"X": [4, 3], "X_head": [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]],
                                            "y_head": [0.0, 1.0]})
    text("not_a_zip.npz", b"PK\x03\x04 garbage", "truncated or corrupt")
    text("empty.npz", b"", "truncated or corrupt")
    return f


def _check(name: str, expect, r: dict) -> None:
    _bounded(r)
    if isinstance(expect, dict):
        assert "refused" not in r, (name, r)
        for k, v in expect.items():
            assert r[k] == v, (name, k, r[k], v)
    else:
        assert "refused" in r, (name, r)
        _one_line(r["refused"])
        assert expect in r["refused"], (name, r["refused"])


CONDITIONING = ["run", "balboni-thesis/conditioning-at-init", "--profile", "smoke", "--estimate", "-p", "dataset"]
FAILURE_RATES = ["run", "early-alignment/failure-rates", "--profile", "smoke", "--estimate", "-p", "data"]
CLI_PICKS = ["blank_cell_first.csv", "ragged.csv", "latin1_late.csv", "one_long_line.csv", "folder.csv", "fifo.csv",
             "bomb_over.npz", "object.npz", "flipped.npz", "encrypted.npz", "short_data.npz"]


@pytest.fixture(scope="module")
def driven(tmp_path_factory):
    """Every file below read in its own forked child of one driver process (one interpreter start for the module):
    ``read_xy`` of each hostile file, and ``shallowflow run CHAPTER --estimate`` (the CLI's whole validation) of
    the N1/N15 files and a sample of the hostile ones."""
    t = tmp_path_factory.mktemp("datafiles")
    files = _hostile(t / "hostile")
    small = t / "small.csv"
    np.savetxt(small, np.random.default_rng(0).normal(size=(300, 5)), delimiter=",")
    zeros = _huge_rows(t / "zeros.csv", b"0,0\n")
    huge, bomb = files["huge.csv"][0], files["bomb.npz"][0]
    jobs = [dict(name=n, path=str(p), kwargs=dict(max_d=100)) for n, (p, _) in files.items()]
    jobs += [dict(name="zeros", path=str(zeros), kwargs={}),  # N1 as conditioning-at-init reads it: no row cap
             # N1 as failure-rates reads it: the row cap (10,000) stops the reading
             dict(name="zeros_capped", path=str(zeros), kwargs=dict(max_n=10_000, max_d=100, outputs=1))]
    cli = [dict(name="cli:small", path=str(small), argv=CONDITIONING + [str(small)]),
           dict(name="cli:small2", path=str(small), argv=FAILURE_RATES + [str(small)]),
           dict(name="cli:huge", path=str(huge), argv=CONDITIONING + [str(huge)]),
           dict(name="cli:bomb", path=str(bomb), argv=CONDITIONING + [str(bomb)]),
           dict(name="cli:capped", path=str(zeros), argv=FAILURE_RATES + [str(zeros)])]
    cli += [dict(name="cli:" + n, path=str(files[n][0]), argv=CONDITIONING + [str(files[n][0])])
            for n in CLI_PICKS if n in files]
    warm = [dict(name="warm", path=str(small), argv=CONDITIONING + [str(small)]),
            dict(name="warm2", path=str(small), argv=FAILURE_RATES + [str(small)])]
    return files, zeros, _drive(t, jobs + cli, warm)


def test_every_hostile_file_is_refused_in_one_line_or_accepted_within_the_limit(driven):
    files, _, out = driven
    wrong = []
    for n, (_, expect) in files.items():
        try:
            _check(n, expect, out[n])
        except AssertionError as e:
            wrong.append(str(e).splitlines()[0][:300])
    assert not wrong, "\n".join(wrong)
    assert out["huge.csv"]["opens"] == 1 and out["bomb.npz"]["opens"] == 1


def test_numpy_and_line_by_line_readings_agree(tmp_path):
    """A block numpy's parser reads and the same lines read one by one (a first line is always read so) give the
    same numbers or the same refusal: odd spellings of numbers, whitespace, signs."""
    tokens = ["1", "-0", "+1.5", ".5", "5.", "1e3", "1E-3", " 2 ", "\t3", "1_000", "0x10", "nan", "-inf", "Infinity",
              "1e400", "1.7976931348623157e308", "4.9e-324", "\u0661", "1,5", "1 2", "--1", "1e", "e1", "\u00a05"]
    pad = "9,9\n" * 200
    for i, tok in enumerate(tokens):
        first, later = tmp_path / f"first{i}.csv", tmp_path / f"later{i}.csv"
        first.write_text(f"{tok},7\n{pad}")
        later.write_text(f"{pad}{tok},7\n")
        try:
            a = read_xy(first)
        except DataFileError:
            with pytest.raises(DataFileError):
                read_xy(later)
            continue
        b = read_xy(later)
        assert a[0][0].tolist() == b[0][-1].tolist() and a[1][0] == b[1][-1], tok


# -- N1: a huge numeric CSV under the size pre-check -------------------------------------------------------------
def test_n1_a_huge_csv_is_one_float64_array_within_the_limit_and_stops_at_the_row_cap(driven):
    _, zeros, out = driven
    r = out["zeros"]
    _bounded(r)
    assert r["X"] == [zeros.stat().st_size // 4, 1] and r["opens"] == 1, r
    r = out["zeros_capped"]
    _bounded(r)
    assert "more than 10000 rows, at most 10000 are accepted" in r["refused"], r
    assert r["grew"] <= 8 * 2 ** 20, r  # stopped at the cap: a block, not the file


# -- N1 and N15 through the CLI: --estimate validates, reads once, inside the limit --------------------------------
def test_n1_n15_the_estimate_reads_a_data_file_once_inside_the_limit(driven):
    files, _, out = driven
    assert files["bomb.npz"][0].stat().st_size < LIMIT / 200  # a zip bomb: 1/1000 of what it expands to
    base = {k: out[k]["grew"] for k in ("cli:small", "cli:small2")}  # the estimate's own growth, on a small file
    assert max(base.values()) <= SLACK, base
    for name in ("cli:huge", "cli:bomb"):
        r = out[name]
        _bounded(r, base["cli:small"])
        assert r["rc"] == 0 and "where   this machine" in r["out"] and r["err"] == "", r
        assert r["opens"] == 1, f"{name}: the file was opened {r['opens']} times by one estimate"
    r = out["cli:capped"]
    _bounded(r, base["cli:small2"])
    assert r["rc"] == 2 and "more than 10000 rows" in r["err"], r
    assert r["grew"] <= base["cli:small2"] + 8 * 2 ** 20 and r["opens"] == 1, (r, base)
    for n in CLI_PICKS:
        if n not in files:
            continue
        r = out["cli:" + n]
        _bounded(r, base["cli:small"])
        assert r["rc"] == 2 and r["err"].startswith("shallowflow: ") and "'dataset'" in r["err"], (n, r)
        _one_line(r["err"])
        assert files[n][1] in r["err"], (n, r["err"])
        assert r["opens"] <= 1, (n, r["opens"])


# -- N5: a byte-order mark, a first row with an empty cell, the header taken -----------------------------------------
def test_n5_a_byte_order_mark_is_not_part_of_the_first_row(tmp_path):
    p = tmp_path / "bom.csv"
    p.write_text("\ufeff" + "".join(f"{i},{2 * i},{i % 2}\n" for i in range(10)), encoding="utf-8")
    X, y = read_xy(p)
    assert X.shape == (10, 2) and X[0].tolist() == [0.0, 0.0] and y.tolist() == [i % 2 for i in range(10)]
    q = tmp_path / "bom_sig.csv"
    q.write_text("x1,x2,y\n1,2,3\n", encoding="utf-8-sig")
    assert read_xy(q)[0].tolist() == [[1.0, 2.0]]


def test_n5_a_first_row_with_a_number_is_data_never_a_header(tmp_path):
    p = tmp_path / "gap.csv"
    p.write_text("1,,1\n" + "1,2,3\n" * 9)
    with pytest.raises(DataFileError, match=r"line 1, column 2: '' is not a number"):
        read_xy(p)
    q = tmp_path / "named.csv"
    q.write_text("x,1,y\n" + "1,2,3\n" * 9)
    with pytest.raises(DataFileError, match="line 1, column 1: 'x' is not a number"):
        read_xy(q)
    r = tmp_path / "same_later.csv"
    r.write_text("1,2,3\n1,,1\n")
    with pytest.raises(DataFileError, match="line 2, column 2"):
        read_xy(r)


def test_n5_the_run_says_which_header_it_took(tmp_path, capsys):
    from shallowflow.params import PROFILE, DataFile, validate

    schema = {"profile": PROFILE, "data": DataFile("inputs", names=("digits",), min_n=2, max_d=8)}
    p = tmp_path / "named.csv"
    p.write_text("# made by hand\nx1,x2,label\n1,2,3\n4,5,6\n")
    assert validate({"profile": "book", "data": str(p)}, schema).data == str(p.resolve())
    said = capsys.readouterr().out
    assert "line 2 of named.csv, 'x1,x2,label', taken as the header" in said
    q = tmp_path / "plain.csv"
    q.write_text("1,2,3\n4,5,6\n")
    validate({"profile": "book", "data": str(q)}, schema)
    assert "header" not in capsys.readouterr().out


# -- N15 and N1 in one process: the chapter's rules ask the validation's answer, they never read again ---------------
def _count_opens(monkeypatch, path: Path) -> list:
    """Every open() of ``path`` from now on (numpy's and zipfile's too) appends to the list returned."""
    import builtins
    import io

    opened, real, target = [], builtins.open, os.path.realpath(path)

    def counting(file, *a, **k):
        if isinstance(file, (str, bytes, os.PathLike)) and os.path.realpath(os.fsdecode(file)) == target:
            opened.append(1)
        return real(file, *a, **k)

    monkeypatch.setattr(builtins, "open", counting)
    monkeypatch.setattr(io, "open", counting)  # zipfile's
    return opened


def test_validation_reads_a_file_once_however_many_rules_ask(tmp_path, monkeypatch):
    from shallowflow.experiments.balboni_thesis import conditioning_at_init as C
    from shallowflow.experiments.early_alignment import failure_rates as F
    from shallowflow.params import validate

    p = tmp_path / "x.npz"
    np.savez_compressed(p, X=np.ones((300, 6)), y=np.ones(300))
    opened = _count_opens(monkeypatch, p)
    assert validate({"dataset": str(p)}, {"dataset": C.SCHEMA["dataset"]}, plan=False).dataset == str(p)
    for _ in range(3):
        assert C._file_rows(str(p)) == 300 and C._file_info(str(p)) == (300, 0)
    assert len(opened) == 1, f"the .npz was opened {len(opened)} times"
    c = tmp_path / "x.csv"
    c.write_text("1,2,1\n" * 50)
    opened = _count_opens(monkeypatch, c)
    assert validate({"data": str(c)}, {"data": F.SCHEMA["data"]}, plan=False).data == str(c)
    assert (F.data_dim(str(c)), F.data_size(str(c)), F.data_dim(str(c))) == (2, 50, 2)
    assert len(opened) == 1, f"the .csv was opened {len(opened)} times"
    c.write_text("1,2,3,1\n" * 40)  # another file at the same path: read again
    assert (F.data_dim(str(c)), F.data_size(str(c))) == (3, 40)
    assert len(opened) == 3  # (the write above, and the one reading)
