"""Issue 32 (OpenAI API) and issue 31, finding 14: the OpenAI-compatible API checked with the
official `openai` SDK against a real `runner serve` on 127.0.0.1. `GET /v1/models/{id}`, the
usage chunk `stream_options.include_usage` asks for, string error codes, the Responses API a
404 that says what is served, and every field runner cannot honour refused by name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai import OpenAI

from .conftest import COMPARE, copy_pipelines
from .server import ServeProcess

TOKEN = "sdk-token"
ASKED = [{"role": "user", "content": COMPARE}]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    folder: Path = copy_pipelines(tmp_path_factory.mktemp("sdk"))
    process = ServeProcess(
        [folder], "--allow-python", env={"RUNNER_SERVE_TOKENS": TOKEN}
    ).wait_ready()
    yield process
    assert process.stop() in (0, -15), process.output


@pytest.fixture(scope="module")
def sdk(server: ServeProcess) -> OpenAI:
    return OpenAI(base_url=f"{server.url}/v1", api_key=TOKEN, max_retries=0)


def test_a_model_is_retrieved_by_its_id(sdk: OpenAI) -> None:
    model = sdk.models.retrieve("shop")
    assert (model.id, model.object, model.owned_by) == ("shop", "model", "runner")


def test_an_unknown_model_is_a_404_with_a_string_code(sdk: OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as raised:
        sdk.models.retrieve("gpt-4")
    assert raised.value.code == "model_not_found"
    assert "shop" in raised.value.message
    with pytest.raises(openai.NotFoundError) as raised:
        sdk.chat.completions.create(model="gpt-4", messages=ASKED)
    assert (raised.value.code, raised.value.param) == ("model_not_found", "model")


def test_every_error_code_is_a_string(server: ServeProcess) -> None:
    for response in (
        httpx.get(f"{server.url}/v1/models/shop"),  # no token
        httpx.get(f"{server.url}/v1/nothing", headers={"Authorization": f"Bearer {TOKEN}"}),
    ):
        error = response.json()["error"]
        assert isinstance(error["code"], str) and set(error) >= {"message", "type", "code"}


def test_include_usage_sends_the_usage_in_a_last_chunk_without_choices(sdk: OpenAI) -> None:
    chunks = list(
        sdk.chat.completions.create(
            model="shop", messages=ASKED, stream=True, stream_options={"include_usage": True}
        )
    )
    *answer, last = chunks
    assert last.choices == [] and last.usage is not None
    assert last.usage.total_tokens == last.usage.prompt_tokens + last.usage.completion_tokens
    assert all(chunk.usage is None for chunk in answer)
    assert answer[-1].choices[0].finish_reason == "stop"


def test_without_include_usage_no_chunk_carries_usage(sdk: OpenAI) -> None:
    chunks = list(sdk.chat.completions.create(model="shop", messages=ASKED, stream=True))
    assert all(chunk.usage is None and chunk.choices for chunk in chunks)


def test_the_responses_api_is_a_404_that_names_what_is_served(sdk: OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as raised:
        sdk.responses.create(model="shop", input="hello")
    assert "/v1/chat/completions" in raised.value.message


@pytest.mark.parametrize(
    ("field", "fields"),
    [
        ("n", {"n": 5}),
        ("n", {"n": -1}),
        ("max_tokens", {"max_tokens": -5}),
        ("max_tokens", {"max_tokens": 1e30}),
        (
            "tools",
            {
                "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
                "tool_choice": "required",
            },
        ),
        ("tool_choice", {"tool_choice": "required"}),
        ("functions", {"functions": [{"name": "f", "parameters": {}}]}),
        ("response_format", {"response_format": {"type": "json_object"}}),
        ("logprobs", {"logprobs": True}),
    ],
)
def test_a_field_runner_cannot_honour_is_a_400_naming_it(
    sdk: OpenAI, field: str, fields: dict[str, Any]
) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        sdk.chat.completions.create(model="shop", messages=ASKED, extra_body=fields)
    assert raised.value.param == field and f"`{field}`" in raised.value.message


def test_a_good_max_tokens_and_n_1_are_taken(sdk: OpenAI) -> None:
    reply = sdk.chat.completions.create(model="shop", messages=ASKED, n=1, max_tokens=1)
    assert len(reply.choices) == 1 and reply.choices[0].message.content


def test_stream_must_be_a_boolean(server: ServeProcess) -> None:
    body = {"model": "shop", "messages": ASKED, "stream": "false"}
    response = httpx.post(
        f"{server.url}/v1/chat/completions",
        json=body,
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=30,
    )
    assert response.status_code == 400 and response.json()["error"]["param"] == "stream"
