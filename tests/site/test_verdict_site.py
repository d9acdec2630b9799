"""The built site's verdicts are the registry's, proved: every target reads on the scorecard what the
registry predicts from its registered verdicts and proved causes, every excusing cause's evidence held in
this build, and every why on the errata page was filled from this build's records."""

import pytest

from shallowflow.run import cli
from shallowflow import verdicts as V

HTML = cli.repo_root() / "_build" / "html"


def test_every_target_reads_what_the_registry_predicts(scorecard):
    predicted = V.registered_verdicts(V.load_registry(), scorecard["profile"])
    built = {f"{t['source']}:{t['target']}": t["verdict"] for t in scorecard["targets"]}
    wrong = {k: (built[k], predicted[k]) for k in predicted if built.get(k) != predicted[k]}
    assert not wrong, f"built vs predicted verdicts differ: {wrong}"


def test_every_excusing_cause_was_proved_in_this_build(scorecard):
    unproved = [f"{t['source']}:{c['id']}" for t in scorecard["targets"] for c in t["checks"]
                if c["verdict"] == "fail" and c["cause"] in V.EVIDENCE_CAUSES and c["evidence_status"] != "verified"]
    assert not unproved, f"failing checks whose cause is not proved in this build: {unproved}"


def test_errata_whys_are_filled_from_this_build():
    text = (HTML / "book" / "appendix" / "errata.html").read_text(encoding="utf-8")
    assert "not measured in this run" not in text
    assert "{measured}" not in text


def test_each_chapter_shows_its_targets_with_the_scorecards_verdict(scorecard):
    """One verdict per target everywhere: every chapter page lists the targets it checks with the verdict of
    scorecard.json (computed from all the chapters holding the target's checks) and links those chapters."""
    import re

    for t in scorecard["targets"]:
        for chapter in t.get("chapters") or []:
            page = (HTML / f"{chapter}.html").read_text(encoding="utf-8")
            key = f"{t['source']}:{t['target']}"
            m = re.search(rf"data-target='{re.escape(key)}' data-verdict='([^']*)'", page)
            assert m, f"{chapter} checks {key} but does not list it"
            assert m.group(1) == t["verdict"].replace("'", "&#x27;"), (chapter, key, m.group(1), t["verdict"])
            for other in t["chapters"]:
                if other != chapter:
                    assert other.rsplit("/", 1)[-1] + ".html" in page, (chapter, key, other)


REPORTS = {"000": "brisbois-thesis", "001": "weakly-interacting", "002": "early-alignment",
           "003": "orthogonal-inputs", "004": "balboni-thesis"}


def test_reproduction_reports_are_generated_from_this_build(scorecard):
    """Each source's report page shows the label and counts that scorecard.json's reports computed from the
    targets' verdicts by the stated rule, and its typed prose states no count."""
    import html
    import re

    from shallowflow.verdicts import report

    for key, part in REPORTS.items():
        rep = scorecard["reports"][key]
        verdicts = [t["verdict"] for t in scorecard["targets"] if t["source"] == key]
        assert rep["label"] == report.summary_label(verdicts)[0]
        page = (HTML / "book" / part / "report.html").read_text(encoding="utf-8")
        assert f"<b>{rep['label']}</b>" in page and html.escape(report.SUMMARY_RULE.split(",")[0]) in page
        assert f"{rep['reproduced']} of {rep['decided']} decided targets reproduced" in page
        for t in rep["targets"]:
            assert f"<b>{t['target']}</b>" in page, (key, t["target"])
        prose = (cli.repo_root() / "book" / part / "report.md").read_text()
        prose = re.sub(r"`[^`]*`|\{[^}]*\}|\(\d{3}\)|reproduction-report\} \d{3}", "", prose)
        prose = re.sub(r"\b(Section|Appendix|Algorithm|Lemma|Theorem|Figure|Fig\.|eq\.)\s*\(?[\w.]+\)?", "", prose)
        assert not re.findall(r"\d", prose), f"{part}/report.md types numbers: the report's numbers are generated"


def test_no_raw_math_in_rendered_text():
    """Math is typeset everywhere the book states a formula, generated text included: no `$` stands in a page's
    text outside code, scripts and styles (issue 28, point 3)."""
    from html.parser import HTMLParser

    class Text(HTMLParser):
        skip = ("pre", "code", "script", "style", "textarea")

        def __init__(self):
            super().__init__()
            self.depth, self.hits = 0, []

        def handle_starttag(self, tag, attrs):
            if tag in self.skip:
                self.depth += 1

        def handle_endtag(self, tag):
            if tag in self.skip and self.depth:
                self.depth -= 1

        def handle_data(self, data):
            if not self.depth and "$" in data:
                self.hits.append(data.strip()[:120])

    raw = {}
    for page in sorted(HTML.rglob("*.html")):
        if "_static" in page.parts or "_modules" in page.parts or page.name in ("genindex.html", "search.html"):
            continue
        t = Text()
        t.feed(page.read_text(encoding="utf-8"))
        if t.hits:
            raw[str(page.relative_to(HTML))] = t.hits[:3]
    assert not raw, f"raw $ in rendered text: {raw}"
