"""Issue 29, point 5: a coordinator's plan is its own. Issue 22's rule — an extracted value the
conversation does not give is dropped — holds for a tool's parameters (tests/engine/
test_invented_values.py), but a decomposition's values are the coordinator's to write, unless
the author marks a field `user_given: true`. So a subtask the coordinator words itself reaches
its tool whole, behind the marker (C21), and the tool reads it back as the directive (C22)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from runner.app import Runtime
from runner.engine.marker import extract_coordinator_original, extract_coordinator_task
from runner.engine.state import SessionState

PIPELINE = """\
version: 1
domain: fruit
llm:
  provider: scripted
  script:
    - {{purpose: decompose, tool: planner, reply: {reply}}}
    - purpose: tool
      tool: writer
      prompt: "^Write INNER kiwis for: Write me a short poem about fruit$"
      reply: directive and original
    - {{purpose: tool, tool: writer, reply: written}}
    - {{purpose: answer, reply: done}}
tools:
  - name: planner
    kind: prompt
    description: Plans the writing.
    activation: coordinator_only
    prompt: "Plan {{{{ task }}}}"
    decompose:
      extract:
        schema:
          type: object
          properties:
{properties}
      subtasks:
{subtasks}
  - name: writer
    kind: prompt
    description: Writes about one topic.
    activation: coordinator_only
    prompt: "Write {{{{ task }}}} for: {{{{ original }}}}"
"""
TOPIC = "            topic: {type: string}"
ONE_SUBTASK = """\
        - prompt: "INNER {{ params.topic }}"
          required_tools: [writer]"""
EACH_QUESTION = """\
        - for_each: params.{field}
          as: part
          prompt: "{{{{ part{attribute} }}}}"
          required_tools: [writer]"""


def rounds(tmp_path: Path, reply: str, properties: str, subtasks: str, message: str):
    """The round's result and the context buffer it left."""
    path = tmp_path / "fruit.yaml"
    text = PIPELINE.format(reply=reply, properties=properties, subtasks=subtasks)
    path.write_text(text, encoding="utf-8")
    with Runtime.open(path) as runtime:
        state = SessionState.new("s", runtime.pipeline)
        result = asyncio.run(runtime.orchestrator().run_round(state, message))
        return result, state.buffer.snapshot()


def subtask_prompts(result) -> list[str]:
    return [child["prompt"] for child in result.tasks["children"]]


def test_c21_c22_a_topic_the_coordinator_chose_makes_the_subtask_it_wrote(tmp_path) -> None:
    result, _ = rounds(
        tmp_path, "{topic: kiwis}", TOPIC, ONE_SUBTASK, "Write me a short poem about fruit"
    )
    assert subtask_prompts(result) == ["INNER kiwis"]
    assert not [e for e in result.trace.of("warning") if "dropped" in e["message"]]


def test_c21_c22_the_subtasks_tool_reads_the_coordinators_directive_behind_the_marker(
    tmp_path,
) -> None:
    # the writer's prompt is "Write {{ task }} for: {{ original }}": its task is the directive
    # after the marker, its original the parent's text before it
    _, buffer = rounds(
        tmp_path, "{topic: kiwis}", TOPIC, ONE_SUBTASK, "Write me a short poem about fruit"
    )
    (entry,) = buffer["1.1:writer"]
    assert entry.context == "directive and original"
    assert extract_coordinator_task(entry.prompt) == "INNER kiwis"
    assert extract_coordinator_original(entry.prompt) == "Write me a short poem about fruit"


def test_a_field_marked_user_given_is_still_dropped_when_the_user_never_gave_it(
    tmp_path,
) -> None:
    marked = "            topic: {type: string, user_given: true}"
    result, _ = rounds(tmp_path, "{topic: kiwis}", marked, ONE_SUBTASK, "A poem about fruit")
    assert subtask_prompts(result) == []  # nothing relevant left: no subtask
    (warning,) = [e["message"] for e in result.trace.of("warning") if "dropped" in e["message"]]
    assert "planner: the extracted topic 'kiwis' is dropped" in warning


def test_sub_questions_in_a_list_of_strings_are_kept_like_those_in_a_list_of_objects(
    tmp_path,
) -> None:
    message = "Compare how lists and tuples behave"
    strings = "            questions: {type: array, items: {type: string}}"
    objects = (
        "            parts:\n"
        "              type: array\n"
        "              items: {type: object, properties: {question: {type: string}}}"
    )
    as_strings, _ = rounds(
        tmp_path,
        "{questions: ['Which is faster to build?', 'Which uses less memory?']}",
        strings,
        EACH_QUESTION.format(field="questions", attribute=""),
        message,
    )
    as_objects, _ = rounds(
        tmp_path,
        "{parts: [{question: 'Which is faster to build?'}, {question: 'Which uses less memory?'}]}",
        objects,
        EACH_QUESTION.format(field="parts", attribute=".question"),
        message,
    )
    assert subtask_prompts(as_strings) == ["Which is faster to build?", "Which uses less memory?"]
    assert subtask_prompts(as_objects) == ["Which is faster to build?", "Which uses less memory?"]


def test_user_given_inside_the_objects_of_a_list_checks_those_fields_only(tmp_path) -> None:
    objects = (
        "            parts:\n"
        "              type: array\n"
        "              items:\n"
        "                type: object\n"
        "                properties:\n"
        "                  model: {type: string, user_given: true}\n"
        "                  question: {type: string}"
    )
    result, _ = rounds(
        tmp_path,
        "{parts: [{model: KD-450, question: 'Specs of the KD-450?'},"
        " {model: KX-999, question: 'Specs of the other one?'}]}",
        objects,
        "        - for_each: params.parts\n"
        "          as: part\n"
        "          prompt: \"{{ part.question }} ({{ part.model | default('no model') }})\"\n"
        "          required_tools: [writer]",
        "Compare the KD-450 with the other one",
    )
    assert subtask_prompts(result) == [
        "Specs of the KD-450? (KD-450)",
        "Specs of the other one? (no model)",
    ]


SUPPORT = Path(__file__).resolve().parents[2] / "pipelines" / "support"


def test_the_support_comparison_drops_a_model_the_customer_never_named(tmp_path) -> None:
    # compare_products marks `products` user_given: the customer's models, not the plan's words
    shutil.copytree(SUPPORT, tmp_path / "support", ignore=shutil.ignore_patterns(".runner"))
    script = tmp_path / "script.yaml"
    script.write_text(
        "rules:\n"
        "  - purpose: decompose\n"
        "    tool: compare_products\n"
        "    reply: {products: [KD-450, KD-600X, KW-620]}\n"
        "fallback: offline\n",
        encoding="utf-8",
    )
    with Runtime.open(tmp_path / "support" / "support.yaml", llm_script=script) as runtime:
        state = SessionState.new("s", runtime.pipeline)
        message = "Compare the KD-450 and the KD-600X dishwashers"
        result = asyncio.run(runtime.orchestrator().run_round(state, message))
    specs = [c["prompt"] for c in result.tasks["children"] if c["prompt"].startswith("What are")]
    assert specs == [
        "What are the specifications of the KD-450?",
        "What are the specifications of the KD-600X?",
    ]
    (warning,) = [e["message"] for e in result.trace.of("warning") if "dropped" in e["message"]]
    assert "compare_products: the extracted products 'KW-620' is dropped" in warning
