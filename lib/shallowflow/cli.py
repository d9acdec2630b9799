"""Re-run a chapter with a profile or single parameters.

    shallowflow list
    shallowflow params orthogonal-inputs/toy
    shallowflow run orthogonal-inputs/toy [--profile smoke|book|paper] [-p NAME VALUE ...] [--out DIR]

A run converts the chapter (a Jupytext percent script) to a notebook under ``artifacts/notebooks``,
checks the parameter names against the chapter's ``parameters`` cell, injects the values with
papermill and executes it into ``artifacts/runs/<profile>/<chapter>.ipynb``.  Values given with
``-p`` make the run a ``custom`` one (reported, not compared with the verdict registry).
"""
from __future__ import annotations

import argparse
import ast
import sys
import time
from pathlib import Path

import yaml

from .claims import repo_root

PROFILES = ("book", "smoke", "paper")


class ChapterError(RuntimeError):
    """A chapter could not be found, parameterised or executed."""


def book_dir() -> Path:
    return repo_root() / "book"


def chapters() -> list[str]:
    """Every chapter (Jupytext script under book/), as a path relative to book/ without suffix."""
    return sorted(str(p.relative_to(book_dir()).with_suffix("")) for p in book_dir().rglob("*.py")
                  if not any(part.startswith((".", "_")) for part in p.relative_to(book_dir()).parts))


def resolve(name: str) -> str:
    """Accept 'orthogonal-inputs/toy', 'book/orthogonal-inputs/toy.py' or a unique suffix such as 'toy'."""
    key = name.removeprefix("book/").removesuffix(".py").removesuffix(".ipynb")
    all_ = chapters()
    if key in all_:
        return key
    matches = [c for c in all_ if c.endswith("/" + key) or c == key]
    if len(matches) == 1:
        return matches[0]
    raise ChapterError(f"unknown chapter {name!r}; chapters: {', '.join(all_)}" if not matches else
                       f"chapter {name!r} is ambiguous: {', '.join(matches)}")


def profile_parameters(chapter: str, profile: str) -> dict:
    """The parameter values of a profile (``book``: none, the parameters cell itself)."""
    if profile not in PROFILES:
        raise ChapterError(f"unknown profile {profile!r}; profiles: {', '.join(PROFILES)}")
    values = {"profile": profile}
    if profile != "book":
        path = repo_root() / "params" / profile / f"{chapter}.yml"
        if not path.exists():
            if profile == "paper":  # the book already runs at the source's scale
                return {"profile": "paper"}
            raise ChapterError(f"no {profile} parameters for {chapter}: {path} is missing")
        values.update(yaml.safe_load(path.read_text()) or {})
        values["profile"] = profile
    return values


def to_notebook(chapter: str) -> Path:
    """Convert the chapter's Jupytext script to an .ipynb under artifacts/notebooks (never next to it)."""
    import jupytext

    src = book_dir() / f"{chapter}.py"
    nb = jupytext.read(src, fmt="py:percent")
    nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    out = repo_root() / "artifacts" / "notebooks" / f"{chapter}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    jupytext.write(nb, out, fmt="ipynb")
    return out


def declared_parameters(notebook: Path) -> dict:
    import papermill

    return papermill.inspect_notebook(str(notebook))


def parse_value(text: str):
    """'60' -> 60, '1e-3' -> 0.001, '[0, 1]' -> [0, 1], 'relu' -> 'relu', 'True' -> True."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def execute(chapter: str, profile: str = "book", overrides: dict | None = None, out_dir: Path | None = None,
            progress: bool = False) -> Path:
    """Execute one chapter; returns the executed notebook's path.  Raises ChapterError on failure."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    chapter = resolve(chapter)
    params = profile_parameters(chapter, profile)
    if overrides:
        params.update(overrides)
        if "profile" not in overrides:
            params["profile"] = "custom"
    nb = to_notebook(chapter)
    declared = declared_parameters(nb)
    unknown = sorted(set(params) - set(declared))
    if unknown:
        raise ChapterError(f"unknown parameter(s) {', '.join(map(repr, unknown))} for chapter {chapter}; "
                           f"its parameters are: {', '.join(declared)}")
    out_dir = Path(out_dir) if out_dir else repo_root() / "artifacts" / "runs" / params["profile"]
    out = out_dir / f"{chapter}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        papermill.execute_notebook(str(nb), str(out), parameters=params, kernel_name="python3",
                                   progress_bar=progress, cwd=str((book_dir() / chapter).parent))
    except PapermillExecutionError as e:
        raise ChapterError(f"chapter {chapter} failed in cell {e.exec_count}: {e.ename}: {e.evalue}\n"
                           f"(executed notebook: {out})") from None
    return out


def _cmd_list(args) -> int:
    for c in chapters():
        profiles = [p for p in ("smoke", "paper") if (repo_root() / "params" / p / f"{c}.yml").exists()]
        print(f"{c:40s} profiles: book{''.join(', ' + p for p in profiles)}")
    return 0


def _cmd_params(args) -> int:
    chapter = resolve(args.chapter)
    for name, info in declared_parameters(to_notebook(chapter)).items():
        print(f"{name:14s} = {info['default']:<24s} # {info.get('help', '')}")
    return 0


def _cmd_run(args) -> int:
    overrides = {name: parse_value(value) for name, value in args.p}
    t0 = time.perf_counter()
    out = execute(args.chapter, args.profile, overrides, args.out, progress=not args.quiet)
    print(f"executed {resolve(args.chapter)} ({args.profile if not overrides else 'custom'}) in "
          f"{time.perf_counter() - t0:.1f} s -> {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="shallowflow", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="list chapters and their profiles").set_defaults(fn=_cmd_list)
    p = sub.add_parser("params", help="show a chapter's parameters")
    p.add_argument("chapter")
    p.set_defaults(fn=_cmd_params)
    r = sub.add_parser("run", help="execute a chapter with a profile and/or single parameters")
    r.add_argument("chapter")
    r.add_argument("--profile", default="book", choices=PROFILES)
    r.add_argument("-p", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"))
    r.add_argument("--out", type=Path, default=None, help="folder for the executed notebook")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.set_defaults(fn=_cmd_run)
    args = parser.parse_args(argv)
    try:
        return args.fn(args)
    except ChapterError as e:
        print(f"shallowflow: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
