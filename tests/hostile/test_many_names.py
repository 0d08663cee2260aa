"""Files with thousands of names: "did you mean" stays as good and becomes fast, and no
diagnostic carries a message or hint longer than a screen."""

from __future__ import annotations

import difflib
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from runner.config import validate_file
from runner.config.formats import format_reports
from runner.config.suggest import _one_slip_apart, did_you_mean
from runner.documents.diagnostics import MAX_HINT, MAX_MESSAGE, Diagnostic

NAMES = st.text(alphabet="abcde_1", min_size=1, max_size=7)


def compared_with_every_choice(word: str, choices: list[str]) -> str | None:
    candidates = sorted(set(choices))
    slips = [choice for choice in candidates if _one_slip_apart(word, choice)]
    if slips:
        return slips[0]
    matches = difflib.get_close_matches(word, candidates, n=1, cutoff=0.7)
    return matches[0] if matches else None


@settings(max_examples=50, deadline=None)
@given(NAMES, st.lists(NAMES, min_size=201, max_size=400, unique=True))
def test_among_many_choices_the_suggestion_is_the_one_every_comparison_gives(
    word: str, choices: list[str]
) -> None:
    assert did_you_mean(word, choices) == compared_with_every_choice(word, choices)


def test_a_slip_is_found_among_thousands_of_names() -> None:
    names = [f"tool_{i:05d}" for i in range(20_000)] + ["product_lookup"]
    assert did_you_mean("prodcut_lookup", names) == "product_lookup"
    assert did_you_mean("tool_0001", names) == "tool_00001"


def test_a_long_message_or_hint_is_cut() -> None:
    diagnostic = Diagnostic("R102", "m" * 5000, Path("p.yaml"), 1, 1, hint="h" * 5000)
    assert len(diagnostic.message) == MAX_MESSAGE and diagnostic.message.endswith("…")
    assert len(diagnostic.hint) == MAX_HINT


def test_many_unknown_tools_among_many_tools_give_a_bounded_report(tmp_path: Path) -> None:
    tools = "".join(f"  - {{name: t{i}, kind: prompt, prompt: hi}}\n" for i in range(2000))
    tools += "".join(
        f"  - {{name: c{i}, kind: prompt, prompt: hi, decompose: "
        f"{{subtasks: [{{prompt: x, required_tools: [tx{i}]}}]}}}}\n"
        for i in range(200)
    )
    path = tmp_path / "p.yaml"
    path.write_text("domain: shop\ntools:\n" + tools, encoding="utf-8")
    report = validate_file(path)
    assert len(report.errors) == 200
    assert "did you mean `t0`?" in report.errors[0].message
    assert len(format_reports([report], "text")) < 200 * 1_000
