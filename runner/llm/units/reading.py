"""Passage text -> units: the sentences, list items, table rows and records an offline answer
can quote, each with what it needs to be scored and cited.

What the parser knows about the text it reads (all of it general, nothing about a corpus):
- **page labels** (`[policies/fees.md, page 4] Fees outside the warranty`, as the retrieval
  tools put them before each page) and **citations** (`[manual.md p. 3; policy.md]`, as the
  offline provider writes them) name the sources of what follows or precedes them; they are
  never quoted, and a quoted unit keeps them as its own citation labels;
- **headings** (markdown `#`, reStructuredText titles underlined with `===`/`---`, the text
  after a page label) are not sentences: they become the `section` of the units under them;
- **code** (fenced blocks, reStructuredText literal blocks after `::` and directives, doctest
  `>>>` lines) and directive/comment lines (`.. note::`, `.. _label:`) are skipped;
- **tables**: a markdown row is one unit, rendered as `first cell — header: cell; …`; the
  header row is not quoted;
- **records**: a line of three or more `key: value` fields separated by `; ` (how `lookup`
  tools render a table row) is one unit with its fields kept;
- everything else is prose: the lines of a paragraph are joined, inline markup is cleaned
  (reStructuredText roles and literals, emphasis, markdown links), and the paragraph is cut
  into sentences (`runner.text.words.sentences`: abbreviations and brackets are safe); a list item
  (`- …`, `1. …`) is a unit of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import pairwise

from runner.llm.citations import CITATION, PAGE_LABEL, citation_labels
from runner.llm.units.code import (
    CODE_DIRECTIVE,
    MARKUP_DIRECTIVE,
    block_text,
    inline,
    quotable,
    reads_as_prose,
)
from runner.llm.units.inline import plain_text
from runner.llm.units.rows import record_fields, row_cells, row_fields, row_text
from runner.text.markup import ADORNMENT, ATX_HEADING, FENCE, closes_fence
from runner.text.questions import opens_a_question
from runner.text.words import STOP_WORDS, sentences, stem, tokenize

SENTENCE, ITEM, ROW, RECORD = "sentence", "item", "row", "record"


@dataclass(frozen=True)
class Unit:
    """A unit of a passage read on its own: a sentence, a list item, a row or a record."""

    text: str  # as it is quoted
    kind: str  # sentence | item | row | record
    position: int  # order within the passage
    section: str  # the heading the unit is under ("" when none)
    lead: bool  # the first unit of its section: often the one that says what it is about
    labels: tuple[str, ...]  # its own citation labels ("doc p. 4"); () means the passage's
    fields: tuple[tuple[str, str], ...] = ()  # a record's (key, value) pairs
    stems: frozenset[str] = field(default=frozenset(), compare=False)
    context_stems: frozenset[str] = field(default=frozenset(), compare=False)
    words: int = 0
    # adjacent content-word stems of its text and of its heading, for phrase matches
    pairs: frozenset[tuple[str, str]] = field(default=frozenset(), compare=False)
    code: str = ""  # the code block that belongs to it, verbatim (`units.code`)

    @property
    def own_heading(self) -> str:
        """The innermost heading: the document's title above it names every model of a
        manual, every code of a table of codes."""
        return self.section.rsplit(" › ", 1)[-1]

    @property
    def introduces(self) -> bool:
        """Ends with a colon and has no code of its own: what follows (a list, a table, a
        sentence) belongs to it."""
        return not self.code and self.text.rstrip().endswith(":")


# --- sources written in the text ----------------------------------------------------------


def _is_heading_text(rest: str) -> bool:
    """After a page label: a heading (a document title and a section heading joined by ` › `,
    as retrieval writes a page's place; or short, no full stop at the end), or the page's text
    itself (a page answer: sentences; one that ends with a colon introduces what follows)."""
    if " › " in rest:
        return True
    return bool(rest) and len(rest.split()) <= 14 and not rest.rstrip().endswith((".", "!", ":"))


# --- structure -------------------------------------------------------------------------------

_DIRECTIVE = re.compile(r"^\s*\.\.(\s|$)")  # ".. note::", ".. _label:", ".. comment"
_DOCTEST = re.compile(r"^\s*>>>(\s|$)")  # a session starts at a prompt; `...` goes on
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_LIST_START = re.compile(r"^\s*(?:[-*•+]|\d{1,3}[.)]|[a-z][.)])\s+\S")
# reStructuredText: "…as follows::" reads "…as follows:", "…you want. ::" reads "…you want."
_LITERAL_MARK = re.compile(r"(?:(?<=\S)|\s+)::$")

_JOINED = re.compile(r"[-.'’]")
_INTRODUCING_END = re.compile(
    r"(?:,?\s+(?:for example|for instance|such as|including|as follows|like this|e\.g\.))?"
    r"\s*:+\s*$",
    re.IGNORECASE,
)


def closed(text: str) -> str:
    """A sentence that introduced something not quoted (code, a list): "…excludes, for
    example:" becomes "…excludes."."""
    return _INTRODUCING_END.sub("", text).rstrip(" ,;") + "."


@lru_cache(maxsize=4096)
def parse(text: str) -> tuple[Unit, ...]:
    """The units of a passage's text, in order (cached: the same pages reach several
    purposes of one round)."""
    return tuple(_Parser(text).units())


class _Parser:
    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.section = ""
        self.labels: tuple[str, ...] = ()
        self.paragraph: list[str] = []
        self.header: list[str] = []  # the current table's column headers
        self.last_cells: list[str] = []  # the previous row's cells, while in a table
        self.position = 0
        self.found: list[Unit] = []
        # the code block being read: its lines, how it ends, and whether it is quotable code
        # (a markup directive's body is read and dropped)
        self.code: list[str] | None = None
        self.fence: str | None = None  # the fence that opened it
        self.code_indent: int | None = None  # or: lines indented deeper than this (-1: doctest)
        self.code_kept = True
        self.directive = False
        self.owner: int | None = None  # the unit the code belongs to (index into found)
        self.pending: tuple[int, str] | None = None  # code read, its place not settled yet
        self.boundary = 0  # units before this index are of an earlier section or page
        self.after_blank = False
        self.last_indent = 0  # indentation of the last prose line
        self.index = 0  # of the line being read

    def units(self) -> list[Unit]:
        for index, line in enumerate(self.lines):
            self.index = index
            if self.fence is not None:
                if closes_fence(line, self.fence):
                    self._end_code()
                else:
                    self._code_line(line)
                continue
            opened = FENCE.match(line)
            if opened and not self._underlines(line):
                self._start_code(None, fence=opened[1])
                continue
            if self._in_code(line):
                self._code_line(line)
                continue
            self._line(line)
            self.after_blank = not line.strip()
        self._end_code()
        self._settle(None)
        self._flush()
        return self.found

    # --- one line ---------------------------------------------------------------------------

    def _line(self, line: str) -> None:
        stripped = line.strip()
        if not stripped.startswith("|"):
            self.header, self.last_cells = [], []  # a table ends at its first other line
        if not stripped:
            self._flush()
            return
        self._settle(stripped)
        if self._indented_block(line):
            self._start_code(self.last_indent, first=line)
            return
        if stripped[0].isalnum() and not _LIST_START.match(stripped):
            self._prose(stripped, line)  # most lines: no markup test can match
            return
        if self._label(stripped) or self._heading(stripped):
            return
        if _DIRECTIVE.match(line):
            self._flush()
            if CODE_DIRECTIVE.match(line):  # its body is code, quoted with its sentence
                self._start_code(_indent(line), directive=True)
            elif MARKUP_DIRECTIVE.match(line):  # its body is markup: never quoted
                self._start_code(_indent(line), kept=False)
            return
        if _DOCTEST.match(line):  # an interactive session: its output lines follow it
            self._start_code(-1, first=line)
            return
        if _TABLE_ROW.match(line):
            self._row(stripped)
            return
        if _LIST_START.match(line):
            self._flush()
        self._prose(stripped, line)

    def _prose(self, stripped: str, line: str) -> None:
        if not self.paragraph:
            self.last_indent = _indent(line)
        self.paragraph.append(stripped)
        if stripped.endswith("::"):  # reStructuredText: a literal block follows
            self._start_code(_indent(line))
        elif stripped.endswith(":"):  # it introduces what follows ("Facts:", "Steps:")
            self._flush()

    # --- code: read whole, then given to the unit it belongs to ----------------------------

    def _underlines(self, line: str) -> bool:
        """`~~~~` right under a one-line paragraph as long as it is a reST title's underline,
        not a fence."""
        stripped = line.strip()
        return (
            len(self.paragraph) == 1
            and bool(ADORNMENT.match(stripped))
            and len(stripped) >= len(self.paragraph[0]) - 1
        )

    def _indented_block(self, line: str) -> bool:
        """A block indented four spaces deeper than the paragraph before it, after a blank line,
        when that paragraph introduces it or stops mid-sentence (Markdown, text, POD)."""
        if self.paragraph or not self.after_blank or not self.found:
            return False
        last = self.found[-1].text.rstrip()
        if len(self.found) - 1 < self.boundary:
            return False
        if self.found[-1].kind == ITEM and not last.endswith(":"):
            return False  # a list item's continuation is prose
        wanting = last.endswith(":") or not last.endswith((".", "!", "?", ")", '"'))
        deeper = self.last_indent + 4
        if not wanting or _indent(line) < deeper:
            return False
        block = []  # the block's lines: a quotation in prose is read as prose, not as code
        for following in self.lines[self.index :]:
            if following.strip() and _indent(following) < deeper:
                break
            block.append(following)
        return not reads_as_prose(block)

    def _start_code(
        self,
        indent: int | None,
        *,
        fence: str | None = None,
        first: str | None = None,
        kept: bool = True,
        directive: bool = False,
    ) -> None:
        """Code follows: read while lines are indented deeper than `indent` (-1: a doctest
        session, up to a blank line), or up to the closing `fence`."""
        self._flush()
        self._end_code()
        self._settle(None)  # a block right after another belongs to the same unit
        owned = self.found and len(self.found) - 1 >= self.boundary
        self.owner = len(self.found) - 1 if owned else None
        self.code, self.fence, self.code_indent = [], fence, indent
        self.code_kept, self.directive = kept, directive
        if first is not None:
            self.code.append(first)

    def _code_line(self, line: str) -> None:
        assert self.code is not None
        self.code.append(line)

    def _in_code(self, line: str) -> bool:
        """Inside a literal block: blank lines and lines indented deeper than the line that
        opened it (-1: a doctest session, which a blank line ends)."""
        if self.code_indent is None:
            return False
        if self.code_indent < 0:
            if line.strip():
                return True
        elif not line.strip() or _indent(line) > self.code_indent:
            return True
        self._end_code()
        return False

    def _end_code(self) -> None:
        if self.code is None:
            return
        code = block_text(self.code, directive=self.directive)
        if self.code_kept and self.owner is not None and quotable(code):
            self.pending = (self.owner, code)
        self.code, self.fence, self.code_indent = None, None, None

    def _settle(self, following: str | None) -> None:
        """The code just read belongs to the unit before it; a short one inside a sentence (the
        next line goes on in lower case) is quoted in that sentence, which then goes on."""
        if self.pending is None:
            return
        owner, code = self.pending
        self.pending = None
        unit = self.found[owner]
        as_inline = inline(code)
        goes_on = following is not None and following[:1].islower()
        if goes_on and as_inline and owner == len(self.found) - 1 and not _ended(unit.text):
            self.found.pop()
            self.position -= 1
            self.paragraph = [unit.text.rstrip(":").rstrip(), as_inline]
            return
        joined = f"{unit.code}\n\n{code}" if unit.code else code
        if quotable(joined):
            self.found[owner] = replace(unit, code=joined)

    def _label(self, stripped: str) -> bool:
        match = PAGE_LABEL.match(stripped)
        if not match:
            return False
        self._flush()
        self.boundary = len(self.found)
        self.labels = citation_labels(f"{match['document']}, page {match['page']}")
        rest = match["rest"].strip()
        self.section = rest if _is_heading_text(rest) else ""
        if rest and not _is_heading_text(rest):
            self.paragraph.append(rest)
        return True

    def _heading(self, stripped: str) -> bool:
        markdown = ATX_HEADING.match(stripped)
        if markdown:
            self._flush()
            self.boundary = len(self.found)
            self.section = _deeper(self.section, plain_text(markdown.group(2)))
            return True
        if not ADORNMENT.match(stripped):
            return False
        # an underline: the paragraph so far was one line, the title
        if len(self.paragraph) == 1 and len(stripped) >= len(self.paragraph[0]) - 1:
            self.boundary = len(self.found)
            self.section = _deeper(self.section, plain_text(self.paragraph.pop()))
        elif self.paragraph:  # a horizontal rule or a stray line of dashes
            self._flush()
        return True  # an overline, a rule or an underline: never a sentence

    # --- tables -------------------------------------------------------------------------------

    def _row(self, stripped: str) -> None:
        self._flush()
        if _TABLE_SEPARATOR.match(stripped):
            # the row above was the header: its cells name the columns, it is not quoted
            if self.last_cells and self.found and self.found[-1].kind == ROW:
                self.found.pop()
                self.position -= 1
                self.header = self.last_cells
            return
        cells = row_cells(stripped)
        if not any(cells):
            return
        self.last_cells = cells
        fields = row_fields(cells, self.header)
        self._add(row_text(cells, self.header), ROW, context=" ".join(self.header), fields=fields)

    # --- paragraphs -------------------------------------------------------------------------

    def _flush(self) -> None:
        if not self.paragraph:
            return
        text = " ".join(self.paragraph)
        self.paragraph = []
        record = record_fields(text)
        if record:
            self._add(text, RECORD, fields=record)
            return
        for piece, labels in _cited_pieces(_LITERAL_MARK.sub(_literal_mark, text)):
            found = [s for s in sentences(plain_text(piece)) if any(ch.isalnum() for ch in s)]
            asked = _asked_first(found)
            for sentence in found[len(asked) :]:
                kind = ITEM if _LIST_START.match(sentence) else SENTENCE
                self._add(sentence, kind, labels=labels, context=" ".join(asked))

    def _add(
        self,
        text: str,
        kind: str,
        *,
        labels: tuple[str, ...] = (),
        context: str = "",
        fields: tuple[tuple[str, str], ...] = (),
    ) -> None:
        """One unit; `context` is what gives it meaning besides its section's heading (a row's
        column headers)."""
        context_text = f"{self.section} {context}"
        lead = not self.found or (self.found[-1].section, self.found[-1].labels) != (
            self.section,
            labels or self.labels,
        )
        self.found.append(
            Unit(
                text=text,
                kind=kind,
                position=self.position,
                section=self.section,
                lead=lead,
                labels=labels or self.labels,
                fields=fields,
                stems=unit_stems(text),
                context_stems=unit_stems(context_text),
                words=len(text.split()),
                pairs=word_pairs(text) | word_pairs(self.section),
            )
        )
        self.position += 1


# the sentences a paragraph may open with before the question they lead to
_ASKED_WITHIN = 2


def _asked_first(found: Sequence[str]) -> Sequence[str]:
    """The question a paragraph opens with, when an answer follows it: its sentences up to the
    first one that asks as a FAQ does (`opens_a_question`, within _ASKED_WITHIN; "I've made a
    mistake in the last commit. How do I change it?"; not a rhetorical "However, this raises
    one problem: where should it go?"). A FAQ's question answers nothing: it is what the
    sentences after it are about, read as their context as a heading is, and never quoted."""
    for index, sentence in enumerate(found[:_ASKED_WITHIN]):
        if opens_a_question(sentence):
            return found[: index + 1] if index + 1 < len(found) else ()
    return ()


def unit_stems(text: str) -> frozenset[str]:
    """The stems of a text's tokens, and of the parts of its joined tokens too: `copy.deepcopy`
    holds `copy`, `try/except` and `no-fault-found` hold `fault`."""
    return _analysed(text)[0]


def word_pairs(text: str) -> frozenset[tuple[str, str]]:
    """The stems of each two content words that follow each other (stop words skipped):
    "convert a string to a number" -> (convert, string), (string, number)."""
    return _analysed(text)[1]


@lru_cache(maxsize=65536)
def _analysed(text: str) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    """One pass over the tokens for both: parsing is the cost of a page's first use."""
    tokens = tokenize(text)
    found = set()
    kept = []
    for token in tokens:
        key = stem(token)
        found.add(key)
        if not token.isalnum():
            found.update(stem(part) for part in _JOINED.split(token) if part)
        if token not in STOP_WORDS:
            kept.append(key)
    return frozenset(found), frozenset(pairwise(kept))


def _deeper(place: str, heading: str) -> str:
    """The section of the units under a heading: the page's place (`Title › Heading`, from its
    label) when the heading is the one it ends with, so that the document's title still counts
    for a page that repeats its own heading ("Spare Parts Availability Policy › Availability
    periods" above `## Availability periods`); otherwise the heading."""
    return place if place and place.split(" › ")[-1] == heading else heading


def _literal_mark(match: re.Match[str]) -> str:
    return "" if match[0][0].isspace() else ":"


def _ended(text: str) -> bool:
    return text.rstrip().endswith((".", "!", "?"))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _cited_pieces(text: str) -> Iterator[tuple[str, tuple[str, ...]]]:
    """The text between citations, each with the labels of the citation that closes it (()
    for a piece no citation follows)."""
    start = 0
    for match in CITATION.finditer(text):
        piece = text[start : match.start()]
        if piece.strip():
            yield piece, citation_labels(match["labels"])
        start = match.end()
    if text[start:].strip():
        yield text[start:], ()
