"""What a page's vector is of (runner/retrieval/lead.py, vectors.embedded_text): its place and
its text from the first prose on, the boilerplate a reference page opens with left out; an
index whose vectors are of another embedded text embeds them again."""

from __future__ import annotations

import json
from pathlib import Path

from runner.retrieval import open_corpus
from runner.retrieval.lead import lead_text
from runner.retrieval.pages import Page
from runner.retrieval.vectors import EMBEDDED_TEXT, MODEL_FILE, embedded_text, model_folder

from .conftest import folder_pipeline
from .test_vectors import WordBag

# a directive's page as a manual's HTML reads: a "See also" left from the section before, the
# directive's heading, its summary table, then what it does
DIRECTIVE = """### See also

- `LampSignature`
- [Lamp safety](safety.html)

## LampBrightness Directive

| Description: | Sets how bright the lamp shines at night |
| Syntax: | `LampBrightness Low/Medium/High` |
| Default: | `LampBrightness Medium` |
| Context: | lamp config |

The brightness directive decides how much light the lamp gives once the sun has set.

```
LampBrightness High
```"""


def test_a_leading_see_also_list_and_its_heading_are_left_out() -> None:
    lead = lead_text(DIRECTIVE)
    assert "See also" not in lead and "LampSignature" not in lead and "safety" not in lead
    assert lead.startswith("## LampBrightness Directive")


def test_a_summary_table_keeps_its_description_and_drops_names_and_defaults() -> None:
    lead = lead_text(DIRECTIVE)
    assert "Sets how bright the lamp shines at night" in lead
    assert "Syntax" not in lead and "Default" not in lead and "lamp config" not in lead


def test_the_first_prose_and_all_after_it_are_kept_as_written() -> None:
    lead = lead_text(DIRECTIVE)
    start = DIRECTIVE.index("The brightness directive")
    assert lead.endswith(DIRECTIVE[start:])


def test_a_page_that_opens_with_prose_is_embedded_as_written() -> None:
    text = "## Wicks\n\nTrim the wick before lighting.\n\n- [Lamp safety](safety.html)"
    assert lead_text(text) == text


def test_code_right_after_a_heading_is_content() -> None:
    text = "## Tunnel upgrade\n\n```\nRelayTunnel on\n```\n\n## Next\n\nMore prose here."
    assert lead_text(text) == text


def test_a_table_with_a_header_row_is_content() -> None:
    text = "## Prices\n\n| Model | Price |\n|---|---|\n| W-100 | 25 |\n\nPrices include tax."
    assert lead_text(text) == text


def test_a_list_of_sentences_is_content() -> None:
    text = "## Steps\n\n- Unplug the lamp.\n- Wait a minute.\n\nThen plug it in."
    assert lead_text(text) == text


def test_a_heading_right_above_another_stays() -> None:
    text = "# Lamps\n\n## Wicks\n\n- [a](a.html)\n- [b](b.html)\n\nTrim the wick first."
    assert lead_text(text) == "# Lamps\n\n## Wicks\n\nTrim the wick first."


def test_a_page_of_nothing_but_boilerplate_is_embedded_whole() -> None:
    text = "## See also\n\n- [Lamp safety](safety.html)\n- [Wicks](wicks.html)"
    assert lead_text(text) == text


def test_the_embedded_text_is_the_place_and_the_lead() -> None:
    page = Page(
        "d.html#1", "d.html", 1, "Core lamp features", "LampBrightness Directive", DIRECTIVE
    )
    text = embedded_text(page)
    assert text.startswith("Core lamp features › LampBrightness Directive\n## LampBrightness")
    assert "LampSignature" not in text


def test_vectors_of_an_older_embedded_text_are_embedded_again(tmp_path: Path, monkeypatch) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "lamp.md").write_text(f"# Core lamp features\n\n{DIRECTIVE}\n", "utf-8")
    pipeline = folder_pipeline(tmp_path, folder)
    embedder = WordBag()
    monkeypatch.setattr("runner.embedding.models.load_embedder", lambda *args: embedder)
    monkeypatch.setattr("runner.retrieval.index.vector_model", lambda pipeline, corpus: "word-bag")
    # the stand-in model runs here, though it is no model runner carries (words_alone.py)
    monkeypatch.setattr(
        "runner.retrieval.index.runnable_model", lambda corpus, model: (model, None)
    )
    with monkeypatch.context() as older:  # an index built when a page was embedded whole
        older.setattr("runner.retrieval.vectors.EMBEDDED_TEXT", EMBEDDED_TEXT - 1)
        older.setattr("runner.retrieval.vectors.lead_text", lambda text: text)
        open_corpus(pipeline, "docs")
    assert any("LampSignature" in text for text in embedder.embedded)
    stored = model_folder(pipeline.state_folder / "indexes" / "docs", "word-bag") / MODEL_FILE
    assert json.loads(stored.read_text())["text"] == EMBEDDED_TEXT - 1
    embedder.embedded.clear()

    index = open_corpus(pipeline, "docs")
    assert not index.status.rebuilt  # BM25 was up to date and stays
    assert embedder.embedded and not any("LampSignature" in t for t in embedder.embedded)
    assert json.loads(stored.read_text())["text"] == EMBEDDED_TEXT
    embedder.embedded.clear()
    open_corpus(pipeline, "docs")
    assert embedder.embedded == []  # now current: nothing embedded


def test_a_syntax_of_many_words_is_not_prose() -> None:
    text = (
        "## LampMode Directive\n\n| Description: | Which modes of the lamp may be chosen |\n"
        "| Syntax: | LampMode All/None/mode-name [mode-name] ... |\n\nThe mode decides the light."
    )
    lead = lead_text(text)
    assert "Which modes of the lamp may be chosen" in lead and "mode-name" not in lead
