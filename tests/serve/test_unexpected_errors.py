"""What the service does with a round an unexpected exception ended (issue 29): the client reads
one line, the service's log (`runner.service`) gets the traceback, and neither the log nor the
round's trace a client reads back carries a credential or a path of this machine
(runner.text.redact)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from runner.service.failures import log_unexpected
from runner.service.pipelines import Service

PRICE = "What does the KW-620 cost?"
KEY = "sk-live1234567890abcdef"


def leaky_crash(*_args: Any, **_kwargs: Any) -> Any:
    raise TypeError(f"unhashable type: 'dict' (the server said: Authorization: Bearer {KEY})")


@pytest.fixture
def crashing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("runner.llm.prompts.cited_answer", leaky_crash)


def test_the_client_reads_one_line_naming_the_llm_purpose(service, crashing):
    result = asyncio.run(service.run_round("shop", PRICE))
    assert result["outcome"] == "error"
    assert result["error"].startswith("answer (LLM purpose) failed: TypeError: unhashable")
    assert "\n" not in result["error"] and KEY not in result["error"]


def test_the_log_has_the_traceback_without_the_credential(service, crashing, caplog):
    with caplog.at_level(logging.WARNING, logger="runner.service"):
        asyncio.run(service.run_round("shop", PRICE))
    [record] = caplog.records
    assert record.levelno == logging.ERROR
    logged = record.getMessage()
    assert "on 'shop' ended with an error: answer (LLM purpose) failed" in logged
    assert "Traceback (most recent call last):" in logged and "in leaky_crash" in logged
    assert KEY not in logged and "Bearer [redacted]" in logged


def test_the_trace_a_client_reads_back_keeps_the_traceback_without_paths(service, crashing):
    result = asyncio.run(service.run_round("shop", PRICE))
    stored = service.round(result["session"], result["round"])
    [end] = [event for event in stored["trace"] if event["event"] == "round.end"]
    assert "in leaky_crash" in end["traceback"]
    assert 'File "/' not in end["traceback"]  # its files relative, or by name alone
    assert KEY not in end["traceback"]


def test_an_error_runner_expects_is_one_warning_without_a_traceback(
    shop, caplog, tmp_path, monkeypatch
):
    for name in ("RUNNER_STATE", "RUNNER_LLM"):
        monkeypatch.delenv(name, raising=False)
    script = tmp_path / "broken.yaml"
    script.write_text("- {purpose: suitability, reply: not a JSON object}\n", encoding="utf-8")
    service = Service.open([shop.parent], llm_script=script)
    try:
        with caplog.at_level(logging.WARNING, logger="runner.service"):
            result = asyncio.run(service.run_round("shop", PRICE))
    finally:
        service.close()
    assert result["outcome"] == "error"
    [record] = caplog.records
    assert record.levelno == logging.WARNING and "Traceback" not in record.getMessage()


def test_an_exception_that_escapes_the_service_is_logged_with_its_traceback(caplog):
    try:
        raise KeyError(f"api_key={KEY}")
    except KeyError as exc:
        with caplog.at_level(logging.ERROR, logger="runner.service"):
            log_unexpected("a round on 'shop'", exc)
    [record] = caplog.records
    assert record.getMessage().startswith("a round on 'shop' failed: Traceback")
    assert KEY not in record.getMessage()
