"""A round where something failed never looks like a clean one: every failed tool, coordinator
(decomposition or conditional decision) and task is a warning of the result naming the task,
what failed and why, counts in `stats.failed`, and makes the round `degraded`. A coordinator
whose decomposition failed is not activated on that task (it would answer as if its subtasks
had run). A task forced onto tools that are all unknown fails (C13–C15)."""

from __future__ import annotations

from runner.config.model import DeepFallback, Gatekeeper, ScriptRule
from runner.engine.results import ToolResult
from runner.engine.task import Task, TaskStatus, ToolStatus
from runner.llm.types import Purpose

from .kit import Call, FakeTool, coordinator, subtasks, suitable, task_of


def broken(call: Call) -> ToolResult:
    raise RuntimeError("the price server is down")


def fails_to_split(task: Task, env) -> None:
    raise ValueError("the extraction reply was unusable")


def test_a_clean_round_is_not_degraded(world):
    result = world(FakeTool("a", activation="always")).run("q")
    assert result.stats["failed"] == {"tools": 0, "coordinators": 0, "tasks": 0, "replies": 0}
    assert result.degraded is False and result.to_json()["degraded"] is False
    assert result.warnings == []


def test_a_failed_tool_is_a_warning_with_task_tool_and_cause_and_counts(world):
    w = world(FakeTool("prices", broken, activation="always"), FakeTool("b", activation="always"))
    result = w.run("q")
    assert result.outcome == "answer"  # the round went on
    assert result.warnings == [
        "task 1: tool 'prices' failed (RuntimeError: the price server is down); the round went "
        "on without its result"
    ]
    assert result.stats["failed"]["tools"] == 1
    assert result.degraded is True and result.to_json()["degraded"] is True
    [warning] = w.events("warning")
    assert warning["task"] == "1"


def test_c10_a_failed_decomposition_is_a_warning_and_counts(world):
    w = world(
        coordinator("compare", fails_to_split, activation="coordinator_only"),
        FakeTool("a", activation="always"),
    )
    result = w.run("q")
    [warning] = result.warnings
    assert warning.startswith("task 1: coordinator 'compare' failed to decompose it (ValueError")
    assert "restored (C10)" in warning
    assert result.stats["failed"]["coordinators"] == 1 and result.degraded


def test_c10_a_coordinator_whose_decomposition_failed_is_not_activated_on_that_task(world):
    w = world(
        coordinator("compare", fails_to_split, after=True, activation="always"),
        FakeTool("a", activation="always"),
    )
    result = w.run("compare X and Y")
    assert w.ran() == [("1", "a")]  # its own tool never writes the comparison
    [activation] = w.events("activation")
    assert [item["tool"] for item in activation["activated"]] == ["a"]
    [compare] = [tool for tool in result.tasks["tools"] if tool["name"] == "compare"]
    assert (compare["status"], compare["reason"]) == ("failed", "decompose_failed")


def test_c10_nor_is_it_put_to_the_suitability_test_of_that_task(world):
    w = world(
        coordinator("compare", fails_to_split),
        FakeTool("a"),
        script=[suitable(yes=["a", "compare"])],
    )
    w.run("q")
    [request] = w.asked(Purpose.SUITABILITY)
    assert [tool["name"] for tool in request.facts["tools"]] == ["a"]
    assert ("1", "compare") not in w.ran()


def test_c28_a_deep_fallback_whose_decomposition_failed_writes_no_supplement(world):
    deep = coordinator(
        "deep", fails_to_split, consumer=True, after=True, activation="coordinator_only"
    )
    w = world(
        FakeTool("rag", "too little"),
        deep,
        retrieval_tool="rag",
        deep_fallback=DeepFallback(coordinator="deep", gatekeeper=Gatekeeper(mode="llm")),
        script=[ScriptRule(reply={"enough": False, "reason": "thin"}, purpose="gatekeeper")],
    )
    result = w.run("q")
    assert w.ran() == [("1", "rag")]
    assert result.outcome == "answer" and result.degraded
    assert task_of(w, "1").tool_status["deep"] is ToolStatus.FAILED


def test_c19_a_failed_conditional_decision_is_a_warning_and_the_subtask_runs(world):
    def raises(parent, sub, completed):
        raise KeyError("no such key")

    made = Task("1.1", "maybe", required_tool_names={"a"}, conditional=True)
    split = coordinator("split", subtasks(made), decide=raises, activation="coordinator_only")
    w = world(split, FakeTool("a", activation="coordinator_only"))
    result = w.run("q")
    assert ("1.1", "a") in w.ran()
    [warning] = result.warnings
    assert warning.startswith("task 1.1: the conditional decision of coordinator 'split' failed")
    assert result.stats["failed"]["coordinators"] == 1


def test_c15_a_task_whose_required_tools_are_all_unknown_fails_with_a_warning(world):
    split = coordinator(
        "split",
        subtasks(
            Task("1.1", "ghostly", required_tool_names={"ghost", "demo.phantom"}),
            Task("1.2", "real", required_tool_names={"b"}),
        ),
        activation="coordinator_only",
    )
    w = world(split, FakeTool("b", activation="coordinator_only"))
    result = w.run("q")
    assert task_of(w, "1.1").status is TaskStatus.FAILED
    assert ("1.2", "b") in w.ran() and result.outcome == "answer"  # the round goes on
    [warning] = result.warnings
    assert warning == (
        "task 1.1: it requires only tools the domain 'demo' does not have ('demo.phantom', "
        "'ghost'): forced activation has nothing to run, so the task failed (C13–C15)"
    )
    [activation] = [e for e in w.events("activation") if e["task"] == "1.1"]
    assert activation["activated"] == [] and activation["ignored"] == ["demo.phantom", "ghost"]
    assert w.asked(Purpose.SUITABILITY) == []  # no fallback to the suitability test
    assert result.stats["failed"]["tasks"] == 1 and result.degraded
    [node] = result.tasks["children"][:1]
    assert node["status"] == "failed"


def test_c15_a_partly_unknown_required_set_ignores_the_unknown_names_with_a_warning(world):
    split = coordinator(
        "split",
        subtasks(Task("1.1", "half", required_tool_names={"b", "ghost"})),
        activation="coordinator_only",
    )
    w = world(split, FakeTool("b", activation="coordinator_only"))
    result = w.run("q")
    assert ("1.1", "b") in w.ran()
    assert task_of(w, "1.1").status is TaskStatus.DONE
    [warning] = result.warnings
    assert "'ghost'" in warning and "ignored (C15)" in warning
    assert not result.degraded  # nothing failed: the task ran what it could name


def test_the_failures_are_counted_in_words():
    from runner.engine.outcome import RoundResult

    def counted(tools: int, coordinators: int, tasks: int) -> str:
        failed = {"tools": tools, "coordinators": coordinators, "tasks": tasks}
        return RoundResult("s", 1, "answer", stats={"failed": failed}).failures()

    assert counted(0, 0, 0) == ""
    assert counted(1, 0, 0) == "1 tool failed"
    assert counted(2, 1, 0) == "2 tools and 1 coordinator failed"
    assert counted(1, 2, 3) == "1 tool, 2 coordinators and 3 tasks failed"


def test_the_warnings_of_a_parallel_group_are_in_list_order_whatever_finished_first(world):
    import asyncio

    from runner.engine.protocols import ToolEnv

    class FailsLate(FakeTool):
        """Fails on every task; on 1.1 only once 1.2 has failed."""

        released: asyncio.Event | None = None

        async def execute(self, text: str, env: ToolEnv) -> ToolResult:
            if self.released is None:
                self.released = asyncio.Event()
            if env.task.task_no == "1.1":
                await self.released.wait()
            else:
                self.released.set()
            raise RuntimeError(f"down on {env.task.task_no}")

    made = [Task(n, f"part {n}", required_tool_names={"late"}) for n in ("1.1", "1.2")]
    split = coordinator("split", subtasks(*made), activation="coordinator_only")
    split.parallel_subtasks = True  # type: ignore[attr-defined]
    result = world(split, FailsLate("late", activation="coordinator_only")).run("q")
    assert [warning.split(":")[0] for warning in result.warnings] == ["task 1.1", "task 1.2"]
    assert result.stats["failed"]["tools"] == 2
