"""Helpers for testing tool kinds directly: a pipeline built from model objects, the engine's
own ToolEnv, and a recording stand-in for the LLM layer's `Prompts`."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from envkit import task_env

from runner.config.model import Pipeline, ToolConfig
from runner.engine.env import RuntimeEnv
from runner.engine.protocols import PriorContext
from runner.engine.task import Task
from runner.llm.prompts import Answer, Passage, passages_json
from runner.llm.types import Purpose
from runner.tools import ToolServices, build_tools


@dataclass
class RecordingPrompts:
    """Answers `extract` and `tool` from per-tool replies and records every call."""

    extract_replies: dict[str, Any] = field(default_factory=dict)  # tool -> dict or callable
    tool_replies: dict[str, Any] = field(default_factory=dict)  # tool -> str or callable
    calls: list[dict[str, Any]] = field(default_factory=list)

    async def extract(
        self,
        purpose: Purpose,
        text: str,
        schema: Mapping[str, Any],
        *,
        tool: str,
        instruction: str = "",
        template: Any = None,
        on_dropped: Callable[[str], None] | None = None,
    ) -> dict[str, Any]:
        self.calls.append({"purpose": purpose, "text": text, "schema": schema, "tool": tool})
        reply = self.extract_replies.get(tool, {})
        return dict(reply(text) if callable(reply) else reply)

    async def tool(
        self,
        render: Callable[[Mapping[str, Any]], str],
        facts: Mapping[str, Any],
        context: Sequence[Passage] = (),
        *,
        tool: str,
        subject: str,
        final: bool = False,
    ) -> Answer:
        """As `Prompts.tool` with a window that takes every passage: the prompt is the tool's
        template rendered with all of `context`."""
        sent = {**facts, "context": passages_json(context)}
        prompt = render(sent)
        self.calls.append(
            {
                "purpose": Purpose.TOOL,
                "prompt": prompt,
                "tool": tool,
                "subject": subject,
                "facts": sent,
                "final": final,
            }
        )
        reply = self.tool_replies.get(tool, prompt)
        return Answer(reply(prompt) if callable(reply) else reply, tuple(context))

    def of(self, purpose: Purpose) -> list[dict[str, Any]]:
        return [call for call in self.calls if call["purpose"] is purpose]


def make_pipeline(folder: Path, *tools: ToolConfig, **settings: Any) -> Pipeline:
    return Pipeline(path=folder / "pipeline.yaml", domain="demo", tools=tools, **settings)


@dataclass
class Harness:
    pipeline: Pipeline
    tools: dict[str, Any]
    prompts: RecordingPrompts

    def env(
        self,
        task: Task,
        *,
        text: str | None = None,
        buffer: PriorContext | None = None,
    ) -> RuntimeEnv:
        return task_env(self.pipeline, self.prompts, self.tools, task, text=text, buffer=buffer)


@pytest.fixture
def harness(tmp_path: Path) -> Callable[..., Harness]:
    def make(*configs: ToolConfig, allow_python: bool = False, **settings: Any) -> Harness:
        pipeline = make_pipeline(tmp_path, *configs, **settings)
        tools = build_tools(pipeline, ToolServices(pipeline, allow_python=allow_python))
        return Harness(pipeline, tools, RecordingPrompts())

    return make


def task(prompt: str, task_no: str = "1", **fields: Any) -> Task:
    return Task(task_no=task_no, task_prompt=prompt, **fields)


def run(value: Any) -> Any:
    """A tool call's result, awaited when it is awaitable (plugins may be sync or async, as the
    engine allows); tests stay plain functions."""
    if not inspect.isawaitable(value):
        return value

    async def wait() -> Any:
        return await value

    return asyncio.run(wait())
