"""The declarative coordinator (`decompose`): C1–C3, C13, C16–C17, C20b, C20e."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.config.model import (
    Condition,
    ConditionKind,
    Decompose,
    Extraction,
    Limits,
    LookupOptions,
    PromptOptions,
    SubtaskTemplate,
    TemplateRef,
    ToolConfig,
    ToolKind,
)
from runner.engine.protocols import (
    ContextRequiredError,
    is_context_consumer,
    is_coordinator,
)
from runner.engine.results import PromptAndContext, ReasonedDecision, SubtaskDecision
from runner.llm.types import Purpose
from runner.tools.base import ToolRunError

from .conftest import run, task

PRODUCTS_SCHEMA = {
    "type": "object",
    "properties": {"products": {"type": "array", "items": {"type": "string"}}},
}


def inline(text: str) -> TemplateRef:
    return TemplateRef(inline=text)


def coordinator(*subtasks: SubtaskTemplate, **plan_fields) -> ToolConfig:
    plan_fields.setdefault("extract", Extraction(schema=PRODUCTS_SCHEMA))
    consumes = plan_fields.pop("consumes_context", False)
    return ToolConfig(
        name="compare",
        kind=ToolKind.PROMPT,
        options=PromptOptions(template=inline("Compare: {{ text }}")),
        decompose=Decompose(subtasks=subtasks, **plan_fields),
        consumes_context=consumes,
    )


def per_product(**fields) -> SubtaskTemplate:
    fields.setdefault("prompt", inline("Specifications of {{ item }}"))
    return SubtaskTemplate(for_each="params.products", **fields)


def decompose(h, the_task):
    return run(h.tools["compare"].decompose(the_task, h.env(the_task, text=the_task.task_prompt)))


def test_a_tool_with_decompose_becomes_a_coordinator(harness):
    h = harness(coordinator(per_product()))
    assert is_coordinator(h.tools["compare"])


def test_c1_not_relevant_returns_the_task_unchanged(harness):
    h = harness(coordinator(per_product()))
    h.prompts.extract_replies["compare"] = {"products": []}
    the_task = task("hello there")
    before = the_task.to_json()
    assert decompose(h, the_task) is the_task
    assert the_task.to_json() == before


def test_c2_relevant_changes_the_same_task_in_place(harness):
    h = harness(
        coordinator(
            per_product(), append_prompt=inline("Compare {{ params.products | join(' and ') }}.")
        )
    )
    h.prompts.extract_replies["compare"] = {"products": ["KD-450", "KW-620"]}
    the_task = task("Which is better?")

    result = decompose(h, the_task)

    assert result is the_task
    assert the_task.task_prompt == "Which is better?\nCompare KD-450 and KW-620."
    assert [(s.task_no, s.task_prompt) for s in the_task.sub_tasks] == [
        ("1.1", "Specifications of KD-450"),
        ("1.2", "Specifications of KW-620"),
    ]


def test_c20b_extraction_sees_task_prompt_only(harness):
    h = harness(coordinator(per_product()))
    sub = task("Specifications of KW-620", "1.1", prompt_context="SECRET parent text")
    decompose(h, sub)
    (call,) = h.prompts.of(Purpose.DECOMPOSE)
    assert call["text"] == "Specifications of KW-620"


def test_c13_required_tools_and_saved_loop_variables_are_set_on_each_subtask(harness):
    spec = per_product(
        required_tools=("products",),
        name="spec",
        loop_var="model",
        prompt=inline("Specifications of {{ model }}"),
    )
    h = harness(coordinator(spec))
    h.prompts.extract_replies["compare"] = {"products": ["KD-450"]}
    the_task = task("compare", prompt_type="question", depth=1)

    (sub,) = decompose(h, the_task).sub_tasks

    assert sub.required_tool_names == {"products"}
    assert sub.loop_vars == {"model": "KD-450"}
    assert sub.template_name == "spec"
    assert (sub.prompt_type, sub.depth, sub.conditional) == ("question", 2, False)
    assert sub.task_prompt == "Specifications of KD-450"


def test_subtask_ids_are_rendered_suffixes_of_the_parent_number(harness):
    h = harness(
        coordinator(per_product(id="{{ index }}.n"), SubtaskTemplate(prompt=inline("Summary")))
    )
    h.prompts.extract_replies["compare"] = {"products": ["A", "B"]}
    subs = decompose(h, task("q", "2")).sub_tasks
    # `index` is the place in the loop; the default id counts every subtask made
    assert [s.task_no for s in subs] == ["2.1.n", "2.2.n", "2.3"]


def test_a_repeated_subtask_id_fails_before_the_task_changes(harness):
    h = harness(coordinator(per_product(id="same")))
    h.prompts.extract_replies["compare"] = {"products": ["A", "B"]}
    the_task = task("q")
    with pytest.raises(ToolRunError, match=r"subtask id '1\.same' is used twice"):
        decompose(h, the_task)
    assert the_task.sub_tasks == []


def test_relevant_if_decides_relevance(harness):
    h = harness(coordinator(per_product(), relevant_if="params.products | length >= 2"))
    h.prompts.extract_replies["compare"] = {"products": ["only one"]}
    assert decompose(h, task("q")).sub_tasks == []


def test_subtasks_made_after_an_earlier_coordinators_continue_the_numbering(harness):
    h = harness(coordinator(per_product()))
    h.prompts.extract_replies["compare"] = {"products": ["B"]}
    the_task = task("q")
    the_task.sub_tasks.append(task("earlier", "1.1"))
    assert [s.task_no for s in decompose(h, the_task).sub_tasks] == ["1.1", "1.2"]


def test_c4_a_loop_past_max_subtasks_is_counted_not_rendered(harness):
    # item 3's prompt would divide by zero: it must never be rendered
    loop = SubtaskTemplate(for_each="range(100000)", prompt=inline("{{ 10 // (3 - item) }}"))
    h = harness(coordinator(loop, relevant_if="true"), limits=Limits(max_subtasks=3))
    the_task = task("q")
    env = h.env(the_task, text="q")
    subs = run(h.tools["compare"].decompose(the_task, env)).sub_tasks
    assert [s.task_prompt for s in subs] == ["3", "5", "10"]
    assert env.left_out_subtasks == 100000 - 3


def test_c4_the_room_counts_subtasks_the_task_has_already(harness):
    h = harness(coordinator(per_product()), limits=Limits(max_subtasks=2))
    h.prompts.extract_replies["compare"] = {"products": ["A", "B", "C"]}
    the_task = task("q")
    the_task.sub_tasks.append(task("earlier", "1.1"))
    env = h.env(the_task, text="q")
    subs = run(h.tools["compare"].decompose(the_task, env)).sub_tasks
    assert [s.task_no for s in subs] == ["1.1", "1.2"]
    assert env.left_out_subtasks == 2


def neighbour_then_search() -> ToolConfig:
    return coordinator(
        per_product(name="near", id="{{ index }}.n"),
        per_product(
            name="full",
            id="{{ index }}.s",
            condition=Condition(ConditionKind.SKIP_IF_FOUND, sibling="near"),
        ),
    )


def decide(h, parent, subtask_no, completed):
    """The decision alone (a ReasonedDecision's value)."""
    sub = parent.find(subtask_no)
    reply = run(h.tools["compare"].decide_conditional(parent, sub, completed, h.env(parent)))
    return reply.value if isinstance(reply, ReasonedDecision) else reply


def made_by_compare(parent):
    for sub in parent.sub_tasks:
        sub.owner_coordinator_name = "compare"  # C18: the orchestrator fills this in
    return parent


def test_c16_skip_if_found_pairs_siblings_by_loop_position(harness):
    h = harness(neighbour_then_search())
    h.prompts.extract_replies["compare"] = {"products": ["A", "B"]}
    parent = made_by_compare(decompose(h, task("q")))
    assert [s.task_no for s in parent.sub_tasks] == ["1.1.n", "1.2.n", "1.1.s", "1.2.s"]
    assert parent.find("1.1.s").conditional
    completed = {
        "1.1.n:near_tool": (PromptAndContext("p", "found A"),),
        "1.2.n:near_tool": (PromptAndContext("p", ""),),
    }
    assert decide(h, parent, "1.1.s", completed) is SubtaskDecision.SKIP
    assert decide(h, parent, "1.2.s", completed) is SubtaskDecision.RUN


def test_c17_a_siblings_descendants_count_as_found(harness):
    h = harness(neighbour_then_search())
    h.prompts.extract_replies["compare"] = {"products": ["A"]}
    parent = made_by_compare(decompose(h, task("q")))
    completed = {"1.1.n.1:deep": (PromptAndContext("p", "found below"),)}
    assert decide(h, parent, "1.1.s", completed) is SubtaskDecision.SKIP


def test_c16_run_if_sees_loop_variables_the_subtask_and_found(harness):
    h = harness(
        coordinator(
            per_product(name="near"),
            per_product(
                name="full",
                condition=Condition(
                    ConditionKind.EXPRESSION,
                    expression="item != 'A' and not found(parent.task_no ~ '.1:')",
                ),
            ),
        )
    )
    h.prompts.extract_replies["compare"] = {"products": ["A", "B"]}
    parent = made_by_compare(decompose(h, task("q")))
    nothing = {"1.1:x": (PromptAndContext("p", ""),)}
    assert decide(h, parent, "1.3", nothing) is SubtaskDecision.SKIP  # item == 'A'
    assert decide(h, parent, "1.4", nothing) is SubtaskDecision.RUN
    something = {"1.1:x": (PromptAndContext("p", "hit"),)}
    assert decide(h, parent, "1.4", something) is SubtaskDecision.SKIP


def test_a_decision_says_its_rule_in_the_blocks_own_terms(harness):
    """What the Why page shows for a skipped subtask (issue 32.6): the rule, not a method."""
    rule = "item != 'A'"
    h = harness(
        coordinator(
            per_product(name="near"),
            per_product(
                name="full", condition=Condition(ConditionKind.EXPRESSION, expression=rule)
            ),
        )
    )
    h.prompts.extract_replies["compare"] = {"products": ["A", "B"]}
    parent = made_by_compare(decompose(h, task("q")))
    sub = parent.find("1.3")
    reply = run(h.tools["compare"].decide_conditional(parent, sub, {}, h.env(parent)))
    assert reply == ReasonedDecision(SubtaskDecision.SKIP, f"`run_if: {rule}` is false")


def test_c3_a_subtask_without_a_rule_runs(harness):
    h = harness(coordinator(per_product()))
    h.prompts.extract_replies["compare"] = {"products": ["A"]}
    parent = made_by_compare(decompose(h, task("q")))
    assert decide(h, parent, "1.1", {}) is SubtaskDecision.RUN


def test_c20e_activate_after_subtasks_makes_the_coordinator_a_consumer(harness):
    h = harness(coordinator(per_product(), activate_after_subtasks=True))
    tool = h.tools["compare"]
    assert tool.activate_after_subtasks
    assert is_context_consumer(tool)
    with pytest.raises(ContextRequiredError):
        tool.execute("q", h.env(task("q")))
    prior = {"1.1:products": (PromptAndContext("p", "row"),)}
    result = run(tool.execute_with_prior_context("q", prior, h.env(task("q"))))
    assert result.text == "Compare: q"


def test_c26_the_wrapped_tools_direct_call_functions_stay_reachable(harness, tmp_path: Path):
    (tmp_path / "t.csv").write_text("model\nA\n", encoding="utf-8")
    config = ToolConfig(
        name="products",
        kind=ToolKind.LOOKUP,
        options=LookupOptions(table=Path("t.csv"), key="model"),
        decompose=Decompose(subtasks=(SubtaskTemplate(prompt=inline("x")),)),
    )
    h = harness(config)
    assert h.tools["products"].rows_for("a") == [{"model": "A"}]


def test_c1_a_parameter_the_reply_left_out_makes_relevant_if_false_not_an_error(harness):
    h = harness(coordinator(per_product(), relevant_if="params.products | length >= 2"))
    h.prompts.extract_replies["compare"] = {}  # the schema does not require `products`
    the_task = task("hello there")
    before = the_task.to_json()
    assert decompose(h, the_task) is the_task  # C1: not relevant, unchanged
    assert the_task.to_json() == before


def test_a_parameter_the_reply_left_out_reads_as_undefined_in_templates_and_loops(harness):
    h = harness(
        coordinator(
            per_product(),
            SubtaskTemplate(prompt=inline("Price of [{{ params.model }}]?")),
            relevant_if="params.model is not defined",
            append_prompt=inline("({{ params.products | join(', ') }})"),
        )
    )
    h.prompts.extract_replies["compare"] = {}
    the_task = task("how much is it?")
    decompose(h, the_task)
    assert [sub.task_prompt for sub in the_task.sub_tasks] == ["Price of []?"]  # no items
    assert the_task.task_prompt == "how much is it?\n()"


ITEMS_SCHEMA = {
    "type": "object",
    "properties": {"items": {"type": "array", "items": {"type": "string"}}, "keys": {}},
}


def items_coordinator() -> ToolConfig:
    return coordinator(
        SubtaskTemplate(for_each="params['items']", prompt=inline("Specs of {{ item }}")),
        extract=Extraction(schema=ITEMS_SCHEMA),
        relevant_if="params.items | default([]) | length >= 2",
        append_prompt=inline("({{ params.items | join(', ') }}; {{ params.keys }})"),
    )


def test_a_parameter_named_like_a_mapping_method_reads_as_the_parameter(harness):
    h = harness(items_coordinator())
    h.prompts.extract_replies["compare"] = {"items": ["A", "B"], "keys": "K"}
    the_task = task("compare A and B")
    decompose(h, the_task)
    assert [sub.task_prompt for sub in the_task.sub_tasks] == ["Specs of A", "Specs of B"]
    assert the_task.task_prompt == "compare A and B\n(A, B; K)"


def test_a_parameter_named_like_a_mapping_method_the_reply_left_out_is_undefined(harness):
    h = harness(items_coordinator())
    h.prompts.extract_replies["compare"] = {}
    the_task = task("hello there")
    assert decompose(h, the_task) is the_task
    assert the_task.sub_tasks == []  # not relevant: `params.items` is undefined, not the method
