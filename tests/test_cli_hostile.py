"""The hostile tester's third round, parameters, sweeps and the CLI (issue 38 rows N4, N6, N7, N10-N14).

Nothing here executes a chapter: every command is refused before a kernel starts, or only validates.  Cost is
bounded by CPU time (``resource.getrusage``) or by counting the expensive operation, never by the wall clock;
no test depends on a free port (N11 asserts that the local scheduler asks for none).
"""
from __future__ import annotations

import importlib
import resource
import socket
import warnings

import pytest

from shallowflow.run import cli
from shallowflow import params
from shallowflow import executor as X
from shallowflow.run import sweep as S
from shallowflow.executor import estimate as E

CHAPTER = "orthogonal-inputs/toy"


def one_line(err: str, limit: int = 1000) -> str:
    err = err.strip()
    assert err and "\n" not in err and "Traceback" not in err and len(err) <= limit, err[:2000]
    return err


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def module(chapter: str):
    part, name = chapter.split("/")
    return importlib.import_module(f"shallowflow.experiments.{part.replace('-', '_')}.{name.replace('-', '_')}")


# ---------------------------------------------------------------------------------------------
# N4: --estimate refuses a budget's refusal as run does, without the dry plan run never reaches
@pytest.mark.parametrize("chapter,name,values", [
    ("brisbois-thesis/width-grid", "widths", list(range(1, 10_001))),
    ("brisbois-thesis/balancedness-complexity", "balance_scales", [10 ** -(1 + i / 2000) for i in range(10_000)]),
])
def test_estimate_of_a_grid_over_the_budgets_is_refused_as_run_refuses(roots, capsys, monkeypatch, chapter, name,
                                                                         values):
    text = str(values)
    assert cli.main(["run", chapter, "-p", name, text, "--out", str(roots / "runs")]) == 2
    refused = one_line(capsys.readouterr().err)
    assert "inconsistent" in refused and "must f" in refused  # a budget (memory or work), before the dry plan
    monkeypatch.setattr(module(chapter), "plan", lambda P: pytest.fail("--estimate ran the dry plan"))
    t0 = cpu_s()
    assert cli.main(["run", chapter, "-p", name, text, "--estimate"]) == 2
    assert cpu_s() - t0 < 120  # generous: about 5 CPU-s here; the quadratic plan took hours
    out, err = capsys.readouterr()
    assert one_line(err) == refused and "a GPU or a cluster" in out
    assert not (roots / "runs").exists()


def test_the_balancedness_dry_plan_is_linear_in_its_scales(monkeypatch):
    """Its lookups go through an exact index: Ensemble.runs (a scan of every run) is not called per scale."""
    mod = module("brisbois-thesis/balancedness-complexity")
    task = X.prepare("brisbois-thesis/balancedness-complexity", "smoke", {}, budgets=False)
    sch, rules = X.schema(task.chapter)
    calls = []
    from shallowflow.experiments.brisbois_thesis import common as Cm

    scan = Cm.Ensemble.runs
    monkeypatch.setattr(Cm.Ensemble, "runs", lambda self, **w: calls.append(w) or scan(self, **w))
    for n in (10, 400):
        values = {**task.values, "balance_scales": [10 ** -(1 + i / 100) for i in range(n)]}
        P = params.validate(values, sch, [r for r in rules if r.kind is None], plan=False)
        calls.clear()
        mod.plan(P)
        assert len(calls) <= 4, (n, len(calls))  # was 1 + n + n x seeds scans of n x seeds x 2 runs


def test_the_width_grid_dry_plan_selects_once_whatever_the_widths(monkeypatch):
    mod = module("brisbois-thesis/width-grid")
    task = X.prepare("brisbois-thesis/width-grid", "smoke", {}, budgets=False)
    sch, rules = X.schema(task.chapter)
    calls = []
    select = mod.select
    monkeypatch.setattr(mod, "select", lambda rows, **w: calls.append(w) or select(rows, **w))
    counts = []
    for n in (3, 60):
        values = {**task.values, "widths": sorted({*range(1, n + 1), 60})}
        P = params.validate(values, sch, [r for r in rules if r.kind is None], plan=False)
        calls.clear()
        mod.plan(P)
        counts.append(len(calls))
    assert counts[0] == counts[1], counts  # was one selection per width and step size


# ---------------------------------------------------------------------------------------------
# N6: a list of seeds has distinct items, in every chapter
def seeds_parameters():
    from shallowflow.executor.common import chapters, schema

    out = []
    for c in chapters():
        sch, _ = schema(c) if c != "scorecard" else (None, ())
        for name, spec in (sch or {}).items():
            if spec.kind == "ints" and "seed" in name:
                out.append((c, name, spec))
    return out


SEEDS = seeds_parameters()


def test_every_seeds_list_of_the_book_is_found():
    names = {n for _, n, _ in SEEDS}
    assert {"seeds", "sat_seeds", "law_seeds", "fl_seeds", "seeds_c"} <= names and len(SEEDS) > 40


@pytest.mark.parametrize("chapter,name,spec", SEEDS, ids=[f"{c}:{n}" for c, n, _ in SEEDS])
def test_a_duplicate_seed_is_refused_in_one_line(chapter, name, spec):
    v = int(spec.low or 0)
    with pytest.raises(params.ParameterError) as e:
        params.check(name, [v, v + 1, v], spec)
    msg = one_line(str(e.value), 400)
    assert repr(name) in msg and "duplicate seeds" in msg and f"seed {v} " in msg
    assert params.check(name, [v, v + 1, v + 2][:spec.max_len], spec)  # distinct seeds are accepted


def test_duplicate_seeds_on_the_command_line_are_refused_before_a_kernel(roots, capsys):
    assert cli.main(["run", CHAPTER, "--profile", "smoke", "-p", "seeds", "[0, 0, 0]", "--estimate"]) == 2
    assert "duplicate seeds" in one_line(capsys.readouterr().err)
    assert cli.main(["run", CHAPTER, "--profile", "smoke", "-p", "seeds", "[0, 0, 0]",
                     "--out", str(roots / "runs")]) == 2
    assert "duplicate seeds" in one_line(capsys.readouterr().err) and not (roots / "runs").exists()


def test_distinct_is_only_the_default_of_seeds_lists():
    assert params.check("widths", [3, 3], params.Ints(low=1)) == [3, 3]
    with pytest.raises(params.ParameterError, match="duplicate values"):
        params.check("widths", [3, 3], params.Ints(low=1, distinct=True))
    assert params.check("seeds", [3, 3], params.Ints(distinct=False)) == [3, 3]
    with pytest.raises(params.ParameterError, match=r"duplicate values \(value 1 is given again at item 1\)"):
        params.check("xs", [1, 1], params.Seeds())


# ---------------------------------------------------------------------------------------------
# N7, N13: broken sweep files, one line naming the file
def sweep_file(tmp_path, text: str, name: str = "sweep.yml"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("case", ["deep-100000", "deep-40", "long-integer", "duplicate-grid", "duplicate-name",
                                  "duplicate-fixed"])
def test_a_broken_sweep_file_is_one_line_naming_it(tmp_path, capsys, monkeypatch, case):
    monkeypatch.setattr(X, "prepare", lambda *a, **k: pytest.fail("a point was validated"))
    head = f"chapter: {CHAPTER}\n"
    text = {
        "deep-100000": head + "grid: {seeds: " + "[" * 100_000 + "]" * 100_000 + "}\n",
        "deep-40": head + "grid: {seeds: " + "[" * 40 + "]" * 40 + "}\n",
        "long-integer": head + "grid: {seeds: [[" + "7" * 5000 + "]]}\n",
        "duplicate-grid": head + "grid:\n  seeds: [[0]]\ngrid:\n  seeds: [[1]]\n",
        "duplicate-name": head + "grid:\n  seeds: [[0]]\n  lr: [0.1]\n  seeds: [[1]]\n",
        "duplicate-fixed": head + "fixed: {lr: 0.1, lr: 0.2}\ngrid: {seeds: [[0]]}\n",
    }[case]
    path = sweep_file(tmp_path, text)
    assert cli.main(["sweep", "--file", str(path)]) == 2
    err = one_line(capsys.readouterr().err, 400)
    assert str(path) in err and "not a valid sweep file" in err
    if case.startswith("duplicate"):
        key = {"duplicate-grid": "'grid'", "duplicate-name": "'seeds'", "duplicate-fixed": "'lr'"}[case]
        assert f"the key {key} is given twice" in err
    if case == "deep-40":
        assert f"nested more than {S.MAX_DEPTH} deep" in err


# ---------------------------------------------------------------------------------------------
# N10: unknown names refused, shortly, before the grids are expanded
def test_a_sweep_of_thousands_of_unknown_names_is_refused_shortly_before_expansion(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(X, "prepare", lambda *a, **k: pytest.fail("a point was validated"))
    monkeypatch.setattr(S, "expand", lambda *a, **k: pytest.fail("the grids were expanded"))
    text = f"chapter: {CHAPTER}\ngrid:\n" + "".join(f"  n{i}: [1]\n" for i in range(6_000))
    path = sweep_file(tmp_path, text)
    assert cli.main(["sweep", "--file", str(path)]) == 2
    err = one_line(capsys.readouterr().err, 600)
    assert "unknown grid parameter(s) 'n0', 'n1', 'n2', 'n3', 'n4' and 5,995 more" in err
    with pytest.raises(X.ChapterError) as e:  # 60,000 names (the file's own parsing is the same, 10 times longer)
        S.run(CHAPTER, {f"n{i}": [1] for i in range(60_000)}, "smoke", root=tmp_path, out=tmp_path / "t")
    assert "unknown grid parameter(s) 'n0', 'n1', 'n2', 'n3', 'n4' and 59,995 more" in one_line(str(e.value), 600)


def test_unknown_fixed_names_and_many_grids_are_short_too(tmp_path, monkeypatch):
    monkeypatch.setattr(X, "prepare", lambda *a, **k: pytest.fail("a point was validated"))
    with pytest.raises(X.ChapterError, match="unknown fixed parameter") as e:
        S.plan(CHAPTER, {"seeds": [[0]]}, "smoke", {f"x{i}": 1 for i in range(1000)}, root=tmp_path)
    one_line(str(e.value), 600)
    with pytest.raises(X.ChapterError, match=r"more than 10,000 points \(2 x 2 x 2 x 2 x 2 x 2 x 2 x 2 x \.\.\. "
                                             r"\(60,000 grids\)\)") as e:
        S.count({f"n{i}": [1, 2] for i in range(60_000)})
    one_line(str(e.value), 300)


def test_many_unknown_override_names_are_listed_shortly():
    with pytest.raises(X.ChapterError, match="and 4,990 more") as e:
        X.prepare(CHAPTER, "smoke", {f"zz{i}": 1 for i in range(5000)})
    one_line(str(e.value), 1000)


# ---------------------------------------------------------------------------------------------
# N11: the local cluster starts no dashboard and asks for no fixed port
def _cluster_quietly():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with X.cluster(workers=1) as client:
            spec = client.cluster.scheduler_spec["options"]
            port = client.cluster.scheduler.http_server.port
            assert client.submit(sum, [40, 2]).result() == 42
    return spec, port, [str(w.message) for w in caught]


def test_a_local_cluster_starts_no_dashboard_and_needs_no_free_port():
    taken = socket.socket()
    try:  # 8787 held here when it is free (else someone holds it already): either way it is taken
        taken.bind(("127.0.0.1", 8787))
        taken.listen(1)
    except OSError:
        pass
    try:
        spec, port, caught = _cluster_quietly()
    finally:
        taken.close()
    assert spec["dashboard"] is False and spec["dashboard_address"].endswith(":0"), spec
    assert port != 8787
    assert not [m for m in caught if "already in use" in m or "dashboard" in m.lower()], caught


# ---------------------------------------------------------------------------------------------
# N12: an empty scheduler address is refused
@pytest.mark.parametrize("command", ["run", "sweep", "run-all"])
@pytest.mark.parametrize("address", ["", "   "])
def test_an_empty_scheduler_is_refused_in_one_line(roots, capsys, monkeypatch, command, address):
    monkeypatch.setattr(X, "execute_task", lambda *a, **k: pytest.fail("it ran locally"))
    argv = {"run": ["run", CHAPTER, "--profile", "smoke"], "run-all": ["run", "--all", "--no-site"],
            "sweep": ["sweep", CHAPTER, "--grid", "seeds", "[[0]]"]}[command]
    with pytest.raises(SystemExit) as e:  # an argparse refusal: before any value is read
        cli.main([*argv, "--scheduler", address])
    assert e.value.code == 2
    assert "--scheduler" in one_line(capsys.readouterr().err) and not (roots / "tasks").exists()
    with pytest.raises(X.ChapterError, match="--scheduler"):
        with X.cluster(address):
            pytest.fail("a cluster was started")


# ---------------------------------------------------------------------------------------------
# N14: a large sweep says how far its validation is, in a few lines, and validates each point cheaply
def test_a_large_sweep_reports_its_validation_in_a_few_lines(tmp_path, capsys, monkeypatch):
    calls = {"chapters": 0}
    chapters = X.common.chapters
    monkeypatch.setattr(X.common, "chapters", lambda: calls.__setitem__("chapters", calls["chapters"] + 1)
                        or chapters())
    n = 400
    t0 = cpu_s()
    tasks = S.plan(CHAPTER, {"seeds": [[i] for i in range(n)]}, "smoke", {"animation_frames": 0}, root=tmp_path)
    took = cpu_s() - t0
    assert len(tasks) == n and len({t.key for t in tasks}) == n
    err = capsys.readouterr().err.strip().splitlines()
    assert 2 <= len(err) <= 6, err
    assert err[0] == f"shallowflow: validating {n} points of {CHAPTER} before any runs"
    assert err[-1].startswith(f"shallowflow: validated {n} points in ") and err[-1].endswith("(0 invalid)")
    assert calls["chapters"] <= 2, calls  # the chapters are listed once per sweep, not once per point
    assert took < 60, took  # generous: about 0.5 CPU-s here, 12 before (30 ms a point)
    small = S.plan(CHAPTER, {"seeds": [[0], [1]]}, "smoke", {"animation_frames": 0}, root=tmp_path)
    assert len(small) == 2 and capsys.readouterr().err == ""  # a small sweep says nothing


def test_shared_validation_gives_the_same_tasks():
    points = [{"seeds": [i], "animation_frames": 0} for i in range(3)]
    shared: dict = {}
    alone = [X.prepare(CHAPTER, "smoke", p) for p in points]
    together = [X.prepare(CHAPTER, "smoke", p, shared=shared) for p in points]
    assert [t.key for t in alone] == [t.key for t in together] and [t.values for t in alone] == \
        [t.values for t in together]
    with pytest.raises(X.ChapterError, match="duplicate seeds"):
        X.prepare(CHAPTER, "smoke", {"seeds": [1, 1]}, shared=shared)
