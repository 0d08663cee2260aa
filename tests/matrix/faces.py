"""The three faces a question reaches a pipeline through, as the matrix asks them: `runner run`
and `runner eval` (click's CliRunner, in this process, so that the stand-in embedder serves
them) and `runner serve` (its app on uvicorn in a thread, on a free port of 127.0.0.1, asked
over real HTTP)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from click.testing import CliRunner

from runner.cli import main
from tests.serve.server import free_port

START_TIMEOUT_S = 60.0


def cli(*args: object) -> Any:
    """A runner command, its output kept apart (stdout, stderr)."""
    return CliRunner().invoke(main, [str(arg) for arg in args])


def run_json(pipeline: Path, question: str) -> dict[str, Any]:
    """`runner run PIPELINE QUESTION --json --trace FILE`: the result, with the trace's events
    under `trace_events`."""
    trace = pipeline.parent / f".trace-{pipeline.stem}.jsonl"
    result = cli("run", pipeline, question, "--json", "--trace", trace)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    data = json.loads(result.stdout)
    data["exit_code"] = result.exit_code
    data["trace_events"] = [json.loads(line) for line in trace.read_text().splitlines()]
    return data


def eval_records(pipeline: Path, questions: Path, out: Path) -> list[dict[str, Any]]:
    """`runner eval PIPELINE QUESTIONS`: one record a question (questions.jsonl)."""
    result = cli("eval", pipeline, questions, "--out", out, "--format", "json", "--no-report", "-q")
    assert result.exit_code == 0, result.output
    lines = (out / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


@contextmanager
def serving(paths: Sequence[Path]) -> Iterator[httpx.Client]:
    """`runner serve PATHS`' app on 127.0.0.1, and an HTTP client of it."""
    import uvicorn

    from runner.cli.webapp import build_app
    from runner.serve.config import ServeSettings

    app = build_app(ServeSettings(paths=[str(path) for path in paths], secret="matrix"))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "runner serve did not start"
        time.sleep(0.02)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            yield client
    finally:
        server.should_exit = True
        thread.join(30)


def serve_round(client: httpx.Client, domain: str, question: str) -> dict[str, Any]:
    """One round over the native API: the result, as `runner run --json` prints it."""
    response = client.post(f"/v1/pipelines/{domain}/rounds", json={"message": question})
    assert response.status_code == 200, response.text
    return response.json()


def failures(result: dict[str, Any], events: Sequence[dict[str, Any]] = ()) -> list[str]:
    """What is wrong with a round a documented configuration answered: an error, a missing
    answer or sources, or anything that failed on the way (a tool's exception is caught and the
    round goes on degraded, so an answer alone does not show it). Empty when all is well."""
    problems = []
    if result.get("outcome") != "answer" or result.get("error"):
        problems.append(f"the round ended with {result.get('outcome')}: {result.get('error')}")
    if not (result.get("answer") or "").strip():
        problems.append("no answer")
    if not result.get("sources"):
        problems.append("no sources")
    if result.get("degraded"):
        problems.append(f"degraded: {result.get('warnings')}")
    failed = [e for e in events if e.get("event") in ("tool.error", "coordinator.error")]
    problems += [f"{e['event']}: {e.get('error')}" for e in failed]
    return problems
