"""Answer relevance without a model: does the answer address the question that was asked?

Groundedness asks whether an answer's sentences are in the pages they cite; an answer to a drain
question quoted word for word from the dryer page passes that test. What such an answer gets
wrong is its subject, and a page's subject is what its author named it: the document's file
name and the heading of the section the page is in. A cited page is *on the question's topic*
when that name shares a content word (its stem) with the question or its follow-up — or with
the documents' words a corpus's `synonyms:` says the user's words stand for. A sentence
*addresses* the question when a page it cites is on the topic; relevance is the share of the
answer's counted sentences that do (counted as groundedness counts them: a sentence with a
content word; after the last citation it cites nothing and addresses nothing; table rows alone
are not counted). Groundedness reads only pages on the topic (runner.eval.groundedness).

Its limit: it compares words, so a question in other words than the section's name ("holiday"
for a section named "Carrying leave over") scores low though the answer is right, unless the
corpus's `synonyms:` maps the one to the other; the judge (`--judge`) grades relevance by
meaning.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from runner.eval.groundedness import cited_pieces, page_labels
from runner.text.words import content_words, sentences, stem

# (document, page) -> the heading of the section the page is in ("" for none), or None when no
# corpus has the page
PageHeading = Callable[[str, int], "str | None"]
_NAME_SEPARATORS = re.compile(r"[-_.]+")


def question_stems(texts: Iterable[str | None]) -> frozenset[str]:
    """The content words (stems) of a question and its follow-up."""
    return frozenset(stem(word) for text in texts if text for word in content_words(text))


def topic_stems(document: str, heading: str) -> frozenset[str]:
    """A page's subject as its author named it: its file's name and its section's heading."""
    name = _NAME_SEPARATORS.sub(" ", PurePosixPath(document).stem)
    return frozenset(stem(word) for word in content_words(f"{name} {heading}"))


def on_topic_check(asked: frozenset[str], page_heading: PageHeading) -> Callable[[str, int], bool]:
    """Whether a cited page is on the question's topic (an unknown page never is)."""

    def on_topic(document: str, page: int) -> bool:
        heading = page_heading(document, page)
        return heading is not None and bool(asked & topic_stems(document, heading))

    return on_topic


@dataclass(frozen=True)
class Relevance:
    addressed: int
    sentences: int  # the sentences counted

    @property
    def share(self) -> float | None:
        return round(self.addressed / self.sentences, 4) if self.sentences else None

    def to_json(self) -> dict[str, int | float | None]:
        return {"addressed": self.addressed, "sentences": self.sentences, "share": self.share}


def relevance(answer: str, on_topic: Callable[[str, int], bool]) -> Relevance:
    addressed = counted = 0
    for text, labels in cited_pieces(answer):
        pages = page_labels(labels)
        if labels and not pages:
            continue  # table rows only
        hits = any(on_topic(*cited) for cited in pages)
        for sentence in sentences(text):
            if not content_words(sentence):
                continue
            counted += 1
            addressed += hits
    return Relevance(addressed, counted)
