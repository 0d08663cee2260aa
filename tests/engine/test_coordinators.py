"""The coordinator contract and step: C1, C2, C4, C8–C12."""

from __future__ import annotations

from runner.config.model import Limits
from runner.engine.marker import AGENT_COORDINATOR_MARKER
from runner.engine.task import Task

from .kit import FakeTool, asks, coordinator, subtasks, task_of


def test_c1_irrelevant_coordinator_leaves_the_task_unchanged(world):
    untouched = coordinator("untouched", lambda task, env: task, activation="coordinator_only")
    tool = FakeTool("tool", activation="always")
    w = world(untouched, tool)
    w.run("what is the price of X?")
    root = task_of(w, "1")
    assert root.task_prompt == "what is the price of X?"
    assert root.sub_tasks == []
    [run] = w.events("coordinator.run")
    assert run["changed"] is False and run["subtasks"] == []
    assert w.ran() == [("1", "tool")]


def test_c2_coordinator_changes_the_task_in_place_and_tools_see_the_appended_prompt(world):
    seen: list[int] = []

    def append(task: Task, env) -> None:
        seen.append(id(task))
        task.task_prompt += " (answer in metric units)"

    w = world(
        coordinator("units", append, activation="coordinator_only"),
        FakeTool("tool", activation="always"),
    )
    w.run("how heavy is X?")
    root = task_of(w, "1")
    assert seen == [id(root)]  # the orchestrator's own object, not a copy
    assert w.calls("tool")[0].text == "how heavy is X? (answer in metric units)"
    assert w.events("coordinator.run")[0]["appended"] is True


def test_c2_a_coordinator_returning_another_task_object_is_an_error_and_is_undone(world):
    def copy_instead(task: Task, env) -> Task:
        task.task_prompt += " changed"
        return Task(task.task_no, "a copy")

    w = world(
        coordinator("copier", copy_instead, activation="coordinator_only"),
        FakeTool("tool", activation="always"),
    )
    w.run("original")
    assert task_of(w, "1").task_prompt == "original"
    [error] = w.events("coordinator.error")
    assert "C2" in error["error"] and error["restored"] is True


class ReturnsNone(FakeTool):
    """A coordinator that changes the task in place and then returns nothing."""

    def decompose(self, task: Task, env) -> None:
        task.task_prompt += " changed"
        task.sub_tasks.append(Task(f"{task.task_no}.1", "a half-made subtask"))


def test_c1_a_coordinator_returning_none_is_the_same_contract_error_as_a_copy(world):
    later = coordinator("later", subtasks(("1.1", "from the later one")), priority=20)
    w = world(
        ReturnsNone("silent", priority=10, activation="coordinator_only"),
        later,
        FakeTool("tool", activation="always"),
    )
    w.run("original")
    root = task_of(w, "1")
    # C10: the task is as it was before the coordinator, and the next coordinator still ran
    assert root.task_prompt == "original"
    assert [t.task_no for t in root.sub_tasks] == ["1.1"]
    assert root.sub_tasks[0].task_prompt == "from the later one"
    [error] = w.events("coordinator.error")
    assert error["coordinator"] == "silent" and error["restored"] is True
    assert "returned None" in error["error"] and "C1/C2" in error["error"]
    assert "silent" in root.applied_coordinator_names  # C11: it had its chance


def test_c2_a_coordinator_that_puts_the_task_below_itself_is_an_error_and_is_undone(world):
    """A task among its own descendants would make the tree endless: the round must not hang."""

    def below_itself(task: Task, env) -> None:
        task.sub_tasks.append(Task(f"{task.task_no}.1", "a real subtask"))
        task.sub_tasks[0].sub_tasks.append(task)

    w = world(
        coordinator("looping", below_itself, activation="coordinator_only"),
        FakeTool("tool", activation="always"),
    )
    result = w.run("original")
    root = task_of(w, "1")
    assert root.sub_tasks == []  # C10: restored
    [error] = w.events("coordinator.error")
    assert "put the task itself among the subtasks of task 1" in error["error"]
    assert error["restored"] is True
    assert result.degraded and w.ran() == [("1", "tool")]


def test_c2_a_coordinator_that_reuses_a_task_of_the_tree_as_a_subtask_is_an_error(world):
    first = coordinator("first", subtasks(("1.1", "made by first")), priority=10)

    def reuse(task: Task, env) -> None:
        task.sub_tasks.append(task.sub_tasks[0])  # the same object in two places

    w = world(
        first,
        coordinator("reuser", reuse, priority=20, activation="coordinator_only"),
        FakeTool("tool", activation="always"),
    )
    w.run("original")
    assert [t.task_no for t in task_of(w, "1").sub_tasks] == ["1.1"]  # as `first` left it
    [error] = w.events("coordinator.error")
    assert error["coordinator"] == "reuser"
    assert "put task 1.1 among the subtasks of task 1" in error["error"]
    assert "a subtask is a new Task object" in error["error"]


def test_c4_subtask_numbers_depth_and_own_prompts(world):
    w = world(
        coordinator(
            "split",
            subtasks(("1.1", "first step"), ("1.2", "second step")),
            activation="coordinator_only",
        ),
        FakeTool("tool", activation="always"),
    )
    w.run("a question")
    first, second = task_of(w, "1").sub_tasks
    assert (first.task_no, first.task_prompt, first.depth) == ("1.1", "first step", 1)
    assert (second.task_no, second.task_prompt, second.depth) == ("1.2", "second step", 1)


def test_c4_subtasks_without_a_number_get_the_dotted_default(world):
    w = world(
        coordinator("split", subtasks(Task("", "a"), Task("", "b")), activation="coordinator_only")
    )
    w.run("q")
    assert [t.task_no for t in task_of(w, "1").sub_tasks] == ["1.1", "1.2"]


def test_c4_coordinator_step_is_skipped_at_the_depth_limit(world):
    split = coordinator("split", subtasks(("1.1", "x")), activation="coordinator_only")
    w = world(split, FakeTool("tool", activation="always"), limits=Limits(max_depth=0))
    w.run("q")
    assert w.calls("split", "decompose") == []
    [skip] = w.events("coordinator.skip")
    assert skip["reason"] == "depth" and skip["task"] == "1"


def test_c4_subtasks_made_beyond_the_depth_limit_are_dropped_with_a_warning(world):
    nested = Task("1.1", "child", sub_tasks=[Task("1.1.1", "grandchild")])
    w = world(
        coordinator("split", subtasks(nested), activation="coordinator_only"),
        FakeTool("tool", activation="always"),
        limits=Limits(max_depth=1),
    )
    result = w.run("q")
    assert task_of(w, "1.1").sub_tasks == []
    assert any("1.1.1" in warning and "max_depth" in warning for warning in result.warnings)
    assert ("1.1.1", "tool") not in w.ran()


def test_c4_subtasks_beyond_max_subtasks_are_dropped_with_a_warning(world):
    many = subtasks(("1.1", "a"), ("1.2", "b"), ("1.3", "c"))
    w = world(
        coordinator("split", many, activation="coordinator_only"), limits=Limits(max_subtasks=2)
    )
    result = w.run("q")
    assert [t.task_no for t in task_of(w, "1").sub_tasks] == ["1.1", "1.2"]
    assert any("1.3" in warning and "max_subtasks" in warning for warning in result.warnings)


def test_c4_many_subtasks_dropped_for_one_reason_are_one_warning_with_their_count(world):
    many = subtasks(*[(f"1.{n}", f"part {n}") for n in range(1, 41)])
    w = world(
        coordinator("split", many, activation="coordinator_only"), limits=Limits(max_subtasks=2)
    )
    result = w.run("q")
    [dropped] = [warning for warning in result.warnings if "dropped" in warning]
    assert dropped.startswith("38 subtasks of task 1 from 'split' were dropped")
    assert "'1.3', '1.4', '1.5', '1.6', '1.7' and 33 more" in dropped
    assert "max_subtasks (2)" in dropped


def test_c4_subtasks_a_coordinator_left_out_count_in_the_drop_warning(world):
    def two_of_many(task: Task, env) -> None:
        task.sub_tasks.extend([Task("1.1", "a"), Task("1.2", "b")])
        env.leave_out_subtasks(99998)  # the task was full: the rest were never made

    w = world(
        coordinator("split", two_of_many, activation="coordinator_only"),
        limits=Limits(max_subtasks=2),
    )
    result = w.run("q")
    assert [t.task_no for t in task_of(w, "1").sub_tasks] == ["1.1", "1.2"]
    [dropped] = [warning for warning in result.warnings if "dropped" in warning]
    assert dropped == (
        "99,998 subtasks of task 1 from 'split' were dropped: "
        "task 1 already has limits.max_subtasks (2) subtasks"
    )
    assert [e["message"] for e in w.events("warning")] == [dropped]  # the trace says the same


def test_c8_coordinators_run_by_priority_each_on_the_previous_output(world):
    def second(task: Task, env) -> None:
        task.task_prompt += " +second"

    def first(task: Task, env) -> None:
        task.task_prompt += " +first"

    w = world(
        coordinator("late", second, priority=20, activation="coordinator_only"),
        coordinator("early", first, priority=10, activation="coordinator_only"),
    )
    w.run("q")
    late = w.calls("late", "decompose")[0]
    assert [c.tool for c in w.calls(method="decompose")] == ["early", "late"]
    assert late.text == "q +first"
    assert task_of(w, "1").task_prompt == "q +first +second"


def test_c8_equal_priorities_run_in_file_order(world):
    w = world(
        coordinator("b", lambda t, e: None, activation="coordinator_only"),
        coordinator("a", lambda t, e: None, activation="coordinator_only"),
    )
    w.run("q")
    assert [c.tool for c in w.calls(method="decompose")] == ["b", "a"]


def test_c9_coordinator_step_runs_again_in_the_answer_round_and_applied_names_stop_reruns(
    world,
):
    asker = FakeTool("asker", asks("which one?"), activation="coordinator_only")
    forced = Task("1.1", "sub", required_tool_names={"asker"})
    split = coordinator("split", subtasks(forced), activation="coordinator_only")
    w = world(split, asker)
    assert w.run("q").outcome == "clarification"
    assert w.run("the blue one").outcome == "answer"
    assert len(w.calls("split", "decompose")) == 1
    skips = w.events("coordinator.skip", round_index=1)
    assert {(s["task"], s["reason"]) for s in skips} >= {("1", "applied")}


def test_c10_failing_coordinator_leaves_the_task_exactly_as_it_was(world):
    def half_then_fail(task: Task, env) -> None:
        task.task_prompt += " half"
        task.sub_tasks.append(Task("1.9", "half-made"))
        task.important_words.append("noise")
        raise RuntimeError("boom")

    before: dict = {}

    def remember(task: Task, env) -> None:
        before.update(task.to_json())

    w = world(
        coordinator("remember", remember, priority=1, activation="coordinator_only"),
        coordinator("broken", half_then_fail, priority=2, activation="coordinator_only"),
        coordinator("after", subtasks(("1.1", "ok")), priority=3, activation="coordinator_only"),
    )
    w.run("q")
    [error] = w.events("coordinator.error")
    assert error["coordinator"] == "broken" and "boom" in error["error"]
    after_call = w.calls("after", "decompose")[0]
    assert after_call.task is task_of(w, "1")
    assert [t.task_no for t in task_of(w, "1").sub_tasks] == ["1.1"]  # the next one still ran
    root = task_of(w, "1")
    assert root.task_prompt == before["task_prompt"]
    assert root.important_words == before["important_words"]


def test_c11_applied_names_include_coordinators_that_declined_or_failed(world):
    def fail(task: Task, env) -> None:
        raise ValueError("no")

    w = world(
        coordinator("declines", lambda t, e: None, activation="coordinator_only"),
        coordinator("fails", fail, activation="coordinator_only"),
    )
    w.run("q")
    assert task_of(w, "1").applied_coordinator_names == {"declines", "fails"}


def test_c12_applied_names_reach_new_subtasks(world):
    # "split" makes a subtask of another prompt type; "typed" only works on that type, so it
    # had no chance on the root and may still run on the subtask, while "split" may not.
    def split(task: Task, env) -> None:
        task.sub_tasks.append(Task("1.1", "sub", prompt_type="other"))

    typed = coordinator(
        "typed", lambda t, e: None, activation="coordinator_only", prompt_types=("other",)
    )
    w = world(coordinator("split", split, activation="coordinator_only"), typed)
    w.run("q")
    sub = task_of(w, "1.1")
    assert [(c.tool, c.task_no) for c in w.calls(method="decompose")] == [
        ("split", "1"),
        ("typed", "1.1"),
    ]
    assert sub.applied_coordinator_names == {"split", "typed"}
    assert task_of(w, "1").applied_coordinator_names == {"split"}
    skips = [(s["task"], s["coordinator"], s["reason"]) for s in w.events("coordinator.skip")]
    assert ("1", "typed", "prompt_type") in skips
    assert ("1.1", "split", "applied") in skips


def test_c12_applied_names_survive_a_clarification_round_in_the_stored_state(world):
    asker = FakeTool("asker", asks("?"), activation="coordinator_only")
    forced = Task("1.1", "sub", required_tool_names={"asker"})
    w = world(coordinator("split", subtasks(forced), activation="coordinator_only"), asker)
    w.run("q")
    w.reload()  # a new process: only the stored state is left
    w.run("answer")
    assert len(w.calls("split", "decompose")) == 1
    assert task_of(w, "1.1").applied_coordinator_names == {"split"}


def test_c20a_marker_is_between_parent_text_and_subtask_prompt(world):
    w = world(
        coordinator("split", subtasks(("1.1", "sub")), activation="coordinator_only"),
        FakeTool("tool", activation="always"),
    )
    w.run("parent text")
    sub_call = next(c for c in w.calls("tool") if c.task_no == "1.1")
    assert sub_call.text == f"parent text{AGENT_COORDINATOR_MARKER}sub"
    assert task_of(w, "1.1").prompt_context == "parent text"
