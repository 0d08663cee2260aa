"""The passages a prompt is given (retrieved pages, context-buffer results, a deep search's
answers) and the citations of the replies written from them (C33): the answer's and the
compose's `[n]` markers become runner's citations of the passages' sources.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from runner.llm.citations import (
    CITATION,
    NUMBERED_MARKERS,
    PAGE_LABEL,
    citation_labels,
    citation_text,
    prose_pieces,
    source_labels,
)
from runner.sources import Source

# The key, in a tool result's data and in a passage, of what a retrieval's pages are worth
# beyond their words (runner.tools.evidence): the gatekeeper reads it.
EVIDENCE = "evidence"
# The key of how a retrieval's pages can be read by meaning (runner.tools.meaning): the model
# that embedded the corpus's pages and the page that search by meaning ranked first.
MEANING = "meaning"


@dataclass(frozen=True)
class Passage:
    """A piece of context handed to a prompt: its text, where it came from, the completion key
    of the tool result it belongs to, whether it is guaranteed context (C23), and, for a
    retrieval's pages, the retrieval's evidence (`{first_page_cosine, agreement, top_k}`) and
    how to read them by meaning (`{model, precision, first}`: runner.tools.meaning)."""

    text: str
    sources: tuple[Source, ...] = ()
    key: str = ""
    guaranteed: bool = False
    # what a retrieval's pages are worth is data about the passage, not part of its identity:
    # a dict is not hashable, and two passages of the same text and sources are one passage
    evidence: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)
    meaning: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)

    def to_json(self) -> dict[str, Any]:
        """What templates see: every source with all four keys (None when unknown), so that a
        template can write `source.page` without a definedness test; and a retrieval's
        `evidence` when it has some."""
        facts = {
            "text": self.text,
            "sources": [_source_facts(source) for source in self.sources],
            "key": self.key,
            "guaranteed": self.guaranteed,
        }
        if self.evidence is not None:
            facts[EVIDENCE] = dict(self.evidence)
        if self.meaning is not None:
            facts[MEANING] = dict(self.meaning)
        return facts


class BufferEntry(Protocol):
    """What a context-buffer result offers (runner.engine.results.PromptAndContext; the LLM layer
    does not import the engine)."""

    @property
    def context(self) -> str: ...

    @property
    def sources(self) -> tuple[Source, ...]: ...

    @property
    def guaranteed(self) -> bool: ...

    @property
    def data(self) -> Mapping[str, Any]: ...


class BufferEntries(Protocol):
    """A context buffer or a snapshot of one: completion key → that tool's results, in order."""

    def items(self) -> Iterable[tuple[str, Iterable[BufferEntry]]]: ...


def passages_from_buffer(entries: BufferEntries | None) -> list[Passage]:
    """The buffer's non-empty results as passages, guaranteed or not, in buffer order. Empty
    contexts are left out: they say only that a tool found nothing."""
    return [
        Passage(
            result.context,
            tuple(result.sources),
            key,
            result.guaranteed,
            result.data.get(EVIDENCE),
            result.data.get(MEANING),
        )
        for key, results in (entries.items() if entries is not None else ())
        for result in results
        if result.context.strip()
    ]


def passages_json(passages: Iterable[Passage]) -> list[dict[str, Any]]:
    """Passages as templates see them (`{text, sources, key, guaranteed}`)."""
    return [passage.to_json() for passage in passages]


def _source_facts(source: Source) -> dict[str, Any]:
    return {
        "document": source.document,
        "page": source.page,
        "title": source.title,
        "heading": source.heading,
    }


# --- the final answer and its citations (C33) ------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """The final answer's (or a compose's) text, its citations in runner's format, and the
    passages it drew on, in the order it first cites them (all it was given when it cites
    none). A prompt tool's reply: its text and the pages it cites (all its prompt was given
    when it cites none)."""

    text: str
    used: tuple[Passage, ...] = ()


def pages_of(passage: Passage) -> list[Passage]:
    """A passage of several labelled pages (each page under `[doc, page N]`, as the retrieval
    tools write them, and each one of the passage's sources) as one passage per page with that
    page's source, so that a citation names the page it drew on. Any other passage stays
    whole."""
    if len(passage.sources) < 2:
        return [passage]
    by_label = {(source.document, source.page): source for source in passage.sources}
    pages: list[tuple[Source, list[str]]] = []
    for line in passage.text.splitlines():
        label = PAGE_LABEL.match(line.strip())
        source = by_label.get((label["document"], int(label["page"]))) if label else None
        if source is not None:
            pages.append((source, [line]))
        elif pages:
            pages[-1][1].append(line)
        elif line.strip():
            return [passage]  # text before the first label: not a list of pages
    if {source for source, _ in pages} != set(passage.sources):
        return [passage]
    return [
        replace(passage, text="\n".join(lines).strip(), sources=(source,))
        for source, lines in pages
    ]


def numbered_json(passages: Sequence[Passage], *, first: int) -> list[dict[str, Any]]:
    """Passages as the answer and compose templates see them: `{text, sources, key, guaranteed,
    number}`; the reply cites a passage by its number, `[n]`."""
    return [
        {**passage.to_json(), "number": number}
        for number, passage in enumerate(passages, start=first)
    ]


_NUMBER = re.compile(r"\d+")


def cited_answer(reply: str, passages: Sequence[Passage]) -> Answer:
    """The reply (the final answer's or a compose's) with each `[n]` marker (n: a passage's
    number, from 1) rewritten as runner's citation of that passage's sources (`[manual.md p. 3]`:
    the offline provider's format, the same for every provider); a marker naming no passage is
    dropped. A citation already written in runner's format counts for the passages whose
    sources it names. The passages used are the cited ones in the order of their first
    citation; a reply citing none drew on them all."""
    cited = _written_citations(reply, passages)

    def rewrite(match: re.Match[str], offset: int) -> str:
        numbers = (int(number) for number in _NUMBER.findall(match[1]))
        chosen = [passages[n - 1] for n in numbers if 1 <= n <= len(passages)]
        cited.extend((offset + match.start(1), passage) for passage in chosen)
        citation = citation_text(label for passage in chosen for label in _labels(passage))
        blanks = match[0][: match.start(1) - match.start()]
        return f"{blanks}{citation}" if citation else ""

    # quoted code is never read for markers: `[1, 2]` in it is a list, not a citation
    text = "".join(
        piece
        if offset < 0
        else NUMBERED_MARKERS.sub(functools.partial(rewrite, offset=offset), piece)
        for offset, piece in prose_pieces(reply)
    )
    used = [passage for _, passage in sorted(cited, key=lambda found: found[0])]
    return Answer(text, tuple(dict.fromkeys(used)) if used else tuple(passages))


def drawn_on(reply: str, passages: Sequence[Passage]) -> tuple[Passage, ...]:
    """What a reply that cites in runner's own format (`[manual.md p. 3]`) drew on: the pages
    it cites (each labelled page of a passage on its own, `pages_of`) in the order of their
    first citation; all the passages when it cites none (a model that does not cite drew on
    everything it was given, as far as anyone can tell)."""
    pages = [page for passage in passages for page in pages_of(passage)]
    cited = [page for _, page in sorted(_written_citations(reply, pages), key=lambda f: f[0])]
    return tuple(dict.fromkeys(cited)) if cited else tuple(passages)


def _written_citations(reply: str, passages: Sequence[Passage]) -> list[tuple[int, Passage]]:
    """Where the reply cites passages in runner's own format (`[manual.md p. 3]`)."""
    found: list[tuple[int, Passage]] = []
    for match in CITATION.finditer(reply):
        labels = set(citation_labels(match["labels"]))
        found.extend((match.start(), p) for p in passages if labels & set(_labels(p)))
    return found


def _labels(passage: Passage) -> tuple[str, ...]:
    return source_labels([_source_facts(source) for source in passage.sources])
