"""What a retrieval searches for besides the question: the LLM's restatement in the documents'
words (`rewrite: true`, purpose `rewrite`) and the documents' words a corpus's `synonyms:`
give for its users' words. Both are in the trace's `retrieval` event."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from runner.cli import main
from runner.config import load_pipeline, validate_file
from runner.explain.calls import worst_cases
from runner.retrieval import open_corpus
from runner.trace import validate_events

from .conftest import copy_corpus

QUESTION = "My kettle is all furred up inside, what now?"
RESTATED = "descale limescale citric acid"


def write(tmp_path: Path, *, provider: str = "scripted", rewrite: bool = True, **corpus: Any):
    copy_corpus(tmp_path)
    llm: dict[str, Any] = {"provider": provider}
    if provider == "scripted":
        llm |= {"script": [{"purpose": "rewrite", "reply": RESTATED}], "fallback": "offline"}
    pipeline = {
        "version": 1,
        "domain": "home",
        "llm": llm,
        "corpora": {"manuals": {"path": "corpus/appliances", **corpus}},
        "retrieval_tool": "manual_rag",
        "tools": [
            {"name": "manual_rag", "kind": "retrieve", "corpus": "manuals", "top_k": 1}
            | ({"rewrite": True} if rewrite else {})
        ],
    }
    path = tmp_path / "pipeline.yaml"
    path.write_text(yaml.safe_dump(pipeline, sort_keys=False), encoding="utf-8")
    return path


def events(path: Path, *questions: str) -> list[dict[str, Any]]:
    trace = path.with_name("trace.jsonl")
    for question in questions:
        result = CliRunner().invoke(main, ["run", str(path), question, "--trace", str(trace)])
        assert result.exit_code == 0, result.output
    found = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert validate_events(found) == []
    return found


def retrievals(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [event for event in found if event["event"] == "retrieval"]


def rewrite_calls(found: list[dict[str, Any]]) -> int:
    return sum(1 for e in found if e["event"] == "llm.call" and e["purpose"] == "rewrite")


def test_a_rewrite_searches_the_question_with_the_model_s_restatement(tmp_path: Path) -> None:
    [event] = retrievals(events(write(tmp_path), QUESTION))
    assert event["query"] == QUESTION and event["rewritten"] == RESTATED
    assert event["searched"] == f"{QUESTION} {RESTATED}"
    assert event["pages"][0]["heading"] == "Descaling"


def test_a_rewrite_is_one_llm_call_counted_with_the_others(tmp_path: Path) -> None:
    assert rewrite_calls(events(write(tmp_path), QUESTION)) == 1


def test_the_same_question_is_rewritten_once_while_runner_runs(tmp_path: Path) -> None:
    from runner.app import Runtime
    from runner.sessions import SessionStore

    runtime = Runtime.open(write(tmp_path), build_indexes=True)
    calls = []
    with SessionStore(tmp_path / "sessions.sqlite") as store:
        for _ in range(2):
            result = asyncio.run(runtime.conversation(store).say(QUESTION))
            calls.append(rewrite_calls(result.trace.events))
    runtime.close()
    assert calls == [1, 0]


def test_the_offline_provider_searches_the_question_as_asked(tmp_path: Path) -> None:
    found = events(write(tmp_path, provider="offline"), QUESTION)
    [event] = retrievals(found)
    assert rewrite_calls(found) == 0 and "rewritten" not in event and "searched" not in event


def test_explain_counts_the_rewrite_in_the_worst_case(tmp_path: Path) -> None:
    with_rewrite = worst_cases(load_pipeline(write(tmp_path)))
    assert all(bound.count.calls.get("rewrite") == 1 for bound in with_rewrite)


def test_synonyms_add_the_documents_words_for_the_users_words(tmp_path: Path) -> None:
    path = write(tmp_path, rewrite=False, synonyms={"furred up": "limescale"})
    [event] = retrievals(events(path, QUESTION))
    assert event["searched"] == f"{QUESTION} limescale"
    assert event["pages"][0]["heading"] == "Descaling"


def test_synonyms_match_whole_words_whatever_their_case(tmp_path: Path) -> None:
    path = write(tmp_path, rewrite=False, synonyms={"fur": "limescale"})
    index = open_corpus(load_pipeline(path), "manuals")
    assert index.expanded("Fur inside the kettle") == "Fur inside the kettle limescale"
    assert index.expanded("a furry kettle") == "a furry kettle"


def test_synonyms_can_live_in_a_file(tmp_path: Path) -> None:
    path = write(tmp_path, rewrite=False, synonyms="synonyms.yaml")
    (tmp_path / "synonyms.yaml").write_text("wipe: clear\nquicker: [faster, speed]\n")
    index = open_corpus(load_pipeline(path), "manuals")
    assert index.expanded("quicker wipe") == "quicker wipe clear faster speed"


def test_a_synonyms_file_that_is_not_a_mapping_is_refused_in_that_file(tmp_path: Path) -> None:
    path = write(tmp_path, rewrite=False, synonyms="synonyms.yaml")
    (tmp_path / "synonyms.yaml").write_text("- wipe\n- clear\n")
    [diagnostic] = validate_file(path).diagnostics
    assert (diagnostic.code, diagnostic.file, diagnostic.line) == (
        "R132",
        tmp_path / "synonyms.yaml",
        1,
    )


def test_a_synonym_without_words_is_refused_where_it_is_written(tmp_path: Path) -> None:
    path = write(tmp_path, rewrite=False, synonyms="synonyms.yaml")
    (tmp_path / "synonyms.yaml").write_text("wipe: clear\nquicker: []\n")
    [diagnostic] = validate_file(path).diagnostics
    assert (diagnostic.code, diagnostic.line, diagnostic.col) == ("R132", 2, 10)
    assert "quicker: [faster, speed]" not in diagnostic.message and "[]" in diagnostic.message


def test_inline_synonyms_are_checked_by_the_schema(tmp_path: Path) -> None:
    path = write(tmp_path, rewrite=False, synonyms={"wipe": 3})
    [diagnostic] = validate_file(path).diagnostics
    assert diagnostic.code.startswith("S")
    assert diagnostic.path == ("corpora", "manuals", "synonyms", "wipe")
