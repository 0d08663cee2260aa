"""A new user's folder of documents as they come — an HTML FAQ page with a site header,
navigation, a footer, entities, non-breaking spaces and hyphens, a table and a code block; its
HTML table of contents; a PDF manual with bookmarks — through `runner index`, `runner run
--show-retrieval` and a `runner test` case that pins what was retrieved. No `include:`."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from runner.cli import main

from .pdfmaker import make_pdf

FAQ = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>Kettle FAQ</title>
<script>var tracking = "analytics";</script></head><body>
<header><a href="/">AcmeKitchen</a> | Shop</header>
<nav><ul><li><a href="/faq">FAQ</a></li><li><a href="/warranty">Warranty</a></li></ul></nav>
<main><h1>Kettle&nbsp;FAQ</h1>
<h2>How do I descale the kettle?</h2>
<p>Fill the kettle with water and white vinegar, boil it, and leave it for one&nbsp;hour.</p>
<h2>What do the error codes mean?</h2>
<table><tr><th>Code</th><th>Meaning</th></tr><tr><td>E1</td><td>The kettle is empty</td></tr>
<tr><td>E2</td><td>The base is overheating</td></tr></table>
<h2>How do I reset the base?</h2>
<p>Connect the base by USB and run the reset tool.</p><pre>acme-reset --verify</pre>
<h2>What is the warranty period?</h2>
<p>The K&#8209;200 has a two&#8209;year warranty from the date of purchase.</p></main>
<footer>&copy; 2026 AcmeKitchen. Privacy policy.</footer></body></html>
"""
CONTENTS = (
    "<h1>Contents</h1><ul>"
    + "".join(
        f'<li><a href="faq.html#{n}">{question}</a></li>'
        for n, question in enumerate(
            [
                "How do I descale the kettle?",
                "What do the error codes mean?",
                "How do I reset the base?",
                "What is the warranty period?",
            ]
        )
    )
    + "</ul>"
)
PIPELINE = """\
version: 1
domain: kettle
llm: {provider: offline}
corpora:
  docs: {path: docs}
retrieval_tool: docs_rag
tools:
  - {name: docs_rag, kind: retrieve, corpus: docs, top_k: 3}
"""
TESTS = """\
pipeline: ../kettle.yaml
cases:
  - name: descaling, from the FAQ section
    turns:
      - message: How do I descale the kettle?
        expect:
          answer: {contains: vinegar}
          retrieved: [{tool: docs_rag, document: faq.html, page: 1, top: 1}]
  - name: a pasted model number with a non-breaking hyphen
    turns:
      - message: "What is the warranty of the K\\u2011200?"
        expect:
          answer: {contains: "K-200 has a two-year warranty"}
          retrieved: [{tool: docs_rag, document: faq.html, page: 4, top: 1}]
  - name: the manual's bookmarked page
    turns:
      - message: How do I clean the limescale filter?
        expect:
          answer: {contains: rinse it under the tap, not_contains: Cleaning the filter}
          retrieved: [{tool: docs_rag, document: manual.pdf, page: 2, top: 1}]
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "faq.html").write_text(FAQ, encoding="utf-8")
    (docs / "contents.html").write_text(CONTENTS, encoding="utf-8")
    pdf = make_pdf(
        [
            ["Acme K-200 Manual", "Safety first."],
            ["Cleaning the filter", "Remove the limescale filter and rinse it under the tap."],
        ],
        outline=[(1, "K-200 Manual", 1), (2, "Cleaning the filter", 2)],
    )
    (docs / "manual.pdf").write_bytes(pdf)
    (tmp_path / "kettle.yaml").write_text(PIPELINE, encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "kettle.yaml").write_text(TESTS, encoding="utf-8")
    return tmp_path


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


def test_the_folder_is_indexed_without_an_include(folder: Path) -> None:
    result = cli("index", str(folder / "kettle.yaml"))
    assert result.exit_code == 0, result.output
    assert "docs: rebuilt (missing), 7 pages" in result.output


def test_show_retrieval_ranks_the_faq_section_and_never_the_contents(folder: Path) -> None:
    result = cli("run", str(folder / "kettle.yaml"), "What does error E2 mean?", "--show-retrieval")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("E2 — Meaning: The base is overheating. [faq.html p. 2]")
    listed = result.output.split("retrieval:")[1]
    assert "1. faq.html p. 2" in listed and "contents.html" not in listed


def test_nothing_of_the_site_frame_is_indexed(folder: Path) -> None:
    for words in ("AcmeKitchen shop", "analytics tracking", "privacy policy"):
        result = cli("run", str(folder / "kettle.yaml"), words, "--json")
        assert '"pages": []' in result.output, words


def test_runner_test_pins_the_pages_retrieved(folder: Path) -> None:
    result = cli("test", str(folder / "tests"))
    assert result.exit_code == 0, result.output
    assert "3 cases: 3 passed" in result.output
