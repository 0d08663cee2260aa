"""Property-based tests of the declarative coordinator over generated decompose blocks."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runner.config.model import (
    Condition,
    ConditionKind,
    Decompose,
    Extraction,
    PromptOptions,
    SubtaskTemplate,
    TemplateRef,
    ToolConfig,
    ToolKind,
)
from runner.engine.results import PromptAndContext, ReasonedDecision, SubtaskDecision
from runner.tools import ToolServices, build_tools

from .conftest import Harness, RecordingPrompts, make_pipeline, run, task

PRODUCTS = st.lists(st.from_regex(r"[A-Z]{2}-[0-9]{3}", fullmatch=True), max_size=4, unique=True)
TEMPLATES = st.lists(
    st.tuples(st.booleans(), st.booleans()),  # (loops over the products, has an id template)
    min_size=1,
    max_size=3,
)
SCHEMA = {"type": "object", "properties": {"products": {"type": "array"}}}


def coordinator(templates: list[tuple[bool, bool]]) -> ToolConfig:
    subtasks = tuple(
        SubtaskTemplate(
            prompt=TemplateRef(inline=f"step {number} {{{{ item if item is defined else '' }}}}"),
            name=f"t{number}",
            for_each="params.products" if loops else None,
            id=f"{{{{ index }}}}.t{number}" if has_id else None,
        )
        for number, (loops, has_id) in enumerate(templates)
    )
    return ToolConfig(
        name="plan",
        kind=ToolKind.PROMPT,
        options=PromptOptions(template=TemplateRef(inline="x")),
        decompose=Decompose(extract=Extraction(schema=SCHEMA), subtasks=subtasks),
    )


def harness_for(tmp_path_factory, config: ToolConfig) -> Harness:
    pipeline = make_pipeline(tmp_path_factory.mktemp("p"), config)
    return Harness(pipeline, build_tools(pipeline, ToolServices(pipeline)), RecordingPrompts())


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(products=PRODUCTS, templates=TEMPLATES, depth=st.integers(0, 3))
def test_c1_c2_c20b_decomposition_invariants(tmp_path_factory, products, templates, depth):
    h = harness_for(tmp_path_factory, coordinator(templates))
    h.prompts.extract_replies["plan"] = {"products": products}
    parent = task("compare them", "1", depth=depth, prompt_context="HIDDEN parent text")
    before = parent.to_json()

    result = run(h.tools["plan"].decompose(parent, h.env(parent, text=parent.task_prompt)))

    assert result is parent  # C1/C2: the same object, always
    (call,) = h.prompts.calls
    assert call["text"] == "compare them"  # C20b: never prompt_context
    if not products:
        assert parent.to_json() == before  # C1: not relevant, unchanged
        return
    expected = sum(len(products) if loops else 1 for loops, _ in templates)
    numbers = [sub.task_no for sub in parent.sub_tasks]
    assert len(numbers) == expected == len(set(numbers))
    assert all(number.startswith("1.") for number in numbers)
    assert all(sub.depth == depth + 1 for sub in parent.sub_tasks)
    looped = [sub for sub in parent.sub_tasks if sub.loop_vars]
    assert [sub.loop_vars["item"] for sub in looped] == [
        product for loops, _ in templates if loops for product in products
    ]


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(found=st.lists(st.booleans(), min_size=1, max_size=5))
def test_c16_skip_if_found_skips_exactly_the_pairs_whose_cheap_step_found(tmp_path_factory, found):
    near = SubtaskTemplate(
        prompt=TemplateRef(inline="near {{ item }}"),
        name="near",
        for_each="params.products",
        id="{{ index }}.n",
    )
    full = SubtaskTemplate(
        prompt=TemplateRef(inline="full {{ item }}"),
        for_each="params.products",
        id="{{ index }}.s",
        condition=Condition(ConditionKind.SKIP_IF_FOUND, sibling="near"),
    )
    config = ToolConfig(
        name="plan",
        kind=ToolKind.PROMPT,
        options=PromptOptions(template=TemplateRef(inline="x")),
        decompose=Decompose(extract=Extraction(schema=SCHEMA), subtasks=(near, full)),
    )
    h = harness_for(tmp_path_factory, config)
    h.prompts.extract_replies["plan"] = {"products": [f"P{i}" for i in range(len(found))]}
    parent = run(h.tools["plan"].decompose(task("q"), h.env(task("q"))))
    for sub in parent.sub_tasks:
        sub.owner_coordinator_name = "plan"
    completed = {
        f"1.{i}.n:search": (PromptAndContext("p", "hit" if hit else ""),)
        for i, hit in enumerate(found, start=1)
    }
    for i, hit in enumerate(found, start=1):
        sub = parent.find(f"1.{i}.s")
        reply = run(h.tools["plan"].decide_conditional(parent, sub, completed, h.env(parent)))
        decision = reply.value if isinstance(reply, ReasonedDecision) else reply
        assert decision is (SubtaskDecision.SKIP if hit else SubtaskDecision.RUN)
