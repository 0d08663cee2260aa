"""The retrieval tool kinds on a real corpus index, with a recording stand-in for Prompts:
retrieve, search (C31, C32), neighbor_search (C29) and deep_search (C1, C16, C20e, C28, C29)."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest

from runner.config.model import Corpus, LLMConfig, NeighborSearchOptions, Output, ScriptRule
from runner.engine.protocols import ContextRequiredError
from runner.engine.results import PromptAndContext, ReasonedDecision, ResultKind, SubtaskDecision
from runner.engine.task import Task
from runner.llm import build_client
from runner.llm.client import ProviderClient
from runner.llm.prompts import Prompts
from runner.llm.types import Purpose
from runner.sources import Source
from runner.tools.base import ToolBuildError

from .conftest import (
    answer_when,
    deep,
    neighbors,
    rag,
    run,
    search,
    subtask,
)


def scripted(*rules: ScriptRule) -> ProviderClient:
    return build_client(LLMConfig(provider="scripted", script=rules), environ={})


def execute(harness, name: str, task: Task, buffer: dict | None = None):
    tool = harness.tools[name]
    env = harness.env(task, buffer=buffer)
    if buffer is not None:
        return run(tool.execute_with_prior_context(env.text, buffer, env))
    return run(tool.execute(env.text, env))


def read_pages(harness) -> list[str]:
    return [call["page"] for call in harness.prompts.of(Purpose.READ_PAGE)]


def retrieved(*page_ids: str, task_no: str = "1") -> dict[str, tuple[PromptAndContext, ...]]:
    """A buffer holding what the retrieval tool found on the root task."""
    result = PromptAndContext("q", "pages…", sources=(), data={"pages": list(page_ids)})
    return {f"{task_no}:manual_rag": (result,)}


# --- retrieve -------------------------------------------------------------------------------


def test_retrieve_returns_top_k_pages_as_context_with_their_sources(harness) -> None:
    h = harness(rag(top_k=2))
    result = execute(h, "manual_rag", Task("1", "How do I empty the toaster's crumb tray?"))
    assert result.kind is ResultKind.CONTEXT
    assert result.sources[0] == Source("toaster.md", 2, "Toaster Manual", "Crumb tray")
    assert len(result.sources) == 2
    assert result.data["pages"][0] == "toaster.md#2"
    assert result.text.startswith("[toaster.md, page 2] Toaster Manual › Crumb tray\n## Crumb tray")


def _recording_search_threads(monkeypatch) -> list[str]:
    from runner.retrieval.corpus import CorpusIndex

    threads: list[str] = []
    search_pages = CorpusIndex.search

    def recording(self, *args: Any, **kwargs: Any):
        threads.append(threading.current_thread().name)
        return search_pages(self, *args, **kwargs)

    monkeypatch.setattr(CorpusIndex, "search", recording)
    return threads


def test_retrieve_searches_off_the_event_loop(harness, monkeypatch) -> None:
    # a vector or hybrid search runs the embedding model: on the loop it would stall a service
    threads = _recording_search_threads(monkeypatch)
    execute(harness(rag()), "manual_rag", Task("1", "crumb tray"))
    assert threads and "MainThread" not in threads  # the loop runs on the main thread


def test_search_searches_off_the_event_loop(harness, monkeypatch) -> None:
    threads = _recording_search_threads(monkeypatch)
    execute(harness(search()), "manual_search", Task("1", "crumb tray"))
    assert threads and "MainThread" not in threads


def test_retrieve_honours_its_output_setting(harness) -> None:
    h = harness(rag(top_k=1, output=Output.GUARANTEED))
    assert execute(h, "manual_rag", Task("1", "crumb tray")).kind is ResultKind.GUARANTEED


def test_retrieve_with_nothing_found_is_empty_context(harness) -> None:
    result = execute(harness(rag()), "manual_rag", Task("1", "xylophone"))
    assert result.is_empty and result.data["pages"] == []


def test_unknown_corpus_fails_the_build_with_the_fix(harness) -> None:
    broken = replace(rag(), options=replace(rag().options, corpus="faq"))
    with pytest.raises(ToolBuildError, match=r"corpus 'faq' is not defined \(corpora: manuals\)"):
        harness(broken)


# --- search: C32 ----------------------------------------------------------------------------


def test_c32_search_answers_a_coordinator_as_guaranteed_context(harness) -> None:
    h = harness(rag(), search(top_k=3))
    h.prompts.read = answer_when("citric", "Descale with citric acid every four weeks.")
    result = execute(h, "manual_search", subtask("descaling citric acid", "1.1.s"))
    assert result.kind is ResultKind.GUARANTEED
    assert result.text == "[kettle.md, page 3] Descale with citric acid every four weeks."
    assert result.sources == (Source("kettle.md", 3, "Kettle Manual", "Descaling"),)
    assert result.data["pages"] == ["kettle.md#3"]


def test_c32_search_returns_empty_context_when_no_page_answers(harness) -> None:
    h = harness(rag(), search(top_k=3))
    result = execute(h, "manual_search", subtask("warranty", "1.1.s"))
    assert result.kind is ResultKind.CONTEXT and result.is_empty
    assert len(read_pages(h)) == 2  # both warranty pages were read


def test_c32_search_reads_candidate_pages_concurrently(harness) -> None:
    h = harness(rag(), search(top_k=3))
    in_flight = {"now": 0, "most": 0}
    original = h.prompts.read_page

    async def read_page(*args: Any, **kwargs: Any) -> str | None:
        in_flight["now"] += 1
        in_flight["most"] = max(in_flight["most"], in_flight["now"])
        await asyncio.sleep(0)  # every gathered read starts before the first one ends
        in_flight["now"] -= 1
        return await original(*args, **kwargs)

    h.prompts.read_page = read_page  # type: ignore[method-assign]
    execute(h, "manual_search", subtask("kettle water", "1.1.s"))
    assert in_flight["most"] == 3


def test_search_on_the_normal_branch_returns_pages_without_reading(harness) -> None:
    h = harness(rag(), search(top_k=2))
    result = execute(h, "manual_search", Task("1", "warranty"))
    assert result.kind is ResultKind.CONTEXT
    assert {s.document for s in result.sources} == {"kettle.md", "toaster.md"}
    assert h.prompts.calls == []


# --- search: C31 ----------------------------------------------------------------------------


def test_c31_more_candidates_than_the_limit_reads_no_page(harness) -> None:
    h = harness(rag(), search(top_k=1, limit=1))
    result = execute(h, "manual_search", subtask("warranty", "1.1.s"))  # 2 candidate pages
    assert read_pages(h) == []
    assert result.kind is ResultKind.CONTEXT  # plain context, not an answer
    assert result.data["candidates"] == 2
    assert result.data["pages"] in (["kettle.md#4"], ["toaster.md#3"])  # top_k of them
    [(event, fields)] = [(e, f) for e, f in h.events if e != "retrieval"]
    assert event == "warning" and "max_brute_force_page_count 1" in fields["message"]


def test_c31_unread_pages_carry_the_meaning_of_a_corpus_with_page_vectors(harness) -> None:
    # the answer reads them by meaning, as a deep search reads the pages it reads
    h = harness(rag(), search(top_k=1, limit=1))
    index = h.tools["manual_search"].index
    index.vectors = SimpleNamespace(model="all-MiniLM-L6-v2", precision="int8")
    result = execute(h, "manual_search", subtask("warranty", "1.1.s"))
    assert result.data["meaning"] == {
        "model": "all-MiniLM-L6-v2",
        "precision": "int8",
        "first": None,  # a keyword search's first page is the words', not meaning's
    }


def test_c31_unread_pages_of_a_corpus_without_page_vectors_carry_no_meaning(harness) -> None:
    h = harness(rag(), search(top_k=1, limit=1))
    result = execute(h, "manual_search", subtask("warranty", "1.1.s"))
    assert "meaning" not in result.data


def test_c31_candidates_within_the_limit_are_read(harness) -> None:
    h = harness(rag(), search(top_k=3, limit=2))
    execute(h, "manual_search", subtask("warranty", "1.1.s"))
    assert sorted(read_pages(h)) == ["kettle.md#4", "toaster.md#3"]


def test_c31_limit_set_never_scans_every_page(harness) -> None:
    h = harness(rag(), search(top_k=3, limit=50))
    result = execute(h, "manual_search", subtask("xylophone", "1.1.s"))
    assert read_pages(h) == [] and result.is_empty


def test_c31_no_limit_and_no_candidates_scans_every_page(harness) -> None:
    h = harness(rag(), search(top_k=3))
    h.prompts.read = answer_when("counter", "Leave ten centimetres around appliances.")
    result = execute(h, "manual_search", subtask("xylophone", "1.1.s"))
    assert len(read_pages(h)) == 11  # every page of the corpus
    assert result.data["full_scan"] is True
    assert result.sources == (Source("zebra-notes.md", 1, "Counter notes", "Counter notes"),)


# --- neighbor_search: C29's cheap half --------------------------------------------------------


def test_neighbor_search_reads_the_pages_around_the_retrieved_ones(harness) -> None:
    h = harness(rag(), search(), neighbors(), retrieval_tool="manual_rag")
    h.prompts.read = answer_when("citric", "Citric acid, every four weeks.")
    result = execute(h, "manual_neighbors", subtask("descaling", "1.1.n"), retrieved("kettle.md#2"))
    assert read_pages(h) == ["kettle.md#1", "kettle.md#3"]
    assert result.kind is ResultKind.GUARANTEED
    assert result.sources == (Source("kettle.md", 3, "Kettle Manual", "Descaling"),)


def test_neighbor_search_leaves_out_pages_already_in_context(harness) -> None:
    h = harness(rag(), neighbors(), retrieval_tool="manual_rag")
    execute(h, "manual_neighbors", subtask("q", "1.1.n"), retrieved("kettle.md#2", "kettle.md#3"))
    assert read_pages(h) == ["kettle.md#1", "kettle.md#4"]


def test_neighbor_search_stops_at_the_document_boundary(harness) -> None:
    h = harness(rag(), neighbors(window=2), retrieval_tool="manual_rag")
    execute(h, "manual_neighbors", subtask("q", "1.1.n"), retrieved("toaster.md#1"))
    assert read_pages(h) == ["toaster.md#2", "toaster.md#3"]


def test_neighbor_search_reads_only_the_source_tools_pages(harness) -> None:
    h = harness(rag(), neighbors(), retrieval_tool="manual_rag")
    other = {"1:lookup": (PromptAndContext("q", "row", data={"pages": ["kettle.md#2"]}),)}
    result = execute(h, "manual_neighbors", subtask("q", "1.1.n"), other)
    assert read_pages(h) == [] and result.is_empty


def test_neighbor_search_with_no_answer_is_empty_context(harness) -> None:
    h = harness(rag(), neighbors(), retrieval_tool="manual_rag")
    result = execute(h, "manual_neighbors", subtask("q", "1.1.n"), retrieved("kettle.md#2"))
    assert result.kind is ResultKind.CONTEXT and result.is_empty


def test_neighbor_search_on_the_normal_branch_returns_pages_without_reading(harness) -> None:
    h = harness(rag(), neighbors(), retrieval_tool="manual_rag")
    result = execute(h, "manual_neighbors", Task("1", "q"), retrieved("toaster.md#2"))
    assert [s.page for s in result.sources] == [1, 3]
    assert h.prompts.calls == []


def test_c20c_neighbor_search_without_the_buffer_is_an_error(harness) -> None:
    h = harness(rag(), neighbors(), retrieval_tool="manual_rag")
    with pytest.raises(ContextRequiredError):
        execute(h, "manual_neighbors", subtask("q", "1.1.n"))


def test_neighbor_search_needs_a_source_tool(harness) -> None:
    with pytest.raises(ToolBuildError, match="set `source_tool:` or the pipeline's"):
        harness(rag(), neighbors())


def test_neighbor_search_must_share_its_source_tools_corpus(harness, tmp_path) -> None:
    tool = neighbors(source_tool="manual_rag")
    other = replace(tool, options=NeighborSearchOptions("other", source_tool="manual_rag"))
    corpora = {
        "manuals": Corpus("manuals", tmp_path / "corpus" / "appliances"),
        "other": Corpus("other", tmp_path / "corpus" / "appliances"),
    }
    with pytest.raises(ToolBuildError, match="is not the corpus of its source tool"):
        harness(rag(), other, corpora=corpora)


# --- deep_search: C28, C29, C16, C20e -------------------------------------------------------


def deep_harness(harness, neighbor_tool: str | None = "manual_neighbors"):
    return harness(rag(), search(), neighbors(), deep(neighbor_tool), retrieval_tool="manual_rag")


def decompose(h, task: Task, buffer: dict | None = None) -> Task:
    return run(h.tools["deep_search"].decompose(task, h.env(task, buffer=buffer)))


def test_c29_each_missing_piece_becomes_a_neighbour_and_a_conditional_search(harness) -> None:
    h = deep_harness(harness)
    h.prompts.missing = ["descaling interval", "crumb tray cleaning"]
    task = Task("1", "How do I look after my kettle and toaster?")
    assert decompose(h, task) is task  # C2: changed in place
    rows = [
        (s.task_no, s.task_prompt, s.required_tool_names, s.conditional) for s in task.sub_tasks
    ]
    assert rows == [
        ("1.1.n", "descaling interval", {"manual_neighbors"}, False),
        ("1.1.s", "descaling interval", {"manual_search"}, True),
        ("1.2.n", "crumb tray cleaning", {"manual_neighbors"}, False),
        ("1.2.s", "crumb tray cleaning", {"manual_search"}, True),
    ]


def test_c29_without_a_neighbour_tool_only_unconditional_searches(harness) -> None:
    h = deep_harness(harness, neighbor_tool=None)
    h.prompts.missing = ["descaling interval"]
    task = decompose(h, Task("2", "q"))
    assert [(s.task_no, s.conditional) for s in task.sub_tasks] == [("2.1.s", False)]


def test_c1_nothing_missing_leaves_the_task_unchanged(harness) -> None:
    h = deep_harness(harness)
    task = Task("1", "q")
    before = task.to_json()
    assert decompose(h, task).to_json() == before


def test_c28_missing_info_reads_the_question_and_the_primary_context(harness) -> None:
    h = deep_harness(harness)
    buffer = {
        "1:manual_rag": (PromptAndContext("q", "kettle pages", sources=(Source("kettle.md", 1),)),),
        "1:empty": (PromptAndContext("q", ""),),
    }
    task = Task("1.1", "own question", prompt_context="the parent's text")
    decompose(h, task, buffer)
    call = h.prompts.of(Purpose.MISSING_INFO)[0]
    assert call["question"] == "own question"  # C20b: never prompt_context
    assert [(p.text, p.key, p.sources) for p in call["passages"]] == [
        ("kettle pages", "1:manual_rag", (Source("kettle.md", 1),))
    ]


def test_deep_search_max_missing_bounds_the_pairs(harness) -> None:
    h = harness(rag(), search(), neighbors(), deep(max_missing=1), retrieval_tool="manual_rag")
    h.prompts.missing = ["a", "b", "c"]
    assert [s.task_no for s in decompose(h, Task("1", "q")).sub_tasks] == ["1.1.n", "1.1.s"]


def decide(h, parent: Task, task_no: str, completed: dict) -> SubtaskDecision:
    """The decision alone (a ReasonedDecision's value)."""
    nxt = parent.find(task_no)
    assert nxt is not None
    reply = h.tools["deep_search"].decide_conditional(parent, nxt, completed, h.env(parent))
    return reply.value if isinstance(reply, ReasonedDecision) else reply


def test_c29_search_skipped_when_its_neighbour_search_found_something(harness) -> None:
    h = deep_harness(harness)
    h.prompts.missing = ["a", "b"]
    parent = decompose(h, Task("1", "q"))
    completed = {
        "1.1.n:manual_neighbors": (PromptAndContext("a", "found on page 3"),),
        "1.2.n:manual_neighbors": (PromptAndContext("b", "  "),),
    }
    assert decide(h, parent, "1.1.s", completed) is SubtaskDecision.SKIP
    assert decide(h, parent, "1.2.s", completed) is SubtaskDecision.RUN
    assert decide(h, parent, "1.1.n", completed) is SubtaskDecision.RUN
    skipped = h.tools["deep_search"].decide_conditional(
        parent, parent.find("1.1.s"), completed, h.env(parent)
    )
    assert skipped.reason == (
        "the neighbour search 1.1.n already found something, so no full search"
    )


def test_c28_supplement_is_composed_from_its_own_subtasks_as_guaranteed_context(harness) -> None:
    h = deep_harness(harness)
    h.prompts.missing = ["a", "b"]
    parent = decompose(h, Task("1", "What about both?"))
    kettle, toaster = Source("kettle.md", 3), Source("toaster.md", 2)
    buffer = {
        "1:manual_rag": (PromptAndContext("q", "primary pages"),),
        "1.1.n:manual_neighbors": (PromptAndContext("a", "answer A", True, (kettle,)),),
        "1.2.n:manual_neighbors": (PromptAndContext("b", ""),),
        "1.2.s:manual_search": (PromptAndContext("b", "answer B", True, (toaster, kettle)),),
    }
    result = execute(h, "deep_search", parent, buffer)
    compose = h.prompts.of(Purpose.COMPOSE)
    assert len(compose) == 1 and compose[0]["question"] == "What about both?"
    assert [a.text for a in compose[0]["answers"]] == ["answer A", "answer B"]
    assert result.kind is ResultKind.GUARANTEED
    assert result.text == "answer A + answer B"
    assert result.sources == (kettle, toaster)


def test_c33_supplement_sources_are_only_the_pages_its_composed_text_cites(harness) -> None:
    # the real Prompts: the compose template numbers the answers (a search result of several
    # pages as one answer per page) and the reply's [n] markers choose the sources
    h = deep_harness(harness)
    h.prompts.missing = ["a", "b"]
    parent = decompose(h, Task("1", "What about both?"))
    kettle, toaster, oven = Source("kettle.md", 3), Source("toaster.md", 2), Source("oven.md", 1)
    buffer = {
        "1.1.n:manual_neighbors": (
            PromptAndContext("a", "[kettle.md, page 3] Descale monthly.", True, (kettle,)),
        ),
        "1.2.s:manual_search": (
            PromptAndContext(
                "b",
                "[toaster.md, page 2] Three years.\n\n[oven.md, page 1] Ten years.",
                True,
                (toaster, oven),
            ),
        ),
    }
    reply = "Descale monthly [1]; the toaster warranty is three years [2]."
    client = scripted(ScriptRule(reply=reply, purpose="compose"))
    h.prompts = Prompts(client, h.pipeline)
    result = execute(h, "deep_search", parent, buffer)
    assert result.kind is ResultKind.GUARANTEED
    assert result.text == (
        "Descale monthly [kettle.md p. 3]; the toaster warranty is three years [toaster.md p. 2]."
    )
    assert result.sources == (kettle, toaster)  # not oven.md: the supplement does not use it
    assert [call.purpose for call in client.calls] == ["compose"]


def test_c33_a_supplement_citing_nothing_keeps_every_answers_sources(harness) -> None:
    h = deep_harness(harness)
    h.prompts.missing = ["a"]
    parent = decompose(h, Task("1", "q"))
    kettle, toaster = Source("kettle.md", 3), Source("toaster.md", 2)
    answers = "[kettle.md, page 3] Descale monthly.\n\n[toaster.md, page 2] Three years."
    buffer = {"1.1.n:manual_neighbors": (PromptAndContext("a", answers, True, (kettle, toaster)),)}
    h.prompts = Prompts(scripted(ScriptRule(reply="Monthly; three years.", purpose="compose")))
    result = execute(h, "deep_search", parent, buffer)
    assert result.text == "Monthly; three years."
    assert result.sources == (kettle, toaster)


def test_c28_nothing_found_makes_no_compose_call(harness) -> None:
    h = deep_harness(harness)
    h.prompts.missing = ["a"]
    parent = decompose(h, Task("1", "q"))
    result = execute(h, "deep_search", parent, {"1.1.n:manual_neighbors": ()})
    assert result.is_empty and h.prompts.of(Purpose.COMPOSE) == []


def test_c20c_deep_search_is_a_context_consumer(harness) -> None:
    h = deep_harness(harness)
    assert h.tools["deep_search"].activate_after_subtasks is True
    with pytest.raises(ContextRequiredError):
        execute(h, "deep_search", Task("1", "q"))


def test_deep_search_names_must_be_tools_of_the_domain(harness) -> None:
    with pytest.raises(ToolBuildError, match="`neighbor_search_tool: nope` names no tool"):
        harness(rag(), search(), deep("nope"), retrieval_tool="manual_rag")
