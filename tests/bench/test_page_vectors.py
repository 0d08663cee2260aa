"""bench.page_vectors: how a page is cut into the model's windows, and its report (the study
itself needs the corpora and the model)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.page_vectors import OVERLAP, WINDOW, readme_section, windows
from bench.wording import read_set


class WordPieces:
    """A tokenizer's `encode` as bench.page_vectors reads it, one word piece a word or mark:
    enough to count windows by words without the model's tokenizer (the `embed` extra)."""

    @dataclass
    class Encoding:
        ids: list[int]
        offsets: list[tuple[int, int]]

    def encode(self, text: str, add_special_tokens: bool = True) -> Encoding:
        spans = [match.span() for match in re.finditer(r"\w+|[^\w\s]", text)]
        return self.Encoding(list(range(len(spans))), spans)


def word_tokenizer() -> WordPieces:
    return WordPieces()


def test_a_short_page_is_one_window_of_its_place_and_text() -> None:
    assert windows(word_tokenizer(), "Guide › Intro", "w1 w2 w3") == ["Guide › Intro\nw1 w2 w3"]


def test_a_long_page_is_covered_by_windows_that_each_begin_with_its_place() -> None:
    text = " ".join(f"w{number}" for number in range(600))
    found = windows(word_tokenizer(), "Guide › Intro", text)
    assert len(found) == 3
    assert all(window.startswith("Guide › Intro\n") for window in found)
    first_words = [window.split("\n", 1)[1].split() for window in found]
    assert first_words[0][-1] == f"w{WINDOW - 2 - 3 - 1}"  # the place's 3 pieces come first
    assert first_words[-1][-1] == "w599"  # nothing left out at the end
    shared = set(first_words[0]) & set(first_words[1])
    assert len(shared) == OVERLAP


def test_the_report_has_a_table_per_set_and_the_embedding_work() -> None:
    figures = {"vectors": {"at1": 0.5, "at5": 0.75}, "hybrid": {"at1": 0.25, "at5": 0.5}}
    results = {
        "command": "python -m bench.page_vectors pydocs",
        "date": "2026-12-01",
        "machine": {"cpus": 2},
        "corpora": {
            "pydocs": {
                "pages": 10,
                "windows": 24,
                "windows_per_page": 2.4,
                "window_embed_seconds": 3.0,
                "sets": {"pydocs-users": {"best window": figures}},
            },
            "pgdocs": {"skipped": "no manual"},
        },
    }
    text = readme_section(results)
    assert "| best window | 0.500 | 0.750 | 0.250 | 0.500 |" in text
    assert "10 pages, 24 windows (2.4 a page" in text and "3 s here" in text
    assert "**pgdocs**: skipped (no manual)." in text


@pytest.mark.usefixtures("embed_model")
def test_the_study_runs_on_a_tiny_docs_folder(
    docs: Path, questions: Path, readme_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole study on the fixture's docs and two questions of its own: the hybrid index
    built with the model, each page's windows embedded, every method scored (skipped without
    the `embed` extra's model, as tests/embed is)."""
    from bench import page_vectors, users

    monkeypatch.setenv("RUNNER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("RUNNER_BENCH_USERS_STATE", str(tmp_path / "users"))
    monkeypatch.setattr(users, "corpus_source", lambda _name: (docs, "**/*.rst.txt"))
    monkeypatch.setattr(page_vectors, "SETS", {"tiny": "pydocs"})
    monkeypatch.setattr(page_vectors, "read_set", lambda name: read_set(name, questions))
    page_vectors.main(["pydocs"])
    results = json.loads((readme_path.parent / "results" / "page_vectors.json").read_text())
    corpus = results["corpora"]["pydocs"]
    assert (
        corpus["pages"] >= len(list(docs.rglob("*.rst.txt")))
        and corpus["windows"] >= corpus["pages"]
    )
    methods = corpus["sets"]["tiny"]
    assert set(methods) >= {"first window (runner)", "best window", "mean of the windows"}
    assert methods["first window (runner)"]["hybrid"]["at5"] == 1.0
    assert f"## {page_vectors.TITLE}" in readme_path.read_text()
