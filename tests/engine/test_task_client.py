"""An LLM call is recorded in the round that made it, for the task it was made for, and a
streamed answer goes to that round's watcher: the engine hands every tool run and every purpose
a client bound to its round's call list, its task and the face's answer stream
(runner.llm.bound.TaskClient), so nothing about a round is shared through the process."""

from __future__ import annotations

import asyncio
from collections import Counter

from runner.config.model import ScriptRule
from runner.engine.protocols import ToolEnv
from runner.engine.results import ToolResult
from runner.engine.state import SessionState
from runner.engine.task import Task
from runner.llm.bound import TaskClient, round_client
from runner.llm.types import LLMRequest, Purpose

from .kit import ANSWER, FakeTool, check_round, coordinator, subtasks

TOOL_REPLY = ScriptRule(reply="spoken", purpose="tool")
CALLS = {"1.1": 2, "1.2": 3}  # a different number per subtask: a call charged wrong shows


class Talker(FakeTool):
    """Makes `CALLS[task]` LLM calls (1 on the root), noting the task of each as it makes it."""

    made: list[str]

    async def execute(self, text: str, env: ToolEnv) -> ToolResult:
        for _ in range(CALLS.get(env.task.task_no, 1)):
            self.made.append(env.task.task_no)
            await env.llm.complete(LLMRequest(Purpose.TOOL, "say something", tool=self.name))
            await asyncio.sleep(0)  # the other subtask's turn
        return ToolResult.context(f"talked on {env.task.task_no}")


def talker(activation: str = "coordinator_only") -> Talker:
    tool = Talker("talker", activation=activation)
    tool.made = []
    return tool


def test_c5_two_parallel_subtasks_charge_their_interleaved_calls_to_their_own_tasks(world):
    split = coordinator(
        "split",
        subtasks(*(Task(no, f"part {no}", required_tool_names={"talker"}) for no in CALLS)),
        activation="coordinator_only",
    )
    split.parallel_subtasks = True  # type: ignore[attr-defined]
    speaker = talker()
    w = world(split, speaker, script=[TOOL_REPLY])
    result = w.run("q")
    # the two subtasks ran at once: 1.2 made a call before 1.1 made its last
    assert speaker.made.index("1.2") < len(speaker.made) - 1 - speaker.made[::-1].index("1.1")
    charged = Counter(e["task"] for e in w.events("llm.call") if e["purpose"] == "tool")
    assert charged == CALLS
    by_task = result.stats["by_task"]
    assert {task: by_task[task]["calls"] for task in CALLS} == CALLS


def test_two_rounds_at_once_on_one_client_each_count_their_own_calls(world):
    w = world(talker(activation="always"), script=[TOOL_REPLY])
    rounds = [round_client(w.client, calls=[]) for _ in range(2)]

    async def both() -> list:
        states = [SessionState.new(name, w.pipeline) for name in ("a", "b")]
        runs = [
            w.orchestrator.run_round(state, "q", llm=client)
            for state, client in zip(states, rounds, strict=True)
        ]
        results = await asyncio.gather(*runs)
        for result, state in zip(results, states, strict=True):
            check_round(result, state)
        return list(results)

    results = asyncio.run(both())
    for result, client in zip(results, rounds, strict=True):
        assert [call.purpose for call in client.calls] == ["tool", "answer"]
        assert result.stats["llm_calls"] == 2
        assert {call.task for call in client.calls} == {"1"}
    assert w.client.calls == []  # nothing of either round is kept in the shared client


def test_the_final_answer_streams_to_the_rounds_watcher_only(world):
    w = world(FakeTool("t", activation="always"))
    pieces: list[str] = []
    watched = round_client(w.client, pieces.append, calls=[])
    state = SessionState.new("watched", w.pipeline)
    result = asyncio.run(w.orchestrator.run_round(state, "q", llm=watched))
    assert result.answer == ANSWER and len(pieces) > 1
    assert "".join(pieces) == ANSWER
    assert w.run("q").answer == ANSWER  # a round nobody watches streams to no one
    assert "".join(pieces) == ANSWER


class Writer(FakeTool):
    """Writes the terminal answer with a prompt tool's call (`final`: it is the answer)."""

    async def execute(self, text: str, env: ToolEnv) -> ToolResult:
        reply = await env.prompts.tool(
            lambda facts: "write the answer", {}, tool=self.name, subject=text, final=True
        )
        return ToolResult.terminal(reply.text)


def test_a_tools_terminal_answer_streams_through_the_client_the_tool_was_handed(world):
    written = "  Descale it every four weeks.  "
    w = world(Writer("writer", activation="always"), script=[ScriptRule(reply=written)])
    pieces: list[str] = []
    state = SessionState.new("watched", w.pipeline)
    watched = round_client(w.client, pieces.append, calls=[])
    result = asyncio.run(w.orchestrator.run_round(state, "q", llm=watched))
    assert result.answer == written.strip() == "".join(pieces)  # stripped, as it is returned
    assert [(call.purpose, call.task) for call in watched.calls] == [("tool", "1")]


def test_a_task_client_records_for_its_task_in_its_rounds_list(world):
    w = world(FakeTool("t"))
    calls: list = []
    client = TaskClient(w.client, calls).for_task("1.2")
    reply = asyncio.run(client.complete(LLMRequest(Purpose.ANSWER, "q")))
    assert reply.text == ANSWER
    assert [(call.purpose, call.task) for call in calls] == [("answer", "1.2")]
    assert w.client.calls == [] and client.stats["llm_calls"] == 1
