"""One round of a conversation, by the rules C1–C33.

A round works on a `SessionState` in place. For each task, depth-first in list order:

1. the coordinator step (C8–C12, coordinators.py): every coordinator not yet applied on the
   task's lineage runs, by priority, each on the previous one's output; a failing one leaves the
   task as it was (C10);
2. its subtasks (C4–C7, C16–C19, subtasks.py), one by one in list order, each processed the
   same way, a conditional one only when its owner decides RUN; consecutive subtasks of a
   coordinator with `decompose.parallel` run concurrently, with the same observable order;
3. its activation (C13–C15a, C20e, activation.py): forced tools, or the candidates chosen by
   rule, `always` and one suitability call, plus the retrieval tool, run by priority
   (execution.py); results go to the context buffer (C20), a clarifying question or a terminal
   answer ends the round (C24, C25);
4. on the root only: the gatekeeper and the deep fallback (C27–C28, answer.py).

Then the final answer (C33, answer.py). The checkpoint callback gets the state after every step
that must survive a crash; a stored state whose `active_message` is set is resumed without
running any completed tool again.

Each step is a plain function of the round's `RoundContext` (context.py); `process` closes one
task and is handed to the subtask walk, which recurses through it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from runner.engine.activation import activate, classify_off_loop
from runner.engine.answer import deep_fallback, final_answer
from runner.engine.channels import CLOSED, RoundChannel, RoundError, Stop, during
from runner.engine.context import RoundContext
from runner.engine.coordinators import coordinator_step, run_coordinators, subtree
from runner.engine.failure import StepFailed, described, traceback_text
from runner.engine.outcome import (
    ANSWER,
    CLARIFICATION,
    ERROR,
    FAILURE_KINDS,
    RoundResult,
    task_tree,
)
from runner.engine.state import SessionState
from runner.engine.subtasks import close_subtasks
from runner.engine.task import ContextBuffer, Task, TaskStatus
from runner.llm.accounting import Accounting, CallRecord
from runner.llm.bound import TaskClient, round_client
from runner.text.words import content_words, normalize
from runner.trace import Trace

if TYPE_CHECKING:
    from runner.engine.setup import RoundSetup


async def run_round(
    setup: RoundSetup,
    state: SessionState,
    message: str | None,
    *,
    trace: Trace,
    checkpoint: Callable[[SessionState], None] | None = None,
    llm: TaskClient | None = None,
) -> RoundResult:
    """One round of `setup`'s pipeline on `state` (changed in place), its events in `trace`,
    `checkpoint` given the state after every step that must survive a crash. `llm`: the
    round's LLM client (its call records, the answer's stream: runner.llm.bound), else the
    setup's client, recording in its own list."""
    started = time.monotonic()
    if llm is None and setup.llm is not None:
        llm = round_client(setup.llm)
    out = RoundChannel(state, trace, llm)
    first_call = len(out.llm_calls())
    ctx = RoundContext(setup, state, out, dict.fromkeys(FAILURE_KINDS, 0), checkpoint, llm)
    message = begin(ctx, message)
    try:
        root = ctx.root
        if root.prompt_type is None:
            root.prompt_type = await classify(ctx, root.task_prompt)
        stop = await process(ctx, root)
        if stop is None:
            stop = await final_answer(ctx, root)
    except RoundError as exc:
        stop = Stop(ERROR, str(exc))
    except Exception as exc:  # an LLM or template failure outside any tool: end cleanly
        stop = unexpected(ctx, out, exc)
    calls = out.llm_calls()[first_call:]
    return end(ctx, out, message, stop, calls, started)


def unexpected(ctx: RoundContext, out: RoundChannel, exc: Exception) -> Stop:
    """The error an unexpected exception ends the round with: one line that names the step it
    happened in (or the task, for one of the engine's own), and its traceback for the trace's
    `round.end` event."""
    if isinstance(exc, StepFailed):
        return Stop(ERROR, str(exc), exception=exc.cause)
    where = f"the orchestrator failed on task {out.last_task or ctx.root.task_no}"
    return Stop(ERROR, f"{where}: {described(exc)}", exception=exc)


def begin(ctx: RoundContext, message: str | None) -> str:
    """Start the round. The message is kept as sent (history, trace, request-id replays compare
    it), and enters the engine in runner's normal form (`runner.text.words.normalize`): the root
    task and a clarification's answer, so that prompt-type and activation rules, lookups,
    scripted rules and prompts all see the text the pages were indexed in."""
    state = ctx.state
    if state.interrupted:
        kind = "resume"
        resumed = state.active_message or ""
        if message and message != resumed:
            ctx.warn(
                f"the round interrupted on {resumed!r} was finished first; the message "
                f"{message!r} was not processed: send it again"
            )
        message = resumed
    elif state.waiting:
        kind = "answer"
        assert state.pending is not None
        state.pending = replace(state.pending, answer=normalize(message or ""))
        state.rounds += 1
    else:
        kind = "fresh"
        state.rounds += 1
        text = normalize(message or "")
        state.root = Task("1", text, important_words=content_words(text))
        state.buffer = ContextBuffer()
        state.pending = None
        state.clarifications = []  # clarification rounds are counted per question tree
    state.active_message = message or ""
    ctx.emit(
        "round.start",
        None,
        session=state.session_id,
        round=state.rounds,
        kind=kind,
        message=state.active_message,
    )
    ctx.save()
    return state.active_message


def end(
    ctx: RoundContext,
    out: RoundChannel,
    message: str,
    stop: Stop,
    calls: Sequence[Any],
    started: float,
) -> RoundResult:
    """Close the round: its history entry, its warnings and failures from the LLM calls it
    made (`calls`), its `round.end` event and its result."""
    state = ctx.state
    if stop.outcome != CLARIFICATION:
        state.pending = None
    close_open_tasks(state, TaskStatus.FAILED if stop.outcome == ERROR else TaskStatus.DONE)
    state.active_message = None
    entry: dict[str, Any] = {"round": state.rounds, "message": message, "outcome": stop.outcome}
    entry["question" if stop.outcome == CLARIFICATION else stop.outcome] = stop.text
    state.history.append(entry)
    for notice in llm_notices(calls):
        ctx.warn(notice)
    for task, problem in degenerate_replies(calls):
        ctx.fail("replies", task, problem)
    ended = {} if stop.exception is None else {"traceback": traceback_text(stop.exception)}
    ctx.emit(
        "round.end",
        None,
        outcome=stop.outcome,
        error=stop.text if stop.outcome == ERROR else None,
        sources=len(stop.sources),
        **ended,
    )
    stats = round_stats(calls, ctx.failed, started)
    ctx.save()
    return RoundResult(
        session=state.session_id,
        round=state.rounds,
        outcome=stop.outcome,
        answer=stop.text if stop.outcome == ANSWER else None,
        question=stop.text if stop.outcome == CLARIFICATION else None,
        sources=stop.sources,
        tasks=None if state.root is None else task_tree(state.root, state.buffer),
        stats=stats,
        error=stop.text if stop.outcome == ERROR else None,
        warnings=list(out.warnings),
        trace=out.trace,
        exception=stop.exception,
    )


def llm_notices(calls: Sequence[Any]) -> list[str]:
    """What the LLM client said once for the run in this round's calls (a server that refused
    the structured-output field, and the mode used instead): a warning of the round, never a
    failure, so the round is not degraded by it."""
    return [call.notice for call in calls if getattr(call, "notice", None)]


def degenerate_replies(calls: Sequence[Any]) -> list[tuple[str, str]]:
    """(task, problem) of each reply of this round that stayed degenerate (a loop, an echo)
    and was cut by the client: a failure of the round, which is degraded by it."""
    return [
        (
            call.task or "1",
            f"the {call.purpose} reply{f' of tool {call.tool}' if call.tool else ''} "
            f"stayed degenerate: {call.degenerate}",
        )
        for call in calls
        if getattr(call, "degenerate", None)
    ]


def close_open_tasks(state: SessionState, status: TaskStatus) -> None:
    """At a round's end nothing is running: a terminal answer closed the tasks on its way up
    (C25), an error failed them; tasks waiting for an answer keep waiting (C24)."""
    if state.root is None:
        return
    for task in subtree(state.root):  # (any order: a list is cheaper than the walk's generator)
        if task.status is TaskStatus.RUNNING:
            task.status = status


async def classify(ctx: RoundContext, text: str) -> str:
    """The root's prompt type: by rule (no LLM), or one LLM call when there is a choice."""
    config = ctx.pipeline.prompt_types
    names = [kind.name for kind in config.types]
    if len(names) <= 1:
        return names[0] if names else config.default
    if config.classify == "rule":
        with during("prompt_type (rule)"):
            return await classify_off_loop(ctx, config, text)
    with during("prompt_type (LLM purpose)"):
        chosen = await ctx.prompts_for(ctx.root).prompt_type(text, config.types)
    if chosen not in names:
        ctx.warn(
            f"the LLM classified the message as {chosen!r}, which is no prompt type "
            f"of the pipeline; using the default {config.default!r}"
        )
        return config.default
    return chosen


# --- one task ---------------------------------------------------------------------------


async def process(ctx: RoundContext, task: Task) -> Stop | None:
    """Close one task: coordinators (C8), subtasks (C5), activation (C13), (root:) the deep
    fallback (C27). The subtask walk recurses through this function."""
    if task.status in CLOSED:
        return None
    start_task(ctx, task)
    if coordinator_step(ctx, task):
        await run_coordinators(ctx, task, ctx.setup.coordinators)
    # the awaits below are skipped when there is nothing to await: every task node pays
    # for each coroutine it creates
    stop = await close_subtasks(ctx, task, process) if task.sub_tasks else None
    if stop is None:
        stop = await activate(ctx, task)
    if stop is None and task is ctx.state.root:
        stop = await deep_fallback(ctx, task, process)
    finish_task(ctx, task, stop)
    return stop


def start_task(ctx: RoundContext, task: Task) -> None:
    resumed = task.status is not TaskStatus.PENDING
    task.status = TaskStatus.RUNNING
    required = task.required_tool_names
    ctx.emit(
        "task.start",
        task.task_no,
        prompt=task.task_prompt,
        depth=task.depth,
        prompt_type=task.prompt_type,
        resumed=resumed,
        conditional=task.conditional,
        owner=task.owner_coordinator_name,
        # sorted, as a tuple the trace makes a list (record_json): worked out once per set
        required_tools=ctx.setup.forced_tools(required)[2] if required else (),
    )


def finish_task(ctx: RoundContext, task: Task, stop: Stop | None) -> None:
    if stop is not None:
        task.status = TaskStatus.WAITING if stop.outcome == CLARIFICATION else TaskStatus.DONE
        ctx.emit("task.end", task.task_no, status=task.status._value_, stopped_by=stop.outcome)
        return
    if task.status is not TaskStatus.FAILED:  # (failed: forced with nothing to run)
        task.status = TaskStatus.DONE
    ctx.emit("task.end", task.task_no, status=task.status._value_, stopped_by=None)
    ctx.save()


def round_stats(
    calls: Sequence[CallRecord], failed: dict[str, int], started: float
) -> dict[str, Any]:
    accounting = Accounting()
    for record in calls:
        accounting.add(record)
    stats = accounting.stats()
    stats["by_task"] = _by_task(accounting.calls)
    stats["failed"] = dict(failed)
    stats["tokens"] = stats["prompt_tokens"] + stats["completion_tokens"]
    stats["wall_ms"] = round((time.monotonic() - started) * 1000, 3)
    return stats


def _by_task(calls: Sequence[CallRecord]) -> dict[str, dict[str, Any]]:
    """The round's LLM calls by the task they were made for (a call made for no task is under
    "round"), tasks in the order of their first call: `{task_no: {calls, prompt_tokens,
    completion_tokens, by_purpose: {purpose: calls}}}`."""
    tasks: dict[str, Accounting] = {}
    for call in calls:
        tasks.setdefault(getattr(call, "task", None) or "round", Accounting()).add(call)
    totals = {}
    for task, accounting in tasks.items():
        stats = accounting.stats()
        totals[task] = {
            "calls": stats["llm_calls"],
            "prompt_tokens": stats["prompt_tokens"],
            "completion_tokens": stats["completion_tokens"],
            "by_purpose": {name: entry["calls"] for name, entry in stats["by_purpose"].items()},
        }
    return totals
