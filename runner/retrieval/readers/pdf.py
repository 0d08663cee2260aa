"""PDF documents (the `pdf` extra: pypdf).

Why pypdf: pure Python, maintained, no system library (poppler, mupdf) to install in CI, and its
text extraction keeps the reading order of ordinary documents. A PDF's page is a page here:
page N of the PDF is page N of the document, so a citation sends the reader to the page their
viewer shows. Pages without text (scans, blank pages) are skipped; the others keep their
numbers. The PDF's own title (its metadata) is the document's title when it has one.

A word hyphenated at a line's end is joined again (between lower-case letters).

Headings come from the PDF's outline (its bookmarks), when it has one: a page's heading is the
first bookmark that points at it, else the last one before it (the section goes on), and its
heading path that bookmark's ancestors and itself. A PDF without an outline has no headings:
the text of a PDF page does not say which of its lines are headings.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator
from typing import Any

import pypdf
from pypdf.errors import PyPdfError

from runner.retrieval.readers import CorpusError, Document
from runner.text.words import normalize


class PdfReader:
    def read(self, path: str, raw: bytes) -> Document:
        logging.getLogger("pypdf").setLevel(logging.ERROR)  # malformed-but-readable warnings
        try:
            reader = pypdf.PdfReader(io.BytesIO(raw))
            if reader.is_encrypted:
                raise CorpusError(
                    f"{path}: the PDF is encrypted; decrypt it (e.g. qpdf --decrypt) or leave "
                    "it out with the corpus's `exclude:`"
                )
            marks = _outline(reader)
            pages = []
            for number, page in enumerate(reader.pages, 1):
                text = _joined(normalize(page.extract_text() or "").strip())
                if text:
                    pages.append((number, _heading_lines(text, marks.get(number, []))))
            title = (reader.metadata.title if reader.metadata else None) or ""
            paths = _page_paths(marks, [number for number, _ in pages])
        except (PyPdfError, ValueError, KeyError, TypeError) as error:
            raise CorpusError(f"{path}: not readable as PDF ({error})") from None
        return Document(
            path,
            "",
            "pdf",
            normalize(str(title)).strip(),
            fixed_pages=tuple(pages),
            page_paths=paths,
        )


def _bookmarks(
    reader: pypdf.PdfReader, items: list[Any], above: tuple[str, ...] = ()
) -> Iterator[tuple[int, tuple[str, ...]]]:
    """(1-based page, heading path) of every bookmark that points at a page, in outline order.
    pypdf gives the outline as a list in which a nested list holds the children of the
    bookmark before it."""
    path = above
    for item in items:
        if isinstance(item, list):
            yield from _bookmarks(reader, item, path)
            continue
        title = normalize(str(item.title or "")).strip()
        path = (*above, title) if title else above
        page = reader.get_destination_page_number(item)
        if title and page is not None and page >= 0:
            yield page + 1, path


# a word hyphenated at the end of a line of justified text: `manu-` / `facturer`
_LINE_BREAK_HYPHEN = re.compile(r"(?<=[^\W\d_A-Z]{2})-\n(?=[^\W\d_A-Z])")


def _joined(text: str) -> str:
    """A word the PDF's typesetting broke over two lines is one word again (`manufacturer`, not
    `manu-` and `facturer`, which no search would find). Only between lower-case letters, so
    `XR-` / `200` or a line ending in a dash before a capital stay as they are; a compound that
    happened to break at its own hyphen (`well-` / `known`) loses it."""
    return _LINE_BREAK_HYPHEN.sub("", text)


Outline = dict[int, list[tuple[str, ...]]]  # page -> the heading paths pointing at it, in order


def _outline(reader: pypdf.PdfReader) -> Outline:
    marks: Outline = {}
    try:
        for page, path in _bookmarks(reader, reader.outline):
            marks.setdefault(page, []).append(path)
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError):
        return {}  # a broken outline costs the headings, never the text
    return marks


def _page_paths(marks: Outline, numbers: list[int]) -> tuple[tuple[int, tuple[str, ...]], ...]:
    """The heading path of each of these pages, from the outline (see the module's notes)."""
    found: list[tuple[int, tuple[str, ...]]] = []
    current: tuple[str, ...] = ()
    pointed = sorted(marks)
    at = 0
    for number in numbers:
        while at < len(pointed) and pointed[at] <= number:  # the last one on or before it
            current = marks[pointed[at]][-1]
            at += 1
        path = marks[number][0] if number in marks else current
        if path:
            found.append((number, path))
    return tuple(found)


def _heading_lines(text: str, paths: list[tuple[str, ...]]) -> str:
    """A line that is the title of a bookmark pointing at this page is written as a Markdown
    heading (`## Cleaning the filter`), as the HTML reader writes headings: the offline
    provider then never quotes it as a sentence of the answer."""
    if not paths:
        return text
    levels = {" ".join(path[-1].split()).casefold(): len(path) for path in paths}
    lines = text.split("\n")
    for number, line in enumerate(lines):
        level = levels.pop(" ".join(line.split()).casefold(), None)
        if level is not None:
            lines[number] = f"{'#' * min(level, 6)} {line.strip()}"
    return "\n".join(lines)


READER = PdfReader()
