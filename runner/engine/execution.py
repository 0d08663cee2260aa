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

from runner.config.model import Output
from runner.engine.channels import RoundError, Stop
from runner.engine.context import RoundContext
from runner.engine.entry_points import call_entry_point
from runner.engine.failure import described, traceback_text
from runner.engine.marker import is_coordinator_requested
from runner.engine.outcome import ANSWER, CLARIFICATION
from runner.engine.results import (
    Clarification,
    PromptAndContext,
    ResultKind,
    ToolResult,
    result_entry,
)
from runner.engine.task import Task, ToolStatus, completion_key
from runner.engine.text import Text
from runner.sources import unique_sources


async def run_tool(ctx: RoundContext, task: Task, name: str) -> Stop | None:
    tool = ctx.setup.tools[name]
    link = task.text_link()  # C21: held as it is (a link, in a deep chain) by the buffer entry
    text = link if type(link) is str else str(link)  # and handed to the tool as a string
    clarification = None if ctx.state.pending is None else answered_clarification(ctx, task, name)
    consumer = name in ctx.setup.consumers
    key = completion_key(task.task_no, name)
    try:
        if clarification is not None:
            ctx.emit(
                "clarification.resume",
                task.task_no,
                tool=tool.name,
                question=clarification.question,
                answer=clarification.answer,
            )
        result = call_entry_point(tool, text, clarification, consumer, ctx.env(task, text))
        if type(result) is not ToolResult:  # a plain tool's result needs no more checks
            if inspect.isawaitable(result):  # (not _resolve: one coroutine less per run)
                result = await result
            if not isinstance(result, ToolResult):
                kind = type(result).__name__
                raise TypeError(f"tool {name!r} returned {kind}, not a ToolResult")
    except Exception as exc:
        task.tool_status[name] = ToolStatus.FAILED
        consume_clarification(ctx, clarification)
        error = described(exc)
        ctx.emit(
            "tool.error",
            task.task_no,
            tool=name,
            key=key,
            error=error,
            traceback=traceback_text(exc),
        )
        ctx.fail(
            "tools",
            task.task_no,
            f"tool {name!r} failed ({error}); the round went on without its result",
        )
        ctx.save()
        return None
    if clarification is not None:
        consume_clarification(ctx, clarification)
    if result.failure is not None:  # its text says what it could not do: the round degrades
        ctx.fail("tools", task.task_no, f"tool {name!r} {result.failure}")
    result = as_configured(ctx, name, result, text)
    return take_result(ctx, task, name, key, link, result, consumer)


def as_configured(ctx: RoundContext, name: str, result: ToolResult, text: str) -> ToolResult:
    """C23/C25: a tool's `output` (or `coordinator_output` when a coordinator asked) makes
    its context guaranteed or a terminal answer, whatever kind of tool it is. Only ever
    raises the result: a tool that returns guaranteed context itself keeps it."""
    config = ctx.setup.configs[name]
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


def take_result(
    ctx: RoundContext,
    task: Task,
    name: str,
    key: str,
    text: Text,
    result: ToolResult,
    consumer: bool,
) -> Stop | None:
    if result.kind is ResultKind.CLARIFICATION:
        return ask_clarification(ctx, task, name, result.text)
    task.tool_status[name] = ToolStatus.DONE
    if result.kind is ResultKind.TERMINAL:
        ctx.emit(
            "terminal",
            task.task_no,
            tool=name,
            key=key,
            chars=len(result.text),
            sources=len(result.sources),
        )
        return Stop(ANSWER, result.text, unique_sources(result.sources), key)
    guaranteed = result.kind is ResultKind.GUARANTEED
    data = dict(result.data)
    entry = (
        PromptAndContext(text, result.text, guaranteed, result.sources, data)
        if type(text) is str
        else result_entry(text, result.text, guaranteed, result.sources, data)  # a link
    )
    ctx.out.write(key, entry)  # C7, C20
    ctx.emit(
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
    ctx.save()
    return None


def ask_clarification(ctx: RoundContext, task: Task, name: str, question: str) -> Stop:
    """C24: the round ends with the question; the tool runs again with the answer. The limit
    counts the questions asked on the task, by any of its tools."""
    asked = [c for c in ctx.state.clarifications if c.task_no == task.task_no]
    limit = ctx.limits.max_clarification_rounds
    if len(asked) >= limit:
        task.tool_status[name] = ToolStatus.FAILED
        raise RoundError(_too_many_questions(task, name, question, asked, limit))
    rounds = len(asked) + 1
    task.tool_status[name] = ToolStatus.ASKED
    ctx.out.set_pending(Clarification(task.task_no, name, question, rounds=rounds))
    ctx.emit("clarification.ask", task.task_no, tool=name, question=question, rounds=rounds)
    return Stop(CLARIFICATION, question)


def answered_clarification(ctx: RoundContext, task: Task, name: str) -> Clarification | None:
    pending = ctx.state.pending
    if pending is None or pending.answer is None:
        return None
    if pending.task_no != task.task_no or pending.tool != name:
        return None
    return pending


def consume_clarification(ctx: RoundContext, clarification: Clarification | None) -> None:
    """An answered question, once handed to its tool, becomes history."""
    if clarification is not None:
        ctx.state.clarifications.append(clarification)
        ctx.state.pending = None


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
