"""A scripted-LLM rule as the model: one place for the rules a pipeline's `llm.script`, a test
file's `script:` and the scripted provider's own files give (each already checked against the
schema's `script_rule`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runner.config.frozen import frozen
from runner.config.model import ScriptRule, Where


def script_rule(data: Mapping[str, Any], where: Where | None) -> ScriptRule:
    """One scripted-LLM rule, already checked against the schema's `script_rule`, as the model;
    `where` is its place for messages (None when it has none)."""
    return ScriptRule(
        reply=frozen(data["reply"]),
        purpose=data.get("purpose"),
        tool=data.get("tool"),
        task=data.get("task"),
        prompt=data.get("prompt"),
        times=data.get("times"),
        where=where,
    )
