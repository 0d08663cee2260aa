"""OpenTelemetry switched on by the standard `OTEL_*` environment, as every OpenTelemetry SDK is.

Rounds are reported when an exporter is named: `OTEL_EXPORTER_OTLP_ENDPOINT` (or the
`…_TRACES_ENDPOINT` / `…_METRICS_ENDPOINT`), or `OTEL_TRACES_EXPORTER` = `otlp` | `console`;
never when `OTEL_SDK_DISABLED=true`. Traces and metrics are switched apart, as the SDK's own
variables say: `OTEL_TRACES_EXPORTER=none` exports metrics alone, `OTEL_METRICS_EXPORTER=none`
traces alone. They go over OTLP/HTTP (protobuf) to the endpoint, with the service name
`OTEL_SERVICE_NAME` (default `runner`), batched and sent when the process ends at the latest. A
process that set up OpenTelemetry itself (`opentelemetry-instrument`, an application embedding
runner) keeps its providers: runner reports through them.

A receiver that refuses metrics (a trace viewer without `/v1/metrics`: HTTP 404, 405 or 501)
is said once on stderr, and runner stops sending it metrics for the rest of the process.

Prompts and replies (the round's message and answer, task prompts, retrieval queries, each LLM
call's prompt and reply) are in the spans only with
`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`. `RUNNER_OTEL_LEGACY_NAMES=true` adds
the names the GenAI conventions have since replaced (runner.observability.otel).
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Mapping
from typing import Any

from runner.observability import add_observer

CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
LEGACY_NAMES = "RUNNER_OTEL_LEGACY_NAMES"
_ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
_METRICS_ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
_installed: list[Any] = []  # the observer installed from the environment, once per process


class ObservabilityError(RuntimeError):
    """OpenTelemetry was asked for by the environment but cannot be set up."""


def wanted(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the environment asks for OpenTelemetry: traces, metrics or both."""
    return traces_wanted(environ) or metrics_wanted(environ)


def traces_wanted(environ: Mapping[str, str] = os.environ) -> bool:
    if _disabled(environ):
        return False
    exporter = _setting(environ, "OTEL_TRACES_EXPORTER")
    if exporter == "none":
        return False
    return bool(exporter) or any(environ.get(name) for name in _ENDPOINTS)


def metrics_wanted(environ: Mapping[str, str] = os.environ) -> bool:
    """Metrics go over OTLP to an endpoint (`OTEL_METRICS_EXPORTER`, default `otlp`), or to the
    console when it says `console`."""
    if _disabled(environ):
        return False
    exporter = _setting(environ, "OTEL_METRICS_EXPORTER") or "otlp"
    if exporter == "console":
        return True
    return exporter == "otlp" and any(environ.get(name) for name in _METRICS_ENDPOINTS)


def _disabled(environ: Mapping[str, str]) -> bool:
    return _setting(environ, "OTEL_SDK_DISABLED") == "true"


def _setting(environ: Mapping[str, str], name: str) -> str:
    return environ.get(name, "").strip().lower()


def capture_content(environ: Mapping[str, str] = os.environ) -> bool:
    return _setting(environ, CAPTURE_CONTENT) == "true"


def legacy_names(environ: Mapping[str, str] = os.environ) -> bool:
    return _setting(environ, LEGACY_NAMES) == "true"


def install_from_environment(environ: Mapping[str, str] = os.environ) -> bool:
    """Report every round of this process through OpenTelemetry when the environment asks for
    it; True when it does. Raises ObservabilityError (a missing extra, an exporter runner does
    not ship) with what to do."""
    if _installed or not wanted(environ):
        return bool(_installed)
    try:
        from runner.observability.otel import OtelObserver
    except ImportError as error:
        raise ObservabilityError(
            f"the environment asks for OpenTelemetry ({_asked_by(environ)}) but the `otel` "
            f"extra is not installed ({error}): pip install 'runner[otel]', or unset it"
        ) from None
    tracer_provider, meter_provider = _providers(environ)
    content = capture_content(environ)
    observer = OtelObserver(
        tracer_provider, meter_provider, content=content, legacy_names=legacy_names(environ)
    )
    add_observer(observer, content=content)
    _installed.append(observer)
    return True


def _asked_by(environ: Mapping[str, str]) -> str:
    names = [name for name in ("OTEL_TRACES_EXPORTER", *_ENDPOINTS) if environ.get(name)]
    return ", ".join(f"{name}={environ[name]}" for name in names)


def _providers(environ: Mapping[str, str]) -> tuple[Any, Any]:
    """The process's own SDK providers when it set some up; else new ones, exporting as the
    environment says, flushed when the process exits."""
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    current = trace.get_tracer_provider()
    if isinstance(current, TracerProvider):
        return current, metrics.get_meter_provider()
    protocol = environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    if protocol != "http/protobuf":
        raise ObservabilityError(
            f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol}: runner exports over http/protobuf only; "
            "set it to http/protobuf (and the endpoint to the collector's HTTP port, 4318)"
        )
    name = {} if environ.get("OTEL_SERVICE_NAME") else {"service.name": "runner"}
    resource = Resource.create(name)
    tracer_provider = TracerProvider(resource=resource)
    if traces_wanted(environ):  # else spans are made and dropped: metrics alone leave
        tracer_provider.add_span_processor(_span_processor(environ))
    readers = _metric_readers(environ)
    meter_provider = MeterProvider(resource=resource, metric_readers=readers)
    atexit.register(meter_provider.shutdown)
    atexit.register(tracer_provider.shutdown)
    return tracer_provider, meter_provider


def _span_processor(environ: Mapping[str, str]) -> Any:
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

    if environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() == "console":
        return BatchSpanProcessor(ConsoleSpanExporter())
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return BatchSpanProcessor(OTLPSpanExporter())


def _metric_readers(environ: Mapping[str, str]) -> list[Any]:
    if not metrics_wanted(environ):
        return []
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    if _setting(environ, "OTEL_METRICS_EXPORTER") == "console":
        from opentelemetry.sdk.metrics.export import ConsoleMetricExporter

        return [PeriodicExportingMetricReader(ConsoleMetricExporter())]
    from runner.observability.refusals import metric_exporter

    return [PeriodicExportingMetricReader(metric_exporter(_metrics_url(environ)))]


def _metrics_url(environ: Mapping[str, str]) -> str:
    """Where metrics are posted, as the exporter reads the environment (for the warning)."""
    specific = environ.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
    if specific:
        return specific
    return environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").rstrip("/") + "/v1/metrics"
