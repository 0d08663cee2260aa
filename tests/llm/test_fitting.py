"""Prompts that fit the model's context window (issue 12): passages cut by relevance, never
past the window, the cut recorded on the call."""

from __future__ import annotations

import pytest

from runner.config.model import LLMConfig, ScriptRule
from runner.llm import LLMConfigError, build_client
from runner.llm.fitting import prompt_tokens
from runner.llm.prompts import Passage, Prompts
from runner.llm.types import Purpose
from runner.sources import Source
from runner.trace import schema_problems

from .fake_servers import FakeLLMServer
from .helpers import Recorder, run, scripted

QUESTION = "How do I descale the kettle?"
RELEVANT = Passage("To descale the kettle, boil a descaling solution. " * 3, (Source("k.md"),))
FILLER = [
    Passage(f"The toaster warranty note number {n}. " * 12, (Source(f"t{n}.md"),)) for n in range(6)
]


def answer_with(window: int | None, *, max_tokens: int = 50) -> tuple[Recorder, Prompts]:
    config = {"context_window": window, "max_tokens": max_tokens}
    recorder = Recorder(scripted(ScriptRule(reply="Boil it [1].", purpose="answer"), **config))
    return recorder, Prompts(recorder)


def test_a_prompt_that_fits_is_not_cut() -> None:
    recorder, prompts = answer_with(8192)
    run(prompts.answer(QUESTION, [], [RELEVANT, *FILLER]))
    request, _ = recorder.seen[0]
    assert request.cut is None and len(request.facts["context"]) == 7


def test_the_least_relevant_passages_are_dropped_first_and_the_order_kept() -> None:
    recorder, prompts = answer_with(400)
    run(prompts.answer(QUESTION, [], [FILLER[0], RELEVANT, *FILLER[1:]]))
    request, _ = recorder.seen[0]
    texts = [passage["text"] for passage in request.facts["context"]]
    assert RELEVANT.text in texts and len(texts) < 7
    assert request.cut is not None and request.cut["passages_dropped"] == 7 - len(texts)


def test_the_prompt_never_exceeds_the_window_less_the_reply() -> None:
    recorder, prompts = answer_with(400, max_tokens=100)
    run(prompts.answer(QUESTION, [], [RELEVANT, *FILLER]))
    request, _ = recorder.seen[0]
    assert prompt_tokens(request.prompt) <= 400 - 100
    assert request.cut is not None and request.cut["tokens_after"] <= request.cut["budget"]


def test_guaranteed_context_outranks_retrieved_pages() -> None:
    recorder, prompts = answer_with(400)
    guaranteed = Passage("Warranty: 2 years. " * 10, (Source("w.md"),), guaranteed=True)
    run(prompts.answer(QUESTION, [guaranteed], [RELEVANT, *FILLER]))
    request, _ = recorder.seen[0]
    assert [p["text"] for p in request.facts["guaranteed"]] == [guaranteed.text]


def test_one_page_too_long_for_the_window_is_shortened() -> None:
    client = scripted(ScriptRule(reply={"found": False}, purpose="read_page"), context_window=300)
    recorder = Recorder(client)
    page = Passage("word " * 2000, (Source("long.md", page=1),))
    run(Prompts(recorder).read_page(QUESTION, page, tool="search"))
    request, _ = recorder.seen[0]
    assert request.cut is not None and request.cut["passages_shortened"] == 1
    assert request.facts["page"]["text"].endswith("[…]")
    assert prompt_tokens(request.prompt) <= request.cut["budget"]


def test_the_cut_is_in_the_calls_trace_record() -> None:
    client = scripted(ScriptRule(reply="Boil it.", purpose="answer"), context_window=400)
    run(Prompts(client).answer(QUESTION, [], [RELEVANT, *FILLER]))
    record = client.calls[0].to_json()
    assert record["prompt_cut"]["window"] == 400 and record["prompt_cut"]["passages_dropped"] > 0
    event = {"seq": 1, "ms": 0.0, "event": "llm.call", "task": "1", **record}
    assert schema_problems("trace", event, "llm.call") == []


def test_a_template_larger_than_the_window_says_what_to_change() -> None:
    _recorder, prompts = answer_with(100, max_tokens=50)
    with pytest.raises(LLMConfigError, match=r"raise `llm.context_window`"):
        run(prompts.answer(QUESTION, [], [RELEVANT]))


def test_local_providers_without_a_window_are_never_cut() -> None:
    client = build_client(LLMConfig(), environ={})
    assert run(client.context_window(Purpose.ANSWER)) is None


def test_the_window_a_server_states_is_the_default(llm_server: FakeLLMServer) -> None:
    llm_server.models_window = 4096
    config = LLMConfig(provider="openai_like", model="test-model", api_base=f"{llm_server.url}/v1")
    assert run(build_client(config, environ={}).context_window(Purpose.ANSWER)) == 4096


def test_a_server_that_states_no_window_gets_runners_default(llm_server: FakeLLMServer) -> None:
    config = LLMConfig(provider="openai_like", model="test-model", api_base=f"{llm_server.url}/v1")
    assert run(build_client(config, environ={}).context_window(Purpose.ANSWER)) == 8192


@pytest.mark.parametrize(("stated", "fitted"), [(131_072, 8192), (4096, 4096)])
def test_ollama_prompts_fit_the_window_runner_allocates_not_the_models_larger_one(
    monkeypatch: pytest.MonkeyPatch, stated: int, fitted: int
) -> None:
    ollama = pytest.importorskip("llama_index.llms.ollama")
    monkeypatch.setattr(ollama.Ollama, "get_context_window", lambda self: stated)
    config = LLMConfig(provider="ollama", model="m", api_base="http://127.0.0.1:9")
    assert run(build_client(config, environ={}).context_window(Purpose.ANSWER)) == fitted
