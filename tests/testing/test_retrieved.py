"""The `retrieved:` expectation: a document or page within the top k of a named tool."""

from __future__ import annotations

from typing import Any

from runner.testing.expect import check
from runner.testing.model import Expect, RetrievedExpect

RESULT: dict[str, Any] = {
    "retrieval": [
        {
            "task": "1",
            "tool": "handbook_rag",
            "corpus": "handbook",
            "query": "descale",
            "pages": [
                {
                    "rank": 1,
                    "document": "guides/descaling.md",
                    "page": 13,
                    "heading": "",
                    "score": 5.1,
                },
                {
                    "rank": 2,
                    "document": "guides/kettles.md",
                    "page": 2,
                    "heading": "",
                    "score": 4.6,
                },
            ],
        }
    ]
}


def retrieved(*wanted: RetrievedExpect) -> list[str]:
    return check(Expect(retrieved=wanted), RESULT)


def test_a_document_among_the_pages_passes() -> None:
    assert retrieved(RetrievedExpect("handbook_rag", "guides/kettles.md")) == []


def test_the_end_of_a_path_names_a_document() -> None:
    assert retrieved(RetrievedExpect("handbook_rag", "descaling.md", page=13, top=1)) == []


def test_a_document_below_the_top_k_fails_and_shows_what_was_returned() -> None:
    assert retrieved(RetrievedExpect("handbook_rag", "kettles.md", top=1)) == [
        "not retrieved: kettles.md in the top 1 of handbook_rag (it returned "
        "guides/descaling.md p. 13, guides/kettles.md p. 2)"
    ]


def test_the_wrong_page_fails() -> None:
    assert retrieved(RetrievedExpect("handbook_rag", "descaling.md", page=2)) != []


def test_a_tool_that_ran_no_retrieval_fails_naming_those_that_did() -> None:
    assert retrieved(RetrievedExpect("handbook_search", "descaling.md")) == [
        "retrieved: handbook_search ran no retrieval (retrievals by: handbook_rag)"
    ]


def test_a_domain_prefixed_tool_name_matches() -> None:
    assert retrieved(RetrievedExpect("support.handbook_rag", "descaling.md")) == []
