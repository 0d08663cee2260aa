"""A diagnostic on a very long line shows a window around the caret, and a long value is cut
in the message: the report of a 5 MB line stays a few hundred bytes."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from runner.cli import main
from runner.documents.diagnostics import SNIPPET_WIDTH, Diagnostic, render, snippet


def test_a_long_line_is_cut_to_a_window_with_the_caret_under_its_column() -> None:
    line = "x" * 10_000 + "ERROR" + "y" * 10_000
    text = snippet(Diagnostic("S103", "m", Path("p.yaml"), 1, 10_001), [line])
    shown, caret = text.splitlines()
    code = shown.split(" | ", 1)[1]
    assert len(code) == SNIPPET_WIDTH
    assert code.startswith("…") and code.endswith("…")
    assert code[caret.index("^") - len("     | ") :].startswith("ERROR")


def test_a_short_line_is_shown_whole() -> None:
    text = snippet(Diagnostic("S103", "m", Path("p.yaml"), 1, 7), ["tools: 3"])
    assert text == "   1 | tools: 3\n     |       ^"


def test_the_end_of_a_long_line_is_shown_when_the_caret_is_there() -> None:
    line = "k: " + "z" * 500 + "!"
    text = snippet(Diagnostic("S103", "m", Path("p.yaml"), 1, len(line)), [line])
    code = text.splitlines()[0].split(" | ", 1)[1]
    assert code.startswith("…") and code.endswith("!")


def test_validating_a_five_megabyte_line_prints_a_short_report(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    long_name = "x" * 5_000_000
    path.write_text(
        f"domain: Bad-{long_name}\ntools:\n  - {{name: {long_name}, kind: prompt, prompt: hi}}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 1
    assert "S105" in result.output
    assert len(result.output) < 3_000


def test_control_characters_are_shown_as_symbols_with_the_caret_in_place() -> None:
    line = "prompt: Ans\x00wer \x1b[2J\x7f\x9b"
    text = snippet(Diagnostic("Y012", "m", Path("p.yaml"), 1, 12), [line])
    shown, caret = text.splitlines()
    assert shown == "   1 | prompt: Ans␀wer ␛[2J␡\ufffd"
    assert shown[caret.index("^")] == "␀"


def test_a_control_character_a_message_or_hint_echoes_reaches_no_terminal() -> None:
    # a double-quoted YAML text may hold one as an escape ("\e[2J"), and messages quote values
    message, hint = "unknown key `a\x1b]0;title\x07`", "did you mean `b\x1b[2J`?"
    diagnostic = Diagnostic("S101", message, Path("p.yaml"), 0, 0, hint=hint)
    text = render(diagnostic)
    assert "\x1b" not in text and "\x07" not in text
    assert "`a␛]0;title␇`" in text and "`b␛[2J`" in text


def test_a_snippet_is_read_from_the_file_line_by_number(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_bytes(b"a: 1\r\nbb: 2\r\n" + b"- x\n" * 100_000 + b"last: 3")

    def at(line: int) -> str:
        return snippet(Diagnostic("S103", "m", path, line, 1))

    assert at(2) == "   2 | bb: 2\n     | ^"
    assert at(100_003).startswith("100003 | last: 3")
    assert at(100_004) == ""
