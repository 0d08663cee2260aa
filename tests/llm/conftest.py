from __future__ import annotations

from collections.abc import Iterator

import pytest

from . import fake_servers


@pytest.fixture
def llm_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[fake_servers.FakeLLMServer]:
    # a proxy from the environment must not swallow requests to 127.0.0.1
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    state, httpd = fake_servers.start()
    yield state
    state.release.set()
    httpd.shutdown()
    httpd.server_close()
