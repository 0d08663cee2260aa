"""An answer's citations, and the page each one came from, highlighted where it was quoted.

An answer cites its sources in runner's one format, `[manual.md p. 3; products.csv]`, after the
sentences they support. `cited_segments` cuts the answer at those citations, so that each piece
of text knows its sources; `source_page` reads the cited page back from the pipeline's corpus
(or the cited row from its lookup table) and `highlight` marks the words of the piece that the
page holds, so the author sees where the answer was quoted from, or that it was not.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from runner.llm.citations import CITATION, citation_labels
from runner.sources import MCP_DOCUMENT_PREFIX

if TYPE_CHECKING:
    from runner.config.model import Corpus, Pipeline

# A run of at least this many words shared by the answer and the page counts as quoted; fewer
# would light up every "the model" and "of the".
MIN_QUOTED_WORDS = 4
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Citation:
    label: str  # as the answer wrote it: "manual.md p. 3"
    index: int | None  # the source it names in the result's `sources`, None: none does


@dataclass
class Segment:
    text: str
    citations: list[Citation] = field(default_factory=list)


@dataclass(frozen=True)
class Piece:
    text: str
    quoted: bool


@dataclass
class SourcePage:
    document: str
    page: int | None
    title: str
    heading: str
    pieces: list[Piece]  # the page's text, cut where the quote starts and ends
    columns: list[tuple[str, str, bool]] = field(default_factory=list)  # a row's cells, quoted

    @property
    def quoted(self) -> bool:
        return any(piece.quoted for piece in self.pieces) or any(q for *_, q in self.columns)


def source_key(source: Mapping[str, Any]) -> str:
    """A source's label in the answer's citations: `doc p. N`, or `doc` for a table row."""
    page = source.get("page")
    return f"{source['document']} p. {page}" if page is not None else str(source["document"])


def cited_segments(answer: str, sources: Sequence[Mapping[str, Any]]) -> list[Segment]:
    """The answer cut after each citation, each piece with the sources it cites."""
    segments: list[Segment] = []
    at = 0
    for match in CITATION.finditer(answer):
        text = answer[at : match.start()]
        labels = citation_labels(match["labels"])
        citations = [Citation(label, _source_for(label, text, sources)) for label in labels]
        segments.append(Segment(text, citations))
        at = match.end()
    if answer[at:]:
        segments.append(Segment(answer[at:]))
    return segments


def _source_for(label: str, text: str, sources: Sequence[Mapping[str, Any]]) -> int | None:
    """The source a label names; several table rows share one label (the table's name), so
    the row whose key the cited text mentions wins."""
    named = [i for i, source in enumerate(sources) if source_key(source) == label]
    if not named:
        named = [i for i, source in enumerate(sources) if label.endswith(source_key(source))]
    for index in named:
        heading = sources[index].get("heading")
        if heading and str(heading) in text:
            return index
    return named[0] if named else None


def quote_of(answer: str, sources: Sequence[Mapping[str, Any]], index: int) -> str:
    """Every piece of the answer that cites source `index`, joined: what to highlight."""
    return " ".join(
        segment.text.strip()
        for segment in cited_segments(answer, sources)
        if any(citation.index == index for citation in segment.citations)
    )


def highlight(text: str, quote: str) -> list[Piece]:
    """`text` cut into pieces, those holding a run of `MIN_QUOTED_WORDS` or more words of
    `quote` (in the quote's order, regardless of case and punctuation) marked as quoted."""
    words = list(_WORD.finditer(text))
    wanted = [w.lower() for w in _WORD.findall(quote)]
    if not words or not wanted:
        return [Piece(text, False)] if text else []
    matcher = difflib.SequenceMatcher(None, wanted, [w[0].lower() for w in words], autojunk=False)
    least = min(MIN_QUOTED_WORDS, len(wanted))
    spans = [
        (words[block.b].start(), words[block.b + block.size - 1].end())
        for block in matcher.get_matching_blocks()
        if block.size >= least
    ]
    pieces: list[Piece] = []
    at = 0
    for start, end in spans:
        if start > at:
            pieces.append(Piece(text[at:start], False))
        pieces.append(Piece(text[start:end], True))
        at = end
    if at < len(text):
        pieces.append(Piece(text[at:], False))
    return pieces


class SourceNotFoundError(LookupError):
    """No corpus or lookup table of the pipeline holds the cited document."""


def source_page(
    pipeline: Pipeline, document: str, page: int | None, heading: str | None, quote: str = ""
) -> SourcePage:
    """The cited page of a corpus document, or the cited row of a lookup table (its `heading`
    is the row's key), with the quote highlighted."""
    found = _corpus_page(pipeline, document, page) if page is not None else None
    if found is not None:
        title, page_heading, text = found
        return SourcePage(document, page, title, page_heading, highlight(text, quote))
    row = _table_row(pipeline, document, heading)
    if row is not None:
        cells = [(str(k), str(v), _cell_quoted(str(k), str(v), quote)) for k, v in row.items()]
        text = "\n".join(f"{k}: {v}" for k, v, _ in cells)
        return SourcePage(document, None, document, heading or "", [Piece(text, False)], cells)
    where = f"{document} page {page}" if page is not None else f"{document} ({heading})"
    if document.startswith(MCP_DOCUMENT_PREFIX):
        raise SourceNotFoundError(
            f"{where} is a tool of an MCP server: no file of the pipeline holds what it "
            "answered; the round's tasks show that it ran and why"
        )
    raise SourceNotFoundError(
        f"{where} is in none of the pipeline's corpora or lookup tables; was the corpus "
        "changed since this round?"
    )


def _cell_quoted(column: str, value: str, quote: str) -> bool:
    """A table cell is quoted when the answer gives it as `column: value`, or gives a value
    long enough not to be found by chance."""
    if not value:
        return False
    return f"{column}: {value}" in quote or (len(value) >= 6 and value in quote)


def _corpus_page(pipeline: Pipeline, document: str, number: int) -> tuple[str, str, str] | None:
    from runner.retrieval.pages import corpus_folder, paginate, read_document

    for corpus in pipeline.corpora.values():
        path = corpus_document(pipeline, corpus, document)
        if path is None:
            continue
        folder = corpus_folder(corpus, pipeline.folder)
        for found in paginate(read_document(folder, path, corpus.html_drop), corpus.max_words):
            if found.page == number:
                return found.title, found.heading, found.text
    return None


def corpus_document(pipeline: Pipeline, corpus: Corpus, document: str) -> Path | None:
    """The file of a cited document, only when it is one of the corpus's own documents: a
    path inside its folder that its `include` takes and its `exclude` leaves, of a format
    runner reads, not hidden, and (unless the corpus follows symlinks) whose real path is
    inside the corpus's own folder: a link to another file of the pipeline's folder is not
    served either. A citation comes from a URL: nothing else is read."""
    from runner.config.paths import PathRefused, contained
    from runner.retrieval.pages import corpus_folder, document_format, excluded

    pure = PurePosixPath(document)
    if (
        not document
        or "\x00" in document
        or "\\" in document
        or pure.is_absolute()
        or any(part in ("", ".", "..") or part.startswith(".") for part in document.split("/"))
        or document_format(pure.name) is None
        or not excluded(document, corpus.include)  # `include`'s globs, read as `exclude`'s
        or excluded(document, corpus.exclude)
    ):
        return None
    folder = corpus_folder(corpus, pipeline.folder)
    path = folder / document
    try:
        if not corpus.follow_symlinks:
            contained(path, folder)
        return path if path.is_file() else None
    except (PathRefused, OSError):
        return None


def _table_row(pipeline: Pipeline, document: str, key: str | None) -> dict[str, Any] | None:
    from runner.config.model import LookupOptions
    from runner.documents.table_files import cell_text, load_table
    from runner.tables.lookup_tables import table_path

    for tool in pipeline.tools:
        options = tool.options
        if not isinstance(options, LookupOptions):
            continue
        path = table_path(pipeline, options.table)
        if not (path.as_posix().endswith("/" + document) or path.name == document):
            continue
        for row in load_table(path):
            if key is not None and cell_text(row.get(options.key)) == key:
                return {k: cell_text(v) for k, v in row.items()}
    return None
