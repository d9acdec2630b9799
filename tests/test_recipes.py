"""Issue 39, item 4: the source's scale where this machine cannot go.  Each recipe (:mod:`shallowflow.executor.recipes`)
is one command for a GPU machine and one for a Dask cluster, shown in its chapter's re-run box with the figures it rests
on; here every shown recipe command is executed end to end on the CPU at a reduced size: the same command with the
smoke profile's smaller parameter file in place of the paper one, ``--device cpu`` in place of ``cuda`` and a
LocalCluster's address in place of the placeholder, reaching the claims record (the ``--json`` check table).  The
machine flags (``--device``, ``--work-budget``, ``--memory-gb``) are refused in one line when bad, documented in
``--help``, and must reach the kernel on the worker: the cluster's workers are started with budgets too small for any
run, so a run passes only if the command's flags travel with the task."""
import json
import os
import re
import shlex
from pathlib import Path

import pytest

from shallowflow import executor as X
from shallowflow import params as _params
from shallowflow.executor import recipes as R
from shallowflow.executor.cluster import SCHEDULER_KWARGS
from shallowflow.run import cli
from shallowflow.site import rerun

ROOT = cli.repo_root()
TINY = {"SHALLOWFLOW_WORK_BUDGET": "1", "SHALLOWFLOW_MEMORY_GB": "1e-6"}  # below any run's work and memory


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    monkeypatch.setenv("SHALLOWFLOW_TASKS_DIR", str(tmp_path / "tasks"))
    monkeypatch.setenv("SHALLOWFLOW_CLAIMS_DIR", str(tmp_path / "claims"))
    monkeypatch.setenv("SHALLOWFLOW_PROGRESS", "0")
    monkeypatch.delenv("SHALLOWFLOW_DEVICE", raising=False)
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    return tmp_path


# ------------------------------------------------------------------------------------------------
# the flags
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("flag, value", [("--work-budget", "abc"), ("--work-budget", "0"), ("--work-budget", "-1"),
                                         ("--work-budget", "inf"), ("--work-budget", "nan"), ("--work-budget", "1e19"),
                                         ("--memory-gb", "0"), ("--memory-gb", "x"), ("--memory-gb", "1e7"),
                                         ("--device", "gpu"), ("--device", "cuda:x"), ("--device", "")])
def test_a_bad_machine_flag_is_refused_in_one_line(flag, value, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["run", "orthogonal-inputs/toy", flag, value, "--estimate"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and len(err.strip().splitlines()) == 1 and flag in err, err


def test_the_machine_flags_are_documented_in_help(capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for flag, var in (("--device", "SHALLOWFLOW_DEVICE"), ("--work-budget", "SHALLOWFLOW_WORK_BUDGET"),
                      ("--memory-gb", "SHALLOWFLOW_MEMORY_GB")):
        assert flag in out and var in out


def test_the_budget_flags_win_over_the_environment_and_leave_it_as_it_was(sandbox, monkeypatch, capsys):
    for k, v in TINY.items():
        monkeypatch.setenv(k, v)
    argv = ["run", "early-alignment/staircase", "--profile", "smoke", "--estimate"]
    assert cli.main(argv) == 2 and "budget" in capsys.readouterr().err
    assert cli.main(argv + ["--work-budget", "1e14", "--memory-gb", "4"]) == 0
    assert "within the work budget 1e+14" in capsys.readouterr().out
    assert {k: os.environ[k] for k in TINY} == TINY


def test_a_device_that_is_not_here_is_refused_before_a_kernel_starts(sandbox, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is visible here")
    assert cli.main(["run", "orthogonal-inputs/toy", "--profile", "smoke", "--device", "cuda", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "SHALLOWFLOW_DEVICE" in err and len(err.strip().splitlines()) == 1
    assert not (sandbox / "tasks").exists() or not any((sandbox / "tasks").rglob("result.json"))


def test_run_all_on_a_scheduler_refuses_machine_flags(capsys):
    assert cli.main(["run", "--all", "--scheduler", "tcp://127.0.0.1:1", "--work-budget", "1e15"]) == 2
    assert "--work-budget" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------------
# the recipes and their figures
# ------------------------------------------------------------------------------------------------
def test_the_recipes_are_the_runs_this_machines_rules_refuse():
    assert set(R.RECIPES) == {"early-alignment/staircase", "balboni-thesis/adler", "balboni-thesis/pl-training"}
    for chapter in R.RECIPES:
        assert (ROOT / "params" / "paper" / f"{chapter}.yml").exists()


@pytest.mark.parametrize("chapter", sorted(R.RECIPES))
def test_a_recipes_figures_are_the_chapters_own_estimates(chapter, monkeypatch):
    for k in TINY:
        monkeypatch.delenv(k, raising=False)
    from shallowflow.executor import estimate as E

    p = R.plan(chapter)
    est = E.estimate(chapter, "paper", dict(p.recipe.overrides))
    assert (p.work, p.memory, p.seconds) == (est.work, est.memory, est.seconds)
    assert p.work_budget >= p.work and p.memory_gb * 2 ** 30 >= p.memory  # rounded up, never below
    assert p.work_budget <= 1.1 * p.work and p.memory_gb * 2 ** 30 <= p.memory + 2 ** 30
    # the default work budget refuses the run exactly when the command names a larger one
    assert ("--work-budget" in p.gpu) == (p.work > _params.WORK_BUDGET)
    text = " ".join(R.describe(p))
    assert f"{p.work:.3g} units" in text and "Rule.work" in text and "Rule.memory" in text
    # the flags' values make the run fit; below the figures it is refused by the same rule
    base = shlex.split(p.gpu)[1:] + ["--estimate"]
    assert cli.main(base) == 0
    half = [a if i == 0 or base[i - 1] != "--memory-gb" else str(p.memory / 2 ** 30 / 2) for i, a in enumerate(base)]
    assert cli.main(half) == 2


@pytest.mark.parametrize("chapter", sorted(R.RECIPES))
def test_the_gpu_flag_is_given_where_the_chapter_computes_on_its_device(chapter):
    """``--device cuda`` only for a chapter whose experiment module uses the kernel's device (``default_device``)."""
    source, name = chapter.split("/")
    module = ROOT / "lib" / "shallowflow" / "experiments" / source.replace("-", "_") / f"{name.replace('-', '_')}.py"
    uses = "default_device" in module.read_text()
    assert R.RECIPES[chapter].device == uses
    assert ("--device cuda" in R.plan(chapter).gpu) == uses


def test_a_chapter_without_a_recipe_is_refused():
    with pytest.raises(X.ChapterError, match="no recipe"):
        R.plan("orthogonal-inputs/toy")


@pytest.mark.parametrize("chapter", sorted(R.RECIPES) + ["orthogonal-inputs/toy"])
def test_the_box_shows_the_recipe_and_its_figures(chapter):
    box = rerun.rerun_box(chapter)
    if chapter not in R.RECIPES:
        assert "sf-recipe" not in box
        return
    import html

    p = R.plan(chapter)
    pre = html.unescape(re.search(r"<pre[^>]*>(.*?)</pre>", box, re.S).group(1))
    for cmd in p.commands():
        assert cmd in pre and html.escape(cmd) in box
    figures = re.search(r"<ul class='sf-recipe-figures'>(.*?)</ul>", box, re.S).group(1)
    for line in R.describe(p):
        assert html.escape(line) in figures
    assert "`" not in figures and "$" not in figures


# ------------------------------------------------------------------------------------------------
# every shown recipe command, end to end at a reduced size on the CPU
# ------------------------------------------------------------------------------------------------
def _reduced(cmd: str, address: str, out: Path) -> list[str]:
    """The shown command at the smoke profile's smaller parameter file, on the CPU, on the test's cluster."""
    argv = shlex.split(cmd)[1:]
    assert argv[argv.index("--profile") + 1] == "paper"
    argv[argv.index("--profile") + 1] = "smoke"
    if "--device" in argv:
        argv[argv.index("--device") + 1] = "cpu"
    if "--scheduler" in argv:
        assert argv[argv.index("--scheduler") + 1] == R.SCHEDULER
        argv[argv.index("--scheduler") + 1] = address
    return argv + ["--json", str(out / "checks.json"), "--out", str(out / "runs"), "--quiet", "--no-table"]


@pytest.fixture
def tiny_cluster(sandbox, monkeypatch, request):
    """One worker process whose environment's budgets, those the chapter's commands name, are below any run's (the
    flags must reach its kernel); this process has them too (the flags must win here as well)."""
    import logging

    from distributed import LocalCluster

    p = R.plan(request.node.callspec.params["chapter"])
    flags = {"SHALLOWFLOW_WORK_BUDGET": "--work-budget", "SHALLOWFLOW_MEMORY_GB": "--memory-gb"}
    for k, v in TINY.items():
        if all(flags[k] in c for c in p.commands()):
            monkeypatch.setenv(k, v)
        else:
            monkeypatch.delenv(k, raising=False)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, memory_limit=0, dashboard_address=None,
                      silence_logs=logging.CRITICAL, host="127.0.0.1", scheduler_kwargs=SCHEDULER_KWARGS) as lc:
        yield lc.scheduler_address


#: the recipe run end to end: the one whose commands carry every machine flag (``--device`` too). The commands of
#: every recipe are built by the same :meth:`~shallowflow.executor.recipes.Plan.commands` and pass through the same
#: CLI path; the others run to their validation with ``--estimate`` below (a chapter at smoke through a cluster is
#: about 30 s of the test command's 300).
END_TO_END = "balboni-thesis/pl-training"


@pytest.mark.parametrize("chapter", sorted(R.RECIPES))
def test_every_recipe_command_is_accepted_with_its_flags_and_refused_without_them(chapter, sandbox, monkeypatch,
                                                                                   capsys):
    """Every shown command, run with ``--estimate`` (the CLI validates values, device and budgets, then stops before a
    kernel), at the paper scale it names: accepted with the command's flags; where a flag is what makes it fit, the
    same command without the flags is refused by this machine's rules."""
    for k in TINY:
        monkeypatch.delenv(k, raising=False)
    p = R.plan(chapter)
    assert chapter == END_TO_END or not R.RECIPES[chapter].device  # the end-to-end run covers --device
    for cmd in p.commands():
        argv = shlex.split(cmd)[1:]
        if "--device" in argv:
            argv[argv.index("--device") + 1] = "cpu"
        if "--scheduler" in argv:
            i = argv.index("--scheduler")
            del argv[i:i + 2]
        assert cli.main(argv + ["--estimate"]) == 0, capsys.readouterr().err
        capsys.readouterr()
        bare, skip = [], False
        for a in argv:
            if skip:
                skip = False
            elif a in ("--work-budget", "--memory-gb"):
                skip = True
            else:
                bare.append(a)
        if bare != argv:
            assert cli.main(bare + ["--estimate"]) == 2
            err = capsys.readouterr().err  # refused in one line by the rule the flag lifts
            assert len(err.strip().splitlines()) == 1 and ("SHALLOWFLOW_WORK_BUDGET" in err
                                                           or "SHALLOWFLOW_MEMORY_GB" in err), err


@pytest.mark.parametrize("chapter", [END_TO_END])
def test_every_recipe_command_runs_at_a_reduced_size_and_reaches_the_claims_record(chapter, tiny_cluster, sandbox,
                                                                                     capsys):
    p = R.plan(chapter)
    for i, cmd in enumerate(p.commands()):
        out = sandbox / f"cmd{i}"
        out.mkdir()
        argv = _reduced(cmd, tiny_cluster, out)
        rc = cli.main(argv)
        io = capsys.readouterr()
        assert rc == 0, f"{' '.join(argv)}: exit {rc}: {io.err.strip()[-1500:]}"
        doc = json.loads((out / "checks.json").read_text())
        assert doc["chapter"] == chapter and doc["checks"], doc
        smoke = X.profile_values(chapter, "smoke")
        for n, v in {**smoke, **p.recipe.overrides}.items():
            if n != "profile":
                assert doc["values"][n] == v, n
        assert list((out / "runs").rglob("*.ipynb"))
    assert all(os.environ.get(k) in (None, v) for k, v in TINY.items())  # the flags set the run's, not this process's
    assert os.environ.get("SHALLOWFLOW_MEMORY_GB") == TINY["SHALLOWFLOW_MEMORY_GB"]  # every recipe names its memory


@pytest.mark.parametrize("chapter", sorted(R.RECIPES) + ["orthogonal-inputs/toy"])
def test_the_cost_line_points_at_the_recipe_with_its_work_and_cpu_time(chapter):
    from shallowflow.site.ext import cost_html

    line = cost_html(chapter, "book/" + chapter.split("/")[0])
    if chapter not in R.RECIPES:
        assert "Beyond this machine" not in line
        return
    p = R.plan(chapter)
    assert "Beyond this machine" in line and f"{p.work:.3g} work units" in line and "on one CPU kernel" in line
