"""Two small llama-index LLM classes for the `llama_index` provider's tests, installed by the
tests as the module `llama_index.llms.runner_fake` (the provider imports only classes under
`llama_index.llms.`): one with function calling, one that only writes text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
    MessageRole,
)
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.tools import ToolSelection
from pydantic import Field

SEEN: list[dict[str, Any]] = []  # what each call was given: tools' parameters, options, prompt


class ToolCaller(MockFunctionCallingLLM):
    """Calls the one tool it is given with `arguments`."""

    model: str = "tool-caller"
    api_key: str | None = None
    temperature: float = 0.5
    max_tokens: int = 256
    arguments: dict[str, Any] = Field(default_factory=dict)

    def _prepare_chat_with_tools(
        self,
        tools: Sequence[Any],
        user_msg: Any = None,
        chat_history: list[ChatMessage] | None = None,
        verbose: bool = False,
        allow_parallel_tool_calls: bool = False,
        tool_required: bool = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        return {
            "messages": chat_history or [],
            "tool": tools[0].metadata.name,
            "parameters": tools[0].metadata.get_parameters_dict(),
            "tool_required": tool_required,
        }

    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        SEEN.append({"prompt": messages[-1].content, "options": self._options(), **kwargs})
        if "tool" in kwargs:
            return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=""))
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content="prose"))

    def get_tool_calls_from_response(self, response: Any, **kwargs: Any) -> list[ToolSelection]:
        tool = SEEN[-1].get("tool")
        return (
            [ToolSelection(tool_id="1", tool_name=tool, tool_kwargs=self.arguments)] if tool else []
        )

    def _options(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "api_key": self.api_key,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }


class TextOnly(CustomLLM):
    """No function calling: replies with `text`, whatever it is asked."""

    model: str = "text-only"
    text: str = "True"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name=self.model, is_chat_model=False)

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        SEEN.append({"prompt": prompt, "options": {"model": self.model}})
        return CompletionResponse(text=self.text)

    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        yield self.complete(prompt)
