"""The verdicts where the reader is: a chapter's check table in the terminal, and as JSON (issue 29 item 5).

``shallowflow run`` and ``shallowflow sweep`` print, after execution, the checks of the claim records the chapter
wrote (:meth:`shallowflow.verdicts.Claims.save`; the executor carries them in a task's result): id, measured
value, criterion, verdict and cause, wrapped to the terminal's width.  A run that is not compared with the
registry (custom, paper) also lists the checks its chapter registers that did not run (``not-run``, a skipped
section), and the checks whose verdict differs from the registry's book verdict.  ``--json PATH`` writes the same
rows with every field of :data:`FIELDS`.
"""
from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

FIELDS = ("id", "measured", "values", "criterion", "verdict", "cause", "why", "runs")
COLUMNS = (("id", "check"), ("measured", "measured"), ("criterion", "criterion"), ("verdict", "verdict"),
           ("cause", "cause"))
MIN_WIDTH, MAX_WIDTH = 60, 200


def _book_verdicts(source: str) -> dict:
    from ..verdicts.registry import registry_view

    try:
        targets = registry_view().get("targets", {})
    except Exception:  # noqa: BLE001 - an unreadable registry: the table is shown without the comparison
        return {}
    out = {}
    for key, entry in targets.items():
        if key.startswith(source + ":"):
            for name, reg in ((entry or {}).get("checks") or {}).items():
                out[f"{key.split(':', 1)[1]}/{name}"] = (reg or {}).get("book")
    return out


def check_rows(records: list[dict]) -> list[dict]:
    """One row per check of the records (and per registered check that did not run), with :data:`FIELDS`, the
    source and chapter, and ``book``: the registry's book verdict of that check (None when unregistered)."""
    rows = []
    for rec in records:
        book = _book_verdicts(str(rec.get("source", "")))
        for c in list(rec.get("checks") or []) + list(rec.get("not_run") or []):
            row = {k: c.get(k) for k in FIELDS}
            row.update(source=rec.get("source"), chapter=rec.get("chapter"), profile=rec.get("profile"),
                       note=c.get("note", ""), book=book.get(c.get("id")))
            if row["verdict"] == "fail" and not row["cause"]:
                row["cause"] = "none registered"
            rows.append(row)
    return rows


def differences(rows: list[dict]) -> list[dict]:
    """The checks that ran and reached another verdict than the registry's book verdict (pass or fail)."""
    return [r for r in rows if r["verdict"] in ("pass", "fail") and r.get("book") in ("pass", "fail")
            and r["verdict"] != r["book"]]


def width() -> int:
    return max(MIN_WIDTH, min(MAX_WIDTH, shutil.get_terminal_size((100, 24)).columns))


def render(rows: list[dict], title: str = "", cols: int | None = None) -> str:
    """The check table as text: a column each for check, measured, criterion, verdict and cause, every cell
    wrapped within the width (``cols``, default the terminal's)."""
    cols = cols or width()
    multi = len({r.get("source") for r in rows}) > 1
    cells = [[(f"{r['source']}:{r['id']}" if multi else str(r["id"])), str(r.get("measured") or ""),
              str(r.get("criterion") or ""), str(r.get("verdict") or "").upper(), str(r.get("cause") or "")]
             for r in rows]
    heads = [h for _, h in COLUMNS]
    natural = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate(heads)]
    gap = 2
    fixed = {3: natural[3], 4: min(natural[4], 16)}  # verdict, cause
    fixed[0] = min(natural[0], max(12, cols * 35 // 100))
    rest = cols - gap * 4 - sum(fixed.values())
    if rest < 24:  # a narrow terminal: the check column gives way first
        fixed[0] = max(8, fixed[0] - (24 - rest))
        rest = cols - gap * 4 - sum(fixed.values())
    want = natural[1] + natural[2]
    if want <= rest:
        w1, w2 = natural[1], natural[2]
    else:
        w1 = min(rest - 8, max(8, min(natural[1], rest * natural[1] // max(want, 1))))
        w2 = rest - w1
    widths = [fixed[0], w1, w2, fixed[3], fixed[4]]
    lines = [title] if title else []

    def emit(values):
        wrapped = [textwrap.wrap(v, w, break_long_words=True, break_on_hyphens=False) or [""]
                   for v, w in zip(values, widths)]
        for k in range(max(map(len, wrapped))):
            lines.append((" " * gap).join((w[k] if k < len(w) else "").ljust(wd)
                                          for w, wd in zip(wrapped, widths)).rstrip())

    emit(heads)
    lines.append((" " * gap).join("-" * w for w in widths))
    for c in cells:
        emit(c)
    counts: dict = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    lines.append(", ".join(f"{n} {v}" for v, n in sorted(counts.items())) if counts else "no checks recorded")
    return "\n".join(lines)


def render_differences(rows: list[dict], profile: str) -> str:
    """A custom (or paper) run: the checks whose verdict differs from the registry's book verdict, one a line."""
    diff = differences(rows)
    if not diff:
        return f"{profile} run: every check that ran reached the registry's book verdict"
    out = [f"{profile} run: {len(diff)} check(s) differ from the registry's book verdict:"]
    out += [f"  {r['id']}: {r['verdict']} here, {r['book']} in the book (measured {r['measured']})" for r in diff]
    return "\n".join(out)


def run_document(result: dict) -> dict:
    """A run's verdicts for ``--json``: the chapter, profile, values, every check's row and the differences."""
    rows = check_rows(result.get("records") or [])
    return dict(chapter=result.get("chapter"), profile=result.get("profile"), values=result.get("values"),
                checks=rows, differs_from_book=[r["id"] for r in differences(rows)])


def show_run(result: dict, out=None) -> None:
    """Print a run's table (and, not compared with the registry, the differences from the book's verdicts)."""
    import sys

    out = out or sys.stdout
    rows = check_rows(result.get("records") or [])
    profile = result.get("profile", "")
    print(render(rows, f"checks of {result.get('chapter')} [{profile}]"), file=out)
    if profile not in ("book", "smoke") and rows:
        print(render_differences(rows, profile), file=out)


def show_sweep(points: list[dict], out=None) -> None:
    """Print one table per sweep point (its grid values in the title); a failed point prints its error."""
    import sys

    out = out or sys.stdout
    for p in points:
        values = ", ".join(f"{k}={json.dumps(v)}" for k, v in p["values"].items())
        if p.get("error"):
            print(f"point {p['point']} ({values}): failed: {p['error']}", file=out)
            continue
        print(render(p["checks"], f"point {p['point']} ({values}) [{p['profile']}]"), file=out)
        if p["profile"] not in ("book", "smoke") and p["checks"]:
            print(render_differences(p["checks"], p["profile"]), file=out)
        print(file=out)


def sweep_points(tasks: list, grids: dict, results: list, errors: dict) -> list[dict]:
    """Per sweep point: its index, grid values, profile, check rows and differences (or its error)."""
    points = []
    for i, (t, r) in enumerate(zip(tasks, results)):
        rows = check_rows(r["records"]) if r else []
        points.append(dict(point=i + 1, values={n: t.values[n] for n in grids}, profile=t.profile, checks=rows,
                           differs_from_book=[x["id"] for x in differences(rows)], error=errors.get(i, "")))
    return points


def write_json(path, doc: dict) -> Path:
    """``doc`` as JSON at ``path``, written whole or not at all (a staged file renamed into place)."""
    from ..outputs import publish_files, safe_path

    path = Path(path).expanduser().absolute()
    dest = safe_path(path, path.parent)
    publish_files([(dest, (json.dumps(doc, indent=1, default=str) + "\n").encode())])
    return dest


__all__ = ["FIELDS", "check_rows", "differences", "render", "render_differences", "run_document", "show_run",
           "show_sweep", "sweep_points", "write_json"]
