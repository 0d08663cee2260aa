"""The offline provider answers every purpose, `rewrite` included: a scripted pipeline falls
back on it for the calls its script does not cover."""

from __future__ import annotations

from runner.llm.providers.offline import _HANDLERS, respond
from runner.llm.types import LLMRequest, Purpose


def test_the_offline_provider_restates_nothing_so_search_runs_on_the_question() -> None:
    request = LLMRequest(Purpose.REWRITE, "Restate: my kettle is furred up", "kettle furred up")
    assert respond(request) == ""


def test_the_offline_provider_has_a_reply_for_every_purpose() -> None:
    assert set(_HANDLERS) == set(Purpose)
