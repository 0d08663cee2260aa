"""An unexpected exception never ends a round as a bare one-liner (issue 29): the round's error
names the step it happened in (the LLM purpose the engine asked for, the gatekeeper's rule;
the task for the engine's own), the trace's error event carries the traceback, credentials
hidden; a tool's, a coordinator's and a conditional decision's exceptions keep theirs too."""

from __future__ import annotations

from typing import Any

import pytest

from runner.config.model import DeepFallback, Gatekeeper
from runner.engine.results import PromptAndContext, ToolResult
from runner.engine.task import Task

from .kit import FakeTool, coordinator, task_of


def crash_in_cited_answer(*_args: Any, **_kwargs: Any) -> Any:
    raise TypeError("unhashable type: 'dict'")


def ended(result: Any) -> dict[str, Any]:
    [end] = result.trace.of("round.end")
    return end


def test_a_crash_in_the_final_answer_names_its_purpose_and_the_trace_keeps_the_traceback(
    world, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr("runner.llm.prompts.cited_answer", crash_in_cited_answer)
    w = world(FakeTool("rag", ToolResult.context("page text")), retrieval_tool="rag")
    result = w.run("what filter fits?")
    assert result.outcome == "error"
    assert result.error == "answer (LLM purpose) failed: TypeError: unhashable type: 'dict'"
    end = ended(result)
    assert end["error"] == result.error
    assert end["traceback"].startswith("Traceback (most recent call last):")
    assert "in crash_in_cited_answer" in end["traceback"]
    assert end["traceback"].rstrip().endswith("TypeError: unhashable type: 'dict'")
    assert isinstance(result.exception, TypeError)
    assert "traceback" not in result.to_json()  # the result's error stays one line


def test_a_crash_in_the_suitability_call_names_that_purpose(world):
    w = world(FakeTool("price"))

    async def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise KeyError("price")

    w.prompts.suitability = broken  # type: ignore[method-assign]
    result = w.run("what does it cost?")
    assert result.error == "suitability (LLM purpose) failed: KeyError: 'price'"
    assert "in broken" in ended(result)["traceback"]


def no_verdict(*_args: Any, **_kwargs: Any) -> Any:
    raise ValueError("no verdict")


def with_a_deep_fallback(world, mode: str):
    deep = coordinator("deep", lambda task, env: None, activation="coordinator_only")
    fallback = DeepFallback("deep", (), Gatekeeper(mode=mode))
    return world(FakeTool("rag", "page"), deep, retrieval_tool="rag", deep_fallback=fallback)


def test_c27_a_crash_in_the_llm_gatekeeper_names_its_purpose(world):
    w = with_a_deep_fallback(world, "llm")

    async def gatekeeper(*args: Any, **kwargs: Any) -> Any:
        return no_verdict()

    w.prompts.gatekeeper = gatekeeper  # type: ignore[method-assign]
    assert w.run("q").error == "gatekeeper (LLM purpose) failed: ValueError: no verdict"


def test_c27_a_crash_in_the_rule_gatekeeper_names_its_mode(world, monkeypatch):
    monkeypatch.setattr("runner.engine.answer.rule_gate", no_verdict)
    w = with_a_deep_fallback(world, "rule")
    assert w.run("q").error == "gatekeeper (rule mode) failed: ValueError: no verdict"


def test_a_crash_in_the_engine_s_own_code_names_the_task_it_was_on(world, monkeypatch):
    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise AttributeError("no such thing")

    monkeypatch.setattr("runner.engine.execution.take_result", broken)
    w = world(FakeTool("rag"), retrieval_tool="rag")
    result = w.run("q")
    assert result.error == "the orchestrator failed on task 1: AttributeError: no such thing"
    assert "in broken" in ended(result)["traceback"]


def test_a_traceback_hides_the_credentials_an_exception_carries(world, monkeypatch):
    def leaky(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("the server said: Authorization: Bearer sk-live1234567890abcdef")

    monkeypatch.setattr("runner.llm.prompts.cited_answer", leaky)
    result = world(FakeTool("rag", "page text"), retrieval_tool="rag").run("q")
    traceback = ended(result)["traceback"]
    assert "sk-live1234567890abcdef" not in traceback and "Bearer [redacted]" in traceback


def test_a_failing_tool_s_error_event_carries_its_traceback(world):
    def boom(call):
        raise RuntimeError("table missing")

    w = world(FakeTool("bad", boom, activation="always"))
    result = w.run("q")
    assert result.outcome == "answer" and result.degraded
    [error] = w.events("tool.error")
    assert error["error"] == "RuntimeError: table missing"
    assert "in boom" in error["traceback"]
    assert "tool 'bad' failed (RuntimeError: table missing)" in result.warnings[0]


def test_c10_a_failing_coordinator_s_error_event_carries_its_traceback(world):
    def half_then_fail(task: Task, env) -> None:
        raise RuntimeError("boom")

    w = world(coordinator("broken", half_then_fail, activation="coordinator_only"))
    w.run("q")
    [error] = w.events("coordinator.error")
    assert "in half_then_fail" in error["traceback"]


def test_c19_a_failing_decision_s_event_carries_its_traceback(world):
    def split(task: Task, env) -> None:
        task.sub_tasks += [Task("1.1", "first"), Task("1.2", "second", conditional=True)]

    def undecided(parent, nxt, done):
        raise LookupError("cannot tell")

    owner = coordinator("owner", split, decide=undecided, activation="coordinator_only")
    w = world(owner, FakeTool("rag"), retrieval_tool="rag")
    w.run("q")
    [decision] = w.events("subtask.decision")
    assert decision["decision"] == "run" and "in undecided" in decision["traceback"]
    assert task_of(w, "1.2").status.value == "done"


def test_a_result_carrying_a_retrieval_s_evidence_can_be_hashed():
    """A tool's data is JSON (a retrieval's evidence is a dict): it is no part of a result's
    hash, so results can be put in sets and dict keys as passages can (issue 29's crash)."""
    evidence = {"evidence": {"first_page_cosine": 0.61, "agreement": 2, "top_k": 3}}
    entry = PromptAndContext("q", "page text", data=evidence)
    result = ToolResult.context("page text", **evidence)
    assert len({entry, PromptAndContext("q", "page text", data=dict(evidence))}) == 1
    assert list(dict.fromkeys([result, result])) == [result]
    assert entry != PromptAndContext("q", "page text")  # the data still tells results apart


def test_a_crash_in_a_parallel_subtask_names_its_purpose_too(world):
    """A subtask of a `decompose.parallel` group runs in an asyncio task of its own; what failed
    there reaches the round with the step it failed in."""

    def split(task: Task, env) -> None:
        if task.task_no == "1":
            task.sub_tasks += [Task("1.1", "first part"), Task("1.2", "second part")]

    group = coordinator("split", split, activation="coordinator_only")
    group.parallel_subtasks = True  # type: ignore[attr-defined]
    w = world(group, FakeTool("price"))

    async def broken(text: str, *_args: Any) -> Any:
        raise KeyError(text)

    w.prompts.suitability = broken  # type: ignore[method-assign]
    result = w.run("two parts")
    assert result.error == "suitability (LLM purpose) failed: KeyError: 'first part'"
    assert "in broken" in ended(result)["traceback"]
