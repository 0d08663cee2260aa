"""Property tests over random coordinator configurations and the task trees they grow.

Each example builds a domain of 1–3 random coordinators (declining, appending, splitting into
typed / forced / conditional / nested subtasks, failing, failing after a half-made change; with
or without a conditional decision; some activated after their subtasks) plus fixed tools, and
checks the invariants of C5, C10, C11–C12, C20b and C24 on every round.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from runner.config.model import Limits, PromptType, PromptTypes
from runner.engine.results import SubtaskDecision
from runner.engine.task import Task
from runner.llm.types import Purpose

from .kit import Call, FakeConsumer, FakeTool, Killed, World, asks, coordinator, suitable

TYPES = ("question", "other")
PROMPT_TYPES = PromptTypes(
    default="question",
    classify="rule",
    types=(PromptType("question"), PromptType("other", keywords=("otherwise",))),
)
TOOLS = ("t_always", "t_rule", "t_s", "t_co", "t_ask")
MESSAGE = "root alpha question"

subtask_specs = st.fixed_dictionaries(
    {
        "type": st.sampled_from(TYPES),
        "required": st.lists(st.sampled_from((*TOOLS, "ghost")), max_size=2, unique=True),
        "conditional": st.booleans(),
        "nested": st.booleans(),
    }
)
coordinator_specs = st.fixed_dictionaries(
    {
        "behaviour": st.sampled_from(["decline", "append", "split", "fail", "half_then_fail"]),
        "subtasks": st.lists(subtask_specs, min_size=1, max_size=2),
        "priority": st.integers(1, 5),
        "type": st.sampled_from(TYPES),
        "decide": st.sampled_from([None, "run", "skip", "raise"]),
        "after": st.booleans(),
    }
)
domains = st.fixed_dictionaries(
    {
        "coordinators": st.lists(coordinator_specs, min_size=1, max_size=3),
        "max_depth": st.integers(1, 3),
    }
)

# A domain that exercises every invariant at once, always tried besides the random ones: two
# coordinators of different prompt types, typed/forced/conditional/nested subtasks, a half-made
# failure, and a coordinator activated after its subtasks.
RICH = {
    "coordinators": [
        {
            "behaviour": "split",
            "subtasks": [
                {"type": "other", "required": [], "conditional": False, "nested": True},
                {
                    "type": "question",
                    "required": ["t_ask", "t_co"],
                    "conditional": True,
                    "nested": False,
                },
            ],
            "priority": 1,
            "type": "question",
            "decide": "run",
            "after": True,
        },
        {
            "behaviour": "half_then_fail",
            "subtasks": [
                {"type": "other", "required": ["t_s"], "conditional": False, "nested": False}
            ],
            "priority": 2,
            "type": "other",
            "decide": None,
            "after": False,
        },
    ],
    "max_depth": 3,
}

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _split(index: int, spec: dict[str, Any]):
    def split(task: Task, env) -> None:
        behaviour = spec["behaviour"]
        if behaviour == "decline":
            return
        if behaviour == "append":
            task.task_prompt += f" +c{index}"
            return
        if behaviour == "fail":
            raise RuntimeError("coordinator failed")
        for position, sub in enumerate(spec["subtasks"]):
            number = f"{task.task_no}.c{index}{position}"
            made = Task(
                number,
                f"do {number}",
                prompt_type=sub["type"],
                required_tool_names=set(sub["required"]),
                conditional=sub["conditional"],
            )
            if sub["nested"]:
                made.sub_tasks.append(
                    Task(f"{number}.n", f"do {number}.n", required_tool_names={"t_co"})
                )
            task.sub_tasks.append(made)
        if behaviour == "half_then_fail":
            task.task_prompt += " half-made"
            task.important_words.append("noise")
            raise RuntimeError("failed after changing the task")

    return split


def _decide(choice: str | None):
    if choice is None:
        return None

    def decide(parent: Task, nxt: Task, done) -> SubtaskDecision:
        if choice == "raise":
            raise RuntimeError("decision failed")
        return SubtaskDecision(choice)

    return decide


def _world(domain: dict[str, Any], *, asking: bool = False) -> World:
    coordinators = [
        coordinator(
            f"c{index}",
            _split(index, spec),
            decide=_decide(spec["decide"]),
            consumer=True,
            after=spec["after"],
            priority=spec["priority"],
            prompt_types=(spec["type"],),
            activation="coordinator_only",
        )
        for index, spec in enumerate(domain["coordinators"])
    ]
    # One observer per prompt type runs last in every coordinator step it belongs to: it sees
    # the task as the coordinators before it left it (C10's check).
    observers = [
        coordinator(
            f"observer_{kind}",
            lambda t, e: None,
            priority=99,
            prompt_types=(kind,),
            activation="coordinator_only",
        )
        for kind in TYPES
    ]
    tools = [
        FakeTool("t_always", activation="always"),
        FakeTool("t_rule", activation={"keywords": ["alpha"]}),
        FakeTool("t_s"),
        FakeTool("t_co", activation="coordinator_only"),
        FakeTool("t_ask", asks("which?") if asking else None, activation="coordinator_only"),
        FakeConsumer("t_cons", priority=200, activation="always"),
    ]
    return World(
        [*coordinators, *observers, *tools],
        [suitable(yes=["t_s"])],
        {"prompt_types": PROMPT_TYPES, "limits": Limits(max_depth=domain["max_depth"])},
    )


def _lineage(task_no: str) -> list[str]:
    parts = task_no.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _finished_decompositions(world: World) -> list[Call]:
    return [c for c in world.log if c.method == "decompose" and c.finished]


def _answer_all(world: World, first: str | None = MESSAGE) -> None:
    result = world.run(first)
    for _ in range(30):
        if result.outcome != "clarification":
            return
        result = world.run("an answer")
    raise AssertionError("the conversation never ended")


@PROPERTY
@given(domains)
@example(RICH)
def test_c11_c12_a_coordinator_runs_at_most_once_per_lineage(domain):
    world = _world(domain)
    world.run(MESSAGE)
    ran = Counter(
        (c.tool, c.task_no) for c in world.log if c.method == "decompose"
    )  # a failing one had its chance too (C11)
    for task in world.state.root.walk():
        for name in {tool for tool, _ in ran}:
            times = sum(ran[(name, ancestor)] for ancestor in _lineage(task.task_no))
            assert times <= 1, (name, task.task_no)


@PROPERTY
@given(domains)
@example(RICH)
def test_c20b_prompt_context_never_reaches_suitability_or_decomposition(domain):
    world = _world(domain)
    world.run(MESSAGE)
    for call in world.calls(method="decompose"):
        assert call.prompt_context is None
        assert call.text == call.state["task_prompt"]
    tasks = {t.task_prompt: t for t in world.state.root.walk()}
    for request in world.asked(Purpose.SUITABILITY):
        task = tasks[request.subject]
        assert request.facts["text"] == task.task_prompt
        if task.prompt_context:
            assert task.prompt_context not in request.prompt


@PROPERTY
@given(domains)
@example(RICH)
def test_c10_a_failing_coordinator_leaves_the_task_exactly_as_it_was(domain):
    world = _world(domain)
    world.run(MESSAGE)
    decompositions = world.calls(method="decompose")
    for position, call in enumerate(decompositions):
        if call.finished:
            continue
        following = next(
            later for later in decompositions[position + 1 :] if later.task is call.task
        )  # the observer of the task's type always follows in the same step
        restored = _without_applied(following.state, call.tool)
        assert restored == _without_applied(call.state, call.tool), call.tool


def _without_applied(state: dict[str, Any], failed: str) -> dict[str, Any]:
    """A task's JSON without what a failing coordinator does leave on it, on purpose: its name
    in applied_coordinator_names (C11: it has had its chance) and, on the task it failed on,
    the orchestrator's mark that it failed there (so it is not activated on it)."""
    kept = {key: value for key, value in state.items() if key != "applied_coordinator_names"}
    for record in ("tool_status", "tool_reasons"):
        kept[record] = {name: v for name, v in state[record].items() if name != failed}
    kept["sub_tasks"] = [_without_applied(sub, failed) for sub in state["sub_tasks"]]
    return kept


@PROPERTY
@given(domains)
@example(RICH)
def test_c5_every_subtask_closes_in_list_order_before_its_parent_activation(domain):
    world = _world(domain)
    result = world.run(MESSAGE)
    events = result.trace.events
    started = {e["task"]: e["seq"] for e in events if e["event"] == "task.start"}
    ended = {e["task"]: e["seq"] for e in events if e["event"] == "task.end"}
    activated = {e["task"]: e["seq"] for e in events if e["event"] == "activation"}
    for task in world.state.root.walk():
        ran = [sub for sub in task.sub_tasks if sub.task_no in started]
        closing = [ended[sub.task_no] for sub in ran]
        opening = [started[sub.task_no] for sub in ran]
        assert opening == sorted(opening)  # list order
        for sub_end, next_start in zip(closing, opening[1:], strict=False):
            assert sub_end < next_start  # one by one
        if task.task_no in activated and closing:
            assert max(closing) < activated[task.task_no]


@PROPERTY
@given(domains)
@example(RICH)
def test_c24_clarification_rounds_run_no_completed_tool_again(domain):
    world = _world(domain, asking=True)
    _answer_all(world)
    executions = Counter(
        (c.task_no, c.tool, "continue" if c.clarification else "first")
        for c in world.log
        if c.method.startswith("execute")
    )
    assert all(count == 1 for count in executions.values()), executions
    decompositions = Counter((c.task_no, c.tool) for c in _finished_decompositions(world))
    assert all(count == 1 for count in decompositions.values())


@PROPERTY
@given(domains, st.integers(0, 25))
@example(RICH, 7)
def test_c24_a_round_resumed_after_a_crash_runs_no_completed_tool_again(domain, crash_at):
    world = _world(domain, asking=True)
    count = {"calls": 0}

    def crash(call: Call) -> None:
        count["calls"] += 1
        if count["calls"] == crash_at:
            raise Killed()

    for tool in world.tools:
        tool.before = crash
    try:
        _answer_all(world)
    except Killed:
        world.reload()  # a new process continues from the last stored state
        _answer_all(world, first=None)
    finished = Counter(
        (c.task_no, c.tool, c.method, c.clarification is not None)
        for c in world.log
        if c.finished and c.method != "decide_conditional"
    )
    assert all(count == 1 for count in finished.values()), finished
