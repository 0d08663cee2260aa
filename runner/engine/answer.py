"""The end of the root task and of the round: the gatekeeper and the deep fallback (C27–C28),
then the final answer from the guaranteed context and the buffer (C23, C33)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from runner.engine.activation import AFTER_SUBTASKS, DEEP_FALLBACK
from runner.engine.channels import FINISHED_TOOL, RoundError, Stop, during
from runner.engine.context import RoundContext
from runner.engine.coordinators import run_coordinators, subtree
from runner.engine.execution import run_tool
from runner.engine.outcome import ANSWER
from runner.engine.protocols import is_coordinator
from runner.engine.subtasks import Process, close_subtasks
from runner.engine.task import Task, completion_key, key_task_no
from runner.sources import unique_sources

if TYPE_CHECKING:
    from runner.llm.prompts import Passage


async def deep_fallback(ctx: RoundContext, root: Task, process: Process) -> Stop | None:
    fallback = ctx.pipeline.deep_fallback
    if fallback is None:
        return None
    if root.fallback is None:
        root.fallback = await gatekeeper_verdict(ctx, root)
        ctx.save()
    if root.fallback != "deep":
        return None
    name = fallback.coordinator
    if name not in ctx.setup.tools or not is_coordinator(ctx.setup.tools[name]):
        raise RoundError(
            f"deep_fallback.coordinator {name!r} is not a coordinator tool of the domain; "
            "name a deep_search tool (or a python coordinator)"
        )
    await run_coordinators(ctx, root, [name])
    stop = await close_subtasks(ctx, root, process)
    if stop is not None or root.tool_status.get(name) in FINISHED_TOOL:
        return stop
    root.tool_reasons[name] = DEEP_FALLBACK  # C20e: it answers from its subtasks' results
    return await run_tool(ctx, root, name)


async def gatekeeper_verdict(ctx: RoundContext, root: Task) -> str:
    """C27: is the primary context enough? "enough", "deep", or "none" (no fallback for
    this prompt type)."""
    fallback = ctx.pipeline.deep_fallback
    assert fallback is not None
    if fallback.prompt_types and root.prompt_type not in fallback.prompt_types:
        ctx.emit(
            "deep_fallback",
            root.task_no,
            coordinator=fallback.coordinator,
            run=False,
            reason=f"prompt type {root.prompt_type!r} has no deep fallback",
        )
        return "none"
    passages = passages_of(ctx)
    gatekeeper = fallback.gatekeeper
    if gatekeeper.mode == "rule":
        with during("gatekeeper (rule mode)"):
            enough, reason = rule_gate(root, passages, gatekeeper.min_coverage)
    else:
        with during("gatekeeper (LLM purpose)"):
            enough, reason = await ctx.prompts_for(root).gatekeeper(
                root.task_prompt, passages, template=gatekeeper.template
            )
    ctx.emit(
        "gatekeeper",
        root.task_no,
        mode=gatekeeper.mode,
        enough=enough,
        reason=reason,
        passages=len(passages),
    )
    ctx.emit(
        "deep_fallback",
        root.task_no,
        coordinator=fallback.coordinator,
        run=not enough,
        reason="the gatekeeper found the context enough"
        if enough
        else "the gatekeeper found the context not enough",
    )
    return "enough" if enough else "deep"


def rule_gate(root: Task, passages: list[Passage], needed: float) -> tuple[bool, str]:
    """`mode: rule`: the share of the question's important words the context holds; with a
    retrieval's evidence (a corpus with page vectors), that share's verdict is weighed with
    it as the offline gatekeeper weighs its own (docs/retrieval.md)."""
    from runner.llm.evidence import evidence_of, weighed
    from runner.text.words import coverage

    share = coverage(root.important_words, "\n".join(p.text for p in passages))
    enough = share >= needed
    reason = f"the context covers {share:.0%} of the important words (needs {needed:.0%})"
    evidence = evidence_of(passage.to_json() for passage in passages)
    if evidence is None:
        return enough, reason
    return weighed(evidence, enough), f"{reason}; {evidence.reason(enough)}"


async def final_answer(ctx: RoundContext, root: Task) -> Stop:
    """C23/C33: every guaranteed result of the round, as it is, and the buffer's plain
    context, through the answer template.

    Only plain context is ever left out: what a coordinator's own result stands for (see
    `consumed_subtasks`), then whatever exceeds `answer.max_context_items`. Guaranteed
    context is never dropped by either, nor counted against the limit. The sources are
    those of the passages the answer cites, in citation order, then those of every
    guaranteed passage."""
    passages = passages_of(ctx)  # (one walk of the buffer for both kinds)
    guaranteed = [p for p in passages if p.guaranteed is True]
    left_out = consumed_subtasks(ctx, root)
    context = [p for p in passages if p.guaranteed is False and key_task_no(p.key) not in left_out]
    context = context[: ctx.pipeline.answer.max_context_items]
    with during("answer (LLM purpose)"):
        answer = await ctx.prompts_for(root).answer(
            root.task_prompt, guaranteed, context, template=ctx.pipeline.answer.template
        )
    drawn_on = (*answer.used, *guaranteed)
    sources = unique_sources(s for p in drawn_on for s in p.sources)
    return Stop(ANSWER, answer.text, sources)


def consumed_subtasks(ctx: RoundContext, root: Task) -> set[str]:
    """[decided, C20e/C28] A coordinator activated after its subtasks builds its own result
    from theirs; once it gave one, that result stands for them in the final answer, so the
    subtasks' plain context (its per-item lookups, its searches' raw pages) is not handed
    to the answer a second time. Their guaranteed results still are (C23)."""
    consumed: set[str] = set()
    for task in subtree(root):  # (a set: any order; a list is cheaper to walk than a generator)
        for name, reason in task.tool_reasons.items():
            if reason not in (AFTER_SUBTASKS, DEEP_FALLBACK) or not gave_result(ctx, task, name):
                continue
            for sub in task.sub_tasks:
                if sub.owner_coordinator_name == name:
                    consumed.update(t.task_no for t in sub.walk())
    return consumed


def gave_result(ctx: RoundContext, task: Task, name: str) -> bool:
    # (peek: a snapshot's lookup groups the whole buffer, and this runs for every coordinator
    # activated after its subtasks)
    results = ctx.state.buffer.peek(completion_key(task.task_no, name))
    return any(result.context.strip() for result in results)


def passages_of(ctx: RoundContext) -> list[Passage]:
    """The buffer's non-empty results as passages, guaranteed or not, in buffer order."""
    from runner.llm.prompts import passages_from_buffer

    return passages_from_buffer(ctx.state.buffer)
