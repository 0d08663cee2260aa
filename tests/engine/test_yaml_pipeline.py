"""The engine with the real pieces around it: a YAML pipeline file, the built-in `prompt` and
`lookup` kinds, the declarative `decompose` coordinator and the scripted LLM provider."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

from runner.app import Runtime
from runner.engine.state import SessionState
from runner.engine.task import TaskStatus
from runner.llm.types import Purpose

from .kit import check_round

PIPELINE = """\
version: 1
domain: shop
llm:
  provider: scripted
  script:
    - {purpose: decompose, tool: compare, reply: {products: [KD-450, KX-9]}}
    - {purpose: extract, tool: warranty, task: "(?s)KD-450", reply: {model: KD-450}}
    - {purpose: extract, tool: warranty, reply: {}}
    - {purpose: tool, tool: handbook, reply: "The KX-9 is a prototype."}
    - {purpose: tool, tool: compare, reply: "The KD-450 is cheaper."}
    - {purpose: tool, tool: warranty, reply: "Two years."}
    - {purpose: answer, reply: "Two years for the KD-450."}
prompt_types:
  default: question
  types:
    question: A question.
    comparison: {description: A comparison., keywords: [compare]}
tools:
  - name: compare
    kind: prompt
    activation: always
    prompt_types: [comparison]
    consumes_context: true
    output: answer
    prompt: "Compare: {% for p in context %}{{ p.text }} {% endfor %}"
    decompose:
      extract:
        schema: {type: object, properties: {products: {type: array, items: {type: string}}}}
      relevant_if: "params.products | length >= 2"
      subtasks:
        - name: specs
          for_each: params.products
          as: model
          prompt: "Specifications of the {{ model }}?"
          required_tools: [product_lookup]
        - name: manual
          for_each: params.products
          as: model
          prompt: "What does the handbook say about the {{ model }}?"
          required_tools: [handbook]
          conditional: {skip_if_found: specs}
      activate_after_subtasks: true
  - name: product_lookup
    kind: lookup
    activation: coordinator_only
    table: products.csv
    key: model
  - name: handbook
    kind: prompt
    activation: coordinator_only
    output: guaranteed
    prompt: "Handbook: {{ task }}"
  - name: warranty
    kind: prompt
    activation: {keywords: [warranty]}
    prompt_types: [question]
    output: guaranteed
    prompt: "Warranty of {{ params.model }}"
    parameters:
      schema: {type: object, properties: {model: {type: string}}, required: [model]}
    clarify:
      question: "Which model is it?"
"""


def _runtime(tmp_path: Path) -> Runtime:
    (tmp_path / "shop.yaml").write_text(PIPELINE, encoding="utf-8")
    (tmp_path / "products.csv").write_text(
        textwrap.dedent("""\
            model,name,price_eur
            KD-450,Dryer 450,499
            """),
        encoding="utf-8",
    )
    return Runtime.open(tmp_path / "shop.yaml")


def _round(runtime: Runtime, state: SessionState, message: str):
    result = asyncio.run(runtime.orchestrator().run_round(state, message))
    check_round(result, state)
    return result


def test_a_yaml_coordinator_decomposes_decides_and_answers_from_its_subtasks(tmp_path):
    with _runtime(tmp_path) as runtime:
        state = SessionState.new("s", runtime.pipeline)
        result = _round(runtime, state, "compare the KD-450 and the KX-9")
    assert (result.outcome, result.answer) == ("answer", "The KD-450 is cheaper.")
    root = state.root
    assert [(t.task_no, t.status) for t in root.sub_tasks] == [
        ("1.1", TaskStatus.DONE),
        ("1.2", TaskStatus.DONE),
        ("1.3", TaskStatus.SKIPPED),  # the table knew the KD-450 (skip_if_found: specs)
        ("1.4", TaskStatus.DONE),  # it did not know the KX-9
    ]
    decisions = [
        (e["task"], e["decision"], e["decided_by"]) for e in result.trace.of("subtask.decision")
    ]
    assert decisions == [("1.3", "skip", "compare"), ("1.4", "run", "compare")]
    assert result.tasks["tools"][0]["reason"] == "after_subtasks"
    assert state.buffer.snapshot()["1.4:handbook"][0].guaranteed is True
    assert [c.purpose for c in runtime.client.calls].count(Purpose.SUITABILITY.value) == 0


def test_a_yaml_tool_asks_for_a_missing_parameter_and_continues_with_the_answer(tmp_path):
    with _runtime(tmp_path) as runtime:
        state = SessionState.new("s", runtime.pipeline)
        first = _round(runtime, state, "how long is the warranty?")
        assert (first.outcome, first.question) == ("clarification", "Which model is it?")
        stored = SessionState.from_json(state.to_json())
        second = _round(runtime, stored, "the KD-450")
    assert (second.outcome, second.answer) == ("answer", "Two years for the KD-450.")
    assert stored.buffer.snapshot()["1:warranty"][0].context == "Two years."
