"""Keyword search without bm25s at query time (runner/retrieval/keyword.py): the scores are
bm25s's own, summed from the stored matrix, and opening and searching an index imports neither
bm25s nor numpy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from runner.retrieval.keyword import TOKEN_PATTERN, KeywordIndex

TEXTS = [
    "How to descale the kettle with citric acid",
    "The kettle's lid opens with the button on the handle",
    "Descaling removes limescale; descale the kettle monthly",
    "Warranty: two years on the heating element",
    "",
]
QUERIES = ["descale kettle", "the lid", "warranty heating", "kettle kettle descaling", "nothing"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(tmp_path_factory.mktemp("keyword"))
    KeywordIndex.build(TEXTS, folder)
    return folder


@pytest.mark.parametrize("query", QUERIES)
def test_each_pages_score_is_the_one_bm25s_gives(folder: Path, query: str) -> None:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    tokens = bm25s.tokenize(TEXTS, stopwords="en", stemmer=stemmer, show_progress=False)
    reference = bm25s.BM25()
    reference.index(tokens, show_progress=False)
    index = KeywordIndex.load(folder)
    asked = bm25s.tokenize(
        query, stemmer=stemmer, token_pattern=TOKEN_PATTERN, return_ids=False, show_progress=False
    )[0]
    asked = [token for token in asked if token in reference.vocab_dict]
    assert index.query_tokens(query) == asked
    expected = reference.get_scores(asked) if asked else [0.0] * len(TEXTS)
    assert list(index.scores(asked)) == pytest.approx(list(expected), rel=1e-6)
    found = dict(index.top(query, len(TEXTS)))
    assert found == {row: pytest.approx(score) for row, score in enumerate(expected) if score > 0}


def test_tied_pages_come_in_corpus_order(tmp_path: Path) -> None:
    index = KeywordIndex.build(["red apple", "green pear", "red apple"], tmp_path)
    assert [row for row, _ in index.top("apple", 3)] == [0, 2]


def test_opening_and_searching_an_index_imports_neither_bm25s_nor_numpy(folder: Path) -> None:
    code = (
        "import sys; from pathlib import Path; from runner.retrieval.keyword import KeywordIndex; "
        f"index = KeywordIndex.load(Path({str(folder)!r})); assert index.top('descale', 3); "
        "print(sorted(name for name in ('bm25s', 'numpy') if name in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("query", [*QUERIES, "kettle", "the kettle lid kettle"])
def test_numpy_and_python_sum_to_the_same_scores_in_the_same_order(
    folder: Path, query: str
) -> None:
    index = KeywordIndex.load(folder)
    tokens = index.query_tokens(query)
    for k in (1, 2, 10):
        assert index._numpy_top(tokens, k) == index._python_top(tokens, k)


def test_a_later_large_query_is_summed_by_numpy_and_the_first_never(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import runner.retrieval.keyword as keyword

    index = KeywordIndex.build(TEXTS, tmp_path)
    tokens = index.query_tokens("descale kettle")
    monkeypatch.delitem(sys.modules, "numpy")  # as in a process that never imported it
    monkeypatch.setattr(keyword, "NUMPY_FROM", 2)
    monkeypatch.setattr(keyword, "_queries_summed", 0)
    assert [index._with_numpy(tokens) for _ in range(2)] == [False, True]
    monkeypatch.setattr(keyword, "NUMPY_FROM", 100)
    assert not index._with_numpy(tokens)  # a small query stays in Python
