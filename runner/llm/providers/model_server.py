"""`provider: openai_like` and `provider: ollama`: a model a server serves over HTTP — any
OpenAI-compatible server (vLLM, llama.cpp's server, LM Studio, OpenAI itself) or Ollama —
reached through llama-index's integrations for them (`OpenAILike`, `Ollama`).

llama-index is imported here, lazily, and only when such a provider answers its first request.
Its own retries are switched off (`max_retries=0`): the client's retry loop does the backoff, so
that one policy (and one set of tests) covers every provider. A request with a reply schema
carries it in the field the server constrains decoding by (runner.llm.decoding).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from runner.config.model import LLMConfig, ModelSettings
from runner.llm import decoding
from runner.llm.errors import LLMConfigError
from runner.llm.providers.base import DEFAULT_CONTEXT_WINDOW, ProviderReply
from runner.llm.providers.llama_index_chat import (
    api_key,
    chat_messages,
    reply_of,
    streamed_reply,
)
from runner.llm.streaming import Deltas
from runner.llm.types import LLMRequest

_EXTRAS = {"openai_like": "openai", "ollama": "ollama"}
# What llama-index is told when the pipeline gives no window: runner fits its prompts itself,
# and Ollama allocates what `num_ctx` says (runner's default window).
_UNSTATED_WINDOW = {"openai_like": DEFAULT_CONTEXT_WINDOW, "ollama": DEFAULT_CONTEXT_WINDOW}
# Where servers state the served window in `GET /models` (vLLM: max_model_len). llama.cpp's
# servers do not (llama-server lists only the training window): set `llm.context_window`.
_WINDOW_FIELDS = ("max_model_len", "context_length", "context_window")


class ModelServerProvider:
    """The `openai_like` or `ollama` provider (`name`). One provider object per run; one
    llama-index LLM per (event loop, model settings), because the underlying async HTTP clients
    belong to the loop that created them."""

    cacheable = True

    def __init__(self, name: str, config: LLMConfig) -> None:
        if name not in _EXTRAS:
            raise LLMConfigError(f"{name!r} is not a model server provider (openai_like, ollama)")
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
        llm = self._llm(settings)
        kwargs = self.structured_fields(request, settings)
        response = await llm.achat(chat_messages(request), **kwargs)
        return reply_of(response, response.message.content or "")

    async def stream(
        self, request: LLMRequest, settings: ModelSettings, on_delta: Deltas
    ) -> ProviderReply:
        llm = self._llm(settings)
        kwargs = self.structured_fields(request, settings)
        if self.name == "openai_like":  # the usage comes in a last chunk, when asked for
            kwargs["stream_options"] = {"include_usage": True}
        return await streamed_reply(
            await llm.astream_chat(chat_messages(request), **kwargs), on_delta
        )

    def structured_fields(self, request: LLMRequest, settings: ModelSettings) -> dict[str, Any]:
        """The request-body fields that carry the reply schema in the settings' mode."""
        if request.schema is None:
            return {}
        mode = settings.structured or "json_schema"
        if self.name == "ollama":
            return decoding.ollama_fields(mode, request.schema)
        return decoding.openai_fields(mode, request.purpose.value, request.schema)

    @property
    def structured_field(self) -> str:
        """The name a server's refusal of the structured-output field mentions."""
        return "format" if self.name == "ollama" else "response_format"

    def prepare(self, settings: ModelSettings) -> None:
        self._llm(settings)

    async def aclose(self) -> None:
        """Close the HTTP clients this event loop's LLMs opened (before the loop ends: closed
        later, they would complain about a closed loop)."""
        loop = id(asyncio.get_running_loop())
        for key in [key for key in self._llms if key[0] == loop]:
            llm = self._llms.pop(key)
            for name in ("_aclient", "_async_client"):
                http = getattr(llm, name, None)
                http = getattr(http, "_client", http) if name == "_async_client" else http
                close = getattr(http, "close", None) or getattr(http, "aclose", None)
                if close is not None:
                    with contextlib.suppress(Exception):
                        await close()

    def reported_window(self, settings: ModelSettings) -> int | None:
        """The context window the server states for the model, or None. Blocking: call it in
        a thread. Any failure is None (the window then has its default)."""
        try:
            if self.name == "ollama":
                llm = self._ollama(settings)
                llm.context_window = -1  # llama-index then asks the server (/api/show)
                window = int(llm.get_context_window())
                # Ollama gives a prompt only the `num_ctx` runner allocates (its default window
                # when the pipeline states none): the model's own window is an upper bound, and
                # fitting to it would let Ollama cut the prompt silently.
                allocated = settings.context_window or _UNSTATED_WINDOW[self.name]
                return min(window, allocated) if window > 0 else None
            return _listed_window(self._openai_like(settings), settings.model)
        except Exception:
            return None

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
            context_window=settings.context_window or _UNSTATED_WINDOW[self.name],
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            timeout=self.config.timeout_s,
            max_retries=0,
            # fields the OpenAI API does not name (repeat_penalty) go in the body as they are
            additional_kwargs={"extra_body": dict(self.config.sampling)}
            if self.config.sampling
            else {},
            **options,
        )

    def _ollama(self, settings: ModelSettings) -> Any:
        options: dict[str, Any] = {}
        if self.config.api_base:
            options["base_url"] = self.config.api_base
        return self._llm_class(
            model=settings.model,
            temperature=settings.temperature,
            context_window=settings.context_window or _UNSTATED_WINDOW[self.name],
            request_timeout=self.config.timeout_s,
            additional_kwargs={**self.config.sampling, "num_predict": settings.max_tokens},
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


def _listed_window(llm: Any, model: str | None) -> int | None:
    """The window `GET /models` states for the model (or for the only model listed)."""
    listed = list(llm._get_client().with_options(timeout=5.0).models.list())
    chosen = [entry for entry in listed if entry.id == model] or listed[:1]
    for entry in chosen:
        extra = getattr(entry, "model_extra", None) or {}
        for field in _WINDOW_FIELDS:
            value = extra.get(field)
            if isinstance(value, int) and value > 0:
                return value
    return None
