"""Issue 41, item 9 (a leftover): the re-run box's papermill line is the same custom run as its CLI line, the seeds
included (papermill's ``-p`` reads a number or a word, so a list goes in as YAML, ``-y``).  Each box's line is read
as papermill itself reads it and compared with the CLI line's values; the 003 toy's line is executed for real (with
the smoke profile's file, ``-f``, under the box's values) and its claims record carries the box's seeds."""
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from shallowflow import executor as X
from shallowflow.run import cli
from shallowflow.site import rerun

from test_shown_commands import _box_commands  # noqa: E402  (the box's commands as the page shows them)

CHAPTERS = [c for c in X.chapters() if c != "scorecard"]
ROOT = cli.repo_root()


def papermill_values(argv: list[str]) -> dict:
    """The parameters papermill's CLI gives the notebook for these arguments (its ``-y`` then ``-p`` order)."""
    from papermill.cli import _resolve_type

    values, pairs = {}, []
    i = 0
    while i < len(argv):
        if argv[i] == "-y":
            values.update(yaml.safe_load(argv[i + 1]))
            i += 2
        elif argv[i] == "-p":
            pairs.append((argv[i + 1], _resolve_type(argv[i + 2])))
            i += 3
        else:
            i += 1
    values.update(pairs)
    return values


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_papermill_line_is_the_cli_custom_run(chapter):
    commands = [c for c, _ in _box_commands(chapter)]
    pm = [c for c in commands if c.startswith("papermill ")]
    assert pm == [rerun.papermill_run(chapter)]
    cmd, overrides = rerun.custom_run(chapter)
    cli_argv = shlex.split(cmd)
    cli_values = {cli_argv[i + 1]: cli.parse_value(cli_argv[i + 2]) for i, a in enumerate(cli_argv) if a == "-p"}
    assert cli_values == overrides
    assert papermill_values(shlex.split(pm[0])) == {"profile": "custom", **overrides}
    declared = X.parameters(chapter)
    assert set(overrides) <= set(declared)


def test_the_toy_papermill_line_runs_and_its_record_carries_the_seeds(tmp_path):
    chapter = "orthogonal-inputs/toy"
    _, overrides = rerun.custom_run(chapter)
    assert overrides.get("seeds")
    bin_ = Path(sys.executable).parent
    env = {**os.environ, "SHALLOWFLOW_CLAIMS_DIR": str(tmp_path / "claims"), "SHALLOWFLOW_PROGRESS": "0",
           "PYTHONPATH": str(ROOT / "lib")}
    commands = [c for c, _ in _box_commands(chapter)]
    jt = shlex.split(next(c for c in commands if c.startswith("jupytext ")))
    jt[jt.index("-o") + 1] = str(tmp_path / "chapter.ipynb")
    subprocess.run([str(bin_ / "jupytext"), *jt[1:]], cwd=ROOT, env=env, check=True, capture_output=True, timeout=120)
    smoke = {k: v for k, v in X.profile_values(chapter, "smoke").items() if k != "profile"}
    smoke["animation_frames"] = 0
    (tmp_path / "smoke.yml").write_text(yaml.safe_dump(smoke))
    pm = shlex.split(rerun.papermill_run(chapter))
    pm[1], pm[2] = str(tmp_path / "chapter.ipynb"), str(tmp_path / "out.ipynb")
    # the smaller parameter file first; the box's own values (the seeds) override it, as papermill orders them
    res = subprocess.run([str(bin_ / "papermill"), *pm[1:3], "-f", str(tmp_path / "smoke.yml"), *pm[3:],
                          "--cwd", str(ROOT / "book" / "orthogonal-inputs")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    records = [json.loads(p.read_text()) for p in (tmp_path / "claims").rglob("*.json")]
    assert records and all(r["profile"] == "custom" for r in records)
    nb = json.loads((tmp_path / "out.ipynb").read_text())
    injected = "".join("".join(c["source"]) for c in nb["cells"] if "injected-parameters" in c["metadata"].get("tags", []))
    assert re.search(rf"seeds = {re.escape(str(overrides['seeds']))}", injected), injected
