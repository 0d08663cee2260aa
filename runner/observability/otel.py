"""Rounds as OpenTelemetry spans and metrics (the `otel` extra).

`OtelObserver` turns each finished round's span plan (runner.observability.spans) into real
spans, with their recorded start and end times, under the caller's trace when the request
carried a `traceparent`; and records the GenAI metrics: of its LLM calls
`gen_ai.client.inference.tokens` (a counter, by `gen_ai.token.type`),
`gen_ai.client.operation.duration` and, for streamed replies,
`gen_ai.client.operation.time_to_first_chunk`; of the round `gen_ai.invoke_agent.duration`
(operation `invoke_workflow`). With `legacy_names` (RUNNER_OTEL_LEGACY_NAMES, for receivers
that still read the former conventions) the token histogram `gen_ai.client.token.usage` and
the workflow span's `gen_ai.workflow.name` are reported as well.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry import propagate
from opentelemetry import trace as otel_trace
from opentelemetry.metrics import MeterProvider, get_meter_provider
from opentelemetry.trace import SpanKind, Status, StatusCode, TracerProvider

from runner.observability import FinishedRound, trace_carrier
from runner.observability.spans import SpanPlan, error_type, plan_round

SCOPE = "runner"
# the conventions' advised bucket boundaries
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304)
SECONDS_BUCKETS = (
    0.01,
    0.02,
    0.04,
    0.08,
    0.16,
    0.32,
    0.64,
    1.28,
    2.56,
    5.12,
    10.24,
    20.48,
    40.96,
    81.92,
)
_KINDS = {"internal": SpanKind.INTERNAL, "client": SpanKind.CLIENT}


class OtelObserver:
    """A round observer (runner.observability.add_observer) reporting through the given
    providers, or the global ones."""

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        *,
        content: bool = False,
        legacy_names: bool = False,
    ) -> None:
        tracers = tracer_provider or otel_trace.get_tracer_provider()
        self.tracer = tracers.get_tracer(SCOPE)
        meter = (meter_provider or get_meter_provider()).get_meter(SCOPE)
        self.legacy_names = legacy_names
        self.token_count = meter.create_counter(
            "gen_ai.client.inference.tokens",
            unit="{token}",
            description="Number of input and output tokens used by inference calls.",
        )
        self.tokens = (
            meter.create_histogram(
                "gen_ai.client.token.usage",
                unit="{token}",
                description="Number of input and output tokens used.",
                explicit_bucket_boundaries_advisory=list(TOKEN_BUCKETS),
            )
            if legacy_names
            else None
        )
        self.workflow_duration = meter.create_histogram(
            "gen_ai.invoke_agent.duration",
            unit="s",
            description="Duration of an agent invocation (here: a round of a pipeline).",
            explicit_bucket_boundaries_advisory=list(SECONDS_BUCKETS),
        )
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=list(SECONDS_BUCKETS),
        )
        self.first_chunk = meter.create_histogram(
            "gen_ai.client.operation.time_to_first_chunk",
            unit="s",
            description="Time to receive the first chunk of a streamed reply.",
            explicit_bucket_boundaries_advisory=list(SECONDS_BUCKETS),
        )
        self.content = content

    def __call__(self, finished: FinishedRound) -> None:
        plan = plan_round(
            finished.workflow,
            finished.events,
            finished.result,
            self.content,
            finished.exchanges,
            provider=finished.provider,
            legacy_names=self.legacy_names,
        )
        carrier = trace_carrier()
        parent = propagate.extract(dict(carrier)) if carrier else None
        self._start(plan, parent, finished.began_ns)
        for event in finished.events:
            if event.get("event") == "llm.call":
                self._measure(event)
        self._measure_round(plan)

    def _measure_round(self, plan: SpanPlan) -> None:
        attributes = {
            name: plan.attributes[name]
            for name in ("gen_ai.operation.name", "gen_ai.agent.name", "gen_ai.provider.name")
            if plan.attributes.get(name) is not None
        }
        if plan.error is not None:
            attributes["error.type"] = str(plan.attributes.get("error.type") or "round_error")
        seconds = max(plan.end_ms - plan.start_ms, 0.0) / 1000
        self.workflow_duration.record(seconds, attributes)

    def _start(self, plan: SpanPlan, parent: Any, began_ns: int) -> None:
        span = self.tracer.start_span(
            plan.name,
            context=parent,
            kind=_KINDS[plan.kind],
            attributes=_attributes(plan.attributes),
            start_time=began_ns + int(plan.start_ms * 1_000_000),
        )
        if plan.error is not None:
            span.set_status(Status(StatusCode.ERROR, plan.error))
        inside = otel_trace.set_span_in_context(span)
        for child in plan.children:
            self._start(child, inside, began_ns)
        span.end(end_time=began_ns + int(max(plan.end_ms, plan.start_ms) * 1_000_000))

    def _measure(self, call: Mapping[str, Any]) -> None:
        common: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": str(call.get("provider")),
            "gen_ai.request.model": str(call.get("model") or call.get("provider")),
        }
        for name, field in (
            ("gen_ai.response.model", "response_model"),
            ("server.address", "server_address"),
            ("server.port", "server_port"),
        ):
            if call.get(field) is not None:
                common[name] = call[field]
        for kind, field in (("input", "prompt_tokens"), ("output", "completion_tokens")):
            count = int(call.get(field) or 0)
            typed = {**common, "gen_ai.token.type": kind}
            self.token_count.add(count, {**typed, "gen_ai.token.modality": "text"})
            if self.tokens is not None:
                self.tokens.record(count, typed)
        timed = dict(common)
        if call.get("outcome") == "error":
            timed["error.type"] = error_type(str(call.get("error") or ""))
        self.duration.record(float(call.get("latency_ms") or 0) / 1000, timed)
        if call.get("first_token_ms") is not None:
            self.first_chunk.record(float(call["first_token_ms"]) / 1000, common)


def _attributes(values: Mapping[str, Any]) -> dict[str, Any]:
    """What OpenTelemetry takes: no None, lists of strings."""
    kept: dict[str, Any] = {}
    for name, value in values.items():
        if value is None:
            continue
        kept[name] = [str(item) for item in value] if isinstance(value, (list, tuple)) else value
    return kept
