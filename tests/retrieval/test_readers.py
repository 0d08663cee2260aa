"""Readers: HTML and PDF documents into blocks and pages, behind the interface every format
shares (runner.retrieval.readers)."""

from __future__ import annotations

import builtins
import importlib
from pathlib import Path

import pytest

from runner.retrieval.pages import (
    CorpusError,
    ReaderMissingError,
    corpus_files,
    document_format,
    paginate,
    read_document,
)

from .pdfmaker import make_pdf

FAQ_HTML = """<!DOCTYPE html>
<html><head><title>Widget&nbsp;FAQ</title><style>h1 { color: red }</style>
<script>var tracking = "do not index me";</script></head>
<body>
<header><a href="/">Home</a> | <a href="/shop">Shop</a></header>
<nav class="menu"><ul><li><a href="#a">Resetting</a></li><li><a href="#b">Prices</a></li></ul></nav>
<div class="navheader">Prev Up Next</div>
<main>
<h1>Widget FAQ<a class="headerlink" href="#top">¶</a></h1>
<h2 id="a">How do I reset the widget?</h2>
<p>Hold the&nbsp;reset button for ten&#160;seconds &amp; wait for the light to blink
   twice.</p>
<ol><li>Unplug it.</li><li>Plug it in again.</li></ol>
<pre>widget --reset
widget --status</pre>
<h2 id="b">What does a widget cost?</h2>
<table><tr><th>Model</th><th>Price</th></tr><tr><td>W-100</td><td>&euro;25</td></tr></table>
<p>Prices include tax and shipping to any address in the country.</p>
<h3>Discounts</h3>
<p>Schools pay half the price.</p>
</main>
<footer>Copyright Widget Inc. Contact us.</footer>
</body></html>
"""


def html_pages(tmp_path: Path, html: str = FAQ_HTML, max_words: int = 250):
    path = tmp_path / "faq.html"
    path.write_text(html, encoding="utf-8")
    return paginate(read_document(tmp_path, path), max_words)


def test_an_html_document_whose_first_heading_is_a_numbered_section_takes_its_title(
    tmp_path: Path,
) -> None:
    html = "<html><head><title>UPSERT</title></head><body><h1>1. Syntax</h1><p>x</p></body></html>"
    assert {page.title for page in html_pages(tmp_path, html)} == {"UPSERT"}


def titles(tmp_path: Path, declared: str, body: str) -> set[str]:
    """The titles the pages of an HTML document take: its `<title>` is `declared`."""
    html = f"<html><head><title>{declared}</title></head><body>{body}</body></html>"
    return {page.title for page in html_pages(tmp_path, html)}


def test_an_html_document_whose_first_heading_is_one_of_several_at_its_level_takes_its_title(
    tmp_path: Path,
) -> None:
    # a manual page as pod2html writes it: NAME, SYNOPSIS, DESCRIPTION are its parts
    body = (
        "<h1>NAME</h1><p>lampctl - control the lamps</p><h1>SYNOPSIS</h1><p>lampctl on</p>"
        "<h1>DESCRIPTION</h1><p>Turns the lamps on and off.</p>"
    )
    declared = "lampctl - control the lamps"
    assert titles(tmp_path, declared, body) == {declared}


def test_an_html_document_whose_first_heading_encloses_the_rest_keeps_it_as_its_title(
    tmp_path: Path,
) -> None:
    body = "<h1>Lamps</h1><h2>Wicks</h2><p>Trim the wick.</p><h2>Oil</h2><p>Use lamp oil.</p>"
    assert titles(tmp_path, "Lamps | Example Site", body) == {"Lamps"}


def test_html_and_pdf_files_are_documents() -> None:
    assert document_format("site/faq.HTML") == "html"
    assert document_format("a.htm") == "html"
    assert document_format("manual.pdf") == "pdf"


def test_html_headings_become_page_headings(tmp_path: Path) -> None:
    pages = html_pages(tmp_path)
    assert [p.heading for p in pages] == [
        "How do I reset the widget?",
        "What does a widget cost?",
        "Discounts",
    ]
    assert pages[0].title == "Widget FAQ"


NOTED_HTML = """<html><body><h1>Lamps</h1><h2>Filling the lamp</h2>
<p>Pour the oil in slowly until the tank is three quarters full.</p>
<div class="note"><h3 class="title">Note</h3><p>Never fill a lamp that is still warm.</p></div>
<p>Then close the cap.</p><h2>Trimming the wick</h2><p>Cut the wick straight.</p>
</body></html>"""


def test_an_admonition_s_label_is_not_a_section(tmp_path: Path) -> None:
    pages = html_pages(tmp_path, NOTED_HTML)
    assert [p.heading for p in pages] == ["Filling the lamp", "Trimming the wick"]


def test_an_admonition_s_label_opens_its_first_line_in_the_section_it_annotates(
    tmp_path: Path,
) -> None:
    [filling, _] = html_pages(tmp_path, NOTED_HTML)
    assert "Note: Never fill a lamp that is still warm." in filling.text
    assert "Then close the cap." in filling.text


# a man page's options and a FAQ as definition lists (asciidoc, DocBook and pod2html write them)
OPTIONS_HTML = """<html><head><title>git-reset</title></head><body><h1>Options</h1><dl>
<dt class="hdlist1">--soft</dt><dd><p>Does not touch the index file.</p><p>More on it.</p></dd>
<dt>-q</dt><dt><code>--quiet</code></dt><dd><p>Be quiet.</p></dd>
<dt>How do I undo it?</dt><dd><p>Use <code>git revert</code>.</p></dd>
<dt>Undo a commit</dt><dd><pre>$ git reset --soft HEAD^</pre><p>Then edit.</p></dd>
</dl></body></html>"""


def test_a_definition_list_term_labels_the_first_line_of_its_definition(tmp_path: Path) -> None:
    [page] = html_pages(tmp_path, OPTIONS_HTML)
    assert "--soft: Does not touch the index file." in page.text
    assert "\nMore on it." in page.text  # the definition's next paragraphs are its own


def test_the_terms_of_one_definition_are_joined(tmp_path: Path) -> None:
    [page] = html_pages(tmp_path, OPTIONS_HTML)
    assert "-q, `--quiet`: Be quiet." in page.text


def test_a_term_that_is_a_question_is_followed_by_its_answer(tmp_path: Path) -> None:
    [page] = html_pages(tmp_path, OPTIONS_HTML)
    assert "How do I undo it? Use `git revert`." in page.text


def test_a_term_before_code_stays_a_line_of_its_own(tmp_path: Path) -> None:
    [page] = html_pages(tmp_path, OPTIONS_HTML)
    assert "Undo a commit\n\n```\n$ git reset --soft HEAD^\n```" in page.text
    assert "\nThen edit." in page.text


def test_a_heading_in_a_div_of_another_class_is_a_section(tmp_path: Path) -> None:
    html = NOTED_HTML.replace('class="note"', 'class="sect2"')
    assert "Note" in [p.heading for p in html_pages(tmp_path, html)]


def test_html_heading_paths_follow_the_heading_levels(tmp_path: Path) -> None:
    pages = html_pages(tmp_path)
    assert pages[0].path == ("Widget FAQ", "How do I reset the widget?")
    assert pages[2].path == ("Widget FAQ", "What does a widget cost?", "Discounts")


def test_html_navigation_header_footer_and_scripts_are_dropped(tmp_path: Path) -> None:
    text = "\n".join(page.text for page in html_pages(tmp_path))
    for dropped in ("Home", "Shop", "Prev Up Next", "tracking", "color: red", "Copyright", "¶"):
        assert dropped not in text


def test_an_articles_own_header_keeps_its_title_the_sites_frame_goes(tmp_path: Path) -> None:
    html = (
        "<header><h1>Acme Blog</h1></header><article><header><h1>Descaling a kettle</h1>"
        "</header><p>Use vinegar once a month.</p><footer>Filed under care.</footer></article>"
        "<aside>Popular posts: toasters</aside><footer>Copyright Acme.</footer>"
    )
    [page] = html_pages(tmp_path, html)
    assert page.heading == "Descaling a kettle"
    for dropped in ("Acme Blog", "Popular posts", "Copyright"):
        assert dropped not in page.text


def test_html_entities_and_nbsp_become_plain_text(tmp_path: Path) -> None:
    text = html_pages(tmp_path)[0].text
    assert "Hold the reset button for ten seconds & wait for the light to blink twice." in text
    assert "\u00a0" not in text


def test_html_headings_are_written_as_markdown_headings(tmp_path: Path) -> None:
    assert html_pages(tmp_path)[0].text.startswith("# Widget FAQ\n\n## How do I reset the widget?")


def test_html_lists_and_code_blocks_are_kept_as_text(tmp_path: Path) -> None:
    text = html_pages(tmp_path)[0].text
    assert "1. Unplug it.\n2. Plug it in again." in text
    assert "```\nwidget --reset\nwidget --status\n```" in text  # fenced, as in Markdown


def test_html_list_items_holding_paragraphs_and_nested_lists_keep_their_markers(tmp_path: Path):
    html = (
        "<h1>Steps</h1><ul><li><p>Unplug the widget.</p></li>"
        "<li>Open the lid<ul><li>gently</li></ul></li><li></li></ul><p>Then wait.</p>"
    )
    text = html_pages(tmp_path, html)[0].text
    assert text == "# Steps\n\n- Unplug the widget.\n- Open the lid\n  - gently\n\nThen wait."


def test_html_tables_are_kept_a_row_a_line(tmp_path: Path) -> None:
    text = html_pages(tmp_path)[1].text
    assert "| Model | Price |\n|---|---|\n| W-100 | €25 |" in text


def test_html_without_a_declared_encoding_is_read_as_utf8(tmp_path: Path) -> None:
    text = html_pages(tmp_path, "<h1>Menu</h1><p>Café au lait costs €3 at the counter today.</p>")
    assert "Café au lait costs €3" in text[0].text


def test_html_declaring_its_encoding_is_read_in_it(tmp_path: Path) -> None:
    path = tmp_path / "old.html"
    html = '<meta charset="iso-8859-1"><h1>Menu</h1><p>Café au lait, served hot and fresh.</p>'
    path.write_bytes(html.encode("iso-8859-1"))
    assert "Café au lait" in paginate(read_document(tmp_path, path), 250)[0].text


def test_an_empty_html_file_has_no_pages(tmp_path: Path) -> None:
    assert html_pages(tmp_path, "") == []


def test_pdf_pages_are_the_pdf_pages_numbered_as_in_the_pdf(tmp_path: Path) -> None:
    pdf = make_pdf(
        [["Installing the pump", "Bolt it to the floor."], [], ["Servicing", "Oil it yearly."]],
        title="Pump Manual",
    )
    (tmp_path / "pump.pdf").write_bytes(pdf)
    pages = paginate(read_document(tmp_path, tmp_path / "pump.pdf"), max_words=250)
    assert [p.page for p in pages] == [1, 3]  # page 2 has no text: skipped, numbers kept
    assert "Bolt it to the floor." in pages[0].text
    assert "Oil it yearly." in pages[1].text
    assert {p.title for p in pages} == {"Pump Manual"}
    assert pages[1].node_id == "pump.pdf#3"


def test_a_word_hyphenated_at_a_pdf_line_end_is_one_word_again(tmp_path: Path) -> None:
    pdf = make_pdf(
        [["Ask the manu-", "facturer for a replacement XR-", "200 or a Pre-", "Mium pump."]]
    )
    (tmp_path / "pump.pdf").write_bytes(pdf)
    text = paginate(read_document(tmp_path, tmp_path / "pump.pdf"), max_words=250)[0].text
    assert text == "Ask the manufacturer for a replacement XR-\n200 or a Pre-\nMium pump."


def test_a_pdf_without_a_title_is_titled_by_its_file_name(tmp_path: Path) -> None:
    (tmp_path / "notes.pdf").write_bytes(make_pdf([["Some text here."]]))
    pages = paginate(read_document(tmp_path, tmp_path / "notes.pdf"), max_words=250)
    assert pages[0].title == "notes"


def _outlined_pages(tmp_path: Path) -> list:
    pdf = make_pdf(
        [
            ["Welcome."],
            ["Bolt it down."],
            ["Tools", "Use a wrench.", "Servicing", "Oil it."],
            ["Oil."],
        ],
        outline=[(1, "Pump Manual", 1), (2, "Installing", 2), (3, "Tools", 3), (2, "Servicing", 3)],
    )
    (tmp_path / "pump.pdf").write_bytes(pdf)
    return paginate(read_document(tmp_path, tmp_path / "pump.pdf"), max_words=250)


def test_a_pdf_page_takes_its_heading_path_from_the_outline(tmp_path: Path) -> None:
    pages = _outlined_pages(tmp_path)
    assert [(p.page, p.heading, p.path) for p in pages[:2]] == [
        (1, "Pump Manual", ("Pump Manual",)),
        (2, "Installing", ("Pump Manual", "Installing")),
    ]


def test_a_pdf_page_with_two_bookmarks_is_named_after_the_first(tmp_path: Path) -> None:
    assert _outlined_pages(tmp_path)[2].path == ("Pump Manual", "Installing", "Tools")


def test_a_pdf_page_no_bookmark_points_at_continues_the_section_before(tmp_path: Path) -> None:
    page = _outlined_pages(tmp_path)[3]
    assert (page.heading, page.path) == ("Servicing", ("Pump Manual", "Servicing"))


def test_a_pdf_line_that_is_a_bookmark_title_is_written_as_a_heading(tmp_path: Path) -> None:
    page = _outlined_pages(tmp_path)[2]
    assert page.text.splitlines() == ["### Tools", "Use a wrench.", "## Servicing", "Oil it."]


def test_a_pdf_without_an_outline_has_no_headings(tmp_path: Path) -> None:
    (tmp_path / "notes.pdf").write_bytes(make_pdf([["Some text here."]]))
    page = paginate(read_document(tmp_path, tmp_path / "notes.pdf"), max_words=250)[0]
    assert (page.heading, page.path) == ("", ())


def test_a_broken_pdf_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not a pdf")
    with pytest.raises(CorpusError, match=r"broken\.pdf: not readable as PDF"):
        read_document(tmp_path, tmp_path / "broken.pdf")


@pytest.mark.parametrize(("name", "library"), [("page.html", "lxml"), ("manual.pdf", "pypdf")])
def test_a_missing_extra_is_named_in_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, library: str
) -> None:
    real_import = builtins.__import__

    def without(module: str, *args: object, **kwargs: object) -> object:
        if module == library or module.startswith(library + "."):
            raise ImportError(f"No module named {library!r}")
        return real_import(module, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without)
    monkeypatch.setattr("importlib.import_module", lambda module: without(module))
    (tmp_path / name).write_bytes(b"")
    extra = name.rsplit(".", 1)[-1]
    with pytest.raises(ReaderMissingError, match=rf"pip install 'runner\[{extra}\]'"):
        read_document(tmp_path, tmp_path / name)


def test_exclude_globs_leave_files_out(tmp_path: Path) -> None:
    for name in ("guide.md", "drafts/next.md", "site/genindex.html", "site/faq.html"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("# Title\n\ntext\n", encoding="utf-8")
    found = corpus_files(
        tmp_path, ("**/*.md", "**/*.html"), exclude=("drafts/**", "**/genindex.html")
    )
    assert [p.relative_to(tmp_path).as_posix() for p in found] == ["guide.md", "site/faq.html"]


def test_an_exclude_glob_with_double_star_matches_at_the_top(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<h1>x</h1>", encoding="utf-8")
    assert corpus_files(tmp_path, ("**/*.html",), exclude=("**/index.html",)) == []


def test_an_html_corpus_is_indexed_and_searched_by_section(tmp_path: Path) -> None:
    from runner.retrieval import open_corpus

    from .conftest import folder_pipeline

    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "faq.html").write_text(FAQ_HTML, encoding="utf-8")
    index = open_corpus(folder_pipeline(tmp_path, folder, include=("**/*.html",)), "docs")
    [best, *_] = index.search("What does a widget cost?", top_k=3)
    assert (best.page.document, best.page.heading) == ("faq.html", "What does a widget cost?")
    assert index.search("tracking copyright", top_k=3) == []  # script and footer not indexed


def test_a_folder_of_html_and_pdf_is_read_without_an_include(tmp_path: Path) -> None:
    from runner.retrieval import open_corpus

    from .conftest import folder_pipeline

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "faq.html").write_text(FAQ_HTML, encoding="utf-8")
    (folder / "manual.pdf").write_bytes(make_pdf([["Descaling", "Descale the kettle monthly."]]))
    (folder / "logo.png").write_bytes(b"\x89PNG")  # not a document: left out
    index = open_corpus(folder_pipeline(tmp_path, folder), "docs")  # the default include
    assert sorted({page.document for page in index.pages()}) == ["faq.html", "manual.pdf"]
    assert index.search("descale kettle", top_k=1)[0].page.document == "manual.pdf"


def test_a_default_corpus_with_html_and_no_html_extra_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from runner.retrieval import open_corpus

    from .conftest import folder_pipeline

    real_import = importlib.import_module

    def without_lxml(module: str) -> object:
        if module == "lxml":
            raise ImportError("No module named 'lxml'")
        return real_import(module)

    monkeypatch.setattr("importlib.import_module", without_lxml)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "guide.md").write_text("# Guide\n\nText.\n", encoding="utf-8")
    (folder / "faq.html").write_text(FAQ_HTML, encoding="utf-8")
    with pytest.raises(ReaderMissingError) as raised:
        open_corpus(folder_pipeline(tmp_path, folder), "docs")
    message = str(raised.value)
    assert message.startswith(f"corpus 'docs' ({folder}): faq.html: reading HTML documents needs")
    assert "pip install 'runner[html]'" in message and "`exclude:`" in message


def test_a_markdown_fence_of_four_backticks_keeps_the_three_backticks_inside_it() -> None:
    # one fence rule for the readers and the offline provider (runner.text.markup): three or
    # more marks open a fence, and only as many or more close it
    from runner.retrieval.readers.markup import blocks

    text = "Intro.\n\n````\n```\n# not a heading\n```\n````\n\n# Next"
    found = list(blocks(text, "markdown"))
    assert [block.heading for block in found] == [None, None, "Next"]
    assert found[1].text == "````\n```\n# not a heading\n```\n````"
