"""A round's message enters the engine in runner's normal form (runner.text.words.normalize): rules,
lookups, scripted rules and prompts see `warranty` and `KD-450` however the user's keyboard or a
pasted web page spelt them; the message itself is kept as sent."""

from __future__ import annotations

import asyncio
from pathlib import Path

from runner.app import Runtime
from runner.engine.state import SessionState

from .kit import check_round

# full-width letters, a soft hyphen, a non-breaking space and a zero-width space
MESSAGE = "the \uff57\uff41\uff52\u00adranty\u00a0claim for the KD\u200b-450, and its price?"
PLAIN = "the warranty claim for the KD-450, and its price?"

PIPELINE = """\
version: 1
domain: shop
llm:
  provider: scripted
  script:
    - {purpose: tool, tool: warranty, task: "warranty claim for the KD-450,", reply: "Two years."}
    - {purpose: answer, prompt: "Two years[.]", reply: "Two years, for the KD-450."}
prompt_types:
  default: question
  classify: rule
  types:
    question: A question.
    claim: {description: A warranty claim., keywords: [warranty claim]}
tools:
  - name: product_lookup
    kind: lookup
    activation: {keywords: [price]}
    table: products.csv
    key: model
  - name: warranty
    kind: prompt
    activation: {pattern: "warranty claim"}
    prompt_types: [claim]
    output: guaranteed
    prompt: "Warranty: {{ task }}"
"""


def _runtime(tmp_path: Path) -> Runtime:
    (tmp_path / "shop.yaml").write_text(PIPELINE, encoding="utf-8")
    (tmp_path / "products.csv").write_text("model,price_eur\nKD-450,499\n", encoding="utf-8")
    return Runtime.open(tmp_path / "shop.yaml")


def _round(tmp_path: Path, message: str):
    with _runtime(tmp_path) as runtime:
        state = SessionState.new("s", runtime.pipeline)
        result = asyncio.run(runtime.orchestrator().run_round(state, message))
        check_round(result, state)
        return result, state, runtime.client.calls


def test_the_root_task_holds_the_message_in_the_normal_form(tmp_path: Path) -> None:
    _, state, _ = _round(tmp_path, MESSAGE)
    assert state.root is not None and state.root.task_prompt == PLAIN
    assert "warranty" in state.root.important_words


def test_a_prompt_type_keyword_rule_matches_the_normal_form(tmp_path: Path) -> None:
    _, state, _ = _round(tmp_path, MESSAGE)
    assert state.root is not None and state.root.prompt_type == "claim"


def test_an_activation_pattern_and_keyword_match_the_normal_form(tmp_path: Path) -> None:
    result, _, _ = _round(tmp_path, MESSAGE)
    ran = {tool["name"]: tool["status"] for tool in result.tasks["tools"]}
    assert ran == {"product_lookup": "done", "warranty": "done"}


def test_a_lookup_finds_a_key_spelt_with_invisible_characters(tmp_path: Path) -> None:
    result, _, _ = _round(tmp_path, MESSAGE)
    assert [(s.document, s.heading) for s in result.sources] == [("products.csv", "KD-450")]


def test_a_scripted_rule_on_the_task_matches_the_normal_form(tmp_path: Path) -> None:
    result, _, _ = _round(tmp_path, MESSAGE)
    assert result.warnings == []  # no ScriptMissError: the rule's `task:` pattern matched
    assert result.tasks["prompt"] == PLAIN
    assert result.answer == "Two years, for the KD-450."  # the answer had the tool's reply


def test_the_message_is_kept_as_sent_in_the_history_and_the_trace(tmp_path: Path) -> None:
    result, state, _ = _round(tmp_path, MESSAGE)
    assert state.history[-1]["message"] == MESSAGE
    assert result.trace.of("round.start")[0]["message"] == MESSAGE


ASKING = """\
version: 1
domain: shop
llm:
  provider: scripted
  script:
    - {purpose: answer, reply: "done"}
tools:
  - name: product_lookup
    kind: lookup
    activation: always
    table: products.csv
    key: model
    clarify: {question: "Which model?"}
"""


def test_the_answer_to_a_clarifying_question_enters_in_the_normal_form(tmp_path: Path) -> None:
    (tmp_path / "shop.yaml").write_text(ASKING, encoding="utf-8")
    (tmp_path / "products.csv").write_text("model,price_eur\nKD-450,499\n", encoding="utf-8")
    with Runtime.open(tmp_path / "shop.yaml") as runtime:
        state = SessionState.new("s", runtime.pipeline)
        asked = asyncio.run(runtime.orchestrator().run_round(state, "what does it cost?"))
        assert asked.outcome == "clarification"
        model = "the \uff2b\uff24\u00ad-450"  # full-width KD, a soft hyphen
        answered = asyncio.run(runtime.orchestrator().run_round(state, model))
        check_round(answered, state)
    assert [(s.document, s.heading) for s in answered.sources] == [("products.csv", "KD-450")]
