"""OpenTelemetry switched on by the standard OTEL_* environment: `runner run` and `runner serve`
export their rounds over OTLP/HTTP to a receiver the test starts on 127.0.0.1, which decodes
what it gets with OpenTelemetry's own protobuf messages."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from runner.observability.environment import wanted
from tests.serve.server import ServeProcess

SHOP = Path(__file__).resolve().parents[1] / "cli" / "fixtures" / "shop"
COMPARE = "Compare the KD-450 and the KW-620"


class Receiver:
    """An OTLP/HTTP receiver: what was posted to /v1/traces and /v1/metrics, decoded."""

    def __init__(self, refuse_metrics: int | None = None) -> None:
        self.traces: list[ExportTraceServiceRequest] = []
        self.metrics: list[ExportMetricsServiceRequest] = []
        self.metric_posts = 0  # every POST to /v1/metrics, refused or not
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.path == "/v1/metrics" and refuse_metrics is not None:
                    with receiver.lock:  # a trace viewer that takes no metrics
                        receiver.metric_posts += 1
                    self.send_response(refuse_metrics)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                with receiver.lock:
                    if self.path == "/v1/traces":
                        receiver.traces.append(ExportTraceServiceRequest.FromString(body))
                    elif self.path == "/v1/metrics":
                        receiver.metrics.append(ExportMetricsServiceRequest.FromString(body))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, args=(0.01,), daemon=True).start()

    def spans(self) -> list[Any]:
        with self.lock:
            return [
                span
                for request in self.traces
                for resource in request.resource_spans
                for scope in resource.scope_spans
                for span in scope.spans
            ]

    def service_names(self) -> set[str]:
        with self.lock:
            return {
                attribute.value.string_value
                for request in self.traces
                for resource in request.resource_spans
                for attribute in resource.resource.attributes
                if attribute.key == "service.name"
            }

    def metric_names(self) -> set[str]:
        with self.lock:
            return {
                metric.name
                for request in self.metrics
                for resource in request.resource_metrics
                for scope in resource.scope_metrics
                for metric in scope.metrics
            }

    def wait_for(self, name: str, timeout_s: float = 20.0) -> Any:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = [span for span in self.spans() if span.name == name]
            if found:
                return found[0]
            time.sleep(0.05)
        raise AssertionError(f"no span {name!r} arrived; got {[s.name for s in self.spans()]}")


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    started = Receiver()
    yield started
    started.httpd.shutdown()


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    shutil.copytree(SHOP, tmp_path / "shop")
    return tmp_path / "shop" / "shop.yaml"


def otel_environment(receiver: Receiver, **extra: str) -> dict[str, str]:
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("OTEL_")
    }
    environment.update(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
            "OTEL_BSP_SCHEDULE_DELAY": "50",  # export spans within 50 ms, not 5 s
            **extra,
        }
    )
    environment.pop("RUNNER_STATE", None)
    environment.pop("RUNNER_LLM", None)
    return environment


def runner_run(shop: Path, environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from runner.cli import main; main()", "run", str(shop), COMPARE],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_runner_run_exports_its_round_over_otlp_before_it_exits(receiver, shop):
    done = runner_run(shop, otel_environment(receiver))
    assert done.returncode == 0, done.stderr
    names = [span.name for span in receiver.spans()]
    assert "invoke_workflow shop" in names
    assert "execute_tool compare" in names
    assert "invoke_agent compare" in names
    assert receiver.service_names() == {"runner"}


def test_the_genai_client_metrics_are_exported_too(receiver, shop):
    runner_run(shop, otel_environment(receiver))
    names = receiver.metric_names()
    assert {
        "gen_ai.client.inference.tokens",
        "gen_ai.client.operation.duration",
        "gen_ai.invoke_agent.duration",
    } <= names
    assert "gen_ai.client.token.usage" not in names


def test_the_legacy_setting_exports_the_former_names_too(receiver, shop):
    runner_run(shop, otel_environment(receiver, RUNNER_OTEL_LEGACY_NAMES="true"))
    assert "gen_ai.client.token.usage" in receiver.metric_names()
    root = receiver.wait_for("invoke_workflow shop")
    assert attributes_of(root)["gen_ai.workflow.name"] == "shop"


def test_traces_alone_when_metrics_are_switched_off(receiver, shop):
    done = runner_run(shop, otel_environment(receiver, OTEL_METRICS_EXPORTER="none"))
    assert done.returncode == 0, done.stderr
    assert "invoke_workflow shop" in [span.name for span in receiver.spans()]
    assert receiver.metric_names() == set()


def test_metrics_alone_when_traces_are_switched_off(receiver, shop):
    done = runner_run(shop, otel_environment(receiver, OTEL_TRACES_EXPORTER="none"))
    assert done.returncode == 0, done.stderr
    assert "gen_ai.client.inference.tokens" in receiver.metric_names()
    assert receiver.spans() == []


def attributes_of(span: Any) -> dict[str, Any]:
    """A received span's attributes as Python values (from the protobuf's AnyValue)."""
    found = {}
    for item in span.attributes:
        value = item.value
        kind = value.WhichOneof("value")
        found[item.key] = getattr(value, kind) if kind else None
    return found


def chat_messages(receiver: Receiver) -> list[dict[str, str]]:
    """The message attributes of each `chat` span received."""
    names = ("gen_ai.input.messages", "gen_ai.output.messages")
    return [
        {item.key: item.value.string_value for item in span.attributes if item.key in names}
        for span in receiver.spans()
        if span.name.startswith("chat ")
    ]


@pytest.mark.parametrize("capture", ["true", ""])
def test_the_environments_content_switch_puts_each_calls_prompt_on_its_span(
    receiver, shop, capture
):
    switch = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": capture}
    done = runner_run(shop, otel_environment(receiver, **switch))
    assert done.returncode == 0, done.stderr
    calls = chat_messages(receiver)
    assert calls
    for messages in calls:
        if capture:
            [asked] = json.loads(messages["gen_ai.input.messages"])
            assert asked["parts"][0]["content"].strip()
            assert json.loads(messages["gen_ai.output.messages"])[0]["role"] == "assistant"
        else:
            assert messages == {}


def test_the_service_name_comes_from_the_environment(receiver, shop):
    runner_run(shop, otel_environment(receiver, OTEL_SERVICE_NAME="shop-assistant"))
    assert receiver.service_names() == {"shop-assistant"}


def test_an_exporter_runner_does_not_ship_is_a_warning_and_the_round_runs(receiver, shop):
    done = runner_run(shop, otel_environment(receiver, OTEL_EXPORTER_OTLP_PROTOCOL="grpc"))
    assert done.returncode == 0
    assert "runner exports over http/protobuf only" in done.stderr
    assert receiver.spans() == []


def test_the_service_continues_the_callers_trace_from_its_traceparent(receiver, shop):
    trace_id, span_id = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
    server = ServeProcess([shop.parent], env=otel_environment(receiver)).wait_ready()
    try:
        response = httpx.post(
            f"{server.url}/v1/pipelines/shop/rounds",
            json={"message": COMPARE},
            headers={"traceparent": f"00-{trace_id}-{span_id}-01"},
            timeout=30,
        )
        assert response.status_code == 200
        root = receiver.wait_for("invoke_workflow shop")
    finally:
        server.stop()
    assert root.trace_id.hex() == trace_id
    assert root.parent_span_id.hex() == span_id


ECHO = """\
domain: echo
llm:
  {provider: openai_like, model: test-model, api_base: "URL/v1", temperature: 0.2, max_tokens: 64}
tools:
  - name: echo
    kind: prompt
    instruction: Is it a message to answer?
    prompt: "Answer {{ task }}"
"""


def test_a_chat_span_carries_the_conventions_request_response_and_server_attributes(
    receiver, tmp_path
):
    """A real round against a model server on 127.0.0.1 (tests/llm/fake_servers, speaking
    OpenAI's protocol), its spans decoded where they arrived."""
    from tests.llm import fake_servers

    server, httpd = fake_servers.start()
    # the suitability call (a reply schema: json), then the tool's and the answer's (text)
    server.script(fake_servers.reply('{"echo": true}'), fake_servers.reply("Hello."))
    try:
        pipeline = tmp_path / "echo.yaml"
        pipeline.write_text(ECHO.replace("URL", server.url), "utf-8")
        environment = otel_environment(receiver, NO_PROXY="127.0.0.1")
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                "from runner.cli import main; main()",
                "run",
                str(pipeline),
                "hello there",
            ],
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.release.set()
        httpd.shutdown()
    assert done.returncode == 0, done.stdout + done.stderr
    chats = [attributes_of(span) for span in receiver.spans() if span.name.startswith("chat ")]
    assert chats, [span.name for span in receiver.spans()]
    for chat in chats:
        assert chat["gen_ai.provider.name"] == "openai_like"
        assert chat["gen_ai.request.temperature"] == pytest.approx(0.2)
        assert chat["gen_ai.request.max_tokens"] == 64
        assert chat["gen_ai.response.model"] == "test-model"
        assert chat["gen_ai.response.id"] == "chatcmpl-test"
        assert chat["server.address"] == "127.0.0.1"
        assert chat["server.port"] == int(server.url.rsplit(":", 1)[1])
        assert chat["gen_ai.output.type"] in ("json", "text")
    assert {chat["gen_ai.output.type"] for chat in chats} == {"json", "text"}


def test_a_receiver_that_refuses_metrics_is_said_once_and_sent_no_more(capfd):
    """The exporter runner installs, against a receiver answering 405 on /v1/metrics, exporting
    every 50 ms: one warning, one refused request, then nothing."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    from runner.observability.refusals import metric_exporter

    refusing = Receiver(refuse_metrics=405)
    try:
        url = f"{refusing.url}/v1/metrics"
        reader = PeriodicExportingMetricReader(
            metric_exporter_at(url, metric_exporter), export_interval_millis=50
        )
        provider = MeterProvider(metric_readers=[reader])
        counter = provider.get_meter("test").create_counter("gen_ai.client.inference.tokens")
        for _ in range(8):
            counter.add(1)
            time.sleep(0.06)
        provider.shutdown()
    finally:
        refusing.httpd.shutdown()
    said = capfd.readouterr().err
    assert said.count("refuses metrics (HTTP 405)") == 1, said
    assert "Failed to export metrics batch" not in said
    assert refusing.metric_posts == 1


def metric_exporter_at(url: str, make: Any) -> Any:
    os.environ["OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"] = url
    try:
        return make(url)
    finally:
        del os.environ["OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"]


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ({}, False),
        ({"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://127.0.0.1:4318/v1/metrics"}, True),
        (
            {
                "OTEL_TRACES_EXPORTER": "none",
                "OTEL_METRICS_EXPORTER": "none",
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x",
            },
            False,
        ),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, True),
        ({"OTEL_TRACES_EXPORTER": "console"}, True),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, True),
        ({"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, False),
        ({"OTEL_SERVICE_NAME": "runner"}, False),
    ],
)
def test_only_an_exporter_named_in_the_environment_switches_it_on(environment, expected):
    assert wanted(environment) is expected


def test_a_refusal_is_said_by_the_exporter_that_met_it_though_another_was_made_before(capfd):
    """A process that made an exporter earlier (an earlier round's telemetry) still hears the
    newer exporter's refusal once: the SDK's log record names no exporter."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    from runner.observability.refusals import metric_exporter

    for _ in range(2):
        refusing = Receiver(refuse_metrics=405)
        try:
            url = f"{refusing.url}/v1/metrics"
            reader = PeriodicExportingMetricReader(
                metric_exporter_at(url, metric_exporter), export_interval_millis=50
            )
            provider = MeterProvider(metric_readers=[reader])
            provider.get_meter("test").create_counter("tokens").add(1)
            time.sleep(0.2)
            provider.shutdown()
        finally:
            refusing.httpd.shutdown()
        assert capfd.readouterr().err.count(f"{url} refuses metrics (HTTP 405)") == 1


def test_a_refusal_logged_already_formatted_is_still_recognised():
    """A process whose log records are formatted when made (Ray's record factory) hands the
    filter a message with no arguments: the refusal is read from the text."""
    import logging

    from runner.observability import refusals

    exporter = refusals.OnceRefusedMetricExporter("http://127.0.0.1:9/v1/metrics")
    record = logging.LogRecord(
        "otel",
        logging.ERROR,
        "http.py",
        1,
        "Failed to export metrics batch code: 405, reason: Method Not Allowed",
        None,
        None,
    )
    refusals._EXPORTING.exporter = exporter
    try:
        assert refusals._FILTER.filter(record) is False
    finally:
        refusals._EXPORTING.exporter = None
    assert exporter.refused == 405
