"""A call record's trace JSON (`CallRecord.to_json`): every field it has, none it lacks, its
exchange never, its prompt cut a dict of its own."""

from __future__ import annotations

from typing import Any

from runner.llm.accounting import CallRecord
from runner.llm.exchanges import Exchange


def _record(**more: Any) -> CallRecord:
    return CallRecord(
        purpose="extract",
        tool="lookup",
        provider="offline",
        model="m",
        latency_ms=1.5,
        prompt_tokens=10,
        completion_tokens=2,
        cached=False,
        attempt=1,
        outcome="ok",
        **more,
    )


def test_a_record_is_written_with_its_fields_in_order_and_without_the_none_ones() -> None:
    assert list(_record(task="2", finish_reason="stop").to_json().items()) == [
        ("purpose", "extract"),
        ("tool", "lookup"),
        ("provider", "offline"),
        ("model", "m"),
        ("latency_ms", 1.5),
        ("prompt_tokens", 10),
        ("completion_tokens", 2),
        ("cached", False),
        ("attempt", 1),
        ("outcome", "ok"),
        ("tokens_estimated", False),
        ("queue_ms", 0.0),
        ("task", "2"),
        ("finish_reason", "stop"),
    ]


def test_a_records_exchange_is_never_written() -> None:
    record = _record(exchange=Exchange(prompt="the prompt", reply="the reply"))
    assert "exchange" not in record.to_json()


def test_a_written_prompt_cut_is_a_dict_of_its_own() -> None:
    cut = {"dropped": 2, "tokens": 40}
    written = _record(prompt_cut=cut).to_json()
    assert written["prompt_cut"] == cut
    written["prompt_cut"]["tokens"] = 0
    assert cut == {"dropped": 2, "tokens": 40}
