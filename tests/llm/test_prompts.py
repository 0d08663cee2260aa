"""Prompts: templates per purpose, facts = template variables, override order, reply shapes."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from runner.config.model import LLMConfig, PromptType, ScriptRule, TemplateRef
from runner.llm import LLMReplyError
from runner.llm.prompts import Passage, Prompts, PromptTemplateError, default_template
from runner.llm.providers.offline import respond
from runner.llm.purposes import PURPOSE_VARIABLES
from runner.llm.structured import parse
from runner.llm.types import LLMReply, LLMRequest, Purpose
from runner.sources import Source
from runner.templating import environment as templates

from .helpers import lookup_tool, pipeline, run, scripted, tool

TEMPLATED = [purpose for purpose in Purpose if purpose is not Purpose.TOOL]


class RecordingClient:
    """Answers like the offline provider (or as told) and keeps every request."""

    def __init__(self, answer: Callable[[LLMRequest], str] = respond) -> None:
        self.answer = answer
        self.requests: list[LLMRequest] = []

    async def complete(self, request: LLMRequest) -> LLMReply:
        self.requests.append(request)
        text = self.answer(request)
        data = parse(text, request.schema) if request.schema is not None else None
        return LLMReply(text=text, data=data)


@pytest.mark.parametrize("purpose", TEMPLATED, ids=lambda p: p.value)
def test_each_default_template_documents_and_uses_only_its_variables(purpose: Purpose) -> None:
    source = default_template(purpose).read_text(encoding="utf-8")
    header = re.match(r"\{#-?(.*?)-?#\}", source, re.DOTALL)
    assert header is not None, "a template starts with a {# … #} header"
    for variable in PURPOSE_VARIABLES[purpose]:
        assert re.search(rf"^\s+{variable}\s", header.group(1), re.MULTILINE), variable
    assert templates.template_variables(source) <= PURPOSE_VARIABLES[purpose]


def test_there_is_no_default_template_for_prompt_tools() -> None:
    assert not default_template(Purpose.TOOL).exists()


def ask_every_purpose(prompts: Prompts) -> None:
    page = Passage("The battery lasts ten hours.", (Source("m.md", 2),), "1:rag")
    run(prompts.prompt_type("hello", [PromptType("question", "questions")]))
    run(prompts.suitability("battery life?", [tool("rag", "Is it about batteries?")]))
    run(prompts.extract(Purpose.DECOMPOSE, "XR-200", {"type": "object"}, tool="c"))
    run(prompts.extract(Purpose.EXTRACT, "XR-200", {"type": "object"}, tool="c"))
    run(prompts.gatekeeper("battery life?", [page]))
    run(prompts.missing_info("battery life?", [page], 2))
    run(prompts.read_page("battery life?", page, tool="s"))
    run(prompts.rewrite("battery life?", corpus="manuals", tool="rag"))
    run(prompts.compose("battery life?", [page], tool="d"))
    run(prompts.answer("battery life?", [page], [page]))


def offline_or_no_restatement(request: LLMRequest) -> str:
    """The offline provider's replies; it is never asked to rewrite (Prompts.rewrite skips it)."""
    return "" if request.purpose is Purpose.REWRITE else respond(request)


def test_request_facts_are_exactly_the_template_variables() -> None:
    client = RecordingClient(offline_or_no_restatement)
    ask_every_purpose(Prompts(client))
    assert [r.purpose for r in client.requests] == TEMPLATED
    for request in client.requests:
        assert set(request.facts) == PURPOSE_VARIABLES[request.purpose], request.purpose
        assert request.prompt == templates.render(
            default_template(request.purpose).read_text(encoding="utf-8"), request.facts
        )


def test_passages_reach_templates_with_every_source_key() -> None:
    client = RecordingClient()
    run(Prompts(client).gatekeeper("q", [Passage("t", (Source("doc.md"),), "1:x", True)]))
    assert client.requests[0].facts["passages"] == [
        {
            "text": "t",
            "sources": [{"document": "doc.md", "page": None, "title": None, "heading": None}],
            "key": "1:x",
            "guaranteed": True,
        }
    ]


def test_a_templates_argument_beats_the_pipeline_which_beats_the_default(
    tmp_path: Path,
) -> None:
    (tmp_path / "answer.j2").write_text("PIPELINE {{ question }}", encoding="utf-8")
    overrides = {"answer": TemplateRef(path=tmp_path / "answer.j2")}
    configured = pipeline(tmp_path, llm=LLMConfig(templates=overrides))
    client = RecordingClient()
    prompts = Prompts(client, configured)
    run(prompts.answer("q?", [], []))
    run(prompts.answer("q?", [], [], template=TemplateRef(inline="OWN {{ question }}")))
    run(Prompts(client).answer("q?", [], []))
    first, second, third = (r.prompt for r in client.requests)
    assert (first, second) == ("PIPELINE q?", "OWN q?")
    assert third.startswith("Answer the user's question")


def test_a_template_that_fails_to_render_names_itself_and_its_variables() -> None:
    prompts = Prompts(RecordingClient())
    broken = TemplateRef(inline="{{ questoin }}")
    with pytest.raises(PromptTemplateError) as caught:
        run(prompts.gatekeeper("q", [], template=broken))
    message = str(caught.value)
    assert "'questoin' is undefined" in message and "It receives: passages, question" in message


def test_extraction_leaves_out_nulls_and_does_not_enforce_required() -> None:
    client = RecordingClient(lambda request: '{"city": null, "country": "France"}')
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
        "required": ["city", "country"],
    }
    params = run(Prompts(client).extract(Purpose.EXTRACT, "in France", schema, tool="weather"))
    assert params == {"country": "France"}
    assert client.requests[0].facts["schema"] == schema  # the template shows the real schema


def test_extraction_still_checks_the_types() -> None:
    client = scripted(ScriptRule(reply={"count": "many"}))
    schema = {"type": "object", "properties": {"count": {"type": "integer"}}}
    with pytest.raises(LLMReplyError, match="extract reply for tool t"):
        run(Prompts(client).extract(Purpose.EXTRACT, "x", schema, tool="t"))


def test_known_values_come_from_the_pipelines_lookup_tables(tmp_path: Path) -> None:
    (tmp_path / "models.yaml").write_text("- {sku: A-1}\n- {sku: B-2}\n", encoding="utf-8")
    configured = pipeline(tmp_path, lookup_tool(Path("models.yaml"), "sku"))
    client = RecordingClient()
    run(Prompts(client, configured).extract(Purpose.EXTRACT, "x", {"type": "object"}, tool="t"))
    assert client.requests[0].facts["known_values"] == {"sku": ["A-1", "B-2"]}


def _extraction_prompt(tmp_path: Path, text: str) -> LLMRequest:
    (tmp_path / "models.yaml").write_text(
        "- {sku: KD-450}\n- {sku: KD-600X}\n- {sku: KW-620}\n", encoding="utf-8"
    )
    configured = pipeline(tmp_path, lookup_tool(Path("models.yaml"), "sku"))
    client = RecordingClient()
    schema = {"type": "object", "properties": {"products": {"type": "array"}}}
    run(Prompts(client, configured).extract(Purpose.DECOMPOSE, text, schema, tool="compare"))
    return client.requests[0]


def test_the_known_values_the_text_names_are_listed_instead_of_the_table(tmp_path: Path) -> None:
    request = _extraction_prompt(tmp_path, "Compare the kd450 and the KD-600X")
    assert sorted(request.facts["named_values"]["sku"]) == ["KD-450", "KD-600X"]
    [line] = [line for line in request.prompt.splitlines() if "the request names" in line]
    assert "KD-450" in line and "KD-600X" in line
    assert "KW-620" not in request.prompt  # the rest of the table is not listed


def test_the_whole_short_table_is_listed_when_the_text_names_no_value(tmp_path: Path) -> None:
    request = _extraction_prompt(tmp_path, "Compare the two dishwashers")
    assert request.facts["named_values"] == {}
    assert "- sku: KD-450, KD-600X, KW-620" in request.prompt


def test_the_extraction_prompt_ends_with_the_request(tmp_path: Path) -> None:
    request = _extraction_prompt(tmp_path, "Compare the KD-450 and the KD-600X")
    assert request.prompt.rstrip().endswith("Request: Compare the KD-450 and the KD-600X")


def test_suitability_without_candidates_makes_no_call() -> None:
    client = RecordingClient()
    assert run(Prompts(client).suitability("anything", [])) == {}
    assert client.requests == []


def test_a_suitability_reply_must_answer_for_every_tool() -> None:
    client = scripted(ScriptRule(reply={"a": True}))
    with pytest.raises(LLMReplyError, match="'b' is a required property"):
        run(Prompts(client).suitability("x", [tool("a"), tool("b")]))


def test_read_page_is_none_unless_found_with_an_answer() -> None:
    replies = iter(
        [
            '{"found": false, "answer": "x"}',
            '{"found": true, "answer": " "}',
            '{"found": true, "answer": "Yes."}',
        ]
    )
    prompts = Prompts(RecordingClient(lambda request: next(replies)))
    page = Passage("p")
    assert [run(prompts.read_page("q", page, tool="s")) for _ in range(3)] == [None, None, "Yes."]


def test_missing_info_is_limited_by_its_schema() -> None:
    client = scripted(ScriptRule(reply={"missing": ["a", "b", "c"]}))
    with pytest.raises(LLMReplyError, match="is too long"):
        run(Prompts(client).missing_info("q", [], 2))


def test_prompt_type_must_be_one_of_the_names() -> None:
    client = scripted(ScriptRule(reply={"type": "chitchat"}))
    with pytest.raises(LLMReplyError, match="'chitchat' is not one of"):
        run(Prompts(client).prompt_type("hi", [PromptType("question", "questions")]))


def test_the_prompt_tool_call_carries_its_facts_and_tool() -> None:
    client = RecordingClient(lambda request: "  done  ")
    facts = {"text": "t", "task": "t", "params": {}}
    context = [Passage("Warranty: two years.", (Source("p.md"),), key="1:spec")]

    def rendered(variables: object) -> str:
        return f"rendered {variables['context'][0]['text']}"  # type: ignore[index]

    reply = run(Prompts(client).tool(rendered, facts, context, tool="compat", subject="t"))
    sent = client.requests[0]
    assert (reply.text, reply.used, sent.purpose, sent.tool, sent.subject) == (
        "done",
        tuple(context),
        Purpose.TOOL,
        "compat",
        "t",
    )
    assert dict(sent.facts) == {**facts, "context": [context[0].to_json()]}
    assert (sent.prompt, sent.schema, sent.cut) == ("rendered Warranty: two years.", None, None)
