"""The subtask tree and conditional subtasks: C3, C5–C7, C16–C19."""

from __future__ import annotations

from runner.engine.results import SubtaskDecision, ToolResult
from runner.engine.task import Task, TaskStatus

from .kit import FakeConsumer, FakeTool, asks, coordinator, subtasks, task_of


def _forced(task_no: str, prompt: str, *tools: str, conditional: bool = False) -> Task:
    return Task(task_no, prompt, required_tool_names=set(tools), conditional=conditional)


def test_c5_subtasks_close_in_list_order_before_the_parent_activation(world):
    nested = Task(
        "1.1", "first", sub_tasks=[_forced("1.1.1", "deep", "tool")], required_tool_names={"tool"}
    )
    split = coordinator(
        "split", subtasks(nested, _forced("1.2", "second", "tool")), activation="coordinator_only"
    )
    w = world(split, FakeTool("tool", activation="always"))
    w.run("q")
    assert w.ran() == [("1.1.1", "tool"), ("1.1", "tool"), ("1.2", "tool"), ("1", "tool")]
    starts = [e["task"] for e in w.events("task.start")]
    ends = [e["task"] for e in w.events("task.end")]
    assert starts == ["1", "1.1", "1.1.1", "1.2"]
    assert ends == ["1.1.1", "1.1", "1.2", "1"]


def test_c5_the_parent_suitability_test_comes_after_its_subtasks(world):
    from runner.llm.types import Purpose

    from .kit import suitable

    w = world(
        coordinator(
            "split", subtasks(_forced("1.1", "sub", "tool")), activation="coordinator_only"
        ),
        FakeTool("tool"),
        script=[suitable(yes=["tool"])],
    )
    w.run("q")
    [request] = w.asked(Purpose.SUITABILITY)
    assert request.subject == "q"
    assert w.ran() == [("1.1", "tool"), ("1", "tool")]
    seqs = {e["event"]: e["seq"] for e in w.results[-1].trace.events if e["task"] == "1.1"}
    root_activation = next(e for e in w.events("activation") if e["task"] == "1")
    assert seqs["task.end"] < root_activation["seq"]


def test_c6_a_clarification_in_a_subtask_stops_siblings_and_parent_until_answered(world):
    asker = FakeTool("asker", asks("which model?"), activation="coordinator_only")
    split = coordinator(
        "split",
        subtasks(_forced("1.1", "a", "asker"), _forced("1.2", "b", "tool")),
        activation="coordinator_only",
    )
    w = world(split, asker, FakeTool("tool", activation="always"))
    first = w.run("q")
    assert first.outcome == "clarification" and first.question == "which model?"
    assert w.ran() == [("1.1", "asker")]
    assert task_of(w, "1").status is TaskStatus.WAITING
    assert task_of(w, "1.2").status is TaskStatus.PENDING
    second = w.run("the XR-200")
    assert second.outcome == "answer"
    assert w.ran()[1:] == [("1.1", "asker"), ("1.2", "tool"), ("1", "tool")]


def test_c6_a_terminal_answer_in_a_subtask_ends_the_round_at_the_top(world):
    final = FakeTool("final", ToolResult.terminal("done early"), activation="coordinator_only")
    split = coordinator(
        "split",
        subtasks(_forced("1.1", "a", "final"), _forced("1.2", "b", "tool")),
        activation="coordinator_only",
    )
    w = world(split, final, FakeTool("tool", activation="always"))
    result = w.run("q")
    assert (result.outcome, result.answer) == ("answer", "done early")
    assert w.ran() == [("1.1", "final")]


def test_c7_subtask_results_are_stored_under_the_subtask_number_and_reach_the_parent(world):
    consumer = FakeConsumer("summary", activation="always", priority=50)
    split = coordinator(
        "split", subtasks(_forced("1.1", "a", "facts")), activation="coordinator_only"
    )
    w = world(split, FakeTool("facts", "fact A", activation="coordinator_only"), consumer)
    w.run("q")
    assert "1.1:facts" in w.state.buffer
    root_call = next(c for c in w.calls("summary") if c.task_no == "1")
    assert root_call.prior["1.1:facts"][0].context == "fact A"


def test_c3_conditional_subtask_of_a_coordinator_without_a_decision_runs(world):
    split = coordinator(
        "split",
        subtasks(_forced("1.1", "a", "tool", conditional=True)),
        activation="coordinator_only",
    )
    w = world(split, FakeTool("tool", activation="coordinator_only"))
    w.run("q")
    assert ("1.1", "tool") in w.ran()
    [decision] = w.events("subtask.decision")
    assert decision["decision"] == "run" and "C3" in decision["reason"]
    assert decision["decided_by"] == "split"


def test_c16_owner_decides_skip_and_the_subtask_does_not_run(world):
    split = coordinator(
        "split",
        subtasks(
            _forced("1.1", "cheap", "tool"), _forced("1.2", "costly", "tool", conditional=True)
        ),
        decide=lambda parent, nxt, done: SubtaskDecision.SKIP,
        activation="coordinator_only",
    )
    w = world(split, FakeTool("tool", activation="coordinator_only"))
    result = w.run("q")
    assert w.ran() == [("1.1", "tool")]
    assert task_of(w, "1.2").status is TaskStatus.SKIPPED
    skipped = result.tasks["children"][1]
    assert skipped["skipped"] is True and skipped["status"] == "skipped"
    [decision] = w.events("subtask.decision")
    assert (decision["task"], decision["decision"], decision["decided_by"]) == (
        "1.2",
        "skip",
        "split",
    )


def test_c16_only_conditional_subtasks_are_decided_and_run_decision_runs(world):
    split = coordinator(
        "split",
        subtasks(_forced("1.1", "a", "tool"), _forced("1.2", "b", "tool", conditional=True)),
        decide=lambda parent, nxt, done: "run",
        activation="coordinator_only",
    )
    w = world(split, FakeTool("tool", activation="coordinator_only"))
    w.run("q")
    assert [c.task_no for c in w.calls(method="decide_conditional")] == ["1.2"]
    assert w.ran() == [("1.1", "tool"), ("1.2", "tool")]


def test_c17_completed_so_far_holds_only_earlier_siblings_and_their_descendants(world):
    nested = Task(
        "1.1", "a", required_tool_names={"tool"}, sub_tasks=[_forced("1.1.n", "deep", "tool")]
    )

    def decide(parent: Task, nxt: Task, done) -> SubtaskDecision:
        return SubtaskDecision.RUN

    split = coordinator(
        "split",
        subtasks(
            nested, _forced("1.2", "b", "tool", conditional=True), _forced("1.3", "c", "tool")
        ),
        decide=decide,
        activation="coordinator_only",
    )
    w = world(
        split,
        FakeTool("tool", activation="coordinator_only"),
        FakeTool("root_tool", activation="always"),
    )
    w.run("q")
    [decision] = w.calls(method="decide_conditional")
    assert list(decision.completed) == ["1.1.n:tool", "1.1:tool"]
    assert w.events("subtask.decision")[0]["completed_keys"] == ["1.1.n:tool", "1.1:tool"]


def test_c17_the_source_example_skips_the_full_search_when_the_neighbour_found_something(world):
    def decide(parent: Task, nxt: Task, done) -> SubtaskDecision:
        paired = nxt.task_no.replace(".s", ".n") + ":"
        found = any(
            r.context for key, results in done.items() if key.startswith(paired) for r in results
        )
        return SubtaskDecision.SKIP if found else SubtaskDecision.RUN

    neighbour = FakeTool(
        "neighbour",
        lambda c: "page 4 says so" if c.task_no == "1.1.n" else "",
        activation="coordinator_only",
    )
    split = coordinator(
        "deep",
        subtasks(
            _forced("1.1.n", "m1", "neighbour"),
            _forced("1.1.s", "m1", "search", conditional=True),
            _forced("1.2.n", "m2", "neighbour"),
            _forced("1.2.s", "m2", "search", conditional=True),
        ),
        decide=decide,
        activation="coordinator_only",
    )
    w = world(split, neighbour, FakeTool("search", activation="coordinator_only"))
    w.run("q")
    assert w.ran() == [("1.1.n", "neighbour"), ("1.2.n", "neighbour"), ("1.2.s", "search")]


def test_c18_the_orchestrator_fills_the_owner_and_asks_that_owner(world):
    def sneaky(task: Task, env) -> None:
        task.sub_tasks.append(Task("1.1", "a", conditional=True, owner_coordinator_name="other"))

    first = coordinator(
        "first", sneaky, decide=lambda p, n, d: SubtaskDecision.RUN, activation="coordinator_only"
    )
    other = coordinator(
        "other",
        subtasks(Task("1.2", "b", conditional=True)),
        decide=lambda p, n, d: SubtaskDecision.SKIP,
        activation="coordinator_only",
    )
    w = world(first, other, FakeTool("tool", activation="always"))
    w.run("q")
    assert task_of(w, "1.1").owner_coordinator_name == "first"
    assert task_of(w, "1.2").owner_coordinator_name == "other"
    decisions = [(c.tool, c.task_no) for c in w.calls(method="decide_conditional")]
    assert decisions == [("first", "1.1"), ("other", "1.2")]
    assert task_of(w, "1.2").status is TaskStatus.SKIPPED


def test_c19_a_failing_decision_runs_the_subtask(world):
    def broken(parent: Task, nxt: Task, done) -> SubtaskDecision:
        raise KeyError("no such sibling")

    split = coordinator(
        "split",
        subtasks(_forced("1.1", "a", "tool", conditional=True)),
        decide=broken,
        activation="coordinator_only",
    )
    w = world(split, FakeTool("tool", activation="coordinator_only"))
    w.run("q")
    assert w.ran() == [("1.1", "tool")]
    [decision] = w.events("subtask.decision")
    assert decision["decision"] == "run" and "C19" in decision["reason"]


def test_c19_a_decision_that_is_neither_run_nor_skip_counts_as_failed(world):
    split = coordinator(
        "split",
        subtasks(_forced("1.1", "a", "tool", conditional=True)),
        decide=lambda p, n, d: "maybe",
        activation="coordinator_only",
    )
    w = world(split, FakeTool("tool", activation="coordinator_only"))
    w.run("q")
    assert w.ran() == [("1.1", "tool")]
