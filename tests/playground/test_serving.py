"""`runner serve --playground` mounts the playground beside the API."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from runner.cli import main
from runner.cli.webapp import build_app
from runner.serve.config import ServeSettings
from tests.playground.conftest import LOCAL_URL


def test_serve_with_the_flag_serves_the_playground_beside_the_api(support: Path) -> None:
    app = build_app(ServeSettings(paths=[str(support)], playground=True))
    try:
        client = TestClient(app, base_url=LOCAL_URL)
        assert client.get("/playground/support/").status_code == 200
        assert client.get("/v1/pipelines").status_code == 200
    finally:
        app.state.service.close()


def test_serve_without_the_flag_has_no_playground(support: Path) -> None:
    app = build_app(ServeSettings(paths=[str(support)]))
    try:
        assert TestClient(app, base_url=LOCAL_URL).get("/playground/support/").status_code == 404
    finally:
        app.state.service.close()


def test_issue_19_m6_serve_refuses_an_open_playground_without_tokens_even_insecure(
    support: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RUNNER_SERVE_TOKENS", raising=False)
    result = CliRunner().invoke(
        main, ["serve", str(support), "--insecure", "--playground", "--host", "0.0.0.0"]
    )
    assert result.exit_code == 2
    assert "only with bearer tokens" in result.output


def test_runner_playground_says_why_a_pipeline_does_not_open(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("version: 1\ndomain: x\ntools: []\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["playground", str(broken), "--no-open", "--port", "0"])
    assert result.exit_code == 1
    assert "broken.yaml" in result.output and "internal error" not in result.output


def test_several_pipelines_are_listed_and_a_session_opens_under_its_own(
    support: Path, tmp_path: Path
) -> None:
    import asyncio
    import shutil

    shop = tmp_path / "shop"
    shutil.copytree(Path(__file__).parents[1] / "cli" / "fixtures" / "shop", shop)
    app = build_app(ServeSettings(paths=[str(support), str(shop)], playground=True))
    try:
        client = TestClient(app, base_url=LOCAL_URL, follow_redirects=False)
        index = client.get("/playground/").text
        assert 'href="/playground/support/"' in index and 'href="/playground/shop/"' in index
        service = app.state.service
        result = asyncio.run(service.run_round("shop", "Compare the KD-450 and the KW-620"))
        wrong = client.get("/playground/support/", params={"session": result["session"]})
        assert wrong.status_code == 303
        assert wrong.headers["location"] == f"/playground/shop/?session={result['session']}"
    finally:
        app.state.service.close()


def test_runner_playground_on_a_port_in_use_says_how_to_choose_another(support: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(
            main, ["playground", str(support), "--no-open", "--port", str(port)]
        )
    assert result.exit_code == 1
    assert f"could not listen on 127.0.0.1:{port}" in result.output and "--port 0" in result.output


def test_issue_19_m6_without_tokens_the_playground_keeps_its_own_store(
    support: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNNER_STATE", str(tmp_path / "production.sqlite"))
    app = build_app(ServeSettings(paths=[str(support)], playground=True))
    try:
        location = app.state.service.stores["support"].location
        assert location.endswith("playground.sqlite") and "production" not in location
    finally:
        app.state.service.close()


def test_issue_19_m6_runner_playground_honours_the_service_tokens(support: Path) -> None:
    import httpx

    from tests.playground.conftest import running_playground

    with running_playground(support, RUNNER_SERVE_TOKENS="play-token") as url:
        page = httpx.get(url + "support/", follow_redirects=False)
        assert page.status_code == 303 and page.headers["location"] == "/playground/login"
        with httpx.Client(follow_redirects=False) as browser:
            signed = browser.post(url + "login", data={"token": "play-token"})
            assert signed.status_code == 303
            assert browser.get(url + "support/").status_code == 200
