"""`runner keep PIPELINE --session ID`: a conversation of `runner run` kept as a test case."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from runner.cli import main
from runner.playground import keep
from runner.playground.health import run_case_file


@pytest.fixture
def runner_in(support: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(support.parent)
    monkeypatch.delenv("RUNNER_STATE", raising=False)
    return CliRunner()


def converse(cli: CliRunner, session: str, *messages: str, record: str | None = None) -> None:
    for message in messages:
        extra = ["--record", record] if record else []
        result = cli.invoke(main, ["run", "support.yaml", message, "--session", session, *extra])
        assert result.exit_code in (0, 3), result.output


def test_a_conversation_is_printed_as_a_case_for_review(runner_in: CliRunner) -> None:
    converse(runner_in, "cli-1", "What warranty do I get on my washing machine?", "It is a KW-720X")
    result = runner_in.invoke(main, ["keep", "support.yaml", "--session", "cli-1", "--name", "w"])
    assert result.exit_code == 0, result.output
    assert "- name: w" in result.stdout and "- answer: It is a KW-720X" in result.stdout
    assert not Path("tests/playground.yaml").exists()


def test_save_writes_it_beside_the_pipeline_and_runner_test_passes_it(runner_in: CliRunner) -> None:
    converse(runner_in, "cli-2", "Compare the KD-450 and the KD-600X")
    result = runner_in.invoke(main, ["keep", "support.yaml", "--session", "cli-2", "--save"])
    assert result.exit_code == 0, result.output
    assert "tests/playground.yaml" in result.output
    tested = runner_in.invoke(main, ["test", "tests/playground.yaml"])
    assert tested.exit_code == 0, tested.output


def test_an_unknown_session_is_an_error_that_says_where_it_looked(runner_in: CliRunner) -> None:
    result = runner_in.invoke(main, ["keep", "support.yaml", "--session", "nope"])
    assert result.exit_code == 1
    assert "no session 'nope'" in result.output


def test_a_recorded_cassette_gives_a_real_models_case_its_replies(
    runner_in: CliRunner, support: Path
) -> None:
    converse(runner_in, "cli-3", "My dishwasher shows E24", record="tests/tape.yaml")
    from runner.config import load_pipeline
    from runner.sessions import open_store

    store = open_store(None, load_pipeline(support))
    rounds = [keep.KeptRound(r.message, r.result, r.trace) for r in store.rounds("cli-3")]
    store.close()
    target = support.parent / "tests" / "kept-from-a-cassette.yaml"
    kept = keep.keep(
        rounds,
        pipeline_path=support,
        provider="openai_like",  # as if a real model had answered: its replies are the tape's
        test_file=target,
        cassette=support.parent / "tests" / "tape.yaml",
    )
    assert kept.case["llm"] == {"cassette": "tape.yaml"}
    keep.save(kept)
    report = run_case_file(target)
    assert report.passed, report.text


def test_the_provider_is_the_one_the_traces_name() -> None:
    def round_by(provider: str) -> keep.KeptRound:
        call = {"event": "llm.call", "provider": provider}
        return keep.KeptRound("m", {"outcome": "answer"}, [call])

    assert keep.provider_of([round_by("offline")]) == "offline"
    assert keep.provider_of([round_by("offline"), round_by("openai_like")]) == "openai_like"
    assert keep.provider_of([keep.KeptRound("m", {})]) == "offline"
