"""The executor's vocabulary: profiles and limits, its errors, a task (:class:`Task`), the chapters and their
parameters."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..verdicts import repo_root

PROFILES = ("book", "smoke", "paper")
SCORECARD = "scorecard"
RETRIES = 2  # re-runs of a task whose worker died (a chapter that raises is not re-run: it would again)
MAX_WORKERS = 1024  # local worker processes a cluster may start
CONNECT_TIMEOUT = 10.0  # seconds a scheduler has to answer (SHALLOWFLOW_CONNECT_TIMEOUT)
MAX_RESULT_BYTES = 64 << 20  # a result.json larger than this is not one of ours


class ChapterError(RuntimeError):
    """A chapter could not be found, parameterised or executed (one line for the user)."""


class TaskFailed(ChapterError):
    """A task ran and failed; ``notebook`` is the failed notebook kept for inspection (or None)."""

    def __init__(self, message: str, notebook: str | None = None):
        super().__init__(message)
        self.notebook = notebook


@dataclass
class Task:
    """One chapter execution, validated.  ``inject`` are the values papermill injects; ``values`` every
    parameter's value (defaults included), which with the code version names the task."""

    chapter: str
    profile: str  # the value of the chapter's 'profile' parameter (book, smoke, paper or custom)
    inject: dict
    values: dict
    code: str
    root: str
    label: str = ""  # e.g. "point 3" in a sweep, for messages
    env: dict = field(default_factory=dict)  # environment variables of the kernel (e.g. where records are read)
    inputs: dict = field(default_factory=dict)  # data files the values name: path -> [size, mtime_ns]

    @property
    def key(self) -> str:
        doc = dict(chapter=self.chapter, values=self.values, code=self.code)
        if self.inputs:  # an edited data file is another task (a sweep does not read back the old result)
            doc["inputs"] = self.inputs
        blob = json.dumps(doc, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def dir(self) -> Path:
        return Path(self.root) / self.chapter / f"{self.profile}-{self.key}"

    @property
    def notebook(self) -> Path:
        return self.dir / f"{Path(self.chapter).name}.ipynb"


def book_dir() -> Path:
    return repo_root() / "book"


def chapters() -> list[str]:
    """Every chapter (Jupytext script under book/), as a path relative to book/ without suffix."""
    return sorted(str(p.relative_to(book_dir()).with_suffix("")) for p in book_dir().rglob("*.py")
                  if not any(part.startswith((".", "_")) for part in p.relative_to(book_dir()).parts))


def resolve(name: str) -> str:
    """Accept 'orthogonal-inputs/toy', 'book/orthogonal-inputs/toy.py' or a unique suffix such as 'toy'."""
    key = str(name).removeprefix("book/").removesuffix(".py").removesuffix(".ipynb")
    all_ = chapters()
    if key in all_:
        return key
    matches = [c for c in all_ if c.endswith("/" + key) or c == key]
    if len(matches) == 1:
        return matches[0]
    raise ChapterError(f"unknown chapter {_short(name)}; chapters: {', '.join(all_)}" if not matches else
                       f"chapter {name!r} is ambiguous: {', '.join(matches)}")


def schema(chapter: str) -> tuple[dict | None, tuple]:
    """The chapter's ``(SCHEMA, RULES)`` (:mod:`shallowflow.params.chapters`); ``(None, ())`` without a module."""
    from ..params import chapters as _ch

    try:
        return _ch.schema(chapter)
    except ImportError:
        return None, ()


def parameters(chapter: str) -> dict[str, tuple[Any, str]]:
    """The chapter's parameters cell: name -> (default value, comment), in the cell's order."""
    from ..params import chapters as _ch

    try:
        return {d.name: (d.value, d.comment) for d in _ch.parameters_cell(chapter)}
    except ValueError as e:
        raise ChapterError(str(e)) from None


def profile_values(chapter: str, profile: str) -> dict:
    """The values a profile sets (``book``: none but the profile, the parameters cell itself)."""
    if profile not in PROFILES:
        raise ChapterError(f"unknown profile {_short(profile)}; profiles: {', '.join(PROFILES)}")
    values = {}
    if profile != "book":
        path = repo_root() / "params" / profile / f"{chapter}.yml"
        if path.exists():
            values.update(yaml.safe_load(path.read_text()) or {})
        elif profile == "smoke":
            raise ChapterError(f"no smoke parameters for {chapter}: {path} is missing")
        # paper without a file: the book already runs at the source's scale
    values["profile"] = profile
    return values


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 12] + f"... ({len(text)} chars)"


def _first_line(text: str, limit: int = 400) -> str:
    lines = [line for line in str(text).splitlines() if line.strip()]
    line = lines[0] if lines else ""
    more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
    return (line if len(line) <= limit else line[:limit] + "...") + more
