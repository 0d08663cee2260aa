"""`decompose.parallel`: a coordinator's consecutive subtasks run concurrently, and what can be
observed stays exactly as if they had run one by one (C5–C7): the buffer's order, the first
clarifying question or terminal answer in list order, nothing completed lost.

Concurrency is proven without timing: a tool run on one subtask waits for the run on a *later*
sibling to finish, which only ever happens when they run at the same time (one by one, the wait
would time out and the tool fail).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from runner.config.model import Decompose, ToolConfig, ToolKind
from runner.engine.protocols import ToolEnv
from runner.engine.results import Clarification, SubtaskDecision, ToolResult
from runner.engine.subtasks import parallel_subtasks
from runner.engine.task import Task
from runner.llm.types import Purpose

from .kit import ANSWER, FakeConsumer, FakeTool, Reply, World, asks, coordinator, task_of

WAIT_S = 2.0  # only reached when the engine runs the siblings one by one (the test then fails)


class GatedTool(FakeTool):
    """An async tool whose first run on a task waits for its runs on the tasks `after` names."""

    def __init__(
        self,
        name: str,
        reply: Reply = None,
        after: Mapping[str, Sequence[str]] | None = None,
        **settings: Any,
    ) -> None:
        super().__init__(name, reply, **settings)
        self.after = dict(after or {})
        self._done: dict[str, asyncio.Event] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def _event(self, task_no: str) -> asyncio.Event:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # each round runs in a new loop
            self._loop, self._done = loop, {}
        return self._done.setdefault(task_no, asyncio.Event())

    async def execute(self, text: str, env: ToolEnv) -> ToolResult:  # type: ignore[override]
        task_no = env.task.task_no
        for earlier in self.after.get(task_no, ()):
            await asyncio.wait_for(self._event(earlier).wait(), WAIT_S)
        result = self._answer(self._call("execute", text, env))
        self._event(task_no).set()
        return result

    async def execute_with_clarification(  # type: ignore[override]
        self, text: str, clarification: Clarification, env: ToolEnv
    ) -> ToolResult:
        """Continuing a question (a later round) waits for nothing."""
        call = self._call("execute_with_clarification", text, env, clarification=clarification)
        return self._answer(call)


def parallel_coordinator(*subtasks: Task, **settings: Any) -> FakeTool:
    """A coordinator of the root whose subtasks may run concurrently."""

    def split(task: Task, env: ToolEnv) -> None:
        if task.task_no == "1":
            task.sub_tasks.extend(subtasks)

    tool = coordinator("split", split, activation="coordinator_only", **settings)
    tool.parallel_subtasks = True  # type: ignore[attr-defined]
    return tool


def forced(task_no: str, tool: str = "work") -> Task:
    return Task(task_no, f"part {task_no}", required_tool_names={tool})


def by_task(replies: Mapping[str, Any]) -> Reply:
    """A reply per task number (context text, or a ToolResult, or a reply function)."""

    def reply(call: Any) -> Any:
        found = replies.get(call.task_no)
        return found(call) if callable(found) else found

    return reply


def three_parts(world: Any, reply: Reply = None, after: Mapping[str, Sequence[str]] | None = None):
    """1.1, 1.2, 1.3 made by a parallel coordinator; by default 1.1 waits for 1.3 and 1.2 for
    1.3, so the last sibling finishes first."""
    work = GatedTool(
        "work",
        reply,
        after={"1.1": ["1.3"], "1.2": ["1.3"]} if after is None else after,
        activation="coordinator_only",
    )
    split = parallel_coordinator(forced("1.1"), forced("1.2"), forced("1.3"))
    return world(split, work), work


def test_parallel_subtasks_run_concurrently(world):
    w, _ = three_parts(world)
    result = w.run("three parts")
    assert result.outcome == "answer"
    assert [c.task_no for c in w.calls("work")] == ["1.3", "1.1", "1.2"]  # 1.3 finished first
    assert all(task_of(w, n).tool_status["work"].value == "done" for n in ("1.1", "1.2", "1.3"))


def test_c7_buffer_order_is_list_order_when_a_later_sibling_finishes_first(world):
    w, _ = three_parts(world)
    w.run("three parts")
    assert w.state.buffer.keys() == ["1.1:work", "1.2:work", "1.3:work"]
    (asked,) = w.asked(Purpose.ANSWER)
    assert [p["key"] for p in asked.facts["context"]] == ["1.1:work", "1.2:work", "1.3:work"]


def test_c5_trace_events_of_each_subtask_follow_in_list_order(world):
    w, _ = three_parts(world)
    w.run("three parts")
    trace = w.results[-1].trace
    assert trace is not None
    tasks = [e["task"] for e in trace.events if e["task"] in ("1.1", "1.2", "1.3")]
    assert tasks == sorted(tasks)  # each subtask's events together, in list order
    seqs = [e["seq"] for e in trace.events]
    assert seqs == list(range(1, len(seqs) + 1))


def test_c6_first_question_in_list_order_wins_and_a_later_question_is_asked_again(world):
    replies = {"1.2": asks("which version of 1.2?"), "1.3": asks("which version of 1.3?")}
    w, _ = three_parts(world, by_task(replies), after={"1.2": ["1.3"]})
    first = w.run("three parts")
    assert first.outcome == "clarification"
    assert first.question == "which version of 1.2?"
    assert w.state.pending is not None and w.state.pending.task_no == "1.2"

    second = w.run("3.12")
    assert second.outcome == "clarification"
    assert second.question == "which version of 1.3?"  # 1.3's tool ran again when reached
    assert [(c.task_no, c.method) for c in w.calls("work")] == [
        ("1.1", "execute"),
        ("1.3", "execute"),
        ("1.2", "execute"),
        ("1.2", "execute_with_clarification"),
        ("1.3", "execute"),
    ]

    third = w.run("3.13")
    assert third.outcome == "answer"
    assert w.state.buffer.keys() == ["1.1:work", "1.2:work", "1.3:work"]


def test_c25_an_earlier_terminal_answer_wins_over_a_later_question(world):
    replies = {"1.1": ToolResult.terminal("done by 1.1"), "1.3": asks("which one?")}
    w, _ = three_parts(world, by_task(replies))
    result = w.run("three parts")
    assert result.outcome == "answer"
    assert result.answer == "done by 1.1"
    assert w.state.pending is None


def test_c24_completed_later_siblings_are_not_run_again_and_keep_their_place(world):
    w, _ = three_parts(world, by_task({"1.1": asks("which one?")}), after={"1.1": ["1.3"]})
    first = w.run("three parts")
    assert first.outcome == "clarification"
    assert w.state.buffer.keys() == []  # 1.2 and 1.3 are held until 1.1 is closed
    assert [k for k, _ in task_of(w, "1.3").held] == ["1.3:work"]

    second = w.run("the first")
    assert second.outcome == "answer"
    assert [c.task_no for c in w.calls("work", "execute")] == ["1.2", "1.3", "1.1"]
    assert [c.task_no for c in w.calls("work", "execute_with_clarification")] == ["1.1"]
    assert w.state.buffer.keys() == ["1.1:work", "1.2:work", "1.3:work"]


def test_c24_held_results_survive_a_new_process(world):
    w, _ = three_parts(world, by_task({"1.1": asks("which one?")}), after={"1.1": ["1.3"]})
    w.run("three parts")
    w.reload()  # the session as stored after the round
    assert [k for k, _ in task_of(w, "1.2").held] == ["1.2:work"]
    result = w.run("the first")
    assert result.outcome == "answer"
    assert w.state.buffer.keys() == ["1.1:work", "1.2:work", "1.3:work"]


def test_c25_a_later_siblings_terminal_answer_waits_for_its_turn(world):
    replies = {"1.1": asks("which one?"), "1.3": ToolResult.terminal("done by 1.3")}
    w, _ = three_parts(world, by_task(replies), after={"1.1": ["1.3"]})
    assert w.run("three parts").outcome == "clarification"
    result = w.run("the first")
    assert result.outcome == "answer"
    assert result.answer == "done by 1.3"
    assert [c.task_no for c in w.calls("work") if c.task_no == "1.3"] == ["1.3"]  # ran once
    held = [e for e in w.events("terminal") if e.get("held")]
    assert [(e["task"], e["tool"]) for e in held] == [("1.3", "work")]


def test_c16_a_conditional_sibling_waits_for_the_earlier_ones(world):
    seen: list[list[str]] = []

    def decide(parent: Task, sub: Task, completed: Mapping[str, Any]) -> SubtaskDecision:
        seen.append(sorted(completed))
        return SubtaskDecision.SKIP

    conditional = Task("1.3", "only if needed", required_tool_names={"work"}, conditional=True)

    def split(task: Task, env: ToolEnv) -> None:
        if task.task_no == "1":
            task.sub_tasks.extend([forced("1.1"), forced("1.2"), conditional])

    split_tool = coordinator("split", split, decide=decide, activation="coordinator_only")
    split_tool.parallel_subtasks = True  # type: ignore[attr-defined]
    work = GatedTool("work", after={"1.1": ["1.2"]}, activation="coordinator_only")
    w = world(split_tool, work)
    assert w.run("parts").outcome == "answer"
    assert seen == [["1.1:work", "1.2:work"]]
    assert task_of(w, "1.3").status.value == "skipped"


def test_c20_a_subtask_sees_what_came_before_the_group_not_its_running_siblings(world):
    before = coordinator(
        "before",
        lambda task, env: task.sub_tasks.append(forced("1.1")) if task.task_no == "1" else None,
        activation="coordinator_only",
        priority=10,
    )
    split = parallel_coordinator(forced("1.2"), forced("1.3", "reader"), priority=20)
    work = GatedTool("work", after={}, activation="coordinator_only")
    reader = FakeConsumer("reader", activation="coordinator_only")
    w = world(before, split, work, reader)
    assert w.run("parts").outcome == "answer"
    (call,) = w.calls("reader")
    assert call.prior is not None
    # 1.1 closed before the group started; 1.2 had finished too, but runs beside 1.3
    assert list(call.prior) == ["1.1:work"]
    assert w.state.buffer.keys() == ["1.1:work", "1.2:work", "1.3:reader"]


def test_the_answer_is_the_same_as_one_by_one(world):
    sequential = World(
        [
            coordinator("split", lambda t, e: _three(t), activation="coordinator_only"),
            FakeTool("work", activation="coordinator_only"),
        ],
    )
    sequential.run("three parts")
    w, _ = three_parts(world)
    w.run("three parts")
    assert w.state.buffer.to_json() == sequential.state.buffer.to_json()
    assert w.results[-1].answer == sequential.results[-1].answer == ANSWER


def _three(task: Task) -> None:
    if task.task_no == "1":
        task.sub_tasks.extend([forced("1.1"), forced("1.2"), forced("1.3")])


def test_decompose_parallel_in_the_pipeline_file_makes_the_subtasks_concurrent():
    plain = ToolConfig("split", ToolKind.PROMPT, decompose=Decompose(parallel=True))
    serial = ToolConfig("split", ToolKind.PROMPT, decompose=Decompose())
    tool = FakeTool("split")
    assert parallel_subtasks(tool, plain)
    assert not parallel_subtasks(tool, serial)
