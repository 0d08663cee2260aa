"""The scripted provider matches in runner's normal form and shows invisible characters."""

from __future__ import annotations

import pytest

from runner.config.model import ScriptRule
from runner.llm import ScriptMissError
from runner.llm.types import LLMRequest, Purpose

from .helpers import run, scripted


def test_a_pattern_with_spaces_matches_a_prompt_with_non_breaking_spaces() -> None:
    client = scripted(ScriptRule(reply="matched", prompt=r"ten seconds"))
    reply = run(client.complete(LLMRequest(Purpose.ANSWER, "hold for ten\u00a0seconds")))
    assert reply.text == "matched"


def test_a_soft_hyphen_in_the_task_does_not_break_a_match() -> None:
    client = scripted(ScriptRule(reply="matched", task=r"^reset"))
    asked = LLMRequest(Purpose.ANSWER, "p", subject="re\u00adset the widget")
    assert run(client.complete(asked)).text == "matched"


def test_a_miss_shows_remaining_invisible_characters_as_code_points() -> None:
    client = scripted(ScriptRule(reply="never", prompt=r"nothing like it"))
    with pytest.raises(ScriptMissError) as caught:
        run(client.complete(LLMRequest(Purpose.ANSWER, "odd\u2066join")))
    assert "odd<U+2066>join" in str(caught.value)
