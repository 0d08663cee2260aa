"""A finished round's trace events as a tree of spans, named and described by OpenTelemetry's
semantic conventions for generative AI (and runner's own attributes under `runner.`).

    invoke_workflow {domain}          the round
      task {n}                        each task, its subtasks inside it
        invoke_agent {coordinator}    a coordinator's decomposition
        execute_tool {tool}           a tool's run
          retrieval {corpus}          each search of a corpus
          chat {model}                an LLM call made for the tool
        chat {model}                  an LLM call made for the task (suitability, …)
      chat {model}                    the final answer

Plain data, no OpenTelemetry: `runner.observability.otel` makes real spans of it. The trace is
read as typed events (runner.trace.events); they mark when a step ended; a step began where
the step before it in the same task (or in one of its subtasks) ended, and an LLM call
`latency_ms` before its event. Prompts, replies and queries are in the spans only with
`content` (the user's opt-in): the round's message and answer, task prompts and queries from
the trace, each call's prompt and reply from the `exchanges` the round kept beside it (the
trace holds no prompt text). Whatever looks like a credential in them, or in an error, is
hidden (runner.text.credentials).

An error's own text is no part of a span's status without `content` either: an LLM server's
400 may echo the prompt, a tool's error the user's words. Its status then says what failed and
its `error.type`, nothing the error quoted; with `content`, the error as it was written.

Names follow the current GenAI conventions: the round's span carries its domain as
`gen_ai.agent.name` (the conventions' workflow is an agent invocation whose operation is
`invoke_workflow`); with `legacy_names` it also carries the former `gen_ai.workflow.name`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from runner.text.credentials import hide_credentials
from runner.trace.events import (
    ActivationChoice,
    ClarificationAsk,
    CoordinatorError,
    CoordinatorRun,
    CoordinatorSkip,
    DeepFallbackRun,
    GatekeeperVerdict,
    LLMCall,
    Retrieval,
    RoundStart,
    SubtaskChoice,
    TaskEnd,
    TaskStart,
    Terminal,
    ToolError,
    ToolRun,
    TraceEvent,
    read_trace,
)

if TYPE_CHECKING:
    from runner.llm.exchanges import Exchange

ToolEnd = ToolRun | ToolError | Terminal | ClarificationAsk
TOOL_ENDS = (ToolRun, ToolError, Terminal, ClarificationAsk)
COORDINATOR_ENDS = (CoordinatorRun, CoordinatorError)
# events that say something happened on a task without a span of their own: the next step
# begins after them
STEPS = (ActivationChoice, GatekeeperVerdict, DeepFallbackRun, SubtaskChoice, CoordinatorSkip)


@dataclass
class SpanPlan:
    name: str
    start_ms: float
    end_ms: float
    attributes: dict[str, Any]
    kind: str = "internal"  # internal | client (an LLM call: a request to a model server)
    error: str | None = None  # the span failed: what went wrong (its `error.type` says what kind)
    children: list[SpanPlan] = field(default_factory=list)


def plan_round(
    workflow: str,
    events: Sequence[Mapping[str, Any] | TraceEvent],
    result: Mapping[str, Any],
    content: bool,
    exchanges: Sequence[Exchange | None] = (),
    *,
    provider: str | None = None,
    legacy_names: bool = False,
) -> SpanPlan:
    """The span tree of one round (its root: the workflow span). `exchanges`: the prompt and
    reply of each `llm.call` event, in order (runner.observability.FinishedRound); `provider`:
    the LLM provider the round's client calls (else the first call's)."""
    typed = read_trace(events)
    if provider is None:
        provider = next(
            (str(e.provider) for e in typed if isinstance(e, LLMCall) and e.provider), None
        )
    planner = _Planner(workflow, result, content, exchanges, provider)
    if legacy_names:
        planner.root.attributes["gen_ai.workflow.name"] = workflow
    return planner.plan(typed)


class _Planner:
    def __init__(
        self,
        workflow: str,
        result: Mapping[str, Any],
        content: bool,
        exchanges: Sequence[Exchange | None],
        provider: str | None = None,
    ) -> None:
        self.content = content
        self.provider = provider
        self.exchanges = iter(exchanges if content else ())
        self.result = result
        self.root = SpanPlan(
            f"invoke_workflow {workflow}",
            0.0,
            0.0,
            {
                "gen_ai.operation.name": "invoke_workflow",
                "gen_ai.agent.name": workflow,
                "gen_ai.provider.name": provider,
            },
        )
        self.tasks: dict[str, SpanPlan] = {}
        self.parents: dict[str, str | None] = {}
        self.last_at_depth: dict[int, str] = {}
        self.cursor: dict[str, float] = {}
        self.retrievals: dict[tuple[str | None, str], list[Retrieval]] = {}
        self.calls: list[tuple[LLMCall, Exchange | None]] = []

    def plan(self, events: Sequence[TraceEvent]) -> SpanPlan:
        if events:
            self.root.start_ms = self.root.end_ms = float(events[0].ms)
        for event in events:
            self.root.end_ms = max(self.root.end_ms, float(event.ms))
            self._take(event)
        for span in self.tasks.values():
            if span.end_ms < span.start_ms:  # never closed: it ran until the round ended
                span.end_ms = self.root.end_ms
        for call, exchange in self.calls:
            self._place_call(call, exchange)
        self._describe_round()
        return self.root

    # --- the events, in order ----------------------------------------------------------------

    def _take(self, event: TraceEvent) -> None:
        task, ms = event.task, float(event.ms)
        if isinstance(event, RoundStart):
            self.root.start_ms = ms
            self.root.attributes.update(
                {
                    "gen_ai.conversation.id": event.session,
                    "runner.round": event.round,
                    "runner.round.kind": event.kind,
                }
            )
            if self.content:
                self.root.attributes["gen_ai.input.messages"] = input_messages(
                    str(event.message or "")
                )
        elif isinstance(event, TaskStart):
            self._start_task(event, ms)
        elif isinstance(event, TaskEnd) and task in self.tasks:
            self.tasks[task].end_ms = ms
            self.tasks[task].attributes["runner.task.status"] = event.status
            self._advance(task, ms)
        elif isinstance(event, COORDINATOR_ENDS):
            self._coordinator(event, ms)
        elif isinstance(event, TOOL_ENDS):
            self._tool(event, ms)
        elif isinstance(event, Retrieval):
            self.retrievals.setdefault((task, str(event.tool)), []).append(event)
        elif isinstance(event, LLMCall):
            self.calls.append((event, next(self.exchanges, None)))
        elif isinstance(event, STEPS) and task is not None:
            self._advance(task, ms)

    def _start_task(self, event: TaskStart, ms: float) -> None:
        task, depth = str(event.task), int(event.depth or 0)
        parent = self.last_at_depth.get(depth - 1) if depth else None
        attributes = {
            "runner.task": task,
            "runner.task.depth": depth,
            "runner.task.prompt_type": event.prompt_type,
            "runner.task.owner": event.owner,
            "runner.task.conditional": event.conditional,
            "runner.task.resumed": event.resumed,
        }
        if self.content:
            attributes["runner.task.prompt"] = said(event.prompt)
        span = SpanPlan(f"task {task}", ms, -1.0, attributes)
        self._span_of(parent).children.append(span)
        self.tasks[task], self.parents[task] = span, parent
        self.last_at_depth[depth] = task
        self.cursor[task] = ms

    def _coordinator(self, event: CoordinatorRun | CoordinatorError, ms: float) -> None:
        task, name = event.task, str(event.coordinator)
        run = event if isinstance(event, CoordinatorRun) else None
        span = SpanPlan(
            f"invoke_agent {name}",
            self._begun(task),
            ms,
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": name,
                "gen_ai.provider.name": self.provider,  # required on invoke_agent
                "runner.task": task,
                "runner.subtasks": list(run.subtasks or ()) if run else [],
                "runner.appended": run.appended if run else None,
            },
        )
        if isinstance(event, CoordinatorError):
            span.attributes["error.type"] = "coordinator_error"
            span.error = self._status(event.error, "the coordinator failed")
        self._span_of(task).children.append(span)
        self._advance(task, ms)

    def _tool(self, event: ToolEnd, ms: float) -> None:
        task, name = event.task, str(event.tool)
        retrievals = self.retrievals.pop((task, name), [])
        span = SpanPlan(
            f"execute_tool {name}",
            self._begun(task),
            ms,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.type": "datastore" if retrievals else "extension",
                "runner.task": task,
                "runner.reason": event.reason if isinstance(event, ToolRun) else None,
                "runner.key": None if isinstance(event, ClarificationAsk) else event.key,
                "runner.result": event.result if isinstance(event, ToolRun) else None,
                "runner.step": event.EVENT,
            },
        )
        if isinstance(event, ToolError):
            span.attributes["error.type"] = "tool_error"
            span.error = self._status(event.error, "the tool failed")
        span.children += [self._retrieval(found, span.start_ms) for found in retrievals]
        self._span_of(task).children.append(span)
        self._advance(task, ms)

    def _retrieval(self, event: Retrieval, start_ms: float) -> SpanPlan:
        corpus = str(event.corpus)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "retrieval",
            "gen_ai.data_source.id": corpus,
            "runner.task": event.task,
            "runner.tool": event.tool,
            "runner.pages": len(event.pages or ()),
        }
        if self.content:
            attributes["gen_ai.retrieval.query.text"] = said(event.query)
        return SpanPlan(f"retrieval {corpus}", start_ms, float(event.ms), attributes)

    def _span_of(self, task: str | None) -> SpanPlan:
        return self.tasks.get(task or "", self.root)

    def _begun(self, task: str | None) -> float:
        """When a step of the task that ends now began: when the one before it ended."""
        return self.cursor.get(task or "", self.root.start_ms)

    def _advance(self, task: str | None, ms: float) -> None:
        """A step of `task` ended at `ms`: the next step of it, and of its ancestors, begins
        no earlier."""
        while task is not None:
            self.cursor[task] = max(self.cursor.get(task, ms), ms)
            task = self.parents.get(task)

    # --- LLM calls and the round ---------------------------------------------------------------

    def _place_call(self, event: LLMCall, exchange: Exchange | None) -> None:
        end = float(event.ms)
        parent = self._call_parent(event, end)
        start = max(end - float(event.latency_ms or 0.0), parent.start_ms)
        span = chat_span(event, start, end, content=self.content)
        if exchange is not None:
            span.attributes.update(exchanged_messages(exchange, event))
        parent.children.append(span)

    def _call_parent(self, event: LLMCall, end: float) -> SpanPlan:
        """The span of the step the call was made for, when the call ended within it: its
        tool's (or coordinator's) on its task; for a call naming no tool, a coordinator's
        decomposition that was running; else its task's; else the round's."""
        task_span = self.tasks.get(str(event.task))
        if task_span is None or not task_span.start_ms <= end <= task_span.end_ms:
            return self.root
        tool = event.tool
        for step in task_span.children:
            if not step.start_ms <= end <= step.end_ms:
                continue
            agent = step.attributes.get("gen_ai.agent.name")
            if tool is None and agent is not None:
                return step
            if tool is not None and tool in (agent, step.attributes.get("gen_ai.tool.name")):
                return step
        return task_span

    def _status(self, error: Any, what_failed: str) -> str:
        return status_message(error, what_failed, self.content)

    def _describe_round(self) -> None:
        result, attributes = self.result, self.root.attributes
        attributes["runner.outcome"] = result.get("outcome")
        attributes["runner.warnings"] = len(result.get("warnings") or ())
        attributes["runner.sources"] = len(result.get("sources") or ())
        if result.get("outcome") == "error":
            attributes["error.type"] = "round_error"
            self.root.error = self._status(result.get("error"), "the round failed")
        if self.content:
            answer = result.get("answer") or result.get("question") or result.get("error")
            attributes["gen_ai.output.messages"] = output_messages(str(answer or ""), "stop")


def chat_span(event: LLMCall, start: float, end: float, *, content: bool = False) -> SpanPlan:
    """One LLM call (an attempt, or a reply from the cache)."""
    model = str(event.model or event.provider)
    outcome = "ok" if event.outcome is None else event.outcome
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": event.provider,
        "gen_ai.request.model": model,
        "gen_ai.request.temperature": event.temperature,
        "gen_ai.request.max_tokens": event.max_tokens,
        "gen_ai.response.model": event.response_model,
        "gen_ai.response.id": event.response_id,
        "gen_ai.output.type": event.output_type,
        "server.address": event.server_address,
        "server.port": event.server_port,
        "gen_ai.usage.input_tokens": event.prompt_tokens,
        "gen_ai.usage.output_tokens": event.completion_tokens,
        "runner.purpose": event.purpose,
        "runner.task": event.task,
        "runner.tool": event.tool,
        "runner.cached": event.cached,
        "runner.attempt": event.attempt,
        "runner.outcome": outcome,
        "runner.tokens_estimated": event.tokens_estimated,
        "runner.queue_ms": event.queue_ms,
        "runner.structured": event.structured,
    }
    span = SpanPlan(f"chat {model}", start, end, attributes, kind="client")
    if outcome == "error":
        attributes["error.type"] = error_type(str(event.error or ""))
        span.error = status_message(event.error, "the LLM call failed", content)
    else:
        attributes["gen_ai.response.finish_reasons"] = [finish_reason(event)]
    if event.first_token_ms is not None:
        attributes["gen_ai.request.stream"] = True
        attributes["gen_ai.response.time_to_first_chunk"] = float(event.first_token_ms) / 1000
    return span


def status_message(error: Any, what_failed: str, content: bool) -> str:
    """A failed span's status: what failed and the error's kind; the error's own text (which
    may quote the user, or the prompt an LLM server echoed) only when content is opted in."""
    if content and error is not None:
        return said(error) or what_failed
    kind = error_type(str(error or ""))
    return f"{what_failed} ({kind}); its message is in the trace, not in spans"


def error_type(error: str) -> str:
    """A low-cardinality name for an LLM call's error: its exception class, as the client
    wrote it first (`APITimeoutError: …`) or after the step a round's error names (`answer
    (LLM purpose) failed: ScriptMissError: …`), else `llm_error`."""
    head = error.split(":", 1)[0].strip()
    if head.isidentifier():
        return head
    named = _EXCEPTION_NAME.search(error)
    return named[1] if named else "llm_error"


# an exception's class as a message writes it before its text: `… failed: TimeoutError: …`
_EXCEPTION_NAME = re.compile(r"(?:^|[\s:])([A-Za-z_]\w*(?:Error|Exception|Timeout|Miss)):")


def exchanged_messages(exchange: Exchange, event: LLMCall) -> dict[str, str]:
    """A call's prompt (sent as one user message: runner.llm.providers.llama_index_chat) and,
    when it was answered, its reply, as the conventions' message attributes."""
    messages = {"gen_ai.input.messages": input_messages(exchange.prompt)}
    if exchange.reply is not None:
        messages["gen_ai.output.messages"] = output_messages(exchange.reply, finish_reason(event))
    return messages


def finish_reason(call: LLMCall) -> str:
    """Why the model stopped, as the server said; the local providers (offline, scripted)
    write a whole reply: they stop, as it were."""
    return str(call.finish_reason or "stop")


def input_messages(message: str) -> str:
    """A user's message as the conventions' `gen_ai.input.messages` (a JSON string: OpenTelemetry
    for Python takes no structured attribute), credentials hidden."""
    return json.dumps(
        [{"role": "user", "parts": [{"type": "text", "content": hide_credentials(message)}]}],
        ensure_ascii=False,
    )


def output_messages(reply: str, finish_reason: str) -> str:
    """A reply as the conventions' `gen_ai.output.messages` (a JSON string), credentials
    hidden."""
    message = {
        "role": "assistant",
        "parts": [{"type": "text", "content": hide_credentials(reply)}],
        "finish_reason": finish_reason,
    }
    return json.dumps([message], ensure_ascii=False)


def said(text: Any) -> str | None:
    """A text from the trace (a prompt, a query, an error) as a span may carry it: credentials
    hidden; None stays None."""
    return None if text is None else hide_credentials(str(text))
