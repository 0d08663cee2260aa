"""The pipeline at a glance: tool rows, coordinator plans and the deep fallback, as data."""

from __future__ import annotations

from runner.explain.overview import coordinator_plans, fallback_plan, tool_rows

from .conftest import Write, example


def rows_by_name(name: str) -> dict:
    return {row.name: row for row in tool_rows(example(name))}


def test_tools_are_listed_by_priority_then_file_order() -> None:
    names = [row.name for row in tool_rows(example("support"))]
    assert names[:4] == ["greeting", "safety_alert", "handbook_rag", "product_lookup"]
    assert names[-1] == "deep_search"


def test_c27_the_retrieval_tool_is_marked_and_said_to_run_on_every_task_not_forced() -> None:
    rows = rows_by_name("support")
    assert rows["handbook_rag"].retrieval
    assert "every task without required tools" in rows["handbook_rag"].activation
    assert not any(row.retrieval for name, row in rows.items() if name != "handbook_rag")


def test_c28_the_fallback_coordinator_runs_only_through_the_fallback() -> None:
    row = rows_by_name("support")["deep_search"]
    assert row.activation == "deep fallback only (C28)"
    assert row.coordinator == "deep search"


def test_activation_rules_show_their_keywords_and_pattern() -> None:
    pipeline = example("support")
    rule = next(tool for tool in pipeline.tools if tool.name == "safety_alert").activation
    activation = rows_by_name("support")["safety_alert"].activation
    assert activation == f"rule: keywords {', '.join(rule.keywords)}; pattern {rule.pattern}"


def test_c13_c29_forced_by_names_the_coordinators_that_require_a_tool() -> None:
    rows = rows_by_name("support")
    assert rows["product_lookup"].forced_by == ("compare_products",)
    assert rows["handbook_search"].forced_by == ("compare_products", "deep_search")
    assert rows["handbook_neighbors"].forced_by == ("deep_search",)
    assert rows["troubleshooter"].forced_by == ()


def test_c20c_consumers_include_the_kinds_that_always_get_the_buffer() -> None:
    rows = rows_by_name("support")
    assert rows["troubleshooter"].consumer == "yes"  # consumes_context: true
    assert rows["compare_products"].consumer == "yes"  # activate_after_subtasks (C20e)
    assert rows["handbook_neighbors"].consumer == "yes"
    assert rows["deep_search"].consumer == "yes"
    assert rows["handbook_rag"].consumer == "-"


def test_c23_c32_output_says_what_a_result_becomes_when_a_coordinator_asks() -> None:
    rows = rows_by_name("support")
    assert rows["greeting"].output == "answer"
    assert rows["warranty_check"].output == "guaranteed"
    assert rows["handbook_search"].output == "context (guaranteed when a coordinator asks)"
    assert rows["deep_search"].output == "guaranteed"


def test_a_coordinator_plan_lists_its_extraction_and_subtask_templates() -> None:
    (plan,) = [p for p in coordinator_plans(example("support")) if p.name == "compare_products"]
    assert plan.extracts == ("products",)
    assert plan.relevant_if == "params.products | default([]) | length >= 2"
    assert plan.prompt_types == ("comparison",)
    assert plan.activate_after_subtasks
    specs, handbook = plan.subtasks
    assert (specs.key, specs.for_each, specs.loop_var) == ("specs", "params.products", "model")
    assert specs.required_tools == ("product_lookup",) and specs.condition is None
    assert handbook.condition == "skipped if 'specs' found something"


def test_c16_an_expression_condition_and_an_unnamed_template_read_as_written(
    write: Write,
) -> None:
    pipeline = write(
        """
        version: 1
        domain: t
        tools:
          - name: split
            kind: prompt
            prompt: x
            decompose:
              relevant_if: "true"
              append_prompt: "Answer briefly."
              subtasks:
                - {prompt: "First", id: "a"}
                - {prompt: "Second", conditional: {run_if: "not found('1.a')"}}
        """
    )
    (plan,) = coordinator_plans(pipeline)
    assert plan.append_prompt and plan.extracts == ()
    assert [s.key for s in plan.subtasks] == ["#1", "#2"]
    assert plan.subtasks[0].id == "a"
    assert plan.subtasks[1].condition == "runs if not found('1.a')"


def test_the_deep_search_plan_says_how_each_tool_reads_pages() -> None:
    (plan,) = [p for p in coordinator_plans(example("support")) if p.name == "deep_search"]
    deep = plan.deep_search
    assert deep is not None
    assert (deep.max_missing, deep.search_tool, deep.neighbor_tool) == (
        2,
        "handbook_search",
        "handbook_neighbors",
    )
    assert "none when more than 40 pages match (C31)" in deep.search
    assert "handbook_rag's pages" in (deep.neighbors or "")


def test_c28_the_fallback_plan_names_the_types_with_and_without_it() -> None:
    plan = fallback_plan(example("support"))
    assert plan is not None
    assert plan.prompt_types == ("question",)
    assert plan.without == ("comparison", "smalltalk")
    assert plan.gatekeeper.startswith("llm")
    hr = fallback_plan(example("hr"))
    assert hr is not None and hr.gatekeeper.startswith("rule: the context must hold 70%")
