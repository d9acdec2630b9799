"""Fixtures the site tests share."""
import json

import pytest

from shallowflow.run import cli

HTML = cli.repo_root() / "_build" / "html"


@pytest.fixture(scope="module")
def scorecard():
    """The built site's scorecard.json (the verdicts, the checks with their kinds and margins, the reports)."""
    path = HTML / "scorecard.json"
    if not path.exists():
        pytest.fail("no built site in _build/html: run `make book` first")
    return json.loads(path.read_text())


@pytest.fixture(scope="session")
def browser():
    """One headless chromium per test process (per xdist worker), shared by the browser, layout, phone and
    report-table checks (test_browser.launch), as each module's own browser was before: every test opens a
    browser context of its own (its viewport, its offline route, its pages) and closes it."""
    from test_browser import launch

    yield from launch()
