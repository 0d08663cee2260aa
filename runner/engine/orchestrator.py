"""The recursive orchestrator: one round of a conversation, by the rules C1–C33.

A round works on a `SessionState` in place. For each task, depth-first in list order:

1. the coordinator step (C8–C12): every coordinator not yet applied on the task's lineage runs,
   by priority, each on the previous one's output; a failing one leaves the task as it was (C10);
2. its subtasks, one by one in list order, each processed the same way (C4–C7), a conditional one
   only when its owner decides RUN (C16–C19); consecutive subtasks of a coordinator with
   `decompose.parallel` run concurrently, and their results, events and outcome are then taken
   in list order, exactly as if they had run one by one (see `_close_together`);
3. its activation (C13–C15a, C20e): forced tools, or the candidates chosen by rule, `always` and
   one suitability call, plus the retrieval tool, run by priority; results go to the context
   buffer (C20), a clarifying question or a terminal answer ends the round (C24, C25);
4. on the root only: the gatekeeper and the deep fallback (C27–C28).

Then the final answer (C33). The checkpoint callback gets the state after every step that must
survive a crash; a stored state whose `active_message` is set is resumed without running any
completed tool again.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import (
    Awaitable,
    Callable,
    Collection,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

from runner.config.model import ActivationMode, Output, Pipeline, ToolConfig
from runner.engine.activation import admits, classify_by_rule, rule_matches
from runner.engine.env import RuntimeEnv
from runner.engine.marker import execution_text, is_coordinator_requested
from runner.engine.outcome import ANSWER, CLARIFICATION, ERROR, RoundResult, task_tree
from runner.engine.protocols import Tool, is_context_consumer, is_coordinator
from runner.engine.results import (
    Clarification,
    PromptAndContext,
    ResultKind,
    SubtaskDecision,
    ToolResult,
)
from runner.engine.state import SessionState
from runner.engine.task import (
    BufferView,
    ContextBuffer,
    Entry,
    HeldAnswer,
    Task,
    TaskStatus,
    ToolStatus,
    completion_key,
    key_task_no,
)
from runner.sources import Source
from runner.trace import Trace

if TYPE_CHECKING:
    from runner.llm.prompts import Passage, Prompts
    from runner.llm.types import LLMClient

T = TypeVar("T")

CLOSED = frozenset({TaskStatus.DONE, TaskStatus.SKIPPED, TaskStatus.FAILED})
FINISHED_TOOL = frozenset({ToolStatus.DONE, ToolStatus.FAILED})

# Why a tool was activated on a task (the trace's `activation` event and the result's tree).
FORCED = "forced"  # C13: the task's required_tool_names
SUITABILITY = "suitability"  # the LLM's yes in the task's one suitability call
RULE = "rule"  # the tool's keywords / pattern matched the task prompt
ALWAYS = "always"
RETRIEVAL = "retrieval"  # the domain's retrieval tool on every non-forced task (C27)
AFTER_SUBTASKS = "after_subtasks"  # C20e: the coordinator builds its answer from its subtasks'
DEEP_FALLBACK = "deep_fallback"  # C28: the deep-search coordinator on the root


class RoundError(Exception):
    """Ends the round with an error the user can read (e.g. too many clarification rounds)."""


class CoordinatorContractError(RuntimeError):
    """A coordinator broke C2 (it must change the task it was given in place and return it)."""


@dataclass(frozen=True)
class _Stop:
    """Why processing stopped before the final answer: a question or a terminal answer."""

    outcome: str  # CLARIFICATION | ANSWER | ERROR
    text: str
    sources: tuple[Source, ...] = ()
    key: str = ""  # a terminal answer: the completion key of the tool that gave it


# A subtree processed this many levels below the one that started it goes on in a task of its
# own: each nested await costs C stack, and a deep tree must not overflow it.
TRAMPOLINE_LEVELS = 50


@dataclass
class _Branch:
    """A subtask of a parallel group, running ahead of its earlier siblings: where its subtree's
    buffer entries, trace events and clarifying question go until the group is resolved in list
    order. Set in the subtask's own asyncio task (a context variable), so nothing else sees it."""

    held: list[Entry]  # the subtask's `held` list: its subtree's entries, in the order made
    base: BufferView  # the buffer as the group found it: what the subtree sees besides its own
    trace: Trace  # its events, added to the round's trace when the group is resolved
    pending: Clarification | None = None  # the question it asked, if it asked one
    result: _Stop | BaseException | None = field(default=None, repr=False)

    def view(self) -> BufferView:
        return self.base.extended(self.held)


_BRANCH: ContextVar[_Branch | None] = ContextVar("runner_parallel_branch", default=None)


def _parallel_subtasks(tool: Tool, config: ToolConfig) -> bool:
    flag = getattr(tool, "parallel_subtasks", None)
    if flag is not None:
        return bool(flag)
    return config.decompose is not None and config.decompose.parallel


def _subtree(task: Task) -> list[Task]:
    """A task and its descendants, level by level (not `Task.walk`'s order: for sets and for
    work whose order does not matter; a list is cheaper to make and read than a generator)."""
    nodes = [task]
    for node in nodes:  # (the list grows as it is read: every level is appended in turn)
        nodes.extend(node.sub_tasks)
    return nodes


async def _resolve(value: T | Awaitable[T]) -> T:
    """Tool methods may be plain or async (protocols.py): await what is awaitable."""
    if inspect.isawaitable(value):
        return await value
    return value  # type: ignore[return-value]


class Orchestrator:
    """Runs rounds of one pipeline. Holds no per-round state, so rounds of different sessions
    may share it."""

    def __init__(
        self,
        pipeline: Pipeline,
        tools: Mapping[str, Tool],
        prompts: Prompts,
        *,
        trace: Trace | None = None,
        checkpoint: Callable[[SessionState], None] | None = None,
        llm: LLMClient | None = None,
    ) -> None:
        strangers = [name for name in tools if pipeline.find_tool(name) is None]
        if strangers:
            raise ValueError(f"tools {strangers} are not in the pipeline {pipeline.path}")
        self.pipeline = pipeline
        self.tools = dict(tools)
        self.prompts = prompts
        self.llm = llm if llm is not None else getattr(prompts, "client", None)
        self.trace = trace
        self.checkpoint = checkpoint
        # every tool the round can run, in file order (the tie-break of equal priorities)
        self.configs: dict[str, ToolConfig] = {
            config.name: config for config in pipeline.tools if config.name in self.tools
        }
        self._rank = {
            name: (config.priority, index)
            for index, (name, config) in enumerate(self.configs.items())
        }
        self._forced: dict[frozenset[str], tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]]
        self._forced = {}
        self.consumers = {name for name, tool in self.tools.items() if is_context_consumer(tool)}
        # coordinators whose subtasks may run concurrently: `decompose.parallel`, or a python
        # coordinator's `parallel_subtasks = True`
        self.parallel = {
            name
            for name, tool in self.tools.items()
            if is_coordinator(tool) and _parallel_subtasks(tool, self.configs[name])
        }
        # C8: the coordinators of the coordinator step, by priority; the deep fallback's
        # coordinator runs only through the fallback (C28, C30)
        fallback = pipeline.deep_fallback
        self.coordinators = [
            name
            for name in self.by_priority(self.tools)
            if is_coordinator(self.tools[name])
            and (fallback is None or name != fallback.coordinator)
        ]

    def by_priority(self, names: Iterable[str]) -> list[str]:
        """Lower priority first; ties in file order."""
        return sorted(names, key=self._rank.__getitem__)

    def forced_tools(
        self, names: frozenset[str]
    ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        """C13–C15: the tools a task's required names force, by priority (a name may be simple
        or domain-prefixed), the names that are no tool of the domain, and all the names,
        sorted. Worked out once per set of names: a coordinator usually forces the same tools
        on many subtasks."""
        found = self._forced.get(names)
        if found is None:
            known: list[str] = []
            ignored: list[str] = []
            for name in sorted(names):
                config = self.pipeline.find_tool(name)
                if config is None or config.name not in self.tools:
                    ignored.append(name)
                elif config.name not in known:
                    known.append(config.name)
            plan = (tuple(self.by_priority(known)), tuple(ignored), tuple(sorted(names)))
            found = self._forced[names] = plan
        return found

    async def run_round(self, state: SessionState, message: str | None) -> RoundResult:
        """One round: a fresh message, the answer to the pending question (C24), or — when the
        stored state is an interrupted round — that round, finished."""
        return await _Round(self, state, self.trace or Trace()).run(message)


class _Round:
    """The work of one round on one session state."""

    def __init__(self, orchestrator: Orchestrator, state: SessionState, trace: Trace) -> None:
        self.o = orchestrator
        self.pipeline = orchestrator.pipeline
        self.limits = orchestrator.pipeline.limits
        self.tools = orchestrator.tools
        self.prompts = orchestrator.prompts
        self.state = state
        self.trace = trace
        self.warnings: list[str] = []
        self._started = time.monotonic()
        self._calls_seen = len(self._llm_calls())
        self._first_call = self._calls_seen
        self._last_task: str | None = None
        self._checkpoint = orchestrator.checkpoint

    # --- the round ----------------------------------------------------------------------

    async def run(self, message: str | None) -> RoundResult:
        message = self._begin(message)
        try:
            root = self._root
            if root.prompt_type is None:
                root.prompt_type = await self._classify(root.task_prompt)
            stop = await self._process(root)
            if stop is None:
                stop = await self._final_answer(root)
        except RoundError as exc:
            stop = _Stop(ERROR, str(exc))
        except Exception as exc:  # an LLM or template failure outside any tool: end cleanly
            stop = _Stop(ERROR, f"{type(exc).__name__}: {exc}")
        return self._end(message, stop)

    @property
    def _root(self) -> Task:
        assert self.state.root is not None
        return self.state.root

    def _begin(self, message: str | None) -> str:
        state = self.state
        if state.interrupted:
            kind = "resume"
            resumed = state.active_message or ""
            if message and message != resumed:
                self.warn(
                    f"the round interrupted on {resumed!r} was finished first; the message "
                    f"{message!r} was not processed: send it again"
                )
            message = resumed
        elif state.waiting:
            kind = "answer"
            assert state.pending is not None
            state.pending = replace(state.pending, answer=message or "")
            state.rounds += 1
        else:
            kind = "fresh"
            state.rounds += 1
            from runner.text import content_words

            state.root = Task("1", message or "", important_words=content_words(message or ""))
            state.buffer = ContextBuffer()
            state.pending = None
            state.clarifications = []  # clarification rounds are counted per question tree
        state.active_message = message or ""
        self.emit(
            "round.start",
            None,
            session=state.session_id,
            round=state.rounds,
            kind=kind,
            message=state.active_message,
        )
        self.save()
        return state.active_message

    def _end(self, message: str, stop: _Stop) -> RoundResult:
        state = self.state
        if stop.outcome != CLARIFICATION:
            state.pending = None
        self._close_open_tasks(TaskStatus.FAILED if stop.outcome == ERROR else TaskStatus.DONE)
        state.active_message = None
        entry: dict[str, Any] = {"round": state.rounds, "message": message, "outcome": stop.outcome}
        entry["question" if stop.outcome == CLARIFICATION else stop.outcome] = stop.text
        state.history.append(entry)
        self.emit(
            "round.end",
            None,
            outcome=stop.outcome,
            error=stop.text if stop.outcome == ERROR else None,
            sources=len(stop.sources),
        )
        stats = self._stats()
        self.save()
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
            warnings=list(self.warnings),
            trace=self.trace,
        )

    def _close_open_tasks(self, status: TaskStatus) -> None:
        """At a round's end nothing is running: a terminal answer closed the tasks on its way
        up (C25), an error failed them; tasks waiting for an answer keep waiting (C24)."""
        if self.state.root is None:
            return
        for task in self.state.root.walk():
            if task.status is TaskStatus.RUNNING:
                task.status = status

    async def _classify(self, text: str) -> str:
        """The root's prompt type: by rule (no LLM), or one LLM call when there is a choice."""
        config = self.pipeline.prompt_types
        names = [kind.name for kind in config.types]
        if len(names) <= 1:
            return names[0] if names else config.default
        if config.classify == "rule":
            return classify_by_rule(config, text)
        chosen = await self.prompts.prompt_type(text, config.types)
        if chosen not in names:
            self.warn(
                f"the LLM classified the message as {chosen!r}, which is no prompt type "
                f"of the pipeline; using the default {config.default!r}"
            )
            return config.default
        return chosen

    # --- one task -----------------------------------------------------------------------

    async def _process(self, task: Task) -> _Stop | None:
        """Close one task: coordinators, subtasks, activation, (root:) deep fallback."""
        if task.status in CLOSED:
            return None
        resumed = task.status is not TaskStatus.PENDING
        task.status = TaskStatus.RUNNING
        required = task.required_tool_names
        self.emit(
            "task.start",
            task.task_no,
            prompt=task.task_prompt,
            depth=task.depth,
            prompt_type=task.prompt_type,
            resumed=resumed,
            conditional=task.conditional,
            owner=task.owner_coordinator_name,
            # sorted, as a tuple the trace makes a list (record_json): worked out once per set
            required_tools=self.o.forced_tools(frozenset(required))[2] if required else (),
        )
        if self._coordinator_step(task):
            await self._run_coordinators(task, self.o.coordinators)
        # the awaits below are skipped when there is nothing to await: every task node pays
        # for each coroutine it creates
        stop = await self._close_subtasks(task) if task.sub_tasks else None
        if stop is None:
            stop = await self._activate(task)
        if stop is None and task is self.state.root:
            stop = await self._deep_fallback(task)
        if stop is not None:
            task.status = TaskStatus.WAITING if stop.outcome == CLARIFICATION else TaskStatus.DONE
            self.emit("task.end", task.task_no, status=task.status._value_, stopped_by=stop.outcome)
            return stop
        task.status = TaskStatus.DONE
        self.emit("task.end", task.task_no, status=task.status._value_, stopped_by=None)
        self.save()
        return None

    async def _close_subtasks(self, task: Task) -> _Stop | None:
        """C5–C7: every subtask, recursively, in list order, one by one — or, for a run of
        consecutive subtasks a `decompose.parallel` coordinator made, concurrently with the
        same observable order (`_close_together`)."""
        index = 0
        while index < len(task.sub_tasks):
            group = self._parallel_group(task.sub_tasks, index)
            if len(group) > 1:
                stop = await self._close_together(group)
            else:
                stop = await self._close_one(task, index)
            if stop is not None:
                return stop  # C6: a question or terminal answer propagates to the top
            index += len(group)
        return None

    async def _close_one(self, task: Task, index: int) -> _Stop | None:
        sub = task.sub_tasks[index]
        if sub.held:
            self._commit(sub)  # what it made while running ahead in an earlier round, in place
        if sub.status in CLOSED:
            return self._release(sub)
        if sub.conditional and sub.status is TaskStatus.PENDING:
            decision = await self._decide(task, sub, task.sub_tasks[:index])
            if decision is SubtaskDecision.SKIP:
                sub.status = TaskStatus.SKIPPED
                self.save()
                return None
        if sub.depth % TRAMPOLINE_LEVELS == 0:
            return await asyncio.ensure_future(self._process(sub))
        return await self._process(sub)

    # --- parallel siblings (decompose.parallel) -----------------------------------------

    def _parallel_group(self, subs: Sequence[Task], start: int) -> list[Task]:
        """The subtasks from `start` that may run concurrently: consecutive, made by the same
        coordinator with `decompose.parallel`, none conditional (a conditional subtask's owner
        decides from what its earlier siblings found, C16–C17, so it waits for them)."""
        first = subs[start]
        if first.conditional or first.owner_coordinator_name not in self.o.parallel:
            return [first]
        group = [first]
        for sub in subs[start + 1 :]:
            if sub.conditional or sub.owner_coordinator_name != first.owner_coordinator_name:
                break
            group.append(sub)
        return group

    async def _close_together(self, group: Sequence[Task]) -> _Stop | None:
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
        base = self._view()
        branches = {
            id(sub): _Branch(sub.held, base, self.trace_now().child())
            for sub in group
            if sub.status not in CLOSED
        }
        await asyncio.gather(
            *(self._run_ahead(sub, branches[id(sub)]) for sub in group if id(sub) in branches)
        )
        for sub in group:
            if id(sub) in branches:
                self.trace_now().adopt(branches[id(sub)].trace)
        for branch in branches.values():
            if isinstance(branch.result, BaseException) and not isinstance(
                branch.result, Exception
            ):
                raise branch.result  # the process is going down (KeyboardInterrupt...)
        winner: _Stop | None = None
        for sub in group:
            branch = branches.get(id(sub))
            result = branch.result if branch is not None else None
            if winner is None:
                self._commit(sub)
                if isinstance(result, Exception):
                    raise result
                if isinstance(result, _Stop):
                    winner = result
                    if result.outcome == CLARIFICATION and branch is not None:
                        self._set_pending(branch.pending)
                else:
                    winner = self._release(sub)
            elif isinstance(result, _Stop) and result.outcome == ANSWER:
                sub.held_answer = HeldAnswer(result.key, result.text, result.sources)
            elif isinstance(result, Exception):
                self._reopen(sub)
        self.save()
        return winner

    async def _run_ahead(self, sub: Task, branch: _Branch) -> None:
        """One subtask of a group. `gather` runs it in an asyncio task of its own, with its own
        copy of the context, so the branch it sets is seen by this subtree alone."""
        _BRANCH.set(branch)
        try:
            branch.result = await self._process(sub)
        except BaseException as error:  # taken in list order by _close_together
            branch.result = error

    def _commit(self, sub: Task) -> None:
        """Move what a subtask held into the buffer (or into the group it runs in)."""
        if not sub.held:
            return
        held, sub.held = sub.held, []
        for key, entry in held:
            self._write(key, entry)

    def _release(self, sub: Task) -> _Stop | None:
        """The terminal answer a closed subtask gave while running ahead, now that processing
        has reached it: the round ends with it (C25)."""
        held = sub.held_answer
        if held is None:
            return None
        sub.held_answer = None
        task_no, _, tool = held.key.rpartition(":")
        self.emit(
            "terminal",
            task_no,
            tool=tool,
            key=held.key,
            chars=len(held.text),
            sources=len(held.sources),
            held=True,
        )
        return _Stop(ANSWER, held.text, held.sources, held.key)

    def _reopen(self, sub: Task) -> None:
        """A subtask that failed after an earlier sibling's question won: its unfinished tasks
        run again when processing reaches it."""
        for task in sub.walk():
            if task.status is TaskStatus.RUNNING:
                task.status = TaskStatus.PENDING

    # --- the coordinator step (C8–C12) --------------------------------------------------

    def _coordinator_step(self, task: Task) -> bool:
        """C8/C9: every coordinator of the domain, by priority, in every round; the deep
        fallback coordinator runs only through the fallback (C28, C30). True when one of them
        may run: the caller then awaits `_run_coordinators`; otherwise the skips are traced
        here, with no coroutine made (the common case below the root)."""
        names = self.o.coordinators
        reasons = [self._coordinator_skip_reason(task, name) for name in names]
        if None in reasons:
            return True
        for name, reason in zip(names, reasons, strict=True):
            self._skip_coordinator(task, name, reason)
        return False

    async def _run_coordinators(self, task: Task, names: Sequence[str]) -> None:
        for name in names:
            reason = self._coordinator_skip_reason(task, name)
            if reason is not None:
                self._skip_coordinator(task, name, reason)
                continue
            existing = {id(t) for t in _subtree(task)}
            await self._decompose(task, name)
            created = {id(t) for t in _subtree(task) if id(t) not in existing}
            taken = {t.task_no for t in _subtree(self._root) if id(t) not in created}
            self._adopt(task, created, name, taken)
            # C11/C12: it had its chance (even if it declined or raised), here and below. The
            # task's descendants are exactly the subtasks made in its coordinator step, so they
            # all get the extended set; adding one name at a time and storing the state after
            # each coordinator lets a crashed step resume without running one twice.
            for member in _subtree(task):
                member.applied_coordinator_names.add(name)
            self.save()

    def _skip_coordinator(self, task: Task, name: str, reason: str | None) -> None:
        self.emit(
            "coordinator.skip", task.task_no, coordinator=name, reason=reason, depth=task.depth
        )

    def _coordinator_skip_reason(self, task: Task, name: str) -> str | None:
        if name in task.applied_coordinator_names:
            return "applied"  # C11/C12: it had its chance on this task or an ancestor
        if not admits(self.o.configs[name], task.prompt_type):
            return "prompt_type"
        if task.depth >= self.limits.max_depth:
            return "depth"  # C4
        return None

    async def _decompose(self, task: Task, name: str) -> None:
        """One coordinator on one task (C1, C2), its failure undone (C10)."""
        snapshot = task.snapshot()
        before_prompt, before_subtasks = task.task_prompt, list(task.sub_tasks)
        prompt_context, task.prompt_context = task.prompt_context, None  # C20b: never seen
        env = self._env(task, task.task_prompt)
        try:
            returned = await _resolve(self.tools[name].decompose(task, env))  # type: ignore[attr-defined]
            if returned is not None and returned is not task:
                raise CoordinatorContractError(
                    f"coordinator {name!r} returned a different Task object; C2: change the task "
                    "it was given in place (task_prompt, sub_tasks) and return that same task"
                )
        except Exception as exc:
            snapshot.restore()
            self.emit(
                "coordinator.error",
                task.task_no,
                coordinator=name,
                error=f"{type(exc).__name__}: {exc}",
                restored=True,
            )
            return
        task.prompt_context = prompt_context  # the orchestrator owns it (C20a)
        new = [sub.task_no for sub in task.sub_tasks if all(sub is not b for b in before_subtasks)]
        appended = task.task_prompt != before_prompt
        self.emit(
            "coordinator.run",
            task.task_no,
            coordinator=name,
            changed=bool(new) or appended,
            appended=appended,
            subtasks=new,
        )

    def _adopt(self, parent: Task, created: set[int], owner: str, taken: set[str]) -> None:
        """Fill what the orchestrator owns on the tasks a coordinator just created: number,
        depth, owner (C18), prompt_context (C20a), the parent's applied names (C12), the
        inherited prompt type and important words; drop what breaks the limits (C4,
        max_subtasks) or reuses a task number. Depth-first in list order, without recursion
        (a coordinator may make a deep tree at once)."""
        Frame = tuple[Task, Iterator[tuple[int, Task]], list[Task]]
        stack: list[Frame] = [(parent, enumerate(list(parent.sub_tasks), 1), [])]
        while stack:
            task, children, kept = stack[-1]
            step = next(children, None)
            if step is None:
                task.sub_tasks = kept
                stack.pop()
                continue
            index, sub = step
            new = id(sub) in created
            if new and not self._adopt_one(task, sub, index, len(kept), owner, taken):
                continue  # dropped
            kept.append(sub)
            stack.append((sub, enumerate(list(sub.sub_tasks), 1), []))

    def _adopt_one(
        self, parent: Task, sub: Task, index: int, siblings: int, owner: str, taken: set[str]
    ) -> bool:
        """Adopt one new subtask; False when it is dropped (with a warning)."""
        sub.task_no = sub.task_no or f"{parent.task_no}.{index}"
        problem = self._drop_reason(parent, sub, siblings, taken)
        if problem is not None:
            self.warn(
                f"subtask {sub.task_no!r} of task {parent.task_no} made by "
                f"{owner!r} was dropped: {problem}",
                parent.task_no,
            )
            return False
        taken.add(sub.task_no)
        sub.depth = parent.depth + 1
        sub.owner_coordinator_name = owner
        sub.prompt_context = execution_text(parent.task_prompt, parent.prompt_context)
        sub.applied_coordinator_names |= parent.applied_coordinator_names
        sub.prompt_type = sub.prompt_type or parent.prompt_type
        sub.important_words = sub.important_words or list(parent.important_words)
        return True

    def _drop_reason(self, parent: Task, sub: Task, siblings: int, taken: set[str]) -> str | None:
        if parent.depth + 1 > self.limits.max_depth:
            return f"it would be deeper than limits.max_depth ({self.limits.max_depth})"
        if siblings >= self.limits.max_subtasks:
            limit = self.limits.max_subtasks
            return f"task {parent.task_no} already has limits.max_subtasks ({limit}) subtasks"
        if sub.task_no in taken:
            return "another task of the tree has that number; give subtasks unique ids"
        return None

    # --- conditional subtasks (C16–C19) -------------------------------------------------

    async def _decide(self, parent: Task, sub: Task, earlier: Sequence[Task]) -> SubtaskDecision:
        owner = sub.owner_coordinator_name
        tool = self.tools.get(owner) if owner else None
        decide = getattr(tool, "decide_conditional", None)
        # C17: what the earlier siblings and their descendants put in the buffer
        completed = self._completed({t.task_no for s in earlier for t in s.walk()})
        if not callable(decide):
            decision, why = SubtaskDecision.RUN, "the owner makes no decision: RUN (C3)"
        else:
            try:
                reply = await _resolve(
                    decide(parent, sub, completed, self._env(parent, parent.task_prompt))
                )
                decision = SubtaskDecision(getattr(reply, "value", reply))
                why = f"{owner}.decide_conditional looked at {len(completed)} earlier result(s)"
            except Exception as exc:
                decision = SubtaskDecision.RUN
                why = f"the decision failed, so the subtask runs (C19): {type(exc).__name__}: {exc}"
        self.emit(
            "subtask.decision",
            sub.task_no,
            parent=parent.task_no,
            decision=decision.value,
            decided_by=owner,
            reason=why,
            completed_keys=list(completed),
        )
        return decision

    # --- activation (C13–C15a, C20e) ----------------------------------------------------

    async def _activate(self, task: Task) -> _Stop | None:
        if task.planned_tools is None:
            plan = self._forced(task) if task.required_tool_names else await self._plan(task)
            task.planned_tools = list(plan)
            task.tool_reasons.update(plan)
            self.save()
        for name in task.planned_tools:
            if task.tool_status.get(name) in FINISHED_TOOL:
                continue  # C24: a completed tool never runs again
            stop = await self._run_tool(task, name)
            if stop is not None:
                return stop
        return None

    async def _plan(self, task: Task) -> dict[str, str]:
        """The tools to run on a task that has no forced tools, and why, by priority. Decided
        once per task."""
        chosen: dict[str, str] = {}
        candidates = self._candidates(task)
        asked: list[ToolConfig] = []
        for config in candidates:
            mode = config.activation.mode
            if mode is ActivationMode.ALWAYS:
                chosen[config.name] = ALWAYS
            elif mode is ActivationMode.RULE:
                activation = config.activation
                if rule_matches(activation.keywords, activation.pattern, task.task_prompt):
                    chosen[config.name] = RULE
            else:
                asked.append(config)
        answers: dict[str, bool] = {}
        if asked:  # one call for all of them, on task_prompt alone (C20b)
            reply = await self.prompts.suitability(task.task_prompt, asked)
            answers = self._known_answers(reply, asked)
            chosen.update({name: SUITABILITY for name, yes in answers.items() if yes})
        retrieval = self.pipeline.retrieval_tool
        if retrieval in self.o.configs and admits(self.o.configs[retrieval], task.prompt_type):
            chosen.setdefault(retrieval, RETRIEVAL)
        for sub in task.sub_tasks:  # C20e
            owner = sub.owner_coordinator_name
            if owner and self._activates_after_subtasks(owner):
                chosen[owner] = AFTER_SUBTASKS
        plan = {name: chosen[name] for name in self.o.by_priority(chosen)}
        self.emit(
            "activation",
            task.task_no,
            mode="selected",
            candidates=[c.name for c in candidates],
            suitability=dict(answers) if asked else None,
            activated=[{"tool": n, "reason": r} for n, r in plan.items()],
            ignored=[],
        )
        return plan

    def _forced(self, task: Task) -> dict[str, str]:
        """C13–C15: exactly the required tools, by simple or prefixed name; no suitability call,
        no retrieval tool beside them. An unknown name made at run time is ignored, with a
        warning."""
        known, ignored, required = self.o.forced_tools(frozenset(task.required_tool_names))
        for name in ignored:
            self.warn(
                f"task {task.task_no} requires tool {name!r}, which the domain "
                f"{self.pipeline.domain!r} does not have; it is ignored (C15)",
                task.task_no,
            )
        self.emit(
            "activation",
            task.task_no,
            mode=FORCED,
            candidates=required,  # (tuples, shared: the trace makes them lists, record_json)
            suitability=None,
            activated=[{"tool": name, "reason": FORCED} for name in known],
            ignored=ignored,
        )
        return dict.fromkeys(known, FORCED)

    def _candidates(self, task: Task) -> list[ToolConfig]:
        """Who may be activated on a non-forced task, in file order: not coordinator_only
        (C15a), not the retrieval tool (added apart), not the deep fallback coordinator (C30),
        and admitted by its prompt_types."""
        fallback = self.pipeline.deep_fallback
        excluded = {self.pipeline.retrieval_tool, fallback.coordinator if fallback else None}
        return [
            config
            for config in self.o.configs.values()
            if config.activation.mode is not ActivationMode.COORDINATOR_ONLY
            and config.name not in excluded
            and admits(config, task.prompt_type)
        ]

    def _known_answers(
        self, reply: Mapping[str, Any], asked: Sequence[ToolConfig]
    ) -> dict[str, bool]:
        """The suitability reply by simple tool name; a tool the reply leaves out is a no."""
        answers = {config.name: False for config in asked}
        for name, value in reply.items():
            config = self.pipeline.find_tool(name)
            if config is not None and config.name in answers:
                answers[config.name] = bool(value)
        return answers

    def _activates_after_subtasks(self, name: str) -> bool:
        flag = getattr(self.tools[name], "activate_after_subtasks", None)
        if flag is not None:
            return bool(flag)
        decompose = self.o.configs[name].decompose
        return decompose is not None and decompose.activate_after_subtasks

    # --- running a tool -----------------------------------------------------------------

    async def _run_tool(self, task: Task, name: str) -> _Stop | None:
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
            self.emit(
                "tool.error", task.task_no, tool=name, key=key, error=f"{type(exc).__name__}: {exc}"
            )
            self.save()
            return None
        if clarification is not None:
            self._consume(clarification)
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
    ) -> _Stop | None:
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
            return _Stop(ANSWER, result.text, tuple(dict.fromkeys(result.sources)), key)
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

    def _ask(self, task: Task, name: str, question: str) -> _Stop:
        """C24: the round ends with the question; the tool runs again with the answer."""
        rounds = 1 + sum(1 for c in self.state.clarifications if c.task_no == task.task_no)
        limit = self.limits.max_clarification_rounds
        if rounds > limit:
            task.tool_status[name] = ToolStatus.FAILED
            raise RoundError(
                f"tool {name!r} on task {task.task_no} asked a clarifying question again after "
                f"{limit} clarification rounds (limits.max_clarification_rounds): ask the whole "
                f"question again with every detail in one message. Its question: {question}"
            )
        task.tool_status[name] = ToolStatus.ASKED
        self._set_pending(Clarification(task.task_no, name, question, rounds=rounds))
        self.emit("clarification.ask", task.task_no, tool=name, question=question, rounds=rounds)
        return _Stop(CLARIFICATION, question)

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

    # --- deep fallback (C27–C28) --------------------------------------------------------

    async def _deep_fallback(self, root: Task) -> _Stop | None:
        fallback = self.pipeline.deep_fallback
        if fallback is None:
            return None
        if root.fallback is None:
            root.fallback = await self._gate(root)
            self.save()
        if root.fallback != "deep":
            return None
        name = fallback.coordinator
        if name not in self.tools or not is_coordinator(self.tools[name]):
            raise RoundError(
                f"deep_fallback.coordinator {name!r} is not a coordinator tool of the domain; "
                "name a deep_search tool (or a python coordinator)"
            )
        await self._run_coordinators(root, [name])
        stop = await self._close_subtasks(root)
        if stop is not None or root.tool_status.get(name) in FINISHED_TOOL:
            return stop
        root.tool_reasons[name] = DEEP_FALLBACK  # C20e: it answers from its subtasks' results
        return await self._run_tool(root, name)

    async def _gate(self, root: Task) -> str:
        """C27: is the primary context enough? "enough", "deep", or "none" (no fallback for
        this prompt type)."""
        fallback = self.pipeline.deep_fallback
        assert fallback is not None
        if fallback.prompt_types and root.prompt_type not in fallback.prompt_types:
            self.emit(
                "deep_fallback",
                root.task_no,
                coordinator=fallback.coordinator,
                run=False,
                reason=f"prompt type {root.prompt_type!r} has no deep fallback",
            )
            return "none"
        passages = self._passages(guaranteed=None)
        gatekeeper = fallback.gatekeeper
        if gatekeeper.mode == "rule":
            from runner.text import coverage

            share = coverage(root.important_words, "\n".join(p.text for p in passages))
            enough = share >= gatekeeper.min_coverage
            needed = gatekeeper.min_coverage
            reason = f"the context covers {share:.0%} of the important words (needs {needed:.0%})"
        else:
            enough, reason = await self.prompts.gatekeeper(
                root.task_prompt, passages, template=gatekeeper.template
            )
        self.emit(
            "gatekeeper",
            root.task_no,
            mode=gatekeeper.mode,
            enough=enough,
            reason=reason,
            passages=len(passages),
        )
        self.emit(
            "deep_fallback",
            root.task_no,
            coordinator=fallback.coordinator,
            run=not enough,
            reason="the gatekeeper found the context enough"
            if enough
            else "the gatekeeper found the context not enough",
        )
        return "enough" if enough else "deep"

    # --- the final answer (C33) ---------------------------------------------------------

    async def _final_answer(self, root: Task) -> _Stop:
        """All the guaranteed context (never dropped, C23) and the buffer's context up to
        `answer.max_context_items`, through the answer template. The sources are those of the
        passages the answer cites, in citation order, then those of every guaranteed passage:
        guaranteed context is handed on as it is (C23)."""
        consumed = self._consumed_subtasks(root)
        guaranteed = self._passages(guaranteed=True, leaving_out=consumed)
        context = self._passages(guaranteed=False, leaving_out=consumed)
        context = context[: self.pipeline.answer.max_context_items]
        answer = await self.prompts.answer(
            root.task_prompt, guaranteed, context, template=self.pipeline.answer.template
        )
        drawn_on = (*answer.used, *guaranteed)
        sources = tuple(dict.fromkeys(s for p in drawn_on for s in p.sources))
        return _Stop(ANSWER, answer.text, sources)

    def _consumed_subtasks(self, root: Task) -> set[str]:
        """[decided, C20e/C28] A coordinator activated after its subtasks builds its own result
        from theirs; once it gave one, that result stands for them in the final answer, so the
        subtasks' results (its `.n`/`.s` searches, its per-item lookups) are not handed to the
        answer a second time, and their sources are listed only where its result cites them."""
        consumed: set[str] = set()
        for task in root.walk():
            for name, reason in task.tool_reasons.items():
                if reason not in (AFTER_SUBTASKS, DEEP_FALLBACK) or not self._gave_result(
                    task, name
                ):
                    continue
                for sub in task.sub_tasks:
                    if sub.owner_coordinator_name == name:
                        consumed.update(t.task_no for t in sub.walk())
        return consumed

    def _gave_result(self, task: Task, name: str) -> bool:
        results = self.state.buffer.snapshot().get(completion_key(task.task_no, name), ())
        return any(result.context.strip() for result in results)

    def _passages(
        self, *, guaranteed: bool | None, leaving_out: Collection[str] = ()
    ) -> list[Passage]:
        """The buffer's non-empty results as passages, in buffer order; `guaranteed` selects
        one kind (None: both); `leaving_out` names tasks whose results are left out."""
        from runner.llm.prompts import passages_from_buffer

        passages = passages_from_buffer(self.state.buffer, guaranteed=guaranteed)
        return [p for p in passages if key_task_no(p.key) not in leaving_out]

    # --- plumbing -----------------------------------------------------------------------

    def _env(self, task: Task, text: str) -> RuntimeEnv:
        return RuntimeEnv(
            pipeline=self.pipeline,
            llm=self.o.llm,  # type: ignore[arg-type]
            prompts=self.prompts,
            task=task,
            buffer=self._view(),
            text=text,
            tools=self.tools,
            emit=self.tool_event,
        )

    # --- where results, events and questions go (the round, or a parallel branch) -------

    def _view(self) -> BufferView:
        """What a tool may see of the buffer now: a snapshot (C20c)."""
        branch = _BRANCH.get()
        return branch.view() if branch is not None else self.state.buffer.snapshot()

    def _completed(self, task_nos: set[str]) -> dict[str, tuple[PromptAndContext, ...]]:
        """C17: the entries the given tasks produced, as far as this branch can see."""
        view = self._view()
        return {key: results for key, results in view.items() if key_task_no(key) in task_nos}

    def _write(self, key: str, entry: PromptAndContext) -> None:
        branch = _BRANCH.get()
        if branch is not None:
            branch.held.append((key, entry))
        else:
            self.state.buffer.add_entry(key, entry)

    def _set_pending(self, clarification: Clarification | None) -> None:
        branch = _BRANCH.get()
        if branch is not None:
            branch.pending = clarification
        else:
            self.state.pending = clarification

    def trace_now(self) -> Trace:
        branch = _BRANCH.get()
        return branch.trace if branch is not None else self.trace

    def save(self) -> None:
        if self._checkpoint is not None:
            self._checkpoint(self.state)

    def warn(self, message: str, task: str | None = None) -> None:
        self.warnings.append(message)
        self.emit("warning", task, message=message)

    def emit(self, event: str, task: str | None = None, **fields: Any) -> None:
        """An event of the orchestrator's own. Its fields are JSON values already (no sets,
        enums or objects) made for the event, so the trace takes them as they are: every task
        node makes several events."""
        branch = _BRANCH.get()
        if branch is not None:
            branch.trace.record_json(event, task, fields)
        else:  # `_trace_for`, inlined: this runs five times per task node
            if len(getattr(self.o.llm, "calls", ())) != self._calls_seen:
                self._flush_llm_calls()
            if task is not None:
                self._last_task = task
            self.trace.record_json(event, task, fields)

    def tool_event(self, event: str, task: str | None = None, **fields: Any) -> None:
        """An event a tool adds (`env.trace`): its fields are made JSON."""
        self._trace_for(task).record(event, task, fields)

    def _trace_for(self, task: str | None) -> Trace:
        """Where the next event goes: the round's trace, after the LLM calls made since the
        last event; or, in a parallel branch, the branch's trace (its calls wait for the
        group)."""
        branch = _BRANCH.get()
        if branch is not None:
            return branch.trace
        if len(getattr(self.o.llm, "calls", ())) != self._calls_seen:
            self._flush_llm_calls()
        if task is not None:
            self._last_task = task
        return self.trace

    def _flush_llm_calls(self) -> None:
        calls = self._llm_calls()
        for record in calls[self._calls_seen :]:
            fields = record.to_json() if hasattr(record, "to_json") else dict(record)
            self.trace.emit("llm.call", self._last_task, **fields)
        self._calls_seen = len(calls)

    def _llm_calls(self) -> Sequence[Any]:
        """The client's call records (runner.llm.accounting.CallRecord), oldest first."""
        calls = getattr(self.o.llm, "calls", None)
        return calls if calls is not None else ()

    def _stats(self) -> dict[str, Any]:
        from runner.llm.accounting import Accounting

        accounting = Accounting()
        for record in self._llm_calls()[self._first_call :]:
            accounting.add(record)
        stats = accounting.stats()
        stats["tokens"] = stats["prompt_tokens"] + stats["completion_tokens"]
        stats["wall_ms"] = round((time.monotonic() - self._started) * 1000, 3)
        return stats
