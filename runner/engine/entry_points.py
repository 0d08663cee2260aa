"""Which entry point of a tool the orchestrator calls (C20c, C20d, C24).

A context consumer is always called with a snapshot of the context buffer
(`execute_with_prior_context`, C20c); a tool continuing its clarification gets the question and
the answer (`execute_with_clarification`, C24), and a consumer the buffer too
(`execute_with_clarification_and_prior_context`, C20d). Which tools are consumers is decided
once per pipeline (the orchestrator's `consumers`, from `protocols.is_context_consumer`); a
plugin declared a consumer without the method is refused when it is loaded (runner.tools).
"""

from __future__ import annotations

from typing import Any

from runner.engine.env import RuntimeEnv
from runner.engine.protocols import Tool
from runner.engine.results import Clarification


def call_entry_point(
    tool: Tool, text: str, clarification: Clarification | None, consumer: bool, env: RuntimeEnv
) -> Any:
    """The entry point that fits: with the buffer for a consumer (C20c), with the question
    and answer when continuing a clarification (C24, C20d). Returns what the tool returns (a
    ToolResult, or an awaitable of one)."""
    if clarification is not None:
        method = (
            "execute_with_clarification_and_prior_context"
            if consumer
            else "execute_with_clarification"
        )
        entry = getattr(tool, method, None)
        if not callable(entry):
            raise TypeError(
                f"tool {tool.name!r} asked a clarifying question but has no "
                f"{method}(...) to continue it with the answer (C24)"
            )
        if consumer:
            return entry(text, clarification, env.buffer, env)
        return entry(text, clarification, env)
    if consumer:
        return tool.execute_with_prior_context(text, env.buffer, env)  # type: ignore[attr-defined]  # a consumer
    return tool.execute(text, env)
