"""The documented protocols are the interface that runs: the engine continues a clarification
through `ClarifiableTool` and asks a conditional decision through `ConditionalDecider`
(runner.engine.protocols, docs/plugins.md), and a tool lacking the protocol's method is never
called through it."""

from __future__ import annotations

from runner.engine.protocols import ClarifiableTool, ConditionalDecider, ToolEnv
from runner.engine.results import ToolResult
from runner.engine.task import Task

from .kit import FakeTool, coordinator, make_config, subtasks


def conditional_split(**decides):
    return coordinator(
        "split",
        subtasks(
            Task("1.1", "a", required_tool_names={"t"}),
            Task("1.2", "b", required_tool_names={"t"}, conditional=True),
        ),
        activation="coordinator_only",
        **decides,
    )


def test_c16_a_coordinator_implementing_conditional_decider_decides_its_subtask(world):
    split = conditional_split(decide=lambda parent, sub, completed: "skip")
    assert isinstance(split, ConditionalDecider)
    w = world(split, FakeTool("t", activation="coordinator_only"))
    w.run("q")
    assert [call.task_no for call in w.calls("split", "decide_conditional")] == ["1.2"]
    assert w.ran() == [("1.1", "t")]
    [decision] = w.events("subtask.decision")
    assert (decision["decision"], decision["decided_by"]) == ("skip", "split")


def test_c3_a_coordinator_lacking_decide_conditional_runs_its_conditional_subtask(world):
    split = conditional_split()
    assert not isinstance(split, ConditionalDecider)
    w = world(split, FakeTool("t", activation="coordinator_only"))
    w.run("q")
    assert w.ran() == [("1.1", "t"), ("1.2", "t")]
    [decision] = w.events("subtask.decision")
    assert decision["decision"] == "run" and "(C3)" in decision["reason"]


def test_c24_a_clarifiable_tool_is_continued_with_the_answer(world):
    asker = FakeTool(
        "asker",
        lambda call: (
            ToolResult.clarification("Which model?")
            if call.clarification is None
            else ToolResult.context(f"model {call.clarification.answer}")
        ),
        activation="always",
    )
    assert isinstance(asker, ClarifiableTool)
    w = world(asker)
    assert w.run("q").outcome == "clarification"
    assert w.run("the X2").outcome == "answer"
    [continued] = w.calls("asker", "execute_with_clarification")
    assert continued.clarification is not None and continued.clarification.answer == "the X2"


class AsksOnly:
    """A tool that asks a question but has no way to be given the answer (no C24 method)."""

    def __init__(self) -> None:
        self.name = "asker"
        self.config = make_config("asker", activation="always")
        self.log: list = []

    def execute(self, text: str, env: ToolEnv) -> ToolResult:
        return ToolResult.clarification("Which model?")


def test_c24_a_tool_lacking_execute_with_clarification_is_not_continued(world):
    asker = AsksOnly()
    assert not isinstance(asker, ClarifiableTool)
    w = world(asker)
    assert w.run("q").outcome == "clarification"
    result = w.run("the X2")  # the tool fails, never called without the answer; the round goes on
    assert result.stats["failed"]["tools"] == 1 and result.degraded
    [warning] = result.warnings
    assert "has no execute_with_clarification(...) to continue it" in warning
