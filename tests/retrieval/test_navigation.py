"""Navigation pages (tables of contents, indexes, site maps) are found at indexing and left out
of what searches return unless the corpus keeps them (runner.retrieval.navigation)."""

from __future__ import annotations

from pathlib import Path

from runner.config.model import Pipeline
from runner.retrieval import open_corpus
from runner.retrieval.navigation import paginate_all
from runner.retrieval.pages import Document

from .conftest import folder_pipeline

SECTIONS = {
    "Resetting the router": "Hold the reset button for ten seconds until the light blinks.",
    "Changing the password": "Open the admin page and choose a new password of twelve letters.",
    "Updating the firmware": "Download the firmware file and upload it on the update page.",
    "Forwarding a port": "Add a rule with the port number and the address of the computer.",
    "Guest network": "Turn on the guest network to give visitors access without your password.",
}
BODY = "\n\n".join(f"## {title}\n\n{text}" for title, text in SECTIONS.items())
TOC = "# Contents\n\n" + "\n".join(f"- {title} ..... {n}" for n, title in enumerate(SECTIONS, 3))


def marked(documents: dict[str, str]) -> dict[str, bool]:
    pages = paginate_all([Document(p, t) for p, t in documents.items()], max_words=250)
    return {f"{p.document}#{p.page}": p.navigation for p in pages}


def test_a_table_of_contents_listing_the_corpus_headings_is_navigation() -> None:
    flags = marked({"contents.md": TOC, "router.md": "# Router\n\n" + BODY})
    assert flags["contents.md#1"] is True
    assert not any(flag for page, flag in flags.items() if page.startswith("router.md"))


def test_a_list_of_file_references_is_navigation() -> None:
    toctree = "Docs\n====\n\n.. toctree::\n   :maxdepth: 2\n\n" + "\n".join(
        f"   part{i}/index.rst" for i in range(6)
    )
    assert marked({"contents.rst": toctree})["contents.rst#1"] is True


def test_a_table_of_contents_of_sections_not_in_the_corpus_is_navigation_by_its_pages() -> None:
    """The TOC of a whole manual, of which the corpus holds one chapter: its entries are no
    heading of the corpus, but each names a page."""
    toc = "# Contents\n\n" + "\n".join(
        f"- {question} [toc p. {n}]"
        for n, question in enumerate(
            [
                "How can I remove duplicate elements from a list or array?",
                "How do I iterate over a sequence in reverse order?",
                "How do I create a multidimensional list?",
                "How do I apply a method to a sequence of objects?",
            ],
            23,
        )
    )
    index = "Index\n=====\n\n" + "\n".join(
        f"{word}, page {n}" for n, word in enumerate(["bagels", "crumbs", "fuses", "toast"], 4)
    )
    leaders = "# Contents\n\n" + "\n".join(f"{t} ........ {n}" for n, t in enumerate("ABCDE"))
    flags = marked({"toc.md": toc, "index.rst": index, "leaders.md": leaders, "r.md": BODY})
    assert (flags["toc.md#1"], flags["index.rst#1"], flags["leaders.md#1"]) == (True, True, True)


def test_a_list_of_short_items_that_end_in_numbers_is_not_navigation() -> None:
    sizes = "# Sizes\n\n" + "\n".join(f"- {size} cups: {n}" for n, size in enumerate("ABCDEF", 2))
    steps = "# Steps\n\n" + "\n".join(f"- Turn the dial to step {n}" for n in range(1, 7))
    assert marked({"sizes.md": sizes, "steps.md": steps}) == {
        "sizes.md#1": False,
        "steps.md#1": False,
    }


def test_prose_that_names_a_few_sections_is_not_navigation() -> None:
    prose = (
        "# Overview\n\nThis guide explains the router. Read Resetting the router first, then "
        "Changing the password, and keep the box somewhere dry and cool.\n\n"
        "Resetting the router\n\nChanging the password\n\nThe rest explains every setting in "
        "turn, with examples for the common cases and notes for unusual networks."
    )
    assert marked({"overview.md": prose, "router.md": "# Router\n\n" + BODY}) == {
        "overview.md#1": False,
        **{f"router.md#{n}": False for n in range(1, 6)},
    }


def pipeline(tmp_path: Path, navigation: str) -> Pipeline:
    folder = tmp_path / "docs"
    folder.mkdir(exist_ok=True)
    (folder / "contents.md").write_text(TOC, encoding="utf-8")
    (folder / "router.md").write_text("# Router\n\n" + BODY, encoding="utf-8")
    return folder_pipeline(tmp_path, folder, navigation=navigation)


def test_searches_leave_navigation_pages_out_by_default(tmp_path: Path) -> None:
    index = open_corpus(pipeline(tmp_path, "exclude"), "docs")
    hits = index.search("resetting the router", top_k=5)
    assert hits and all(hit.page.document == "router.md" for hit in hits)


def test_a_corpus_can_keep_navigation_pages(tmp_path: Path) -> None:
    index = open_corpus(pipeline(tmp_path, "keep"), "docs")
    documents = {hit.page.document for hit in index.search("resetting the router", top_k=5)}
    assert "contents.md" in documents


def test_a_full_scan_reads_no_navigation_page(tmp_path: Path) -> None:
    index = open_corpus(pipeline(tmp_path, "exclude"), "docs")
    assert [page.document for page in index.answer_pages()] == ["router.md"] * 5


def test_a_full_scan_of_a_corpus_that_keeps_navigation_reads_it_too(tmp_path: Path) -> None:
    index = open_corpus(pipeline(tmp_path, "keep"), "docs")
    assert len(index.answer_pages()) == 6  # the contents page and the five sections


def test_navigation_pages_stay_in_the_index(tmp_path: Path) -> None:
    index = open_corpus(pipeline(tmp_path, "exclude"), "docs")
    assert index.page("contents.md#1") is not None
    assert index.page("contents.md#1").navigation


def test_toc_lines_with_bracketed_page_references_are_entries() -> None:
    toc = "# Index\n\n" + "\n".join(f"{title} [toc p. {n}]" for n, title in enumerate(SECTIONS, 3))
    assert marked({"index.md": toc, "router.md": "# Router\n\n" + BODY})["index.md#1"] is True


def test_an_html_site_map_of_links_is_navigation(tmp_path: Path) -> None:
    from runner.retrieval.navigation import mark_navigation
    from runner.retrieval.pages import paginate, read_document

    links = "".join(f'<li><a href="p{i}.html">Product line {i} overview</a></li>' for i in range(8))
    (tmp_path / "sitemap.html").write_text(f"<h1>Site map</h1><ul>{links}</ul>", "utf-8")
    pages = paginate(read_document(tmp_path, tmp_path / "sitemap.html"), 250)
    assert pages[0].text.splitlines()[2] == "- [Product line 0 overview](p0.html)"
    assert [page.navigation for page in mark_navigation(pages)] == [True]


def test_a_list_with_a_link_inside_prose_is_not_navigation(tmp_path: Path) -> None:
    from runner.retrieval.navigation import mark_navigation
    from runner.retrieval.pages import paginate, read_document

    items = "".join(
        f'<li>Step {i}: turn the dial, then read <a href="s{i}.html">the note</a> twice.</li>'
        for i in range(8)
    )
    (tmp_path / "steps.html").write_text(f"<h1>Steps</h1><ol>{items}</ol>", "utf-8")
    pages = paginate(read_document(tmp_path, tmp_path / "steps.html"), 250)
    assert [page.navigation for page in mark_navigation(pages)] == [False]
