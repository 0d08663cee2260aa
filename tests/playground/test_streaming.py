"""The chat's answer as the model writes it: `say/stream`, which the page's script posts the
message form to, over HTTP. The shop pipeline's scripted LLM writes its answers a word at a
time, as a model would."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from runner.service.pipelines import Service
from tests.playground.conftest import csrf_of, playground_client

SHOP = Path(__file__).resolve().parents[1] / "cli" / "fixtures" / "shop"
PRICE = "What does the KW-620 cost?"


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp("streamed") / "shop"
    shutil.copytree(SHOP, folder)
    service = Service.open([folder])
    yield service
    service.close()


@pytest.fixture(scope="module")
def client(shop: Service) -> TestClient:
    return playground_client(shop)


def streamed(client: TestClient, headers: dict[str, str] | None = None, **form: str):
    form = {"csrf": csrf_of(client, "/playground/shop/"), **form}
    response = client.post("/playground/shop/say/stream", data=form, headers=headers or {})
    events: list[tuple[str, Any]] = []
    for block in response.text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "data" in lines:
            events.append((lines.get("event", "message"), json.loads(lines["data"])))
    return response, events


def test_the_answer_comes_in_pieces_then_the_chat_at_the_new_round(client, shop) -> None:
    response, events = streamed(client, message=PRICE)
    assert response.headers["content-type"].startswith("text/event-stream")
    pieces = [data["text"] for kind, data in events if kind == "delta"]
    kind, done = events[-1]
    assert kind == "done"
    assert done["location"].startswith("/playground/shop/?session=")
    assert done["location"].endswith("#round-1")
    session = done["location"].split("session=")[1].split("#")[0]
    assert len(pieces) > 1
    assert "".join(pieces) == shop.round(session, 1)["result"]["answer"]


def test_the_chat_it_leads_to_shows_the_round(client) -> None:
    _response, events = streamed(client, message=PRICE)
    page = client.get(events[-1][1]["location"].split("#")[0])
    assert page.status_code == 200
    assert "The KW-620 costs 449 EUR." in page.text


def test_a_message_the_service_refuses_is_an_error_event_with_its_words(client) -> None:
    _response, events = streamed(client, message="   ")
    assert events == [("error", {"message": "`message` must be a non-empty string"})]


def test_a_stream_without_its_csrf_token_is_refused_and_runs_nothing(client, shop) -> None:
    before = len(shop.stores["shop"].sessions())
    response = client.post("/playground/shop/say/stream", data={"message": PRICE})
    assert response.status_code == 403
    assert len(shop.stores["shop"].sessions()) == before


def test_a_stream_asked_from_another_site_is_refused_and_runs_nothing(client, shop) -> None:
    before = len(shop.stores["shop"].sessions())
    response, events = streamed(client, {"Origin": "http://evil.example"}, message=PRICE)
    assert response.status_code == 403 and events == []
    assert len(shop.stores["shop"].sessions()) == before
