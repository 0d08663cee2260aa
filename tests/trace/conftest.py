"""Real rounds' traces for the trace's types and words: the `lab` pipeline of tests/explain
(every LLM call scripted: a decomposition, forced subtasks, a gatekeeper and the deep fallback)
and the support example on the offline LLM (a comparison with conditional subtasks, a
clarifying question and its answer), each run once per module in a temporary folder."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.examples_kit import copy_example

LAB = Path(__file__).resolve().parents[1] / "explain" / "fixtures" / "lab"
SUPPORT_MESSAGES = (
    ("Compare the KD-450 and the KD-600X dishwashers",),
    ("What warranty do I get on my dryer?", "It is a KT-700"),
    ("Is the KW-620 quiet? And what is the warranty?",),
)


def _rounds(pipeline: Path, messages: Sequence[str], **options: Any) -> list[list[dict[str, Any]]]:
    """The trace events of each round of one new session."""
    from runner.app import Runtime
    from runner.sessions import SessionStore

    with (
        Runtime.open(pipeline, **options) as runtime,
        SessionStore(pipeline.parent / "sessions.sqlite") as store,
    ):
        conversation = runtime.conversation(store)
        results = [asyncio.run(conversation.say(message)) for message in messages]
    return [result.trace.events for result in results if result.trace is not None]


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> list[list[dict[str, Any]]]:
    """The events of several real rounds, as the engine wrote them."""
    lab = tmp_path_factory.mktemp("lab") / "lab"
    shutil.copytree(LAB, lab)
    found = _rounds(lab / "lab.yaml", ["Tell me deeply about the valve and pump"])
    support = copy_example("support", tmp_path_factory.mktemp("examples") / "support")
    for messages in SUPPORT_MESSAGES:
        found += _rounds(support / "support.yaml", messages, llm_override="offline")
    return found
