"""Chapters and their parameters, found by the rule that the library mirrors the book.

The chapter ``book/<part>/<name>.py`` is computed by the module
``shallowflow.experiments.<part>.<name>`` (dashes become underscores), which declares the chapter's
parameter schema as ``SCHEMA`` (name -> :class:`shallowflow.params.Spec`) and the relations between
parameters as ``RULES``.  The chapter's own ``parameters`` cell holds the book-scale values, with a
comment after each.  Everything that needs a chapter's parameters (the CLI's validation before a
kernel starts, the generated re-run boxes of the site, the property tests) reads them here, so the
page, the validator and the notebook cannot drift apart.
"""
from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from ..outputs import repo_root
from .spec import PROFILE

# pages written as Jupytext notebooks that are not chapters of a part
PAGES = {"scorecard": "the scorecard"}


def book_dir() -> Path:
    return repo_root() / "book"


def all_chapters() -> list[str]:
    """Every chapter under book/ ('<part>/<name>'), pages such as the scorecard excluded."""
    return sorted(str(p.relative_to(book_dir()).with_suffix("")) for p in book_dir().rglob("*.py")
                  if not any(part.startswith((".", "_")) for part in p.relative_to(book_dir()).parts)
                  and p.stem not in PAGES and p.parent != book_dir())


def module_name(chapter: str) -> str:
    """'orthogonal-inputs/toy' -> 'shallowflow.experiments.orthogonal_inputs.toy'."""
    parts = chapter.removeprefix("book/").removesuffix(".py").split("/")
    return "shallowflow.experiments." + ".".join(p.replace("-", "_") for p in parts)


def module(chapter: str) -> ModuleType:
    """The experiment module of a chapter (ImportError names the chapter and the module expected)."""
    name = module_name(chapter)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        raise ImportError(f"chapter {chapter!r}: its experiment module {name} is missing ({e})") from None


def schema(chapter: str) -> tuple[dict, tuple]:
    """(SCHEMA, RULES) of a chapter; the scorecard's schema is its profile alone."""
    if chapter.removeprefix("book/") in PAGES:
        return {"profile": PROFILE}, ()
    mod = module(chapter)
    if not hasattr(mod, "SCHEMA"):
        raise ImportError(f"chapter {chapter!r}: {mod.__name__} declares no SCHEMA")
    return dict(mod.SCHEMA), tuple(getattr(mod, "RULES", ()))


@dataclass(frozen=True)
class Default:
    """One line of a parameters cell: the name, its book-scale value, the value's source text, the comment."""

    name: str
    value: object
    text: str
    comment: str


def parameters_cell(chapter: str) -> list[Default]:
    """The assignments of the chapter's cell tagged ``parameters``, in order, with their comments."""
    src = (book_dir() / f"{chapter.removeprefix('book/').removesuffix('.py')}.py").read_text()
    cells = re.split(r"^# %%", src, flags=re.M)
    cell = next((c for c in cells if re.match(r"[^\n]*tags=\[[^\]]*\"parameters\"", c)), None)
    if cell is None:
        raise ValueError(f"chapter {chapter!r} has no cell tagged 'parameters'")
    out = []
    for line in cell.split("\n")[1:]:
        m = re.match(r"^([A-Za-z_]\w*)\s*=\s*(.*?)\s*(?:#\s*(.*))?$", line)
        if not m:
            continue
        text = m.group(2)
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = _evaluate(text)
        out.append(Default(m.group(1), value, text, (m.group(3) or "").strip()))
    return out


def _evaluate(text: str):
    """Values such as ``list(range(10))`` or ``[10 ** k for k in (2, 3)]``: list, range and tuple only."""
    tree = ast.parse(text, mode="eval")
    if any(isinstance(n, (ast.Attribute, ast.Lambda, ast.NamedExpr)) for n in ast.walk(tree)):
        raise ValueError(f"parameters-cell value {text!r} is not a literal")
    return eval(compile(tree, "<parameters>", "eval"), {"__builtins__": {"list": list, "range": range,
                                                                        "tuple": tuple}})


def defaults(chapter: str) -> dict:
    """The book-scale values of a chapter's parameters cell."""
    return {d.name: d.value for d in parameters_cell(chapter)}


def profile_file(chapter: str, profile: str) -> Path:
    return repo_root() / "params" / profile / f"{chapter.removeprefix('book/')}.yml"
