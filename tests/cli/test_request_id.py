"""`--request-id`: nothing runs twice (a round re-sent with a committed key returns its stored
result), and `--state postgresql://…` for run and explain."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from .conftest import result_json

ASK = "What does it cost?"
COMPARE = "Compare the KD-450 and the KW-620"


def test_a_round_re_sent_with_its_request_id_returns_the_stored_result(cli, shop):
    first = cli("run", shop, ASK, "--request-id", "k1", "--json")
    again = cli("run", shop, ASK, "--request-id", "k1", "--json")
    assert (first.exit_code, again.exit_code) == (3, 3)
    assert result_json(again) == result_json(first)
    assert "request 'k1' was committed already (round 1 of session" in again.stderr
    session = result_json(first)["session"]
    listed = cli("explain", "--sessions", "--state", shop.parent / ".runner" / "state.sqlite")
    assert f"{session}" in listed.stdout and "1 round" in listed.stdout


def test_a_request_id_reused_for_another_message_is_refused(cli, shop):
    assert cli("run", shop, ASK, "--request-id", "k1").exit_code == 3
    reused = cli("run", shop, COMPARE, "--request-id", "k1")
    assert reused.exit_code == 1
    assert "request id 'k1' was already used for another message" in reused.stderr


def test_the_stored_result_prints_as_the_round_did(cli, shop):
    first = cli("run", shop, COMPARE, "--request-id", "k2")
    again = cli("run", shop, COMPARE, "--request-id", "k2")
    assert again.exit_code == 0
    assert again.stdout.splitlines()[0] == first.stdout.splitlines()[0]
    assert "products.csv, KD-450" in again.stdout


def test_chat_sends_line_n_as_key_n_and_skips_lines_committed(cli, shop):
    first = cli("chat", shop, "--request-id", "c", input=f"{ASK}\n")
    assert "Which model do you mean?" in first.stdout
    session = first.stdout.split("session ")[-1].split()[0]
    # the same input again, one more line: line 1 is not asked again, line 2 answers it
    second = cli("chat", shop, "--request-id", "c", input=f"{ASK}\nthe kw-620\n")
    assert second.exit_code == 0, second.output
    assert "The KW-620 costs 449 EUR." in second.stdout
    assert f"session {session} saved" in second.stdout


def test_a_run_killed_after_its_commit_is_answered_from_the_store_when_re_sent(cli, shop):
    # the process dies after the round is committed and before anything is printed
    child = textwrap.dedent(
        f"""
        import os, sys
        from runner.sessions import base
        finish = base.SessionWriter.finish
        def finish_and_die(self, state, record, then=None):
            finish(self, state, record, then)
            os._exit(9)
        base.SessionWriter.finish = finish_and_die
        from runner.cli import main
        sys.argv = ["runner", "run", {str(shop)!r}, {ASK!r}, "--request-id", "k9", "--json"]
        main()
        """
    )
    killed = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True)
    assert killed.returncode == 9
    assert killed.stdout == ""
    resent = cli("run", shop, ASK, "--request-id", "k9", "--json")
    assert resent.exit_code == 3  # the question, not the question taken as its own answer
    data = result_json(resent)
    assert (data["round"], data["outcome"]) == (1, "clarification")


def test_run_and_explain_work_against_postgresql(cli, shop, postgres_url):
    asked = cli("run", shop, ASK, "--session", "s1", "--state", postgres_url, "--json")
    assert asked.exit_code == 3, asked.output
    answered = cli("run", shop, "the kw-620", "--session", "s1", "--state", postgres_url)
    assert answered.exit_code == 0, answered.output
    assert "The KW-620 costs 449 EUR." in answered.stdout
    explained = cli("explain", "--session", "s1", "--state", postgres_url)
    assert explained.exit_code == 0, explained.output
    assert "round 2" in explained.stdout.lower()


def test_runner_state_names_the_store_when_state_is_not_given(cli, shop, postgres_url, monkeypatch):
    monkeypatch.setenv("RUNNER_STATE", postgres_url)
    assert cli("run", shop, ASK, "--session", "s1").exit_code == 3
    assert not (shop.parent / ".runner" / "state.sqlite").exists()
    listed = cli("explain", "--sessions")
    assert "s1" in listed.stdout, listed.output
    assert json.loads(cli("run", shop, "kw-620", "--session", "s1", "--json").stdout)["round"] == 2


def test_a_run_on_a_session_another_process_holds_waits_for_it(cli, shop):
    import threading
    import time

    from runner.sessions import open_store

    assert cli("run", shop, ASK, "--session", "s1").exit_code == 3
    with open_store(str(shop.parent / ".runner" / "state.sqlite")) as store:
        held = store.try_lock("s1")  # a runner serve worker in the middle of a round on s1
        assert held is not None
        threading.Timer(0.3, held.release).start()
        started = time.monotonic()
        answered = cli("run", shop, "the kw-620", "--session", "s1")
        assert time.monotonic() - started >= 0.3
    assert answered.exit_code == 0, answered.output
    assert "The KW-620 costs 449 EUR." in answered.stdout
