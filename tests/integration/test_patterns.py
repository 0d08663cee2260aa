"""One rule for every regular expression a pipeline author writes: searched case-insensitively,
with `(?-i:...)` to keep a part's case (runner/text/patterns.py)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

from runner.config.model import LLMConfig, PromptType, PromptTypes, ScriptRule
from runner.engine.activation import classify_by_rule, rule_matches
from runner.llm import build_client
from runner.llm.types import LLMRequest, Purpose
from runner.resources import schema_path
from runner.text.patterns import compile_pattern


def test_an_activation_pattern_matches_any_case() -> None:
    assert rule_matches((), "warranty", "Is my Warranty still valid?")


def test_a_pattern_keeps_the_case_of_a_part_marked_minus_i() -> None:
    assert rule_matches((), r"(?-i:KD)-\d+", "the KD-450")
    assert not rule_matches((), r"(?-i:KD)-\d+", "the kd-450")


def test_a_prompt_type_pattern_matches_any_case() -> None:
    types = PromptTypes(
        default="question",
        types=(PromptType("question"), PromptType("smalltalk", pattern=r"^hello\b")),
    )
    assert classify_by_rule(types, "HELLO there") == "smalltalk"


def test_a_scripted_task_rule_matches_any_case() -> None:
    rules = (ScriptRule(reply="matched", task="warranty"), ScriptRule(reply="fell through"))
    client = build_client(LLMConfig(provider="scripted", script=rules), environ={})
    request = LLMRequest(Purpose.ANSWER, "prompt", subject="WARRANTY question")
    assert asyncio.run(client.complete(request)).text == "matched"


def test_a_scripted_prompt_rule_matches_any_case() -> None:
    rules = (ScriptRule(reply="matched", prompt="kestrel"), ScriptRule(reply="fell through"))
    client = build_client(LLMConfig(provider="scripted", script=rules), environ={})
    request = LLMRequest(Purpose.ANSWER, "About the Kestrel KD-450", subject="q")
    assert asyncio.run(client.complete(request)).text == "matched"


def test_compile_pattern_is_case_insensitive() -> None:
    assert compile_pattern("refund").search("REFUND please") is not None


def _regex_descriptions(node: Any) -> Iterator[str]:
    """The description of every property that refers to the `regex` definition."""
    if isinstance(node, dict):
        if node.get("$ref") == "#/$defs/regex":
            yield node.get("description", "")
        for value in node.values():
            yield from _regex_descriptions(value)
    elif isinstance(node, list):
        for value in node:
            yield from _regex_descriptions(value)


def test_the_pipeline_schema_says_every_pattern_is_case_insensitive() -> None:
    schema = json.loads(schema_path("pipeline").read_text(encoding="utf-8"))
    descriptions = [schema["$defs"]["regex"]["description"], *_regex_descriptions(schema)]
    assert len(descriptions) >= 5  # the definition, activation, prompt type, task, prompt
    assert all("case-insensitive" in text for text in descriptions), descriptions
