"""Settings for the whole suite.

Property tests run on shared, noisy machines (and in CI): a per-example deadline or a "too slow"
health check there measures the machine, not runner, so neither is allowed to fail a test."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("runner", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("runner")


@pytest.fixture(scope="session")
def postgres_server():
    """One real PostgreSQL server for the whole run (tests/pgserver.py), started on first use
    on 127.0.0.1 in a temporary folder, stopped at the end; tests take fresh databases on it."""
    from pgserver import PostgresServer

    server = PostgresServer().start()
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres_server, request) -> str:
    """The URL of a new, empty database on the shared test server."""
    import re

    name = "t_" + re.sub(r"\W", "_", request.node.name.lower())[:40] + f"_{id(request) % 10**6}"
    return postgres_server.fresh_database(name)
