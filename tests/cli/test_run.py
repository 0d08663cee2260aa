"""`runner run`: answers, clarification rounds, the result object, the trace, exit codes."""

from __future__ import annotations

from pathlib import Path

from .conftest import result_json, trace_events

COMPARE = "Compare the KD-450 and the KW-620"


def test_an_answer_exits_0_with_its_sources_and_the_task_tree(cli, shop):
    result = cli("run", shop, COMPARE)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("The KD-450 costs 100 EUR more than the KW-620.")
    assert "products.csv, KD-450" in out
    # which tools ran on which task and why; skipped conditionals marked
    assert "compare — after subtasks, gave the answer  (1:compare)" in out
    assert "1.1.n Specifications of KD-450  [done]" in out
    assert "specs — forced, 1 item  (1.1.n:specs)" in out
    assert "1.1.s Full details of KD-450  [skipped]" in out
    assert "session " in out


def test_json_prints_the_result_object_valid_against_its_schema(cli, shop):
    result = cli("run", shop, COMPARE, "--json")
    assert result.exit_code == 0, result.output
    data = result_json(result)
    assert data["outcome"] == "answer"
    assert len(data["session"]) == 12
    assert [child["task_no"] for child in data["tasks"]["children"]] == [
        "1.1.n",
        "1.2.n",
        "1.1.s",
        "1.2.s",
    ]


def test_trace_writes_json_lines_valid_against_the_trace_schema(cli, shop, tmp_path: Path):
    trace = tmp_path / "trace.jsonl"
    result = cli("run", shop, COMPARE, "--trace", trace)
    assert result.exit_code == 0, result.output
    events = trace_events(trace)
    assert events[0]["event"] == "round.start"
    assert events[-1]["event"] == "round.end"
    decisions = [e for e in events if e["event"] == "subtask.decision"]
    assert {(e["task"], e["decision"], e["decided_by"]) for e in decisions} == {
        ("1.1.s", "skip", "compare"),
        ("1.2.s", "skip", "compare"),
    }


def test_c24_a_question_exits_3_and_the_answer_continues_the_session(cli, shop, tmp_path):
    trace = tmp_path / "second.jsonl"
    asked = cli("run", shop, "What does it cost?", "--session", "s1", "--json")
    assert asked.exit_code == 3, asked.output
    assert result_json(asked)["question"] == "Which model do you mean? (for example KW-620)"

    answered = cli("run", shop, "the kw-620", "--session", "s1", "--json", "--trace", trace)
    assert answered.exit_code == 0, answered.output
    data = result_json(answered)
    assert (data["round"], data["answer"]) == (2, "The KW-620 costs 449 EUR.")
    assert data["sources"] == [{"document": "products.csv", "heading": "KW-620"}]
    assert [e["event"] for e in trace_events(trace) if e["event"].startswith("clarif")] == [
        "clarification.resume"
    ]


def test_human_output_of_a_question_says_how_to_answer_it(cli, shop):
    result = cli("run", shop, "What does it cost?", "--session", "s1")
    assert result.exit_code == 3
    assert "? Which model do you mean?" in result.stdout
    assert "--session s1" in result.stdout
    assert "price — suitability, asked a question" in result.stdout


def test_a_changed_pipeline_file_is_reported_when_the_session_continues(cli, shop):
    assert cli("run", shop, "What does it cost?", "--session", "s1").exit_code == 3
    shop.write_text(shop.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    result = cli("run", shop, "the KW-620", "--session", "s1")
    assert result.exit_code == 0, result.output
    assert "warning: the pipeline file" in result.stderr
    assert "changed since session 's1' was stored" in result.stderr


def test_state_names_another_session_store(cli, shop, tmp_path):
    store = tmp_path / "elsewhere" / "sessions.sqlite"
    assert cli("run", shop, COMPARE, "--state", store).exit_code == 0
    assert store.is_file()
    assert not (shop.parent / ".runner" / "state.sqlite").exists()


def test_llm_overrides_the_pipelines_provider(cli, shop, tmp_path):
    script = tmp_path / "script.yaml"
    script.write_text(
        "- {purpose: decompose, reply: {products: []}}\n"
        "- {purpose: suitability, reply: {compare: false, price: true}}\n"
        "- {purpose: answer, reply: from the script file}\n",
        encoding="utf-8",
    )
    result = cli("run", shop, "price of KD-450?", "--llm-script", script, "--json")
    assert result.exit_code == 0, result.output
    assert result_json(result)["answer"] == "from the script file"


def test_a_recorded_run_is_answered_again_from_its_cassette_with_replay(cli, shop, tmp_path):
    script = tmp_path / "script.yaml"
    script.write_text(
        "- {purpose: decompose, reply: {products: []}}\n"
        "- {purpose: suitability, reply: {compare: false, price: true}}\n"
        "- {purpose: answer, reply: recorded once}\n",
        encoding="utf-8",
    )
    cassette = tmp_path / "cassette.yaml"
    recorded = cli("run", shop, "price of KD-450?", "--llm-script", script, "--record", cassette)
    assert recorded.exit_code == 0, recorded.output
    replayed = cli("run", shop, "price of KD-450?", "--replay", cassette, "--json")
    assert replayed.exit_code == 0, replayed.output
    assert result_json(replayed)["answer"] == "recorded once"
    missed = cli("run", shop, "price of KD-600X?", "--replay", cassette, "--json")
    assert result_json(missed)["outcome"] == "error"
    assert "+price of KD-600X?" in result_json(missed)["error"]  # the diff of the nearest prompt


def test_an_error_is_one_readable_paragraph_and_exit_1(cli, shop):
    result = cli("run", shop, COMPARE, "--llm", "nonsense")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: --llm: unknown LLM provider 'nonsense'")
    assert "Traceback" not in result.output


def test_an_invalid_pipeline_reports_its_diagnostics_and_exits_1(cli, shop):
    shop.write_text(shop.read_text(encoding="utf-8").replace("kind: lookup", "kind: lookpu", 1))
    result = cli("run", shop, COMPARE)
    assert result.exit_code == 1
    assert "shop.yaml" in result.stderr
    assert "lookpu" in result.stderr
    assert "Traceback" not in result.output


def test_a_round_that_fails_exits_1_with_the_error(cli, shop, tmp_path):
    script = tmp_path / "broken.yaml"
    script.write_text("- {purpose: suitability, reply: not a JSON object}\n", encoding="utf-8")
    result = cli("run", shop, COMPARE, "--llm-script", script, "--json")
    assert result.exit_code == 1
    data = result_json(result)
    assert data["outcome"] == "error"
    assert "suitability" in data["error"]
