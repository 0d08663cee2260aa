"""A chat exchange with a llama-index LLM in runner's terms: the request as chat messages, the
response (or the last chunk of a stream) as a `ProviderReply`, the key from the environment.

Shared by the providers that answer through llama-index: `openai_like` and `ollama`
(runner.llm.providers.model_server) and `llama_index` (runner.llm.providers.llama_index_class).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import AsyncIterator, Mapping
from typing import Any

from runner.config.model import LLMConfig
from runner.llm.errors import LLMConfigError
from runner.llm.providers.base import ProviderReply
from runner.llm.streaming import Deltas
from runner.llm.types import LLMRequest

# Without `api_key_env` we send a placeholder: local servers need no key, and we never pick up
# a key the pipeline did not name (it would be sent to whatever `api_base` says).
_NO_KEY = "no-key"


def api_key(config: LLMConfig) -> str:
    if not config.api_key_env:
        return _NO_KEY
    value = os.environ.get(config.api_key_env)
    if not value:
        raise LLMConfigError(
            f"llm.api_key_env names the environment variable {config.api_key_env!r}, "
            "which is not set: export it before running (the key itself never goes in the YAML)"
        )
    return value


def chat_messages(request: LLMRequest) -> list[Any]:
    """The request as llama-index chat messages: its prompt, as the user's message."""
    from llama_index.core.base.llms.types import ChatMessage, MessageRole

    return [ChatMessage(role=MessageRole.USER, content=request.prompt)]


def reply_of(response: Any, text: str) -> ProviderReply:
    """A llama-index chat response (the last chunk, when streamed) as runner's reply."""
    usage = usage_of(response)
    return ProviderReply(
        text=text,
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
        finish_reason=finish_reason_of(response),
        response_model=_raw_field(response, "model"),
        response_id=_raw_field(response, "id"),
    )


def _raw_field(response: Any, name: str) -> str | None:
    """A field of the server's own response (OpenAI's `id` and `model`, Ollama's `model`)."""
    raw = getattr(response, "raw", None)
    value = raw.get(name) if isinstance(raw, Mapping) else getattr(raw, name, None)
    return str(value) if isinstance(value, (str, int)) and str(value) else None


async def streamed_reply(chunks: AsyncIterator[Any], on_delta: Deltas) -> ProviderReply:
    """A llama-index chat stream read to its end, each chunk's new text to `on_delta`."""
    parts: list[str] = []
    last, finish = None, None
    async for chunk in chunks:
        if chunk.delta:
            parts.append(chunk.delta)
            on_delta(chunk.delta)
        last, finish = chunk, finish_reason_of(chunk) or finish
    if last is None:
        return ProviderReply(text="")
    return dataclasses.replace(reply_of(last, "".join(parts)), finish_reason=finish)


def finish_reason_of(response: Any) -> str | None:
    """Why the model stopped: OpenAI's `choices[0].finish_reason`, Ollama's `done_reason`."""
    raw = getattr(response, "raw", None)
    if isinstance(raw, Mapping):
        reason = raw.get("done_reason")
        if reason is None and isinstance(raw.get("choices"), list) and raw["choices"]:
            reason = (raw["choices"][0] or {}).get("finish_reason")
        return str(reason) if reason else None
    choices = getattr(raw, "choices", None) or []
    reason = getattr(choices[0], "finish_reason", None) if choices else None
    return str(reason) if reason else None


def usage_of(response: Any) -> dict[str, int]:
    """Token counts as the provider reported them (OpenAI: `usage`; Ollama: eval counts)."""
    counts = dict(getattr(response, "additional_kwargs", None) or {})
    raw = getattr(response, "raw", None)
    if "prompt_tokens" not in counts and isinstance(raw, dict):
        counts.update(raw.get("usage") or {})
    return {k: int(v) for k, v in counts.items() if k in ("prompt_tokens", "completion_tokens")}
