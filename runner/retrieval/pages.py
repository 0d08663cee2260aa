"""Corpus folder → documents → pages.

A page is the unit everything in retrieval works on: BM25 scores pages, the search tool reads
pages with the LLM (purpose `read_page`), neighbour search walks from page to page, and every
answer cites `document` and `page` (C33). Documents are read by the reader of their format
(`runner.retrieval.readers`: Markdown, reST, text, HTML, PDF) into blocks; pages are made here
with plain Python (fast: the 1.4M words of the Python docs page in about a second); `to_nodes`
turns them into llama-index `TextNode`s with PREVIOUS/NEXT relationships inside each document.

How a document is cut, and why (pages follow the document's sections):
- A heading starts a new page, unless the page so far holds only headings or a scrap of fewer than
  ten words (so "Chapter" followed directly by "Section" stay together, and so do a label or a
  directive and the section after it): a heading is never separated from its body, a page then
  covers one section, and its `heading` names it. A small section (a heading and a line of
  code, say) merged so with the next is still named: the page's `headings` lists the heading of
  every section whose text it holds, and a search and an eval's expected heading find it by
  any of them.
- A section that fits `max_words` (heading included) is one page. A longer one continues on
  further pages, cut between paragraphs; a paragraph longer than a page is cut between
  sentences, then lines, then words. A table longer than a page is cut between rows, and each
  piece starts with the table's header row again: a row is never read without the names of
  its columns. Every part keeps the section's heading and heading path
  (`Page.path`: the titles of the enclosing sections, outermost first).
- A PDF is not cut: its pages are the PDF's pages, numbered as in the PDF.
- No overlap between pages (SentenceSplitter's default overlap of 200 tokens would index every
  boundary twice and make neighbour search return what the reader already has).
- Navigation pages (tables of contents, indexes, site maps: `runner.retrieval.navigation`) are
  marked `navigation`; searches leave them out unless the corpus keeps them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from runner.config.corpus_files import corpus_entries, excluded
from runner.retrieval.readers import (
    Block,
    CorpusError,
    Document,
    ReaderMissingError,
    document_format,
    read_document,
)
from runner.sources import Source

if TYPE_CHECKING:
    from llama_index.core.schema import TextNode

    from runner.config.model import Corpus

__all__ = [
    "CorpusError",
    "Document",
    "Page",
    "ReaderMissingError",
    "corpus_entries",
    "document_format",
    "excluded",
    "read_document",
]

# The metadata every page node carries; kept out of the embedded and the LLM text, so it is not
# indexed (llama-index would otherwise prepend "document: …" to the text BM25 tokenizes).
PAGE_METADATA_KEYS = ("document", "page", "title", "heading", "path", "navigation", "headings")


@dataclass(frozen=True)
class Page:
    """A page of a corpus: up to `max_words` of one document's section, where it is."""

    node_id: str
    document: str  # the file's path relative to the corpus folder, with forward slashes
    page: int  # 1-based within the document (a PDF's own page number)
    title: str  # the document's title: its first heading, else its file name
    heading: str  # the heading of the section the page is in ("" before the first heading)
    text: str
    path: tuple[str, ...] = field(default=())  # the enclosing sections' headings, outermost first
    navigation: bool = False  # a table of contents, an index, a site map (navigation.py)
    # a page that holds more than one section (a small one merged with the next): the heading
    # of each, in order, `heading` the last; () for a page of one section
    headings: tuple[str, ...] = ()

    @property
    def source(self) -> Source:
        return Source(
            self.document,
            self.page,
            self.title or None,
            self.heading or None,
            self.headings or None,
        )

    @property
    def section_headings(self) -> tuple[str, ...]:
        """Every section heading the page answers for: its `headings`, else its `heading`."""
        return self.headings or ((self.heading,) if self.heading else ())


def page_id(document: str, page: int) -> str:
    """Stable ids: a session that stored page ids finds the same pages after a reload."""
    return f"{document}#{page}"


# --- reading a corpus ------------------------------------------------------------------------


def corpus_files(folder: Path, include: Sequence[str], exclude: Sequence[str] = ()) -> list[Path]:
    """The corpus's documents: files that match an `include` glob and no `exclude` glob (both
    relative to the folder), sorted by relative path; hidden files and folders are left out."""
    return [folder / relative for relative, _ in corpus_entries(folder, include, exclude)]


def check_corpus_folder(folder: Path, corpus_name: str, pipeline_path: Path | None) -> None:
    if not folder.is_dir():
        where = f"{pipeline_path}: " if pipeline_path else ""
        raise CorpusError(
            f"{where}corpus {corpus_name!r}: folder {folder} does not exist; create it or fix "
            f"corpora.{corpus_name}.path (relative to the pipeline file)"
        )


def headings(document: Document) -> list[str]:
    """The titles of a document's headings, in order."""
    return [block.heading for block in document.blocks() if block.heading is not None]


# --- cutting blocks into pages -------------------------------------------------------------


def _word_count(text: str) -> int:
    return len(text.split())


_SENTENCE_CUT = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


def _cut(text: str, pattern: re.Pattern[str]) -> list[str]:
    """Cut text after each match, keeping every character (so pieces join back to the text)."""
    pieces: list[str] = []
    start = 0
    for match in pattern.finditer(text):
        pieces.append(text[start : match.end()])
        start = match.end()
    pieces.append(text[start:])
    return [piece for piece in pieces if piece]


_LINE_CUT = re.compile(r"\n")
_WORD_CUT = re.compile(r"\s+")


def _units(text: str, max_words: int) -> list[str]:
    """Pieces of at most max_words words: sentences, else lines, else runs of words."""
    if _word_count(text) <= max_words:
        return [text]
    units: list[str] = []
    for sentence in _cut(text, _SENTENCE_CUT):
        if _word_count(sentence) <= max_words:
            units.append(sentence)
            continue
        for line in _cut(sentence, _LINE_CUT):
            if _word_count(line) <= max_words:
                units.append(line)
            else:
                units.extend(_cut(line, _WORD_CUT))  # single words: packed again below
    return units


_FENCED = re.compile(r"^(`{3,}|~{3,})[^\n]*\n(.*)\n\1\s*$", re.DOTALL)
# a Markdown table: its header row, the separator row under it, then its rows
_TABLE = re.compile(r"^(\|[^\n]*\|)[ \t]*\n(\|[ \t:|-]*-[ \t:|-]*\|)[ \t]*\n(.*)$", re.DOTALL)


def _split_paragraph(text: str, max_words: int) -> list[str]:
    """A paragraph as one or more pieces of at most max_words words, cut at natural points; a
    fenced code block longer than a page is cut between lines, each piece fenced again."""
    fenced = _FENCED.match(text)
    if fenced and _word_count(text) > max_words:
        fence = fenced[1]
        return [
            f"{fence}\n{piece.strip(chr(10))}\n{fence}"
            for piece in _line_pieces(fenced[2], max_words)
        ]
    table = _TABLE.match(text)
    if table and _word_count(text) > max_words:
        return _table_pieces(f"{table[1]}\n{table[2]}", table[3].strip("\n"), max_words)
    units = _units(text, max_words)
    if len(units) == 1:
        return units
    pieces: list[str] = []
    current = ""
    for unit in units:
        if current and _word_count(current) + _word_count(unit) > max_words:
            pieces.append(current)
            current = ""
        current += unit
    if current:
        pieces.append(current)
    return [piece.strip() for piece in pieces if piece.strip()]


def _table_pieces(head: str, rows: str, max_words: int) -> list[str]:
    """A table's rows in pieces that fit a page with the table's header above each."""
    room = max_words - _word_count(head)
    return [f"{head}\n{piece.strip(chr(10))}" for piece in _line_pieces(rows, max(room, 1))]


def goes_on_with_table(page: Page, following: Page) -> bool:
    """`following` is the next piece of a table `page` ends with: the section's next page,
    opening with the header row and separator that `_table_pieces` repeats on each piece."""
    if (following.document, following.page, following.path, following.heading) != (
        page.document,
        page.page + 1,
        page.path,
        page.heading,
    ):
        return False
    table = _TABLE.match(following.text)
    if table is None or not page.text.rstrip().rsplit("\n", 1)[-1].startswith("|"):
        return False
    return f"{table[1]}\n{table[2]}\n" in page.text


def _line_pieces(text: str, max_words: int) -> list[str]:
    pieces, current = [], ""
    for line in _cut(text, _LINE_CUT):
        if current and _word_count(current) + _word_count(line) > max_words:
            pieces.append(current)
            current = ""
        current += line
    return [*pieces, current] if current.strip() else pieces


# Body text shorter than this before a heading is a scrap (a label, a directive, a one-line
# intro): it stays on the heading's page instead of making a page of its own.
_SCRAP_WORDS = 10


class _PageBuilder:
    """Collects blocks into pages of one document (see the module docstring for the rules)."""

    def __init__(self, document: str, default_title: str, max_words: int) -> None:
        self.document = document
        self.max_words = max_words
        self.title = ""
        self.title_level = 0  # the first heading's level
        # another heading at the first one's level or above: the first names a part, as a
        # manual page's NAME beside its SYNOPSIS and DESCRIPTION does, not the document
        self.title_has_peers = False
        self.default_title = default_title
        self.heading = ""
        self.open: list[tuple[int, str]] = []  # (level, heading) of the enclosing sections
        self.page_path: tuple[str, ...] = ()
        self.parts: list[str] = []
        self.words = 0
        self.body_words = 0
        self.has_body = False
        # the headings of the sections whose text is on the page so far, and the last heading
        # while no text of its own has followed it (a heading right above another encloses it)
        self.held: list[str] = []
        self.waiting: str | None = None
        self.pages: list[Page] = []

    def add(self, block: Block) -> None:
        if block.heading is not None:
            self._add_heading(block)
            return
        for piece in _split_paragraph(block.text, self.max_words):
            words = _word_count(piece)
            if self.has_body and self.words + words > self.max_words:
                self._flush_keeping_introduction()
            self.parts.append(piece)
            self.words += words
            self.body_words += words
            self.has_body = True
            if self.waiting is not None:
                self.held.append(self.waiting)
                self.waiting = None
            elif not self.held and self.heading:  # a section going on from the last page
                self.held.append(self.heading)

    def _flush_keeping_introduction(self) -> None:
        """A new page; a paragraph that introduces what follows (it ends with `:` or `::`, as
        before code) moves to it, so that code is never cut off from its sentence."""
        last = self.parts[-1] if len(self.parts) > 1 else ""
        body = last.rstrip().endswith(":") and not last.lstrip().startswith("#")
        if not body or _word_count(last) >= self.body_words:
            self.flush()
            return
        self.parts.pop()
        self.body_words -= _word_count(last)
        self.flush()
        self.parts.append(last)
        self.words = self.body_words = _word_count(last)
        self.has_body = True
        self.held = [self.heading] if self.heading else []

    def _add_heading(self, block: Block) -> None:
        assert block.heading is not None
        if self.has_body and self.body_words >= _SCRAP_WORDS:
            self.flush()
        level = block.level or len(self.open) + 1
        if not self.title:
            self.title, self.title_level = block.heading, level
        elif level <= self.title_level:
            self.title_has_peers = True
        self.heading = block.heading
        self.open = [(lvl, title) for lvl, title in self.open if lvl < level]
        self.open.append((level, block.heading))
        self.parts.append(block.text)
        self.words += _word_count(block.heading)
        self.waiting = block.heading

    def flush(self) -> None:
        if self.parts:
            number = len(self.pages) + 1
            self.pages.append(
                Page(
                    node_id=page_id(self.document, number),
                    document=self.document,
                    page=number,
                    title="",  # the document's title is known at its end (paginate)
                    heading=self.heading,
                    text="\n\n".join(self.parts),
                    path=tuple(title for _, title in self.open),
                    headings=self._merged_headings(),
                )
            )
        self.parts, self.words, self.body_words, self.has_body = [], 0, 0, False
        self.held, self.waiting = [], None

    def _merged_headings(self) -> tuple[str, ...]:
        """The headings of the sections whose text is on the page, when there are several (a
        small section merged with the next); the page's own heading last."""
        headings = tuple(dict.fromkeys([*self.held, self.heading]))
        return headings if len(headings) > 1 else ()


_SECTION_NUMBER = re.compile(r"^\s*\d+(\.\d+)*\.?\s")


def _default_title(document: str) -> str:
    name = document.rsplit("/", 1)[-1]
    lower = name.lower()
    for suffix in (".rst.txt", ".markdown", ".md", ".rst", ".txt", ".html", ".htm", ".pdf"):
        if lower.endswith(suffix):
            return name[: -len(suffix)]
    return name


def paginate(document: Document, max_words: int) -> list[Page]:
    """The pages of one document, numbered from 1 (a PDF's: as in the PDF). Empty documents
    have no pages."""
    if document.fixed_pages is not None:
        title = document.title or _default_title(document.path)
        paths = dict(document.page_paths)
        return [
            Page(
                page_id(document.path, number),
                document.path,
                number,
                title,
                paths[number][-1] if paths.get(number) else "",
                text,
                paths.get(number, ()),
            )
            for number, text in document.fixed_pages
        ]
    builder = _PageBuilder(document.path, _default_title(document.path), max_words)
    for block in document.blocks():
        builder.add(block)
    builder.flush()
    title = builder.title or document.title or builder.default_title
    if document.title and (_SECTION_NUMBER.match(builder.title) or builder.title_has_peers):
        # a first heading numbered as a section ("1. Syntax"), or one of several at its level
        # (pod2html's and man pages' NAME, SYNOPSIS, DESCRIPTION), names a part, not the
        # document: the title the document declares (HTML <title>: "UPSERT",
        # "perlfaq4 - Data Manipulation") does (index format 10)
        title = document.title
    return [replace(page, title=title) for page in builder.pages]


# --- llama-index nodes ---------------------------------------------------------------------


def to_nodes(pages: Sequence[Page]) -> list[TextNode]:
    """TextNodes with PREVIOUS/NEXT relationships inside each document (none across documents:
    neighbour search stops at a document's edge) and the page metadata kept out of the indexed
    text."""
    from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode

    nodes: list[TextNode] = []
    for index, page in enumerate(pages):
        # no SOURCE relationship: the document is in the metadata, and a SOURCE would make the
        # docstore keep per-document bookkeeping that triples the time to store the pages
        relationships = {}
        before = pages[index - 1] if index > 0 else None
        after = pages[index + 1] if index + 1 < len(pages) else None
        if before is not None and before.document == page.document:
            relationships[NodeRelationship.PREVIOUS] = RelatedNodeInfo(node_id=before.node_id)
        if after is not None and after.document == page.document:
            relationships[NodeRelationship.NEXT] = RelatedNodeInfo(node_id=after.node_id)
        nodes.append(
            TextNode(
                id_=page.node_id,
                text=page.text,
                metadata={
                    "document": page.document,
                    "page": page.page,
                    "title": page.title,
                    "heading": page.heading,
                    "path": list(page.path),
                    "navigation": page.navigation,
                    "headings": list(page.headings),
                },
                excluded_embed_metadata_keys=list(PAGE_METADATA_KEYS),
                excluded_llm_metadata_keys=list(PAGE_METADATA_KEYS),
                relationships=relationships,
            )
        )
    return nodes


def corpus_folder(corpus: Corpus, pipeline_folder: Path) -> Path:
    """The corpus folder; a relative path is relative to the pipeline file."""
    return corpus.path if corpus.path.is_absolute() else pipeline_folder / corpus.path


def document_root(corpus: Corpus, pipeline_folder: Path) -> Path:
    """The folder a corpus's documents must stay in, symlinks followed: the pipeline's, or
    the corpus's own when its `path` names a folder elsewhere (absolute or `~`)."""
    return corpus_folder(corpus, pipeline_folder) if corpus.outside else pipeline_folder
