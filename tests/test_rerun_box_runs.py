"""Issue 41, item 9: each chapter's re-run box gives one complete custom run (a parameter, the chapter's seeds
replaced, the check table as JSON), its ``--estimate`` line and what that line prints; every ``shallowflow run``
command a box shows is executed here, with ``--estimate`` (the validation and the cost, no kernel: cheap), and the
003 toy's custom run, the reader test's example, is executed for real at smoke with its ``--json``."""
import json
import shlex

import pytest

from shallowflow import executor as X
from shallowflow.run import cli
from shallowflow.site import rerun

from test_shown_commands import _box_commands  # noqa: E402  (the box's commands as the page shows them)

CHAPTERS = [c for c in X.chapters() if c != "scorecard"]


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """The runs' tasks and claim records in the test's own folder; the source's scale validated against a large
    node's limits (as tests/test_shown_commands.py)."""
    monkeypatch.setenv("SHALLOWFLOW_TASKS_DIR", str(tmp_path / "tasks"))
    monkeypatch.setenv("SHALLOWFLOW_CLAIMS_DIR", str(tmp_path / "claims"))
    monkeypatch.setenv("SHALLOWFLOW_MEMORY_GB", "64")
    monkeypatch.setenv("SHALLOWFLOW_WORK_BUDGET", "1e16")
    monkeypatch.setenv("SHALLOWFLOW_PROGRESS", "0")
    return tmp_path


def _run_argv(cmd: str) -> list[str]:
    argv = shlex.split(cmd)
    assert argv[0] == "shallowflow"
    return argv[1:]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_box_gives_a_complete_custom_run_and_its_estimate(chapter):
    commands = [c for c, _ in _box_commands(chapter)]
    custom = [c for c in commands if " --json " in c]
    assert len(custom) == 1, f"{chapter}: one custom run with --json, got {custom}"
    cmd, overrides = rerun.custom_run(chapter)
    assert custom == [cmd]
    if not any("seed" in n and isinstance(v, list) for n, v in overrides.items()):
        from shallowflow.params import chapters

        assert not [d for d in chapters.parameters_cell(chapter) if "seed" in d.name and isinstance(d.value, list)
                    and d.value], f"{chapter}: the custom run leaves the seeds out"
    assert f"{cmd.split(' --json ')[0]} --estimate" in commands, f"{chapter}: no --estimate line for the custom run"
    box = rerun.rerun_box(chapter)
    assert "sf-estimate" in box and "Cost." in box


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_run_command_of_the_box_executes_with_estimate(chapter, sandbox, capsys):
    runs = [c for c, _ in _box_commands(chapter) if c.startswith("shallowflow run ")]
    assert runs
    for cmd in runs:
        argv = _run_argv(cmd)
        if "--estimate" not in argv:
            argv.append("--estimate")
        rc = cli.main(argv)
        out = capsys.readouterr()
        assert rc == 0, f"{cmd} --estimate: exit {rc}: {out.err.strip()[-500:]}"
        assert "no kernel started" in out.out


def test_the_toy_custom_run_executes_at_smoke_and_writes_its_json(sandbox, capsys):
    cmd, overrides = rerun.custom_run("orthogonal-inputs/toy")
    argv = _run_argv(cmd)
    out_json = sandbox / "toy-checks.json"
    argv[argv.index("--json") + 1] = str(out_json)  # the shown file name, in the test's folder
    argv += ["--profile", "smoke", "-p", "animation_frames", "0", "--out", str(sandbox / "runs"), "--quiet"]
    assert cli.main(argv) == 0, capsys.readouterr().err[-2000:]
    doc = json.loads(out_json.read_text())
    assert doc["chapter"] == "orthogonal-inputs/toy" and doc["profile"] == "custom" and doc["checks"]
    assert doc["values"]["seeds"] == overrides["seeds"] and doc["values"]["width"] == overrides["width"]
