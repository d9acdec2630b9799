"""Every page of the built site in a real browser, with the network off (Playwright driving Debian's chromium).

For each page of the table of contents (and the index): no console error, no uncaught script error, no
failed or off-machine request, every image loaded, MathJax typeset without error where the page has
math.  Screenshots of the intro, the scorecard and one chapter per source land in
``_build/artifacts/screenshots/`` for a person to look at.  The browser is the system's chromium
(``.ci/run`` installs Debian's); Playwright downloads none.

Without a chromium (a new user's machine), the whole module is skipped with one line saying so
(``make site-check`` prints it with ``-rs``), and ``make book`` still builds and checks the site
statically; with ``CI=true`` a missing browser fails the check, as before.
"""
import os
import re
import shutil
from pathlib import Path

import pytest

from shallowflow.run import cli

ROOT = cli.repo_root()
HTML = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "artifacts" / "screenshots"


NO_CHROMIUM = "no chromium: install Debian's (apt-get install chromium; .ci/run does) or set SHALLOWFLOW_CHROMIUM"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes", "on")


def find_chromium() -> str | None:
    return os.environ.get("SHALLOWFLOW_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def chromium() -> str:
    exe = find_chromium()
    if not exe:
        pytest.fail(NO_CHROMIUM)
    return exe


if not find_chromium() and not in_ci():  # CI=true: mandatory (the fixture fails instead)
    pytest.skip(f"the browser check was skipped ({NO_CHROMIUM}; with CI=true it is mandatory); the static "
                f"checks (test_site.py) still run", allow_module_level=True)


def site_pages() -> list[str]:
    toc = (ROOT / "_toc.yml").read_text()
    return ["index"] + re.findall(r"(?:root|file): (\S+)", toc)


def screenshot_pages() -> set[str]:
    """The intro, the scorecard and the first chapter of every part."""
    toc = (ROOT / "_toc.yml").read_text()
    firsts = [m.group(1) for m in re.finditer(r"caption: [^\n]*\n(?:\s+numbered: \w+\n)?\s+chapters:\n\s+- file: (\S+)", toc)]
    return {"book/intro", "book/scorecard"} | {f for f in firsts if "/appendix/" not in f}


def launch():
    """A headless chromium on the built site (a generator for module fixtures): a missing browser is
    reported first (in CI it is the failure), then a missing site."""
    exe = chromium()
    if not (HTML / "index.html").exists():
        pytest.fail("no built site in _build/html: run `make book` first")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.mark.parametrize("doc", site_pages())
def test_page_renders_offline(browser, doc):
    path = HTML / f"{doc}.html"
    assert path.exists(), f"{doc} was not built"
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    problems = []
    # the network is off: anything that is not a file of the built site is refused and reported
    context.route(re.compile(r"^(?!file:).*"), lambda route: (problems.append(f"off-machine request {route.request.url}"),
                                                             route.abort()))
    page = context.new_page()
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"script error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"failed request {r.url}")
            if r.url.startswith("file:") else None)
    if doc == "index":  # a redirect to the intro
        page.goto(path.as_uri())
        page.wait_for_url(re.compile(r".*/book/intro\.html$"), timeout=30_000)
        context.close()
        assert not problems, problems
        return
    page.goto(path.as_uri(), wait_until="load")
    if 'class="math' in path.read_text(encoding="utf-8"):
        page.wait_for_selector("mjx-container", state="attached", timeout=30_000)  # some sit in folded cells
        page.wait_for_timeout(300)
        if page.locator("mjx-merror").count():
            problems.append("MathJax reported an error: " + page.locator("mjx-merror").first.inner_text())
    broken = page.evaluate("Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0)"
                           ".map(i => i.src.slice(0, 120))")
    problems += [f"image not loaded: {src}" for src in broken]
    if doc in screenshot_pages():
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / (doc.replace("/", "__") + ".png")), full_page=False)
    context.close()
    assert not problems, f"{doc}:\n  " + "\n  ".join(problems[:20])
