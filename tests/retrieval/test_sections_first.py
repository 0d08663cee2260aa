"""A search's top_k pages span as many sections as it found: the best page of each section
first, a section's further pages only when no other section is left (runner/retrieval/corpus.py,
`sections_first`)."""

from __future__ import annotations

from pathlib import Path

from runner.retrieval import open_corpus
from runner.retrieval.corpus import ScoredPage, sections_first
from runner.retrieval.pages import Page

from .conftest import folder_pipeline

LONG_SECTION = " ".join(
    f"Step {number}: descale the kettle with citric acid and rinse the descale residue."
    for number in range(1, 13)
)
MANUAL = f"""# Kettle

## Descaling

{LONG_SECTION}

## Cleaning

Wipe the outside; descale it monthly when the water is hard.

## Warranty

Two years.
"""


def kettle_index(tmp_path: Path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "kettle.md").write_text(MANUAL, encoding="utf-8")
    return open_corpus(folder_pipeline(tmp_path, folder, max_words=40), "docs")


def test_the_long_section_really_spans_several_pages(tmp_path: Path) -> None:
    pages = kettle_index(tmp_path).pages()
    assert sum(page.heading == "Descaling" for page in pages) >= 3


def test_a_search_returns_the_best_page_of_each_section_before_a_second_of_any(
    tmp_path: Path,
) -> None:
    found = kettle_index(tmp_path).search("descale", 2)
    assert [hit.page.heading for hit in found] == ["Descaling", "Cleaning"]


def test_a_section_s_further_pages_fill_top_k_when_no_other_section_matches(
    tmp_path: Path,
) -> None:
    found = kettle_index(tmp_path).search("citric acid rinse", 3)
    assert [hit.page.heading for hit in found] == ["Descaling"] * 3
    assert len({hit.page.node_id for hit in found}) == 3


def page(number: int, heading: str, document: str = "a.md") -> Page:
    return Page(f"{document}#{number}", document, number, "A", heading, "text")


def test_pages_keep_their_score_order_within_the_firsts_and_the_further_ones() -> None:
    hits = [
        ScoredPage(page(1, "One"), 0.9),
        ScoredPage(page(2, "One"), 0.8),
        ScoredPage(page(3, "Two"), 0.7),
        ScoredPage(page(4, "One"), 0.6),
        ScoredPage(page(5, "Two"), 0.5),
        ScoredPage(page(1, "One", "b.md"), 0.4),  # another document's section of that name
    ]
    ordered = [(hit.page.document, hit.page.page) for hit in sections_first(hits)]
    assert ordered == [("a.md", 1), ("a.md", 3), ("b.md", 1), ("a.md", 2), ("a.md", 4), ("a.md", 5)]


def test_sections_of_one_heading_under_different_parents_are_different_sections() -> None:
    first = Page("a.md#1", "a.md", 1, "A", "Examples", "text", path=("open()",))
    second = Page("a.md#2", "a.md", 2, "A", "Examples", "text", path=("open()",))
    other = Page("a.md#3", "a.md", 3, "A", "Examples", "text", path=("close()",))
    hits = [ScoredPage(first, 0.9), ScoredPage(second, 0.8), ScoredPage(other, 0.7)]
    assert [hit.page.page for hit in sections_first(hits)] == [1, 3, 2]
