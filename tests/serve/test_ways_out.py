"""Issue 31, finding 1, 2, 7, 11, 12: one redactor on every way out. The `leaky` pipeline's MCP
server fails with an error that echoes its credentials (its `${TICKETS_TOKEN}` and
`${TICKETS_ENV}`), a header of each common shape, a URL's password, query-parameter passwords
and an absolute path (fixtures/leaky). None of them may be seen in a round, a stream's progress
events, an OpenAI reply, a stored trace, a log line, an eval run's files or a trace file."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from runner.cli.webapp import compose
from runner.service.pipelines import Service

LEAKY = Path(__file__).parent / "fixtures" / "leaky"
ENV = {"TICKETS_TOKEN": "tt-operator-5772", "TICKETS_ENV": "envsecretvalue"}
# what the server echoes: the declared values, then one of each shape (written literally there)
SECRETS = (
    *ENV.values(),
    "xapi-lit-2718",
    "c3ZjOmJhc2ljLXB3LTMxNA==",
    "url-pw-1618",
    "sslpw-1414",
    "qtok-1732",
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("ways-out") / "leaky"
    shutil.copytree(LEAKY, folder)
    saved = {name: os.environ.get(name) for name in ENV}
    os.environ.update(ENV)
    yield folder
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="module")
def service(folder: Path) -> Iterator[Service]:
    opened = Service.open([folder])
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def http(service: Service) -> TestClient:
    app: Starlette = compose(service, tokens=(), playground=False, close_service=False)
    return TestClient(app, base_url="http://127.0.0.1")


def assert_clean(text: str, folder: Path) -> None:
    shown = [secret for secret in SECRETS if secret in text]
    assert not shown, f"{shown} went out"
    assert str(folder) not in text, "an absolute path went out"


def test_a_rounds_warnings_carry_no_credential(http: TestClient, folder: Path) -> None:
    response = http.post("/v1/pipelines/leaky/rounds", json={"message": "open tickets?"})
    assert response.status_code == 200 and "[redacted]" in response.text
    assert_clean(response.text, folder)


def test_a_streams_progress_events_carry_no_credential(http: TestClient, folder: Path) -> None:
    response = http.post("/v1/pipelines/leaky/rounds/stream", json={"message": "open tickets?"})
    assert "event: progress" in response.text and '"tool.error"' in response.text
    assert_clean(response.text, folder)


def test_the_openai_reply_and_its_stream_carry_no_credential(
    http: TestClient, folder: Path
) -> None:
    for stream in (False, True):
        body = {
            "model": "leaky",
            "messages": [{"role": "user", "content": "open tickets?"}],
            "stream": stream,
        }
        response = http.post("/v1/chat/completions", json=body)
        assert response.status_code == 200
        assert_clean(response.text, folder)


def test_a_stored_rounds_trace_carries_no_credential(http: TestClient, folder: Path) -> None:
    session = http.post("/v1/pipelines/leaky/rounds", json={"message": "tickets"}).json()
    shown = http.get(f"/v1/sessions/{session['session']}/rounds/1")
    assert shown.status_code == 200 and "tool.error" in shown.text
    assert_clean(shown.text, folder)


def test_a_log_line_carries_no_credential(
    service: Service, folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        logging.getLogger("some.library").info("refused %s", f"Bearer {ENV['TICKETS_TOKEN']}")
        logging.getLogger("runner.serve").warning("env was %s", ENV["TICKETS_ENV"])
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "refused Bearer [redacted]" in logged
    assert_clean(logged, folder)


def runner_command(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **ENV, "PYTHONPATH": str(Path(__file__).parents[2])}
    command = [sys.executable, "-c", "from runner.cli import main; main()", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_an_eval_runs_files_carry_no_credential(folder: Path) -> None:
    (folder / "set.yaml").write_text(
        "questions:\n  - {id: q1, question: open tickets?}\n", encoding="utf-8"
    )
    out = folder / "run"
    done = runner_command("eval", "leaky.yaml", "set.yaml", "--out", str(out), "-q", cwd=folder)
    assert (out / "questions.jsonl").is_file(), done.stderr
    files = [out / "questions.jsonl", out / "summary.json", *sorted((out / "traces").iterdir())]
    if (out / "report.html").is_file():
        files.append(out / "report.html")
    assert len(files) >= 3
    for path in files:
        assert_clean(path.read_text(encoding="utf-8"), folder)
    assert "[redacted]" in (out / "questions.jsonl").read_text(encoding="utf-8") + "".join(
        path.read_text(encoding="utf-8") for path in (out / "traces").iterdir()
    )


def test_a_trace_file_carries_no_credential(folder: Path) -> None:
    trace = folder / "round.trace.jsonl"
    runner_command("run", "leaky.yaml", "open tickets?", "--trace", str(trace), cwd=folder)
    events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert any(event["event"] == "tool.error" for event in events)
    shown = [s for s in SECRETS if s in trace.read_text(encoding="utf-8")]
    assert not shown


def test_a_logged_tracebacks_message_carries_no_credential(
    service: Service, folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    try:
        raise RuntimeError(f"upstream refused X-Api-Token: {ENV['TICKETS_ENV']}")
    except RuntimeError:
        logging.getLogger("runner.serve").exception("a round failed")
    (record,) = [r for r in caplog.records if r.getMessage() == "a round failed"]
    text = logging.Formatter().format(record)
    assert "RuntimeError" in text and "[redacted]" in text
    assert_clean(text, folder)
