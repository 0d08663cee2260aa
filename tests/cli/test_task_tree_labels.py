"""What the task tree of `runner run`, `runner chat` and `runner test` says a tool left: its
items, and the sources they cite when a retrieval's one item quotes several pages (issue 22:
"1 item" when four pages were found said less than was so)."""

from __future__ import annotations

from runner.render import tool_label


def label(**fields: object) -> str:
    tool = {"name": "docs_rag", "key": "1:docs_rag", "reason": "retrieval", **fields}
    return tool_label(tool).plain


def test_a_retrieval_that_found_four_pages_says_so() -> None:
    assert (
        label(items=1, sources=4) == "docs_rag — retrieval, 1 item citing 4 sources  (1:docs_rag)"
    )


def test_a_result_citing_one_source_says_only_its_items() -> None:
    assert label(items=1, sources=1) == "docs_rag — retrieval, 1 item  (1:docs_rag)"


def test_a_result_from_before_sources_were_counted_still_reads() -> None:
    assert label(items=2) == "docs_rag — retrieval, 2 items  (1:docs_rag)"
