"""Retrieval you can see: every retrieval-kind tool records the ranked pages it returned, in the
trace, in `runner run --json` and with `--show-retrieval` (runner.retrieval.seen)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from jsonschema import Draft202012Validator

from runner.cli import main
from runner.trace import schema_problems, validate_events

from .test_deep_fallback import QUESTION, SCRIPT, write_pipeline

ROOT = Path(__file__).parents[2]


def run(*args: str):
    return CliRunner().invoke(main, ["run", *args])


def test_json_lists_each_retrieval_with_its_ranked_pages(tmp_path: Path) -> None:
    result = run(str(write_pipeline(tmp_path, SCRIPT)), QUESTION, "--json")
    assert result.exit_code == 0, result.output
    retrievals = json.loads(result.stdout)["retrieval"]
    first = retrievals[0]
    assert (first["tool"], first["corpus"], first["task"]) == ("manual_rag", "manuals", "1")
    assert first["query"] == QUESTION
    assert first["pages"] == [
        {
            "rank": 1,
            "document": "kettle.md",
            "page": 2,
            "heading": "Boiling",
            "score": first["pages"][0]["score"],
        }
    ]
    assert first["pages"][0]["score"] > 0


def test_the_deep_searches_retrievals_are_listed_too(tmp_path: Path) -> None:
    result = run(str(write_pipeline(tmp_path, SCRIPT)), QUESTION, "--json")
    tools = [r["tool"] for r in json.loads(result.stdout)["retrieval"]]
    assert "manual_neighbors" in tools and "manual_search" in tools


def test_a_neighbour_search_ranks_its_pages_without_scores(tmp_path: Path) -> None:
    result = run(str(write_pipeline(tmp_path, SCRIPT)), QUESTION, "--json")
    neighbours = [
        r for r in json.loads(result.stdout)["retrieval"] if r["tool"] == "manual_neighbors"
    ]
    pages = neighbours[0]["pages"]
    assert [p["rank"] for p in pages] == list(range(1, len(pages) + 1))
    assert all(p["score"] is None for p in pages)


def test_the_json_with_retrievals_is_valid_against_the_result_schema(tmp_path: Path) -> None:
    result = run(str(write_pipeline(tmp_path, SCRIPT)), QUESTION, "--json")
    assert schema_problems("result", json.loads(result.stdout), "result") == []


def test_the_trace_has_a_retrieval_event_per_retrieval(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    run(str(write_pipeline(tmp_path, SCRIPT)), QUESTION, "--trace", str(trace))
    events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert validate_events(events) == []
    retrievals = [e for e in events if e["event"] == "retrieval"]
    assert retrievals[0]["tool"] == "manual_rag"
    assert retrievals[0]["pages"][0]["document"] == "kettle.md"


def test_show_retrieval_prints_the_ranked_pages(tmp_path: Path) -> None:
    result = run(str(write_pipeline(tmp_path, SCRIPT)), QUESTION, "--show-retrieval")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"manual_rag (task 1) on manuals: {QUESTION!r} → 1 page" in out
    assert "1. kettle.md p. 2  score " in out
    assert "Boiling" in out


def test_without_show_retrieval_no_pages_are_listed(tmp_path: Path) -> None:
    result = run(str(write_pipeline(tmp_path, SCRIPT)), QUESTION)
    assert "retrieval:" not in result.stdout


def test_explain_session_shows_each_rounds_retrievals(tmp_path: Path) -> None:
    path = str(write_pipeline(tmp_path, SCRIPT))
    assert run(path, QUESTION, "--session", "seen").exit_code == 0
    result = CliRunner().invoke(main, ["explain", path, "--session", "seen"])
    assert result.exit_code == 0, result.output
    assert (
        f"manual_rag retrieved 1 page from manuals for {QUESTION!r}: 1. kettle.md p. 2 ("
        in result.stdout
    )


EVENT = {
    "event": "retrieval",
    "task": "1",
    "tool": "docs_rag",
    "corpus": "docs",
    "query": "wipe the cache",
    "searched": "wipe the cache clear",
    "evidence": {"first_page_cosine": 0.61, "agreement": 3, "top_k": 4},
    "pages": [{"rank": 1, "document": "a.md", "page": 1, "heading": "Cache", "score": 2.5}],
}


def test_a_retrieval_keeps_what_was_searched_and_the_gatekeeper_s_evidence() -> None:
    from runner.retrieval.seen import retrieval_events

    [record] = retrieval_events([EVENT])
    assert record["searched"] == "wipe the cache clear"
    assert record["evidence"] == EVENT["evidence"]
    schema = json.loads((ROOT / "schemas" / "result.schema.json").read_text(encoding="utf-8"))
    assert list(Draft202012Validator(schema["properties"]["retrieval"]).iter_errors([record])) == []


def test_a_retrieval_without_them_has_no_such_keys() -> None:
    from runner.retrieval.seen import retrieval_events

    plain = {key: value for key, value in EVENT.items() if key not in ("searched", "evidence")}
    [record] = retrieval_events([plain])
    assert "searched" not in record and "evidence" not in record


def test_show_retrieval_prints_what_was_searched_and_the_evidence() -> None:
    from runner.retrieval.seen import format_retrievals, retrieval_events

    shown = format_retrievals(retrieval_events([EVENT]))
    assert "  searched as 'wipe the cache clear'" in shown
    assert "cosine 0.61 with the first keyword page, 3 of its 4 keyword pages" in shown


def test_show_retrieval_names_the_ranking_the_evidence_is_of() -> None:
    from runner.retrieval.seen import format_retrievals, retrieval_events

    hybrid = {**EVENT, "evidence": {**EVENT["evidence"], "ranking": "hybrid"}}
    shown = format_retrievals(retrieval_events([hybrid]))
    assert (
        "cosine 0.61 with the first hybrid page, 3 of its 4 keyword pages among the vectors' best"
    ) in shown


PARTS_EVENT = {**EVENT, "query": "Is it quiet? And what is the interval?", "parts": ["Is it quiet"]}


def test_a_retrieval_keeps_the_parts_it_searched_on_their_own() -> None:
    from runner.retrieval.seen import retrieval_events

    [record] = retrieval_events([PARTS_EVENT])
    assert record["parts"] == ["Is it quiet"]
    schema = json.loads((ROOT / "schemas" / "result.schema.json").read_text(encoding="utf-8"))
    assert list(Draft202012Validator(schema["properties"]["retrieval"]).iter_errors([record])) == []
    assert schema_problems("trace", {**PARTS_EVENT, "seq": 1, "ms": 0.1}, "event") == []


def test_show_retrieval_names_each_part_searched_on_its_own() -> None:
    from runner.retrieval.seen import format_retrievals, retrieval_events

    shown = format_retrievals(retrieval_events([PARTS_EVENT]))
    assert "  a part its first pages left out, searched too: 'Is it quiet'" in shown
