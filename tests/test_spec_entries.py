"""The reproduction specifications' entries that the book cites ("spec section 7", "spec erratum 9", "EXP1.a",
"the spec's section 2.2") are published in the book: ``book/appendix/spec-entries.md`` holds their text, each
under an anchor, and the site links every citation on a chapter page to its anchor
(:func:`shallowflow.site.ext._link_spec_citations`).

The specifications live outside the repository (``/work/shared/spec``, or ``$SHALLOWFLOW_SPEC_DIR``), so the
page is committed: where the specifications are present, the page must equal what :func:`generate` writes
from them (``python tests/test_spec_entries.py --write`` regenerates it); everywhere, every citation in the
book, the registry and the library must have its anchor on the page.
"""
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "appendix" / "spec-entries.md"
SPEC_DIR = Path(os.environ.get("SHALLOWFLOW_SPEC_DIR", "/work/shared/spec"))
sys.path.insert(0, str(ROOT / "lib"))
from shallowflow.site.ext import PART_SOURCE, SPEC_CITATION, citation_anchor, spec_anchor  # noqa: E402

# the cited entries, per source: a section number (its whole text) or an erratum/cell label inside a section
CITED = {
    "000": ["2.2"],
    "001": ["0"],                     # EXP1.a and the errata (a)-(e) are items of section 0
    "003": ["4", "7"],
    "004": ["2.2", "3.5", "4"],       # section 4 holds 4.2 and the consolidated errata of 4.7
}
TITLES = {"000": "Brisbois, master's thesis", "001": "Dana, Pillaud-Vivien, Bach", "002": "Boursier, Flammarion",
          "003": "Boursier, Pillaud-Vivien, Flammarion", "004": "Balboni, PhD thesis"}


def _spec_file(key: str) -> Path:
    return next(SPEC_DIR.glob(f"{key}_*.md"))


def _section(text: str, number: str) -> tuple[str, str]:
    """(heading, body) of section ``number`` (``2.2``, ``0``): from its heading to the next heading of the same
    or a higher level."""
    lines = text.splitlines()
    pat = re.compile(rf"^(#+)\s+(?:★\s*)?{re.escape(number)}\.?\s")
    start = next(i for i, line in enumerate(lines) if pat.match(line))
    level = len(pat.match(lines[start]).group(1))
    end = next((j for j in range(start + 1, len(lines))
                if re.match(r"^(#+)\s", lines[j]) and len(re.match(r"^(#+)", lines[j]).group(1)) <= level), len(lines))
    body = "\n".join(lines[start + 1:end]).strip()
    body = re.sub(r"\n---\s*$", "", body).strip()
    return lines[start].lstrip("#").strip(), body


def _demote(body: str) -> str:
    """Headings inside an entry become bold lines with an anchor (``4.2``, ``4.7``), so the page's own
    headings stay the entries."""
    def head(m):
        title = m.group(2).strip()
        num = re.match(r"(?:★\s*)?(\d+(?:\.\d+)*)", title)
        return (f"<span id='{ANCHOR_PREFIX}{num.group(1).replace('.', '-')}'></span>" if num else "") + f"**{title}**"
    return re.sub(r"^(#+)\s+(.*)$", head, body, flags=re.M)


ANCHOR_PREFIX = "@@"  # replaced by the entry's source-specific prefix


def _anchor_items(key: str, body: str) -> str:
    """Anchors for the errata and labelled cells cited by number: 004's numbered errata (4.7), 001's (a)-(e)
    and its EXP1.a cell."""
    if key == "004":
        head, rest = body.split("Consolidated errata", 1) if "Consolidated errata" in body else (body, "")
        rest = re.sub(r"^(\d+)\. ", lambda m: f"{m.group(1)}. <span id='{spec_anchor(key, 'erratum', m.group(1))}'>"
                      "</span>", rest, flags=re.M)
        body = head + ("Consolidated errata" + rest if rest else "")
    if key == "001":
        body = re.sub(r"^(\s*)\* \(([a-e])\) ", lambda m: f"{m.group(1)}* <span id='{spec_anchor(key, 'erratum', m.group(2))}'>"
                      f"</span>({m.group(2)}) ", body, flags=re.M)
        body = body.replace('"EXP1.a"', f"<span id='{spec_anchor(key, 'cell', 'EXP1.a')}'></span>\"EXP1.a\"")
    return body


def generate() -> str:
    out = ["# Specification entries cited by the book", "",
           "The chapters cite the reproduction specification of their source (the plan that lists each "
           "source's targets, errata and ambiguities) as *spec section 7*, *spec erratum 9*, *EXP1.a*. Those "
           "entries are copied here word for word, each under its own anchor, and every such citation on a "
           "chapter page links to its entry. The copy is checked against the specifications by "
           "`tests/test_spec_entries.py` wherever they are present.", ""]
    for key, sections in CITED.items():
        path = _spec_file(key)
        out += [f"## {key}: {TITLES[key]}", "", f"From `{path.name}`.", ""]
        for number in sections:
            title, body = _section(path.read_text(encoding="utf-8"), number)
            body = _anchor_items(key, _demote(body)).replace(ANCHOR_PREFIX, spec_anchor(key, "section", "")[:-1] + "-")
            out += [f"<span id='{spec_anchor(key, 'section', number)}'></span>", "",
                    f"### {key}, section {title}", "", body, ""]
    return "\n".join(out).rstrip() + "\n"


def _citations() -> dict[str, set[str]]:
    """Every anchor a citation in the book, the registry or the library needs, with where it is cited."""
    need = {}
    files = [*ROOT.glob("book/*/*.py"), *ROOT.glob("book/*/*.md"), *ROOT.glob("verdicts/*.yml"),
             *ROOT.glob("lib/shallowflow/experiments/*/*.py"), *ROOT.glob("lib/shallowflow/deep/*.py")]
    for f in files:
        part = f.parent.name.replace("_", "-")
        key = PART_SOURCE.get(part) or (f.stem if f.parent.name == "verdicts" else None)
        if key not in TITLES:
            continue
        for m in SPEC_CITATION.finditer(f.read_text(encoding="utf-8")):
            need.setdefault(citation_anchor(key, m), set()).add(str(f.relative_to(ROOT)))
    return need


def test_every_cited_entry_has_its_anchor_on_the_page():
    page = PAGE.read_text(encoding="utf-8")
    need = _citations()
    assert need, "no citation found: the pattern no longer matches the book"
    missing = {a: sorted(w) for a, w in need.items() if f"id='{a}'" not in page}
    assert not missing, f"cited spec entries missing from {PAGE.relative_to(ROOT)}: {missing}"


@pytest.mark.skipif(not SPEC_DIR.is_dir(), reason=f"the specifications are not on this machine ({SPEC_DIR})")
def test_the_page_is_the_specifications_text():
    assert PAGE.read_text(encoding="utf-8") == generate(), \
        "book/appendix/spec-entries.md differs from the specifications: `python tests/test_spec_entries.py --write`"


if __name__ == "__main__" and "--write" in sys.argv:
    PAGE.write_text(generate(), encoding="utf-8")
    print(f"wrote {PAGE}")
