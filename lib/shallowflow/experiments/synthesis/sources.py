"""The five sources' data, one representative dataset each, for the synthesis chapters.

Every chapter of the synthesis part runs its experiment on these, with one convention for all: a
one-hidden-layer network h(x) = sum_j a_j sigma(<w_j, x>) without output factor (003's), the papers' loss
L = 1/(2n) sum_k (h(x_k) - y_k)^2, and a balanced initialisation w_j = lambda g_j, a_j = s_j ||w_j|| (003,
eq. (4); 002, eq. (4)).  Only the data change from source to source.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...engine import data as datasets

KEYS = ("000", "001", "002", "003", "004")


@dataclass(frozen=True)
class SourceData:
    key: str
    short: str  # a few words naming the source
    what: str  # the dataset, in words (figures and tables print it)
    build: tuple  # (name, kwargs) for shallowflow.engine.data.get, or a callable's name

    def dataset(self, device="cpu") -> datasets.Dataset:
        name, kwargs = self.build
        if name == "weakly-interacting":
            return datasets.weakly_interacting(device=device, **kwargs)
        return datasets.get(name, device=device, **kwargs)


SOURCES = {
    "000": SourceData("000", "Brisbois thesis", "Dataset 1.3.2 (10 non-orthogonal points in 1-D with a bias, "
                      "labels +-1; the data of its balancedness Fig. C.28)", ("brisbois-1.3", {"which": "1.3.2"})),
    "001": SourceData("001", "Dana et al., weakly interacting", "App. B data (its d = 100, fewer points): n = 10 points of norm "
                      "U[1, 2], uniform directions in d = 100, labels +-U[1, 2] (seed 0)",
                      ("weakly-interacting", {"n": 10, "d": 100, "seed": 0})),
    "002": SourceData("002", "Boursier & Flammarion, early alignment", "Figure 2's three points "
                      "x = (-0.75, -0.5, 0.125) with a bias, y = (1.1, 0.1, 0.8)", ("ea-three-point", {})),
    "003": SourceData("003", "Boursier et al., orthogonal inputs", "Section 5's orthogonal toy x = (-0.5, 1), "
                      "(2, 1), y = (-1, 1)", ("orthogonal-toy", {})),
    "004": SourceData("004", "Balboni thesis", "its synthetic correlated inputs (spec 3.5), n = 10, d = 64, two "
                      "classes as y = +-1 (seed 0)", ("correlated-binary", {"n": 10, "d": 64, "seed": 0})),
}


def chosen(indices) -> list[SourceData]:
    """The sources of a chapter's ``sources`` parameter (indices 0..4 into :data:`KEYS`), in key order."""
    return [SOURCES[KEYS[i]] for i in sorted(set(int(i) for i in indices))]


def data_rows(indices) -> list[dict]:
    """One row per chosen source: its key, the dataset in words, n and d (the table each chapter opens with)."""
    rows = []
    for s in chosen(indices):
        ds = s.dataset()
        rows.append({"source": s.key, "dataset": s.what, "n": ds.n, "d": ds.d})
    return rows


def html_table(rows: list[dict], digits: int = 4, missing: str = "(not run)") -> str:
    """A plain HTML table of dict rows (the keys of the first row are the columns); floats with ``digits``
    significant digits, NaN shown as ``missing``.  The chapters show their tables without importing pandas."""
    import html
    import math

    if not rows:
        return "<p>(no rows at this scale)</p>"
    cols = list(rows[0])

    def cell(v):
        if isinstance(v, float):
            return missing if math.isnan(v) else f"{v:.{digits}g}"
        return html.escape(str(v))

    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{cell(r.get(c, ''))}</td>" for c in cols) + "</tr>" for r in rows)
    return f"<table class='sf-synthesis'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
