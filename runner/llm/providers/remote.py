"""Real models through the llama-index integrations: `openai_like` (any OpenAI-compatible
server: vLLM, llama.cpp server, LM Studio, OpenAI itself) and `ollama`.

llama-index is imported here, lazily, and only when such a provider answers its first request.
Its own retries are switched off (`max_retries=0`): the client's retry loop does the backoff, so
that one policy (and one set of tests) covers every provider.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from runner.config.model import LLMConfig, ModelSettings
from runner.llm.errors import LLMConfigError
from runner.llm.providers.base import ProviderReply
from runner.llm.types import LLMRequest

# Without `api_key_env` we send a placeholder: local servers need no key, and we never pick up
# a key the pipeline did not name (it would be sent to whatever `api_base` says).
_NO_KEY = "no-key"
_CONTEXT_WINDOW = 32768  # only used by llama-index to size prompts; servers enforce the real one
_EXTRAS = {"openai_like": "openai", "ollama": "ollama"}


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


class LlamaIndexProvider:
    """One provider object per run; one llama-index LLM per (event loop, model settings),
    because the underlying async HTTP clients belong to the loop that created them."""

    cacheable = True

    def __init__(self, name: str, config: LLMConfig) -> None:
        if name not in _EXTRAS:
            raise LLMConfigError(f"unknown remote provider {name!r}")
        if not config.model:
            raise LLMConfigError(
                f"provider {name} needs a model: set `llm.model` in the pipeline, or pass "
                f"--llm {name}:MODEL (or RUNNER_LLM={name}:MODEL)"
            )
        self.name = name
        self.config = config
        self._key = api_key(config) if name == "openai_like" else None
        # Imported now, not in the first call: importing takes seconds, which must not count
        # against that call's timeout.
        self._llm_class = _import_llm_class(name)
        self._llms: dict[tuple[int, ModelSettings], Any] = {}

    async def generate(self, request: LLMRequest, settings: ModelSettings) -> ProviderReply:
        from llama_index.core.base.llms.types import ChatMessage, MessageRole

        llm = self._llm(settings)
        kwargs: dict[str, Any] = {}
        if self.name == "ollama" and request.schema is not None:
            kwargs["format"] = "json"  # Ollama's JSON mode: the reply is then one JSON value
        response = await llm.achat(
            [ChatMessage(role=MessageRole.USER, content=request.prompt)], **kwargs
        )
        usage = _usage(response)
        return ProviderReply(
            text=response.message.content or "",
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
        )

    def prepare(self, settings: ModelSettings) -> None:
        self._llm(settings)

    def _llm(self, settings: ModelSettings) -> Any:
        key = (id(asyncio.get_running_loop()), settings)
        if key not in self._llms:
            self._llms[key] = self._build(settings)
        return self._llms[key]

    def _build(self, settings: ModelSettings) -> Any:
        if self.name == "openai_like":
            llm = self._openai_like(settings)
            _ = llm._get_aclient().chat.completions  # the openai package loads these lazily
            return llm
        llm = self._ollama(settings)
        _ = llm.async_client
        return llm

    def _openai_like(self, settings: ModelSettings) -> Any:
        options: dict[str, Any] = {}
        if self.config.api_base:
            options["api_base"] = self.config.api_base
        return self._llm_class(
            model=settings.model,
            api_key=self._key,
            is_chat_model=True,
            context_window=_CONTEXT_WINDOW,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            timeout=self.config.timeout_s,
            max_retries=0,
            **options,
        )

    def _ollama(self, settings: ModelSettings) -> Any:
        options: dict[str, Any] = {}
        if self.config.api_base:
            options["base_url"] = self.config.api_base
        return self._llm_class(
            model=settings.model,
            temperature=settings.temperature,
            context_window=_CONTEXT_WINDOW,
            request_timeout=self.config.timeout_s,
            additional_kwargs={"num_predict": settings.max_tokens},
            **options,
        )


def _import_llm_class(name: str) -> Any:
    try:
        if name == "openai_like":
            from llama_index.llms.openai_like import OpenAILike

            return OpenAILike
        from llama_index.llms.ollama import Ollama

        return Ollama
    except ImportError as error:
        extra = _EXTRAS[name]
        raise LLMConfigError(
            f"provider {name} needs the `{extra}` extra: pip install 'runner[{extra}]' ({error})"
        ) from None


def _usage(response: Any) -> dict[str, int]:
    """Token counts as the provider reported them (OpenAI: `usage`; Ollama: eval counts)."""
    counts = dict(getattr(response, "additional_kwargs", None) or {})
    raw = getattr(response, "raw", None)
    if "prompt_tokens" not in counts and isinstance(raw, dict):
        counts.update(raw.get("usage") or {})
    return {k: int(v) for k, v in counts.items() if k in ("prompt_tokens", "completion_tokens")}
