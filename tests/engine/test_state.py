"""Session state, trace and result formats."""

from __future__ import annotations

import json

import pytest

from runner.engine.results import Clarification, PromptAndContext, ToolResult
from runner.engine.state import SessionState
from runner.engine.task import ContextBuffer, Task, TaskStatus, ToolStatus
from runner.sources import Source
from runner.trace import Trace, TraceError, validate_events

from .kit import FakeTool, asks, coordinator, subtasks, suitable


def _full_task() -> Task:
    leaf = Task(
        "1.1",
        "leaf",
        ["leaf"],
        "question",
        required_tool_names={"demo.a", "b"},
        conditional=True,
        owner_coordinator_name="split",
        applied_coordinator_names={"split", "other"},
        prompt_context="parent",
        status=TaskStatus.SKIPPED,
        tool_status={"b": ToolStatus.FAILED},
        loop_vars={"item": {"model": "XR-200", "n": [1, 2]}},
        template_name="per_model",
        depth=1,
        planned_tools=["b"],
        tool_reasons={"b": "forced"},
    )
    return Task(
        "1",
        "root",
        ["root"],
        "question",
        sub_tasks=[leaf],
        status=TaskStatus.WAITING,
        tool_status={"a": ToolStatus.ASKED},
        planned_tools=[],
        fallback="deep",
    )


def test_session_state_survives_json_without_loss():
    buffer = ContextBuffer()
    buffer.add(
        "1.1",
        "b",
        PromptAndContext("text", "ctx", True, (Source("m.md", 2, "T", "H"),), {"pages": [1, 2]}),
    )
    buffer.add("1", "a", PromptAndContext("text", ""))
    state = SessionState(
        "s",
        "/p.yaml",
        "h",
        _full_task(),
        buffer,
        Clarification("1", "a", "Which?", "this", 2),
        [Clarification("1", "a", "Which?", "that", 1)],
        3,
        "msg",
        [{"round": 1, "message": "m", "outcome": "clarification", "question": "?"}],
    )
    data = json.loads(json.dumps(state.to_json()))
    again = SessionState.from_json(data)
    assert again.to_json() == state.to_json()
    assert again.root.sub_tasks[0].loop_vars == {"item": {"model": "XR-200", "n": [1, 2]}}
    assert again.buffer.keys() == ["1.1:b", "1:a"]  # order kept


def test_a_state_of_another_format_is_refused_with_a_fix():
    with pytest.raises(ValueError, match="start a new session"):
        SessionState.from_json({"format": 99})


def test_a_task_snapshot_restores_in_place_keeping_object_identity():
    root = _full_task()
    leaf = root.sub_tasks[0]
    snapshot = root.snapshot()
    before = root.to_json()
    root.task_prompt = "changed"
    leaf.loop_vars["item"]["model"] = "other"
    root.sub_tasks.append(Task("1.2", "new"))
    root.applied_coordinator_names.add("x")
    snapshot.restore()
    assert root.to_json() == before
    assert root.sub_tasks[0] is leaf


def test_trace_events_are_numbered_and_validated():
    trace = Trace()
    trace.emit("warning", "1", message="careful")
    trace.emit("round.end", None, outcome="answer", error=None, sources=0)
    assert [e["seq"] for e in trace.events] == [1, 2]
    assert trace.validate() == []
    broken = [{"seq": 1, "ms": 0, "event": "tool.run", "task": "1", "tool": "a"}]
    problems = validate_events(broken)
    assert problems and "key" in " ".join(problems)


def test_unknown_trace_events_are_refused_with_the_known_names():
    with pytest.raises(TraceError, match=r"round\.start"):
        Trace().emit("tool.did_something")


def test_the_trace_is_written_as_json_lines(tmp_path, world):
    w = world(FakeTool("a", activation="always"))
    result = w.run("q")
    path = tmp_path / "trace.jsonl"
    result.trace.write_jsonl(path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["event"] == "round.start"
    assert lines[-1]["event"] == "round.end"
    assert validate_events(lines) == []


def test_llm_calls_appear_in_the_trace_and_the_stats(world):
    w = world(FakeTool("a"), script=[suitable(yes=["a"])])
    result = w.run("q")
    calls = w.events("llm.call")
    assert [c["purpose"] for c in calls] == ["suitability", "answer"]
    activation = w.events("activation")[0]
    assert calls[0]["seq"] < activation["seq"] and calls[0]["task"] == "1"
    assert result.stats["llm_calls"] == 2
    assert set(result.stats["by_purpose"]) == {"suitability", "answer"}
    assert result.stats["tokens"] > 0


def test_stats_count_only_the_calls_of_their_own_round(world):
    w = world(FakeTool("asker", asks("?")), script=[suitable(yes=["asker"])])
    first = w.run("q")
    second = w.run("a")
    assert first.stats["by_purpose"].keys() == {"suitability"}
    assert second.stats["by_purpose"].keys() == {"answer"}


def test_tools_add_trace_events_through_their_env(world):
    def noisy(call):
        call.env.trace("warning", message="table is old")
        return "ok"

    w = world(FakeTool("noisy", noisy, activation="always"))
    w.run("q")
    [warning] = w.events("warning")
    assert warning == {**warning, "task": "1", "message": "table is old"}


def test_the_result_tree_marks_skipped_subtasks_and_tools_with_their_reasons(world):
    split = coordinator(
        "split",
        subtasks(
            Task("1.1", "a", required_tool_names={"t"}),
            Task("1.2", "b", required_tool_names={"t"}, conditional=True),
        ),
        decide=lambda p, n, d: "skip",
        activation="coordinator_only",
    )
    w = world(
        split,
        FakeTool("t", activation="coordinator_only"),
        FakeTool("g", ToolResult.guaranteed_context("sure"), activation="always"),
    )
    tree = w.run("q").tasks
    assert [c["task_no"] for c in tree["children"]] == ["1.1", "1.2"]
    assert tree["children"][1]["skipped"] is True and tree["children"][1]["tools"] == []
    assert tree["children"][0]["tools"][0] == {
        "name": "t",
        "key": "1.1:t",
        "status": "done",
        "reason": "forced",
        "items": 1,
        "sources": 0,
        "guaranteed": False,
    }
    assert tree["tools"][0]["guaranteed"] is True and tree["tools"][0]["reason"] == "always"


def test_an_llm_failure_outside_any_tool_ends_the_round_with_an_error(world):
    w = world(FakeTool("a"))  # no suitability rule: the scripted LLM has no reply
    result = w.run("q")
    assert result.outcome == "error"
    assert "suitability" in result.error
    assert w.state.root.status is TaskStatus.FAILED
    assert w.state.history[-1]["outcome"] == "error"


def test_history_records_each_finished_round(world):
    w = world(FakeTool("asker", asks("Which?"), activation="always"))
    w.run("q")
    w.run("that one")
    assert w.state.history == [
        {"round": 1, "message": "q", "outcome": "clarification", "question": "Which?"},
        {"round": 2, "message": "that one", "outcome": "answer", "answer": "the final answer"},
    ]
