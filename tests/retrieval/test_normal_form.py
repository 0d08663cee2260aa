"""One normal form for text (runner.text.words.normalize): what is indexed and what is matched."""

from __future__ import annotations

from pathlib import Path

from runner.retrieval.pages import paginate, read_document
from runner.text.words import normalize, visible


def test_non_breaking_and_other_odd_spaces_become_spaces() -> None:
    assert normalize("ten\u00a0seconds\u2009or\u202fmore\u3000now") == "ten seconds or more now"


def test_soft_hyphens_and_zero_width_characters_are_dropped() -> None:
    assert normalize("re\u00adset the wid\u200bget\ufeff\u2060") == "reset the widget"


def test_nfkc_unfolds_ligatures_and_full_width_forms() -> None:
    assert normalize("\ufb01le \uff37\uff11") == "file W1"


def test_unicode_and_non_breaking_hyphens_become_the_ascii_hyphen() -> None:
    assert normalize("K\u2011200 two\u2010year") == "K-200 two-year"


def test_line_separators_and_carriage_returns_become_line_breaks() -> None:
    assert normalize("a\r\nb\rc\u2028d") == "a\nb\nc\nd"


def test_plain_ascii_is_unchanged() -> None:
    text = "Plain text, with punctuation: 1.5 (ok)!"
    assert normalize(text) is text


def test_visible_writes_invisible_characters_as_code_points() -> None:
    assert visible("a\u00a0b\u200bc d") == "a<U+00A0>b<U+200B>c d"


def test_pages_are_read_in_the_normal_form(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Re\u00adset\n\nHold\u00a0ten\u200b seconds.", "utf-8")
    page = paginate(read_document(tmp_path, tmp_path / "a.md"), 100)[0]
    assert page.heading == "Reset"
    assert page.text.endswith("Hold ten seconds.")
