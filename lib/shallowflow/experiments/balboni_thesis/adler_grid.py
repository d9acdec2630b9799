"""Which grid rate won each cell of the ADLER comparison (issue 41): per (data set, model, activation) the rate of the
grid-best SGD run of each seed (:func:`shallowflow.experiments.balboni_thesis.adler.grid_best`, by final test
accuracy) and whether it sits at an edge of the grid.  A winner at the grid's smallest or largest rate means the grid
did not bracket the best rate of that cell: a better one may lie outside it, and "grid-best SGD" is then a lower
bound on tuned SGD there.  Presentation only: computed from the chapter's runs, nothing trained here."""
from __future__ import annotations

import html

from .adler import Comparison, grid_best


def grid_winners(comp: Comparison, grid) -> list[dict]:
    """One row per (data set, model, activation) in the order the runs were made: ``rates`` the winning rate per seed
    (None where every grid run diverged), ``edges`` the seeds whose winner is the grid's ``"lowest"`` or
    ``"highest"`` rate."""
    lo, hi = min(grid), max(grid)
    cells: dict = {}
    for r in comp.runs:
        cells.setdefault((r.dataset, r.model, r.act), set()).add(r.seed)
    rows = []
    for (dataset, model, act), seeds in cells.items():
        rates, edges = {}, {}
        for seed in sorted(seeds):
            best = grid_best(comp.select(dataset=dataset, model=model, act=act, seed=seed))
            rates[seed] = None if best is None else best.lr
            if best is not None and best.lr in (lo, hi) and lo != hi:
                edges[seed] = "lowest" if best.lr == lo else "highest"
        rows.append(dict(dataset=dataset, model=model, act=act, rates=rates, edges=edges))
    return rows


def winners_html(comp: Comparison, grid) -> str:
    """:func:`grid_winners` as an HTML table: the winning rate of each seed, and the edge verdict of the cell."""
    rows = grid_winners(comp, grid)
    esc = html.escape
    body = []
    for row in rows:
        rates = ", ".join("all diverged" if v is None else f"{v:g}" for v in row["rates"].values())
        if row["edges"]:
            which = sorted(set(row["edges"].values()))
            seeds = ", ".join(str(s) for s in row["edges"])
            edge = (f"yes: the {' and the '.join(which)} rate (seed {seeds}); the grid did not bracket the best rate")
        else:
            edge = "no: inside the grid"
        name = comp.splits[row["dataset"]].name if row["dataset"] in comp.splits else row["dataset"]
        body.append(f"<tr><td>{esc(str(name))}</td><td>{esc(row['model'])}</td><td>{esc(row['act'])}</td>"
                    f"<td>{esc(rates)}</td><td>{esc(edge)}</td></tr>")
    at_edge = sum(1 for r in rows if r["edges"])
    return (f"<p>The grid's winning rate per cell (grid {esc(', '.join(f'{g:g}' for g in sorted(grid)))}; one rate "
            f"per seed, chosen by final test accuracy): {at_edge} of {len(rows)} cells have a winner at an edge of the "
            f"grid.</p><div class='sf-scroll'><table class='sf-grid-winners'><thead><tr><th>data</th><th>model</th>"
            f"<th>activation</th><th>winning rate (per seed)</th><th>at an edge of the grid</th></tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>")
