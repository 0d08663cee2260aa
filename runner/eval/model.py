"""The typed form of a question set (`schemas/questions.schema.json`), whatever file it came
from: CSV, JSONL or YAML all become `Question`s, each with the line it was written on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.text.headings import same_heading


@dataclass(frozen=True)
class Gold:
    """An expected source: a document (its corpus path, or the end of it) and, when the
    question names one, a heading of it (`document#heading`)."""

    document: str
    heading: str | None = None

    @classmethod
    def parse(cls, text: str) -> Gold:
        document, _, heading = text.strip().partition("#")
        return cls(document.strip(), heading.strip() or None)

    def __str__(self) -> str:
        return self.document if self.heading is None else f"{self.document}#{self.heading}"

    def matches(self, source: Mapping[str, Any]) -> bool:
        """Whether a page or a source (`{document, heading, …}`) is this one: the same
        document, or one whose path ends with this one's; and the same heading (case,
        spacing, punctuation and permalink marks aside: runner.text.headings) when a heading
        is given — any of a page's `headings`, for a page that holds several sections."""
        document = str(source.get("document") or "")
        if document != self.document and not document.endswith("/" + self.document):
            return False
        if self.heading is None:
            return True
        held = [source.get("heading"), *(source.get("headings") or ())]
        return any(same_heading(self.heading, heading) for heading in held)


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    sources: tuple[Gold, ...] = ()
    answer: tuple[str, ...] = ()  # texts the answer must contain
    reference: str | None = None
    tags: tuple[str, ...] = ()
    follow_up: str | None = None
    line: int = 0  # where the question was written in its file

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "question": self.question,
            "sources": [str(gold) for gold in self.sources],
            "answer": list(self.answer),
            "reference": self.reference,
            "tags": list(self.tags),
            "follow_up": self.follow_up,
            "line": self.line,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Question:
        return cls(
            id=str(data["id"]),
            question=str(data["question"]),
            sources=tuple(Gold.parse(text) for text in data.get("sources") or ()),
            answer=tuple(data.get("answer") or ()),
            reference=data.get("reference"),
            tags=tuple(data.get("tags") or ()),
            follow_up=data.get("follow_up"),
            line=int(data.get("line") or 0),
        )


@dataclass(frozen=True)
class QuestionSet:
    path: Path
    questions: tuple[Question, ...] = field(default_factory=tuple)
    description: str = ""
