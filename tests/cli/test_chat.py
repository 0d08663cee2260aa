"""`runner chat`: one round a line, clarifying questions answered inline, Ctrl-D ends."""

from __future__ import annotations

from runner.sessions import SessionStore


def test_chat_answers_a_clarifying_question_inline(cli, shop):
    result = cli("chat", shop, "--session", "c1", input="What does it cost?\nthe KW-620\n")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[:2] == [
        "you> What does it cost?",
        "? Which model do you mean? (for example KW-620)",
    ]
    assert "answer> the KW-620" in lines
    assert "The KW-620 costs 449 EUR." in lines
    assert "session c1 saved" in result.stdout


def test_end_of_input_ends_the_chat_and_the_session_stays_stored(cli, shop):
    assert cli("chat", shop, "--session", "c1", input="What does it cost?\n").exit_code == 0
    with SessionStore(shop.parent / ".runner" / "state.sqlite") as store:
        state, _version = store.load("c1")
    assert state.waiting
    # the pending question is answered by the next message, in `run` as well as in `chat`
    assert cli("run", shop, "KD-450", "--session", "c1").exit_code == 0


def test_blank_lines_are_not_messages(cli, shop):
    result = cli("chat", shop, input="\n\n")
    assert result.exit_code == 0
    assert "you>" not in result.stdout


def test_tree_shows_the_task_tree_after_each_answer(cli, shop):
    result = cli("chat", shop, "--tree", input="Compare the KD-450 and the KW-620\n")
    assert result.exit_code == 0, result.output
    assert "specs — forced, 1 item  (1.1.n:specs)" in result.stdout
