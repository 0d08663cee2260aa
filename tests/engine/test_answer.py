"""The gatekeeper and the deep fallback (engine side of C27–C28) and the final answer (C33)."""

from __future__ import annotations

from runner.config.model import (
    AnswerConfig,
    DeepFallback,
    Gatekeeper,
    PromptType,
    PromptTypes,
    ScriptRule,
)
from runner.engine.results import SubtaskDecision, ToolResult
from runner.engine.task import Task, TaskStatus
from runner.llm.types import Purpose
from runner.sources import Source

from .kit import ANSWER, FakeTool, coordinator, task_of

MANUAL_P3 = Source("manual.md", 3)
MANUAL_P4 = Source("manual.md", 4)
SHEET = Source("sheet.csv")


def _gate(enough: bool) -> ScriptRule:
    return ScriptRule(reply={"enough": enough, "reason": "judged"}, purpose="gatekeeper")


def _deep_search() -> tuple[FakeTool, FakeTool, FakeTool]:
    """A deep-search coordinator like C29's: one missing piece, a neighbour search `.n` and a
    conditional full search `.s` skipped when the neighbour found something."""

    def split(task: Task, env) -> None:
        task.sub_tasks += [
            Task(f"{task.task_no}.1.n", "filter size?", required_tool_names={"neighbors"}),
            Task(
                f"{task.task_no}.1.s",
                "filter size?",
                required_tool_names={"search"},
                conditional=True,
            ),
        ]

    def decide(parent: Task, nxt: Task, done) -> SubtaskDecision:
        found = any(
            r.context for key, rs in done.items() if key.startswith(nxt.task_no[:-1]) for r in rs
        )
        return SubtaskDecision.SKIP if found else SubtaskDecision.RUN

    def compose(call) -> ToolResult:
        answers = [r.context for rs in call.prior.values() for r in rs if r.guaranteed]
        return ToolResult.guaranteed_context(" / ".join(answers), (MANUAL_P4,))

    deep = coordinator(
        "deep",
        split,
        decide=decide,
        consumer=True,
        after=True,
        reply=compose,
        activation="coordinator_only",
    )
    neighbors = FakeTool("neighbors", "", activation="coordinator_only")
    search = FakeTool(
        "search",
        ToolResult.guaranteed_context("size 40 mm", (MANUAL_P4,)),
        activation="coordinator_only",
    )
    return deep, neighbors, search


FALLBACK = DeepFallback(coordinator="deep", prompt_types=("question",))


def test_c27_the_gatekeeper_judges_the_root_context_after_the_root_tools(world):
    rag = FakeTool("rag", ToolResult.context("page text", (MANUAL_P3,)))
    w = world(
        rag, *_deep_search(), retrieval_tool="rag", deep_fallback=FALLBACK, script=[_gate(True)]
    )
    result = w.run("what filter fits?")
    [request] = w.asked(Purpose.GATEKEEPER)
    assert [p["key"] for p in request.facts["passages"]] == ["1:rag"]
    [gate] = w.events("gatekeeper")
    assert gate["enough"] is True and gate["mode"] == "llm"
    assert w.events("tool.run")[-1]["seq"] < gate["seq"]
    assert w.calls("deep", "decompose") == []
    assert result.outcome == "answer"


def test_c27_a_rule_gatekeeper_measures_important_word_coverage_without_an_llm(world):
    rule = DeepFallback("deep", ("question",), Gatekeeper(mode="rule", min_coverage=0.5))
    rag = FakeTool("rag", "the descaling programme of the KW washing machine")
    w = world(rag, *_deep_search(), retrieval_tool="rag", deep_fallback=rule)
    w.run("descaling programme duration?")  # 2 of the 3 important words are covered
    assert w.asked(Purpose.GATEKEEPER) == []
    [gate] = w.events("gatekeeper")
    assert gate["enough"] is True and "67%" in gate["reason"]


def test_c27_a_rule_gatekeeper_weighs_a_retrievals_evidence_with_its_coverage(world):
    rule = DeepFallback("deep", ("question",), Gatekeeper(mode="rule", min_coverage=0.5))
    weak = {"first_page_cosine": 0.2, "agreement": 0, "top_k": 5}
    rag = FakeTool("rag", ToolResult.context("the descaling programme", (), evidence=weak))
    w = world(rag, *_deep_search(), retrieval_tool="rag", deep_fallback=rule)
    w.run("descaling programme duration?")  # the words alone would find it enough
    [gate] = w.events("gatekeeper")
    assert gate["enough"] is False
    assert gate["reason"].endswith("the word rules find it enough: confidence 0.30 (needs 0.50)")


def _world_the_gatekeeper_sends_to_deep_search(world):
    deep, neighbors, search = _deep_search()
    return world(
        FakeTool("rag", "unrelated"),
        deep,
        neighbors,
        search,
        retrieval_tool="rag",
        deep_fallback=FALLBACK,
        script=[_gate(False)],
    )


def test_c28_not_enough_context_runs_the_deep_coordinator_on_the_root(world):
    w = _world_the_gatekeeper_sends_to_deep_search(world)
    result = w.run("what filter fits?")
    assert w.ran() == [("1", "rag"), ("1.1.n", "neighbors"), ("1.1.s", "search"), ("1", "deep")]
    assert [c.task_no for c in w.calls("deep", "decide_conditional")] == ["1.1.s"]
    assert task_of(w, "1.1.s").owner_coordinator_name == "deep"
    assert task_of(w, "1").applied_coordinator_names == {"deep"}
    answer_request = w.asked(Purpose.ANSWER)[0]
    # C23: the search's guaranteed answer reaches the answer as it is, beside the supplement
    # the coordinator composed from it
    assert [p["key"] for p in answer_request.facts["guaranteed"]] == ["1.1.s:search", "1:deep"]
    assert result.sources == (MANUAL_P4,)
    [fallback] = w.events("deep_fallback")
    assert fallback["run"] is True
    assert result.tasks["tools"][-1]["reason"] == "deep_fallback"


def test_c28_the_full_search_is_skipped_when_the_neighbour_search_found_something(world):
    deep, _, search = _deep_search()
    neighbors = FakeTool(
        "neighbors", ToolResult.guaranteed_context("found nearby"), activation="coordinator_only"
    )
    w = world(
        FakeTool("rag", "x"),
        deep,
        neighbors,
        search,
        retrieval_tool="rag",
        deep_fallback=FALLBACK,
        script=[_gate(False)],
    )
    w.run("q")
    assert task_of(w, "1.1.s").status is TaskStatus.SKIPPED
    assert ("1.1.s", "search") not in w.ran()


def test_c28_the_deep_coordinator_never_runs_in_the_normal_coordinator_step(world):
    w = world(
        FakeTool("rag", "x"),
        *_deep_search(),
        retrieval_tool="rag",
        deep_fallback=FALLBACK,
        script=[_gate(True)],
    )
    w.run("q")
    assert w.calls(method="decompose") == []
    assert [e["coordinator"] for e in w.events("coordinator.skip")] == []


def test_c28_a_prompt_type_without_deep_fallback_asks_no_gatekeeper(world):
    types = PromptTypes(
        default="question",
        classify="rule",
        types=(PromptType("question"), PromptType("smalltalk", keywords=("hi",))),
    )
    w = world(
        FakeTool("rag", "x"),
        *_deep_search(),
        retrieval_tool="rag",
        deep_fallback=FALLBACK,
        prompt_types=types,
    )
    w.run("hi there")
    assert w.asked(Purpose.GATEKEEPER) == []
    [fallback] = w.events("deep_fallback")
    assert fallback["run"] is False and "smalltalk" in fallback["reason"]


def test_c33_the_answer_uses_all_guaranteed_context_and_limited_context_with_sources(world):
    w = world(
        FakeTool(
            "g1",
            ToolResult.guaranteed_context("sure one", (SHEET,)),
            priority=1,
            activation="always",
        ),
        FakeTool(
            "c1", ToolResult.context("maybe one", (MANUAL_P3,)), priority=2, activation="always"
        ),
        FakeTool(
            "c2",
            ToolResult.context("maybe two", (MANUAL_P4, MANUAL_P3)),
            priority=3,
            activation="always",
        ),
        FakeTool(
            "g2",
            ToolResult.guaranteed_context("sure two", (MANUAL_P3,)),
            priority=4,
            activation="always",
        ),
        FakeTool("empty", "", priority=5, activation="always"),
        answer=AnswerConfig(max_context_items=1),
    )
    result = w.run("q")
    [request] = w.asked(Purpose.ANSWER)
    assert [p["text"] for p in request.facts["guaranteed"]] == ["sure one", "sure two"]
    assert [p["text"] for p in request.facts["context"]] == ["maybe one"]
    assert result.answer == ANSWER
    assert result.sources == (SHEET, MANUAL_P3)
    assert [s.to_json() for s in result.sources] == result.to_json()["sources"]


def test_c33_a_terminal_answer_lists_its_own_sources(world):
    w = world(FakeTool("final", ToolResult.terminal("42", (SHEET, SHEET)), activation="always"))
    result = w.run("q")
    assert result.sources == (SHEET,)


def test_c33_the_answer_question_is_the_root_prompt_with_what_coordinators_appended(world):
    def append(task: Task, env) -> None:
        task.task_prompt += " Answer briefly."

    w = world(coordinator("style", append, activation="coordinator_only"))
    w.run("How long does it take?")
    [request] = w.asked(Purpose.ANSWER)
    assert request.facts["question"] == "How long does it take? Answer briefly."


def test_c20e_a_coordinator_that_answered_from_its_subtasks_stands_for_them_in_the_answer(world):
    w = _world_the_gatekeeper_sends_to_deep_search(world)
    w.run("what filter fits?")
    answer_request = w.asked(Purpose.ANSWER)[0]
    plain = [p["key"] for p in answer_request.facts["context"]]
    guaranteed = [p["key"] for p in answer_request.facts["guaranteed"]]
    assert "1:rag" in plain and "1:deep" in guaranteed
    assert not [key for key in plain if key.startswith("1.1.")]
