"""Groundedness without a model: the share of an answer's sentences that the passages they
cite support.

An answer cites its sources in runner's one format, `[manual.md p. 3; policy.md p. 1]`; a
citation covers the sentences written since the previous one (a citation at a paragraph's end
covers the paragraph). A sentence is *supported* when at least `SUPPORT_SHARE` of its content
words (their stems: "batteries" is "battery") appear in the text of the pages it cites.
Sentences after the last citation cite nothing and are unsupported; sentences whose citations
are all table rows (no page to read) and sentences without a content word are not counted.

Given `on_topic` (runner.eval.relevance), only the cited pages on the question's topic are read:
a sentence quoted from a page about something else (a drain question answered from the dryer
page) is not a grounded answer to the question, however faithfully it quotes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from runner.llm.citations import CITATION, citation_labels
from runner.text.words import content_words, sentences, stem, token_stems

SUPPORT_SHARE = 0.6
_PAGE_MARK = " p. "

# (document, page) -> the page's text, or None when no corpus has it
PageText = Callable[[str, int], "str | None"]


@dataclass(frozen=True)
class Grounding:
    supported: int
    sentences: int  # the sentences counted

    @property
    def share(self) -> float | None:
        return self.supported / self.sentences if self.sentences else None

    def to_json(self) -> dict[str, int]:
        return {"supported": self.supported, "sentences": self.sentences}


def grounding(
    answer: str, page_text: PageText, on_topic: Callable[[str, int], bool] | None = None
) -> Grounding:
    supported = counted = 0
    for text, labels in cited_pieces(answer):
        cited = page_labels(labels)
        passages = [page_text(*page) for page in cited]
        if labels and not any(passages):
            continue  # table rows only: nothing to read the sentence against
        if on_topic is not None:
            passages = [p for page, p in zip(cited, passages, strict=True) if on_topic(*page)]
        readable = " ".join(passage for passage in passages if passage)
        present = token_stems(readable) if readable else set()
        for sentence in sentences(text):
            wanted = {stem(word) for word in content_words(sentence)}
            if not wanted:
                continue
            counted += 1
            if present and len(wanted & present) >= SUPPORT_SHARE * len(wanted):
                supported += 1
    return Grounding(supported, counted)


def cited_pieces(answer: str) -> list[tuple[str, tuple[str, ...]]]:
    """The answer cut after each citation: each piece with the labels that close it; the text
    after the last citation, with none."""
    pieces: list[tuple[str, tuple[str, ...]]] = []
    at = 0
    for match in CITATION.finditer(answer):
        pieces.append((answer[at : match.start()], citation_labels(match["labels"])))
        at = match.end()
    pieces.append((answer[at:], ()))
    return pieces


def page_labels(labels: tuple[str, ...]) -> list[tuple[str, int]]:
    cited = []
    for label in labels:
        document, mark, page = label.rpartition(_PAGE_MARK)
        if mark and page.isdigit():
            cited.append((document, int(page)))
    return cited
