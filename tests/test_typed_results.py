"""Issue 41, item 5: a sentence on a report or synthesis page that states a measured fact is generated from the
records (the ``{check-result}`` role, the generated directives), never typed. The prose typed into those pages is
scanned for what states a result: a check named without its generated result, a verdict verb about a measurement
("moves the thresholds"), a typed decimal, a claim that the book's scale is the source's. The two sentences the
reader test found stale are the detector's own test cases."""
import json
import re

import pytest

from shallowflow.run import cli
from shallowflow.verdicts import report

ROOT = cli.repo_root()

#: verbs that state how a measurement came out, and the scale claim no record can back
OUTCOME = re.compile(r"\b(moves?|moved|shifts?|shifted|confirms?|confirmed|(?:is|are) the source's(?: scale)?|"
                     r"book(?:'s)? scale is)\b", re.I)
SCALE_CLAIM = re.compile(r"\b((?:is|are) the source's(?: scale)?|book(?:'s)? scale is|runs? at the source's scale)\b", re.I)
CHECK = re.compile(r"`[A-Za-z][\w.-]*/[\w.-]+`")  # a check id in a code span: `Fig4/first-layer`
NUMBER = re.compile(r"(?<![\w.$\\-])\d+\.\d+(?![\w.])")  # a typed decimal (section numbers like 3.1.1 excluded)
GENERATED = "{check-result}"


def prose(text: str, notebook: bool = False) -> list[str]:
    """The typed sentences of a page: Markdown outside code, directives and mathematics (a notebook: its
    Markdown cells)."""
    if notebook:
        out, md = [], False
        for line in text.splitlines():
            if line.startswith("# %%"):
                md = "[markdown]" in line
                out.append("")
            elif md and line.startswith("#"):
                out.append(line[2:])
            else:
                out.append("")
        text = "\n".join(out)
    for pattern in (r"```.*?```", r":::.*?:::", r"\$\$.*?\$\$"):
        text = re.sub(pattern, "", text, flags=re.S)
    text = re.sub(r"\$[^$\n]+\$", "$", text)
    text = re.sub(r"\b(Fig|Figs|Eq|Sec|App|e\.g|i\.e|cf)\.\s", r"\1 ", text)  # abbreviations end no sentence
    return [s.strip().replace("\n", " ") for s in re.split(r"(?<=[.!?])\s+|\n\s*\n", text) if s.strip()]


def stale_report_sentences(text: str, notebook: bool = False) -> list[str]:
    """Report pages: every sentence stating a result (a check, an outcome verb, a decimal) carries its generated
    result."""
    return [s for s in prose(text, notebook) if GENERATED not in s
            and (CHECK.search(s) or OUTCOME.search(s) or NUMBER.search(s))]


def stale_synthesis_sentences(text: str) -> list[str]:
    """Synthesis pages (their prose also states the design: criteria fixed in advance): no check named without its
    generated result, no scale claim."""
    return [s for s in prose(text, notebook=True) if GENERATED not in s and (CHECK.search(s) or SCALE_CLAIM.search(s))]


def test_the_two_stale_sentences_are_caught():
    old_001 = ("The authors' code initialises the first layer with torch's default uniform law rather than the "
               "Gaussian of Appendix B, which moves the thresholds.")
    assert stale_report_sentences(old_001)
    assert stale_report_sentences("The check `Fig4/first-layer` finds the ratio 0.96.")
    synthesis = '# %% [markdown]\n# At the source\'s scale: no paper profile: the book scale is the source\'s.\n'
    assert stale_synthesis_sentences(synthesis)
    # generated: the same sentence with the record's result
    assert not stale_report_sentences("Whether it moves the threshold is the check {check-result}`001:Fig4/first-layer`.")


@pytest.mark.parametrize("page", sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "book").glob("*/report.md")))
def test_report_pages_type_no_result(page):
    assert stale_report_sentences((ROOT / page).read_text()) == []


@pytest.mark.parametrize("page", sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "book" / "synthesis").glob("*.py")))
def test_synthesis_pages_type_no_result(page):
    assert stale_synthesis_sentences((ROOT / page).read_text()) == []


def test_no_cost_text_claims_the_sources_scale():
    """The re-run boxes, report pages and build report word a chapter's source-scale cost with
    :func:`report.paper_cost_text`: a chapter without a params/paper file is never said to run at the source's
    scale (a synthesis chapter has no source at all)."""
    doc = json.loads((ROOT / "benchmarks" / "paper_scale.json").read_text())
    for chapter in doc["chapters"]:
        text = report.paper_cost_text(chapter, doc)
        if not report.paper_file(chapter).exists():
            assert not SCALE_CLAIM.search(text.replace("declared the source's, not compared", "")), (chapter, text)
    doc["chapters"]["orthogonal-inputs/toy"]["paper"]["basis"] = "no params/paper file: the book's parameters are the source's scale"
    assert "not compared" in report.paper_cost_text("orthogonal-inputs/toy", doc)


def test_deviation_sentence_says_what_was_compared():
    cost = [dict(chapter="weakly-interacting/no-such-chapter"), dict(chapter="weakly-interacting/convergence")]
    text = report.compared_text(cost, 0)
    assert "every chapter" not in text and not SCALE_CLAIM.search(text)
    assert "1 of this source's 2 chapters has a source-scale file (weakly-interacting/convergence)" in text
    assert "1 has none (weakly-interacting/no-such-chapter)" in text


def test_check_result_is_read_from_the_records():
    from shallowflow import verdicts as C

    reg = C.load_registry()
    rows = [dict(source="001", target="Fig4", checks=[dict(
        id="Fig4/first-layer", verdict="pass", measured="[0.9, 1.02] (95% bootstrap interval, n = 480)",
        criterion="in [0.83, 1.2]", margin_text="0.07 inside")])]
    html = report.check_result_html("001", "Fig4/first-layer", rows, reg, "book/weakly-interacting")
    assert "threshold.html#check-001-fig4-first-layer" in html
    assert ">pass<" in html and "[0.9, 1.02] (95% bootstrap interval, n = 480)" in html and "0.07 inside" in html
    assert "not in this build's records" in report.check_result_html("001", "Fig4/first-layer", [], reg)


def test_long_parameter_values_are_shortened_with_their_count():
    assert report.short_value(list(range(500))) == "[0, 1, ..., 499] (500 consecutive values)"
    assert report.short_value([3, 1, 4, 1, 5, 9, 2, 6, 5]) == "[3, 1, 4, ..., 5] (9 values)"
    assert report.short_value([0, 1, 2]) == "[0, 1, 2]" and report.short_value(0.5) == "0.5"
    assert "title='[0, 1," in report.value_html(list(range(20)))
