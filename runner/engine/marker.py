"""The coordinator marker and its three helpers (C21–C22)."""

from __future__ import annotations

AGENT_COORDINATOR_MARKER = "\n\n[[AGENT_COORDINATOR_TASK]]\n\n"


def execution_text(task_prompt: str, prompt_context: str | None) -> str:
    """C21: task_prompt alone, or prompt_context + marker + task_prompt."""
    if not prompt_context:
        return task_prompt
    return f"{prompt_context}{AGENT_COORDINATOR_MARKER}{task_prompt}"


def is_coordinator_requested(text: str) -> bool:
    return AGENT_COORDINATOR_MARKER in text


def extract_coordinator_task(text: str) -> str:
    """The coordinator's directive: the part after the last marker (C22)."""
    _head, sep, tail = text.rpartition(AGENT_COORDINATOR_MARKER)
    return tail if sep else text


def extract_coordinator_original(text: str) -> str:
    """The parent's text, ultimately the user's message: the part before the last marker (C22)."""
    head, sep, _ = text.rpartition(AGENT_COORDINATOR_MARKER)
    return head if sep else text
