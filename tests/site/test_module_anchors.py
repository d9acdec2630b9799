"""Issue 41 item 10: every link of the built site's source pages (``_modules/``, Sphinx's viewcode) to an anchor
lands on an element with that id. A name documented under two modules (a re-export, e.g. ``run.cli.chapters``
from ``executor``) once made viewcode link the defining module's other objects under the wrong module's name: six
``[docs]`` links of ``_modules/shallowflow/executor/common.html`` pointed at anchors the API page did not have."""
import re
from pathlib import Path

import pytest

from shallowflow.run import cli

HTML = cli.repo_root() / "_build" / "html"
LINK = re.compile(r'href="([^"#:]*)#([^"]+)"')
ID = re.compile(r'id="([^"]+)"')


def test_every_module_page_anchor_exists():
    if not (HTML / "_modules").exists():
        pytest.fail("no built site with _modules/ in _build/html: run `make book` first")
    ids: dict[Path, set[str]] = {}
    missing = []
    for page in sorted((HTML / "_modules").rglob("*.html")):
        for href, anchor in LINK.findall(page.read_text(encoding="utf-8", errors="replace")):
            target = (page.parent / href).resolve() if href else page.resolve()
            if target not in ids:
                ids[target] = set(ID.findall(target.read_text(encoding="utf-8", errors="replace"))) \
                    if target.is_file() else set()
            if anchor not in ids[target]:
                missing.append(f"{page.relative_to(HTML)} -> {href}#{anchor}")
    assert not missing, f"{len(missing)} links to missing anchors:\n  " + "\n  ".join(missing[:20])
