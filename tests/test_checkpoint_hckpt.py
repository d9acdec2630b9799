"""Checkpoints keyed by what a chunk's numbers depend on (issue 39 item 3): the import closure of the module that
defines ``compute`` (engine.codegraph), not every file of the package.  A copy of a small package in a temporary
folder stands in for the real one (no edit touches the real tree); a compute says it is the package's by its
``__module__``, as a function defined in an experiment module does."""
import functools

import pytest
import torch

from shallowflow.engine import checkpoint, codegraph

FILES = {
    "__init__.py": "",
    "outputs.py": "root = 1\n",
    "engine/__init__.py": "",
    "engine/train.py": "def step(x):\n    return x + 1\n",
    "engine/unused.py": "z = 1\n",
    "engine/progress.py": "bars = 1\n",
    "experiments/__init__.py": "",
    "experiments/src/__init__.py": "",
    "experiments/src/chap.py": "from ...engine import train, progress\nfrom ... import verdicts as C\n"
                               "from ...site import plots\n",
    "experiments/src/other.py": "from ...engine import unused\n",
    "verdicts/__init__.py": "from . import law\n",
    "verdicts/law.py": "from ..engine import unused\n",
    "site/__init__.py": "",
    "site/plots.py": "from ..engine import unused\n",
    "executor/__init__.py": "",
    "executor/tasks.py": "",
    "run/__init__.py": "",
    "run/cli.py": "",
}
CHAPTER = "shallowflow.experiments.src.chap"


@pytest.fixture
def pkg(tmp_path, monkeypatch):
    """A package copy in tmp_path: the closure and the whole-package key both read it; checkpoints in tmp_path."""
    root = tmp_path / "shallowflow"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    monkeypatch.setattr(codegraph, "PACKAGE_DIR", root)
    monkeypatch.setattr(checkpoint, "_PACKAGE", root)
    monkeypatch.setenv("SHALLOWFLOW_CHECKPOINTS", str(tmp_path / "ck"))
    return root


def edit(pkg, rel):
    """Another text, of another length: the (path, size, mtime) cache sees it whatever the clock's resolution."""
    path = pkg / rel
    path.write_text(path.read_text() + f"# edited {len(path.read_text())}\n")


def counted(module=CHAPTER):
    calls = []

    def compute(seed):
        calls.append(seed)
        g = torch.Generator().manual_seed(seed)
        return torch.randn(4, generator=g, dtype=torch.float64)

    compute.__module__ = module  # defined in the package's chapter module
    return compute, calls


def test_the_chunk_is_keyed_by_its_module_and_what_it_imports(pkg):
    compute, _ = counted()
    assert checkpoint.depends_on(compute) == (
        "shallowflow", "shallowflow.engine", "shallowflow.engine.train", "shallowflow.experiments",
        "shallowflow.experiments.src", CHAPTER)  # no verdicts, site, progress; no other chapter


@pytest.mark.parametrize("unrelated", ["experiments/src/other.py", "engine/unused.py", "verdicts/law.py",
                                       "verdicts/__init__.py", "site/plots.py", "executor/tasks.py", "run/cli.py",
                                       "engine/progress.py"])
def test_a_chunk_is_read_back_when_an_unrelated_module_changes(pkg, unrelated):
    compute, calls = counted()
    first = checkpoint.resumable("t/x", {"a": 1}, [0, 1], compute)
    whole = checkpoint.package_version()
    edit(pkg, unrelated)
    if not unrelated.startswith("site/"):
        assert checkpoint.package_version() != whole  # the whole-package key would have computed again
    again = checkpoint.resumable("t/x", {"a": 1}, [0, 1], compute)
    assert calls == [0, 1] and checkpoint.last_resumed == 2
    assert all(torch.equal(a, b) for a, b in zip(first, again))


@pytest.mark.parametrize("own", ["experiments/src/chap.py", "engine/train.py", "experiments/src/__init__.py",
                                 "__init__.py"])
def test_a_chunk_is_computed_again_when_its_module_or_an_import_of_it_changes(pkg, own):
    compute, calls = counted()
    checkpoint.resumable("t/x", {"a": 1}, [0, 1], compute)
    edit(pkg, own)
    checkpoint.resumable("t/x", {"a": 1}, [0, 1], compute)
    assert calls == [0, 1, 0, 1] and checkpoint.last_resumed == 0


def test_a_new_import_of_the_chunk_module_is_followed(pkg):
    compute, calls = counted()
    checkpoint.resumable("t/x", {}, [0], compute)
    (pkg / "experiments/src/chap.py").write_text(FILES["experiments/src/chap.py"] + "from ...engine import unused\n")
    checkpoint.resumable("t/x", {}, [0], compute)
    assert "shallowflow.engine.unused" in checkpoint.depends_on(compute)
    edit(pkg, "engine/unused.py")  # now imported: a change of it computes again
    checkpoint.resumable("t/x", {}, [0], compute)
    assert calls == [0, 0, 0]


def test_a_lambda_or_a_function_outside_the_package_falls_back_to_the_whole_package(pkg):
    compute, calls = counted(module=__name__)  # a test's (a notebook's: __main__)
    lam = lambda seed: compute(seed)  # noqa: E731  (defined here, outside the package)
    notebook, _ = counted(module="__main__")
    for c in (compute, lam, notebook):
        assert checkpoint.depends_on(c) is None
        assert checkpoint.code_version(c) == checkpoint.package_version()
    checkpoint.resumable("t/x", {}, [0], lam)
    edit(pkg, "experiments/src/other.py")
    checkpoint.resumable("t/x", {}, [0], lam)
    assert calls == [0, 0]  # any module of the package: computed again, as before


def test_a_package_compute_holding_a_function_from_outside_falls_back(pkg):
    outside, _ = counted(module=__name__)

    def compute(seed, f=outside):
        return f(seed)

    compute.__module__ = CHAPTER
    assert checkpoint.depends_on(compute) is None

    def held(seed):
        return parts["main"](seed)

    held.__module__ = CHAPTER
    parts = {"main": outside}  # a dict of callables in the closure, as spurious' parts
    assert checkpoint.depends_on(held) is None
    parts["main"] = counted()[0]
    assert checkpoint.depends_on(held) == checkpoint.depends_on(counted()[0])


def test_partials_bound_methods_and_objects_are_resolved_to_their_modules(pkg):
    compute, _ = counted()
    want = checkpoint.depends_on(compute)
    assert checkpoint.depends_on(functools.partial(compute, 3)) == want

    class Runner:
        def run(self, seed):
            return seed

    Runner.__module__ = CHAPTER
    Runner.run.__module__ = CHAPTER
    assert checkpoint.depends_on(Runner().run) == want
    assert checkpoint.depends_on(Runner()) == want
    Runner.__module__ = "shallowflow.engine.train"  # an object of another module, held by the compute
    assert checkpoint.depends_on(functools.partial(compute, Runner())) == want
    other, _ = counted(module="shallowflow.experiments.src.other")
    both = checkpoint.depends_on(functools.partial(compute, other))
    assert set(both) == set(want) | {"shallowflow.experiments.src.other", "shallowflow.engine.unused"}


def test_library_functions_add_nothing_and_a_left_out_defining_module_falls_back(pkg):
    compute, _ = counted()
    assert checkpoint.depends_on(functools.partial(compute, torch.relu, functools.reduce)) == \
        checkpoint.depends_on(compute)
    site_made, _ = counted(module="shallowflow.site.plots")
    assert checkpoint.depends_on(site_made) is None  # keyed by the whole package (which leaves the site out)
    gone, _ = counted(module="shallowflow.experiments.src.removed")
    assert checkpoint.depends_on(gone) is None


def test_the_same_code_in_another_folder_has_the_same_key(tmp_path, monkeypatch):
    compute, _ = counted()
    keys = []
    for where in ("one", "elsewhere/deeper"):
        root = tmp_path / where / "shallowflow"
        for rel, text in FILES.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        monkeypatch.setattr(codegraph, "PACKAGE_DIR", root)
        keys.append(checkpoint.code_version(compute))
    assert keys[0] == keys[1] and keys[0].startswith("modules:")


def test_a_real_call_site_is_keyed_by_its_own_closure(tmp_path, monkeypatch):
    """001 threshold's resumable() (a compute defined inside runs_at) is keyed by the closure of its experiment
    module: the engine and its own source, no floor that computes nothing, no other source; a fraction of the
    package.  The real tree is only read."""
    from shallowflow.experiments.weakly_interacting import threshold

    monkeypatch.setenv("SHALLOWFLOW_CHECKPOINTS", str(tmp_path / "ck"))
    seen, real = [], checkpoint.code_version
    monkeypatch.setattr(checkpoint, "code_version", lambda compute: seen.append(compute) or real(compute))
    first = threshold.runs_at(8, 2, 3, [0], epochs=3, resume=True)
    again = threshold.runs_at(8, 2, 3, [0], epochs=3, resume=True)
    assert checkpoint.last_resumed == 1 and torch.equal(first["L_end"], again["L_end"])
    mods = checkpoint.depends_on(seen[0])
    assert seen[0].__module__ == threshold.__name__ and threshold.__name__ in mods
    assert {"shallowflow.engine.checkpoint", "shallowflow.engine.train"} <= set(mods)
    assert not [m for m in mods if codegraph.left_out(m, checkpoint.NOT_COMPUTING_CHUNKS)]
    assert not [m for m in mods if m.startswith("shallowflow.experiments.") and m.split(".")[2] != "weakly_interacting"]
    assert len(mods) < len([p for p in codegraph.PACKAGE_DIR.rglob("*.py") if "__pycache__" not in p.parts]) / 3
