"""Which entry point of a tool the orchestrator calls (C20c, C20d, C24).

A context consumer is always called with a snapshot of the context buffer
(`execute_with_prior_context`, C20c); a tool continuing its clarification gets the question and
the answer (`execute_with_clarification`, C24: the `ClarifiableTool` protocol), and a consumer
the buffer too (`execute_with_clarification_and_prior_context`, C20d:
`ClarifiableContextConsumer`). Which tools are consumers is decided
once per pipeline (the orchestrator's `consumers`, from `protocols.is_context_consumer`); a
plugin declared a consumer without the method is refused when it is loaded (runner.tools).
"""

from __future__ import annotations

from typing import Any

from runner.engine.env import RuntimeEnv
from runner.engine.protocols import ClarifiableContextConsumer, ClarifiableTool, Tool
from runner.engine.results import Clarification


def call_entry_point(
    tool: Tool, text: str, clarification: Clarification | None, consumer: bool, env: RuntimeEnv
) -> Any:
    """The entry point that fits: with the buffer for a consumer (C20c), with the question
    and answer when continuing a clarification (C24, C20d). Returns what the tool returns (a
    ToolResult, or an awaitable of one)."""
    if clarification is not None:
        return continue_clarification(tool, text, clarification, consumer, env)
    if consumer:
        return tool.execute_with_prior_context(text, env.buffer, env)  # type: ignore[attr-defined]  # a consumer
    return tool.execute(text, env)


def continue_clarification(
    tool: Tool, text: str, clarification: Clarification, consumer: bool, env: RuntimeEnv
) -> Any:
    """C24, C20d: the tool that asked, given the answer — through the protocol it implements
    (`ClarifiableContextConsumer` for a consumer, else `ClarifiableTool`)."""
    if consumer and isinstance(tool, ClarifiableContextConsumer):
        return tool.execute_with_clarification_and_prior_context(
            text, clarification, env.buffer, env
        )
    if not consumer and isinstance(tool, ClarifiableTool):
        return tool.execute_with_clarification(text, clarification, env)
    method = (
        "execute_with_clarification_and_prior_context" if consumer else "execute_with_clarification"
    )
    raise TypeError(
        f"tool {tool.name!r} asked a clarifying question but has no "
        f"{method}(...) to continue it with the answer (C24)"
    )
