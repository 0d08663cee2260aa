"""Navigation pages: tables of contents, indexes, site maps — pages that point at answers
rather than give them. Found when a corpus is indexed; searches leave them out of what they
return (a TOC line that lists a question is no answer to it), unless the corpus sets
`pages: {navigation: keep}`. They stay in the index and in their documents' page order.

A page is navigation when most of its lines are entries rather than prose. An entry is a line
(list markers, section numbers, dot leaders and page numbers taken off) that is
- the title of a heading somewhere in the corpus (a TOC repeats the corpus's headings), or
- a bare reference: one token that names a file or a path (`faq/general`, `intro.html`), or
- nothing but a link (`[Installing](install.html)`, how the HTML reader writes a line that is
  one link: site maps and link lists), or
- a line that ends by naming a page: dot leaders and a number (`Installing ....... 12`) or a
  page reference (`p. 23`, `page 23`, `[toc p. 23]`) — a TOC of a manual whose sections are
  not all in the corpus, or an index — or
- a heading of the page itself.
The page needs at least `MIN_ENTRIES` entries, and entries must make up at least
`ENTRY_SHARE` of its lines and of its words: a section that mentions two other sections by
name is still prose.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from runner.retrieval.pages import Page, paginate

if TYPE_CHECKING:
    from runner.retrieval.readers import Document

MIN_ENTRIES = 4
ENTRY_SHARE = 0.6

_MARKER = re.compile(r"^\s*(?:#{1,6}\s+|[-*+•·]\s+|\d+(?:\.\d+)*[.)]?\s+|[A-Za-z][.)]\s+)?")
_TRAILER = re.compile(
    r"(?:\s*\.{2,}\s*\d*|\s+\[?(?:p\.|page)?\s*\d+\]?|\s*\[[^\[\]]*\d[^\[\]]*\]|\s*:)\s*$",
    re.IGNORECASE,
)
_LINK_ONLY = re.compile(r"^\[(?P<text>[^\[\]]+)\]\([^()\s]*\)$")  # `[Installing](install.html)`
_SECTION_NUMBER = re.compile(r"^(?:[A-Z]\.|\d+\.)(?:\d+\.)*\s+")
_REFERENCE = re.compile(r"^[\w.-]+(?:/[\w.#-]+)+$|^[\w-]+\.(?:html?|md|rst|txt|pdf)(?:#[\w-]*)?$")
_PAGE_NAMED = re.compile(r"(?:\.{3,}|…+)\s*\d+\s*$|\b(?:p|pp|page)\.?\s*\d+\]?\s*$", re.IGNORECASE)
_SPACES = re.compile(r"\s+")
# lines that are neither entries nor prose: adornments, reST directives and their options
_NEUTRAL = re.compile(r"^\s*(?:[!-/:-@\[-`{-~]{3,}|\.\. [\w-]+::.*|:[\w-]+:.*|\.\.)\s*$")


def entry_key(line: str) -> str:
    """A line or a heading as an entry compares: no marker, number, leader or page number (nor a
    bracketed page reference, `[toc p. 23]`), a link by its text; lower case, single spaces."""
    text = _MARKER.sub("", line.strip(), count=1)
    link = _LINK_ONLY.match(text)
    if link is not None:
        text = link["text"]
    text = _TRAILER.sub("", text)
    text = _SECTION_NUMBER.sub("", text)
    return _SPACES.sub(" ", text).strip().lower()


def is_navigation(page: Page, corpus_headings: set[str]) -> bool:
    lines = [line for line in page.text.splitlines() if line.strip()]
    own = {entry_key(title) for title in (*page.path, *page.section_headings, page.heading)}
    entries = entry_words = words = counted = 0
    for line in lines:
        key = entry_key(line)
        if not key or _NEUTRAL.match(line):
            continue
        counted += 1
        size = len(line.split())
        words += size
        link = _LINK_ONLY.match(_MARKER.sub("", line.strip(), count=1))
        named = key in corpus_headings or key in own or _REFERENCE.match(key)
        if named or link is not None or _PAGE_NAMED.search(line):
            entries += 1
            entry_words += size
    if entries < MIN_ENTRIES:
        return False
    return entries >= ENTRY_SHARE * counted and entry_words >= ENTRY_SHARE * words


def mark_navigation(pages: Sequence[Page]) -> list[Page]:
    """The pages, navigation pages marked (`Page.navigation`)."""
    corpus_headings = {entry_key(title) for page in pages for title in page.path}
    corpus_headings.discard("")
    return [
        replace(page, navigation=True) if is_navigation(page, corpus_headings) else page
        for page in pages
    ]


def paginate_all(
    documents: Iterable[Document], max_words: int, *, navigation: bool = True
) -> list[Page]:
    """Every document's pages, in order; with `navigation`, navigation pages are marked."""
    pages = [page for document in documents for page in paginate(document, max_words)]
    return mark_navigation(pages) if navigation else pages
