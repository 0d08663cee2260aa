"""A receiver that refuses metrics, said once: many trace viewers take OTLP traces but have
no `/v1/metrics` (they answer 404 or 405). The SDK's exporter would log "Failed to export
metrics batch code: 405" at every export, every minute, for as long as the process runs; this
exporter says it once, in runner's words, and sends no more metrics for the rest of the process.
A failure that may pass (a timeout, a 503) is the SDK's to log and retry, as always.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
from typing import Any

from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.sdk.metrics.export import MetricExportResult

# a receiver that serves no metrics at that address: retrying changes nothing
REFUSING = frozenset({404, 405, 501})
# the exporter whose export is under way on this thread: the SDK logs a refusal from inside
# `export`, and the log record does not say which exporter it came from (a process that made
# several exporters, one after another, must not have an older one take the newer's refusal)
_EXPORTING = threading.local()
# where the SDK logs a failed export (the exporter's module, or the HTTP client it shares)
_LOGGERS = (
    "opentelemetry.exporter.otlp.proto.http.metric_exporter",
    "opentelemetry.exporter.otlp.common.http",
)


class OnceRefusedMetricExporter(OTLPMetricExporter):
    """OTLP/HTTP metrics that stop, said once, when the receiver refuses them."""

    def __init__(self, url: str, **options: Any) -> None:
        super().__init__(**options)
        self.url = url
        self.refused: int | None = None  # the status the receiver refused metrics with

    def export(self, metrics_data: Any, timeout_millis: float | None = 10000, **kw: Any) -> Any:
        if self.refused is not None:
            return MetricExportResult.SUCCESS  # dropped: the receiver takes none (said once)
        _EXPORTING.exporter = self
        try:
            return super().export(metrics_data, timeout_millis, **kw)
        finally:
            _EXPORTING.exporter = None

    def refuse(self, status: int) -> None:
        if self.refused is not None:
            return
        self.refused = status
        print(
            f"warning: the OpenTelemetry receiver at {self.url} refuses metrics (HTTP {status}): "
            "runner sends it no more metrics (traces go on); set OTEL_METRICS_EXPORTER=none to "
            "not send any, or point OTEL_EXPORTER_OTLP_METRICS_ENDPOINT at a receiver that "
            "takes them",
            file=sys.stderr,
        )


class _RefusalFilter(logging.Filter):
    """Turns the SDK's log line of a refused metrics export into the exporting exporter's one
    warning."""

    def filter(self, record: logging.LogRecord) -> bool:
        exporter = getattr(_EXPORTING, "exporter", None)
        if exporter is None:
            return True
        # read from the message as written: a process may format records early (Ray's record
        # factory does), so the status is not always among the record's arguments
        said = _REFUSED.search(record.getMessage())
        if said is None or int(said[1]) not in REFUSING:
            return True
        exporter.refuse(int(said[1]))
        return False


# the SDK's line: "Failed to export metrics batch code: 405, reason: Method Not Allowed"
_REFUSED = re.compile(r"\bmetrics\b.*?\bcode: (\d{3})\b")


_FILTER = _RefusalFilter()  # one for the process, on each of the SDK's loggers


def metric_exporter(url: str) -> OnceRefusedMetricExporter:
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
    return OnceRefusedMetricExporter(url)
