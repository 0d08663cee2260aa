"""Activation: forced tools (C13–C15a), the one suitability call, rules, the retrieval tool,
priorities and prompt types."""

from __future__ import annotations

from runner.config.model import PromptType, PromptTypes, ScriptRule
from runner.engine.task import Task
from runner.llm.types import Purpose

from .kit import FakeTool, coordinator, subtasks, suitable, task_of


def _forcing(*names: str):
    return coordinator(
        "split",
        subtasks(Task("1.1", "sub", required_tool_names=set(names))),
        activation="coordinator_only",
    )


def test_c13_required_tools_are_the_whole_activation_and_no_suitability_call_is_made(world):
    w = world(
        _forcing("b"), FakeTool("a"), FakeTool("b"), script=[suitable(yes=["a", "b"], task="^q$")]
    )
    w.run("q")
    assert [r.subject for r in w.asked(Purpose.SUITABILITY)] == ["q"]  # the root's only
    assert [tool for task_no, tool in w.ran() if task_no == "1.1"] == ["b"]
    activation = next(e for e in w.events("activation") if e["task"] == "1.1")
    assert activation["mode"] == "forced"
    assert activation["activated"] == [{"tool": "b", "reason": "forced"}]


def test_c13_forced_tools_run_by_priority(world):
    w = world(
        _forcing("late", "early"),
        FakeTool("late", priority=9, activation="coordinator_only"),
        FakeTool("early", priority=1, activation="coordinator_only"),
    )
    w.run("q")
    assert [tool for task_no, tool in w.ran() if task_no == "1.1"] == ["early", "late"]


def test_c14_forcing_is_exclusive_not_even_the_retrieval_tool_runs(world):
    w = world(
        _forcing("b"),
        FakeTool("b", activation="coordinator_only"),
        FakeTool("rag"),
        FakeTool("always_on", activation="always"),
        retrieval_tool="rag",
    )
    w.run("q")
    assert [tool for task_no, tool in w.ran() if task_no == "1.1"] == ["b"]
    root_tools = [tool for task_no, tool in w.ran() if task_no == "1"]
    assert sorted(root_tools) == ["always_on", "rag"]
    reasons = {e["tool"]: e["reason"] for e in w.events("tool.run") if e["task"] == "1"}
    assert reasons == {"always_on": "always", "rag": "retrieval"}


def test_c15_simple_and_prefixed_names_are_both_recognised(world):
    w = world(
        _forcing("a", "demo.b"),
        FakeTool("a", activation="coordinator_only"),
        FakeTool("b", activation="coordinator_only"),
    )
    w.run("q")
    assert sorted(tool for task_no, tool in w.ran() if task_no == "1.1") == ["a", "b"]


def test_c15_an_unknown_runtime_name_is_a_warning_and_is_ignored(world):
    w = world(_forcing("a", "nope"), FakeTool("a", activation="coordinator_only"))
    result = w.run("q")
    assert w.ran() == [("1.1", "a")]
    assert any("'nope'" in warning and "C15" in warning for warning in result.warnings)
    activation = next(e for e in w.events("activation") if e["task"] == "1.1")
    assert activation["ignored"] == ["nope"]
    assert [e["task"] for e in w.events("warning")] == ["1.1"]


def test_c15a_coordinator_only_tools_are_never_shown_to_the_suitability_test(world):
    w = world(
        FakeTool("hidden", activation="coordinator_only"),
        FakeTool("shown"),
        script=[suitable(yes=["shown"])],
    )
    w.run("q")
    [request] = w.asked(Purpose.SUITABILITY)
    assert [tool["name"] for tool in request.facts["tools"]] == ["shown"]
    assert w.ran() == [("1", "shown")]


def test_c15a_coordinator_only_tools_run_when_forced(world):
    w = world(_forcing("hidden"), FakeTool("hidden", activation="coordinator_only"))
    w.run("q")
    assert w.ran() == [("1.1", "hidden")]


def test_one_suitability_call_per_task_for_all_candidates(world):
    w = world(
        FakeTool("a"), FakeTool("b"), FakeTool("c"), script=[suitable(yes=["a", "c"], no=["b"])]
    )
    w.run("q")
    [request] = w.asked(Purpose.SUITABILITY)
    assert [tool["name"] for tool in request.facts["tools"]] == ["a", "b", "c"]
    assert w.ran() == [("1", "a"), ("1", "c")]
    [activation] = w.events("activation")
    assert activation["suitability"] == {"a": True, "b": False, "c": True}


def test_no_suitability_call_when_every_candidate_is_decided_by_rule(world):
    w = world(
        FakeTool("kw", activation={"keywords": ["price"]}),
        FakeTool("re", activation={"pattern": r"\bXR-\d+"}),
        FakeTool("never", activation={"keywords": ["warranty"]}),
        FakeTool("on", activation="always"),
    )
    w.run("What is the PRICE of the XR-200?")
    assert w.asked(Purpose.SUITABILITY) == []
    assert w.ran() == [("1", "kw"), ("1", "re"), ("1", "on")]
    reasons = [(a["tool"], a["reason"]) for a in w.events("activation")[0]["activated"]]
    assert reasons == [("kw", "rule"), ("re", "rule"), ("on", "always")]


def test_rule_keywords_match_whole_words_only(world):
    w = world(FakeTool("kw", activation={"keywords": ["price"]}))
    w.run("the priceless painting")
    assert w.ran() == []


def test_tools_run_by_priority_with_ties_in_file_order(world):
    w = world(
        FakeTool("z", priority=5, activation="always"),
        FakeTool("y", priority=1, activation="always"),
        FakeTool("x", priority=5, activation="always"),
    )
    w.run("q")
    assert w.ran() == [("1", "y"), ("1", "z"), ("1", "x")]


def test_the_retrieval_tool_runs_on_every_non_forced_task_without_being_asked_about(world):
    split = coordinator("split", subtasks(("1.1", "sub")), activation="coordinator_only")
    w = world(split, FakeTool("rag"), retrieval_tool="rag")
    w.run("q")
    assert w.asked(Purpose.SUITABILITY) == []
    assert w.ran() == [("1.1", "rag"), ("1", "rag")]


def test_a_failing_tool_is_marked_failed_and_the_round_goes_on(world):
    def boom(call):
        raise RuntimeError("table missing")

    w = world(
        FakeTool("bad", boom, priority=1, activation="always"),
        FakeTool("good", priority=2, activation="always"),
    )
    result = w.run("q")
    assert result.outcome == "answer"
    assert w.ran() == [("1", "bad"), ("1", "good")]
    [error] = w.events("tool.error")
    assert error["tool"] == "bad" and "table missing" in error["error"]
    assert result.tasks["tools"][0]["status"] == "failed"


def test_async_tools_are_awaited(world):
    from runner.engine.results import ToolResult

    class AsyncTool(FakeTool):
        async def execute(self, text, env):  # type: ignore[override]
            return ToolResult.context("from a coroutine")

    w = world(AsyncTool("async_tool", activation="always"))
    w.run("q")
    assert w.state.buffer.snapshot()["1:async_tool"][0].context == "from a coroutine"


_TYPES = PromptTypes(
    default="question",
    classify="rule",
    types=(
        PromptType("question"),
        PromptType("smalltalk", keywords=("hello", "thanks")),
        PromptType("order", pattern=r"\border\s+#\d+"),
    ),
)


def test_prompt_type_by_rule_needs_no_llm_and_falls_back_to_the_default(world):
    w = world(FakeTool("a", activation="always"), prompt_types=_TYPES)
    w.run("Hello there")
    assert task_of(w, "1").prompt_type == "smalltalk"
    w.run("where is order #42?")
    assert task_of(w, "1").prompt_type == "order"
    w.run("how do I descale it?")
    assert task_of(w, "1").prompt_type == "question"
    assert w.asked(Purpose.PROMPT_TYPE) == []


def test_prompt_type_by_llm_is_one_call_and_subtasks_inherit_it(world):
    types = PromptTypes(
        default="question", classify="llm", types=(PromptType("question"), PromptType("order"))
    )
    split = coordinator("split", subtasks(("1.1", "sub")), activation="coordinator_only")
    w = world(
        split,
        FakeTool("a", activation="always"),
        prompt_types=types,
        script=[ScriptRule(reply={"type": "order"}, purpose="prompt_type")],
    )
    w.run("my parcel")
    assert len(w.asked(Purpose.PROMPT_TYPE)) == 1
    assert task_of(w, "1").prompt_type == "order"
    assert task_of(w, "1.1").prompt_type == "order"


def test_a_single_prompt_type_needs_no_classification_call(world):
    types = PromptTypes(default="question", classify="llm", types=(PromptType("question"),))
    w = world(FakeTool("a", activation="always"), prompt_types=types)
    w.run("q")
    assert w.asked(Purpose.PROMPT_TYPE) == []
    assert task_of(w, "1").prompt_type == "question"


def test_tools_are_candidates_only_for_their_prompt_types(world):
    w = world(
        FakeTool("orders", activation="always", prompt_types=("order",)),
        FakeTool("general", activation="always"),
        prompt_types=_TYPES,
    )
    w.run("how do I descale it?")
    assert w.ran() == [("1", "general")]


class _ThreadRecordingPattern:
    """A compiled pattern that notes the thread each search ran on."""

    def __init__(self, threads: list[str], pattern: str) -> None:
        import re as _re

        self._threads, self._compiled = threads, _re.compile(pattern, _re.IGNORECASE)

    def search(self, text: str):
        import threading

        self._threads.append(threading.current_thread().name)
        return self._compiled.search(text)


def _recording_patterns(monkeypatch) -> list[str]:
    from runner.engine import activation

    threads: list[str] = []
    monkeypatch.setattr(
        activation, "compile_pattern", lambda pattern: _ThreadRecordingPattern(threads, pattern)
    )
    return threads


def _counted_hops(monkeypatch) -> list[object]:
    """The calls sent to a worker thread (asyncio.to_thread) from now on."""
    import asyncio

    hops: list[object] = []
    to_thread = asyncio.to_thread

    async def counted(call, *args, **kwargs):
        hops.append(call)
        return await to_thread(call, *args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", counted)
    return hops


def test_issue_19_an_activation_pattern_is_matched_off_the_event_loop(world, monkeypatch):
    threads = _recording_patterns(monkeypatch)
    w = world(FakeTool("re", activation={"pattern": r"\bXR-\d+"}))
    w.run("the XR-200?")
    assert w.ran() == [("1", "re")]
    assert threads and "MainThread" not in threads  # the round's loop runs on the main thread


def test_issue_33_a_tasks_activation_patterns_are_matched_in_one_hop(world, monkeypatch):
    threads = _recording_patterns(monkeypatch)
    hops = _counted_hops(monkeypatch)
    w = world(
        FakeTool("re", activation={"pattern": r"\bXR-\d+"}),
        FakeTool("code", activation={"pattern": r"\bE\d+"}),
        FakeTool("word", activation={"keywords": ["noise"]}),
    )
    w.run("the XR-200 shows E24")
    assert sorted(tool for _, tool in w.ran()) == ["code", "re"]
    assert len(threads) == 2 and "MainThread" not in threads
    assert len(hops) == 1  # both patterns (and the keywords) in one hop off the loop


def test_issue_33_the_roots_prompt_type_and_its_tools_rules_are_matched_in_one_hop(
    world, monkeypatch
):
    hops = _counted_hops(monkeypatch)
    threads = _recording_patterns(monkeypatch)
    w = world(FakeTool("re", activation={"pattern": r"\border\b"}), prompt_types=_TYPES)
    w.run("where is order #42?")
    assert task_of(w, "1").prompt_type == "order"
    assert w.ran() == [("1", "re")]
    assert len(threads) == 2 and "MainThread" not in threads  # the type's, then the tool's
    assert len(hops) == 1


def test_issue_19_a_prompt_type_pattern_is_matched_off_the_event_loop(world, monkeypatch):
    threads = _recording_patterns(monkeypatch)
    w = world(FakeTool("a", activation="always"), prompt_types=_TYPES)
    w.run("where is order #42?")
    assert task_of(w, "1").prompt_type == "order"
    assert threads and "MainThread" not in threads


def test_c13_each_forced_activation_event_has_its_own_activated_list(world):
    # the activated list is shared by every task forcing the same tools while the round runs
    # (activation.forced_activated); a reader of one event must not change another's
    w = world(
        coordinator(
            "split",
            subtasks(
                Task("1.1", "one", required_tool_names={"tool"}),
                Task("1.2", "two", required_tool_names={"tool"}),
            ),
            activation="coordinator_only",
        ),
        FakeTool("tool", activation="coordinator_only"),
    )
    w.run("q")
    first, second = (e for e in w.events("activation") if e["mode"] == "forced")
    first["activated"][0]["reason"] = "changed by a reader"
    assert second["activated"] == [{"tool": "tool", "reason": "forced"}]
