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


def test_t107_a_misspelt_retrieval_tool_is_refused_before_anything_runs(write) -> None:
    from .test_loader import problems

    path = write(
        """
cases:
  - name: typo
    turns:
      - message: Hello
        expect:
          retrieved: [{tool: prise, document: products.csv}]
"""
    )
    [(code, line, message)] = problems(path)
    assert (code, line) == ("T107", 7)
    assert "did you mean `price`?" in message


def test_a_retrieved_expectation_is_read_from_the_case_file(write) -> None:
    from runner.testing import load_case_file
    from runner.testing.loader import cached_pipeline_loader

    path = write(
        """
cases:
  - name: pinned
    turns:
      - message: Hello
        expect:
          retrieved: [{tool: price, document: products.csv, page: 2, top: 3}]
"""
    )
    case_file, _ = load_case_file(path, cached_pipeline_loader())
    expect = case_file.cases[0].turns[0].expect
    assert expect.retrieved == (RetrievedExpect("price", "products.csv", 2, 3),)
