"""A PostgreSQL store that goes away: /readyz says so, rounds are refused with 503 and the
database's name (no password), and nothing stored is lost when it comes back."""

from __future__ import annotations

import asyncio

import pytest
from pgserver import PostgresServer

from runner.service.errors import Unavailable
from runner.service.pipelines import Service

from .conftest import ASK


@pytest.fixture
def own_server():
    server = PostgresServer(max_connections=20).start()
    yield server
    server.stop()


def test_a_store_that_went_away_is_reported_and_refused(shop, own_server, monkeypatch):
    monkeypatch.delenv("RUNNER_STATE", raising=False)
    # issue 31, finding 11: a password in the URL's query is no more shown than its userinfo
    url = own_server.fresh_database("down") + "?sslpassword=pw-ssl-3131"
    service = Service.open([shop], state=url)
    try:
        asked = asyncio.run(service.run_round("shop", ASK))
        own_server._run("pg_ctl", "-D", own_server.data, "-m", "immediate", "-w", "stop")

        report = service.readiness()
        assert report["ready"] is False
        [(where, message)] = report["store"].items()
        assert f"127.0.0.1:{own_server.port}/down" in where
        assert "Nothing stored was lost" in message
        assert "pw-ssl-3131" not in str(report)
        with pytest.raises(Unavailable, match="Check that the database server is up") as refused:
            asyncio.run(service.run_round("shop", "kw-620", session_id=asked["session"]))
        assert "pw-ssl-3131" not in refused.value.message
    finally:
        service.close()
