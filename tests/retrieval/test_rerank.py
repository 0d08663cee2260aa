"""Reranking a vector or hybrid search's first candidates word by word (late interaction): each
question word piece finds its closest piece on a page, weighed by the word's BM25 weight, and
that match joins the search score (runner/retrieval/rerank.py). Here the model's piece vectors
are made by hand, over a real BM25 index."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from runner.config import load_pipeline
from runner.retrieval import open_corpus
from runner.retrieval import rerank as module
from runner.retrieval.keyword import KeywordIndex
from runner.retrieval.rerank import reranked, word_match

TEXTS = [
    "the kettle boils water quickly",
    "descaling the kettle removes limescale",
    "the toaster browns bread",
    "warranty terms for every appliance",
]
# one direction per word: a piece matches another piece of its word only
WORDS = sorted({word for text in TEXTS for word in text.split()} | {"how", "do", "i", "remove"})
AXIS = {word: row for row, word in enumerate(WORDS)}
SEARCHED = [0.60, 0.55, 0.50, 0.45]  # the search's scores of TEXTS, a close race


@dataclass
class Pieces:
    vectors: np.ndarray
    words: list[str]


class HandMadeModel:
    """Each word is one piece, its vector the word's own axis; `alias` maps a word to the word
    whose axis it shares (what the model's context would make of a synonym)."""

    def __init__(self, alias: dict[str, str] | None = None) -> None:
        self.alias = alias or {}
        self.asked: list[list[str]] = []

    def token_vectors(self, texts: Sequence[str]) -> list[Pieces]:
        self.asked.append(list(texts))
        return [self._pieces(text) for text in texts]

    def _pieces(self, text: str) -> Pieces:
        words = text.split()
        vectors = np.zeros((len(words), len(WORDS)), dtype=np.float32)
        for row, word in enumerate(words):
            vectors[row, AXIS[self.alias.get(word, word)]] = 1.0
        return Pieces(vectors, words)


@pytest.fixture(scope="module")
def keyword(tmp_path_factory: pytest.TempPathFactory) -> KeywordIndex:
    return KeywordIndex.build(TEXTS, Path(tmp_path_factory.mktemp("bm25")))


def test_a_page_whose_words_match_the_question_moves_above_one_the_search_put_first(
    keyword: KeywordIndex,
) -> None:
    order = reranked("limescale", TEXTS, SEARCHED, HandMadeModel(), keyword)
    assert [row for row, _ in order][:2] == [1, 0]


def test_a_page_far_ahead_stays_ahead_of_one_the_words_favour_a_little(
    keyword: KeywordIndex,
) -> None:
    # the match is standardised and joins at the spread of the search's scores: it counts as
    # much as the search, not more
    scores = [0.9, 0.2, 0.1, 0.0]
    order = reranked("descaling kettle", TEXTS, scores, HandMadeModel(), keyword)
    assert order[0][0] == 0


def test_the_joined_scores_come_with_the_new_order(keyword: KeywordIndex) -> None:
    order = reranked("limescale", TEXTS, SEARCHED, HandMadeModel(), keyword)
    scores = [score for _, score in order]
    assert scores == sorted(scores, reverse=True) and scores[0] > SEARCHED[1]


def test_candidates_the_words_match_alike_keep_their_order_and_scores(
    keyword: KeywordIndex,
) -> None:
    order = reranked("quickly", [TEXTS[2], TEXTS[3]], [0.4, 0.3], HandMadeModel(), keyword)
    assert order == [(0, 0.4), (1, 0.3)]


def test_when_the_search_scores_tie_the_words_decide(keyword: KeywordIndex) -> None:
    order = reranked("limescale", TEXTS, [0.5] * 4, HandMadeModel(), keyword)
    assert order[0][0] == 1


def test_one_candidate_is_not_sent_to_the_model(keyword: KeywordIndex) -> None:
    model = HandMadeModel()
    assert reranked("kettle", [TEXTS[0]], [0.5], model, keyword) == [(0, 0.5)]
    assert model.asked == []


def test_the_question_and_the_candidates_go_to_the_model_in_one_call(
    keyword: KeywordIndex,
) -> None:
    model = HandMadeModel()
    reranked("descaling kettle", TEXTS[:3], [0.3, 0.2, 0.1], model, keyword)
    assert model.asked == [["descaling kettle", *TEXTS[:3]]]


def test_a_users_word_the_model_places_beside_the_documents_word_matches_it(
    keyword: KeywordIndex,
) -> None:
    # "remove" shares "removes"'s axis: in context the model puts them together
    model = HandMadeModel(alias={"remove": "removes"})
    order = reranked("remove", TEXTS, SEARCHED, model, keyword)
    assert order[0][0] == 1
    assert reranked("remove", TEXTS, SEARCHED, HandMadeModel(), keyword)[0][0] == 0


def test_a_rare_question_word_weighs_more_than_a_common_one(keyword: KeywordIndex) -> None:
    # "kettle" is on two pages, "toaster" on one: a page holding only "toaster" matches better
    # than one holding only "kettle"
    model = HandMadeModel()
    question = model.token_vectors(["kettle toaster"])[0]
    weights = keyword.word_weights(question.words)
    kettle_page = model.token_vectors(["kettle"])[0].vectors
    toaster_page = model.token_vectors(["toaster"])[0].vectors
    assert word_match(question.vectors, weights, toaster_page) > word_match(
        question.vectors, weights, kettle_page
    )


def test_stop_words_and_words_no_page_holds_weigh_nothing(keyword: KeywordIndex) -> None:
    weights = keyword.word_weights(["the", "kettle", "zeppelin"])
    assert weights[0] == 0.0 and weights[1] > 0.0 and weights[2] == 0.0


def test_a_question_of_stop_words_alone_weighs_its_pieces_alike(keyword: KeywordIndex) -> None:
    # "the" weighs nothing in BM25; weighed alike, it still tells a page that holds it (the
    # toaster's, second) from one that does not (the warranty's, first)
    texts = [TEXTS[3], TEXTS[2], TEXTS[0]]
    order = reranked("the", texts, [0.5, 0.45, 0.4], HandMadeModel(), keyword)
    assert [row for row, _ in order] == [1, 0, 2]


def test_of_two_close_pages_the_words_match_alike_the_one_whose_place_is_nearest_moves_up(
    keyword: KeywordIndex,
) -> None:
    # "how" is on no page: the words tie, and the places' cosines decide the first two's race
    scores, places = [0.5, 0.49, 0.3, 0.29], [0.1, 0.6, 0.1, 0.1]
    order = reranked("how", TEXTS, scores, HandMadeModel(), keyword, places=places)
    assert [row for row, _ in order] == [1, 0, 2, 3]


def test_the_place_weighs_less_than_the_words(keyword: KeywordIndex) -> None:
    # the words favour the descaling page as far as the place favours the first: the words win
    order = reranked(
        "limescale", TEXTS, [0.5] * 4, HandMadeModel(), keyword, places=[0.9, 0.1, 0.1, 0.1]
    )
    assert order[0][0] == 1


def test_a_keyword_search_is_never_reranked(tmp_path: Path, monkeypatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a keyword search asked the model")

    monkeypatch.setattr(module, "reranked", refuse)
    shutil.copytree(Path(__file__).parent / "corpora" / "appliances", tmp_path / "manuals")
    path = tmp_path / "pipeline.yaml"
    path.write_text(
        "domain: appliances\ncorpora:\n  manuals: {path: manuals}\ntools:\n"
        "  - {name: manuals_search, kind: retrieve, corpus: manuals}\n",
        encoding="utf-8",
    )
    index = open_corpus(load_pipeline(path), "manuals")
    assert index.rerank == 20 and index.search("kettle warranty", 3)


def test_the_index_s_int8_pieces_match_as_their_dequantised_vectors_do_page_by_page() -> None:
    from runner.retrieval.page_tokens import QuantizedPieces, quantized
    from runner.retrieval.rerank import word_matches

    generator = np.random.default_rng(7)

    def unit(rows: int) -> np.ndarray:
        vectors = generator.standard_normal((rows, 32)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    question, weights = unit(5), np.array([0.5, 2.0, 0.0, 1.0, 1.5], dtype=np.float32)
    pages = [quantized(unit(count)) for count in (7, 0, 3, 12, 1)]  # one page without pieces
    stored = QuantizedPieces([tokens for tokens, _ in pages], [scales for _, scales in pages])
    reference = [
        word_match(question, weights, tokens.astype(np.float32) * scales[:, None])
        for tokens, scales in pages
    ]
    assert np.allclose(word_matches(question, weights, stored), reference, rtol=0, atol=1e-6)
    floats = [tokens.astype(np.float32) * scales[:, None] for tokens, scales in pages]
    assert np.allclose(word_matches(question, weights, floats), reference, rtol=0, atol=1e-6)
