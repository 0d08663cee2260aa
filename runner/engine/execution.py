"""Running one tool on one task: the entry point that fits, and what its result does.

A context consumer always gets a snapshot of the buffer (C20c, C20d); a tool continuing a
clarification gets the question and the answer (C24); the tool is handed the execution text
(C21). Its `output` may raise its context to guaranteed context or a terminal answer (C23, C25);
context goes to the buffer under the task's completion key (C7, C20); a clarifying question
ends the round (C24), within the per-task limit.
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from typing import Any

from runner.config.model import Output
from runner.engine.channels import Channels, RoundError, Stop
from runner.engine.failure import described, traceback_text
from runner.engine.marker import execution_text, is_coordinator_requested
from runner.engine.outcome import ANSWER, CLARIFICATION
from runner.engine.protocols import Tool
from runner.engine.results import Clarification, PromptAndContext, ResultKind, ToolResult
from runner.engine.task import Task, ToolStatus, completion_key


class ToolRun(Channels):
    """C20c–C25: one tool's execution on one task and what its result does."""

    async def _run_tool(self, task: Task, name: str) -> Stop | None:
        tool = self.tools[name]
        text = execution_text(task.task_prompt, task.prompt_context)  # C21
        clarification = (
            None if self.state.pending is None else self._answered_clarification(task, name)
        )
        consumer = name in self.o.consumers
        key = completion_key(task.task_no, name)
        try:
            result = self._call(tool, text, clarification, consumer, task)
            if type(result) is not ToolResult:  # a plain tool's result needs no more checks
                if inspect.isawaitable(result):  # (not _resolve: one coroutine less per run)
                    result = await result
                if not isinstance(result, ToolResult):
                    kind = type(result).__name__
                    raise TypeError(f"tool {name!r} returned {kind}, not a ToolResult")
        except Exception as exc:
            task.tool_status[name] = ToolStatus.FAILED
            self._consume(clarification)
            error = described(exc)
            self.emit(
                "tool.error",
                task.task_no,
                tool=name,
                key=key,
                error=error,
                traceback=traceback_text(exc),
            )
            self.fail(
                "tools",
                task.task_no,
                f"tool {name!r} failed ({error}); the round went on without its result",
            )
            self.save()
            return None
        if clarification is not None:
            self._consume(clarification)
        if result.failure is not None:  # its text says what it could not do: the round degrades
            self.fail("tools", task.task_no, f"tool {name!r} {result.failure}")
        result = self._as_configured(name, result, text)
        return self._take(task, name, key, text, result, consumer)

    def _call(
        self, tool: Tool, text: str, clarification: Clarification | None, consumer: bool, task: Task
    ) -> Any:
        """The entry point that fits: with the buffer for a consumer (C20c), with the question
        and answer when continuing a clarification (C24, C20d)."""
        env = self._env(task, text)
        if clarification is not None:
            self.emit(
                "clarification.resume",
                task.task_no,
                tool=tool.name,
                question=clarification.question,
                answer=clarification.answer,
            )
            method = (
                "execute_with_clarification_and_prior_context"
                if consumer
                else "execute_with_clarification"
            )
            entry = getattr(tool, method, None)
            if not callable(entry):
                raise TypeError(
                    f"tool {tool.name!r} asked a clarifying question but has no "
                    f"{method}(...) to continue it with the answer (C24)"
                )
            if consumer:
                return entry(text, clarification, env.buffer, env)
            return entry(text, clarification, env)
        if consumer:
            return tool.execute_with_prior_context(text, env.buffer, env)  # type: ignore[attr-defined]
        return tool.execute(text, env)

    def _as_configured(self, name: str, result: ToolResult, text: str) -> ToolResult:
        """C23/C25: a tool's `output` (or `coordinator_output` when a coordinator asked) makes
        its context guaranteed or a terminal answer, whatever kind of tool it is. Only ever
        raises the result: a tool that returns guaranteed context itself keeps it."""
        config = self.o.configs[name]
        output = config.output
        if config.coordinator_output is not None and is_coordinator_requested(text):
            output = config.coordinator_output
        if output is not Output.GUARANTEED and output is not Output.ANSWER:
            return result  # the common case first: nothing to raise
        if result.kind is not ResultKind.CONTEXT or result.is_empty:
            return result
        if output is Output.GUARANTEED:
            return replace(result, kind=ResultKind.GUARANTEED)
        if output is Output.ANSWER:
            return replace(result, kind=ResultKind.TERMINAL)
        return result

    def _take(
        self, task: Task, name: str, key: str, text: str, result: ToolResult, consumer: bool
    ) -> Stop | None:
        if result.kind is ResultKind.CLARIFICATION:
            return self._ask(task, name, result.text)
        task.tool_status[name] = ToolStatus.DONE
        if result.kind is ResultKind.TERMINAL:
            self.emit(
                "terminal",
                task.task_no,
                tool=name,
                key=key,
                chars=len(result.text),
                sources=len(result.sources),
            )
            return Stop(ANSWER, result.text, tuple(dict.fromkeys(result.sources)), key)
        guaranteed = result.kind is ResultKind.GUARANTEED
        entry = PromptAndContext(text, result.text, guaranteed, result.sources, dict(result.data))
        self._write(key, entry)  # C7, C20
        self.emit(
            "tool.run",
            task.task_no,
            tool=name,
            key=key,
            reason=task.tool_reasons.get(name, ""),
            result=result.kind._value_,  # the member's value, without the `.value` descriptor
            consumer=consumer,
            empty=not result.text.strip(),  # (`is_empty`: its kind is context or guaranteed)
            chars=len(result.text),
            sources=len(result.sources),
        )
        self.save()
        return None

    def _ask(self, task: Task, name: str, question: str) -> Stop:
        """C24: the round ends with the question; the tool runs again with the answer. The limit
        counts the questions asked on the task, by any of its tools."""
        asked = [c for c in self.state.clarifications if c.task_no == task.task_no]
        limit = self.limits.max_clarification_rounds
        if len(asked) >= limit:
            task.tool_status[name] = ToolStatus.FAILED
            raise RoundError(_too_many_questions(task, name, question, asked, limit))
        rounds = len(asked) + 1
        task.tool_status[name] = ToolStatus.ASKED
        self._set_pending(Clarification(task.task_no, name, question, rounds=rounds))
        self.emit("clarification.ask", task.task_no, tool=name, question=question, rounds=rounds)
        return Stop(CLARIFICATION, question)

    def _answered_clarification(self, task: Task, name: str) -> Clarification | None:
        pending = self.state.pending
        if pending is None or pending.answer is None:
            return None
        if pending.task_no != task.task_no or pending.tool != name:
            return None
        return pending

    def _consume(self, clarification: Clarification | None) -> None:
        """An answered question, once handed to its tool, becomes history."""
        if clarification is not None:
            self.state.clarifications.append(clarification)
            self.state.pending = None


def _too_many_questions(
    task: Task, name: str, question: str, asked: list[Clarification], limit: int
) -> str:
    """C24's error: what the limit counts (questions on one task, by any of its tools), who
    asked them, and what the user can do."""
    again = "ask the whole question again with every detail in one message"
    if not asked:  # a limit of 0: no task may ask at all
        return (
            f"tool {name!r} asked a clarifying question on task {task.task_no}, but this "
            f"pipeline allows none (limits.max_clarification_rounds: {limit}): {question} — "
            f"{again}"
        )
    plural = "question" if len(asked) == 1 else "questions"
    askers = ", ".join(dict.fromkeys(repr(c.tool) for c in asked))
    return (
        f"task {task.task_no} has already asked {len(asked)} clarifying {plural} (by {askers}), "
        f"the most one task may ask (limits.max_clarification_rounds: {limit}); tool {name!r} "
        f"asked one more: {question} — {again}"
    )
