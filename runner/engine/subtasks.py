"""The subtask walk (C4–C7, C16–C19): a task's subtasks, closed in list order before the task.

Conditional subtasks run when their owner decides RUN (C16–C19). Consecutive subtasks of a
coordinator with `decompose.parallel` run concurrently, and their results, events and outcome
are taken in list order, exactly as if they had run one by one (`close_together`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from runner.config.model import ToolConfig
from runner.engine.channels import CLOSED, Branch, Stop, resolve
from runner.engine.context import RoundContext
from runner.engine.failure import described, traceback_text
from runner.engine.outcome import ANSWER, CLARIFICATION
from runner.engine.protocols import ConditionalDecider, Tool
from runner.engine.results import PromptAndContext, SubtaskDecision
from runner.engine.task import HeldAnswer, Task, TaskStatus, key_task_no

# A subtree processed this many levels below the one that started it goes on in a task of its
# own: each nested await costs C stack, and a deep tree must not overflow it.
TRAMPOLINE_LEVELS = 50

# How a task is closed (round.process): the walk recurses through it, so it is passed in.
Process = Callable[[RoundContext, Task], Awaitable[Stop | None]]


def parallel_subtasks(tool: Tool, config: ToolConfig) -> bool:
    flag = getattr(tool, "parallel_subtasks", None)
    if flag is not None:
        return bool(flag)
    return config.decompose is not None and config.decompose.parallel


async def close_subtasks(ctx: RoundContext, task: Task, process: Process) -> Stop | None:
    """C5–C7: every subtask, recursively, in list order, one by one — or, for a run of
    consecutive subtasks a `decompose.parallel` coordinator made, concurrently with the
    same observable order (`close_together`)."""
    index = 0
    parallel = ctx.setup.parallel
    while index < len(task.sub_tasks):
        # a subtask no parallel coordinator made is closed alone: no group's list is made
        owner = task.sub_tasks[index].owner_coordinator_name
        group = parallel_group(ctx, task.sub_tasks, index) if owner in parallel else ()
        if len(group) > 1:
            stop = await close_together(ctx, group, process)
            index += len(group)
        else:
            stop = await close_one(ctx, task, index, process)
            index += 1
        if stop is not None:
            return stop  # C6: a question or terminal answer propagates to the top
    return None


async def close_one(ctx: RoundContext, task: Task, index: int, process: Process) -> Stop | None:
    sub = task.sub_tasks[index]
    if sub.held:
        commit_held(ctx, sub)  # what it made while running ahead in an earlier round, in place
    if sub.status in CLOSED:
        return release_held_answer(ctx, sub)
    if sub.conditional and sub.status is TaskStatus.PENDING:
        decision = await decide_conditional(ctx, task, sub, task.sub_tasks[:index])
        if decision is SubtaskDecision.SKIP:
            sub.status = TaskStatus.SKIPPED
            ctx.save()
            return None
    if sub.depth % TRAMPOLINE_LEVELS == 0:
        return await asyncio.ensure_future(process(ctx, sub))
    return await process(ctx, sub)


# --- parallel siblings (decompose.parallel) ----------------------------------------------


def parallel_group(ctx: RoundContext, subs: Sequence[Task], start: int) -> list[Task]:
    """The subtasks from `start` that may run concurrently: consecutive, made by the same
    coordinator with `decompose.parallel`, none conditional (a conditional subtask's owner
    decides from what its earlier siblings found, C16–C17, so it waits for them)."""
    first = subs[start]
    if first.conditional or first.owner_coordinator_name not in ctx.setup.parallel:
        return [first]
    group = [first]
    for sub in subs[start + 1 :]:
        if sub.conditional or sub.owner_coordinator_name != first.owner_coordinator_name:
            break
        group.append(sub)
    return group


async def close_together(ctx: RoundContext, group: Sequence[Task], process: Process) -> Stop | None:
    """Run the open subtasks of a group concurrently, then take their outcomes in list order,
    exactly as if they had run one by one:

    - buffer order: a running subtask's entries are held on it (`Task.held`, stored with the
      session) and reach the buffer in list order; while running it sees the buffer as the
      group found it plus its own subtree's entries (its siblings are independent of it);
    - the first clarifying question or terminal answer in list order wins (C6, C24, C25);
    - nothing completed is lost: a subtask after the winner keeps its completed tools and
      held entries (and a terminal answer it gave, `Task.held_answer`) until processing
      reaches it in list order, in this round or a later one; a question it asked is not
      delivered, and the tool that asked runs again then;
    - its trace events follow those of its earlier siblings; the LLM calls the group made
      are listed after the group's events.
    """
    base = ctx.out.view()
    branches = {
        id(sub): Branch(sub.held, base, ctx.out.trace.child())
        for sub in group
        if sub.status not in CLOSED
    }
    await asyncio.gather(
        *(run_ahead(ctx, sub, branches[id(sub)], process) for sub in group if id(sub) in branches)
    )
    for sub in group:
        if id(sub) in branches:
            ctx.out.trace.adopt(branches[id(sub)].trace)
            ctx.out.warnings.extend(branches[id(sub)].warnings)
    for ran in branches.values():
        if isinstance(ran.result, BaseException) and not isinstance(ran.result, Exception):
            raise ran.result  # the process is going down (KeyboardInterrupt...)
    winner: Stop | None = None
    for sub in group:
        branch = branches.get(id(sub))
        result = branch.result if branch is not None else None
        if winner is None:
            commit_held(ctx, sub)
            if isinstance(result, Exception):
                raise result
            if isinstance(result, Stop):
                winner = result
                if result.outcome == CLARIFICATION and branch is not None:
                    ctx.out.set_pending(branch.pending)
            else:
                winner = release_held_answer(ctx, sub)
        elif isinstance(result, Stop) and result.outcome == ANSWER:
            sub.held_answer = HeldAnswer(result.key, result.text, result.sources)
        elif isinstance(result, Exception):
            reopen(ctx, sub)
    ctx.save()
    return winner


async def run_ahead(ctx: RoundContext, sub: Task, branch: Branch, process: Process) -> None:
    """One subtask of a group, in an asyncio task of its own (`gather`): its subtree's context
    writes to the branch, so what it makes is seen by this subtree alone until the group is
    resolved."""
    try:
        branch.result = await process(ctx.in_branch(branch), sub)
    except BaseException as error:  # taken in list order by close_together
        branch.result = error


def commit_held(ctx: RoundContext, sub: Task) -> None:
    """Move what a subtask held into the buffer (or into the group it runs in)."""
    if not sub.held:
        return
    held, sub.held = sub.held, []
    for key, entry in held:
        ctx.out.write(key, entry)


def release_held_answer(ctx: RoundContext, sub: Task) -> Stop | None:
    """The terminal answer a closed subtask gave while running ahead, now that processing
    has reached it: the round ends with it (C25)."""
    held = sub.held_answer
    if held is None:
        return None
    sub.held_answer = None
    task_no, _, tool = held.key.rpartition(":")
    ctx.emit(
        "terminal",
        task_no,
        tool=tool,
        key=held.key,
        chars=len(held.text),
        sources=len(held.sources),
        held=True,
    )
    return Stop(ANSWER, held.text, held.sources, held.key)


def reopen(ctx: RoundContext, sub: Task) -> None:
    """A subtask that failed after an earlier sibling's question won: its unfinished tasks
    run again when processing reaches it."""
    for task in sub.walk():
        if task.status is TaskStatus.RUNNING:
            task.status = TaskStatus.PENDING


# --- conditional subtasks (C16–C19) -------------------------------------------------


async def decide_conditional(
    ctx: RoundContext, parent: Task, sub: Task, earlier: Sequence[Task]
) -> SubtaskDecision:
    owner = sub.owner_coordinator_name
    tool = ctx.setup.tools.get(owner) if owner else None
    # C17: what the earlier siblings and their descendants put in the buffer
    completed = completed_so_far(ctx, {t.task_no for s in earlier for t in s.walk()})
    failure: dict[str, str] = {}  # a decision that raised: its traceback
    if not isinstance(tool, ConditionalDecider):  # (protocols.py: the interface that runs)
        decision, why = SubtaskDecision.RUN, "the owner makes no decision: RUN (C3)"
    else:
        try:
            # a call the decision makes is made for the subtask it decides
            env = ctx.env(parent, parent.task_prompt, charged=sub.task_no)
            reply = await resolve(tool.decide_conditional(parent, sub, completed, env))
            decision = SubtaskDecision(getattr(reply, "value", reply))
            # the coordinator's own reason when it gives one, else what is known of it
            why = str(getattr(reply, "reason", "") or "") or (
                f"coordinator {owner} decided, having read {len(completed)} earlier result(s)"
            )
        except Exception as exc:
            decision = SubtaskDecision.RUN
            error = described(exc)
            why = f"the decision failed, so the subtask runs (C19): {error}"
            failure = {"traceback": traceback_text(exc)}
            ctx.fail(
                "coordinators",
                sub.task_no,
                f"the conditional decision of coordinator {owner!r} failed ({error}); "
                "the subtask runs (C19)",
            )
    ctx.emit(
        "subtask.decision",
        sub.task_no,
        parent=parent.task_no,
        decision=decision.value,
        decided_by=owner,
        reason=why,
        completed_keys=list(completed),
        **failure,
    )
    return decision


def completed_so_far(
    ctx: RoundContext, task_nos: set[str]
) -> dict[str, tuple[PromptAndContext, ...]]:
    """C17: the entries the given tasks produced, as far as this branch can see."""
    view = ctx.out.view()
    return {key: results for key, results in view.items() if key_task_no(key) in task_nos}
