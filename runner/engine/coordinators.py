"""The coordinator step (C8–C12): every coordinator of the domain, by priority, on a task.

A coordinator gets the task and returns that same task, changed in place or not at all (C1,
C2); anything else — a task of the tree put among its subtasks too — or an error, restores the
task and the next coordinator still runs (C10).
The orchestrator then fills in what it owns on the subtasks made: number, depth (C4), owner
(C18), prompt_context (C20a) and the applied names (C11–C12).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from runner.engine.activation import DECOMPOSE_FAILED, admits
from runner.engine.channels import resolve
from runner.engine.context import RoundContext
from runner.engine.failure import described, traceback_text
from runner.engine.task import Task, ToolStatus


class CoordinatorContractError(RuntimeError):
    """A coordinator broke C2 (it must change the task it was given in place and return it)."""


def subtree(task: Task) -> list[Task]:
    """A task and its descendants, level by level (not `Task.walk`'s order: for sets and for
    work whose order does not matter; a list is cheaper to make and read than a generator)."""
    nodes = [task]
    for node in nodes:  # (the list grows as it is read: every level is appended in turn)
        nodes.extend(node.sub_tasks)
    return nodes


def coordinator_step(ctx: RoundContext, task: Task) -> bool:
    """C8/C9: every coordinator of the domain, by priority, in every round; the deep
    fallback coordinator runs only through the fallback (C28, C30). True when one of them
    may run: the caller then awaits `run_coordinators`; otherwise the skips are traced
    here, with no coroutine made (the common case below the root)."""
    names = ctx.setup.coordinators
    reasons = []
    for name in names:
        reason = skip_reason(ctx, task, name)
        if reason is None:
            return True
        reasons.append(reason)
    for name, reason in zip(names, reasons, strict=True):
        skip_coordinator(ctx, task, name, reason)
    return False


async def run_coordinators(ctx: RoundContext, task: Task, names: Sequence[str]) -> None:
    for name in names:
        reason = skip_reason(ctx, task, name)
        if reason is not None:
            skip_coordinator(ctx, task, name, reason)
            continue
        existing = {id(t) for t in subtree(task)}
        left_out = await decompose(ctx, task, name)
        created = {id(t) for t in subtree(task) if id(t) not in existing}
        taken = {t.task_no for t in subtree(ctx.root) if id(t) not in created}
        adopt(ctx, task, created, name, taken, left_out)
        # C11/C12: it had its chance (even if it declined or raised), here and below. The
        # task's descendants are exactly the subtasks made in its coordinator step, so they
        # all get the extended set; adding one name at a time and storing the state after
        # each coordinator lets a crashed step resume without running one twice.
        for member in subtree(task):
            member.applied_coordinator_names.add(name)
        ctx.save()


def skip_coordinator(ctx: RoundContext, task: Task, name: str, reason: str | None) -> None:
    ctx.emit("coordinator.skip", task.task_no, coordinator=name, reason=reason, depth=task.depth)


def skip_reason(ctx: RoundContext, task: Task, name: str) -> str | None:
    if name in task.applied_coordinator_names:
        return "applied"  # C11/C12: it had its chance on this task or an ancestor
    if not admits(ctx.setup.configs[name], task.prompt_type):
        return "prompt_type"
    if task.depth >= ctx.limits.max_depth:
        return "depth"  # C4
    return None


async def decompose(ctx: RoundContext, task: Task, name: str) -> int:
    """One coordinator on one task (C1, C2), its failure undone (C10). Returns how many
    subtasks it left out because the task had `limits.max_subtasks` (C4)."""
    snapshot = task.snapshot()
    before_prompt, before_subtasks = task.task_prompt, list(task.sub_tasks)
    prompt_context = task.held_prompt_context()  # (as held: a link is not joined)
    task.prompt_context = None  # C20b: never seen
    env = ctx.env(task, task.task_prompt)
    try:
        returned = await resolve(ctx.setup.tools[name].decompose(task, env))  # type: ignore[attr-defined]  # a coordinator
        if returned is not task:
            raise CoordinatorContractError(_contract_broken(name, returned))
        repeated = _repeated_task(ctx.root)
        if repeated is not None:
            raise CoordinatorContractError(_placed_twice(name, task, repeated))
    except Exception as exc:
        snapshot.restore()
        error = described(exc)
        ctx.emit(
            "coordinator.error",
            task.task_no,
            coordinator=name,
            error=error,
            restored=True,
            traceback=traceback_text(exc),
        )
        decomposition_failed(ctx, task, name, error)
        return 0
    task.hold_prompt_context(prompt_context)  # the orchestrator owns it (C20a)
    before = {id(b) for b in before_subtasks}  # (not a scan of them for each subtask)
    new = [sub.task_no for sub in task.sub_tasks if id(sub) not in before]
    appended = task.task_prompt != before_prompt
    ctx.emit(
        "coordinator.run",
        task.task_no,
        coordinator=name,
        changed=bool(new) or appended,
        appended=appended,
        subtasks=new,
    )
    return env.left_out_subtasks


def decomposition_failed(ctx: RoundContext, task: Task, name: str, error: str) -> None:
    """[decided] A coordinator whose decomposition failed is not activated on that task, in
    any way (suitability, rule, always, after subtasks, deep fallback): its own result would
    read as if its subtasks had run. It stays failed on the task for the rest of the
    session, and the round says so."""
    task.tool_status[name] = ToolStatus.FAILED
    task.tool_reasons[name] = DECOMPOSE_FAILED
    ctx.fail(
        "coordinators",
        task.task_no,
        f"coordinator {name!r} failed to decompose it ({error}); the task was restored "
        f"(C10) and {name!r} is not activated on it, so nothing answers as if its subtasks "
        "had run",
    )


def adopt(
    ctx: RoundContext,
    parent: Task,
    created: set[int],
    owner: str,
    taken: set[str],
    left_out: int = 0,
) -> None:
    """Fill what the orchestrator owns on the tasks a coordinator just created: number,
    depth, owner (C18), prompt_context (C20a), the parent's applied names (C12), the
    inherited prompt type and important words; drop what breaks the limits (C4,
    max_subtasks) or reuses a task number. Depth-first in list order, without recursion
    (a coordinator may make a deep tree at once). The drops are told in one warning per
    task and reason, with how many: a coordinator may make thousands at once (`left_out`:
    those it did not even make, the task being full, C4)."""
    Frame = tuple[Task, Iterator[tuple[int, Task]], list[Task]]
    # (each frame reads the list its task had: a finished frame gives the task a new one)
    stack: list[Frame] = [(parent, enumerate(parent.sub_tasks, 1), [])]
    drops: dict[tuple[str, str], list[str]] = {}
    if left_out:
        drops[(parent.task_no, full(ctx, parent))] = []
    while stack:
        task, children, kept = stack[-1]
        step = next(children, None)
        if step is None:
            task.sub_tasks = kept
            stack.pop()
            continue
        index, sub = step
        if id(sub) in created:
            sub.task_no = sub.task_no or f"{task.task_no}.{index}"
            problem = drop_reason(ctx, task, sub, len(kept), taken)
            if problem is not None:
                drops.setdefault((task.task_no, problem), []).append(sub.task_no)
                continue
            adopt_one(ctx, task, sub, owner, taken)
        kept.append(sub)
        if sub.sub_tasks:  # (a leaf keeps its empty list: no frame, no copy, for most nodes)
            stack.append((sub, enumerate(sub.sub_tasks, 1), []))
    for (task_no, problem), numbers in drops.items():
        extra = left_out if task_no == parent.task_no and problem == full(ctx, parent) else 0
        ctx.warn(_dropped(task_no, owner, problem, numbers, extra), task_no)


def adopt_one(ctx: RoundContext, parent: Task, sub: Task, owner: str, taken: set[str]) -> None:
    taken.add(sub.task_no)
    sub.depth = parent.depth + 1
    sub.owner_coordinator_name = owner
    text = parent.text_link()  # shared by its siblings
    if type(text) is str:
        sub.prompt_context = text
    else:
        sub.hold_prompt_context(text)  # a link, read joined
    sub.applied_coordinator_names |= parent.applied_coordinator_names
    sub.prompt_type = sub.prompt_type or parent.prompt_type
    sub.important_words = sub.important_words or list(parent.important_words)


def drop_reason(
    ctx: RoundContext, parent: Task, sub: Task, siblings: int, taken: set[str]
) -> str | None:
    limits = ctx.limits
    if parent.depth + 1 > limits.max_depth:
        return f"it would be deeper than limits.max_depth ({limits.max_depth})"
    if siblings >= limits.max_subtasks:
        return full(ctx, parent)
    if sub.task_no in taken:
        return "another task of the tree has that number; give subtasks unique ids"
    return None


def full(ctx: RoundContext, parent: Task) -> str:
    limit = ctx.limits.max_subtasks
    return f"task {parent.task_no} already has limits.max_subtasks ({limit}) subtasks"


SHOWN_NUMBERS = 5  # the task numbers a drop warning names; the rest are counted


def _dropped(task_no: str, owner: str, problem: str, numbers: list[str], left_out: int) -> str:
    """One warning for the subtasks of a task that one coordinator's step dropped for one
    reason: the first few numbers, and how many in all."""
    count = len(numbers) + left_out
    if count == 1:
        which = f"subtask {numbers[0]!r}" if numbers else "1 subtask"
        return f"{which} of task {task_no} from {owner!r} was dropped: {problem}"
    shown = ", ".join(repr(number) for number in numbers[:SHOWN_NUMBERS])
    more = count - min(len(numbers), SHOWN_NUMBERS)
    listed = f" ({shown} and {more:,} more)" if shown and more else f" ({shown})" if shown else ""
    return f"{count:,} subtasks of task {task_no} from {owner!r} were dropped{listed}: {problem}"


def _contract_broken(name: str, returned: object) -> str:
    """C1/C2: returning anything but the task it was given breaks the contract, `None` too."""
    what = "None" if returned is None else f"a different {type(returned).__name__} object"
    return (
        f"coordinator {name!r} returned {what}; C1/C2: return the task it was given — unchanged "
        "when it is not relevant, otherwise changed in place (task_prompt, sub_tasks)"
    )


def _repeated_task(root: Task) -> Task | None:
    """The first task object the tree reaches twice, else None. It stops there: a task put
    among its own descendants makes a cycle, and a walk of that tree never ends."""
    seen: set[int] = set()
    nodes = [root]
    for node in nodes:
        if id(node) in seen:
            return node
        seen.add(id(node))
        nodes.extend(node.sub_tasks)
    return None


def _placed_twice(name: str, task: Task, repeated: Task) -> str:
    """C2/C4: the subtasks a coordinator makes are new tasks; a task already in the tree (the
    task itself, an ancestor, a sibling) made a subtask would be in two places, or its own
    descendant."""
    which = "the task itself" if repeated is task else f"task {repeated.task_no or '?'}"
    return (
        f"coordinator {name!r} put {which} among the subtasks of task {task.task_no}, so it "
        "would be in the tree twice; C2/C4: a subtask is a new Task object — make one per "
        "subtask, never reuse a task of the tree"
    )
