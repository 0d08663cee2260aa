"""The tool environment a test hands a tool directly, outside any round (shared by the tool and
retrieval tests, so both build it the way the orchestrator does)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from runner.config.model import Pipeline
from runner.engine.env import RuntimeEnv
from runner.engine.marker import execution_text
from runner.engine.protocols import PriorContext
from runner.engine.task import Task


def task_env(
    pipeline: Pipeline,
    prompts: Any,
    tools: Mapping[str, Any],
    task: Task,
    *,
    text: str | None = None,
    buffer: PriorContext | None = None,
    emit: Callable[..., Any] = lambda *args, **kwargs: None,
) -> RuntimeEnv:
    """`text` defaults to the task's execution text (C21), as the orchestrator hands it."""
    return RuntimeEnv(
        pipeline=pipeline,
        llm=None,  # type: ignore[arg-type]  # tools reach the LLM through prompts only
        prompts=prompts,
        task=task,
        buffer=buffer or {},
        text=text if text is not None else execution_text(task.task_prompt, task.prompt_context),
        tools=tools,
        emit=emit,
    )
