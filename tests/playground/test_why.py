"""`runner.playground.why`: the task tree as it ran, and the LLM timeline, from a served
round's result and trace."""

from __future__ import annotations

from typing import Any

from runner.playground.why import Timeline, round_view, timeline
from tests.playground.conftest import ask, retrieval_round


def stored(service: Any, result: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    record = service.round(result["session"], result["round"])
    return record["result"], record["trace"]


def test_a_comparison_shows_its_forced_lookups_and_who_skipped_the_conditionals(
    service: Any,
) -> None:
    view = round_view(*stored(service, ask(service, "Compare the KD-450 and the KD-600X")))
    assert view.tree is not None
    by_no = {child.task_no: child for child in view.tree.children}
    assert [(t.name, t.reason) for t in by_no["1.1"].tools] == [("product_lookup", "forced")]
    assert by_no["1.1"].owner == "compare_products"
    assert by_no["1.3"].skipped and by_no["1.3"].conditional
    assert by_no["1.3"].decision is not None
    # the reason is the block's rule, not an internal name (issue 32.6)
    assert by_no["1.3"].decision == (
        "skipped: `specs` (1.1) already found something (skip_if_found) "
        "(the rule of coordinator compare_products)"
    )
    assert "decide_conditional" not in by_no["1.3"].decision
    assert "coordinator compare_products made subtasks 1.1, 1.2, 1.3, 1.4" in view.tree.notes
    (coordinator,) = view.tree.tools
    assert coordinator.reason == "after_subtasks" and coordinator.gave_answer
    assert view.ran == ["compare_products", "product_lookup"]


def test_a_question_shows_the_suitability_verdicts_and_the_gatekeeper(service: Any) -> None:
    result = ask(service, "My dishwasher shows E24 and the water stays at the bottom")
    view = round_view(*stored(service, result))
    assert view.tree is not None
    reasons = {tool.name: tool.reason for tool in view.tree.tools}
    assert reasons == {"handbook_rag": "retrieval", "troubleshooter": "suitability"}
    notes = " | ".join(view.tree.notes)
    assert "suitability call: troubleshooter yes" in notes
    assert "judged the context enough to answer from" in notes
    assert "deep search deep_search did not run" in notes


def test_the_offline_check_is_not_called_an_llm_gatekeeper(service: Any) -> None:
    view = round_view(*stored(service, ask(service, "How do I descale my dishwasher?")))
    assert view.tree is not None
    (note,) = [n for n in view.tree.notes if n.startswith("gatekeeper")]
    assert note.startswith("gatekeeper (the offline provider's word check")
    assert "(llm)" not in note


def test_the_gatekeeper_counts_the_pages_it_read_not_the_tool_results(service: Any) -> None:
    result, trace = stored(service, ask(service, "How do I descale my dishwasher?"))
    view = round_view(result, trace)
    assert view.tree is not None
    (rag,) = view.tree.tools
    (gate,) = [n for n in view.tree.notes if n.startswith("gatekeeper")]
    assert len(rag.retrieved) == 4 and rag.sources == 4
    assert "(1 tool result citing 4 sources)" in gate
    assert "passage" not in gate


def test_the_gatekeepers_verdict_is_not_presented_as_the_answer_being_right(
    service: Any,
) -> None:
    view = round_view(*stored(service, ask(service, "How do I descale my dishwasher?")))
    assert view.tree is not None
    (gate,) = [n for n in view.tree.notes if n.startswith("gatekeeper")]
    assert gate.endswith("not whether the answer is right")


def test_candidates_that_were_not_activated_are_said_not_to_have_run(service: Any) -> None:
    view = round_view(*stored(service, ask(service, "How do I descale my dishwasher?")))
    assert view.tree is not None
    (note,) = [n for n in view.tree.notes if n.startswith("activation candidates")]
    assert [tool.name for tool in view.tree.tools] == ["handbook_rag"]
    assert note.endswith(
        "not activated, so did not run: safety_alert, warranty_check, troubleshooter"
    )


def test_a_clarification_shows_the_question_on_the_tool_that_asked(service: Any) -> None:
    view = round_view(*stored(service, ask(service, "What warranty do I get on my dryer?")))
    assert view.tree is not None and view.tree.status == "waiting"
    (asked,) = [tool for tool in view.tree.tools if tool.status == "asked"]
    assert asked.name == "warranty_check" and asked.reason == "rule"
    assert asked.question is not None and asked.question.startswith("Which Kestrel model")


def test_the_answer_to_a_question_is_a_round_of_its_own_kind(service: Any) -> None:
    first = ask(service, "What warranty do I get on my dryer?")
    view = round_view(*stored(service, ask(service, "It is a KT-700", first["session"])))
    assert view.kind.startswith("the answer to the pending question")
    assert any("ran again with the answer 'It is a KT-700'" in n for n in view.tree.notes)
    assert "resumed: the tools that finished before are not run again" in view.tree.notes


def test_the_timeline_places_each_call_where_it_ran_by_purpose() -> None:
    trace = [
        {"seq": 1, "ms": 0.0, "event": "round.start", "task": None},
        {
            "seq": 2,
            "ms": 30.0,
            "event": "llm.call",
            "task": "1",
            "purpose": "suitability",
            "latency_ms": 20.0,
            "prompt_tokens": 100,
            "completion_tokens": 5,
        },
        {
            "seq": 3,
            "ms": 90.0,
            "event": "llm.call",
            "task": "1",
            "purpose": "answer",
            "latency_ms": 40.0,
            "prompt_tokens": 300,
            "completion_tokens": 60,
            "cached": True,
        },
        {"seq": 4, "ms": 100.0, "event": "round.end", "task": None},
    ]
    line = timeline(trace)
    assert line.span_ms == 100.0
    assert [(c.purpose, c.start_ms) for c in line.calls] == [
        ("suitability", 10.0),
        ("answer", 50.0),
    ]
    assert line.bar(line.calls[1]) == (50.0, 40.0)
    assert line.calls[1].cached
    assert line.by_purpose() == [
        {"purpose": "suitability", "calls": 1, "ms": 20.0, "tokens": 105},
        {"purpose": "answer", "calls": 1, "ms": 40.0, "tokens": 360},
    ]


def test_an_empty_round_draws_no_bar() -> None:
    assert Timeline([], 0.0).by_purpose() == []


def test_ranked_pages_of_a_retrieval_tool_are_shown_best_first() -> None:
    result, trace = retrieval_round(
        [
            {"rank": 2, "document": "b.md", "page": 2, "heading": "B", "score": 0.5},
            {"rank": 1, "document": "a.md", "page": 1, "heading": "A", "score": 0.9},
        ]
    )
    view = round_view(result, trace)
    assert view.tree is not None
    (rag,) = view.tree.tools
    assert [p["document"] for p in rag.retrieved] == ["a.md", "b.md"]
    assert (rag.query, rag.corpus) == ("q", "docs")


def answered(children: list[dict[str, Any]]) -> dict[str, Any]:
    """An answered round whose task 1 ran no tool and has these subtasks."""
    tasks = {"task_no": "1", "prompt": "q", "status": "done", "tools": [], "children": children}
    return {"round": 1, "outcome": "answer", "tasks": tasks}


def test_the_deep_searchs_subtasks_are_marked_as_the_halves_of_their_pair() -> None:
    def task(task_no: str, status: str = "done") -> dict[str, Any]:
        return {
            "task_no": task_no,
            "prompt": "Saturday surcharge",
            "status": status,
            "owner": "deep_search",
            "skipped": status == "skipped",
            "tools": [],
        }

    result = answered([task("1.1.n"), task("1.1.s", "skipped")])
    trace = [
        {
            "seq": 1,
            "ms": 1.0,
            "event": "gatekeeper",
            "task": "1",
            "mode": "llm",
            "enough": False,
            "reason": "the fee is missing",
            "passages": 2,
        },
        {
            "seq": 2,
            "ms": 2.0,
            "event": "deep_fallback",
            "task": "1",
            "coordinator": "deep_search",
            "run": True,
            "reason": "the gatekeeper found it not enough",
        },
    ]
    view = round_view(result, trace)
    assert view.tree is not None
    assert [child.pair for child in view.tree.children] == [
        "neighbouring pages",
        "full search, if the neighbours found nothing",
    ]
    assert (
        "gatekeeper (llm) judged the context not enough to answer from (0 tool results citing 0"
        " sources): the fee is missing. It judges whether the pages cover the question, not"
        " whether the answer is right"
    ) in view.tree.notes
    assert "deep search deep_search ran: the gatekeeper found it not enough" in view.tree.notes


def test_subtasks_of_an_ordinary_coordinator_are_no_pair() -> None:
    result = answered([{"task_no": "1.1", "prompt": "p", "status": "done", "owner": "c"}])
    view = round_view(result, [])
    assert view.tree is not None and view.tree.children[0].pair is None


def test_a_failed_tool_and_a_warning_are_problems_of_their_task() -> None:
    tool = {
        "name": "lookup",
        "key": "1:lookup",
        "status": "failed",
        "reason": "rule",
        "items": 0,
        "guaranteed": False,
    }
    result = {
        "round": 1,
        "outcome": "answer",
        "warnings": ["the pipeline file changed"],
        "tasks": {"task_no": "1", "prompt": "q", "status": "done", "tools": [tool]},
    }
    trace = [
        {
            "seq": 1,
            "ms": 1.0,
            "event": "tool.error",
            "task": "1",
            "tool": "lookup",
            "key": "1:lookup",
            "error": "table file not found",
        },
        {"seq": 2, "ms": 2.0, "event": "warning", "task": "1", "message": "context cut to 8 items"},
    ]
    view = round_view(result, trace)
    assert view.tree is not None
    assert view.tree.tools[0].error == "table file not found"
    assert view.tree.problems == ["lookup failed: table file not found", "context cut to 8 items"]
    assert view.notes == []  # the result's warnings are shown with the result, once
