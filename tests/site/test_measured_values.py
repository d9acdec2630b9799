"""Issue 41 items 1-3 on the built site: every check's measured value says what kind of number it is (a value, a
range over runs with their count, an interval with its level and count), no interval of a bounded quantity leaves
its bounds, and every check row has a margin, with each report page's closest calls."""
import html as H
import re

import pytest

from shallowflow.run import cli

HTML = cli.repo_root() / "_build" / "html"
NUM = r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?"


def pages():
    return sorted((HTML / "book").rglob("*.html"))


def text_of(path) -> str:
    return H.unescape(re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8")))


def test_every_check_value_says_its_kind(scorecard):
    wrong = []
    for t in scorecard["targets"]:
        for c in t["checks"]:
            m, kind, runs = c["measured"], c.get("kind"), c.get("runs")
            if not kind:
                wrong.append(f"{t['source']}:{c['id']}: no kind recorded ({m})")
                continue
            over = re.search(r"\(range over (\d+) runs\)", m)
            if over and int(over.group(1)) != runs:
                wrong.append(f"{t['source']}:{c['id']}: a range over {over.group(1)} runs where {runs} ran")
            if re.search(r"\(\d+ runs\)$", m):  # the old label: an interval's ends read as runs
                wrong.append(f"{t['source']}:{c['id']}: unlabelled run count ({m})")
            if kind == "interval" and not re.search(r"\(\d+% .*interval, n = \d+\)$", m):
                wrong.append(f"{t['source']}:{c['id']}: an interval without its level and count ({m})")
            if kind == "range" and "range over" not in m and "(all " not in m:
                wrong.append(f"{t['source']}:{c['id']}: a range without its run count ({m})")
    assert not wrong, "\n".join(wrong[:40])


SHARE = re.compile(rf"\d+/\d+ (?:runs|cells|draws)[^()]*\((?:nan|\d+)%, \d+% interval \[({NUM}|nan), ({NUM}|nan)\]\)")
ACCURACY = re.compile(rf"(?:grid-best SGD|ADLER|GN) {NUM} ± {NUM} \(\d+ runs; \d+%[\w -]* interval \[({NUM}), ({NUM})\]\)")


def test_no_interval_outside_its_declared_bounds():
    """Shares (Wilson) and ADLER's accuracies (declared bounded in [0, 1]) never print an end outside [0, 1]."""
    outside, seen = [], 0
    for page in pages():
        text = text_of(page)
        for rx in (SHARE, ACCURACY):
            for m in rx.finditer(text):
                if "nan" in m.groups():
                    continue
                seen += 1
                lo, hi = float(m.group(1)), float(m.group(2))
                if not 0.0 <= lo <= hi <= 1.0:
                    outside.append(f"{page.relative_to(HTML)}: {m.group(0)}")
    assert seen, "no share or accuracy interval found on the built pages"
    assert not outside, "\n".join(outside[:20])


def test_every_check_row_has_a_margin(scorecard):
    missing = [f"{t['source']}:{c['id']}" for t in scorecard["targets"] for c in t["checks"] if not c.get("margin_text")]
    assert not missing, f"checks recorded without a margin: {missing[:20]}"
    bad = []
    for page in pages():
        doc = page.read_text(encoding="utf-8")
        for table in re.findall(r"<table class=\"sf-claims\">.*?</table>", doc, flags=re.S):
            if "<th>margin</th>" not in table:
                bad.append(f"{page.relative_to(HTML)}: a check table without a margin column")
                continue
            for row in re.findall(r"<tr class='sf-check'.*?</tr>", table, flags=re.S):
                cell = re.search(r"<td class='sf-col-margin'>(.*?)</td>", row, flags=re.S)
                if not cell or not cell.group(1).strip():
                    bad.append(f"{page.relative_to(HTML)}: {re.sub('<[^>]+>', ' ', row)[:80]}")
    assert not bad, "\n".join(bad[:20])


def test_each_report_page_lists_its_closest_calls():
    reports = [p for p in pages() if p.name == "report.html"]
    assert reports, "no report pages built"
    for page in reports:
        doc = page.read_text(encoding="utf-8")
        assert "<h3>Closest calls</h3>" in doc or ">Closest calls<" in doc, page
        rows = re.findall(r"<table class='sf-closest'>.*?</table>", doc, flags=re.S)
        assert rows and "</a></td>" in rows[0], f"{page}: no closest-call check listed"
