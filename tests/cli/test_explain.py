"""`runner explain`: the pipeline as a table, and why a session did what it did."""

from __future__ import annotations


def test_explain_pipeline_lists_each_tool_with_how_it_is_activated(cli, shop):
    result = cli("explain", shop)
    assert result.exit_code == 0, result.output
    table = result.stdout.split("Coordinators")[0]
    rows = {line.split()[0]: line for line in table.splitlines() if line.strip()}
    assert "coordinator_only" in rows["specs"]
    assert rows["specs"].rstrip().endswith("compare")  # forced by compare's subtasks (C13)
    assert "yes: 2 subtask templates, then itself" in rows["compare"]
    assert "skipped if 'spec' found something" in result.stdout


def test_c12_explain_session_says_why_each_coordinator_ran_or_was_skipped(cli, shop):
    assert cli("run", shop, "Compare the KD-450 and the KW-620", "--session", "e1").exit_code == 0
    result = cli("explain", shop, "--session", "e1")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Round 1: a new message: 'Compare the KD-450 and the KW-620'" in out
    assert "coordinator compare decomposed the task (C2): made subtasks 1.1.n, 1.2.n" in out
    assert "coordinator compare skipped: it already had its chance" in out
    assert "activation forced by required_tool_names" in out
    assert "specs ran (forced): context" in out
    assert "→ 1.1.n:specs" in out


def test_c16_explain_session_shows_each_conditional_decision_and_who_made_it(cli, shop):
    assert cli("run", shop, "Compare the KD-450 and the KW-620", "--session", "e1").exit_code == 0
    out = cli("explain", shop, "--session", "e1").stdout
    assert "conditional subtask 1.1.s: SKIP, decided by compare" in out


def test_c24_explain_session_goes_round_by_round_through_a_clarification(cli, shop):
    cli("run", shop, "What does it cost?", "--session", "e2")
    out = cli("explain", shop, "--session", "e2").stdout
    assert "price asked 'Which model do you mean? (for example KW-620)'" in out
    assert "waiting for the answer to" in out
    cli("run", shop, "KW-620", "--session", "e2")
    out = cli("explain", shop, "--session", "e2", "--llm-calls").stdout
    assert "Round 2: the answer to the pending question (C24): 'KW-620'" in out
    assert "price runs again with the answer 'KW-620'" in out
    assert "LLM answer on task 1 (scripted" in out


def test_explain_sessions_lists_the_stored_sessions(cli, shop):
    cli("run", shop, "What does it cost?", "--session", "listed")
    result = cli("explain", shop, "--sessions")
    assert result.exit_code == 0
    assert result.stdout.startswith("listed  waiting")


def test_state_alone_finds_the_store(cli, shop, tmp_path):
    store = tmp_path / "s.sqlite"
    cli("run", shop, "What does it cost?", "--session", "x", "--state", store)
    assert "Round 1" in cli("explain", "--session", "x", "--state", store).stdout


def test_an_unknown_session_is_an_error_that_says_what_to_do(cli, shop):
    cli("run", shop, "What does it cost?")
    result = cli("explain", shop, "--session", "nope")
    assert result.exit_code == 1
    assert "no session 'nope'" in result.stderr


def test_explain_needs_a_pipeline_or_a_session(cli):
    result = cli("explain")
    assert result.exit_code == 2
    assert "give a PIPELINE to explain" in result.output


def test_c13_explain_session_charges_each_llm_call_to_the_task_it_was_made_for(cli, shop):
    assert cli("run", shop, "Compare the KD-450 and the KW-620", "--session", "e3").exit_code == 0
    out = cli("explain", shop, "--session", "e3", "--llm-calls").stdout
    calls = [line.strip() for line in out.splitlines() if line.strip().startswith("LLM ")]
    assert calls, out
    assert all(" on task " in line for line in calls)
    # the subtasks are forced: no suitability call is charged to them (C13)
    assert not [line for line in calls if "suitability" in line and "task 1." in line]
    assert any(line.startswith("LLM decompose for compare on task 1 ") for line in calls)
