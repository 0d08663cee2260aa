"""Graceful shutdown: SIGTERM lets a round in flight finish and answer, then the worker ends."""

from __future__ import annotations

import signal
import threading
import time

import httpx

from .conftest import Held, copy_pipelines
from .server import ServeProcess


def test_a_round_in_flight_at_sigterm_finishes_and_answers(tmp_path):
    folder = copy_pipelines(tmp_path)
    worker = ServeProcess([folder], "--allow-python", "--drain-timeout", "20").wait_ready()
    responses: list[httpx.Response] = []
    with Held(folder) as held:
        thread = threading.Thread(
            target=lambda: responses.append(
                httpx.post(
                    f"{worker.url}/v1/pipelines/desk/rounds",
                    json={"message": "in flight"},
                    timeout=60,
                )
            )
        )
        thread.start()
        held.wait_until_held()
        worker.process.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        assert worker.process.poll() is None  # still running: it waits for the round
    thread.join(30)
    assert responses[0].status_code == 200
    assert responses[0].json()["answer"] == "both steps ran"
    assert worker.stop() in (0, -15)
    assert "Traceback" not in worker.output
