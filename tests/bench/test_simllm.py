"""The simulated LLM: one reply function and one meter for runner and for LlamaIndex."""

from __future__ import annotations

import asyncio
import json

import pytest
from benchkit import QUESTIONS

from bench.simllm import Meter, SimulatedLLM, Span, UnscriptedQuestion, llama_kind, llama_reply
from runner.llm.types import LLMRequest, Purpose
from runner.text.words import estimate_tokens

QUESTION = next(iter(QUESTIONS))


def run(coroutine):
    return asyncio.run(coroutine)


def test_the_meter_counts_calls_and_tokens_per_kind():
    sim = SimulatedLLM(QUESTIONS, latency_s=0)
    run(sim.call("decompose", "split this question", lambda: '{"parts": []}'))
    run(sim.call("decompose", "split that question", lambda: "{}"))
    usage = sim.meter.by_kind["decompose"]
    assert usage.calls == 2
    assert usage.prompt_tokens == 2 * estimate_tokens("split this question")
    assert usage.completion_tokens == estimate_tokens('{"parts": []}') + estimate_tokens("{}")


def test_the_critical_path_counts_calls_that_waited_for_each_other_once():
    meter = Meter()
    meter.spans = [
        Span("decompose", 0.0, 1.0),
        Span("answer", 1.0, 2.0),  # after the first
        Span("answer", 1.0, 2.0),  # beside the second
        Span("synthesis", 2.0, 3.0),
    ]
    assert meter.chain() == 3


def test_concurrent_calls_overlap_and_sequential_ones_do_not():
    sim = SimulatedLLM(QUESTIONS, latency_s=0.01)

    async def both() -> None:
        await asyncio.gather(*(sim.call("tool", f"p{i}", lambda: "r") for i in range(3)))
        await sim.call("answer", "last", lambda: "r")

    run(both())
    assert sim.meter.calls == 4
    assert sim.meter.chain() == 2


def test_runner_decompose_gets_the_scripted_parts():
    client = SimulatedLLM(QUESTIONS, latency_s=0).runner_client()
    schema = {"type": "object", "properties": {"parts": {"type": "array"}}}
    request = LLMRequest(
        Purpose.DECOMPOSE,
        "split it",
        subject=QUESTION,
        schema=schema,
        facts={"text": QUESTION, "schema": schema, "tool": "parts", "instruction": ""},
    )
    reply = run(client.complete(request))
    assert [part["tool"] for part in reply.data["parts"]] == [p.tool for p in QUESTIONS[QUESTION]]
    assert reply.prompt_tokens == estimate_tokens("split it")


def test_runner_answer_quotes_the_context_sentences_that_cover_the_question():
    client = SimulatedLLM(QUESTIONS, latency_s=0).runner_client()
    context = [{"text": "Unrelated words here. To read a file line by line, loop over it."}]
    facts = {"question": "How do I read a file line by line?", "guaranteed": [], "context": context}
    reply = run(client.complete(LLMRequest(Purpose.ANSWER, "answer it", facts=facts)))
    assert reply.text == "To read a file line by line, loop over it."


def test_an_unscripted_question_is_a_clear_error():
    with pytest.raises(UnscriptedQuestion, match="only the benchmark's scripted questions"):
        SimulatedLLM(QUESTIONS).parts("What is Python?")


def _llama_prompts() -> dict[str, str]:
    from llama_index.core.prompts import PromptTemplate
    from llama_index.core.prompts.default_prompts import (
        DEFAULT_REFINE_PROMPT,
        DEFAULT_TEXT_QA_PROMPT,
    )
    from llama_index.core.question_gen.prompts import (
        DEFAULT_SUB_QUESTION_PROMPT_TMPL,
        build_tools_text,
    )
    from llama_index.core.selectors.prompts import DEFAULT_SINGLE_SELECT_PROMPT_TMPL
    from llama_index.core.tools import ToolMetadata

    tools = build_tools_text([ToolMetadata(name="tutorial_docs", description="The tutorial.")])
    template = PromptTemplate(DEFAULT_SUB_QUESTION_PROMPT_TMPL)  # it escapes the JSON braces
    sub_question = template.format(tools_str=tools, query_str=QUESTION)
    return {
        "sub_question": sub_question,
        "selector": DEFAULT_SINGLE_SELECT_PROMPT_TMPL.format(
            num_choices=2,
            context_list="(1) About sorting lists.\n(2) About reading files line by line.",
            query_str="How do I read a file line by line?",
        ),
        "refine": DEFAULT_REFINE_PROMPT.format(
            query_str="How do I read a file?",
            existing_answer="Open it.",
            context_msg="To read a file line by line, loop over the file object.",
        ),
        "synthesis": DEFAULT_TEXT_QA_PROMPT.format(
            context_str="To read a file line by line, loop over the file object.",
            query_str="How do I read a file line by line?",
        ),
    }


def test_llamaindex_prompts_are_told_apart():
    for kind, prompt in _llama_prompts().items():
        assert llama_kind(prompt) == kind


def test_llamaindex_replies_parse_with_llamaindexs_own_parsers():
    from llama_index.core.output_parsers.selection import SelectionOutputParser
    from llama_index.core.question_gen.output_parser import SubQuestionOutputParser

    sim = SimulatedLLM(QUESTIONS, latency_s=0)
    prompts = _llama_prompts()
    sub_questions = SubQuestionOutputParser().parse(
        llama_reply(sim, "sub_question", prompts["sub_question"])
    )
    assert [q.tool_name for q in sub_questions.parsed_output] == [
        p.tool for p in QUESTIONS[QUESTION]
    ]
    selection = SelectionOutputParser().parse(llama_reply(sim, "selector", prompts["selector"]))
    assert [choice.choice for choice in selection.parsed_output] == [2]
    assert "loop over the file object" in llama_reply(sim, "synthesis", prompts["synthesis"])


def test_an_unknown_llamaindex_prompt_is_a_clear_error():
    with pytest.raises(ValueError, match="does not know this llama-index prompt"):
        llama_kind("Write a poem about Python.")


def test_the_llamaindex_face_counts_into_the_same_meter():
    sim = SimulatedLLM(QUESTIONS, latency_s=0)
    llm = sim.llama_llm()
    prompt = _llama_prompts()["sub_question"]
    response = run(llm.acomplete(prompt))
    assert json.loads(response.text.strip("`").removeprefix("json"))["items"]
    assert sim.meter.by_kind["sub_question"].calls == 1
    assert sim.meter.by_kind["sub_question"].prompt_tokens == estimate_tokens(prompt)


def test_a_new_reply_is_made_once_off_the_event_loop_however_many_calls_ask_it():
    import threading

    sim = SimulatedLLM(QUESTIONS, latency_s=0)
    made: list[bool] = []

    def make_reply() -> str:
        made.append(threading.current_thread() is threading.main_thread())
        return "the reply"

    async def at_once() -> list[str]:
        return list(await asyncio.gather(*(sim.call("answer", "p", make_reply) for _ in range(5))))

    assert run(at_once()) == ["the reply"] * 5
    assert made == [False]  # once, and not on the loop's thread
