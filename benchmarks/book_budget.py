"""Time budget of the book: execution time of every chapter at book scale, and the total.

    python benchmarks/book_budget.py                 # every chapter of _toc.yml, profile "book"
    python benchmarks/book_budget.py --profile smoke # the CI tier
    python benchmarks/book_budget.py toy scorecard   # some chapters only
    python benchmarks/book_budget.py --budget 1800   # exit 1 if the total exceeds 1800 s

Chapters are the Jupytext percent scripts (``book/**.py``) listed in ``_toc.yml``, in book order;
Markdown pages are not executed.  Each chapter runs in a fresh process through ``shallowflow run``
(papermill, a new kernel: the time includes the kernel start, as in a book build), into a
temporary folder so the artifacts of a real build are left alone.  Without the CLI the chapter is
converted with jupytext and executed with papermill directly.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def toc_chapters(root: Path = ROOT) -> list[str]:
    """Files of _toc.yml that are Jupytext scripts, relative to book/ without suffix, in order."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    files: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                files.append(str(node["file"]))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    files.append(str(toc.get("root", "")))
    walk({k: v for k, v in toc.items() if k != "root"})
    out = []
    for f in files:
        f = f.removesuffix(".py").removesuffix(".md").removesuffix(".ipynb")
        if (root / f"{f}.py").exists() and f.startswith("book/"):
            c = f.removeprefix("book/")
            if c not in out:
                out.append(c)
    return out


def has_cli() -> bool:
    try:
        import shallowflow.run.cli  # noqa: F401
    except ImportError:
        return False
    return True


def run_chapter(chapter: str, profile: str, out_dir: Path) -> tuple[float, bool, str]:
    """(seconds, ok, message) for one chapter executed in a fresh process."""
    if has_cli():
        cmd = [sys.executable, "-m", "shallowflow.run.cli", "run", chapter, "--profile", profile, "--out", str(out_dir),
               "--quiet"]
    else:  # fallback: jupytext + papermill directly (profile parameters are not injected)
        nb = out_dir / f"{chapter.replace('/', '__')}.ipynb"
        code = (f"import jupytext, papermill; nb = jupytext.read({str(ROOT / 'book' / (chapter + '.py'))!r}); "
                f"jupytext.write(nb, {str(nb)!r}); "
                f"papermill.execute_notebook({str(nb)!r}, {str(nb.with_suffix('.out.ipynb'))!r}, "
                f"kernel_name='python3', progress_bar=False, cwd={str((ROOT / 'book' / chapter).parent)!r})")
        cmd = [sys.executable, "-c", code]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    msg = "" if p.returncode == 0 else (p.stderr.strip().splitlines() or ["failed"])[-1][:200]
    return seconds, p.returncode == 0, msg


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="execution time of every chapter and the total")
    ap.add_argument("chapters", nargs="*", help="chapter names (default: all of _toc.yml)")
    ap.add_argument("--profile", default="book", help="book (default), smoke or paper")
    ap.add_argument("--budget", type=float, default=None, help="fail if the total exceeds this many seconds")
    args = ap.parse_args(argv)
    chapters = toc_chapters()
    if args.chapters:
        chosen = []
        for name in args.chapters:
            key = name.removeprefix("book/").removesuffix(".py")
            match = [c for c in chapters if c == key or c.endswith("/" + key)]
            if not match:
                ap.error(f"unknown chapter {name!r}; chapters: {', '.join(chapters)}")
            chosen += match
        chapters = chosen
    print(f"# Book time budget (profile {args.profile}, {'shallowflow run' if has_cli() else 'papermill'})\n")
    print("| chapter | seconds | status |\n|---|---:|---|")
    total, failed, parts = 0.0, 0, {}
    with tempfile.TemporaryDirectory(prefix="book-budget-") as tmp:
        for c in chapters:
            s, ok, msg = run_chapter(c, args.profile, Path(tmp))
            total += s
            failed += not ok
            part = c.split("/")[0] if "/" in c else "(pages)"
            parts[part] = parts.get(part, 0.0) + s
            print(f"| {c} | {s:.1f} | {'ok' if ok else 'FAILED: ' + msg} |", flush=True)
    for part, s in parts.items():  # each part's issue states its own budget in serial seconds
        print(f"| *part {part}* | *{s:.1f}* | |")
    print(f"| **total** | **{total:.1f}** | {len(chapters) - failed}/{len(chapters)} ok |")
    if args.budget is not None and total > args.budget:
        print(f"\nover budget: {total:.1f} s > {args.budget:.0f} s")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
