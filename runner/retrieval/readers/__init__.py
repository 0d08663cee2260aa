"""Readers: one per document format, each turning a file's bytes into a `Document` of blocks
(headings and paragraphs) that `runner.retrieval.pages` cuts into pages.

The interface every format shares is `Reader.read(path, raw) -> Document`:

| format | files | how | needs |
|---|---|---|---|
| markdown | `.md`, `.markdown` | ATX and setext headings, fenced code kept whole | — |
| rst | `.rst`, `.rst.txt` | underlined (and overlined) titles | — |
| text | `.txt` | the same title convention as reST, else paragraphs | — |
| html | `.html`, `.htm`, `.xhtml` | lxml: h1–h6 headings, the site's frame dropped | extra `html` |
| pdf | `.pdf` | pypdf: a page per PDF page, numbered as in it; outline headings | extra `pdf` |

Every reader's text leaves in runner's normal form (`text.words.normalize`), so what is indexed
and what is matched against it compare equal whatever spaces or ligatures the source used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from runner.config.corpus_files import document_format
from runner.retrieval.readers.blocks import Block
from runner.text.words import normalize

__all__ = ["Block", "CorpusError", "Document", "Reader", "ReaderMissingError", "document_format"]


class CorpusError(ValueError):
    """A corpus that cannot be read: a missing folder, no matching files, a broken document."""


class ReaderMissingError(CorpusError):
    """A document whose format needs an optional extra that is not installed."""


@dataclass(frozen=True)
class Document:
    """A document as read: its blocks, or (PDF) its fixed pages, numbered as in the source."""

    path: str  # relative to the corpus folder, forward slashes
    text: str = ""  # the text of a markup document, parsed into blocks on demand
    format: str | None = None  # None: from the path (document_format)
    title: str = ""  # a title the format declares (HTML <title>, PDF metadata), else ""
    read_blocks: tuple[Block, ...] | None = None  # blocks a reader made (HTML)
    fixed_pages: tuple[tuple[int, str], ...] | None = None  # (page number, text) (PDF)
    # a fixed page's heading path, outermost first (a PDF's outline); pages not named: none
    page_paths: tuple[tuple[int, tuple[str, ...]], ...] = ()

    def blocks(self) -> list[Block]:
        if self.read_blocks is not None:
            return list(self.read_blocks)
        from runner.retrieval.readers.markup import blocks

        return list(blocks(self.text, self.format or document_format(self.path) or "text"))


@dataclass(frozen=True)
class MarkupReader:
    """Markdown, reStructuredText and plain text: the text is kept and parsed into blocks by
    `runner.retrieval.readers.markup` when the pages are cut."""

    format: str

    def read(self, path: str, raw: bytes) -> Document:
        return Document(path, decode(raw), self.format)


class Reader(Protocol):
    def read(self, path: str, raw: bytes) -> Document: ...


# the libraries of the extra each format needs, and the module that reads it
_EXTRAS = {
    "html": (("lxml", "cssselect"), "runner.retrieval.readers.html"),
    "pdf": (("pypdf",), "runner.retrieval.readers.pdf"),
}


def reader_for(fmt: str, path: str) -> Reader:
    """The reader of a format; a format whose extra is missing raises a message naming it."""
    if fmt not in _EXTRAS:
        return MarkupReader(fmt)
    libraries, module = _EXTRAS[fmt]
    import importlib

    try:
        for library in libraries:
            importlib.import_module(library)
    except ImportError:
        raise ReaderMissingError(
            f"{path}: reading {fmt.upper()} documents needs runner's `{fmt}` extra "
            f"(pip install 'runner[{fmt}]'), or leave such files out with the corpus's "
            "`exclude:`"
        ) from None
    return importlib.import_module(module).READER


def read_document(folder: Path, path: Path, html_drop: Sequence[str] = ()) -> Document:
    """A corpus file, read by the reader of its format; an HTML page without the corpus's own
    furniture too (`html_drop`: CSS selectors, its `html.drop`)."""
    relative = path.relative_to(folder).as_posix()
    fmt = document_format(relative) or "text"
    reader = reader_for(fmt, relative)
    if fmt == "html" and html_drop:  # the HTML reader, a dataclass, with the corpus's own bars
        from dataclasses import replace

        reader = replace(reader, drop=tuple(html_drop))  # type: ignore[type-var]  # a Reader
    return reader.read(relative, path.read_bytes())


def decode(raw: bytes) -> str:
    """UTF-8 text in runner's normal form (a byte-order mark dropped, bad bytes replaced)."""
    return normalize(raw.decode("utf-8-sig", errors="replace"))
