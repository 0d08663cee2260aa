"""Corpus folder → documents → pages → llama-index nodes (the page rules of pages.py)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from runner.retrieval.pages import (
    Document,
    corpus_files,
    document_format,
    headings,
    paginate,
    read_document,
    to_nodes,
)

from .conftest import CORPORA

APPLIANCES = CORPORA / "appliances"
DEFAULT_INCLUDE = ("**/*.md", "**/*.txt", "**/*.rst")


def pages_of(name: str, max_words: int = 60):
    return paginate(read_document(APPLIANCES, APPLIANCES / name), max_words)


def test_markdown_heading_starts_a_page_and_names_it() -> None:
    pages = pages_of("kettle.md")
    assert [p.heading for p in pages] == ["Filling the kettle", "Boiling", "Descaling", "Warranty"]
    assert [p.page for p in pages] == [1, 2, 3, 4]
    assert pages[2].text.startswith("## Descaling\n\nLimescale builds up")


def test_a_heading_alone_stays_with_the_section_after_it() -> None:
    first = pages_of("kettle.md")[0]
    assert first.text.startswith("# Kettle Manual\n\n## Filling the kettle\n\nFill the kettle")


def test_title_is_the_first_heading_on_every_page() -> None:
    assert {p.title for p in pages_of("kettle.md")} == {"Kettle Manual"}


def test_title_without_a_heading_is_the_file_name() -> None:
    document = Document("notes/plain-notes.txt", "Just a line.\n\nAnother line.")
    assert [p.title for p in paginate(document, 50)] == ["plain-notes"]


def test_rst_underlined_and_overlined_headings() -> None:
    pages = pages_of("guide.rst")
    assert [p.heading for p in pages] == ["Grinding", "Cleaning"]
    assert pages[0].title == "Coffee Grinder"


def test_headings_lists_every_title_in_order() -> None:
    guide = read_document(APPLIANCES, APPLIANCES / "guide.rst")
    assert headings(guide) == ["Coffee Grinder", "Grinding", "Cleaning"]


def test_rst_txt_counts_as_rst_and_other_files_are_not_documents() -> None:
    assert document_format("faq/general.rst.txt") == "rst"
    assert document_format("notes.txt") == "text"
    assert document_format("README.MD") == "markdown"
    assert document_format("image.png") is None


def test_corpus_files_skips_hidden_and_unsupported_files(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\ntext\n")
    (tmp_path / "b.png").write_bytes(b"\x89PNG")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "c.md").write_text("# C\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "d.rst.txt").write_text("D\n=\n")
    found = [p.relative_to(tmp_path).as_posix() for p in corpus_files(tmp_path, DEFAULT_INCLUDE)]
    assert found == ["a.md", "sub/d.rst.txt"]


def test_fenced_code_is_never_a_heading() -> None:
    text = "# Title\n\nIntro words here for the page body.\n\n```\n# not a heading\n```\n"
    pages = paginate(Document("code.md", text), 100)
    assert [p.heading for p in pages] == ["Title"]
    assert "# not a heading" in pages[0].text


def test_long_section_continues_on_pages_cut_between_paragraphs() -> None:
    paragraphs = [" ".join(f"p{i}w{j}" for j in range(30)) for i in range(5)]
    text = "# Big\n\n" + "\n\n".join(paragraphs)
    pages = paginate(Document("big.md", text), 70)
    assert [p.heading for p in pages] == ["Big", "Big", "Big"]
    # whole paragraphs: two per page, the fifth alone
    assert pages[1].text == "\n\n".join(paragraphs[2:4])


def test_a_paragraph_longer_than_a_page_is_cut_between_sentences() -> None:
    sentence = "This sentence has exactly eight words in it."
    paragraph = " ".join([sentence] * 6)  # 48 words
    pages = paginate(Document("long.txt", paragraph), 20)
    assert [p.text for p in pages] == [" ".join([sentence] * 2)] * 3


def test_a_table_longer_than_a_page_repeats_its_header_on_every_page(tmp_path: Path) -> None:
    header = "| Specification | KW-620 | KW-720X |\n|---|---|---|"
    rows = [f"| Property {n} | {n} kg | {n + 1} kg |" for n in range(30)]
    (tmp_path / "specs.md").write_text("# Specs\n\n" + header + "\n" + "\n".join(rows) + "\n")
    pages = paginate(read_document(tmp_path, tmp_path / "specs.md"), 40)
    assert len(pages) > 2
    tables = [page.text[page.text.index("| Specification") :] for page in pages]
    assert all(table.startswith(header + "\n| Property") for table in tables)
    shown = [line for table in tables for line in table.splitlines()[2:]]
    assert shown == rows  # every row once, in order
    assert all(len(page.text.split()) <= 40 for page in pages)


def test_pages_keep_every_word_once_in_order() -> None:
    # no overlap between pages (SentenceSplitter's default overlap is the known pitfall)
    text = (APPLIANCES / "kettle.md").read_text()
    pages = paginate(Document("kettle.md", text), 25)
    assert " ".join(p.text for p in pages).split() == text.split()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(["alpha", "beta.", "Gamma", "delta!", "eps"]), max_size=80),
        max_size=12,
    ),
    st.integers(min_value=3, max_value=40),
)
def test_paginate_never_loses_duplicates_or_overfills(
    paragraphs: list[list[str]], max_words: int
) -> None:
    text = "\n\n".join(" ".join(words) for words in paragraphs)
    pages = paginate(Document("prop.txt", text), max_words)
    assert " ".join(p.text for p in pages).split() == text.split()
    assert all(len(p.text.split()) <= max_words for p in pages)


def test_nodes_link_previous_and_next_inside_a_document_only() -> None:
    pages = pages_of("kettle.md") + pages_of("toaster.md")
    nodes = to_nodes(pages)
    assert nodes[0].prev_node is None
    assert nodes[0].next_node.node_id == "kettle.md#2"
    assert nodes[3].next_node is None  # the kettle's last page: the toaster is another document
    assert nodes[4].prev_node is None
    assert nodes[4].next_node.node_id == "toaster.md#2"


def test_page_metadata_is_kept_out_of_the_indexed_and_llm_text() -> None:
    from llama_index.core.schema import MetadataMode

    node = to_nodes(pages_of("zebra-notes.md"))[0]
    assert node.metadata["document"] == "zebra-notes.md"
    assert node.get_content(metadata_mode=MetadataMode.EMBED) == node.text
    assert node.get_content(metadata_mode=MetadataMode.LLM) == node.text
