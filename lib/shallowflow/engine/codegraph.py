"""The package's import graph, read from its source with :mod:`ast`: which of the package's modules a module imports,
directly or through the modules it imports (every import statement counts, those inside functions too).

It keys what a result depends on to the code that made it, in two places: the checkpoints of a long run
(:func:`shallowflow.engine.checkpoint.resumable`: a chunk is keyed by the closure of the module that defines its
``compute``) and a paper run's claims record (:func:`shallowflow.verdicts.digest.chapter_digest`: the closure of
the chapter's notebook).  Each caller names the modules it leaves out (``leave_out``: a module, or a package and
everything below it) and the walk does not go through them.  Nothing here imports the package: the graph is read
from the files, so editing a module is seen without a restart.
"""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "shallowflow"
#: the package's folder (this module is in its engine/); a test points it at a copy
PACKAGE_DIR = Path(__file__).resolve().parents[1]


def module_file(name: str) -> Path | None:
    """The file of module ``shallowflow.a.b`` (a package's ``__init__.py``), or None outside the package or where
    no such file exists."""
    if name != PACKAGE and not name.startswith(PACKAGE + "."):
        return None
    base = PACKAGE_DIR.joinpath(*name.split(".")[1:])
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.is_file():
            return p
    return None


def imports(tree: ast.AST, here: str, is_package: bool) -> set[str]:
    """The package's modules a parsed file imports (``here`` is its dotted name; ``from . import x`` counts ``x``
    where it is a module, and the package it comes from)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = here.split(".")
                base = parts if is_package else parts[:-1]
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)  # `from . import x`: x may be a module
    return {m for m in out if module_file(m) is not None}


#: a module's own imports, keyed by its file's path, size and modification time: each file is parsed once per
#: process however many callers ask, and again whenever it changes
_IMPORTS: dict[tuple, frozenset] = {}


def module_imports(name: str) -> frozenset:
    """The package's modules that module ``name`` imports (empty where its file cannot be read or parsed)."""
    path = module_file(name)
    try:
        st = path.stat()
    except (OSError, AttributeError):
        return frozenset()
    key = (name, str(path), st.st_size, st.st_mtime_ns)
    if key not in _IMPORTS:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            return frozenset()
        _IMPORTS[key] = frozenset(imports(tree, name, path.name == "__init__.py"))
    return _IMPORTS[key]


def left_out(name: str, leave_out: tuple[str, ...]) -> bool:
    """Whether module ``name`` is one of ``leave_out`` or lies below one of them."""
    return any(name == p or name.startswith(p + ".") for p in leave_out)


def closure(start, leave_out: tuple[str, ...] = (), parents: bool = False) -> tuple[str, ...]:
    """The modules of ``start`` and every module of the package they import, directly or not, sorted; a module of
    ``leave_out`` is neither counted nor walked through.  With ``parents``, the packages above each module count
    too (importing ``a.b.c`` runs ``a/__init__.py`` and ``a/b/__init__.py`` first)."""
    seen, todo = set(), list(start)
    while todo:
        name = todo.pop()
        if name in seen or left_out(name, leave_out) or module_file(name) is None:
            continue
        seen.add(name)
        todo.extend(module_imports(name) - seen)
        if parents and "." in name:
            todo.append(name.rpartition(".")[0])
    return tuple(sorted(seen))
