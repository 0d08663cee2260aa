"""The task tree [TaskInfo] and the context buffer: the whole state a round works on.

A coordinator changes a task in place (C2), so the orchestrator keeps a task's state on the task
object itself across rounds. Everything here serialises to JSON and back without loss, because a
session stores it between clarification rounds (C24).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any

from runner.engine.results import PromptAndContext
from runner.engine.text import LinkedText, Text, as_str, linked
from runner.sources import Source


class TaskStatus(str, Enum):
    PENDING = "pending"
    RUNNING = "running"
    WAITING = "waiting"  # a clarifying question is pending on it or below it (C24)
    DONE = "done"
    SKIPPED = "skipped"  # a conditional subtask its owner decided to skip (C16)
    FAILED = "failed"


class ToolStatus(str, Enum):
    DONE = "done"
    ASKED = "asked"  # asked a clarifying question that is not answered yet
    FAILED = "failed"


@dataclass
class Task:
    """A task of the round's tree: its prompt, its subtasks and what ran on it."""

    task_no: str
    task_prompt: str
    important_words: list[str] = field(default_factory=list)
    prompt_type: str | None = None
    sub_tasks: list[Task] = field(default_factory=list)
    required_tool_names: set[str] = field(default_factory=set)  # C13
    conditional: bool = False  # C16
    owner_coordinator_name: str | None = None  # C18
    applied_coordinator_names: set[str] = field(default_factory=set)  # C11
    # C20a. Below a long text it is held as a link (`hold_prompt_context`, runner.engine.text)
    prompt_context: str | None = None
    # runtime state
    status: TaskStatus = TaskStatus.PENDING
    tool_status: dict[str, ToolStatus] = field(default_factory=dict)
    loop_vars: dict[str, Any] = field(default_factory=dict)  # saved when a template made it
    template_name: str | None = None  # the subtask template that made it, if any
    depth: int = 0
    # The tools activated on this task, by priority, decided once (so a resumed round neither
    # repeats the suitability call nor changes its mind) and why each one was (C13-C15a, C20e).
    planned_tools: Sequence[str] | None = None
    tool_reasons: dict[str, str] = field(default_factory=dict)
    # Root only (C27-C28): the gatekeeper's verdict, once made: "enough", "deep" or "none" (the
    # prompt type has no deep fallback).
    fallback: str | None = None
    # `decompose.parallel`: what this subtask's subtree produced while it ran ahead of an earlier
    # sibling, kept here (and stored with the session) until processing reaches it in list order:
    # its buffer entries (completion key, result) and the terminal answer it gave, if any.
    held: list[tuple[str, PromptAndContext]] = field(default_factory=list)
    held_answer: HeldAnswer | None = None
    # `text_link()`'s last link, with the task_prompt and prompt_context it was made of
    _text: tuple[str, Text | None, Text] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def hold_prompt_context(self, text: Text | None) -> None:
        """Set prompt_context to a string, or to a link that is joined only when it is read:
        the task is then a LinkedTask (the same object, C2), so a task that holds a plain
        string (most texts are short) reads and writes a plain attribute."""
        if type(text) is LinkedText:
            self.__class__ = LinkedTask
        self.prompt_context = text  # type: ignore[assignment]  # (LinkedTask's takes a link)

    def held_prompt_context(self) -> Text | None:
        """prompt_context as it is held: a link is not joined (LinkedTask)."""
        return self.prompt_context

    def text_link(self) -> Text:
        """C21: the text a tool on this task is handed, and the prompt_context of the subtasks
        it makes (C20a), held as a link to the text above it (made in O(1), joined when read:
        in a chain, level d's text holds the d prompts above it). Made once while task_prompt
        and prompt_context stay what they are: the task's buffer entry and its subtasks'
        prompt_context share it."""
        # (held_prompt_context, inline; not through `__dict__` on a plain task: reading it
        # makes CPython give the task a dict of its own, and its attributes slower to read)
        context = self.prompt_context if type(self) is Task else self.held_prompt_context()
        made = self._text
        if made is not None and made[0] is self.task_prompt and made[1] is context:
            return made[2]
        link = linked(self.task_prompt, context)
        self._text = (self.task_prompt, context, link)
        return link

    def execution_text(self) -> str:
        """C21: task_prompt alone, or prompt_context + marker + task_prompt, as a string."""
        return as_str(self.text_link())

    def walk(self) -> Iterator[Task]:
        """This task and its descendants, depth-first in list order. Iterative: a deep tree
        costs neither recursion depth nor a generator chain per level."""
        stack = [self]
        while stack:
            task = stack.pop()
            yield task
            stack.extend(reversed(task.sub_tasks))

    def find(self, task_no: str) -> Task | None:
        return next((t for t in self.walk() if t.task_no == task_no), None)

    def snapshot(self) -> TaskSnapshot:
        """C10: everything about this task and its subtree, to put back in place on error."""
        values = {
            f.name: copy.deepcopy(getattr(self, f.name))
            for f in fields(self)
            if f.name != "sub_tasks"
        }
        return TaskSnapshot(self, values, [sub.snapshot() for sub in self.sub_tasks])

    def to_json(self) -> dict[str, Any]:
        return {
            "task_no": self.task_no,
            "task_prompt": self.task_prompt,
            "important_words": list(self.important_words),
            "prompt_type": self.prompt_type,
            "sub_tasks": [s.to_json() for s in self.sub_tasks],
            "required_tool_names": sorted(self.required_tool_names),
            "conditional": self.conditional,
            "owner_coordinator_name": self.owner_coordinator_name,
            "applied_coordinator_names": sorted(self.applied_coordinator_names),
            "prompt_context": self.prompt_context,
            "status": self.status.value,
            "tool_status": {k: v.value for k, v in self.tool_status.items()},
            "loop_vars": copy.deepcopy(self.loop_vars),
            "template_name": self.template_name,
            "depth": self.depth,
            "planned_tools": None if self.planned_tools is None else list(self.planned_tools),
            "tool_reasons": dict(self.tool_reasons),
            "fallback": self.fallback,
            "held": [{"key": key, "result": result.to_json()} for key, result in self.held],
            "held_answer": None if self.held_answer is None else self.held_answer.to_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Task:
        planned = data.get("planned_tools")
        return cls(
            task_no=data["task_no"],
            task_prompt=data["task_prompt"],
            important_words=list(data.get("important_words", [])),
            prompt_type=data.get("prompt_type"),
            sub_tasks=[cls.from_json(s) for s in data.get("sub_tasks", [])],
            required_tool_names=set(data.get("required_tool_names", [])),
            conditional=data.get("conditional", False),
            owner_coordinator_name=data.get("owner_coordinator_name"),
            applied_coordinator_names=set(data.get("applied_coordinator_names", [])),
            prompt_context=data.get("prompt_context"),
            status=TaskStatus(data.get("status", "pending")),
            tool_status={k: ToolStatus(v) for k, v in data.get("tool_status", {}).items()},
            loop_vars=copy.deepcopy(dict(data.get("loop_vars", {}))),
            template_name=data.get("template_name"),
            depth=data.get("depth", 0),
            planned_tools=None if planned is None else list(planned),
            tool_reasons=dict(data.get("tool_reasons", {})),
            fallback=data.get("fallback"),
            held=[
                (entry["key"], PromptAndContext.from_json(entry["result"]))
                for entry in data.get("held", [])
            ],
            held_answer=HeldAnswer.from_json(data["held_answer"])
            if data.get("held_answer")
            else None,
        )


class HeldContext:
    """LinkedTask.prompt_context: what the task holds, a link read joined (a data descriptor,
    so only a task that holds a link pays for a call when it is read or set)."""

    def __get__(self, task: Task | None, owner: type | None = None) -> str | None:
        if task is None:
            return None
        held = task.__dict__["prompt_context"]
        return held if held is None or type(held) is str else str(held)

    def __set__(self, task: Task, value: Text | None) -> None:
        task.__dict__["prompt_context"] = value


class LinkedTask(Task):
    """A task whose prompt_context is held as a link (`Task.hold_prompt_context`): the same
    fields, read the same, equal to the Task of the same values."""

    prompt_context = HeldContext()

    def held_prompt_context(self) -> Text | None:
        held: Text | None = self.__dict__["prompt_context"]
        return held

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Task):
            return NotImplemented
        return _compared(self) == _compared(other)

    __hash__ = Task.__hash__  # (None: a task is mutable)


def _compared(task: Task) -> list[Any]:
    return [getattr(task, f.name) for f in fields(task) if f.compare]


@dataclass(frozen=True)
class HeldAnswer:
    """A terminal answer (C25) a subtask gave while running ahead of an earlier sibling: the
    round ends with it when processing reaches that subtask."""

    key: str  # the completion key of the tool that gave it
    text: str
    sources: tuple[Source, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "text": self.text,
            "sources": [source.to_json() for source in self.sources],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> HeldAnswer:
        sources = tuple(Source.from_json(s) for s in data.get("sources", ()))
        return cls(data["key"], data["text"], sources)


@dataclass
class TaskSnapshot:
    """A task's state at one moment. `restore()` puts it back *into the same objects* (C2: the
    orchestrator and the session hold on to them), subtasks included."""

    task: Task
    values: dict[str, Any]
    children: list[TaskSnapshot]

    def restore(self) -> None:
        for name, value in self.values.items():
            setattr(self.task, name, copy.deepcopy(value))
        self.task.sub_tasks = [child.task for child in self.children]
        for child in self.children:
            child.restore()


def completion_key(task_no: str, tool: str) -> str:
    """C7/C17: the key a tool's results on a task are stored under."""
    return f"{task_no}:{tool}"


def key_task_no(key: str) -> str:
    """The task number part of a completion key (tool names never hold a colon)."""
    return key.rpartition(":")[0]


Entry = tuple[str, PromptAndContext]  # (completion key, result)


class BufferView(Mapping[str, tuple[PromptAndContext, ...]]):
    """A read-only snapshot of context-buffer entries: completion key -> results, in buffer order.

    Made in O(1): it remembers how long each append-only entry log was when it was taken, and
    groups those entries by key only when first read. A tool that never reads its buffer (most
    do not) costs nothing, however large the buffer has grown."""

    def __init__(self, segments: tuple[tuple[list[Entry], int], ...]) -> None:
        self.segments = segments
        self._grouped: dict[str, tuple[PromptAndContext, ...]] | None = None

    def extended(self, log: list[Entry]) -> BufferView:
        """This view followed by the entries `log` holds now."""
        return BufferView((*self.segments, (log, len(log))))

    def entries(self) -> Iterator[Entry]:
        for log, length in self.segments:
            yield from log[:length]

    def _groups(self) -> dict[str, tuple[PromptAndContext, ...]]:
        if self._grouped is None:
            grouped: dict[str, list[PromptAndContext]] = {}
            for key, result in self.entries():
                grouped.setdefault(key, []).append(result)
            self._grouped = {key: tuple(results) for key, results in grouped.items()}
        return self._grouped

    def __getitem__(self, key: str) -> tuple[PromptAndContext, ...]:
        return self._groups()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._groups())

    def __len__(self) -> int:
        return len(self._groups())

    def __repr__(self) -> str:
        return f"BufferView({self._groups()!r})"


class ContextBuffer:
    """An ordered map from completion key to the results that tool produced on that task (C20).

    Tools receive `snapshot()`s, never the live buffer: a tool is a shared singleton and must not
    hold on to a buffer that goes on changing (C20c). The entries are kept in an append-only log
    as well, so a snapshot is taken in O(1) (BufferView).
    """

    def __init__(self, entries: Mapping[str, list[PromptAndContext]] | None = None) -> None:
        self._entries: dict[str, list[PromptAndContext]] = {}
        self._log: list[Entry] = []
        for key, results in (entries or {}).items():
            for result in results:
                self.add_entry(key, result)

    def add(self, task_no: str, tool: str, result: PromptAndContext) -> None:
        self.add_entry(completion_key(task_no, tool), result)

    def add_entry(self, key: str, result: PromptAndContext) -> None:
        self._entries.setdefault(key, []).append(result)
        self._log.append((key, result))

    def snapshot(self) -> BufferView:
        return BufferView(((self._log, len(self._log)),))

    def keys(self) -> list[str]:
        return list(self._entries)

    def items(self) -> list[tuple[str, list[PromptAndContext]]]:
        return [(k, list(v)) for k, v in self._entries.items()]

    def results(self, key: str) -> list[PromptAndContext]:
        """The results under one completion key (none: an empty list)."""
        return list(self._entries.get(key, ()))

    def peek(self, key: str) -> Sequence[PromptAndContext]:
        """`results` without the copy, for a reader that only reads them at once."""
        return self._entries.get(key, ())

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def to_json(self) -> list[dict[str, Any]]:
        # a list, not an object, so the order survives any JSON tool on the way
        return [{"key": k, "results": [r.to_json() for r in v]} for k, v in self._entries.items()]

    @classmethod
    def from_json(cls, data: list[Mapping[str, Any]]) -> ContextBuffer:
        return cls({e["key"]: [PromptAndContext.from_json(r) for r in e["results"]] for e in data})
