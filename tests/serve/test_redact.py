"""What the service sends out carries no credential and no path of the machine (issue 19, L2
and L3): runner/text/redact.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from runner.text.redact import Redactor


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("401: Authorization: Bearer sk-live-1234567890", "401: Authorization: Bearer [redacted]"),
        ('{"api_key": "abc123def456"}', '{"api_key": "[redacted]"}'),
        ("invalid key sk-proj-abcdefgh12", "invalid key [redacted]"),
        ("x-api-key=Q29kZTEyMzQ1Ng==", "x-api-key=[redacted]"),
        ("AUTHORIZATION: BEARER ABCD-1234-EFGH", "AUTHORIZATION: BEARER [redacted]"),
        ("PASSWORD=Hunter2Hunter2", "PASSWORD=[redacted]"),
        # issue 31, findings 7, 11 and 12: the shapes the first redactor missed
        ("X-Api-Token: abcdefgh", "X-Api-Token: [redacted]"),
        ('{"X-Tickets-Key": "plainletters"}', '{"X-Tickets-Key": "[redacted]"}'),
        ("Authorization: Basic c3ZjOnB3ZA==", "Authorization: Basic [redacted]"),
        ("http://svc:PW@tickets/api", "http://svc:[redacted]@tickets/api"),
        (
            "postgresql://db/r?sslmode=require&sslpassword=letters",
            "postgresql://db/r?sslmode=require&sslpassword=[redacted]",
        ),
        ("GET /feed?token=abc&page=2", "GET /feed?token=[redacted]&page=2"),
        ("host=db password=abc123x", "host=db password=[redacted]"),
    ],
)
def test_what_looks_like_a_credential_is_redacted(text: str, shown: str) -> None:
    assert Redactor().text(text) == shown


@pytest.mark.parametrize(
    "text",
    [
        "Send bearer tokens in the Authorization header.",
        "The password: required on first start.",
        "The basic program runs for 2 hours.",
        "The desk-lamp-123456 has a warranty.",
        "Use X-Request-Id: 42 to trace a call.",
        "See https://example.com/path for the manual.",
    ],
)
def test_an_answer_that_only_talks_about_credentials_is_left_as_it_is(text: str) -> None:
    assert Redactor().text(text) == text


def test_the_service_folders_are_shown_by_name_and_other_paths_by_file_name(
    tmp_path: Path,
) -> None:
    pipeline = tmp_path / "pipelines" / "support"
    redactor = Redactor([pipeline])
    store = f"{pipeline}/.runner/state.sqlite"
    assert redactor.text(f"cannot open {store}") == "cannot open support/.runner/state.sqlite"
    assert redactor.error("cannot read /etc/runner/tokens") == "cannot read …/tokens"
    url_path = "POST /v1/chat/completions failed at http://llm:8080/v1/chat"
    assert redactor.error(url_path) == url_path


def test_a_secret_the_pipeline_declares_is_hidden_whatever_its_shape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from runner.config import load_pipeline

    monkeypatch.setenv("DECLARED_HEADER_SECRET", "plainwordsecret")
    monkeypatch.setenv("DECLARED_URL_SECRET", "anotherplainone")
    pipeline = tmp_path / "p.yaml"
    pipeline.write_text(
        "version: 1\ndomain: p\nllm: {provider: offline}\nmcp_servers:\n  t:\n"
        "    url: http://t/${DECLARED_URL_SECRET}/mcp\n"
        '    headers: {X-Plain: "${DECLARED_HEADER_SECRET}"}\n'
        "tools:\n  - {name: t, kind: mcp, server: t, activation: always}\n",
        encoding="utf-8",
    )
    load_pipeline(pipeline)
    shown = Redactor().text("echo plainwordsecret and anotherplainone")
    assert shown == "echo [redacted] and [redacted]"


def _each_string_redacted(redactor: Redactor, value: Any) -> Any:
    """What `Redactor.json` must give: every string redacted on its own."""
    if isinstance(value, str):
        return redactor.text(value)
    if isinstance(value, dict):
        return {
            key: redactor.error(item)
            if key == "traceback" and isinstance(item, str)
            else _each_string_redacted(redactor, item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_each_string_redacted(redactor, item) for item in value]
    return value


HOSTILE_VALUES = [
    # a credential at the start, the end, or the whole of a string among others
    {"answer": "fine", "error": "Bearer sk-live-1234567890", "n": 3},
    ["sk-proj-abcdefgh12", "ok", {"deep": ["x-api-key=Q29kZTEyMzQ1Ng=="]}],
    {"a": "host=db", "b": "password=abc123x"},
    {"a": "Authorization: Basic c3ZjOnB3ZA==", "b": "tail"},
    {"a": "Basic", "b": "c3ZjOnB3ZA=="},  # the shape split across two strings: no credential
    {"a": "Bearer", "b": "abcdefgh12345678"},
    {"a": "http://svc:", "b": "PW@tickets"},
    {"a": "GET /feed?token=", "b": "abc"},
    {"a": "text with an ending password=", "b": "nothing"},
    {"a": "X-Api-Token:", "b": "abcdefgh", "c": ["[redacted]"]},
    {"a": "already Bearer [redacted]", "b": "fine"},
    {"traceback": "File /etc/runner/x.py, line 3", "answer": "see /etc/runner/x.py"},
    {"a": "a\x00Bearer sk-live-1234567890", "b": 1.5, "c": None, "d": True},
    {"answer": "The desk-lamp-123456 has a warranty.", "sources": ["manuals/kw-720.md"]},
]


@pytest.mark.parametrize("value", HOSTILE_VALUES)
def test_a_json_value_is_redacted_as_each_of_its_strings_would_be(value: Any) -> None:
    redactor = Redactor([Path("/etc/runner/pipelines/support")])
    assert redactor.json(value) == _each_string_redacted(redactor, value)


def test_a_json_value_with_nothing_to_redact_is_given_back_as_it_is() -> None:
    value = {"answer": "The KW-720X has 2 years.", "sources": [{"path": "manuals/kw.md"}]}
    assert Redactor().json(value) is value


def test_a_credential_in_a_json_value_is_redacted_in_a_copy() -> None:
    value = {"answer": "ok", "error": ["401: Bearer sk-live-1234567890"]}
    shown = Redactor().json(value)
    assert shown == {"answer": "ok", "error": ["401: Bearer [redacted]"]}
    assert value["error"] == ["401: Bearer sk-live-1234567890"]


def test_a_declared_secret_split_by_nothing_is_hidden_in_a_json_value() -> None:
    from runner.text.credentials import remember_secrets

    remember_secrets(["plainjsonsecret"])
    shown = Redactor().json({"a": ["echo plainjsonsecret"], "b": "fine"})
    assert shown == {"a": ["echo [redacted]"], "b": "fine"}
