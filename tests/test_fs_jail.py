"""Nothing outside the repository (or an explicit --out) is deleted or replaced (issue 38, rows N3, N8, N9 and
"Nothing outside").

Each test works in a repository of its own under tmp_path (``SHALLOWFLOW_ROOT``: its book, params, verdicts and
lib are links to this checkout's, read only), so that its ``artifacts/`` can be made a link out of it.  Canary
files outside (a planted earlier-run task folder, an existing notebook, claim records, a sweep table, a
checkpoint) must be untouched after ``run``, ``run --all``, ``sweep`` and the Makefile's clean steps.  A refused
run is refused before a kernel (or a cluster) starts: the tests replace both with a function that fails the
test.  The runs that execute use the cheapest chapter with seeds and verdicts (about 4 s).
"""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from shallowflow.run import cli
from shallowflow import outputs
from shallowflow import executor as X
from shallowflow.executor import tasks as T
from shallowflow.site import build

RUN_CHAPTER = "synthesis/pl-conditioning"
CHECKOUT = cli.repo_root()
OLD_KEY = "fedcba9876543210"
# what a linked root must leave alone, relative to artifacts/
CANARIES = {
    f"tasks/{RUN_CHAPTER}/smoke-{OLD_KEY}/result.json": json.dumps({"chapter": RUN_CHAPTER, "key": OLD_KEY}),
    f"tasks/{RUN_CHAPTER}/smoke-{OLD_KEY}/pl-conditioning.ipynb": "an earlier run's notebook",
    f"runs/smoke/{RUN_CHAPTER}.ipynb": "an existing notebook",
    "runs/book/build-report.json": "an existing report",
    "claims/smoke/canary.json": "an existing record",
    "claims/book/canary.json": "an existing record",
    f"sweeps/{RUN_CHAPTER}/canary.csv": "an existing table",
    "checkpoints/canary/chunk.pt": "an existing checkpoint",
    "scorecard/smoke.json": "an existing scorecard",
}


def deep_json(depth: int = 200_000) -> str:
    return "[" * depth + "]" * depth


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A repository of its own; the roots are its artifacts/ (no SHALLOWFLOW_TASKS_DIR, _CLAIMS_DIR, _CHECKPOINTS)."""
    fake = tmp_path / "repo"
    fake.mkdir()
    for name in ("book", "params", "verdicts", "lib", "Makefile", "pyproject.toml"):
        (fake / name).symlink_to(CHECKOUT / name)
    monkeypatch.setenv("SHALLOWFLOW_ROOT", str(fake))
    for name in ("SHALLOWFLOW_TASKS_DIR", "SHALLOWFLOW_CLAIMS_DIR", "SHALLOWFLOW_CHECKPOINTS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CI", "true")
    assert cli.repo_root() == fake
    return fake


def link_out(repo: Path, link: str) -> Path:
    """Make ``repo/link`` (``artifacts`` or a folder below it) a link to a folder outside the repository
    holding the canaries that lie below ``link``; returns that folder."""
    outside = repo.parent / "outside" / link.replace("/", "-")
    if not Path(link).is_relative_to("artifacts"):  # _build: an earlier site
        (outside / "smoke" / "_build" / "html").mkdir(parents=True)
        (outside / "smoke" / "_build" / "html" / "index.html").write_text("an earlier site")
    below = Path(link).relative_to("artifacts") if Path(link).is_relative_to("artifacts") else None
    for rel, text in CANARIES.items():
        if below is not None and Path(rel).is_relative_to(below):
            dest = outside / Path(rel).relative_to(below)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text)
    outside.mkdir(parents=True, exist_ok=True)
    (repo / link).parent.mkdir(parents=True, exist_ok=True)
    (repo / link).symlink_to(outside, target_is_directory=True)
    return outside


def snapshot(folder: Path) -> dict:
    """Every entry below ``folder`` (folders too), with the bytes of each file."""
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


def one_line(err: str) -> str:
    err = err.strip()
    assert err and "\n" not in err and "Traceback" not in err, err
    return err


@pytest.fixture
def no_kernel(monkeypatch):
    """A refused run starts no kernel and no cluster: either fails the test."""
    def kernel(*a, **k):
        raise AssertionError("a kernel was started")

    def cluster(*a, **k):
        raise AssertionError("a cluster was started")

    monkeypatch.setattr(T, "_execute_notebook", kernel)
    monkeypatch.setattr(T, "_execute_direct", kernel)
    monkeypatch.setattr(X, "cluster", cluster)
    monkeypatch.setattr(build, "cluster", cluster)


# ---------------------------------------------------------------------------------------------
# N3: a root that is itself a link out of the repository is refused (the link is not the jail)
@pytest.mark.parametrize("link", ["artifacts", "artifacts/tasks", "artifacts/runs", "artifacts/runs/smoke",
                                  "artifacts/claims", "artifacts/claims/smoke"])
def test_run_refuses_a_root_linked_out_of_the_repository(repo, link, no_kernel, capsys):
    outside = link_out(repo, link)
    before = snapshot(outside)
    assert cli.main(["run", RUN_CHAPTER, "--profile", "smoke", "--quiet", "--no-table"]) == 1
    err = one_line(capsys.readouterr().err)
    assert "refusing to write" in err and f"{repo / link} is a symlink to {outside}" in err, err
    # outside the repository, or (a link below a root) outside the root: artifacts/claims
    assert err.endswith(f"outside the repository {repo}" if link != "artifacts/claims/smoke"
                        else f"outside {repo / 'artifacts/claims'}"), err
    assert snapshot(outside) == before


@pytest.mark.parametrize("link", ["artifacts/runs/smoke", "artifacts/scorecard", "_build"])
def test_run_all_refuses_a_linked_output_folder_before_any_kernel(repo, link, no_kernel, capsys):
    outside = link_out(repo, link)
    before = snapshot(outside)
    assert cli.main(["run", "--all", "--profile", "smoke", "--quiet"]) == 1
    err = one_line(capsys.readouterr().err)
    assert f"{repo / link} is a symlink to {outside}" in err, err
    assert snapshot(outside) == before


@pytest.mark.parametrize("link", ["artifacts", "artifacts/tasks", "artifacts/sweeps"])
def test_sweep_refuses_a_root_linked_out_of_the_repository(repo, link, no_kernel, capsys):
    outside = link_out(repo, link)
    before = snapshot(outside)
    assert cli.main(["sweep", RUN_CHAPTER, "--grid", "seeds", "[[0], [1]]", "--quiet", "--no-table"]) == 1
    err = one_line(capsys.readouterr().err)
    assert f"{repo / link} is a symlink to {outside}" in err, err
    assert snapshot(outside) == before


def test_an_explicit_out_may_be_a_link_and_a_link_inside_the_repository_is_followed(repo, tmp_path):
    """The folder the user names (--out, SHALLOWFLOW_TASKS_DIR outside the repository) is theirs, links and all;
    a root linked to another folder of the repository stays inside it."""
    (tmp_path / "mine").mkdir()
    (tmp_path / "chosen").symlink_to(tmp_path / "mine")
    assert outputs.safe_path(tmp_path / "chosen" / "x.ipynb", tmp_path / "chosen") == tmp_path / "chosen" / "x.ipynb"
    (repo / "elsewhere").mkdir()
    (repo / "artifacts").mkdir()
    (repo / "artifacts" / "tasks").symlink_to(repo / "elsewhere")
    p = repo / "artifacts" / "tasks" / "a" / "b"
    assert outputs.safe_path(p, repo / "artifacts" / "tasks") == p


def test_a_checkpoint_folder_linked_out_is_not_used(repo, capsys):
    from shallowflow.engine import checkpoint

    outside = link_out(repo, "artifacts/checkpoints")
    before = snapshot(outside)
    assert checkpoint.resumable("synthesis/canary", dict(a=1), [1, 2], lambda c: c * 2) == [2, 4]
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "checkpoints off for synthesis/canary" in out and "is a symlink to" in out, out
    assert snapshot(outside) == before


# ---------------------------------------------------------------------------------------------
# N8: a result.json nested too deep for the parser is not a result: recomputed, or skipped
def test_a_deeply_nested_cached_result_counts_as_absent(repo):
    task = X.prepare(RUN_CHAPTER, "smoke", {"seeds": [0]})
    task.dir.mkdir(parents=True)
    (task.dir / "result.json").write_text(deep_json())
    assert X.read_result(task) is None


def test_a_deeply_nested_earlier_result_is_skipped_when_superseding(repo):
    task = X.prepare(RUN_CHAPTER, "smoke")
    old = task.dir.with_name(f"smoke-{OLD_KEY}")
    old.mkdir(parents=True)
    (old / "result.json").write_text(deep_json())
    task.dir.mkdir()
    X._supersede(dict(dir=str(task.dir), chapter=task.chapter, profile=task.profile))
    assert (old / "result.json").read_text() == deep_json()


# ---------------------------------------------------------------------------------------------
# N9: --json through a link out of its folder is refused before the kernel starts
def test_json_through_a_link_to_another_folder_is_refused_before_the_kernel(repo, tmp_path, no_kernel, capsys):
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "v.json").write_text("someone else's file")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "v.json").symlink_to(tmp_path / "other" / "v.json")
    assert cli.main(["run", RUN_CHAPTER, "--profile", "smoke", "--quiet", "--json", str(tmp_path / "mine" / "v.json")]
                    ) == 1
    err = one_line(capsys.readouterr().err)
    assert "refusing to write" in err and f"{tmp_path / 'mine' / 'v.json'} is a symlink to" in err, err
    assert (tmp_path / "other" / "v.json").read_text() == "someone else's file"
    # the same inside the repository, through a linked folder: refused before any point of a sweep
    (repo / "jl").symlink_to(tmp_path / "other")
    assert cli.main(["sweep", RUN_CHAPTER, "--grid", "seeds", "[[0]]", "--quiet", "--json", str(repo / "jl" / "v.json")]
                    ) == 1
    assert f"{repo / 'jl'} is a symlink to" in one_line(capsys.readouterr().err)
    assert (tmp_path / "other" / "v.json").read_text() == "someone else's file"


# ---------------------------------------------------------------------------------------------
# what executes: a published smoke run over a deeply nested earlier result; a resumed sweep over a deeply nested
# cached point, with the roots it does not write linked out of the repository
def test_a_smoke_run_publishes_beside_a_deeply_nested_earlier_result(repo, capsys):
    task = X.prepare(RUN_CHAPTER, "smoke")
    old = task.dir.with_name(f"smoke-{OLD_KEY}")
    old.mkdir(parents=True)
    (old / "result.json").write_text(deep_json())
    (repo / "inside").mkdir()
    (repo / "artifacts" / "runs").symlink_to(repo / "inside")  # a link inside the repository is fine
    assert cli.main(["run", RUN_CHAPTER, "--profile", "smoke", "--quiet", "--no-table"]) == 0, capsys.readouterr().err
    assert (repo / "inside" / "smoke" / f"{RUN_CHAPTER}.ipynb").is_file()
    assert (old / "result.json").read_text() == deep_json() and (task.dir / "result.json").is_file()
    assert list((repo / "artifacts" / "claims" / "smoke").glob("*.json"))


def test_a_resumed_sweep_recomputes_a_deeply_nested_point_and_touches_nothing_outside(repo):
    from dask.distributed import Client

    from shallowflow.run import sweep as S

    links = {link: link_out(repo, link) for link in ("artifacts/claims", "artifacts/runs", "artifacts/checkpoints")}
    before = {link: snapshot(o) for link, o in links.items()}
    task = X.prepare(RUN_CHAPTER, "smoke", {"seeds": [0]})
    task.dir.mkdir(parents=True)
    (task.dir / "result.json").write_text(deep_json())
    # a worker thread of this process (no worker process to start: the sweep and its files are under test), and
    # a dashboard on a free port (8787 may be taken)
    with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0") as client:
        df, errors, (csv, _), _ = S.run(RUN_CHAPTER, {"seeds": [[0]]}, "smoke", client=client, resume=True)
    assert errors == {} and not df["cached"].any(), errors
    assert X.read_result(task) is not None and csv.is_relative_to(repo / "artifacts" / "sweeps")
    assert {link: snapshot(o) for link, o in links.items()} == before


# ---------------------------------------------------------------------------------------------
# the Makefile's clean steps (make book, make test-smoke), as `make -n` prints them, run in the repository
def clean_step(repo: Path, target: str, marker: str) -> str:
    if shutil.which("make") is None:
        pytest.skip("no make")
    venv = Path(sys.executable).parent.parent
    res = subprocess.run(["make", "-n", "-s", "-C", str(repo), f"VENV={venv}", "-o", f"{venv}/.ready", target],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    line = next(line for line in res.stdout.splitlines() if marker in line)
    return line


@pytest.mark.parametrize("link", ["artifacts", "artifacts/runs", "artifacts/claims", "artifacts/runs/book",
                                  "artifacts/claims/book", "artifacts/runs/smoke"])
def test_the_clean_steps_delete_nothing_outside_the_repository(repo, link):
    outside = link_out(repo, link)
    before = snapshot(outside)
    (repo / "_build").mkdir()
    (repo / "_build" / "old.html").write_text("an earlier site")
    for step in (clean_step(repo, "book", "artifacts/claims/book"),
                 clean_step(repo, "test-smoke", "artifacts/claims/smoke")):
        res = subprocess.run(step, shell=True, cwd=repo, capture_output=True, text=True, timeout=60)
        if link in ("artifacts", "artifacts/runs", "artifacts/claims"):  # rm -rf would follow the link on the way
            assert res.returncode == 2 and f"{repo / link} is a symlink to {outside}" in one_line(res.stderr)
            assert "nothing was removed" in res.stderr and (repo / link).is_symlink() and (repo / "_build").is_dir()
        else:  # a link at the path itself: the link goes, not what it points to
            assert res.returncode == 0, res.stderr
    assert snapshot(outside) == before
    if link.endswith(("/book", "/smoke")):
        assert not (repo / link).exists() and not (repo / link).is_symlink() and not (repo / "_build").exists()


def test_remove_is_rm_rf_inside_the_repository(repo):
    (repo / "artifacts" / "runs" / "book" / "sub").mkdir(parents=True)
    (repo / "artifacts" / "runs" / "book" / "sub" / "x").write_text("x")
    (repo / "target").mkdir()
    (repo / "artifacts" / "runs" / "book" / "sub" / "link").symlink_to(repo / "target")
    book, missing = repo / "artifacts" / "runs" / "book", repo / "artifacts" / "missing"
    assert outputs.main(["remove", "--inside", str(repo), str(book), str(missing)]) == 0
    assert not (repo / "artifacts" / "runs" / "book").exists() and (repo / "target").is_dir()
    assert outputs.main(["remove", "--inside", str(repo), str(repo.parent)]) == 2
    assert repo.is_dir()
    assert outputs.main(["remove"]) == 2
