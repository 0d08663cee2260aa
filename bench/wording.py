"""The question sets of bench/questions/ and how a ranking is scored against their gold sections.

A question's gold is one or more `DOCUMENT#HEADING` sections; a page is gold when it is of the
document and its heading is the section's (an HTML heading with its section number removed, as
bench/questions/README.md says), so every page of a long section counts.
"""

from __future__ import annotations

import csv
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from runner.text.headings import heading_key as gold_key

QUESTIONS = Path(__file__).resolve().parent / "questions"
_SECTION_NUMBER = re.compile(r"^(?:(?:Chapter|Appendix|Part)\s+)?[0-9A-Z]+(?:\.[0-9A-Z]+)*\.\s+")
# the sets, each with the corpus it is asked of
SETS = {
    "pydocs-users": "pydocs",
    "pgdocs-users": "pgdocs",
    "pydocs-faq-headings": "pydocs",
    # the held-out corpus: written after runner's retrieval was tuned, never used to tune it
    "perlfaq-users": "perldocs",
    "perlfaq-headings": "perldocs",
}


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    golds: frozenset[tuple[str, str]]  # (document, heading)


def read_set(name: str, folder: Path = QUESTIONS) -> list[Question]:
    with (folder / f"{name}.csv").open(encoding="utf-8", newline="") as file:
        rows = list(csv.DictReader(file))
    return [
        Question(
            row["id"],
            row["question"],
            frozenset(tuple(source.split("#", 1)) for source in row["sources"].split("|")),
        )
        for row in rows
    ]


def heading_key(heading: str) -> str:
    return _SECTION_NUMBER.sub("", " ".join(heading.split()))


_INVISIBLE = re.compile("[\u00ad\u200b\u200c\u200d\u2060\ufeff]")  # soft hyphen, zero-width
_HEADING_TAG = re.compile(r"h[1-6]")


class _HtmlHeadings(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[int, str]] = []
        self.open: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if _HEADING_TAG.fullmatch(tag):
            self.open = []

    def handle_endtag(self, tag: str) -> None:
        if _HEADING_TAG.fullmatch(tag) and self.open is not None:
            title = unicodedata.normalize("NFKC", "".join(self.open))
            title = heading_key(_INVISIBLE.sub("", title))
            if title:
                self.found.append((int(tag[1]), title))
            self.open = None

    def handle_data(self, data: str) -> None:
        if self.open is not None:
            self.open.append(data)


def html_headings(text: str) -> list[tuple[int, str]]:
    """(level, text) of each h1-h6 element, the text as bench/questions/README.md derives
    HEADING: NFKC-normalised, zero-width characters dropped, whitespace collapsed, a leading
    section number ("11.2.", "Chapter 26.", "F.35.1.") removed."""
    parser = _HtmlHeadings()
    parser.feed(text)
    return parser.found


def gold_rows(pages: Sequence[Any], question: Question) -> set[int]:
    """The page rows (page-store order) of the question's gold sections."""
    wanted = {(document, gold_key(heading)) for document, heading in question.golds}
    return {
        row for row, page in enumerate(pages) if (page.document, gold_key(page.heading)) in wanted
    }


@dataclass
class Recall:
    at1: int = 0
    at5: int = 0
    count: int = 0

    def add(self, ranked: Iterable[int], golds: set[int]) -> None:
        top = list(ranked)[:5]
        self.at1 += bool(top) and top[0] in golds
        self.at5 += any(row in golds for row in top)
        self.count += 1

    def figures(self) -> dict[str, float]:
        count = max(self.count, 1)
        return {"at1": round(self.at1 / count, 3), "at5": round(self.at5 / count, 3)}
