"""Issue 41 item 7: at a phone's width (390 px) a chapter's check table shows each check's verdict without
scrolling, keeps the check's id in place while the table scrolls sideways, and wraps every why and note row at
the visible width (no line runs past the screen's right edge). Every chapter page with a check table is measured
in a real browser (the system's chromium, as test_browser.py; skipped with one line without one)."""
import re

import pytest

from shallowflow.run import cli

ROOT = cli.repo_root()
HTML = ROOT / "_build" / "html"

from test_browser import NO_CHROMIUM, find_chromium, in_ci  # noqa: E402  (the same skip rule)

if not find_chromium() and not in_ci():
    pytest.skip(f"the phone check was skipped ({NO_CHROMIUM}; with CI=true it is mandatory)", allow_module_level=True)


def chapter_pages() -> list[str]:
    return sorted(str(p.relative_to(HTML).with_suffix("")) for p in (HTML / "book").rglob("*.html")
                  if 'class="sf-claims"' in p.read_text(encoding="utf-8")) if HTML.exists() else []


MEASURE = r"""
() => {
  const vw = document.documentElement.clientWidth, out = [];
  const say = (what, el) => out.push(what + ': "' + (el.innerText || '').trim().replace(/\s+/g, ' ').slice(0, 60) + '"');
  for (const table of document.querySelectorAll('table.sf-claims')) {
    const box = table.closest('.sf-scroll') || table.parentElement;
    box.scrollLeft = 0;
    const heads = [...table.querySelectorAll('thead th')].map(th => th.innerText.trim());
    if (heads.indexOf('verdict') !== 1) { out.push('verdict is column ' + heads.indexOf('verdict') + ' of ' + heads.join('|')); continue; }
    for (const row of table.querySelectorAll('tr.sf-check')) {
      const v = row.children[1].getBoundingClientRect();
      if (v.right > vw + 1) say('verdict off-screen (' + Math.round(v.right) + ' of ' + vw + ' px)', row.children[0]);
    }
    for (const w of table.querySelectorAll('tr.sf-why .sf-wrap, tr.sf-note .sf-wrap')) {
      const r = w.getBoundingClientRect();
      if (r.right > vw + 1) say('why/note runs past the right edge (' + Math.round(r.right) + ' px)', w);
    }
    if (box.scrollWidth > box.clientWidth + 2) {  // it scrolls: the id stays where it was
      const first = table.querySelector('tr.sf-check td');
      const before = first.getBoundingClientRect().left;
      box.scrollLeft = box.scrollWidth;
      const after = first.getBoundingClientRect().left;
      if (Math.abs(after - before) > 2) say('check id moved ' + Math.round(before - after) + ' px when the table scrolled', first);
      box.scrollLeft = 0;
    }
  }
  return out;
}
"""


@pytest.mark.parametrize("doc", chapter_pages() or ["(no page with a check table)"])
def test_check_tables_read_at_phone_width(browser, doc):
    path = HTML / f"{doc}.html"
    assert path.exists(), f"{doc}: no built page with a check table"
    context = browser.new_context(viewport={"width": 390, "height": 844})
    context.route(re.compile(r"^(?!file:).*"), lambda route: route.abort())  # offline
    page = context.new_page()
    page.goto(path.as_uri(), wait_until="load", timeout=120_000)
    page.wait_for_timeout(300)
    problems = page.evaluate(MEASURE)
    context.close()
    unique = list(dict.fromkeys(problems))
    assert not unique, f"{doc} at 390 px: {len(unique)} problems:\n  " + "\n  ".join(unique[:20])
