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

Plain data, no OpenTelemetry: `runner.observability.otel` makes real spans of it. The trace's
events mark when a step ended; a step began where the step before it in the same task (or in
one of its subtasks) ended, and an LLM call `latency_ms` before its event. Prompts, replies and
queries are in the spans only with `content` (the user's opt-in): the round's message and
answer, task prompts and queries from the trace, each call's prompt and reply from the
`exchanges` the round kept beside it (the trace holds no prompt text). Whatever looks like a
credential in them, or in an error, is hidden (runner.text.credentials).

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

if TYPE_CHECKING:
    from runner.llm.exchanges import Exchange

TOOL_ENDS = frozenset({"tool.run", "tool.error", "terminal", "clarification.ask"})
COORDINATOR_ENDS = frozenset({"coordinator.run", "coordinator.error"})
# events that say something happened on a task without a span of their own: the next step
# begins after them
STEPS = frozenset(
    {"activation", "gatekeeper", "deep_fallback", "subtask.decision", "coordinator.skip"}
)


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
    events: Sequence[Mapping[str, Any]],
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
    if provider is None:
        provider = next((str(e["provider"]) for e in events if e.get("provider")), None)
    planner = _Planner(workflow, result, content, exchanges, provider)
    if legacy_names:
        planner.root.attributes["gen_ai.workflow.name"] = workflow
    return planner.plan(events)


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
        self.retrievals: dict[tuple[str | None, str], list[Mapping[str, Any]]] = {}
        self.calls: list[tuple[Mapping[str, Any], Exchange | None]] = []

    def plan(self, events: Sequence[Mapping[str, Any]]) -> SpanPlan:
        if events:
            self.root.start_ms = self.root.end_ms = float(events[0]["ms"])
        for event in events:
            self.root.end_ms = max(self.root.end_ms, float(event["ms"]))
            self._take(event)
        for span in self.tasks.values():
            if span.end_ms < span.start_ms:  # never closed: it ran until the round ended
                span.end_ms = self.root.end_ms
        for call, exchange in self.calls:
            self._place_call(call, exchange)
        self._describe_round()
        return self.root

    # --- the events, in order ----------------------------------------------------------------

    def _take(self, event: Mapping[str, Any]) -> None:
        name, task, ms = event["event"], event.get("task"), float(event["ms"])
        if name == "round.start":
            self.root.start_ms = ms
            self.root.attributes.update(
                {
                    "gen_ai.conversation.id": event.get("session"),
                    "runner.round": event.get("round"),
                    "runner.round.kind": event.get("kind"),
                }
            )
            if self.content:
                self.root.attributes["gen_ai.input.messages"] = input_messages(
                    str(event.get("message") or "")
                )
        elif name == "task.start":
            self._start_task(event, ms)
        elif name == "task.end" and task in self.tasks:
            self.tasks[task].end_ms = ms
            self.tasks[task].attributes["runner.task.status"] = event.get("status")
            self._advance(task, ms)
        elif name in COORDINATOR_ENDS:
            self._coordinator(event, ms)
        elif name in TOOL_ENDS:
            self._tool(event, ms)
        elif name == "retrieval":
            self.retrievals.setdefault((task, str(event.get("tool"))), []).append(event)
        elif name == "llm.call":
            self.calls.append((event, next(self.exchanges, None)))
        elif name in STEPS and task is not None:
            self._advance(task, ms)

    def _start_task(self, event: Mapping[str, Any], ms: float) -> None:
        task, depth = str(event["task"]), int(event.get("depth") or 0)
        parent = self.last_at_depth.get(depth - 1) if depth else None
        attributes = {
            "runner.task": task,
            "runner.task.depth": depth,
            "runner.task.prompt_type": event.get("prompt_type"),
            "runner.task.owner": event.get("owner"),
            "runner.task.conditional": event.get("conditional"),
            "runner.task.resumed": event.get("resumed"),
        }
        if self.content:
            attributes["runner.task.prompt"] = said(event.get("prompt"))
        span = SpanPlan(f"task {task}", ms, -1.0, attributes)
        self._span_of(parent).children.append(span)
        self.tasks[task], self.parents[task] = span, parent
        self.last_at_depth[depth] = task
        self.cursor[task] = ms

    def _coordinator(self, event: Mapping[str, Any], ms: float) -> None:
        task, name = event.get("task"), str(event.get("coordinator"))
        span = SpanPlan(
            f"invoke_agent {name}",
            self._begun(task),
            ms,
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": name,
                "gen_ai.provider.name": self.provider,  # required on invoke_agent
                "runner.task": task,
                "runner.subtasks": list(event.get("subtasks") or ()),
                "runner.appended": event.get("appended"),
            },
        )
        if event["event"] == "coordinator.error":
            span.attributes["error.type"] = "coordinator_error"
            span.error = self._status(event.get("error"), "the coordinator failed")
        self._span_of(task).children.append(span)
        self._advance(task, ms)

    def _tool(self, event: Mapping[str, Any], ms: float) -> None:
        task, name = event.get("task"), str(event.get("tool"))
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
                "runner.reason": event.get("reason"),
                "runner.key": event.get("key"),
                "runner.result": event.get("result"),
                "runner.step": event["event"],
            },
        )
        if event["event"] == "tool.error":
            span.attributes["error.type"] = "tool_error"
            span.error = self._status(event.get("error"), "the tool failed")
        span.children += [self._retrieval(found, span.start_ms) for found in retrievals]
        self._span_of(task).children.append(span)
        self._advance(task, ms)

    def _retrieval(self, event: Mapping[str, Any], start_ms: float) -> SpanPlan:
        corpus = str(event.get("corpus"))
        pages = event.get("pages") or []
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "retrieval",
            "gen_ai.data_source.id": corpus,
            "runner.task": event.get("task"),
            "runner.tool": event.get("tool"),
            "runner.pages": len(pages),
        }
        if self.content:
            attributes["gen_ai.retrieval.query.text"] = said(event.get("query"))
        return SpanPlan(f"retrieval {corpus}", start_ms, float(event["ms"]), attributes)

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

    def _place_call(self, event: Mapping[str, Any], exchange: Exchange | None) -> None:
        end = float(event["ms"])
        parent = self._call_parent(event, end)
        start = max(end - float(event.get("latency_ms") or 0.0), parent.start_ms)
        span = chat_span(event, start, end, content=self.content)
        if exchange is not None:
            span.attributes.update(exchanged_messages(exchange, event))
        parent.children.append(span)

    def _call_parent(self, event: Mapping[str, Any], end: float) -> SpanPlan:
        """The span of the step the call was made for, when the call ended within it: its
        tool's (or coordinator's) on its task; for a call naming no tool, a coordinator's
        decomposition that was running; else its task's; else the round's."""
        task_span = self.tasks.get(str(event.get("task")))
        if task_span is None or not task_span.start_ms <= end <= task_span.end_ms:
            return self.root
        tool = event.get("tool")
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


def chat_span(
    event: Mapping[str, Any], start: float, end: float, *, content: bool = False
) -> SpanPlan:
    """One LLM call (an attempt, or a reply from the cache)."""
    model = str(event.get("model") or event.get("provider"))
    outcome = event.get("outcome", "ok")
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": event.get("provider"),
        "gen_ai.request.model": model,
        "gen_ai.request.temperature": event.get("temperature"),
        "gen_ai.request.max_tokens": event.get("max_tokens"),
        "gen_ai.response.model": event.get("response_model"),
        "gen_ai.response.id": event.get("response_id"),
        "gen_ai.output.type": event.get("output_type"),
        "server.address": event.get("server_address"),
        "server.port": event.get("server_port"),
        "gen_ai.usage.input_tokens": event.get("prompt_tokens"),
        "gen_ai.usage.output_tokens": event.get("completion_tokens"),
        "runner.purpose": event.get("purpose"),
        "runner.task": event.get("task"),
        "runner.tool": event.get("tool"),
        "runner.cached": event.get("cached"),
        "runner.attempt": event.get("attempt"),
        "runner.outcome": outcome,
        "runner.tokens_estimated": event.get("tokens_estimated"),
        "runner.queue_ms": event.get("queue_ms"),
        "runner.structured": event.get("structured"),
    }
    span = SpanPlan(f"chat {model}", start, end, attributes, kind="client")
    if outcome == "error":
        attributes["error.type"] = error_type(str(event.get("error") or ""))
        span.error = status_message(event.get("error"), "the LLM call failed", content)
    else:
        attributes["gen_ai.response.finish_reasons"] = [finish_reason(event)]
    if event.get("first_token_ms") is not None:
        attributes["gen_ai.request.stream"] = True
        attributes["gen_ai.response.time_to_first_chunk"] = float(event["first_token_ms"]) / 1000
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


def exchanged_messages(exchange: Exchange, event: Mapping[str, Any]) -> dict[str, str]:
    """A call's prompt (sent as one user message: runner.llm.providers.remote) and, when it
    was answered, its reply, as the conventions' message attributes."""
    messages = {"gen_ai.input.messages": input_messages(exchange.prompt)}
    if exchange.reply is not None:
        messages["gen_ai.output.messages"] = output_messages(exchange.reply, finish_reason(event))
    return messages


def finish_reason(call: Mapping[str, Any]) -> str:
    """Why the model stopped, as the server said; the local providers (offline, scripted)
    write a whole reply: they stop, as it were."""
    return str(call.get("finish_reason") or "stop")


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
