"""`runner.playground.citations`: an answer's citations, the cited page read back, and the
words the answer quoted from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.config import load_pipeline
from runner.config.model import Pipeline
from runner.playground.citations import (
    SourceNotFoundError,
    cited_segments,
    highlight,
    quote_of,
    source_page,
)

PAGE = {"document": "manuals/kd.md", "page": 12, "title": "KD manual", "heading": "Salt"}
ROWS = [
    {"document": "products.csv", "heading": "KD-450"},
    {"document": "products.csv", "heading": "KD-600X"},
]


@pytest.fixture(scope="module")
def pipeline(support: Path) -> Pipeline:
    return load_pipeline(support)


def test_each_piece_of_an_answer_knows_the_sources_it_cites() -> None:
    answer = "Use coarse salt. [manuals/kd.md p. 12]\nCall us. [other.md p. 1; manuals/kd.md p. 12]"
    segments = cited_segments(answer, [PAGE])
    assert [s.text for s in segments] == ["Use coarse salt. ", "\nCall us. "]
    assert [[c.index for c in s.citations] for s in segments] == [[0], [None, 0]]


def test_rows_of_one_table_are_told_apart_by_the_key_the_text_names() -> None:
    answer = "model: KD-600X; price 899 [products.csv]\nmodel: KD-450; price 549 [products.csv]"
    assert [s.citations[0].index for s in cited_segments(answer, ROWS)] == [1, 0]
    assert quote_of(answer, ROWS, 0) == "model: KD-450; price 549"


def test_the_quoted_words_are_highlighted_regardless_of_case_and_punctuation() -> None:
    text = "Intro. The salt container is in the bottom of the tub. Other text."
    pieces = highlight(text, "the Salt container is in the bottom, of the tub!")
    assert [(p.text, p.quoted) for p in pieces] == [
        ("Intro. ", False),
        ("The salt container is in the bottom of the tub", True),
        (". Other text.", False),
    ]


def test_a_few_common_words_in_common_are_not_a_quote() -> None:
    assert not any(p.quoted for p in highlight("See the manual of the oven.", "of the KD"))


def test_a_cited_page_is_read_back_from_the_corpus_with_the_quote(pipeline: Pipeline) -> None:
    page = source_page(
        pipeline,
        "manuals/dishwashers-kd-user-manual.md",
        12,
        None,
        "The salt container is in the bottom of the tub, under the lower basket.",
    )
    assert page.heading == "Filling the salt container"
    assert page.title.startswith("Kestrel Dishwashers User Manual")
    assert page.quoted
    assert [p.text for p in page.pieces if p.quoted] == [
        "The salt container is in the bottom of the tub, under the lower basket"
    ]


def test_a_cited_table_row_is_shown_with_its_quoted_cells(pipeline: Pipeline) -> None:
    page = source_page(pipeline, "products.csv", None, "KD-450", "price_eur: 549; model: KD-450")
    cells = {name: quoted for name, _value, quoted in page.columns}
    assert cells["price_eur"] and cells["model"] and not cells["energy_class"]


@pytest.mark.parametrize(
    ("document", "page"),
    [
        ("../support.yaml", 1),
        ("manuals/no-such-manual.md", 1),
        ("manuals/dishwashers-kd-user-manual.md", 999),
    ],
)
def test_a_page_outside_the_corpora_is_not_found(
    pipeline: Pipeline, document: str, page: int
) -> None:
    with pytest.raises(SourceNotFoundError, match="none of the pipeline's corpora"):
        source_page(pipeline, document, page, None)


def test_a_source_from_an_mcp_servers_tool_is_said_to_be_no_file(pipeline: Pipeline) -> None:
    with pytest.raises(SourceNotFoundError, match="is a tool of an MCP server: no file"):
        source_page(pipeline, "mcp:kitchen", None, "todays_special")
