"""What the OpenTelemetry tests share: the support example copied once, an observer whose spans
and metrics are read back from the SDK's in-memory exporter and reader, and a round run under
it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from runner import observability
from runner.app import Runtime
from runner.engine.outcome import RoundResult
from runner.observability.otel import OtelObserver
from runner.sessions import open_store
from tests.examples_kit import copy_example

SUPPORT = Path(__file__).resolve().parents[2] / "pipelines" / "support"
QUESTION = "Is the KW-620 quiet? And what is the descaling interval?"


@pytest.fixture(scope="module")
def support(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("otel") / "support"
    copy_example("support", folder)
    return folder / "support.yaml"


class Telemetry:
    def __init__(self, content: bool) -> None:
        self.spans_out = InMemorySpanExporter()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans_out))
        self.metrics_in = InMemoryMetricReader()
        meter_provider = MeterProvider(metric_readers=[self.metrics_in])
        self.tracer_provider, self.meter_provider = tracer_provider, meter_provider
        self.observer = OtelObserver(tracer_provider, meter_provider, content=content)

    def observer_tokens_histogram(self) -> Any:
        """The former token histogram on this telemetry's meter (RUNNER_OTEL_LEGACY_NAMES)."""
        observer = OtelObserver(
            self.tracer_provider, self.meter_provider, content=False, legacy_names=True
        )
        return observer.tokens

    @property
    def spans(self) -> list[ReadableSpan]:
        return list(self.spans_out.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [span for span in self.spans if span.name.startswith(prefix)]

    def parent_of(self, span: ReadableSpan) -> ReadableSpan | None:
        by_id = {s.context.span_id: s for s in self.spans}
        return by_id.get(span.parent.span_id) if span.parent is not None else None

    def metric_points(self, name: str) -> list[Any]:
        data = self.metrics_in.get_metrics_data()
        return [
            point
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
            if metric.name == name
            for point in metric.data.data_points
        ]


def run_round(
    pipeline: Path,
    tmp_path: Path,
    telemetry: Telemetry,
    message: str = QUESTION,
    **options: Any,
) -> RoundResult:
    """One round of `message` in a new session of the store in `tmp_path`, told to
    `telemetry` (and given the LLM calls' prompts when it captures content)."""
    observability.add_observer(telemetry.observer, content=telemetry.observer.content)
    options = options or {"llm_override": "offline"}
    try:
        with (
            Runtime.open(pipeline, **options) as runtime,
            open_store(str(tmp_path / "state.sqlite")) as store,
        ):
            return asyncio.run(runtime.conversation(store).say(message))
    finally:
        observability.remove_observer(telemetry.observer)
