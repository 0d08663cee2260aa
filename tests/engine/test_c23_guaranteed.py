"""C23 with C33: guaranteed context reaches the final answer as it is, and its sources are
listed, whatever else leaves plain context out: `answer.max_context_items`, and a coordinator
whose own result stands for its subtasks' results (C20e). Plain context is still not doubled."""

from __future__ import annotations

import asyncio

from runner.config.model import AnswerConfig
from runner.engine.protocols import ToolEnv
from runner.engine.results import ToolResult
from runner.engine.task import Task
from runner.llm.types import Purpose
from runner.sources import Source

from .kit import Call, FakeTool, World, coordinator, subtasks, suitable

PRICES = Source("prices.csv")
STOCK = Source("stock.csv")
MANUAL = Source("manual.md", 2)
NOTES = Source("notes.md", 7)


def handed_on(world: World) -> tuple[list[str], list[str]]:
    """The completion keys of the guaranteed and of the plain passages the answer was given."""
    [request] = world.asked(Purpose.ANSWER)
    return (
        [p["key"] for p in request.facts["guaranteed"]],
        [p["key"] for p in request.facts["context"]],
    )


def test_c23_guaranteed_survives_max_context_items(world):
    w = world(
        FakeTool("plain_a", ToolResult.context("a", (MANUAL,)), priority=1, activation="always"),
        FakeTool("sure_a", ToolResult.guaranteed_context("x", (PRICES,)), priority=2),
        FakeTool("plain_b", ToolResult.context("b", (NOTES,)), priority=3, activation="always"),
        FakeTool("sure_b", ToolResult.guaranteed_context("y", (STOCK,)), priority=4),
        answer=AnswerConfig(max_context_items=1),
        script=[suitable(yes=["sure_a", "sure_b"])],
    )
    result = w.run("q")
    guaranteed, plain = handed_on(w)
    assert guaranteed == ["1:sure_a", "1:sure_b"]  # not counted against the limit
    assert plain == ["1:plain_a"]  # the limit trims plain context only
    assert PRICES in result.sources and STOCK in result.sources


def _stands_for_its_subtasks(**settings) -> list[FakeTool]:
    """A coordinator activated after its subtasks (C20e) that composes its own plain result
    from theirs: 1.1 gives guaranteed context, 1.2 plain context."""

    def compose(call: Call) -> ToolResult:
        return ToolResult.context("composed from " + ", ".join(call.prior), (MANUAL,))

    split = coordinator(
        "compare",
        subtasks(
            Task("1.1", "price of A", required_tool_names={"prices"}),
            Task("1.2", "stock of A", required_tool_names={"stock"}),
        ),
        consumer=True,
        after=True,
        reply=compose,
        activation="coordinator_only",
    )
    prices = FakeTool(
        "prices",
        ToolResult.guaranteed_context("A costs 12 EUR", (PRICES,)),
        activation="coordinator_only",
    )
    stock = FakeTool(
        "stock", ToolResult.context("A: 3 in stock", (STOCK,)), activation="coordinator_only"
    )
    return [split, prices, stock]


def test_c23_a_subtasks_guaranteed_result_survives_the_coordinator_standing_for_it(world):
    w = world(*_stands_for_its_subtasks())
    result = w.run("compare A")
    guaranteed, _ = handed_on(w)
    assert guaranteed == ["1.1:prices"]
    assert PRICES in result.sources  # its sources are listed (C33)


def test_c20e_the_coordinators_own_answer_is_not_doubled_by_its_subtasks_plain_results(world):
    w = world(*_stands_for_its_subtasks())
    result = w.run("compare A")
    _, plain = handed_on(w)
    assert plain == ["1:compare"]  # 1.2's plain context is what the coordinator stands for
    assert STOCK not in result.sources


def test_c23_both_rules_at_once_drop_plain_context_only(world):
    w = world(
        *_stands_for_its_subtasks(),
        FakeTool("rag", ToolResult.context("page", (NOTES,)), activation="always", priority=1),
        answer=AnswerConfig(max_context_items=1),
    )
    result = w.run("compare A")
    guaranteed, plain = handed_on(w)
    assert guaranteed == ["1.1:prices"]
    assert len(plain) == 1 and not plain[0].startswith("1.2")
    assert PRICES in result.sources


class _Finishing(FakeTool):
    """Answers each task after its own delay, so a parallel group's later siblings finish
    first; `replies` gives each task's result."""

    def __init__(self, name: str, replies: dict[str, ToolResult], delays: dict[str, float]):
        super().__init__(name, activation="coordinator_only")
        self.replies, self.delays = replies, delays

    async def execute(self, text: str, env: ToolEnv) -> ToolResult:  # type: ignore[override]
        self._record(Call(self.name, "execute", env.task.task_no, text, env=env, task=env.task))
        await asyncio.sleep(self.delays[env.task.task_no])
        return self.replies[env.task.task_no]


def test_c23_guaranteed_results_of_a_parallel_group_survive_the_coordinator_and_the_limit(world):
    """Guaranteed results made concurrently, finishing in reverse order, under a coordinator
    that stands for them and with room for one plain passage: every one reaches the answer,
    in list order, with its sources; the subtasks' plain result does not (C7, C20e, C23)."""

    def compose(call: Call) -> ToolResult:
        return ToolResult.context("composed", (MANUAL,))

    parts = [Task(f"1.{n}", f"part {n}", required_tool_names={"parts"}) for n in (1, 2, 3)]
    split = coordinator(
        "compare",
        subtasks(*parts),
        consumer=True,
        after=True,
        reply=compose,
        activation="coordinator_only",
    )
    split.parallel_subtasks = True  # type: ignore[attr-defined]
    replies = {
        "1.1": ToolResult.guaranteed_context("price 12", (PRICES,)),
        "1.2": ToolResult.context("3 in stock", (STOCK,)),
        "1.3": ToolResult.guaranteed_context("page 7 says so", (NOTES,)),
    }
    parts_tool = _Finishing("parts", replies, {"1.1": 0.03, "1.2": 0.02, "1.3": 0.0})
    w = world(
        split,
        parts_tool,
        FakeTool("rag", ToolResult.context("page", (MANUAL,)), activation="always", priority=1),
        answer=AnswerConfig(max_context_items=1),
    )
    result = w.run("compare")
    assert [c.task_no for c in w.calls("parts")] == ["1.1", "1.2", "1.3"]
    guaranteed, plain = handed_on(w)
    assert guaranteed == ["1.1:parts", "1.3:parts"]
    assert len(plain) == 1 and not plain[0].startswith("1.")
    assert PRICES in result.sources and NOTES in result.sources
    assert STOCK not in result.sources
