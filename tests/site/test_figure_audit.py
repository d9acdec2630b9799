"""Two audits of the figures the site shows, read from the executed notebooks the site is built from
(``artifacts/runs/<edition>/``):

* **every figure states its data**: for each figure (an image output), its own cell's printed text, its
  titles and labels, or the prose just before it names the data set (``Dataset 1.1.0``, "data",
  "digits", "n = 40 points", ...);
* **the source's values beside the book's**: a figure whose cell draws the source's reported values
  (a label or a call naming the source / paper / thesis / authors, or a ``source_value``).

Chapters are owned by their authors: these tests list the chapters that fall short (``-s`` prints them) and
fail only when a chapter joins a list; the committed ``KNOWN_*`` sets (read from the smoke edition of commit
682061c) shrink as chapters are fixed. The audit reads cell sources and printed text: a title drawn inside a
library plotting function is invisible to it, so a listed chapter may state its data in the image itself.
"""
import os
import re

import nbformat
import pytest

from shallowflow.run import cli

ROOT = cli.repo_root()
EDITION = os.environ.get("SHALLOWFLOW_EDITION", "").strip() or "book"
RUNS = ROOT / "artifacts" / "runs" / EDITION

DATA_WORDS = re.compile(
    r"\b(data(?:[ -]?sets?)?|Dataset\s*\d|digits|CIFAR|mixture|inputs?\b|training set|samples?|"
    r"n\s*=\s*\d+|\d+\s+(?:points|examples|inputs))\b", re.I)
SOURCE_DRAWN = re.compile(
    r"(label\s*=\s*f?[\"'][^\"'\n]*\b(paper|source|thesis|authors?|reported|Fig\.?\s*\d)"
    r"|source_value|paper_value|reported_|SOURCE_[A-Z_]+|\bplots\.source)", re.I)

# the chapters that fall short in the build these lists were read from; chapter owners remove their entries
KNOWN_WITHOUT_DATA: set[str] = set()
KNOWN_WITHOUT_SOURCE_VALUES: set[str] = {
    "balboni-thesis/adler", "balboni-thesis/adler-theory",
    "balboni-thesis/deep-kernels",
    "brisbois-thesis/label-variants", "brisbois-thesis/multidimensional",
    "brisbois-thesis/non-orthogonal", "brisbois-thesis/pl-analysis",
    "brisbois-thesis/s-curves",
    "brisbois-thesis/width-grid", "early-alignment/alignment", "early-alignment/assumption3",
    "early-alignment/failure-rates", "early-alignment/staircase",
    "orthogonal-inputs/appendix-a", "orthogonal-inputs/balancedness",
}


def _figures(chapter: str):
    """(figure cell, the text near it) for every cell of the chapter with an image output."""
    nb = nbformat.read(RUNS / f"{chapter}.ipynb", as_version=4)
    prose = ""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            prose = cell.source
            continue
        outs = cell.get("outputs", [])
        if not any("image/png" in o.get("data", {}) or "image/svg+xml" in o.get("data", {}) for o in outs):
            continue
        text = [o.get("text", "") for o in outs if o.get("output_type") == "stream"]
        text += [str(o.get("data", {}).get(k, "")) for o in outs for k in ("text/markdown", "text/html", "text/plain")]
        yield cell, prose + "\n" + "\n".join(text)


def _chapters() -> list[str]:
    if not RUNS.is_dir():
        pytest.fail(f"no executed notebooks in {RUNS}: run `make book` first")
    return [c for c in cli.chapters() if c != "scorecard" and (RUNS / f"{c}.ipynb").exists()]


def _audit() -> tuple[dict, dict]:
    no_data, no_source = {}, {}
    for chapter in _chapters():
        figures = list(_figures(chapter))
        bare = [i for i, (cell, near) in enumerate(figures) if not (DATA_WORDS.search(near) or DATA_WORDS.search(
            " ".join(re.findall(r"(?:title|label|suptitle|xlabel|ylabel)\s*\(?=?\s*f?[\"']([^\"'\n]*)", cell.source))))]
        if bare:
            no_data[chapter] = f"{len(bare)} of {len(figures)} figures"
        if figures and not any(SOURCE_DRAWN.search(cell.source) for cell, _ in figures):
            no_source[chapter] = f"{len(figures)} figures"
    return no_data, no_source


@pytest.fixture(scope="module")
def audit():
    return _audit()


def test_every_figure_states_its_data(audit):
    no_data, _ = audit
    print("chapters with a figure that does not state its data:", no_data)
    new = sorted(set(no_data) - KNOWN_WITHOUT_DATA)
    assert not new, f"figures that do not state their data (caption, title or the prose before them): " \
                    f"{ {c: no_data[c] for c in new} }"
    print("fixed since the list was read (remove them from KNOWN_WITHOUT_DATA):", sorted(KNOWN_WITHOUT_DATA - set(no_data)))


def test_figures_draw_the_sources_values(audit):
    _, no_source = audit
    print("chapters whose figures draw no source value:", no_source)
    new = sorted(set(no_source) - KNOWN_WITHOUT_SOURCE_VALUES)
    assert not new, f"chapters whose figures draw none of the source's reported values: {new}"
    print("fixed since the list was read (remove them from KNOWN_WITHOUT_SOURCE_VALUES):",
          sorted(KNOWN_WITHOUT_SOURCE_VALUES - set(no_source)))
