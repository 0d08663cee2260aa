"""The final answer streamed as the model writes it: through the real llama-index clients of
openai_like and ollama against a real HTTP server on 127.0.0.1 that streams word by word, the
scripted provider, and the citation rewriting a stream goes through."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runner.config.model import LLMConfig, ScriptRule
from runner.llm import build_client
from runner.llm.bound import round_client
from runner.llm.passages import Passage, cited_answer
from runner.llm.streaming import AnswerStream
from runner.llm.types import LLMRequest, Purpose
from runner.sources import Source

from .fake_servers import FakeLLMServer, reply, words
from .helpers import http_client, run, scripted

ANSWER = "The battery lasts ten hours [1] and charges in two [2]."
STREAMED = LLMRequest(Purpose.ANSWER, "How long does the battery last?", streams=True)


def collect(client, request: LLMRequest) -> tuple[list[str], object]:
    pieces: list[str] = []

    async def ask() -> object:
        # a round's client, its records in the client's own list
        return await round_client(client, pieces.append).complete(request)

    return pieces, run(ask())


def test_openai_like_streams_the_answer_word_by_word(llm_server: FakeLLMServer) -> None:
    llm_server.script(reply(ANSWER, usage=(40, 12)))
    client = http_client(llm_server)
    pieces, answer = collect(client, STREAMED)
    assert pieces == words(ANSWER)
    assert answer.text == ANSWER
    assert llm_server.requests[0]["stream"] is True


def test_a_streamed_call_reports_usage_finish_reason_and_first_token(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script(reply(ANSWER, usage=(40, 12)))
    llm_server.word_gap_s = 0.01
    client = http_client(llm_server)
    collect(client, STREAMED)
    call = client.calls[0]
    assert (call.prompt_tokens, call.completion_tokens, call.finish_reason) == (40, 12, "stop")
    assert call.first_token_ms is not None
    assert 0 < call.first_token_ms < call.latency_ms


def test_ollama_streams_the_answer_word_by_word(llm_server: FakeLLMServer) -> None:
    pytest.importorskip("llama_index.llms.ollama")
    llm_server.script(reply(ANSWER, usage=(30, 9)))
    config = LLMConfig(provider="ollama", model="llama3.1", api_base=llm_server.url)
    client = build_client(config, environ={})
    pieces, answer = collect(client, STREAMED)
    assert pieces == words(ANSWER)
    assert answer.text == ANSWER
    assert (client.calls[0].prompt_tokens, client.calls[0].finish_reason) == (30, "stop")


def test_a_request_that_is_not_the_answer_is_not_streamed(llm_server: FakeLLMServer) -> None:
    llm_server.script(reply("yes"))
    client = http_client(llm_server)
    pieces, _answer = collect(client, LLMRequest(Purpose.ANSWER, "Enough?"))
    assert pieces == []
    assert not llm_server.requests[0].get("stream")
    assert client.calls[0].first_token_ms is None


def test_nobody_watching_means_no_stream(llm_server: FakeLLMServer) -> None:
    llm_server.script(reply(ANSWER))
    client = http_client(llm_server)
    assert run(client.complete(STREAMED)).text == ANSWER
    assert not llm_server.requests[0].get("stream")


def test_the_scripted_provider_streams_its_reply() -> None:
    client = scripted(ScriptRule(purpose="answer", reply=ANSWER))
    pieces, answer = collect(client, STREAMED)
    assert len(pieces) > 1
    assert "".join(pieces) == ANSWER == answer.text


# --- citations rewritten as they stream ---------------------------------------------------------

PASSAGES = [
    Passage("ten hours", (Source("manual.md", page=3),), key="1:a"),
    Passage("two hours", (Source("faq.md"),), key="1:b"),
]
REPLIES = st.lists(
    st.sampled_from(
        ["The", " battery", " [1]", "[2]", " lasts", ",", " [1, 2]", "\n", " x[1]", "  "]
    ),
    max_size=14,
).map("".join)


@given(REPLIES, st.lists(st.integers(min_value=1, max_value=6), max_size=30))
def test_a_streamed_answer_joins_to_the_cited_answer(reply_text: str, cuts: list[int]) -> None:
    pieces: list[str] = []
    stream = AnswerStream(pieces.append, lambda text: cited_answer(text, PASSAGES).text)
    rest = reply_text
    for size in cuts:
        stream(rest[:size])
        rest = rest[size:]
    stream(rest)
    stream.close()
    assert "".join(pieces) == cited_answer(reply_text.strip(), PASSAGES).text


def test_a_marker_is_held_back_until_it_is_whole() -> None:
    pieces: list[str] = []
    stream = AnswerStream(pieces.append, lambda text: cited_answer(text, PASSAGES).text)
    for piece in ["Ten hours ", "[", "1", "] ", "at most."]:
        stream(piece)
    assert not any("[" in piece and "]" not in piece for piece in pieces)
    stream.close()
    assert "".join(pieces) == "Ten hours [manual.md p. 3] at most."
