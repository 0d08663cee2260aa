"""Every link of the README and docs/ leads somewhere: a file of the project, and, with a
`#fragment`, a heading of that page (GitHub's anchors)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCED = re.compile(r"^(`{3,}).*?^\1\s*$", re.DOTALL | re.MULTILINE)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\]\((?P<target>[^)\s#]*)(?:#(?P<fragment>[^)\s]+))?\)")


def prose(page: Path) -> str:
    """The page without code, where a link is an example rather than a link."""
    return INLINE_CODE.sub("", FENCED.sub("", page.read_text(encoding="utf-8")))


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCED.sub("", page.read_text(encoding="utf-8"))
    return {anchor(heading) for heading in re.findall(r"^#+ (.*)$", text, re.MULTILINE)}


def leads_somewhere(path: Path, fragment: str | None) -> bool:
    if not path.exists():
        return False
    return not fragment or path.suffix != ".md" or fragment in anchors(path)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_link_of_the_page_leads_somewhere(page: Path) -> None:
    broken = []
    for link in LINK.finditer(prose(page)):
        target, fragment = link["target"], link["fragment"]
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        path = (page.parent / target).resolve() if target else page
        if not leads_somewhere(path, fragment):
            broken.append(link[0])
    assert broken == []
