"""Small builders shared by the LLM-layer tests."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from runner.config.model import (
    LLMConfig,
    LookupOptions,
    Pipeline,
    PromptOptions,
    ScriptRule,
    TemplateRef,
    ToolConfig,
    ToolKind,
)
from runner.llm import build_client
from runner.llm.client import ProviderClient
from runner.llm.prompts import Prompts
from runner.llm.types import LLMClient, LLMReply, LLMRequest

T = TypeVar("T")


@dataclass
class Recorder:
    """A client that keeps each request and the provider's raw reply text."""

    client: LLMClient
    seen: list[tuple[LLMRequest, str]] = field(default_factory=list)

    async def complete(self, request: LLMRequest) -> LLMReply:
        reply = await self.client.complete(request)
        self.seen.append((request, reply.text))
        return reply

    def __getattr__(self, name: str) -> Any:  # the client's window, config, calls…
        return getattr(self.client, name)


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def tool(name: str, instruction: str = "", **kwargs: Any) -> ToolConfig:
    options = PromptOptions(template=TemplateRef(inline="{{ text }}"))
    return ToolConfig(
        name=name, kind=ToolKind.PROMPT, instruction=instruction, options=options, **kwargs
    )


def pipeline(folder: Path, *tools: ToolConfig, llm: LLMConfig | None = None) -> Pipeline:
    return Pipeline(
        path=folder / "pipeline.yaml",
        domain="test",
        tools=tools or (tool("only"),),
        llm=llm or LLMConfig(),
    )


def lookup_tool(table: Path, key: str, **kwargs: Any) -> ToolConfig:
    return ToolConfig(
        name="product_lookup",
        kind=ToolKind.LOOKUP,
        options=LookupOptions(table=table, key=key, **kwargs),
    )


def scripted(*rules: ScriptRule, **config: Any) -> ProviderClient:
    return build_client(LLMConfig(provider="scripted", script=rules, **config), environ={})


def http_client(server: Any, **overrides: Any) -> ProviderClient:
    """An openai_like client of a fake server (tests/llm/fake_servers.py), its backoff tiny."""
    settings: dict[str, Any] = {
        "provider": "openai_like",
        "model": "test-model",
        "api_base": f"{server.url}/v1",
        # generous: only the stall test needs a call to time out, and it sets its own
        "timeout_s": 5.0,
        "max_retries": 2,
        **overrides,
    }
    client = build_client(LLMConfig(**settings), environ={})
    client.backoff_base_s = 0.01
    return client


def offline(pipeline: Pipeline | None = None) -> tuple[ProviderClient, Prompts]:
    client = build_client(LLMConfig(), pipeline=pipeline, environ={})
    return client, Prompts(client, pipeline)
