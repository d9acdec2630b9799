"""The package's folders are its floors (issue 40): drawn from every import statement of ``lib/shallowflow`` (parsed
with ast, so those inside functions, ``try`` blocks and ``if TYPE_CHECKING:`` count as much as the module's first
lines), the import graph has no circle and no import from a floor to the same or a higher one.

A module's package is the first folder under ``shallowflow/`` (``engine``, ``verdicts``, ...); a loose module is a
package of its own (``outputs``); the package's own ``__init__`` is the root (``""``).  ``from X import name`` is an
import of the module ``X.name`` when there is one, else of ``X``.  The import of a package's ``__init__`` that Python
does before any of its modules is not an edge (every module would import its ancestors), nor are imports by a
computed name (``importlib.import_module``: the chapters' modules found by the layout rule, the old names).
"""
import ast
import sys
import importlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "lib" / "shallowflow"

#: package -> floor; a module may import its own package's modules and those of packages on lower floors only
FLOORS = {
    "outputs": 0,  # where a run may write, the repository's root: no import of the package (run by its path)
    "params": 1,  # the parameter language, data-file parameters, the book's layout rule, validation
    "engine": 2,  # the training engine (config, kernel, models, init, data, train, monitor, flow, metrics, ...)
    "": 3,  # shallowflow/__init__: configures the engine at import; the version; the old names (by computed name)
    "deep": 3,  # deep networks of source 004 on the engine's config, data and training loop
    "verdicts": 4,  # checks, records, registry and its law, causes, scorecard, reports
    "experiments": 5,  # one sub-package per source, one module per chapter
    "executor": 6,  # chapter executions as tasks (papermill) on Dask
    "site": 7,  # the figures and the web pages (Sphinx extensions) and the book's build
    "run": 8,  # the command line, sweeps, the terminal's summaries
}


def modules() -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package's __init__) of every module of the package."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


def _known(name: str, mods) -> str | None:
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def edges() -> dict[str, set[str]]:
    """module -> the package's modules it imports (every import statement, wherever it stands)."""
    mods = modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, (path, is_pkg) in mods.items():
        for node, targets in import_statements(name, path, is_pkg, mods):
            for t in targets:
                if t and t.split(".")[0] == "shallowflow" and (m := _known(t, mods)) and m != name:
                    graph[name].add(m)
    return graph


def import_statements(name: str, path, is_pkg: bool, mods: dict | None = None):
    """Every import statement of module ``name`` (wherever it stands), with the names it imports: ``from x import y``
    names ``x.y``, or, given ``mods``, ``x`` where ``x.y`` is not a module of the package (y is a name in x)."""
    here = name if is_pkg else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield node, [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = here
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            src = (f"{base}.{node.module}" if node.module else base) if node.level else node.module
            yield node, [f"{src}.{a.name}" if mods is None or f"{src}.{a.name}" in mods else src for a in node.names]


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle (a -> b -> ... -> a) through each strongly connected component of more than one module."""
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):  # Tarjan's algorithm, iterative
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        comps.append(set(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    out = []
    for comp in comps:  # a shortest way back to the smallest member, inside the component
        start = min(comp)
        paths, seen, found = [[start]], {start}, None
        while paths and found is None:
            nxt = []
            for p in paths:
                for w in sorted(graph[p[-1]] & comp):
                    if w == start:
                        found = p + [start]
                        break
                    if w not in seen:
                        seen.add(w)
                        nxt.append(p + [w])
                if found:
                    break
            paths = nxt
        out.append(found)
    return out


def test_every_module_is_on_a_floor():
    assert not sorted({package_of(m) for m in modules()} - set(FLOORS)), "a package without a floor in FLOORS"


def test_no_import_circle():
    found = circles(edges())
    assert not found, "import circles: " + "; ".join(" -> ".join(c) for c in found)


def test_no_import_from_a_floor_to_the_same_or_a_higher_one():
    bad = [f"{a} (floor {FLOORS[package_of(a)]}) imports {b} (floor {FLOORS[package_of(b)]})"
           for a, targets in sorted(edges().items()) for b in sorted(targets)
           if package_of(a) != package_of(b) and FLOORS[package_of(b)] >= FLOORS[package_of(a)]]
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_the_graph_sees_imports_inside_functions_and_names_a_circle(tmp_path, monkeypatch):
    pkg = tmp_path / "shallowflow"
    (pkg / "low").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "low" / "__init__.py").write_text("")
    (pkg / "low" / "a.py").write_text("from . import b\n")
    (pkg / "low" / "b.py").write_text("def f():\n    from .a import x\n    import shallowflow.high\n")
    (pkg / "high.py").write_text("from .low.b import f\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", pkg)
    graph = edges()
    assert graph["shallowflow.low.b"] == {"shallowflow.low.a", "shallowflow.high"}
    assert graph["shallowflow.high"] == {"shallowflow.low.b"}
    assert circles(graph) == [["shallowflow.high", "shallowflow.low.b", "shallowflow.high"]]


def test_old_names_are_the_moved_modules_themselves():
    """What executed notebooks of earlier builds import (and the installed ``shallowflow`` command) is the module of
    the new layout, one object under both names (module state such as the configured device is shared)."""
    import shallowflow

    for old, new in shallowflow.OLD_NAMES.items():
        moved = importlib.import_module(f"shallowflow.{new}")
        assert importlib.import_module(f"shallowflow.{old}") is moved, old
        assert getattr(shallowflow, old) is moved, old
        assert moved.__spec__.name == f"shallowflow.{new}", old  # the module keeps its own name
    from shallowflow.models import Network  # noqa: F401
    from shallowflow.params import validate  # noqa: F401


def test_a_class_known_by_its_module_name_is_still_known():
    """The CLI tells a configuration error by its class's module name (without importing torch): the name of the
    module that now defines it."""
    from shallowflow.engine import config
    from shallowflow.run import cli

    assert cli._is_config_error(config.ConfigError("SHALLOWFLOW_THREADS"))
    assert not cli._is_config_error(RuntimeError("ConfigError"))


def test_the_readme_draws_every_floor():
    """README's "Layout" gives each package its own line, with its floor number."""
    text = (PACKAGE.parents[1] / "README.md").read_text()
    layout = text[text.index("## Layout"):text.index("## The library in one paragraph")]
    missing = [name for name, floor in FLOORS.items() if name and not any(
        line.split()[:2] in ([f"{name}/", str(floor)], [f"{name}.py", str(floor)], [f"{name}/<part_pkg>/", str(floor)])
        for line in layout.splitlines())]
    assert not missing, f"README's Layout has no line 'name/  floor' for {missing}"


def test_architecture_md_lists_what_each_floor_imports():
    """ARCHITECTURE.md's table: one row per package, its floor, and exactly the packages it imports today."""
    rows = {}
    for line in (PACKAGE.parents[1] / "ARCHITECTURE.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].isdigit():
            name = "" if cells[1] == "(`__init__`)" else cells[1].strip("`")
            said = set() if cells[3] == "nothing of the package" else {
                "" if c.strip() == "(`__init__`)" else c.strip().strip("`") for c in cells[3].split(",")}
            rows[name] = (int(cells[0]), said)
    imports: dict = {name: set() for name in FLOORS}
    for a, targets in edges().items():
        for b in targets:
            if package_of(a) != package_of(b):
                imports[package_of(a)].add(package_of(b))
    assert set(rows) == set(FLOORS), f"ARCHITECTURE.md's rows: {sorted(rows)} vs floors {sorted(FLOORS)}"
    wrong = {name: (rows[name], (FLOORS[name], sorted(imports[name]))) for name in FLOORS
             if rows[name] != (FLOORS[name], imports[name])}
    assert not wrong, f"ARCHITECTURE.md says (floor, imports) != the package's: {wrong}"


def test_the_library_imports_no_old_name():
    """The old flat names (``shallowflow.OLD_NAMES``) are for executed notebooks of earlier builds: a module of the
    package imports the module where it is now (an old name would hide its floor behind the package's root)."""
    import shallowflow

    mods = modules()
    bad = []
    for name, (path, is_pkg) in sorted(mods.items()):
        for node, targets in import_statements(name, path, is_pkg):
            for t in targets:
                parts = (t or "").split(".")
                if parts[0] == "shallowflow" and len(parts) > 1 and parts[1] in shallowflow.OLD_NAMES \
                        and f"shallowflow.{parts[1]}" not in mods:
                    bad.append(f"{name} (line {node.lineno}) imports shallowflow.{parts[1]}: now "
                               f"shallowflow.{shallowflow.OLD_NAMES[parts[1]]}")
    assert not bad, "old names imported by the library:\n" + "\n".join(bad)
