"""A table cut across pages is found whole: the pages a tool's search chose come with the pieces
on the pages next to each, right after it and at its score, beyond top_k
(runner/retrieval/corpus.py, `with_table_pieces`; the pieces as pages.py cuts them,
`goes_on_with_table`)."""

from __future__ import annotations

from pathlib import Path

from runner.retrieval import open_corpus
from runner.retrieval.pages import Document, goes_on_with_table, paginate
from runner.tools.retrieve import by_parts

from .conftest import folder_pipeline

HEADER = "| Specification | KW-510S | KW-620 | KW-720X |\n|---|---|---|---|"
ROWS = [f"| Property {n} | {n} kg | {n + 1} kg | {n + 2} kg |" for n in range(4)]
NOISE = "| Noise, spin | 77 dB | 76 dB | 72 dB |"
MANUAL = f"""# Washing machines

## Technical specifications

{HEADER}
{NOISE}
{chr(10).join(ROWS)}
| Connectivity | none | none | Wi-Fi |

## Installing

Remove the transit bolts before the first wash. Keep them for moving the machine later.
"""


def manual_pages(max_words: int = 60):
    return paginate(Document("washer.md", MANUAL), max_words)


def manual_index(tmp_path: Path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "washer.md").write_text(MANUAL, encoding="utf-8")
    return open_corpus(folder_pipeline(tmp_path, folder, max_words=60), "docs")


def found(tmp_path: Path, query: str, top_k: int = 1):
    index = manual_index(tmp_path)
    return index.with_table_pieces(index.search(query, top_k))


def test_the_table_really_is_cut_across_pages() -> None:
    specs = [page for page in manual_pages() if page.heading == "Technical specifications"]
    assert len(specs) == 2
    assert NOISE in specs[0].text and "Connectivity" in specs[-1].text


def test_a_page_opening_with_the_table_s_header_again_goes_on_with_it() -> None:
    specs = [page for page in manual_pages() if page.heading == "Technical specifications"]
    assert goes_on_with_table(specs[0], specs[1])


def test_the_next_section_s_page_does_not_go_on_with_a_table() -> None:
    pages = manual_pages()
    last_specs = max(
        (page for page in pages if page.heading == "Technical specifications"),
        key=lambda page: page.page,
    )
    installing = next(page for page in pages if page.heading == "Installing")
    assert not goes_on_with_table(last_specs, installing)


def test_pages_of_a_section_cut_between_paragraphs_do_not_go_on_with_a_table() -> None:
    text = "# Guide\n\n## Care\n\n" + "\n\n".join(
        f"Paragraph {n} says how to care for the drum and the seal." for n in range(12)
    )
    care = [page for page in paginate(Document("care.md", text), 30) if page.heading == "Care"]
    assert len(care) >= 2
    assert not goes_on_with_table(care[0], care[1])


def test_a_search_that_finds_one_piece_of_a_table_returns_the_piece_next_to_it(
    tmp_path: Path,
) -> None:
    hits = found(tmp_path, "connectivity wi-fi")
    assert [hit.page.heading for hit in hits] == ["Technical specifications"] * 2
    assert any(NOISE in hit.page.text for hit in hits)  # the row on the other piece
    assert hits[0].score == hits[1].score


def test_the_piece_the_search_ranked_stays_first(tmp_path: Path) -> None:
    assert "Connectivity" in found(tmp_path, "connectivity wi-fi")[0].page.text


def test_a_page_without_a_table_brings_no_neighbour(tmp_path: Path) -> None:
    assert [hit.page.heading for hit in found(tmp_path, "transit bolts moving")] == ["Installing"]


def test_a_search_alone_keeps_to_top_k(tmp_path: Path) -> None:
    # the pieces come once a tool chose its pages: a cut to top_k (parts, evidence) drops none
    assert len(manual_index(tmp_path).search("connectivity wi-fi", 1)) == 1


def test_a_retrieval_of_parts_keeps_its_pages_and_their_pieces(tmp_path: Path) -> None:
    index = manual_index(tmp_path)
    hits, _ = by_parts(
        index,
        "What is the connectivity? And how do I remove the transit bolts?",
        2,
        "keyword",
        True,
        ["What is the connectivity", "how do I remove the transit bolts"],
    )
    headings = [hit.page.heading for hit in hits]
    assert "Installing" in headings
    assert headings.count("Technical specifications") == 2
