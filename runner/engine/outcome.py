"""What a round returns: `RoundResult`, whose `to_json()` is the `runner run --json` object
(`schemas/result.schema.json`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from runner.engine.task import ContextBuffer, Task, TaskStatus, completion_key
from runner.sources import Source

if TYPE_CHECKING:
    from runner.trace import Trace

ANSWER = "answer"
CLARIFICATION = "clarification"
ERROR = "error"

EXIT_CODES = {ANSWER: 0, CLARIFICATION: 3, ERROR: 1}  # `runner run`'s exit status

# What can fail in a round while the round goes on: `stats.failed` counts each kind (`replies`:
# LLM replies that stayed degenerate, a loop or an echo, and were cut: runner.llm.degenerate)
FAILURE_KINDS = ("tools", "coordinators", "tasks", "replies")
_ONE = {"tools": "tool", "coordinators": "coordinator", "tasks": "task", "replies": "reply"}


@dataclass
class RoundResult:
    """What a round produced: the answer or question, its sources, tasks and trace."""

    session: str
    round: int
    outcome: str  # answer | clarification | error
    answer: str | None = None
    question: str | None = None
    sources: tuple[Source, ...] = ()
    tasks: dict[str, Any] | None = None  # the task tree (see `task_tree`)
    stats: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    trace: Trace | None = field(default=None, repr=False, compare=False)  # not part of the JSON
    # an error an unexpected exception made: that exception (the trace's `round.end` has its
    # traceback; not part of the JSON, whose `error` stays one line)
    exception: Exception | None = field(default=None, repr=False, compare=False)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.outcome]

    @property
    def degraded(self) -> bool:
        """A tool, coordinator or task failed and the round went on without it, or an LLM reply
        stayed degenerate and was cut: its answer may be incomplete. `warnings` says what
        failed, on which task, and why."""
        failed = self.stats.get("failed") or {}
        return any(failed.get(kind, 0) for kind in FAILURE_KINDS)

    def failures(self) -> str:
        """What failed, counted: "1 tool and 2 coordinators failed"; empty when nothing did."""
        failed = self.stats.get("failed") or {}
        parts = []
        for kind in FAILURE_KINDS:
            count = failed.get(kind, 0)
            if count:
                parts.append(f"{count} {kind if count != 1 else _ONE[kind]}")
        if not parts:
            return ""
        listed = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
        return f"{listed} failed"

    def validate(self) -> list[str]:
        """`to_json()` checked against schemas/result.schema.json; empty when it is valid."""
        from runner.trace import schema_problems

        return schema_problems("result", self.to_json(), "result")

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "round": self.round,
            "outcome": self.outcome,
            "answer": self.answer,
            "question": self.question,
            "sources": [s.to_json() for s in self.sources],
            "tasks": self.tasks,
            "stats": self.stats,
            "error": self.error,
            "warnings": list(self.warnings),
            "degraded": self.degraded,
        }


def task_tree(task: Task, buffer: ContextBuffer) -> dict[str, Any]:
    """A task and its subtasks for people and tools: which tools ran on it and why, and how much
    context each one left in the buffer under its completion key. Built without recursion, so a
    deep tree costs no stack."""
    root = _task_node(task, buffer)
    stack = [(task, root)]
    while stack:
        parent, node = stack.pop()
        for sub in parent.sub_tasks:
            child = _task_node(sub, buffer)
            node["children"].append(child)
            stack.append((sub, child))
    return root


def _task_node(task: Task, buffer: ContextBuffer) -> dict[str, Any]:
    tools = []
    reasons = task.tool_reasons
    for name, status in task.tool_status.items():
        key = completion_key(task.task_no, name)
        items = 0
        guaranteed = False
        cited: set[Source] = set()
        for result in buffer.peek(key):  # (one loop, no copy: every node of a big tree pays)
            if result.context.strip():
                items += 1
            if result.guaranteed:
                guaranteed = True
            cited.update(result.sources)
        tools.append(
            {
                "name": name,
                "key": key,
                "status": status._value_,  # (`.value` is a slow descriptor; trees are big)
                "reason": reasons.get(name, ""),
                "items": items,
                "sources": len(cited),
                "guaranteed": guaranteed,
            }
        )
    return {
        "task_no": task.task_no,
        "prompt": task.task_prompt,
        "status": task.status._value_,
        "skipped": task.status is TaskStatus.SKIPPED,
        "conditional": task.conditional,
        "owner": task.owner_coordinator_name,
        "required_tools": sorted(task.required_tool_names),
        "prompt_type": task.prompt_type,
        "tools": tools,
        "children": [],
    }
