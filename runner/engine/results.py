"""What tools hand back to the orchestrator, and what the context buffer holds."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from runner.engine.text import LinkedText, RequiredText
from runner.sources import Source


@dataclass(frozen=True)
class PromptAndContext:
    """One result of one tool on one task [PromptAndContext]: the text it was run on and what it
    produced. `guaranteed` context (C23) reaches the final answer untouched."""

    prompt: str
    context: str
    guaranteed: bool = False
    sources: tuple[Source, ...] = ()
    # structured extras (page ids, a retrieval's evidence): JSON data, often dicts, so no part
    # of the hash (a result can be put in a set or a dict key; equal results still compare it)
    data: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "prompt": self.prompt,
            "context": self.context,
            "guaranteed": self.guaranteed,
            "sources": [s.to_json() for s in self.sources],
            "data": dict(self.data),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PromptAndContext:
        return cls(
            prompt=data["prompt"],
            context=data["context"],
            guaranteed=data.get("guaranteed", False),
            sources=tuple(Source.from_json(s) for s in data.get("sources", ())),
            data=dict(data.get("data", {})),
        )


# what a linked result holds as its prompt: a link, joined when read (runner.engine.text)
HELD_PROMPT = RequiredText()


class LinkedPromptAndContext(PromptAndContext):
    """A result whose prompt is held as a link (a deep chain's execution text, C21) and read as
    the string: equal to, and hashed as, the PromptAndContext of that string."""

    prompt = HELD_PROMPT  # a descriptor: it holds the link and reads as the str

    @classmethod
    def of(cls, prompt: LinkedText, context: str, *rest: Any) -> LinkedPromptAndContext:
        # the dataclass's __init__ sets `prompt` through the descriptor, which holds the link
        return cls(prompt, context, *rest)  # type: ignore[arg-type]  # (read as the str)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PromptAndContext):
            return NotImplemented
        return _compared(self) == _compared(other)

    __hash__ = PromptAndContext.__hash__


def _compared(entry: PromptAndContext) -> tuple[Any, ...]:
    return (entry.prompt, entry.context, entry.guaranteed, entry.sources, entry.data)


def result_entry(prompt: str | LinkedText, context: str, *rest: Any) -> PromptAndContext:
    """The buffer entry of a tool's result on a text held as a string or as a link."""
    if type(prompt) is str:
        return PromptAndContext(prompt, context, *rest)
    return LinkedPromptAndContext.of(prompt, context, *rest)  # type: ignore[arg-type]  # a link


class ResultKind(str, Enum):
    CONTEXT = "context"
    GUARANTEED = "guaranteed"
    CLARIFICATION = "clarification"  # C24
    TERMINAL = "terminal"  # C25


@dataclass(frozen=True)
class ToolResult:
    """[ToolExecutionResult] One of: context (possibly empty), guaranteed context, a clarifying
    question, or a terminal answer."""

    kind: ResultKind
    text: str = ""  # the context, the question, or the answer
    sources: tuple[Source, ...] = ()
    data: Mapping[str, Any] = field(default_factory=dict, hash=False)  # as PromptAndContext's
    # what the tool could not do, when its text only says so (a prompt tool without a model):
    # the result stands, and the engine counts the tool as failed, so the round is degraded
    failure: str | None = None

    @classmethod
    def context(cls, text: str, sources: tuple[Source, ...] = (), **data: Any) -> ToolResult:
        return cls(ResultKind.CONTEXT, text, sources, data)

    @classmethod
    def guaranteed_context(
        cls, text: str, sources: tuple[Source, ...] = (), **data: Any
    ) -> ToolResult:
        return cls(ResultKind.GUARANTEED, text, sources, data)

    @classmethod
    def clarification(cls, question: str, **data: Any) -> ToolResult:
        return cls(ResultKind.CLARIFICATION, question, (), data)

    @classmethod
    def terminal(cls, answer: str, sources: tuple[Source, ...] = (), **data: Any) -> ToolResult:
        return cls(ResultKind.TERMINAL, answer, sources, data)

    @property
    def is_empty(self) -> bool:
        return self.kind in (ResultKind.CONTEXT, ResultKind.GUARANTEED) and not self.text.strip()


@dataclass(frozen=True)
class Clarification:
    """A question a tool asked on a task, and the user's answer once it came (C24)."""

    task_no: str
    tool: str
    question: str
    answer: str | None = None
    rounds: int = 1

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Clarification:
        return cls(**data)


class SubtaskDecision(str, Enum):
    """C16: exactly RUN and SKIP."""

    RUN = "run"
    SKIP = "skip"


@dataclass(frozen=True)
class ReasonedDecision:
    """A decision with its reason in the author's terms ("`.n` found something", "`run_if:
    params.x` is false"): what the trace, `runner explain` and the Why page say. A coordinator
    may return one instead of a bare SubtaskDecision."""

    value: SubtaskDecision
    reason: str
