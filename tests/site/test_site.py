"""Tier 4: the built site shows what it should (run by `make book` after the build).

Static checks (always): every chapter of the toc has a page, every page's images exist, no page
loads a script, style sheet or font from the network, MathJax is served from the build, the
scorecard lists every registered target with a verdict and a link to its chapter, and each chapter
shows its verdict table.  Browser check (when Debian's chromium is installed, as in CI): the pages
render in a real headless browser with the network off, MathJax typesets the math and the images load.
"""
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from shallowflow.run import cli
from shallowflow.verdicts import load_registry

ROOT = cli.repo_root()
HTML = ROOT / "_build" / "html"


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.resources, self.images, self.links, self.text = [], [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script" and a.get("src"):
            self.resources.append(a["src"])
        if tag == "link" and a.get("rel") in ("stylesheet", "preload") and a.get("href"):
            self.resources.append(a["href"])
        if tag == "img":
            self.images.append(a.get("src", ""))
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])

    def handle_data(self, data):
        self.text.append(data)


def parse(path: Path) -> Page:
    p = Page()
    p.feed(path.read_text(encoding="utf-8"))
    return p


@pytest.fixture(scope="module")
def pages():
    if not (HTML / "index.html").exists():
        pytest.fail("no built site in _build/html: run `make book` first")
    docs = ["book/intro", "book/scorecard"] + [f"book/{c}" for c in cli.chapters() if c != "scorecard"]
    return {d: parse(HTML / f"{d}.html") for d in docs}


def test_every_toc_page_is_built(pages):
    toc = (ROOT / "_toc.yml").read_text()
    for doc in re.findall(r"file: (\S+)", toc):
        assert (HTML / f"{doc}.html").exists(), doc


def test_no_network_resources_and_local_mathjax(pages):
    for doc, page in pages.items():
        remote = [r for r in page.resources if re.match(r"^(https?:)?//", r)]
        assert not remote, f"{doc} loads {remote}"
        if 'class="math' in (HTML / f"{doc}.html").read_text():
            assert any(r.split("?")[0].endswith("_static/mathjax/tex-chtml.js") for r in page.resources), doc
    assert 'class="math' in (HTML / "book/orthogonal-inputs/toy.html").read_text()
    assert (HTML / "_static" / "mathjax" / "tex-chtml.js").exists()
    assert (HTML / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").is_dir()


def test_images_exist(pages):
    for doc, page in pages.items():
        for src in page.images:
            assert (HTML / doc).parent.joinpath(src).resolve().exists(), (doc, src)


def test_chapters_show_figures_and_verdicts(pages):
    for chapter in cli.chapters():
        if chapter == "scorecard":
            continue
        page = pages[f"book/{chapter}"]
        source = (ROOT / "book" / f"{chapter}.py").read_text()
        if re.search(r"\bplt\.(show|subplots|figure)\b|\bplots\.", source):  # a chapter that draws figures
            assert page.images, f"{chapter} draws figures but its page shows none"
        html = (HTML / f"book/{chapter}.html").read_text()
        assert "sf-claims" in html and re.search(r'class="sf-verdict"[^>]*>(pass|fail)<', html), chapter


def test_scorecard_lists_every_target_with_verdict_and_link(pages):
    html = (HTML / "book" / "scorecard.html").read_text()
    reg = load_registry()
    for key, entry in reg["targets"].items():
        source, target = key.split(":", 1)
        assert f"id='{source}-{target}'" in html or f'id="{source}-{target}"' in html, key
        if entry.get("chapter"):
            href = Path(entry["chapter"]).relative_to("book").as_posix() + ".html"
            assert href in html, (key, href)
            assert (HTML / f"{entry['chapter']}.html").exists()
    assert "not run" not in " ".join(pages["book/scorecard"].text)


def test_scorecard_function_links_resolve(pages):
    """Every target's `function` link lands on that function's entry in the API reference."""
    api = (HTML / "book" / "appendix" / "api.html").read_text()
    functions = {e["function"] for e in load_registry()["targets"].values() if e.get("function")}
    assert functions
    scorecard = (HTML / "book" / "scorecard.html").read_text()
    for fn in sorted(functions):
        assert f'id="{fn}"' in api, f"{fn} has no entry in the API reference"
        assert f"appendix/api.html#{fn}" in scorecard, f"the scorecard does not link {fn}"


def _chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.mark.skipif(_chromium() is None, reason="no chromium on this machine (CI installs Debian's)")
@pytest.mark.parametrize("doc", ["book/intro", "book/orthogonal-inputs/toy", "book/early-alignment/spurious",
                                 "book/scorecard"])
def test_pages_render_in_a_browser_offline(doc, tmp_path):
    """Dump the DOM after scripts ran: MathJax must have typeset (mjx-container) and images loaded."""
    url = (HTML / f"{doc}.html").as_uri()
    cmd = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={tmp_path}", "--proxy-server=127.0.0.1:9", "--virtual-time-budget=15000",
           "--dump-dom", url]
    dom = subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout
    assert "<body" in dom, "chromium produced no DOM"
    if 'class="math' in (HTML / f"{doc}.html").read_text():
        assert "<mjx-container" in dom, f"MathJax did not typeset {doc}"
        assert "<mjx-merror" not in dom, f"MathJax reported an error on {doc}"
    n_img = (HTML / f"{doc}.html").read_text().count("<img")
    assert dom.count("<img") >= n_img
    if "anim-buttons" in (HTML / f"{doc}.html").read_text():  # an animation player (E4)
        for icon in ("play", "pause", "forward-step", "backward-step"):
            assert f'data-icon="{icon}"' in dom, f"the player's {icon} button has no icon on {doc} (offline)"


def test_scorecard_json_in_the_site_validates_and_matches_the_page(pages):
    """The built site carries scorecard.json: it validates against SCORECARD_SCHEMA and lists every target
    of the registry with the verdict the scorecard page shows."""
    import json

    import jsonschema

    from shallowflow.verdicts import SCORECARD_SCHEMA

    doc = json.loads((HTML / "scorecard.json").read_text())
    jsonschema.validate(doc, SCORECARD_SCHEMA)
    assert doc["profile"] == "book"
    reg = load_registry()
    assert {f"{t['source']}:{t['target']}" for t in doc["targets"]} == set(reg["targets"])
    html = (HTML / "book" / "scorecard.html").read_text()
    for t in doc["targets"]:
        row = html[html.index(f"id='{t['source']}-{t['target']}'"):]
        assert f"data-verdict='{t['verdict']}'" in html and t["verdict"] in row[:2000], (t["source"], t["target"])
    assert all(sum(s["counts"].values()) == sum(t["source"] == k for t in doc["targets"])
               for k, s in doc["sources"].items())


REPORT_LINE = re.compile(r"^\s*(PASS|FAIL)\s+[\w.\-]+/[\w.\-]+", re.M)  # claims.report()'s "  PASS  E1/final-loss ..."


def test_each_verdict_is_presented_once(pages):
    """A chapter shows its checks once, as the HTML table; the plain-text report nbval compares is not also shown."""
    for chapter in cli.chapters():
        if chapter == "scorecard":
            continue
        html = (HTML / f"book/{chapter}.html").read_text()
        printed = [m for pre in re.findall(r"<pre[^>]*>(.*?)</pre>", html, re.S) for m in REPORT_LINE.findall(pre)]
        assert not printed, f"{chapter} prints its report beside the check table ({len(printed)} lines)"


def test_pages_do_not_repeat_the_injected_parameters(pages):
    """Papermill's injected cell repeats the parameters cell: the book edition hides it."""
    for doc in pages:
        assert "injected-parameters" not in (HTML / f"{doc}.html").read_text(), doc


PROGRESS_BAR = re.compile(r"\d+%\|[^|\n]{0,40}\|\s*\d+(\.\d+)?/\d+")  # tqdm's " 45%|####5     | 450/1000"


def test_pages_show_no_progress_bars(pages):
    """Progress bars are for people watching a run, never part of a built page (the executor sets
    SHALLOWFLOW_PROGRESS=0 for every chapter, and headless kernels draw none)."""
    for doc in pages:
        html = (HTML / f"{doc}.html").read_text(encoding="utf-8")
        m = PROGRESS_BAR.search(html)
        assert m is None, (doc, html[max(0, m.start() - 80):m.end() + 40])


def test_build_report_lists_every_page_with_its_time_and_start():
    """The build report page: one row per executed page (every chapter and the scorecard), with a
    positive execution time and its start after the first page."""
    html = (HTML / "book" / "appendix" / "build-report.html").read_text(encoding="utf-8")
    table = html[html.index("sf-build-report"):]
    rows = re.findall(r"<tr id='build-[^']*'><td><a href='[^']*'>([^<]+)</a></td><td[^>]*>([\d.]+)</td>"
                      r"<td[^>]*>(\d*)</td>", table)
    assert {r[0] for r in rows} == set(cli.chapters()), "pages missing from the build report"
    assert all(float(t) > 0 for _, t, _ in rows)
    assert all(s != "" for _, _, s in rows) and min(int(s) for _, _, s in rows) == 0
