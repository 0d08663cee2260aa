"""`runner serve` as a command: what it refuses before binding, and --workers N."""

from __future__ import annotations

import httpx
from click.testing import CliRunner

from runner.cli import main

from .conftest import ASK, copy_pipelines
from .server import ServeProcess


def test_a_non_loopback_host_without_tokens_is_refused(shop, monkeypatch):
    monkeypatch.delenv("RUNNER_SERVE_TOKENS", raising=False)
    result = CliRunner().invoke(main, ["serve", str(shop), "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "--host 0.0.0.0 is reachable from other machines and no bearer token" in result.output
    assert "--insecure" in result.output


def test_a_pipeline_that_cannot_load_is_told_before_binding(tmp_path):
    folder = copy_pipelines(tmp_path)
    result = CliRunner().invoke(main, ["serve", str(folder / "desk")])  # python tools, no flag
    assert result.exit_code == 1
    assert "--allow-python" in result.output


def test_workers_share_one_store_and_sum_their_metrics(tmp_path):
    folder = copy_pipelines(tmp_path)
    server = ServeProcess(
        [folder / "shop"], "--workers", "2", "--state", str(tmp_path / "state.sqlite")
    ).wait_ready()
    try:
        rounds = httpx.post(f"{server.url}/v1/pipelines/shop/rounds", json={"message": ASK})
        session = rounds.json()["session"]
        for _ in range(3):  # whichever worker takes it, the session is there
            summary = httpx.get(f"{server.url}/v1/sessions/{session}")
            assert summary.status_code == 200
        answered = httpx.post(
            f"{server.url}/v1/pipelines/shop/rounds",
            json={"message": "the kw-620", "session_id": session},
        )
        assert answered.json()["round"] == 2
        metrics = httpx.get(f"{server.url}/metrics").text
        assert 'runner_rounds_total{domain="shop",outcome="clarification"} 1.0' in metrics
        assert 'runner_rounds_total{domain="shop",outcome="answer"} 1.0' in metrics
    finally:
        assert server.stop() in (0, -15), server.output
