"""Clarification rounds, terminal answers and surviving a crash: C24, C25."""

from __future__ import annotations

import pytest

from runner.config.model import Limits
from runner.engine.results import ToolResult
from runner.engine.task import Task, TaskStatus, ToolStatus
from runner.llm.types import Purpose

from .kit import FakeTool, Killed, asks, coordinator, subtasks, task_of


def test_c24_a_question_ends_the_round_and_the_state_is_stored(world):
    w = world(FakeTool("asker", asks("Which model?"), activation="always"))
    result = w.run("Is it compatible?")
    assert (result.outcome, result.question, result.exit_code) == (
        "clarification",
        "Which model?",
        3,
    )
    stored = w.saved[-1]
    assert stored["pending"] == {
        "task_no": "1",
        "tool": "asker",
        "question": "Which model?",
        "answer": None,
        "rounds": 1,
    }
    assert stored["active_message"] is None
    assert stored["root"]["tool_status"] == {"asker": "asked"}
    assert w.asked(Purpose.ANSWER) == []


def test_c24_the_answer_reruns_only_the_asking_tool_with_question_and_answer(world):
    w = world(
        FakeTool("before", priority=1, activation="always"),
        FakeTool("asker", asks("Which model?"), priority=2, activation="always"),
        FakeTool("after", priority=3, activation="always"),
    )
    w.run("Is it compatible?")
    w.reload()  # the next round starts from the stored session, as in a new process
    result = w.run("the XR-200")
    assert result.outcome == "answer" and result.round == 2
    assert w.ran() == [("1", "before"), ("1", "asker"), ("1", "asker"), ("1", "after")]
    resumed = w.calls("asker")[-1]
    assert resumed.method == "execute_with_clarification"
    assert (resumed.clarification.question, resumed.clarification.answer) == (
        "Which model?",
        "the XR-200",
    )
    assert w.state.buffer.snapshot()["1:asker"][0].context == "answered: the XR-200"
    [resume] = w.events("clarification.resume")
    assert resume["tool"] == "asker" and resume["answer"] == "the XR-200"
    assert w.events("round.start")[0]["kind"] == "answer"


def test_c24_a_task_may_go_through_several_clarification_rounds(world):
    def twice(call):
        if call.clarification is None:
            return ToolResult.clarification("Which brand?")
        if call.clarification.rounds == 1:
            return ToolResult.clarification("Which model?")
        return ToolResult.context(f"got {call.clarification.answer}")

    w = world(FakeTool("asker", twice, activation="always"))
    assert w.run("q").question == "Which brand?"
    second = w.run("Northwind")
    assert second.question == "Which model?"
    assert w.state.pending.rounds == 2
    assert w.run("XR-200").outcome == "answer"
    assert [c.answer for c in w.state.clarifications] == ["Northwind", "XR-200"]


def test_c24_past_max_clarification_rounds_the_round_ends_with_a_readable_error(world):
    w = world(
        FakeTool("asker", lambda call: ToolResult.clarification("Again?"), activation="always"),
        limits=Limits(max_clarification_rounds=2),
    )
    assert w.run("q").outcome == "clarification"
    assert w.run("a").outcome == "clarification"
    result = w.run("b")
    assert (result.outcome, result.exit_code) == ("error", 1)
    assert "max_clarification_rounds" in result.error and "Again?" in result.error
    assert w.state.pending is None
    assert task_of(w, "1").tool_status["asker"] is ToolStatus.FAILED
    fresh = w.run("a new question")
    assert fresh.outcome == "clarification"  # a fresh message: a new task tree
    assert w.events("round.start")[0]["kind"] == "fresh"


def test_c24_the_limit_counts_the_questions_of_one_task_by_any_tool_and_the_error_says_so(world):
    w = world(
        FakeTool("first", asks("Which brand?"), priority=1, activation="always"),
        FakeTool("second", asks("Which model?"), priority=2, activation="always"),
        FakeTool("third", asks("Which year?"), priority=3, activation="always"),
        limits=Limits(max_clarification_rounds=2),
    )
    assert w.run("q").question == "Which brand?"
    assert w.run("Northwind").question == "Which model?"
    result = w.run("XR-200")  # the third tool never asked before: the task did, twice
    assert result.outcome == "error"
    assert result.error.startswith(
        "task 1 has already asked 2 clarifying questions (by 'first', 'second')"
    )
    assert "limits.max_clarification_rounds: 2" in result.error
    assert "tool 'third' asked one more: Which year?" in result.error
    assert "again after" not in result.error


def test_c24_with_a_limit_of_zero_the_error_says_no_question_is_allowed(world):
    w = world(
        FakeTool("first", asks("Which brand?"), activation="always"),
        limits=Limits(max_clarification_rounds=0),
    )
    result = w.run("q")
    assert result.outcome == "error"
    assert result.error.startswith(
        "tool 'first' asked a clarifying question on task 1, but this pipeline allows none "
        "(limits.max_clarification_rounds: 0): Which brand?"
    )
    assert "already asked" not in result.error and "one more" not in result.error


def test_c24_a_tool_that_asked_but_cannot_continue_fails_with_the_method_it_lacks(world):
    class Forgetful(FakeTool):
        execute_with_clarification = None  # type: ignore[assignment]

    w = world(Forgetful("asker", lambda call: ToolResult.clarification("?"), activation="always"))
    w.run("q")
    w.run("answer")
    [error] = w.events("tool.error")
    assert "execute_with_clarification" in error["error"]


def test_c24_completed_subtasks_are_not_run_again_after_the_answer(world):
    split = coordinator(
        "split",
        subtasks(
            Task("1.1", "a", required_tool_names={"tool"}),
            Task("1.2", "b", required_tool_names={"asker"}),
        ),
        activation="coordinator_only",
    )
    w = world(
        split,
        FakeTool("tool", activation="coordinator_only"),
        FakeTool("asker", asks("?"), activation="coordinator_only"),
    )
    w.run("q")
    w.run("yes")
    assert w.ran() == [("1.1", "tool"), ("1.2", "asker"), ("1.2", "asker")]
    assert len(w.calls("split", "decompose")) == 1


def test_c25_a_terminal_answer_ends_the_round_at_once(world):
    w = world(
        FakeTool("final", ToolResult.terminal("It is 42."), priority=1, activation="always"),
        FakeTool("later", priority=2, activation="always"),
    )
    result = w.run("q")
    assert (result.outcome, result.answer) == ("answer", "It is 42.")
    assert w.ran() == [("1", "final")]
    assert w.asked(Purpose.ANSWER) == []
    assert [e["tool"] for e in w.events("terminal")] == ["final"]
    assert task_of(w, "1").status is TaskStatus.DONE


def test_crash_mid_round_resumes_from_the_last_checkpoint_without_rerunning_tools(world):
    crashes = {"left": 1}

    def dies_once(call):
        if crashes["left"]:
            crashes["left"] -= 1
            raise Killed()
        return "third's context"

    split = coordinator(
        "split",
        subtasks(Task("1.1", "a", required_tool_names={"first"})),
        activation="coordinator_only",
    )
    w = world(
        split,
        FakeTool("first", activation="coordinator_only"),
        FakeTool("second", priority=1, activation="always"),
        FakeTool("third", dies_once, priority=2, activation="always"),
    )
    with pytest.raises(Killed):
        w.run("q")
    w.reload()
    assert w.state.interrupted and w.state.active_message == "q"
    result = w.run(None)
    assert result.outcome == "answer" and result.round == 1
    assert w.ran() == [("1.1", "first"), ("1", "second"), ("1", "third"), ("1", "third")]
    assert len(w.calls("split", "decompose")) == 1
    assert w.events("round.start")[0]["kind"] == "resume"
    assert [e["resumed"] for e in w.events("task.start")] == [True]


def test_crash_in_an_answer_round_still_hands_the_answer_to_the_tool_that_asked(world):
    crashes = {"left": 1}

    def dies_once(call):
        if crashes["left"]:
            crashes["left"] -= 1
            raise Killed()
        return "fine"

    w = world(
        FakeTool("asker", asks("Which?"), priority=1, activation="always"),
        FakeTool("after", dies_once, priority=2, activation="always"),
    )
    w.run("q")
    with pytest.raises(Killed):
        w.run("the blue one")
    w.reload()
    result = w.run("something else")
    assert result.outcome == "answer"
    assert [c.method for c in w.calls("asker")] == ["execute", "execute_with_clarification"]
    assert any("was not processed" in warning for warning in result.warnings)
