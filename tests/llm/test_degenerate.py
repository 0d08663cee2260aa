"""Degenerate text replies (issue 22, item 9): a sentence repeated until `max_tokens`, or the
request echoed, is asked again once; when it stays so the reply is cut and the round degraded."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.config import PipelineError, load_pipeline
from runner.config.model import LLMConfig
from runner.llm import LLMReplyError, build_client
from runner.llm.degenerate import diagnose
from runner.llm.types import LLMRequest, Purpose

from .fake_servers import FakeLLMServer, reply
from .helpers import http_client, run

LOOP = "The warranty is two years. " + "Call the support line for help. " * 12
PROMPT = (
    "Answer the user's question from the information below only. If it does not answer the "
    'question, say so.\n\nQuestion:\n"""\nHow long is the warranty?\n"""\n\nContext:\n[1]\n'
    "Every Kestrel appliance has a two-year warranty.\n\nAnswer:"
)
QUESTION = "How long is the warranty?"
PASSAGE = "Every Kestrel appliance has a two-year warranty."
ANSWER = LLMRequest(
    Purpose.ANSWER,
    PROMPT,
    facts={"question": QUESTION, "context": [{"text": PASSAGE, "number": 1}]},
)


def test_a_sentence_repeated_until_max_tokens_is_a_loop_cut_to_its_first_time() -> None:
    found = diagnose(LOOP, PROMPT)
    assert found is not None and found.kind == "repetition"
    assert found.cut == "The warranty is two years. Call the support line for help."


def test_words_repeated_back_to_back_are_a_loop_too() -> None:
    found = diagnose("Clean the filter the filter the filter the filter the filter", PROMPT)
    assert found is not None and found.kind == "repetition"
    assert found.cut == "Clean the filter"


def test_a_short_sentence_said_twice_is_no_loop() -> None:
    assert diagnose("Yes. The warranty is two years. Yes.", PROMPT) is None


def test_code_blocks_repeating_a_line_are_quoting_not_a_loop() -> None:
    """Three quoted examples each open with the same line: code, read apart from the prose."""
    examples = "".join(
        f"Example {n}:\n```\nCREATE TABLE products (\n    id{n} integer\n);\n```\n"
        for n in range(3)
    )
    assert diagnose(examples, PROMPT) is None


def test_one_code_block_written_three_times_is_a_loop_cut_after_the_first() -> None:
    block = "```\nCREATE TABLE products (\n    id integer\n);\n```"
    found = diagnose(f"Like this:\n{block}\n{block}\n{block}\n", PROMPT)
    assert found is not None and found.kind == "repetition"
    assert found.cut == f"Like this:\n{block}"


def test_a_reply_restating_its_task_is_an_echo() -> None:
    text = "You are asked to answer the question: How long is the warranty? It is two years."
    found = diagnose(text, PROMPT, [QUESTION, PASSAGE])
    assert found is not None and found.kind == "echo"
    assert found.cut == "It is two years."


def test_a_reply_repeating_the_instructions_is_an_echo() -> None:
    text = "Answer the user's question from the information below only. Two years."
    found = diagnose(text, PROMPT, [QUESTION, PASSAGE])
    assert found is not None and found.kind == "echo" and found.cut == "Two years."


def test_quoting_a_passage_or_the_question_is_not_an_echo() -> None:
    text = f"{PASSAGE} [1] So, to answer how long is the warranty: two years."
    assert diagnose(text, PROMPT, [QUESTION, PASSAGE]) is None


def test_a_loop_is_asked_again_once_saying_so(llm_server: FakeLLMServer) -> None:
    llm_server.script(reply(LOOP), reply("Two years. [1]"))
    client = http_client(llm_server)
    assert run(client.complete(ANSWER)).text == "Two years. [1]"
    assert [call.outcome for call in client.calls] == ["degenerate", "ok"]
    assert "repeated itself" in llm_server.requests[1]["messages"][-1]["content"]
    assert client.calls[1].degenerate is None


def test_a_loop_that_stays_is_cut_and_its_call_says_so(llm_server: FakeLLMServer) -> None:
    llm_server.script(reply(LOOP), reply(LOOP))
    client = http_client(llm_server)
    answer = run(client.complete(ANSWER))
    assert answer.text == "The warranty is two years. Call the support line for help."
    assert [call.outcome for call in client.calls] == ["degenerate", "ok"]
    degenerate = client.calls[1].degenerate
    assert degenerate is not None and degenerate.endswith("the reply was cut")


def test_a_reply_echoing_the_correction_it_was_sent_is_no_answer(
    llm_server: FakeLLMServer,
) -> None:
    echoed = (
        "Your previous reply held citations and no answer. Reply with the answer in words, "
        "citing the passages it comes from."
    )  # SmolLM2-135M's second reply, after a first of "[4]" alone
    llm_server.script(reply("[4]"), reply(echoed), reply("Two years. [1]"))
    client = http_client(llm_server, structured_retries=2)
    assert run(client.complete(ANSWER)).text == "Two years. [1]"
    assert [call.outcome for call in client.calls] == ["invalid", "invalid", "ok"]
    assert "nothing was left once that was cut" in (client.calls[1].error or "")


def test_an_echo_that_stays_fails_rather_than_answering_with_the_prompt(
    llm_server: FakeLLMServer,
) -> None:
    echo = "You are asked to answer the question: How long is the warranty?"
    llm_server.script(reply(echo), reply(echo))
    with pytest.raises(LLMReplyError, match="answer reply was not usable after 2 attempt"):
        run(http_client(llm_server).complete(ANSWER))


def test_a_structured_reply_is_never_checked_for_loops(llm_server: FakeLLMServer) -> None:
    schema = {"type": "object", "properties": {"reason": {"type": "string"}}}
    llm_server.script(reply('{"reason": "%s"}' % ("same words again " * 10)))
    client = http_client(llm_server)
    run(client.complete(LLMRequest(Purpose.GATEKEEPER, "Enough?", schema=schema)))
    assert [call.outcome for call in client.calls] == ["ok"]


def test_a_prompt_tools_reply_may_repeat_its_template(llm_server: FakeLLMServer) -> None:
    text = "The KW-620 comes with a 3-year warranty from the date of delivery."
    llm_server.script(reply(text))
    client = http_client(llm_server)
    request = LLMRequest(Purpose.TOOL, f"Say this: {text}", tool="warranty_check")
    assert run(client.complete(request)).text == text


# --- sampling settings for local models ------------------------------------------------------


def test_sampling_settings_reach_an_openai_like_server_in_the_body(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script(reply("Two years."))
    client = http_client(llm_server, sampling={"repeat_penalty": 1.1, "top_k": 40})
    run(client.complete(ANSWER))
    body = llm_server.requests[0]
    assert (body["repeat_penalty"], body["top_k"]) == (1.1, 40)


def test_sampling_settings_reach_ollama_as_options(llm_server: FakeLLMServer) -> None:
    pytest.importorskip("llama_index.llms.ollama")
    llm_server.script(reply("Two years."))
    config = LLMConfig(
        provider="ollama",
        model="llama3.1",
        api_base=llm_server.url,
        sampling={"repeat_penalty": 1.1},
    )
    run(build_client(config, environ={}).complete(ANSWER))
    assert llm_server.requests[0]["options"]["repeat_penalty"] == 1.1


def test_a_pipeline_may_not_set_through_sampling_what_runner_sets(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "version: 1\ndomain: d\ntools:\n  - {name: t, kind: prompt, prompt: '{{ text }}'}\n"
        "llm: {provider: openai_like, model: m, sampling: {max_tokens: 9, repeat_penalty: 1.1}}\n",
        encoding="utf-8",
    )
    with pytest.raises(PipelineError) as caught:
        load_pipeline(path)
    assert "sampling" in str(caught.value) and "max_tokens" in str(caught.value)


def _slice_by_slice_run(words: list[str]) -> tuple[int, int] | None:
    """The repeated run as first written: every start, every length, the slices compared."""
    from runner.llm.degenerate import MAX_RUN_WORDS, RUN_REPEATS

    for length in range(1, MAX_RUN_WORDS + 1):
        repeats = RUN_REPEATS * 2 if length == 1 else RUN_REPEATS
        for start in range(len(words) - length * repeats + 1):
            unit = words[start : start + length]
            if all(
                words[start + k * length : start + (k + 1) * length] == unit
                for k in range(1, repeats)
            ):
                return start, length
    return None


def test_the_repeated_run_found_in_one_pass_is_the_one_slice_by_slice_comparison_finds() -> None:
    import random

    from runner.llm.degenerate import _repeated_run

    chooser = random.Random(3)
    found = 0
    for _ in range(3000):
        vocabulary = ["a", "b", "c", "d"][: chooser.randint(1, 4)]
        words = [chooser.choice(vocabulary) for _ in range(chooser.randint(0, 40))]
        if chooser.random() < 0.5:  # a planted loop of 1 to 5 words, 3 to 8 times
            unit = [chooser.choice(vocabulary) for _ in range(chooser.randint(1, 5))]
            at = chooser.randint(0, len(words))
            words[at:at] = unit * chooser.randint(3, 8)
        expected = _slice_by_slice_run(words)
        assert _repeated_run(words) == expected, words
        found += expected is not None
    assert 500 < found < 2900  # both kinds of case were tried
