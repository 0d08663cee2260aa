"""Reranking with the real model: the word pieces it gives a text in context, and a hybrid
search whose first candidates are reordered by them (`embedding.rerank`, rerank.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from runner.config import load_pipeline
from runner.retrieval import CorpusIndex, open_corpus
from tests.embed.appliances import write

QUESTION = "is it safe to clean it while plugged in"


def corpus(tmp_path: Path, rerank: int) -> CorpusIndex:
    embedding = f"{{model: all-MiniLM-L6-v2, rerank: {rerank}}}"
    path = write(tmp_path / f"rerank-{rerank}", embedding=embedding)
    return open_corpus(load_pipeline(path), "manuals")


def test_each_word_piece_has_a_unit_vector_and_the_word_it_is_of(embedder) -> None:
    [pieces] = embedder.token_vectors(["unplug myapp.users"])
    assert pieces.words[0] == "unplug" and pieces.words[-1] == "users"
    assert "myapp" in pieces.words and "." in pieces.words
    assert len(pieces.words) == len(pieces.vectors)
    assert np.allclose(np.linalg.norm(pieces.vectors, axis=1), 1.0, atol=1e-5)


def test_a_piece_is_closest_to_the_same_word_in_another_text(embedder) -> None:
    question, page = embedder.token_vectors(["descale the kettle", "the toaster and the kettle"])
    kettle = question.words.index("kettle")
    closest = int(np.argmax(page.vectors @ question.vectors[kettle]))
    assert page.words[closest] == "kettle"


def test_a_reranked_search_keeps_its_pages_and_orders_them_by_the_joined_score(
    embedder, tmp_path: Path
) -> None:
    plain = corpus(tmp_path, 0).search(QUESTION, 50, mode="hybrid")
    reranked = corpus(tmp_path, 20).search(QUESTION, 50, mode="hybrid")
    assert {hit.page.node_id for hit in reranked} == {hit.page.node_id for hit in plain}
    scores = [hit.score for hit in reranked[:20]]
    assert scores == sorted(scores, reverse=True)
    assert scores != [hit.score for hit in plain[:20]]  # the words' match joined the search's


def test_rerank_zero_gives_the_hybrid_search_s_own_scores(embedder, tmp_path: Path) -> None:
    index = corpus(tmp_path, 0)
    searched = [(hit.page.node_id, hit.score) for hit in index.search(QUESTION, 50, mode="hybrid")]
    unreranked = index.search(QUESTION, 50, mode="hybrid", rerank=False)
    assert searched == [(hit.page.node_id, hit.score) for hit in unreranked]


def test_the_index_keeps_the_pieces_the_model_gives_each_page_in_context(
    embedder, tmp_path: Path
) -> None:
    from runner.retrieval.vectors import embedded_text

    index = corpus(tmp_path, 20)
    assert index.vectors is not None and index.vectors.tokens is not None
    page = index.pages()[3]
    [live] = embedder.token_vectors([embedded_text(page)])
    kept = index.vectors.tokens.page(3)
    assert kept.shape == live.vectors.shape
    assert float((kept * live.vectors).sum(1).min()) >= 0.999  # int8, one scale a piece


def test_reranking_on_the_kept_pieces_orders_as_the_model_run_on_the_pages_does(
    embedder, tmp_path: Path
) -> None:
    index = corpus(tmp_path, 20)
    kept = index.search(QUESTION, 20, mode="hybrid")
    assert index.vectors is not None
    index.vectors.tokens = None  # as an index without them: the model runs over the pages
    live = index.search(QUESTION, 20, mode="hybrid")
    assert [hit.page.node_id for hit in kept] == [hit.page.node_id for hit in live]
    assert np.allclose([hit.score for hit in kept], [hit.score for hit in live], atol=0.005)


def test_a_corpus_that_does_not_rerank_keeps_no_word_pieces(embedder, tmp_path: Path) -> None:
    index = corpus(tmp_path, 0)
    assert index.vectors is not None and index.vectors.tokens is None
    assert index.search(QUESTION, 3, mode="hybrid")  # searched by meaning all the same


def test_a_rerank_endpoint_reorders_runner_s_vectors_and_no_pieces_are_kept(
    embedder, tmp_path: Path
) -> None:
    from tests.retrieval.rerank_service import rerank_service

    with rerank_service(favour="crumb") as service:  # the search's fifth: the toaster's tray
        rerank = f"{{provider: tei, api_base: '{service.url}', candidates: 5}}"
        path = write(tmp_path, embedding=f"{{model: all-MiniLM-L6-v2, rerank: {rerank}}}")
        index = open_corpus(load_pipeline(path), "manuals")
        found = index.search(QUESTION, 3, mode="hybrid")
    assert index.vectors is not None and index.vectors.tokens is None
    assert found[0].page.node_id == "toaster.md#2"  # the endpoint's choice, not the search's
    [(_, body)] = service.requests
    assert len(body["texts"]) == 5  # type: ignore[arg-type]


def test_a_reranked_search_orders_as_the_joined_score_computed_page_by_page(
    embedder, tmp_path: Path
) -> None:
    from runner.retrieval.rerank import PLACE_WEIGHT, word_match

    index = corpus(tmp_path, 20)
    assert index.vectors is not None and index.vectors.tokens is not None
    searched = index.search(QUESTION, 20, mode="hybrid", rerank=False)
    found = index.search(QUESTION, 20, mode="hybrid")
    [question] = embedder.token_vectors([index.expanded(QUESTION)])
    weights = index.keyword.word_weights(question.words)
    rows = {page.node_id: row for row, page in enumerate(index.pages())}
    matches = np.array(
        [
            word_match(question.vectors, weights, index.vectors.tokens.page(rows[hit.page.node_id]))
            for hit in searched
        ]
    )
    scores = np.array([hit.score for hit in searched])
    assert index.vectors.places is not None
    vector = index.query_vector(index.expanded(QUESTION))
    places = np.array(
        [float(index.vectors.places[rows[hit.page.node_id]] @ vector) for hit in searched]
    )
    evidence = (matches - matches.mean()) / matches.std()
    evidence += PLACE_WEIGHT * (places - places.mean()) / places.std()
    joined = scores + evidence * scores.std()
    nodes = [hit.page.node_id for hit in searched]
    expected = sorted(zip(joined, nodes, strict=True), key=lambda pair: -pair[0])
    assert [hit.page.node_id for hit in found] == [node for _, node in expected]
    assert np.allclose([hit.score for hit in found], [score for score, _ in expected], atol=1e-5)


def test_the_index_keeps_the_model_s_vector_of_each_page_s_place(embedder, tmp_path: Path) -> None:
    from runner.retrieval.places import place_text

    index = corpus(tmp_path, 20)
    assert index.vectors is not None and index.vectors.places is not None
    page = index.pages()[3]
    [live] = embedder.embed([place_text(page)])
    assert float(index.vectors.places[3] @ live) >= 0.999
