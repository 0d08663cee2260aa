"""Keyword search without bm25s at query time (runner/retrieval/keyword.py): the scores are
bm25s's own, summed from the stored matrix, and opening and searching an index imports neither
bm25s nor numpy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from runner.retrieval.keyword import TOKEN_PATTERN, KeywordIndex, Vocabulary

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


# keys a scan of the text could confuse: a prefix and a suffix of another, quotes, an entry's
# separator inside a key, backslashes, letters json.dumps escapes
TRICKY = [
    "sort",
    "sorted",
    "resort",
    'a", "sort',
    ', "sort": 1',
    "back\\",
    "caf\u00e9",
    "\u00fcber",
    "x",
]


@pytest.mark.parametrize("scans", [0, 3, 1000])
def test_a_stem_looked_up_in_the_text_has_the_id_parsing_gives(
    scans: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import runner.retrieval.keyword as keyword

    monkeypatch.setattr(keyword, "SCANS_BEFORE_PARSE", scans)
    terms = {key: number * 7 for number, key in enumerate(reversed(TRICKY))}
    vocabulary = Vocabulary(json.dumps(terms))
    for key, term in terms.items():
        assert key in vocabulary and vocabulary[key] == term and vocabulary.get(key) == term
    for absent in ("sor", "orted", "a", "sort\\", "cafe", 'sort", "x'):
        assert absent not in vocabulary and vocabulary.get(absent) is None
    assert dict(vocabulary) == terms and len(vocabulary) == len(terms)


def test_a_vocabulary_laid_out_otherwise_is_parsed_whole() -> None:
    vocabulary = Vocabulary(json.dumps({"sort": 1, "key": 2}, indent=1))
    assert vocabulary["key"] == 2 and "lambda" not in vocabulary
    assert Vocabulary("{}").get("sort") is None


def test_an_opened_index_knows_every_stem_of_its_vocabulary_file(folder: Path) -> None:
    stored = json.loads((folder / "bm25" / "vocab.json").read_text(encoding="utf-8"))
    index = KeywordIndex.load(folder)
    assert all(index.vocabulary[stem] == term for stem, term in stored.items())
    assert dict(index.vocabulary) == stored
