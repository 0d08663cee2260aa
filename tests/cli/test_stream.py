"""`runner run` and `runner chat` print the answer as the model writes it (`--stream`): the
shop pipeline's scripted LLM writes its answers a word at a time, as a model would."""

from __future__ import annotations

import asyncio
import io
import json

from rich.console import Console

from runner.app import Runtime
from runner.cli.streamed import AnswerPrinter
from runner.sessions import open_store

COMPARE = "Compare the KD-450 and the KW-620"
ANSWER = "The KD-450 costs 100 EUR more than the KW-620."


def test_the_printer_writes_the_answer_while_the_round_runs(shop, tmp_path):
    written = io.StringIO()
    printer = AnswerPrinter(Console(file=written), stream=True)
    with Runtime.open(shop) as runtime, open_store(str(tmp_path / "state.sqlite")) as store:
        talk = runtime.conversation(store)
        result = asyncio.run(talk.say(COMPARE, watch=printer.watch()))
        shown = printer.take()
        # what it wrote during the round is the answer, whole: nothing is left to print
        assert written.getvalue() == shown == result.answer == ANSWER
        assert printer.take() == ""


def test_run_with_stream_prints_the_answer_once_then_the_rest_as_usual(cli, shop):
    streamed = cli("run", shop, COMPARE, "--stream")
    plain = cli("run", shop, COMPARE, "--no-stream")
    assert streamed.exit_code == plain.exit_code == 0
    assert streamed.stdout.count(ANSWER) == 1
    assert streamed.stdout.splitlines()[:8] == plain.stdout.splitlines()[:8]


def test_json_output_is_never_streamed(cli, shop):
    result = cli("run", shop, COMPARE, "--stream", "--json")
    assert json.loads(result.stdout)["answer"] == ANSWER


def test_chat_with_stream_prints_each_answer_once(cli, shop):
    result = cli("chat", shop, "--stream", input=f"{COMPARE}\nWhat does the KW-620 cost?\n")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines.count(ANSWER) == 1
    assert lines.count("The KW-620 costs 449 EUR.") == 1
