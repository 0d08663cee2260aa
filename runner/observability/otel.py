"""Rounds as OpenTelemetry spans and metrics (the `otel` extra).

`OtelObserver` turns each finished round's span plan (runner.observability.spans) into real
spans, with their recorded start and end times, under the caller's trace when the request
carried a `traceparent`; and records the GenAI client metrics of its LLM calls:
`gen_ai.client.token.usage`, `gen_ai.client.operation.duration` and, for streamed replies,
`gen_ai.client.operation.time_to_first_chunk`.
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
    ) -> None:
        tracers = tracer_provider or otel_trace.get_tracer_provider()
        self.tracer = tracers.get_tracer(SCOPE)
        meter = (meter_provider or get_meter_provider()).get_meter(SCOPE)
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=list(TOKEN_BUCKETS),
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
            finished.workflow, finished.events, finished.result, self.content, finished.exchanges
        )
        carrier = trace_carrier()
        parent = propagate.extract(dict(carrier)) if carrier else None
        self._start(plan, parent, finished.began_ns)
        for event in finished.events:
            if event.get("event") == "llm.call":
                self._measure(event)

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
        common = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": str(call.get("provider")),
            "gen_ai.request.model": str(call.get("model") or call.get("provider")),
        }
        for kind, field in (("input", "prompt_tokens"), ("output", "completion_tokens")):
            self.tokens.record(int(call.get(field) or 0), {**common, "gen_ai.token.type": kind})
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
