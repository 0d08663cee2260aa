"""The demo's warranty answer (its third step, `make demo`) quotes no table row without its
columns' names: the specification table is cut across pages, and each page repeats its header
row, so a row is never read without them (issue 29; docs/retrieval.md, "Pages")."""

from __future__ import annotations

import asyncio
from pathlib import Path

from runner.app import Runtime
from runner.demo import STEPS
from runner.sessions import open_store
from tests.examples_kit import copy_example


def demo_answers(tmp_path: Path, steps: slice) -> list[str]:
    """The answers (or questions) of these steps of the demo, in one session."""
    folder = copy_example("support", tmp_path / "support")
    said = []
    with (
        Runtime.open(folder / "support.yaml", llm_override="offline") as runtime,
        open_store(str(tmp_path / "state.sqlite")) as store,
    ):
        conversation = runtime.conversation(store)
        for step in STEPS[steps]:
            result = asyncio.run(conversation.say(step.message))
            said.append(result.answer or result.question or "")
    return said


def test_the_demo_warranty_answer_quotes_no_table_row_without_its_columns_names(
    tmp_path: Path,
) -> None:
    assert [step.message for step in STEPS[1:3]] == [
        "What warranty do I get on my washing machine?",
        "It is a KW-720X",
    ]
    answer = demo_answers(tmp_path, slice(1, 3))[-1]
    assert "3-year" in answer or "3 years" in answer
    assert " | " not in answer  # a bare row: "Standard warranty | 2 years | … | 3 years |"


def answer_of(tmp_path: Path, question: str) -> str:
    folder = copy_example("support", tmp_path / "support")
    with (
        Runtime.open(folder / "support.yaml", llm_override="offline") as runtime,
        open_store(str(tmp_path / "state.sqlite")) as store,
    ):
        result = asyncio.run(runtime.conversation(store).say(question))
    return result.answer or ""


def test_a_question_naming_a_model_quotes_its_columns_and_no_other_models_table(
    tmp_path: Path,
) -> None:
    answer = answer_of(tmp_path, "Is the KW-620 quiet? And what is the warranty?")
    assert "Noise, spin — KW-620: 76 dB." in answer  # the deep search's read of the specs
    assert "Standard warranty — KW-620: 2 years." in answer
    assert "KF-" not in answer  # the fridge-freezers' warranty row: other models
