"""Nothing on a page is cut off, at a desktop width (1400 px) and at a phone width (390 px).

A reader at 390 px must be able to reach every column of every table: content that does not fit either
wraps or sits in a horizontally scrollable container (``overflow-x: auto``) that shows it scrolls. In a
real browser (Playwright driving the system's chromium, as ``test_browser.py`` does; skipped with one line
without a chromium, mandatory with ``CI=true``), every rendered element of the article is measured, and
the page fails when

* an element's content is wider than its box (``scrollWidth > clientWidth``) while its ``overflow-x`` is
  ``hidden``/``clip`` (cut off), or ``visible`` with no horizontally scrollable ancestor (spilling out), or
* an element extends past the viewport's right or left edge with no horizontally scrollable ancestor, or
* a scroll container that overflows gives no sign that it scrolls (``.sf-scroll`` shows a scrollbar and a
  shadow at the cut edge; see ``book/_static/shallowflow.css``).

Pages: the intro, the scorecard, the first chapter of every part, the errata page and the build report.
Screenshots of the viewport (the top of the page and, on a chapter, its check table) land in
``_build/artifacts/screenshots/layout/``, or in ``$SHALLOWFLOW_SCREENSHOTS`` (``benchmarks/screenshots/``
holds the committed set).
"""
import os
import re
from pathlib import Path

import pytest

from shallowflow.run import cli

ROOT = cli.repo_root()
HTML = ROOT / "_build" / "html"
WIDTHS = {"desktop": (1400, 900), "phone": (390, 844)}

from test_browser import NO_CHROMIUM, find_chromium, in_ci  # noqa: E402  (the same skip rule)

if not find_chromium() and not in_ci():
    pytest.skip(f"the layout check was skipped ({NO_CHROMIUM}; with CI=true it is mandatory)",
                allow_module_level=True)


def layout_pages() -> list[str]:
    """The intro, the scorecard, the first chapter (after the report) of every part, the errata page and the
    build report, in the toc's order."""
    toc = (ROOT / "_toc.yml").read_text()
    firsts = []
    for part in re.split(r"\n\s*- caption:", toc)[1:]:
        files = [f for f in re.findall(r"file: (\S+)", part) if not f.endswith("/report")]
        if files and "/appendix/" not in files[0] and not files[0].endswith("scorecard"):
            firsts.append(files[0])
    return ["book/intro", "book/scorecard", *firsts, "book/appendix/errata", "book/appendix/build-report"]


SHOT_PAGES = lambda: [d for d in layout_pages() if d != "book/appendix/build-report"]  # noqa: E731

# Measures every rendered element of the article (and the document itself) and returns the clipped ones.
MEASURE = r"""
() => {
  const vw = document.documentElement.clientWidth;
  const out = [];
  const scrollsX = (el) => { const o = getComputedStyle(el).overflowX; return o === 'auto' || o === 'scroll'; };
  const scrollAncestor = (el) => { for (let a = el.parentElement; a; a = a.parentElement) {
      if (scrollsX(a) && a !== document.documentElement && a !== document.body) return a; } return null; };
  const name = (el) => {
    let s = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
            (typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\s+/).slice(0, 2).join('.') : '');
    const t = (el.innerText || el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 60);
    return s + (t ? ' "' + t + '"' : '');
  };
  if (document.documentElement.scrollWidth > vw + 1)
    out.push('the page scrolls sideways: ' + document.documentElement.scrollWidth + ' px wide in a ' + vw + ' px viewport');
  const root = document.querySelector('main') || document.body;
  for (const el of root.querySelectorAll('*')) {
    if (!el.getClientRects().length) continue;                       // not rendered
    const cs = getComputedStyle(el);
    if (cs.visibility === 'hidden' || cs.position === 'fixed') continue;
    if (el.closest('mjx-assistive-mml, .visually-hidden, .sr-only, script, style, svg, details:not([open]) > :not(summary)')) continue;
    if (el.clientWidth <= 2 && el.clientHeight <= 2) continue;        // a screen-reader copy, a 1 px rule
    const anc = scrollAncestor(el);
    const ox = cs.overflowX;
    const inline = cs.display.startsWith('inline') && !['inline-block', 'inline-flex', 'inline-grid', 'inline-table'].includes(cs.display);
    // MathJax's hidden MathML copy (absolutely positioned and clipped) widens a formula's scrollWidth without
    // showing anything: a formula is measured by its box against the viewport (below), not by scrollWidth
    const math = el.matches('mjx-container, span.math, mjx-container *');
    if (!inline && !math && el.scrollWidth > el.clientWidth + 2) {
      if (ox === 'hidden' || ox === 'clip') out.push('cut off (overflow ' + ox + '): ' + name(el) + ' ' + el.scrollWidth + ' px of content in ' + el.clientWidth + ' px');
      else if (ox === 'visible' && !anc) out.push('spills out of its box: ' + name(el) + ' ' + el.scrollWidth + ' px of content in ' + el.clientWidth + ' px');
      else if ((ox === 'auto' || ox === 'scroll') && el.classList.contains('sf-scroll') && !el.classList.contains('sf-scrolls'))
        out.push('scrolls without showing it: ' + name(el));
    }
    const r = el.getBoundingClientRect();
    const pr = el.parentElement && el.parentElement.getBoundingClientRect();
    const parentPast = pr && (pr.right > vw + 1 || pr.left < -1);  // report the outermost element only
    if ((r.right > vw + 1 || r.left < -1) && !anc && r.width > 0 && !parentPast)
      out.push('past the viewport edge (' + Math.round(r.left) + '..' + Math.round(r.right) + ' of ' + vw + ' px): ' + name(el));
  }
  return out;
}
"""


def shots_dir() -> Path:
    env = os.environ.get("SHALLOWFLOW_SCREENSHOTS")
    return Path(env) if env else ROOT / "_build" / "artifacts" / "screenshots" / "layout"


def _shot(page, path: Path) -> None:
    """A viewport screenshot, as a 128-colour PNG (text pages lose nothing visible, a third of the bytes)."""
    import io

    from PIL import Image

    Image.open(io.BytesIO(page.screenshot())).convert("RGB").quantize(colors=128).save(path, optimize=True)


@pytest.mark.parametrize("width", list(WIDTHS))
@pytest.mark.parametrize("doc", layout_pages())
def test_nothing_is_clipped(browser, doc, width):
    path = HTML / f"{doc}.html"
    assert path.exists(), f"{doc} was not built"
    w, h = WIDTHS[width]
    context = browser.new_context(viewport={"width": w, "height": h})
    context.route(re.compile(r"^(?!file:).*"), lambda route: route.abort())  # offline
    page = context.new_page()
    page.goto(path.as_uri(), wait_until="load", timeout=120_000)  # the scorecard is large; CI machines are shared
    if 'class="math' in path.read_text(encoding="utf-8"):
        page.wait_for_selector("mjx-container", state="attached", timeout=30_000)
    page.wait_for_timeout(400)  # MathJax's layout and the scroll hints settle
    problems = page.evaluate(MEASURE)
    if doc in SHOT_PAGES():
        out = shots_dir()
        out.mkdir(parents=True, exist_ok=True)
        stem = doc.removeprefix("book/").replace("/", "__") + f"-{w}"
        _shot(page, out / f"{stem}.png")
        table = page.locator("table.sf-scorecard" if doc.endswith("scorecard") else "table.sf-claims").first
        if table.count():
            table.evaluate("el => el.scrollIntoView({block: 'start'})")
            page.evaluate("window.scrollBy(0, -70)")  # below the theme's header bar
            _shot(page, out / f"{stem}-{'targets' if doc.endswith('scorecard') else 'checks'}.png")
    context.close()
    unique = list(dict.fromkeys(problems))
    assert not unique, f"{doc} at {w} px: {len(unique)} clipped:\n  " + "\n  ".join(unique[:25])
