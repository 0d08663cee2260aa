"""A pipeline tool's arguments checked in the tool's own words, before the SDK reads them.

The SDK would answer a missing or mistyped argument with pydantic's message ("1 validation
error for shopArguments … visit https://errors.pydantic.dev/…") and take an unknown one
silently. A model calling the tool needs to know which argument, what was wrong and what to
send; an unknown argument is refused, so a misspelt `sesion_id` never starts a new
conversation unseen. Both MCP faces (`/mcp` and `runner mcp serve`) check through here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runner.config.suggest import suggestion_suffix

QUESTION = "question"
SESSION_ID = "session_id"
ARGUMENTS = (QUESTION, SESSION_ID)
TAKES = "the tool takes `question` (required: the user's message, a text) and `session_id`"


def argument_problem(arguments: Mapping[str, Any]) -> tuple[str, str] | None:
    """(the argument, what is wrong and what to send) of the first problem, or None."""
    for name in arguments:
        if name not in ARGUMENTS:
            return name, (
                f"unknown argument `{name}`: {TAKES} (optional: the session_id of an earlier "
                f"result), nothing else{suggestion_suffix(name, ARGUMENTS)}"
            )
    if QUESTION not in arguments:
        return QUESTION, (
            "the argument `question` is missing: send the user's message, in their words, as "
            "`question` (a text)"
        )
    question = arguments[QUESTION]
    if not isinstance(question, str):
        return QUESTION, (
            f"the argument `question` must be a text (a JSON string), not {_kind(question)}: "
            "send the user's message as it was written"
        )
    if not question.strip():
        return QUESTION, "the argument `question` is empty: send the user's message"
    session = arguments.get(SESSION_ID)
    if session is not None and not isinstance(session, str):
        return SESSION_ID, (
            f"the argument `session_id` must be a text (a JSON string), not {_kind(session)}: "
            "send the session_id an earlier result of this tool gave, or leave it out to start "
            "a new conversation"
        )
    return None


def closed_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The tool's input schema as advertised: no argument but its own."""
    return {**schema, "additionalProperties": False}


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "null" if value is None else type(value).__name__
