"""The `prompt` kind: template, parameters, clarification, outputs, consumers."""

from __future__ import annotations

import pytest

from runner.config.model import (
    Clarify,
    Extraction,
    Output,
    PromptOptions,
    TemplateRef,
    ToolConfig,
    ToolKind,
)
from runner.engine.protocols import ContextRequiredError, is_context_consumer
from runner.engine.results import Clarification, PromptAndContext, ResultKind
from runner.llm.types import Purpose
from runner.sources import Source
from runner.tools.base import ToolRunError

from .conftest import run, task


def prompt_tool(name: str = "writer", prompt: str = "Answer: {{ task }}", **fields) -> ToolConfig:
    options = fields.pop("options", None) or PromptOptions(template=TemplateRef(inline=prompt))
    return ToolConfig(name=name, kind=ToolKind.PROMPT, options=options, **fields)


PRODUCT_SCHEMA = {
    "type": "object",
    "properties": {"product": {"type": "string"}},
    "required": ["product"],
}


def asking_tool(**fields) -> ToolConfig:
    options = PromptOptions(
        template=TemplateRef(inline="Specs of {{ params.product }}"),
        parameters=Extraction(schema=PRODUCT_SCHEMA),
        clarify=Clarify(question=TemplateRef(inline="Which {{ missing | join(', ') }}?")),
    )
    return prompt_tool("specs", options=options, **fields)


def test_template_sees_the_task_and_the_reply_becomes_context(harness):
    h = harness(prompt_tool(prompt="Q={{ task }} T={{ tool }} D={{ domain }}"))
    h.prompts.tool_replies["writer"] = "the reply"
    the_task = task("how big is it")

    result = run(h.tools["writer"].execute(the_task.task_prompt, h.env(the_task)))

    assert result.kind is ResultKind.CONTEXT
    assert result.text == "the reply"
    (call,) = h.prompts.of(Purpose.TOOL)
    assert call["prompt"] == "Q=how big is it T=writer D=demo"
    assert call["subject"] == "how big is it"
    assert call["facts"]["task"] == "how big is it"


def test_c25_output_answer_is_a_terminal_answer(harness):
    h = harness(prompt_tool(output=Output.ANSWER))
    the_task = task("q")
    result = run(h.tools["writer"].execute("q", h.env(the_task)))
    assert result.kind is ResultKind.TERMINAL


def test_c25_only_a_terminal_answer_is_written_for_the_watching_face(harness):
    # the answer a terminal prompt tool gives is streamed as the model writes it
    for output, final in ((Output.ANSWER, True), (Output.CONTEXT, False)):
        h = harness(prompt_tool(output=output))
        run(h.tools["writer"].execute("q", h.env(task("q"))))
        assert [call["final"] for call in h.prompts.of(Purpose.TOOL)] == [final]


def test_c23_coordinator_output_applies_only_when_a_coordinator_asked(harness):
    h = harness(prompt_tool(output=Output.CONTEXT, coordinator_output=Output.GUARANTEED))
    plain = task("q")
    asked = task("sub q", "1.1", prompt_context="the user's message")

    direct = run(h.tools["writer"].execute("q", h.env(plain)))
    env = h.env(asked)
    requested = run(h.tools["writer"].execute(env.text, env))

    assert direct.kind is ResultKind.CONTEXT
    assert requested.kind is ResultKind.GUARANTEED


def test_c22_template_reads_the_parent_text_and_the_directive(harness):
    h = harness(prompt_tool(prompt="{{ original }}|{{ task }}|{{ coordinator_requested }}"))
    asked = task("sub q", "1.1", prompt_context="the user's message")
    env = h.env(asked)
    run(h.tools["writer"].execute(env.text, env))
    assert h.prompts.of(Purpose.TOOL)[0]["prompt"] == "the user's message|sub q|True"


def test_c20c_a_consumer_called_without_the_buffer_raises(harness):
    h = harness(prompt_tool(consumes_context=True))
    tool = h.tools["writer"]
    assert is_context_consumer(tool)
    with pytest.raises(ContextRequiredError):
        tool.execute("q", h.env(task("q")))


def test_a_tool_that_does_not_consume_context_has_no_consumer_entry_point(harness):
    h = harness(prompt_tool())
    assert not is_context_consumer(h.tools["writer"])


def test_c20_consumer_gets_the_buffer_as_passages_and_cites_their_sources(harness):
    h = harness(
        prompt_tool(
            prompt="{% for p in context %}[{{ p.key }}] {{ p.text }}\n{% endfor %}",
            consumes_context=True,
        )
    )
    source = Source(document="manual.md", page=3)
    prior = {
        "1.1:lookup": (PromptAndContext("p", "row one", sources=(source,)),),
        "1.2:lookup": (PromptAndContext("p", "   "),),  # found nothing: left out
    }
    the_task = task("q")

    result = run(h.tools["writer"].execute_with_prior_context("q", prior, h.env(the_task)))

    assert h.prompts.of(Purpose.TOOL)[0]["prompt"] == "[1.1:lookup] row one\n"
    assert result.sources == (source,)


def test_c24_missing_required_parameter_asks_the_templated_question(harness):
    h = harness(asking_tool())
    h.prompts.extract_replies["specs"] = {}
    result = run(h.tools["specs"].execute("specs please", h.env(task("specs please"))))
    assert result.kind is ResultKind.CLARIFICATION
    assert result.text == "Which product?"
    assert not h.prompts.of(Purpose.TOOL)


def test_c24_continuing_re_extracts_from_the_text_and_the_answer(harness):
    h = harness(asking_tool())
    h.prompts.extract_replies["specs"] = lambda text: (
        {"product": "KW-620"} if "KW-620" in text else {}
    )
    clarification = Clarification("1", "specs", "Which product?", answer="the KW-620")

    result = run(
        h.tools["specs"].execute_with_clarification(
            "specs please", clarification, h.env(task("specs please"))
        )
    )

    assert result.kind is ResultKind.CONTEXT
    assert h.prompts.of(Purpose.EXTRACT)[0]["text"] == "specs please\nthe KW-620"
    assert h.prompts.of(Purpose.TOOL)[0]["prompt"] == "Specs of KW-620"


def test_c24_past_the_round_limit_the_tool_runs_with_what_it_has(harness):
    h = harness(asking_tool())
    clarification = Clarification("1", "specs", "Which product?", answer="no idea", rounds=3)

    result = run(
        h.tools["specs"].execute_with_clarification(
            "specs please", clarification, h.env(task("specs please"))
        )
    )

    assert result.kind is ResultKind.CONTEXT
    assert len(h.prompts.of(Purpose.TOOL)) == 1


def test_c20d_a_consuming_tool_continues_its_clarification_with_the_buffer(harness):
    h = harness(asking_tool(consumes_context=True))
    h.prompts.extract_replies["specs"] = {"product": "KW-620"}
    clarification = Clarification("1", "specs", "Which product?", answer="KW-620")
    prior = {"1.1:x": (PromptAndContext("p", "found"),)}
    tool = h.tools["specs"]

    with pytest.raises(ContextRequiredError):
        tool.execute_with_clarification("q", clarification, h.env(task("q")))
    result = run(
        tool.execute_with_clarification_and_prior_context(
            "q", clarification, prior, h.env(task("q"))
        )
    )
    assert result.kind is ResultKind.CONTEXT


def test_a_template_error_names_the_tool_and_the_template(harness):
    h = harness(prompt_tool(prompt="{{ no_such_variable }}"))
    with pytest.raises(ToolRunError, match="tool 'writer': its prompt template failed"):
        run(h.tools["writer"].execute("q", h.env(task("q"))))
