"""Pages follow the document's sections (runner.retrieval.pages)."""

from __future__ import annotations

from runner.retrieval.pages import Document, paginate


def words(count: int, word: str = "word") -> str:
    return " ".join([word] * count)


def test_a_section_that_fits_max_words_is_one_page() -> None:
    text = (
        f"# Guide\n\n## Setup\n\n{words(30)}\n\n{words(30)}\n\n{words(30)}\n\n## Use\n\n{words(20)}"
    )
    pages = paginate(Document("guide.md", text), max_words=100)
    assert [p.heading for p in pages] == ["Setup", "Use"]
    assert pages[0].text.count("word") == 90


def test_a_longer_section_splits_at_paragraph_boundaries() -> None:
    paragraphs = [words(40, f"p{i}") for i in range(5)]
    text = "# Long\n\n" + "\n\n".join(paragraphs)
    pages = paginate(Document("long.md", text), max_words=100)
    assert len(pages) == 3
    for page in pages:  # no paragraph cut in two
        for paragraph in page.text.split("\n\n"):
            assert paragraph.startswith("#") or len(set(paragraph.split())) == 1


def test_every_part_of_a_split_section_keeps_its_heading_path() -> None:
    text = "# Manual\n\n## Care\n\n" + "\n\n".join(words(60, f"p{i}") for i in range(4))
    pages = paginate(Document("m.md", text), max_words=100)
    assert len(pages) > 1
    assert {p.heading for p in pages} == {"Care"}
    assert {p.path for p in pages} == {("Manual", "Care")}


def test_a_heading_is_never_the_last_thing_on_a_page() -> None:
    text = f"# A\n\n{words(95)}\n\n## B\n\n{words(50)}\n\n## C\n\n{words(99)}"
    for page in paginate(Document("a.md", text), max_words=100):
        assert not page.text.rstrip().splitlines()[-1].startswith("#")


def test_heading_paths_close_sections_of_the_same_level() -> None:
    text = f"# Top\n\n## One\n\n{words(20)}\n\n### Deep\n\n{words(20)}\n\n## Two\n\n{words(20)}"
    paths = [p.path for p in paginate(Document("t.md", text), max_words=100)]
    assert paths == [("Top", "One"), ("Top", "One", "Deep"), ("Top", "Two")]


def test_rst_heading_levels_follow_the_order_adornments_appear() -> None:
    text = f"Title\n=====\n\nPart\n----\n\n{words(20)}\n\nOther\n-----\n\n{words(20)}\n"
    paths = [p.path for p in paginate(Document("r.rst", text), max_words=100)]
    assert paths == [("Title", "Part"), ("Title", "Other")]


def test_every_part_of_a_long_section_is_found_by_its_heading(tmp_path) -> None:
    from runner.retrieval import open_corpus

    from .conftest import folder_pipeline

    folder = tmp_path / "docs"
    folder.mkdir()
    body = "\n\n".join(words(60, f"filler{i}") for i in range(4))
    (folder / "m.md").write_text(f"# Manual\n\n## Descaling\n\n{body}\n", encoding="utf-8")
    pipeline = folder_pipeline(tmp_path, folder, max_words=100)
    index = open_corpus(pipeline, "docs")
    found = {hit.page.page for hit in index.search("descaling", top_k=10)}
    assert len(index) > 2 and found == {page.page for page in index.pages()}


def test_a_pages_context_names_its_document_and_section() -> None:
    from runner.retrieval.reading import pages_context

    text = "# Kettle Manual\n\n## Descaling\n\nUse citric acid once a month in hard water areas."
    page = paginate(Document("kettle.md", text), max_words=100)[0]
    assert pages_context([page]).startswith("[kettle.md, page 1] Kettle Manual › Descaling\n")


def test_a_page_read_alone_names_its_document_and_section_too() -> None:
    # read_page sees what the answer sees: the document's title says what a page deep in it
    # is about ("Spare Parts Policy" above a table of years)
    from runner.retrieval.reading import page_passage

    text = "# Kettle Manual\n\n## Descaling\n\nUse citric acid once a month in hard water areas."
    page = paginate(Document("kettle.md", text), max_words=100)[0]
    assert page_passage(page).text.startswith("[kettle.md, page 1] Kettle Manual › Descaling\n")
