"""`provider: llama_index`: any LLM class of llama-index, named by `class:` and built with
`options:` — Anthropic, Bedrock, Gemini, Azure OpenAI, Groq, vLLM… (the user installs its
package, e.g. `pip install llama-index-llms-anthropic`).

    llm:
      provider: llama_index
      class: llama_index.llms.anthropic.Anthropic
      api_key_env: ANTHROPIC_API_KEY     # passed as the class's `api_key`
      model: claude-3-5-haiku-latest
      options: {timeout: 60}

Only classes under `llama_index.llms.` can be named: a pipeline file must not be a way to import
arbitrary code. The key comes only from the environment variable the pipeline names.

Structured replies go through the class's own function calling where it has it
(`metadata.is_function_calling_model`): the reply schema, closed, is the one tool's parameters
and the model must call it; its arguments are the reply. Without function calling — or with
`structured: prompt` — only the prompt asks for JSON, and runner's parser reads the reply.
llama-index's own retries are left as the class sets them: classes differ in how to turn them
off, and runner's policy still applies on top.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from runner.config.model import LLMConfig, ModelSettings
from runner.embedding.dotted_class import import_dotted_class
from runner.llm import decoding
from runner.llm.errors import LLMConfigError
from runner.llm.providers.base import ProviderReply
from runner.llm.providers.llama_index_chat import (
    api_key,
    chat_messages,
    reply_of,
    streamed_reply,
)
from runner.llm.streaming import Deltas
from runner.llm.types import LLMRequest

CLASS_PREFIX = "llama_index.llms."


def import_class(path: str | None) -> type:
    """The class `llama_index.llms.<package>.<Class>`; an error naming the pip package when
    its module is not installed."""
    return import_dotted_class(
        path,
        key="llm.class",
        prefixes=(CLASS_PREFIX,),
        example="llama_index.llms.anthropic.Anthropic",
        distribution=distribution_of,
        error=LLMConfigError,
    )


def distribution_of(path: str) -> str:
    """The pip package that carries a llama-index LLM class."""
    return "llama-index-llms-" + path[len(CLASS_PREFIX) :].split(".")[0].replace("_", "-")


class LlamaIndexClassProvider:
    """The `llama_index` provider: one LLM object per (event loop, model settings), like the
    model server providers (runner.llm.providers.model_server)."""

    name = "llama_index"
    cacheable = True
    structured_field = None  # a class that refuses function calling fails, it is not stepped down

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self._class = import_class(config.llm_class)
        self._fields = set(getattr(self._class, "model_fields", {}) or {})
        # the named variable's value, or none at all (never a placeholder: the class may have
        # its own way of finding a key, such as a cloud role)
        self._key = api_key(config) if config.api_key_env else None
        self._llms: dict[tuple[int, ModelSettings], Any] = {}

    def options(self, settings: ModelSettings) -> dict[str, Any]:
        """The class's keyword arguments: runner's block settings where the class has such a
        field, then `options:`, then the purpose's own settings, then the key."""
        block = {
            "model": self.config.model,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
        }
        if self.config.context_window:
            block["context_window"] = self.config.context_window
        kwargs = {k: v for k, v in block.items() if v is not None and k in self._fields}
        kwargs.update(self.config.options)
        # what a purpose sets differs from the block's; the options must not undo it
        for field, value in settings.__dict__.items():
            overridden = field in block and value is not None and value != block[field]
            if overridden and field in self._fields:
                kwargs[field] = value
        if self._key is not None:
            kwargs["api_key"] = self._key
        return kwargs

    def prepare(self, settings: ModelSettings) -> None:
        self._llm(settings)

    def _llm(self, settings: ModelSettings) -> Any:
        key = (id(asyncio.get_running_loop()), settings)
        if key not in self._llms:
            try:
                self._llms[key] = self._class(**self.options(settings))
            except (TypeError, ValueError) as error:  # pydantic's ValidationError is one
                raise LLMConfigError(
                    f"llm.class {self.config.llm_class} could not be built from `llm.options`: "
                    f"{error}"
                ) from None
        return self._llms[key]

    def uses_tools(self, llm: Any, request: LLMRequest, settings: ModelSettings) -> bool:
        """Whether this request's reply schema goes through function calling."""
        metadata = getattr(llm, "metadata", None)
        calls_functions = bool(getattr(metadata, "is_function_calling_model", False))
        return request.schema is not None and settings.structured != "prompt" and calls_functions

    async def generate(self, request: LLMRequest, settings: ModelSettings) -> ProviderReply:
        llm = self._llm(settings)
        messages = chat_messages(request)
        if self.uses_tools(llm, request, settings):
            assert request.schema is not None
            tool = schema_tool(request.purpose.value, request.schema)
            response = await llm.achat_with_tools([tool], chat_history=messages, tool_required=True)
            calls = llm.get_tool_calls_from_response(response, error_on_no_tool_call=False)
            text = json.dumps(calls[0].tool_kwargs) if calls else response.message.content or ""
        else:
            response = await llm.achat(messages)
            text = response.message.content or ""
        return reply_of(response, text)

    async def stream(
        self, request: LLMRequest, settings: ModelSettings, on_delta: Deltas
    ) -> ProviderReply:
        """A streamed request has no reply schema (it is the answer): the class's own
        `astream_chat`."""
        llm = self._llm(settings)
        return await streamed_reply(await llm.astream_chat(chat_messages(request)), on_delta)


def schema_tool(name: str, schema: Mapping[str, Any]) -> Any:
    """A llama-index tool whose parameters are the closed reply schema: calling it is the
    reply. It is never run."""
    from llama_index.core.tools.types import BaseTool, ToolMetadata, ToolOutput

    parameters = decoding.closed(schema)

    class ReplyMetadata(ToolMetadata):
        def get_parameters_dict(self) -> dict[str, Any]:
            return dict(parameters)

    metadata = ReplyMetadata(
        description=f"Give the {name} reply: call this with the reply as its arguments.",
        name=f"reply_{name}",
        fn_schema=None,
    )

    class ReplyTool(BaseTool):
        @property
        def metadata(self) -> ToolMetadata:
            return metadata

        def __call__(self, input: Any) -> ToolOutput:  # never run: its arguments are the reply
            raise NotImplementedError

    return ReplyTool()
