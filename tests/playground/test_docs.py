"""docs/playground.md shows exactly the screens the browser tests photograph."""

from __future__ import annotations

import re

from tests.playground.conftest import IMAGES, ROOT

DOC = ROOT / "docs" / "playground.md"
BROWSER_TESTS = ROOT / "tests" / "playground" / "test_browser.py"


def test_every_screenshot_the_docs_show_is_one_the_browser_tests_take() -> None:
    shown = set(re.findall(r"\(img/playground-([a-z-]+)\.png\)", DOC.read_text(encoding="utf-8")))
    taken = set(
        re.findall(r'shoot\(browser, "([a-z-]+)"\)', BROWSER_TESTS.read_text(encoding="utf-8"))
    )
    assert shown == taken
    assert all((IMAGES / f"playground-{name}.png").exists() for name in shown)
