"""A small world for engine tests: fake tools that implement the protocols and log every call,
a pipeline built from model objects, and the real LLM layer with the scripted provider.

Every round a `World` runs is checked on the way out: its result and its trace must validate
against their schemas, and the session state must survive a JSON round trip unchanged.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.config.model import (
    Activation,
    ActivationMode,
    LLMConfig,
    Pipeline,
    ScriptRule,
    ToolConfig,
    ToolKind,
)
from runner.engine.orchestrator import Orchestrator
from runner.engine.outcome import RoundResult
from runner.engine.protocols import ContextConsumerBase, PriorContext, ToolEnv
from runner.engine.results import Clarification, SubtaskDecision, ToolResult
from runner.engine.state import SessionState
from runner.engine.task import Task
from runner.llm import build_client
from runner.llm.prompts import Prompts
from runner.llm.types import LLMRequest, Purpose

ANSWER = "the final answer"


@dataclass
class Call:
    """One call the orchestrator made on a fake tool."""

    tool: str
    method: str
    task_no: str
    text: str = ""
    prior: PriorContext | None = None
    clarification: Clarification | None = None
    env: ToolEnv | None = None
    task: Task | None = None
    prompt_context: str | None = None  # what the task's prompt_context was during the call
    completed: PriorContext | None = None  # decide_conditional's completed_so_far
    state: dict[str, Any] | None = None  # decompose: the task as the coordinator received it
    finished: bool = False  # the call returned (it did not raise)


class Killed(BaseException):
    """Stands for the process dying: not an Exception, so nothing in the engine catches it."""


Reply = Callable[[Call], Any] | ToolResult | str | None


def make_config(name: str, **settings: Any) -> ToolConfig:
    """A ToolConfig; `activation` may be a mode name or `{keywords, pattern}` (a rule)."""
    activation = settings.pop("activation", None)
    if isinstance(activation, str):
        settings["activation"] = Activation(ActivationMode(activation))
    elif isinstance(activation, Mapping):
        settings["activation"] = Activation(
            ActivationMode.RULE,
            keywords=tuple(activation.get("keywords", ())),
            pattern=activation.get("pattern"),
        )
    return ToolConfig(name=name, kind=ToolKind.PYTHON, **settings)


class FakeTool:
    """A tool whose reply is fixed (text means context) or computed from the call."""

    def __init__(self, name: str, reply: Reply = None, **settings: Any) -> None:
        self.name = name
        self.config = make_config(name, **settings)
        self.reply = reply
        self.log: list[Call] = []
        self.before: Callable[[Call], None] = lambda call: None  # a test's hook (crashes)

    def _record(self, call: Call) -> None:
        self.log.append(call)
        self.before(call)

    def _answer(self, call: Call) -> ToolResult:
        self._record(call)
        reply = self.reply(call) if callable(self.reply) else self.reply
        call.finished = True
        if reply is None:
            return ToolResult.context(f"{self.name} on {call.task_no}")
        return ToolResult.context(reply) if isinstance(reply, str) else reply

    def _call(self, method: str, text: str, env: ToolEnv, **extra: Any) -> Call:
        return Call(self.name, method, env.task.task_no, text, env=env, task=env.task, **extra)

    def execute(self, text: str, env: ToolEnv) -> ToolResult:
        return self._answer(self._call("execute", text, env))

    def execute_with_clarification(
        self, text: str, clarification: Clarification, env: ToolEnv
    ) -> ToolResult:
        call = self._call("execute_with_clarification", text, env, clarification=clarification)
        return self._answer(call)


class FakeConsumer(ContextConsumerBase, FakeTool):
    """A clarifiable context consumer (C20c, C20d); its plain `execute` raises."""

    async def execute_with_prior_context(
        self, text: str, prior_context: PriorContext, env: ToolEnv
    ) -> ToolResult:
        return self._answer(
            self._call("execute_with_prior_context", text, env, prior=prior_context)
        )

    async def execute_with_clarification_and_prior_context(
        self,
        text: str,
        clarification: Clarification,
        prior_context: PriorContext,
        env: ToolEnv,
    ) -> ToolResult:
        call = self._call(
            "execute_with_clarification_and_prior_context",
            text,
            env,
            prior=prior_context,
            clarification=clarification,
        )
        return self._answer(call)


Split = Callable[[Task, ToolEnv], Any]


class _Decomposes:
    """The coordinator part (C1–C2): `split(task, env)` changes the task in place."""

    name: str
    split: Split
    _record: Callable[[Call], None]

    def decompose(self, task: Task, env: ToolEnv) -> Task:
        call = Call(self.name, "decompose", task.task_no, env.text, env=env, task=task)
        call.prompt_context = task.prompt_context
        call.state = task.to_json()
        self._record(call)
        returned = self.split(task, env)
        call.finished = True
        return task if returned is None else returned


class _Decides:
    """The optional decision on conditional subtasks (C16)."""

    name: str
    decide: Callable[[Task, Task, PriorContext], Any]
    _record: Callable[[Call], None]

    def decide_conditional(
        self, parent: Task, next_subtask: Task, completed_so_far: PriorContext, env: ToolEnv
    ) -> SubtaskDecision:
        call = Call(self.name, "decide_conditional", next_subtask.task_no, task=next_subtask)
        call.completed = completed_so_far
        self._record(call)
        decision = self.decide(parent, next_subtask, completed_so_far)
        call.finished = True
        return decision


def coordinator(
    name: str,
    split: Split,
    *,
    decide: Callable[[Task, Task, PriorContext], Any] | None = None,
    consumer: bool = False,
    after: bool = False,
    reply: Reply = None,
    **settings: Any,
) -> FakeTool:
    """A fake coordinator; with `decide` it has decide_conditional, with `after` it asks to be
    activated on the task it decomposed once the subtasks close (C20e)."""
    bases: list[type] = [_Decides] if decide is not None else []
    bases += [_Decomposes, FakeConsumer if consumer else FakeTool]
    cls = type("FakeCoordinator", tuple(bases), {})
    tool = cls(name, reply, **settings)
    tool.split = split  # type: ignore[attr-defined]
    if decide is not None:
        tool.decide = decide  # type: ignore[attr-defined]
    tool.activate_after_subtasks = after  # type: ignore[attr-defined]
    return tool


def subtasks(*specs: tuple[str, str] | Task) -> Split:
    """A split that adds these subtasks (task_no, prompt) to the task it is given."""

    def split(task: Task, env: ToolEnv) -> None:
        for spec in specs:
            made = spec if isinstance(spec, Task) else Task(spec[0], spec[1])
            task.sub_tasks.append(made)

    return split


def asks(question: str, then: str = "answered") -> Callable[[Call], ToolResult]:
    """A reply that asks `question` and, once it is answered, gives context with the answer."""

    def reply(call: Call) -> ToolResult:
        if call.clarification is None:
            return ToolResult.clarification(question)
        return ToolResult.context(f"{then}: {call.clarification.answer}")

    return reply


def suitable(
    yes: Sequence[str] = (), no: Sequence[str] = (), task: str | None = None
) -> ScriptRule:
    """A scripted suitability reply: the named tools are suitable, the others not."""
    reply = {**{name: True for name in yes}, **{name: False for name in no}}
    return ScriptRule(reply=reply, purpose="suitability", task=task)


class _RecordingProvider:
    """Wraps the scripted provider to keep every request the LLM layer sent."""

    def __init__(self, inner: Any, requests: list[LLMRequest]) -> None:
        self.inner = inner
        self.requests = requests

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def generate(self, request: LLMRequest, settings: Any) -> Any:
        self.requests.append(request)
        return await self.inner.generate(request, settings)


@dataclass
class World:
    tools: Sequence[FakeTool]
    script: Sequence[ScriptRule] = ()
    settings: dict[str, Any] = field(default_factory=dict)
    session: str = "s1"

    def __post_init__(self) -> None:
        rules = (*self.script, ScriptRule(reply=ANSWER, purpose="answer"))
        self.pipeline = Pipeline(
            path=Path("/virtual/demo/pipeline.yaml"),
            domain="demo",
            tools=tuple(tool.config for tool in self.tools),
            llm=LLMConfig(provider="scripted", script=rules),
            content_hash="hash-1",
            **self.settings,
        )
        self.requests: list[LLMRequest] = []
        self.client = build_client(self.pipeline.llm, pipeline=self.pipeline)
        self.client.provider = _RecordingProvider(self.client.provider, self.requests)
        self.prompts = Prompts(self.client, self.pipeline)
        self.log: list[Call] = []
        for tool in self.tools:
            tool.log = self.log
        self.state = SessionState.new(self.session, self.pipeline)
        self.saved: list[dict[str, Any]] = []
        self.results: list[RoundResult] = []
        self.orchestrator = Orchestrator(
            self.pipeline, {t.name: t for t in self.tools}, self.prompts, checkpoint=self.save
        )

    def save(self, state: SessionState) -> None:
        self.saved.append(json.loads(json.dumps(state.to_json())))

    def run(self, message: str | None) -> RoundResult:
        result = asyncio.run(self.orchestrator.run_round(self.state, message))
        check_round(result, self.state)
        self.results.append(result)
        return result

    def reload(self) -> None:
        """Continue from the last checkpoint, as a new process would."""
        self.state = SessionState.from_json(self.saved[-1])

    # --- what happened ------------------------------------------------------------------

    def calls(self, tool: str | None = None, method: str | None = None) -> list[Call]:
        return [
            c
            for c in self.log
            if (tool is None or c.tool == tool) and (method is None or c.method == method)
        ]

    def ran(self) -> list[tuple[str, str]]:
        """(task_no, tool) of every execution, in order (decisions and decompositions left out)."""
        return [(c.task_no, c.tool) for c in self.log if c.method.startswith("execute")]

    def asked(self, purpose: Purpose) -> list[LLMRequest]:
        return [r for r in self.requests if r.purpose is purpose]

    def events(self, name: str, round_index: int = -1) -> list[dict[str, Any]]:
        trace = self.results[round_index].trace
        assert trace is not None
        return trace.of(name)


def check_round(result: RoundResult, state: SessionState) -> None:
    """What every round must satisfy, whatever the test checks besides."""
    assert result.validate() == [], result.validate()
    assert result.trace is not None
    assert result.trace.validate() == [], result.trace.validate()
    stored = state.to_json()
    assert SessionState.from_json(json.loads(json.dumps(stored))).to_json() == stored
    assert not state.interrupted


def task_of(world: World, task_no: str) -> Task:
    assert world.state.root is not None
    found = world.state.root.find(task_no)
    assert found is not None, task_no
    return found
