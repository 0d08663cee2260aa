"""The vocabulary every LLM call of runner is written in.

A request carries its purpose (the fixed list of runner.purposes), the rendered prompt, the
subject text (the task's prompt), the tool name where there is one, the JSON Schema its reply
must meet where one is expected, and `facts`: the variables the prompt was rendered from. Real
models read the prompt; the offline provider reads the facts, so its heuristics never parse our
own prompts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from runner.purposes import Purpose  # re-exported: every LLM call names its purpose


@dataclass(frozen=True)
class LLMRequest:
    """What runner asks the model: a purpose, its rendered prompt, and the facts."""

    purpose: Purpose
    prompt: str
    subject: str = ""  # the task's prompt: what scripted rules' `task` regex matches
    tool: str | None = None
    schema: Mapping[str, Any] | None = None  # the reply must be JSON meeting this schema
    facts: Mapping[str, Any] = field(default_factory=dict)
    # how the prompt was cut to fit the model's window (runner.llm.fitting), when it was
    cut: Mapping[str, Any] | None = None
    # the reply is the round's final answer: a face watching the round is sent its text as the
    # model writes it (runner.llm.streaming)
    streams: bool = False

    @property
    def output_type(self) -> str:
        """The GenAI conventions' `gen_ai.output.type`: json when a reply schema is asked for."""
        return "json" if self.schema is not None else "text"


@dataclass(frozen=True)
class LLMReply:
    """The model's reply, with its usage and where it came from."""

    text: str
    data: Any = None  # the parsed and validated JSON, when the request had a schema
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    cached: bool = False
    provider: str = ""
    model: str = ""
    attempts: int = 1


class LLMClient(Protocol):
    """What the engine, the tools and the retrieval layer call. One instance per run."""

    async def complete(self, request: LLMRequest) -> LLMReply:
        """Answer a request; with a schema, `reply.data` holds the validated JSON."""
        ...
