"""One function turns context-buffer entries into passages (runner.llm.prompts), and every
place that shows the buffer to a prompt uses it: the prompt tool (C20c), deep search (C28)
and the final answer (C33)."""

from __future__ import annotations

import ast
from pathlib import Path

from runner.engine.results import PromptAndContext
from runner.engine.task import ContextBuffer
from runner.llm.prompts import Passage, passages_from_buffer
from runner.sources import Source

RUNNER = Path(__file__).resolve().parents[2] / "runner"
MANUAL = Source("manual.md", 3)


def buffer() -> ContextBuffer:
    entries = ContextBuffer()
    entries.add("1.1", "lookup", PromptAndContext("p", "KD-450: 45 cm", sources=(MANUAL,)))
    entries.add("1.1", "rag", PromptAndContext("p", "   "))
    entries.add("1.2", "search", PromptAndContext("p", "Fee: 25 EUR", guaranteed=True))
    return entries


def test_passages_keep_buffer_order_key_sources_and_guaranteed() -> None:
    assert passages_from_buffer(buffer()) == [
        Passage("KD-450: 45 cm", (MANUAL,), "1.1:lookup", False),
        Passage("Fee: 25 EUR", (), "1.2:search", True),
    ]


def test_empty_contexts_are_left_out() -> None:
    assert all(p.key != "1.1:rag" for p in passages_from_buffer(buffer()))


def test_a_snapshot_mapping_gives_the_same_passages_as_the_buffer() -> None:
    assert passages_from_buffer(buffer().snapshot()) == passages_from_buffer(buffer())


def test_no_buffer_gives_no_passages() -> None:
    assert passages_from_buffer(None) == []


def test_only_the_llm_layer_builds_passages_from_buffer_results() -> None:
    """A `Passage(result.context, …)` anywhere else is the conversion written again."""
    offenders = []
    for path in RUNNER.rglob("*.py"):
        if path == RUNNER / "llm" / "passages.py":  # where the conversion lives
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Passage"
                and node.args
                and isinstance(node.args[0], ast.Attribute)
                and node.args[0].attr == "context"
            ):
                offenders.append(f"{path.relative_to(RUNNER.parent)}:{node.lineno}")
    assert offenders == []
