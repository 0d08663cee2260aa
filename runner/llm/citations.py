"""runner's citation format (C33), in one place for every provider and every face.

- A page in a context is labelled `[document, page N]` (no ". " inside, so that a sentence
  splitter never cuts it), followed by its place (`Title › Heading`): `page_label`,
  `PAGE_LABEL`.
- An answer cites `[document p. N]`, several sources joined by `; `, each once, in order, and
  `[document]` for a source without pages (a table file): `citation_text`, `CITATION`,
  `citation_labels`, `source_labels`.
- A model cites the passages it was sent by number, `[2]` or `[1, 3]`: `NUMBERED_MARKERS`.
- A reply's quoted code is never read for citations: `prose_pieces`; what a reply says besides
  its citations: `uncited`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from runner.text.markup import FENCED_BLOCK

# "[docs/a.md, page 4] Heading or text": how retrieval tools label each page in a context.
PAGE_LABEL = re.compile(r"^\[(?P<document>[^\[\]\n,]+), page (?P<page>\d+)\]\s*(?P<rest>.*)$")
# "[doc p. 4; other.csv]": a citation as runner writes it. A document has a dot or a slash in
# it (a file name or a path), so "[1]" or "[optional]" are not citations.
_DOCUMENT = r"[^\s\[\];,]*[./][^\s\[\];,]*"
_LABEL = rf"{_DOCUMENT}(?:,? (?:p\.|page) \d+)?"
CITATION = re.compile(rf"\[(?P<labels>{_LABEL}(?:; {_LABEL})*)\]")
# "[2]", "[1, 3]", "[1; 3]" and runs of them ("[1][3]"), with the blanks before them: how a model
# cites the numbered passages it was sent. Not right after a word, a bracket or a backtick, nor
# before a word or "(": "a[1]", "`x[0]`", "[1](url)" are code and links, not citations.
NUMBERED_MARKERS = re.compile(r"[ \t]*(?<![\w\])`])((?:\[\s*\d+(?:\s*[,;]\s*\d+)*\s*\])+)(?![\w(])")
_PAGE_WORD = re.compile(r",? page (\d+)$")
# a fenced block or a backticked span on one line: code, where `[1]` is an index
_QUOTED_CODE = re.compile(rf"{FENCED_BLOCK.pattern}|(`+)[^`\n]+?\2", FENCED_BLOCK.flags)


def page_label(document: str, page: int) -> str:
    """How a page is labelled in context text: `[document, page N]`."""
    return f"[{document}, page {page}]"


def citation_labels(inner: str) -> tuple[str, ...]:
    """The labels of a citation's inner text, in the one format we write: `doc p. N`."""
    return tuple(_PAGE_WORD.sub(r" p. \1", label.strip()) for label in inner.split("; "))


def citation_text(labels: Iterable[str]) -> str:
    """`[manual.md p. 3; policy.md]`, or "" without labels: each label once, in order."""
    unique = list(dict.fromkeys(labels))
    return f"[{'; '.join(unique)}]" if unique else ""


def source_labels(sources: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """`doc p. N` (or `doc` without a page) for each source, without repeats, in order."""
    labels: list[str] = []
    for source in sources:
        label = str(source.get("document") or "")
        if label and source.get("page") is not None:
            label += f" p. {source['page']}"
        if label and label not in labels:
            labels.append(label)
    return tuple(labels)


def prose_pieces(text: str) -> list[tuple[int, str]]:
    """The pieces of a reply outside its code (fenced blocks, backticked spans), each with its
    offset, and the code as (-1, code): where `[1]` is a citation marker and not an index."""
    pieces, start = [], 0
    for match in _QUOTED_CODE.finditer(text):
        pieces.append((start, text[start : match.start()]))
        pieces.append((-1, match[0]))  # code: kept as it is
        start = match.end()
    pieces.append((start, text[start:]))
    return pieces


def uncited(text: str) -> str:
    """The text without its citations, numbered (`[2]`) or in runner's format: what a reply
    says besides them (a reply of citations alone says nothing)."""
    return CITATION.sub("", NUMBERED_MARKERS.sub("", text))
