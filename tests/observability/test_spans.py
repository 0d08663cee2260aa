"""A round as OpenTelemetry spans, read back from the SDK's in-memory exporter: the names and
attributes of the GenAI semantic conventions, nested as the task tree ran, runner's own
attributes under `runner.`, content only when opted in, and the GenAI client metrics.

The round: the support example on the offline LLM, "Is the KW-620 quiet? And what is the
descaling interval?", whose primary retrieval finds descaling pages that answer neither part
(none says how loud the KW-620 is or gives an interval), so the deep-search coordinator looks
for each part: two subtasks a part, the neighbours of the pages found, which do not answer it,
then a search of the handbook; the coordinator composes their results."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from runner import observability

from .conftest import QUESTION, Telemetry, run_round

# two subtasks a part: its neighbours (.n), then a search (.s)
SUBTASKS = ["1.1.n", "1.1.s", "1.2.n", "1.2.s"]


@pytest.fixture
def told(support: Path, tmp_path: Path) -> Iterator[Telemetry]:
    telemetry = Telemetry(content=False)
    run_round(support, tmp_path, telemetry)
    yield telemetry


def test_the_round_is_one_invoke_workflow_span_at_the_root(told):
    roots = [span for span in told.spans if span.parent is None]
    assert [span.name for span in roots] == ["invoke_workflow support"]
    assert roots[0].attributes["gen_ai.operation.name"] == "invoke_workflow"
    assert roots[0].attributes["gen_ai.agent.name"] == "support"
    assert roots[0].attributes["runner.outcome"] == "answer"
    assert roots[0].attributes["runner.round"] == 1


def test_every_span_is_of_one_trace_and_inside_its_parent_in_time(told):
    assert len({span.context.trace_id for span in told.spans}) == 1
    for span in told.spans:
        parent = told.parent_of(span)
        if parent is not None:
            assert parent.start_time <= span.start_time <= span.end_time <= parent.end_time


def test_subtask_spans_are_inside_the_task_that_made_them(told):
    tasks = {span.attributes["runner.task"]: span for span in told.named("task ")}
    assert sorted(tasks) == ["1", *SUBTASKS]
    for subtask in SUBTASKS:
        assert told.parent_of(tasks[subtask]) is tasks["1"]
        assert tasks[subtask].attributes["runner.task.owner"] == "deep_search"


def test_a_coordinator_is_an_invoke_agent_span_on_its_task(told):
    [agent] = told.named("invoke_agent ")
    assert agent.name == "invoke_agent deep_search"
    assert agent.attributes["gen_ai.agent.name"] == "deep_search"
    assert list(agent.attributes["runner.subtasks"]) == SUBTASKS
    assert told.parent_of(agent).attributes["runner.task"] == "1"


def test_each_tool_is_an_execute_tool_span_with_the_reason_it_ran(told):
    tools = {
        (span.attributes["runner.task"], span.attributes["gen_ai.tool.name"]): span
        for span in told.named("execute_tool ")
    }
    assert set(tools) == {
        ("1", "handbook_rag"),
        ("1.1.n", "handbook_neighbors"),
        ("1.1.s", "handbook_search"),
        ("1.2.n", "handbook_neighbors"),
        ("1.2.s", "handbook_search"),
        ("1", "deep_search"),
    }
    assert tools[("1", "handbook_rag")].attributes["runner.reason"] == "retrieval"
    assert tools[("1.1.s", "handbook_search")].attributes["runner.reason"] == "forced"
    assert tools[("1", "deep_search")].attributes["runner.reason"] == "deep_fallback"
    assert tools[("1", "handbook_rag")].attributes["gen_ai.operation.name"] == "execute_tool"
    for (task, _tool), span in tools.items():
        assert told.parent_of(span).attributes["runner.task"] == task


def test_each_retrieval_names_its_corpus_inside_its_tool(told):
    retrievals = told.named("retrieval ")
    assert len(retrievals) == 5  # the first search, and each subtask's
    for span in retrievals:
        assert span.name == "retrieval handbook"
        assert span.attributes["gen_ai.operation.name"] == "retrieval"
        assert span.attributes["gen_ai.data_source.id"] == "handbook"
        assert told.parent_of(span).attributes["gen_ai.tool.name"] == span.attributes["runner.tool"]


def test_each_llm_call_is_a_chat_span_with_model_usage_and_finish_reason(told, support):
    chats = told.named("chat ")
    assert len(chats) >= 5
    for span in chats:
        assert span.kind is SpanKind.CLIENT
        assert span.attributes["gen_ai.operation.name"] == "chat"
        assert span.attributes["gen_ai.request.model"] == "offline"
        assert span.attributes["gen_ai.usage.input_tokens"] > 0
        assert span.attributes["gen_ai.usage.output_tokens"] > 0
        assert list(span.attributes["gen_ai.response.finish_reasons"]) == ["stop"]


def test_a_call_hangs_under_the_step_it_was_made_for(told):
    def parent_name(purpose: str) -> str:
        [span] = [s for s in told.named("chat ") if s.attributes["runner.purpose"] == purpose]
        return told.parent_of(span).name

    assert parent_name("compose") == "execute_tool deep_search"
    assert parent_name("missing_info") == "invoke_agent deep_search"
    assert parent_name("suitability") == "task 1"
    assert parent_name("answer") == "invoke_workflow support"


def test_no_prompt_or_reply_is_in_the_spans_unless_opted_in(told):
    for span in told.spans:
        assert "gen_ai.input.messages" not in span.attributes
        assert "gen_ai.output.messages" not in span.attributes
        assert "gen_ai.retrieval.query.text" not in span.attributes
        assert QUESTION not in str(dict(span.attributes))


def test_opted_in_the_round_carries_its_message_and_answer(support, tmp_path):
    telemetry = Telemetry(content=True)
    result = run_round(support, tmp_path, telemetry)
    [root] = telemetry.named("invoke_workflow")
    assert QUESTION in root.attributes["gen_ai.input.messages"]
    [message] = json.loads(root.attributes["gen_ai.output.messages"])
    assert message["parts"][0]["content"] == result.answer
    queries = {span.attributes["gen_ai.retrieval.query.text"] for span in telemetry.named("retr")}
    assert QUESTION in queries


def test_token_usage_and_call_duration_are_recorded_as_genai_metrics(told):
    usage = told.metric_points("gen_ai.client.inference.tokens")  # the current conventions'
    assert {point.attributes["gen_ai.token.type"] for point in usage} == {"input", "output"}
    assert all(point.attributes["gen_ai.request.model"] == "offline" for point in usage)
    assert {point.attributes["gen_ai.token.modality"] for point in usage} == {"text"}
    assert told.metric_points("gen_ai.client.token.usage") == []  # the former, unless asked
    durations = told.metric_points("gen_ai.client.operation.duration")
    assert sum(point.count for point in durations) == len(told.named("chat "))


def test_a_round_that_failed_is_an_error_span_and_so_is_the_call_that_failed(support, tmp_path):
    script = tmp_path / "script.yaml"  # the gatekeeper's call finds no rule: the round fails
    script.write_text("- {purpose: suitability, reply: {troubleshooter: false}}\n", "utf-8")
    telemetry = Telemetry(content=False)
    result = run_round(support, tmp_path, telemetry, llm_script=script)
    assert result.outcome == "error"
    [root] = telemetry.named("invoke_workflow")
    assert root.status.status_code is StatusCode.ERROR
    assert root.attributes["error.type"] == "round_error"
    [failed] = [
        span for span in telemetry.named("chat ") if span.status.status_code.name == "ERROR"
    ]
    assert failed.attributes["error.type"] == "ScriptMissError"
    assert failed.attributes["runner.purpose"] == "gatekeeper"
    assert "gen_ai.response.finish_reasons" not in failed.attributes


def test_a_propagated_traceparent_makes_the_round_a_child_of_the_callers_span(support, tmp_path):
    trace_id, span_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    telemetry = Telemetry(content=False)
    with observability.within_trace({"traceparent": f"00-{trace_id}-{span_id}-01"}):
        run_round(support, tmp_path, telemetry)
    [root] = telemetry.named("invoke_workflow")
    assert format(root.context.trace_id, "032x") == trace_id
    assert format(root.parent.span_id, "016x") == span_id


# --- the current GenAI conventions (issue 32.2) -----------------------------------------------


def test_the_round_names_its_domain_as_the_conventions_now_say(told):
    [root] = told.named("invoke_workflow")
    assert root.attributes["gen_ai.operation.name"] == "invoke_workflow"
    assert root.attributes["gen_ai.agent.name"] == "support"
    assert "gen_ai.workflow.name" not in root.attributes
    rounds = told.metric_points("gen_ai.invoke_agent.duration")
    assert [point.attributes["gen_ai.agent.name"] for point in rounds] == ["support"]


def test_every_invoke_agent_span_names_its_provider(told):
    agents = told.named("invoke_agent ")
    assert agents
    assert {span.attributes["gen_ai.provider.name"] for span in agents} == {"offline"}


def test_a_call_asking_for_a_schema_says_json_and_the_answer_text(told):
    types = {
        span.attributes["runner.purpose"]: span.attributes["gen_ai.output.type"]
        for span in told.named("chat ")
    }
    assert types["suitability"] == "json"
    assert types["answer"] == "text"


def test_legacy_names_add_the_former_workflow_name_and_token_histogram(support, tmp_path):
    telemetry = Telemetry(content=False)
    telemetry.observer.legacy_names = True
    telemetry.observer.tokens = telemetry.observer_tokens_histogram()
    run_round(support, tmp_path, telemetry)
    [root] = telemetry.named("invoke_workflow")
    assert root.attributes["gen_ai.workflow.name"] == "support"
    assert telemetry.metric_points("gen_ai.client.token.usage")


def test_a_failed_span_carries_no_error_text_unless_content_is_opted_in(support, tmp_path):
    script = tmp_path / "script.yaml"  # the gatekeeper's call finds no rule: the miss quotes
    script.write_text("- {purpose: suitability, reply: {troubleshooter: false}}\n", "utf-8")
    for content in (False, True):
        telemetry = Telemetry(content=content)
        run_round(support, tmp_path, telemetry, "Is the KW-620 quiet?", llm_script=script)
        failed = [span for span in telemetry.spans if span.status.status_code.name == "ERROR"]
        assert len(failed) == 2
        for span in failed:
            described = str(span.status.description)
            assert ("KW-620" in described) is content, described
            assert "ScriptMissError" in described
