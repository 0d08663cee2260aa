"""Context sharing, prompt_context, the marker and direct calls: C20–C23, C26."""

from __future__ import annotations

import pytest

from runner.config.model import Output
from runner.engine.env import UnknownToolError
from runner.engine.marker import (
    AGENT_COORDINATOR_MARKER,
    execution_text,
    extract_coordinator_original,
    extract_coordinator_task,
    is_coordinator_requested,
)
from runner.engine.protocols import ContextRequiredError
from runner.engine.results import HELD_PROMPT, ToolResult
from runner.engine.task import Task
from runner.engine.text import LINK_FROM_CHARS, LinkedText
from runner.llm.types import Purpose

from .kit import FakeConsumer, FakeTool, asks, coordinator, subtasks, suitable, task_of


def test_c20_a_consumer_sees_what_earlier_tools_on_the_same_task_produced(world):
    w = world(
        FakeTool("first", "fact one", priority=1, activation="always"),
        FakeConsumer("second", priority=2, activation="always"),
    )
    w.run("q")
    [call] = w.calls("second")
    assert call.method == "execute_with_prior_context"
    assert [r.context for r in call.prior["1:first"]] == ["fact one"]


def test_c20b_suitability_and_decomposition_see_task_prompt_only(world):
    seen: list[tuple[str, str | None]] = []

    def inner(task: Task, env) -> None:
        seen.append((env.text, task.prompt_context))

    split = coordinator(
        "split",
        subtasks(Task("1.1", "the sub prompt", prompt_type="sub")),
        activation="coordinator_only",
        priority=1,
    )
    typed = coordinator("typed", inner, activation="coordinator_only", prompt_types=("sub",))
    w = world(split, typed, FakeTool("tool"), script=[suitable(no=["tool"])])
    w.run("the user's message")
    assert seen == [("the sub prompt", None)]
    subjects = [r.subject for r in w.asked(Purpose.SUITABILITY)]
    assert subjects == ["the sub prompt", "the user's message"]
    sub_request = w.asked(Purpose.SUITABILITY)[0]
    assert "the user's message" not in sub_request.prompt
    assert task_of(w, "1.1").prompt_context == "the user's message"  # restored after decompose


def test_c20c_consumers_get_a_snapshot_that_later_results_do_not_change(world):
    w = world(
        FakeConsumer("early", priority=1, activation="always"),
        FakeTool("late", "late fact", priority=2, activation="always"),
    )
    w.run("q")
    [call] = w.calls("early")
    assert call.prior == {}
    assert "1:late" in w.state.buffer


def test_c20c_calling_a_context_consumer_without_the_buffer_raises():
    consumer = FakeConsumer("c")
    with pytest.raises(ContextRequiredError, match="execute_with_prior_context"):
        consumer.execute("text", env=None)  # type: ignore[arg-type]


def test_c20d_a_consumer_continues_its_clarification_with_the_buffer(world):
    w = world(
        FakeTool("facts", "fact", priority=1, activation="always"),
        FakeConsumer("asker", asks("which?"), priority=2, activation="always"),
    )
    w.run("q")
    w.run("this one")
    last = w.calls("asker")[-1]
    assert last.method == "execute_with_clarification_and_prior_context"
    assert last.clarification.answer == "this one"
    assert "1:facts" in last.prior
    assert w.calls("facts") and len(w.calls("facts")) == 1


def test_c20e_a_coordinator_is_activated_after_its_subtasks_with_their_results(world):
    def build(call):
        return ToolResult.context("built from " + ", ".join(sorted(call.prior)))

    facts = FakeTool("facts", activation="coordinator_only")
    split = coordinator(
        "split",
        subtasks(
            Task("1.1", "a", required_tool_names={"facts"}),
            Task("1.2", "b", required_tool_names={"facts"}),
        ),
        consumer=True,
        after=True,
        reply=build,
        activation="coordinator_only",
    )
    w = world(split, facts)
    result = w.run("q")
    assert w.ran() == [("1.1", "facts"), ("1.2", "facts"), ("1", "split")]
    assert w.state.buffer.snapshot()["1:split"][0].context == "built from 1.1:facts, 1.2:facts"
    assert result.tasks["tools"] == [
        {
            "name": "split",
            "key": "1:split",
            "status": "done",
            "reason": "after_subtasks",
            "items": 1,
            "sources": 0,
            "guaranteed": False,
        }
    ]


def test_c20e_a_coordinator_that_made_no_subtasks_is_not_activated(world):
    split = coordinator(
        "split", lambda t, e: None, consumer=True, after=True, activation="coordinator_only"
    )
    w = world(split)
    w.run("q")
    assert w.ran() == []


def test_c21_execution_text_is_the_prompt_alone_or_context_marker_prompt():
    assert execution_text("do it", None) == "do it"
    assert execution_text("do it", "") == "do it"
    assert execution_text("do it", "user said") == f"user said{AGENT_COORDINATOR_MARKER}do it"


def top_middle_leaf(world, message="top"):
    """A round on `message` whose coordinator makes "middle", itself split into "leaf", a tool
    on each."""
    nested = Task(
        "1.1",
        "middle",
        required_tool_names={"tool"},
        sub_tasks=[Task("1.1.1", "leaf", required_tool_names={"tool"})],
    )
    w = world(
        coordinator("split", subtasks(nested), activation="coordinator_only"),
        FakeTool("tool", activation="coordinator_only"),
    )
    w.run(message)
    return w


def test_c21_tools_on_nested_subtasks_get_every_ancestor_text(world):
    w = top_middle_leaf(world)
    leaf = next(c for c in w.calls("tool") if c.task_no == "1.1.1")
    assert leaf.text == f"top{AGENT_COORDINATOR_MARKER}middle{AGENT_COORDINATOR_MARKER}leaf"
    assert extract_coordinator_task(leaf.text) == "leaf"  # C22: split at the last marker
    assert extract_coordinator_original(leaf.text) == f"top{AGENT_COORDINATOR_MARKER}middle"


def test_c20a_a_tasks_buffer_entry_and_its_subtasks_prompt_context_hold_one_text(world):
    w = top_middle_leaf(world)
    leaf = task_of(w, "1.1.1")
    [entry] = w.state.buffer.peek("1.1:tool")
    assert entry.prompt is leaf.held_prompt_context()
    assert leaf.prompt_context == entry.prompt == f"top{AGENT_COORDINATOR_MARKER}middle"


def test_c20a_below_a_long_text_a_chain_holds_a_link_a_level_not_the_text_above(world):
    # a chain's texts grow with its depth (C20a, C21): below a long one, a level holds a link
    # to the text above and its own prompt, read as the whole string
    message = "top " * LINK_FROM_CHARS
    w = top_middle_leaf(world, message)
    leaf = task_of(w, "1.1.1")
    held = leaf.held_prompt_context()
    assert isinstance(held, LinkedText) and held.prompt == "middle" and held.above == message
    [entry] = w.state.buffer.peek("1.1:tool")
    assert HELD_PROMPT.raw(entry) is held  # the middle's buffer entry holds that same link
    assert type(leaf.prompt_context) is str
    assert leaf.prompt_context == f"{message}{AGENT_COORDINATOR_MARKER}middle"


def test_c21_a_task_whose_prompt_changed_gets_the_text_of_the_new_prompt():
    task = Task("1.1", "before", prompt_context="user said")
    assert task.execution_text() == f"user said{AGENT_COORDINATOR_MARKER}before"
    task.task_prompt = "after"  # a coordinator may change it in place (C2)
    assert task.execution_text() == f"user said{AGENT_COORDINATOR_MARKER}after"
    task.prompt_context = None
    assert task.execution_text() == "after"


def test_c22_helpers_and_the_env_tell_whether_a_coordinator_asked(world):
    w = world(
        coordinator(
            "split",
            subtasks(Task("1.1", "sub", required_tool_names={"tool"})),
            activation="coordinator_only",
        ),
        FakeTool("tool", activation="always"),
    )
    w.run('{"model": "XR-200"}')
    by_task = {c.task_no: c for c in w.calls("tool")}
    assert by_task["1.1"].env.coordinator_requested is True
    assert by_task["1"].env.coordinator_requested is False
    assert is_coordinator_requested(by_task["1.1"].text)
    assert extract_coordinator_original(by_task["1.1"].text) == '{"model": "XR-200"}'
    assert extract_coordinator_task("plain") == extract_coordinator_original("plain") == "plain"


def test_c23_a_tool_answers_a_coordinator_with_guaranteed_context(world):
    def answer(call):
        if call.env.coordinator_requested:
            return ToolResult.guaranteed_context("the answer to the sub-question")
        return "raw context"

    w = world(
        coordinator(
            "split",
            subtasks(Task("1.1", "sub", required_tool_names={"tool"})),
            activation="coordinator_only",
        ),
        FakeTool("tool", answer, activation="always"),
    )
    w.run("q")
    buffer = w.state.buffer.snapshot()
    assert buffer["1.1:tool"][0].guaranteed is True
    assert buffer["1:tool"][0].guaranteed is False


def test_c23_coordinator_output_makes_context_guaranteed_when_a_coordinator_asked(world):
    w = world(
        coordinator(
            "split",
            subtasks(Task("1.1", "sub", required_tool_names={"tool"})),
            activation="coordinator_only",
        ),
        FakeTool("tool", "plain text", activation="always", coordinator_output=Output.GUARANTEED),
    )
    w.run("q")
    buffer = w.state.buffer.snapshot()
    assert (buffer["1.1:tool"][0].guaranteed, buffer["1:tool"][0].guaranteed) == (True, False)


def test_c23_output_answer_turns_context_into_a_terminal_answer(world):
    w = world(
        FakeTool(
            "final", "the whole answer", priority=1, activation="always", output=Output.ANSWER
        ),
        FakeTool("later", priority=2, activation="always"),
    )
    result = w.run("q")
    assert (result.outcome, result.answer) == ("answer", "the whole answer")
    assert w.ran() == [("1", "final")]


def test_c26_a_tool_calls_another_tool_directly_outside_the_orchestrator(world):
    class Lookup(FakeTool):
        def rows_for(self, key: str) -> list[str]:
            return [f"row of {key}"]

    def caller(call):
        lookup = call.env.tool("demo.lookup")  # the prefixed name works as well
        return ToolResult.context(lookup.rows_for("XR-200")[0])

    w = world(
        FakeTool("caller", caller, activation="always"),
        Lookup("lookup", activation="coordinator_only"),
    )
    w.run("q")
    assert w.state.buffer.snapshot()["1:caller"][0].context == "row of XR-200"
    assert w.ran() == [("1", "caller")]  # no activation, no buffer entry for the callee
    assert "1:lookup" not in w.state.buffer


def test_c26_a_direct_call_to_an_unknown_tool_names_the_tools_there_are(world):
    def caller(call):
        call.env.tool("nope")

    w = world(FakeTool("caller", caller, activation="always"))
    w.run("q")
    [error] = w.events("tool.error")
    assert "'nope'" in error["error"] and "caller" in error["error"]
    with pytest.raises(UnknownToolError):
        w.calls("caller")[0].env.tool("nope")
