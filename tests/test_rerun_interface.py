"""Issue 29: the re-run interface's mechanisms -- one section at a time (``params.Sections``, checks of the
skipped parts reported as not run), the number of runs behind each check, and data files (``params.DataFile``,
``data.load_xy``)."""
import json

import pytest

from shallowflow import verdicts as C
from shallowflow.params import PROFILE, ParameterError, Sections, validate

SEC = {"profile": PROFILE, "sections": Sections("the parts to run", choices=("fig3", "fig4", "capacity"))}


def test_sections_accepts_distinct_names_in_the_choices_order():
    P = validate({"profile": "book", "sections": ["capacity", "fig3"]}, SEC)
    assert P.sections == ["fig3", "capacity"]
    assert validate({"profile": "book", "sections": ("fig4",)}, SEC).sections == ["fig4"]


@pytest.mark.parametrize("value,why", [
    ([], "at least 1"), (["fig3", "fig3"], "given twice"), (["fig5"], "item 0"), ("fig3", "expected a list"),
    ([3], "item 0"), (None, "expected a list"), (["fig3", None], "item 1"), (["x"] * 20_000, "20000 items"),
])
def test_sections_refuses_in_one_line_naming_the_parameter(value, why):
    with pytest.raises(ParameterError) as e:
        validate({"profile": "book", "sections": value}, SEC)
    msg = str(e.value)
    assert "'sections'" in msg and "\n" not in msg and len(msg) < 400
    assert why in msg or "distinct names from 'fig3', 'fig4', 'capacity'" in msg


def test_sections_spec_needs_distinct_names():
    with pytest.raises(ValueError):
        Sections("x", choices=("a", "a"))
    with pytest.raises(ValueError):
        Sections("x", choices=())


def test_a_run_whose_sections_differ_from_its_profile_is_custom(capsys):
    cell = 'profile = "book"  # which verdicts\nsections = ["fig3", "fig4", "capacity"]  # parts\n'
    same = validate({"In": [cell, '# Parameters\nsections = ["capacity", "fig4", "fig3"]\n'], "profile": "book",
                     "sections": ["capacity", "fig4", "fig3"]}, SEC)
    assert same.profile == "book"  # the same names in another order: the profile's run
    one = validate({"In": [cell, '# Parameters\nsections = ["fig4"]\n'], "profile": "book", "sections": ["fig4"]}, SEC)
    assert one.profile == "custom" and "sections" in capsys.readouterr().out


@pytest.fixture
def registry(tmp_path, monkeypatch):
    (tmp_path / "verdicts").mkdir()
    (tmp_path / "verdicts" / "999.yml").write_text(
        "source: {seed: x.txt}\ntargets:\n  T:\n    chapter: book/ch\n    checks:\n"
        "      a: {book: pass, smoke: pass}\n"
        "      b: {book: pass, smoke: pass}\n"
        "      c: {book: pass, smoke: pass, chapter: book/other}\n"
        "  U:\n    chapter: book/ch\n    checks:\n      d: {book: pass, smoke: not-run}\n")
    monkeypatch.setenv("SHALLOWFLOW_ROOT", str(tmp_path))
    return tmp_path


def _record(root, profile):
    return json.loads((root / "artifacts" / "claims" / profile / "999__book__ch.json").read_text())


@pytest.mark.parametrize("profile", ["custom", "paper"])
def test_skipped_checks_are_listed_as_not_run_without_failing(registry, profile):
    c = C.Claims("999", "book/ch", profile, sections=["fig3"], sections_all=("fig3", "fig4"))
    c.check("T/a", "x small", [1e-3, 2e-3], C.below(1e-2), valid=[True, True])
    c.finish()  # b and d did not run: listed, not a failure
    rec = _record(registry, profile)
    assert [x["id"] for x in rec["checks"]] == ["T/a"] and rec["checks"][0]["runs"] == 2
    skipped = {x["id"]: x for x in rec["not_run"]}
    assert set(skipped) == {"T/b", "U/d"}  # T/c belongs to another chapter
    assert all(x["verdict"] == "not-run" and x["runs"] is None for x in skipped.values())
    assert skipped["T/b"]["note"].startswith("section skipped") and "fig4" in skipped["T/b"]["note"]
    report = c.report()
    assert "NOT-RUN  T/b" in report and "section skipped" in report
    assert "T/b" in c._repr_html_()


def test_not_run_note_without_sections(registry):
    c = C.Claims("999", "book/ch", "custom")
    c.check("T/a", "x", 1e-3, C.below(1e-2), valid=C.NO_TRAINING)
    c.finish()
    rec = _record(registry, "custom")
    assert rec["checks"][0]["runs"] is None
    assert {x["note"] for x in rec["not_run"]} == {"not run in this run"}


def test_compared_profiles_still_fail_on_a_missing_check(registry):
    c = C.Claims("999", "book/ch", "book")
    c.check("T/a", "x", 1e-3, C.below(1e-2), valid=C.NO_TRAINING)
    assert c.not_run() == []
    with pytest.raises(C.VerdictMismatch, match="T/b is registered for this chapter but was not checked"):
        c.finish()


# ------------------------------------------------------------------------------------------------
# data files: params.DataFile, datafile.read_xy, data.load_xy
import os  # noqa: E402
import zipfile  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from shallowflow.engine import data as D  # noqa: E402
from shallowflow.params.datafile import DataFileError, read_xy  # noqa: E402
from shallowflow.params import DataFile  # noqa: E402

DATA = {"profile": PROFILE, "data": DataFile("inputs", names=("digits", "correlated"), min_n=4, max_d=8)}


def _npz(path, X, y):
    np.savez(path, X=np.asarray(X), y=np.asarray(y))
    return path


def _bytes(path, data: bytes):
    path.write_bytes(data)
    return path


def _text(path, text: str):
    path.write_text(text)
    return path


def _validate(value):
    return validate({"profile": "book", "data": value}, DATA).data


def _refused(value) -> str:
    with pytest.raises(ParameterError) as e:
        _validate(value)
    msg = str(e.value)
    assert "'data'" in msg and "\n" not in msg and len(msg) < 400, msg
    return msg


def test_a_named_data_set_or_a_good_file_is_accepted(tmp_path):
    assert _validate("digits") == "digits"
    X = np.arange(15.0).reshape(5, 3)
    p = _npz(tmp_path / "good.npz", X, np.ones(5))
    assert _validate(str(p)) == str(p.resolve())
    Xt, yt = D.load_xy(p)
    assert Xt.dtype == torch.float64 and yt.dtype == torch.float64 and Xt.shape == (5, 3) and yt.shape == (5,)
    assert torch.equal(Xt, torch.as_tensor(X))
    k = _npz(tmp_path / "multi.npz", X, np.ones((5, 2)))
    assert D.load_xy(k)[1].shape == (5, 2)
    c = tmp_path / "good.csv"
    c.write_text("x1,x2,y\n" + "\n".join(f"{i},{i * 2}.5,{-i}" for i in range(6)) + "\n")
    assert _validate(str(c)) == str(c.resolve())
    Xc, yc = D.load_xy(c)
    assert Xc.shape == (6, 2) and yc.tolist() == [0.0, -1.0, -2.0, -3.0, -4.0, -5.0]
    c2 = tmp_path / "noheader.csv"
    c2.write_text("1,2,3\n4,5,6\n7,8,9\n1,1,1\n")
    assert D.from_file(c2).X.shape == (4, 2) and D.from_file(c2).name == "noheader"


def test_a_file_in_a_read_only_folder_is_read(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    p = _npz(folder / "x.npz", np.ones((4, 2)), np.zeros(4))
    folder.chmod(0o555)
    try:
        assert _validate(str(p)) == str(p)
    finally:
        folder.chmod(0o755)


@pytest.mark.parametrize("make,expect", [
    (lambda t: t / "missing.npz", "does not exist"),
    (lambda t: (t / "dir.npz").mkdir() or t / "dir.npz", "not a regular file"),
    (lambda t: _npz(t / "nan.npz", [[1.0, 2.0]] * 3 + [[np.nan, 1.0]] + [[0.0, 0.0]], np.ones(5)), "NaN or an infinity at row 3"),
    (lambda t: _npz(t / "inf.npz", np.ones((5, 2)), [0, 0, np.inf, 0, 0]), "y holds a NaN or an infinity at row 2"),
    (lambda t: _npz(t / "small.npz", np.ones((3, 2)), np.ones(3)), "3 rows, at least 4"),
    (lambda t: _npz(t / "wide.npz", np.ones((5, 9)), np.ones(5)), "d = 9 columns, expected 1 to 8"),
    (lambda t: _npz(t / "flat.npz", np.ones(5), np.ones(5)), "X has shape (5,)"),
    (lambda t: _npz(t / "rows.npz", np.ones((5, 2)), np.ones(4)), "X has 5 rows and y has 4"),
    (lambda t: _npz(t / "cube.npz", np.ones((5, 2)), np.ones((5, 2, 2))), "y has shape (5, 2, 2)"),
    (lambda t: _npz(t / "text.npz", np.array([["a", "b"]] * 5), np.ones(5)), "expected real numbers"),
    (lambda t: (np.savez(t / "nox.npz", A=np.ones((5, 2)), y=np.ones(5)), t / "nox.npz")[1], "no array X"),
    (lambda t: _bytes(t / "garbage.npz", b"not a zip at all"), "truncated or corrupt"),
    (lambda t: _text(t / "bad.csv", "1,2,3\n4,x,6\n7,8,9\n1,1,1\n"), "line 2, column 2"),
    (lambda t: _text(t / "ragged.csv", "1,2,3\n4,5\n7,8,9\n1,1,1\n"), "line 2 has 2 columns"),
    (lambda t: _text(t / "one.csv", "1\n2\n3\n4\n5\n"), "at least 2 columns"),
    (lambda t: _text(t / "nan.csv", "1,2,3\n4,5,6\n7,nan,9\n1,1,1\n"), "X holds a NaN or an infinity at row 2"),
    (lambda t: _text(t / "empty.csv", ""), "0 rows"),
    (lambda t: _bytes(t / "latin.csv", b"\xff\xfe1,2\n"), "not UTF-8"),
    (lambda t: t / "x.txt", "expected one of 'digits', 'correlated', or a path"),
])
def test_bad_files_are_refused_in_one_line(tmp_path, make, expect):
    assert expect in _refused(str(make(tmp_path)))


def test_a_truncated_npz_is_refused(tmp_path):
    good = _npz(tmp_path / "good.npz", np.random.default_rng(0).normal(size=(200, 4)), np.ones(200))
    data = good.read_bytes()
    for cut in (len(data) // 2, len(data) - 30, 40):
        bad = tmp_path / f"cut{cut}.npz"
        bad.write_bytes(data[:cut])
        assert "truncated or corrupt" in _refused(str(bad))


def test_a_file_too_large_for_the_memory_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    p = _npz(tmp_path / "big.npz", np.zeros((1000, 8)), np.zeros(1000))
    monkeypatch.setenv("SHALLOWFLOW_MEMORY_GB", str(40_000 / 2 ** 30))
    assert "in memory, the limit is" in _refused(str(p))
    c = tmp_path / "big.csv"
    c.write_text("0,0\n" * 20_000)
    assert "memory limit" in _refused(str(c))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_refused(tmp_path):
    p = _npz(tmp_path / "secret.npz", np.ones((5, 2)), np.ones(5))
    p.chmod(0)
    assert "permission denied" in _refused(str(p))


def test_required_dimension_and_outputs(tmp_path):
    p = _npz(tmp_path / "x.npz", np.ones((5, 3)), np.ones((5, 1)))
    with pytest.raises(DataFileError, match="d = 3 columns, this chapter needs d = 2"):
        read_xy(p, d=2)
    with pytest.raises(DataFileError, match="y has 1 column"):
        read_xy(p, outputs=2)
    assert read_xy(p, d=3, outputs=1)[1].shape == (5,)
    with pytest.raises(DataFileError, match="must end in .npz or .csv"):
        read_xy(tmp_path / "x.json")


def test_data_file_spec_and_task_key_follow_the_file(tmp_path):
    with pytest.raises(ValueError):
        DataFile("x", names=("a.npz",))
    from shallowflow import executor as X

    p = _npz(tmp_path / "x.npz", np.ones((5, 3)), np.ones(5))
    stamps = X._input_stamps(DATA, {"data": str(p)})
    assert list(stamps) == [str(p)] and X._input_stamps(DATA, {"data": "digits"}) == {}


# ------------------------------------------------------------------------------------------------
# the dry plan (issue 29 item 6): a chapter's plan(P) runs after the rules, before a kernel starts
def test_a_combination_the_chapter_cannot_run_is_refused_by_its_plan_before_a_kernel_starts(tmp_path):
    from shallowflow import executor as X

    # the rule compares lrs with 1e-3 at np.isclose's default tolerance, the chapter selects runs to 1e-9
    with pytest.raises(X.ChapterError, match=r"'lrs', 'scales' and 'fig33_scale' are inconsistent.*1e-9 relative"):
        X.prepare("brisbois-thesis/width-grid", "smoke", {"lrs": [1.00001e-3]}, root=tmp_path)
    with pytest.raises(X.ChapterError, match="'complexity_scales' .* needs a lambda <= 1e-4"):
        X.prepare("brisbois-thesis/balancedness-complexity", "smoke", {"complexity_scales": [1e-3, 1.0, 10.0]},
                  root=tmp_path)
    assert not list(tmp_path.iterdir())


def test_dry_plan_turns_a_crash_into_one_line_and_skips_modules_without_plan():
    import types

    from shallowflow.params import dry_plan

    dry_plan(types.SimpleNamespace(), None)  # no plan: nothing to do
    broken = types.SimpleNamespace(plan=lambda P: [][0])
    with pytest.raises(ParameterError, match=r"dry plan fails on them \(IndexError: .*missing rule"):
        dry_plan(broken, None)
