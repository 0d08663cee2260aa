"""What every provider implements: answer one request with the given model settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from runner.config.model import ModelSettings
from runner.llm.streaming import Deltas
from runner.llm.types import LLMRequest

# The context window a model is fitted to when neither the pipeline nor its server states one.
DEFAULT_CONTEXT_WINDOW = 8192


@dataclass(frozen=True)
class ProviderReply:
    """What a provider returned for one call, as it reported it."""

    text: str
    # As the provider reported them; None when it did not (the client then estimates).
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None  # why the model stopped (stop, length …), as it said
    response_model: str | None = None  # the model that answered, as the server named it
    response_id: str | None = None  # the server's id of the completion


class Provider(Protocol):
    name: str
    # Whether replies are worth caching on disk (remote models: yes; local heuristics: no).
    cacheable: bool

    def prepare(self, settings: ModelSettings) -> None:
        """Get ready to answer with these settings (import, build clients). Called before each
        attempt, outside its timeout: one-off start-up work must not count against a call."""
        ...

    async def generate(self, request: LLMRequest, settings: ModelSettings) -> ProviderReply:
        """One attempt. Raise on failure; the client decides about retrying."""
        ...


@runtime_checkable
class StreamingProvider(Provider, Protocol):
    """A provider that can also hand over a reply's text as the model writes it."""

    async def stream(
        self, request: LLMRequest, settings: ModelSettings, on_delta: Deltas
    ) -> ProviderReply:
        """One attempt, streamed: each piece of text to `on_delta` as it arrives, then the
        whole reply (its text the pieces joined) with the usage the server reported."""
        ...
