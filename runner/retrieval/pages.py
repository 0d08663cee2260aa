"""Corpus folder → documents → pages.

A page is the unit everything in retrieval works on: BM25 scores pages, the search tool reads
pages with the LLM (purpose `read_page`), neighbour search walks from page to page, and every
answer cites `document` and `page` (C33). Pages are made here with plain Python (fast: the 1.4M
words of the Python docs page in about a second); `to_nodes` turns them into llama-index
`TextNode`s with PREVIOUS/NEXT relationships inside each document.

How a document is cut, and why:
- A heading starts a new page, unless the page so far holds only headings or a scrap of fewer than
  ten words (so "Chapter" followed directly by "Section" stay together, and so do a label or a
  directive and the section after it): a page then covers one section, and its `heading` names
  it.
- A section longer than `max_words` continues on further pages, cut between paragraphs; a
  paragraph longer than a page is cut between sentences, then lines, then words.
- No overlap between pages (SentenceSplitter's default overlap of 200 tokens would index every
  boundary twice and make neighbour search return what the reader already has).
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from runner.sources import Source

if TYPE_CHECKING:
    from llama_index.core.schema import TextNode

    from runner.config.model import Corpus

# The metadata every page node carries; kept out of the embedded and the LLM text, so it is not
# indexed (llama-index would otherwise prepend "document: …" to the text BM25 tokenizes).
PAGE_METADATA_KEYS = ("document", "page", "title", "heading")


class CorpusError(ValueError):
    """A corpus that cannot be read: a missing folder, no matching files."""


@dataclass(frozen=True)
class Page:
    node_id: str
    document: str  # the file's path relative to the corpus folder, with forward slashes
    page: int  # 1-based within the document
    title: str  # the document's title: its first heading, else its file name
    heading: str  # the heading of the section the page is in ("" before the first heading)
    text: str

    @property
    def source(self) -> Source:
        return Source(self.document, self.page, self.title or None, self.heading or None)


@dataclass(frozen=True)
class Document:
    path: str  # relative to the corpus folder, forward slashes
    text: str


def page_id(document: str, page: int) -> str:
    """Stable ids: a session that stored page ids finds the same pages after a reload."""
    return f"{document}#{page}"


# --- reading a corpus ------------------------------------------------------------------------

_FORMATS = {".md": "markdown", ".markdown": "markdown", ".rst": "rst", ".txt": "text"}


def document_format(path: str) -> str | None:
    """The format a file is read as, or None for a file that is not a corpus document.

    `.rst.txt` (how Sphinx ships its sources, like the pydocs corpus) counts as reStructuredText.
    """
    lower = path.lower()
    if lower.endswith(".rst.txt"):
        return "rst"
    return _FORMATS.get(Path(lower).suffix)


def corpus_files(folder: Path, include: Sequence[str]) -> list[Path]:
    """The corpus's documents, sorted by relative path; hidden files and folders are left out."""
    found: set[Path] = set()
    for pattern in include:
        for path in folder.glob(pattern):
            relative = path.relative_to(folder)
            hidden = any(part.startswith(".") for part in relative.parts)
            if path.is_file() and not hidden and document_format(path.name) is not None:
                found.add(path)
    return sorted(found, key=lambda p: p.relative_to(folder).as_posix())


def check_corpus_folder(folder: Path, corpus_name: str, pipeline_path: Path | None) -> None:
    if not folder.is_dir():
        where = f"{pipeline_path}: " if pipeline_path else ""
        raise CorpusError(
            f"{where}corpus {corpus_name!r}: folder {folder} does not exist; create it or fix "
            f"corpora.{corpus_name}.path (relative to the pipeline file)"
        )


def read_document(folder: Path, path: Path) -> Document:
    raw = path.read_bytes()
    return Document(path.relative_to(folder).as_posix(), raw.decode("utf-8", errors="replace"))


# --- parsing a document into blocks --------------------------------------------------------


@dataclass(frozen=True)
class _Block:
    text: str
    heading: str | None = None  # set for a heading block: its title text


_ATX = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}\s*$")  # a line of one repeated punctuation mark
_FENCE = re.compile(r"^\s*(```|~~~)")
_PUNCTUATION = frozenset(string.punctuation)


def _blocks(text: str, fmt: str) -> Iterator[_Block]:
    """Paragraphs and headings in order. Markdown: ATX and setext headings, fenced code kept
    whole. reStructuredText (and plain text, which often uses the same convention): a title line
    underlined, optionally also overlined, with one repeated punctuation character."""
    lines = text.splitlines()
    paragraph: list[str] = []
    in_fence = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if fmt == "markdown" and _FENCE.match(line):
            in_fence = not in_fence
        if not in_fence:
            heading = _heading_at(lines, i, fmt, starts_paragraph=not paragraph)
            if heading is not None:
                title, consumed = heading
                if paragraph:
                    yield _Block("\n".join(paragraph))
                    paragraph = []
                yield _Block("\n".join(lines[i : i + consumed]), heading=title)
                i += consumed
                continue
        if line.strip() or in_fence:
            paragraph.append(line)
        elif paragraph:
            yield _Block("\n".join(paragraph))
            paragraph = []
        i += 1
    if paragraph:
        yield _Block("\n".join(paragraph))


def _heading_at(
    lines: Sequence[str], i: int, fmt: str, *, starts_paragraph: bool
) -> tuple[str, int] | None:
    """(title, lines consumed) when a heading starts at line i. Cheap tests first: this runs on
    every line of the corpus."""
    line = lines[i]
    if fmt == "markdown" and line.startswith("#"):
        atx = _ATX.match(line)
        if atx:
            return atx.group(2), 1
    # adorned titles begin a paragraph, on an unindented line
    if not starts_paragraph or i + 1 >= len(lines) or not line or line[0].isspace():
        return None
    following = lines[i + 1]
    # an overlined title: adornment, title, the same adornment
    overlined = fmt != "markdown" and i + 2 < len(lines) and line[0] in _PUNCTUATION
    if overlined and _ADORNMENT.match(line):
        title, under = following.strip(), lines[i + 2].strip()
        if title and under == line.strip():
            return title, 3
    # an underlined title: the line, then an adornment at least as long
    if not following or following[0] not in _PUNCTUATION or not line.strip():
        return None
    under = following.rstrip()
    if not _ADORNMENT.match(under) or len(under) < len(line.rstrip()):
        return None
    if fmt == "markdown" and under[0] not in "=-":
        return None
    return line.strip(), 2


def headings(document: Document) -> list[str]:
    """The titles of a document's headings, in order."""
    fmt = document_format(document.path) or "text"
    return [block.heading for block in _blocks(document.text, fmt) if block.heading is not None]


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


def _split_paragraph(text: str, max_words: int) -> list[str]:
    """A paragraph as one or more pieces of at most max_words words, cut at natural points."""
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


# Body text shorter than this before a heading is a scrap (a label, a directive, a one-line
# intro): it stays on the heading's page instead of making a page of its own.
_SCRAP_WORDS = 10


class _PageBuilder:
    """Collects blocks into pages of one document (see the module docstring for the rules)."""

    def __init__(self, document: str, default_title: str, max_words: int) -> None:
        self.document = document
        self.max_words = max_words
        self.title = ""
        self.default_title = default_title
        self.heading = ""
        self.parts: list[str] = []
        self.words = 0
        self.body_words = 0
        self.has_body = False
        self.pages: list[Page] = []

    def add(self, block: _Block) -> None:
        if block.heading is not None:
            self._add_heading(block)
            return
        for piece in _split_paragraph(block.text, self.max_words):
            words = _word_count(piece)
            if self.has_body and self.words + words > self.max_words:
                self.flush()
            self.parts.append(piece)
            self.words += words
            self.body_words += words
            self.has_body = True

    def _add_heading(self, block: _Block) -> None:
        assert block.heading is not None
        if self.has_body and self.body_words >= _SCRAP_WORDS:
            self.flush()
        self.title = self.title or block.heading
        self.heading = block.heading
        self.parts.append(block.text)
        self.words += _word_count(block.heading)

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
                )
            )
        self.parts, self.words, self.body_words, self.has_body = [], 0, 0, False


def _default_title(document: str) -> str:
    name = document.rsplit("/", 1)[-1]
    for suffix in (".rst.txt", ".markdown", ".md", ".rst", ".txt"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def paginate(document: Document, max_words: int) -> list[Page]:
    """The pages of one document, numbered from 1. Empty documents have no pages."""
    fmt = document_format(document.path) or "text"
    builder = _PageBuilder(document.path, _default_title(document.path), max_words)
    for block in _blocks(document.text, fmt):
        builder.add(block)
    builder.flush()
    title = builder.title or builder.default_title
    return [replace(page, title=title) for page in builder.pages]


def paginate_all(documents: Iterable[Document], max_words: int) -> list[Page]:
    return [page for document in documents for page in paginate(document, max_words)]


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
                },
                excluded_embed_metadata_keys=list(PAGE_METADATA_KEYS),
                excluded_llm_metadata_keys=list(PAGE_METADATA_KEYS),
                relationships=relationships,
            )
        )
    return nodes


def from_node(node: TextNode) -> Page:
    metadata = node.metadata
    return Page(
        node_id=node.node_id,
        document=str(metadata["document"]),
        page=int(metadata["page"]),
        title=str(metadata.get("title", "")),
        heading=str(metadata.get("heading", "")),
        text=node.get_content(),
    )


def corpus_folder(corpus: Corpus, pipeline_folder: Path) -> Path:
    """The corpus folder; a relative path is relative to the pipeline file."""
    return corpus.path if corpus.path.is_absolute() else pipeline_folder / corpus.path
