"""The real-model tests run only under `make test-llm`, which sets RUNNER_REAL_MODEL=1 after
building the model's environment; `make test`'s plain `pytest` does not collect them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

if os.environ.get("RUNNER_REAL_MODEL") != "1":
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture(scope="session")
def model_server() -> Iterator[object]:
    from bench import llama_server

    why = llama_server.available()
    if why is not None:
        pytest.fail(why)  # under make test-llm a missing environment is a failure, not a skip
    log = Path(__file__).resolve().parents[2] / ".runner" / "test-llm-server.log"
    with llama_server.running(log) as server:
        yield server
