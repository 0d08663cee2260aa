"""Every LLM call is charged to the task it was made for: the trace's `llm.call` events, the
stats by task and `runner explain --session` name that task, whatever the nesting, a parallel
group running its subtasks concurrently, or a parent's call made after its subtasks closed.

The calls here are real calls through the LLM layer (the scripted provider): a `Talker` tool
makes `calls_for(task_no)` of them, a different number per task, so a call charged to the wrong
task changes the counts."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runner.app import Runtime
from runner.config.model import ScriptRule
from runner.engine.protocols import ToolEnv
from runner.engine.results import SubtaskDecision, ToolResult
from runner.engine.state import SessionState
from runner.engine.task import Task
from runner.llm.types import LLMRequest, Purpose
from runner.trace import Trace

from .kit import Call, FakeTool, World, check_round, coordinator, subtasks, suitable

TOOL_REPLY = ScriptRule(reply="spoken", purpose="tool")


def calls_for(task_no: str) -> int:
    """How many calls the talker makes on a task: 1 + the sum of its number's parts, so that
    siblings and parents differ (1 → 2, 1.1 → 3, 1.2 → 4, 1.1.2 → 5 ...)."""
    return sum(int(part) for part in task_no.split("."))


class Talker(FakeTool):
    """A tool that makes `calls_for(task)` LLM calls, yielding to the event loop between them
    so that the subtasks of a parallel group interleave their calls."""

    async def execute(self, text: str, env: ToolEnv) -> ToolResult:
        self._record(Call(self.name, "execute", env.task.task_no, text, env=env, task=env.task))
        for _ in range(calls_for(env.task.task_no)):
            await asyncio.sleep(0)
            await env.llm.complete(
                LLMRequest(Purpose.TOOL, f"say something on {env.task.task_no}", tool=self.name)
            )
        return ToolResult.context(f"talked on {env.task.task_no}")


def forced(task_no: str, *sub: Task) -> Task:
    task = Task(task_no, f"part {task_no}", required_tool_names={"talker"})
    task.sub_tasks = list(sub)
    return task


def charged(world: World, purpose: str) -> Counter[str]:
    return Counter(e["task"] for e in world.events("llm.call") if e["purpose"] == purpose)


def two_forced_subtasks_then_a_suitability_call(world) -> World:
    """1.1 and 1.2 forced onto the talker; the root then asks the suitability of `a`."""
    split = coordinator(
        "split", subtasks(forced("1.1"), forced("1.2")), activation="coordinator_only"
    )
    return world(
        split,
        Talker("talker", activation="coordinator_only"),
        FakeTool("a"),
        script=[suitable(yes=["a"]), TOOL_REPLY],
    )


def test_c13_a_parents_suitability_call_after_its_forced_subtasks_is_charged_to_the_parent(
    world,
):
    w = two_forced_subtasks_then_a_suitability_call(world)
    w.run("q")
    # the suitability call is made once the subtasks closed, for the root alone: a forced task
    # is never asked (C13)
    assert charged(w, "suitability") == {"1": 1}
    [activation] = [e for e in w.events("activation") if e["task"] == "1"]
    [call] = [e for e in w.events("llm.call") if e["purpose"] == "suitability"]
    assert call["seq"] < activation["seq"]


def test_every_tool_call_is_charged_to_the_task_it_ran_on_across_nesting(world):
    tree = [forced("1.1", forced("1.1.1"), forced("1.1.2")), forced("1.2")]
    w = world(
        coordinator("split", subtasks(*tree), activation="coordinator_only"),
        Talker("talker", activation="coordinator_only"),
        script=[TOOL_REPLY],
    )
    w.run("q")
    expected = {task: calls_for(task) for task in ("1.1.1", "1.1.2", "1.1", "1.2")}
    assert charged(w, "tool") == expected


def test_calls_of_a_parallel_group_are_charged_to_the_subtask_that_made_them(world):
    split = coordinator(
        "split",
        subtasks(forced("1.1"), forced("1.2"), forced("1.3")),
        activation="coordinator_only",
    )
    split.parallel_subtasks = True  # type: ignore[attr-defined]
    w = world(split, Talker("talker", activation="coordinator_only"), script=[TOOL_REPLY])
    w.run("q")
    assert charged(w, "tool") == {"1.1": 2, "1.2": 3, "1.3": 4}


def test_the_root_classification_and_the_final_answer_are_charged_to_the_root(world):
    from runner.config.model import PromptType, PromptTypes

    types = PromptTypes(default="a", classify="llm", types=(PromptType("a"), PromptType("b")))
    w = world(
        FakeTool("t", activation="always"),
        script=[ScriptRule(reply={"type": "a"}, purpose="prompt_type")],
        prompt_types=types,
    )
    w.run("q")
    assert charged(w, "prompt_type") == {"1": 1}
    assert charged(w, "answer") == {"1": 1}


def test_a_conditional_decision_is_charged_to_the_subtask_it_decides(world):
    class Deciding(FakeTool):
        async def decide_conditional(self, parent, sub, completed, env) -> SubtaskDecision:
            await env.llm.complete(LLMRequest(Purpose.TOOL, "decide", tool=self.name))
            return SubtaskDecision.RUN

        def decompose(self, task: Task, env: ToolEnv) -> Task:
            first, second = forced("1.1"), forced("1.2")
            second.conditional = True
            task.sub_tasks += [first, second]
            return task

    w = world(
        Deciding("owner", activation="coordinator_only"),
        Talker("talker", activation="coordinator_only"),
        script=[TOOL_REPLY],
    )
    w.run("q")
    assert charged(w, "tool") == {"1.1": 2, "1.2": 3 + 1}


class AskingTalker(Talker):
    """Asks first; continues the clarification in a later round with its calls (C24)."""

    def execute(self, text: str, env: ToolEnv) -> ToolResult:  # type: ignore[override]
        self._record(Call(self.name, "execute", env.task.task_no, text, env=env, task=env.task))
        return ToolResult.clarification("Which one?")

    async def execute_with_clarification(  # type: ignore[override]
        self, text: str, clarification: Any, env: ToolEnv
    ) -> ToolResult:
        return await Talker.execute(self, text, env)


def test_c24_calls_continuing_a_clarification_are_charged_to_the_task_that_asked(world):
    split = coordinator(
        "split", subtasks(forced("1.1"), forced("1.2")), activation="coordinator_only"
    )
    w = world(
        split,
        AskingTalker("talker", activation="coordinator_only"),
        script=[TOOL_REPLY],
    )
    assert w.run("q").outcome == "clarification"  # 1.1 asks
    assert w.run("the first").outcome == "clarification"  # 1.1 continues, 1.2 asks
    assert charged(w, "tool") == {"1.1": calls_for("1.1")}
    w.run("the second")
    assert charged(w, "tool") == {"1.2": calls_for("1.2")}
    assert charged(w, "answer") == {"1": 1}


def test_stats_count_the_calls_by_the_task_they_were_made_for(world):
    w = two_forced_subtasks_then_a_suitability_call(world)
    result = w.run("q")
    by_task = result.stats["by_task"]
    assert {task: entry["calls"] for task, entry in by_task.items()} == {
        "1.1": 2,
        "1.2": 3,
        "1": 2,  # its suitability call and the final answer
    }
    assert by_task["1"]["by_purpose"] == {"suitability": 1, "answer": 1}
    assert "suitability" not in by_task["1.1"]["by_purpose"]
    assert sum(entry["calls"] for entry in by_task.values()) == result.stats["llm_calls"]


# --- the property: for random trees, every call's task is the task that made it -------------

trees = st.recursive(
    st.just([]),
    lambda children: st.lists(children, min_size=1, max_size=3),
    max_leaves=8,
)


def build(children: list[Any], parent: str) -> list[Task]:
    made = []
    for index, grandchildren in enumerate(children, 1):
        task_no = f"{parent}.{index}"
        made.append(forced(task_no, *build(grandchildren, task_no)))
    return made


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=trees, parallel=st.booleans())
def test_every_llm_call_is_charged_to_the_task_that_made_it_for_random_trees(
    world, shape, parallel
):
    tree = build(shape, "1")
    split = coordinator("split", subtasks(*tree), activation="coordinator_only")
    split.parallel_subtasks = parallel  # type: ignore[attr-defined]
    w = world(
        split,
        Talker("talker", activation="coordinator_only"),
        FakeTool("a"),
        script=[suitable(yes=["a"]), TOOL_REPLY],
        limits=_deep_limits(),
    )
    result = w.run("q")
    made = [t.task_no for t in w.state.root.walk() if t.task_no != "1"]
    assert charged(w, "tool") == {task: calls_for(task) for task in made}
    assert charged(w, "suitability") == {"1": 1}  # forced subtasks are never asked (C13)
    assert all(e["task"] is not None for e in w.events("llm.call"))
    stats = {task: entry["calls"] for task, entry in result.stats["by_task"].items()}
    assert stats == Counter(e["task"] for e in w.events("llm.call"))


def _deep_limits() -> Any:
    from runner.config.model import Limits

    return Limits(max_depth=6)


MANUAL = {
    "kettle.md": "# Kettle\n\nThe kettle light glows while the water heats.\n\n"
    "# Descaling\n\nDescale the kettle every four weeks with citric acid.\n",
    "toaster.md": "# Toaster\n\nThe toaster warranty lasts three years from purchase.\n",
}


def _deep_fallback_pipeline(tmp_path: Path) -> Path:
    """A retrieval tool, a deep search with a neighbour search and a full search, and an LLM
    gatekeeper that finds the root's context not enough (C27–C29)."""
    (tmp_path / "manual").mkdir()
    for name, text in MANUAL.items():
        (tmp_path / "manual" / name).write_text(text, encoding="utf-8")
    found = {"found": True, "answer": "Three years."}
    pipeline = {
        "version": 1,
        "domain": "home",
        "llm": {
            "provider": "scripted",
            "script": [
                {"purpose": "gatekeeper", "reply": {"enough": False, "reason": "thin"}},
                {"purpose": "missing_info", "reply": {"missing": ["toaster warranty"]}},
                {"purpose": "read_page", "prompt": "three years", "reply": found},
                {"purpose": "read_page", "reply": {"found": False, "answer": ""}},
                {"purpose": "compose", "reply": "The toaster warranty is three years."},
                {"purpose": "answer", "reply": "Three years."},
            ],
        },
        "corpora": {"manual": {"path": "manual", "pages": {"max_words": 20}}},
        "retrieval_tool": "rag",
        "deep_fallback": {"coordinator": "deep"},
        "tools": [
            {"name": "rag", "kind": "retrieve", "corpus": "manual", "top_k": 1},
            {"name": "search", "kind": "search", "corpus": "manual", "top_k": 2},
            {"name": "near", "kind": "neighbor_search", "corpus": "manual"},
            {
                "name": "deep",
                "kind": "deep_search",
                "search_tool": "search",
                "neighbor_search_tool": "near",
            },
        ],
    }
    path = tmp_path / "home.yaml"
    path.write_text(yaml.safe_dump(pipeline, sort_keys=False), encoding="utf-8")
    return path


def test_c28_the_deep_fallbacks_calls_are_charged_to_the_root_and_to_its_search_subtasks(
    tmp_path: Path,
) -> None:
    """The gatekeeper, the missing-information call and the composition are made for the
    root; each page a search subtask reads is read for that subtask, never for the root."""
    trace = Trace()
    with Runtime.open(_deep_fallback_pipeline(tmp_path)) as runtime:
        state = SessionState.new("deep", runtime.pipeline)
        result = asyncio.run(
            runtime.orchestrator().run_round(state, "toaster warranty?", trace=trace)
        )
    check_round(result, state)
    calls = [(e["task"], e["purpose"]) for e in trace.of("llm.call")]
    on_root = [purpose for task, purpose in calls if task == "1"]
    assert on_root == ["gatekeeper", "missing_info", "compose", "answer"]
    reads = Counter(task for task, purpose in calls if purpose == "read_page")
    assert set(reads) <= {"1.1.n", "1.1.s"} and reads["1.1.s"] >= 1
    assert {task for task, _ in calls} == set(result.stats["by_task"])
