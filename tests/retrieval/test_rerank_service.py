"""A rerank endpoint named by `embedding.rerank: {provider, api_base, ...}`: the TEI shape
(`{query, texts}` -> `[{index, score}]`) and the Cohere/Jina/llama.cpp shape (`{model, query,
documents, top_n}` -> `{results: [{index, relevance_score}]}`), against a tiny server that
speaks both (rerank_service.py). llama.cpp's server serves `/v1/rerank` with `--reranking`,
but only on a reranker GGUF, which the test environment does not carry."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.config import validate_file
from runner.embedding import endpoint
from runner.embedding.rerank_service import RerankServiceError, RerankSpec, reranked, scores

from .embedding_service import embedding_service
from .provider_kit import QUESTION, invoke, write_pipeline
from .rerank_service import rerank_service

TEXTS = ["the toaster warranty", "kettle light glows", "dryer filter"]


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(endpoint, "BACKOFF_S", 0.0)


def tei(url: str, **changes: object) -> RerankSpec:
    return RerankSpec("tei", url, **changes)  # type: ignore[arg-type]


def cohere(url: str, **changes: object) -> RerankSpec:
    return RerankSpec("cohere_like", f"{url}/v1", "bge-reranker", **changes)  # type: ignore[arg-type]


def test_tei_s_shape_is_sent_and_its_scores_read_in_the_texts_order() -> None:
    with rerank_service() as service:
        found = scores(tei(service.url), "kettle light", TEXTS)
    assert found == [0.0, 1.0, 0.0]
    [(path, body)] = service.requests
    assert path == "/rerank"
    assert body == {"query": "kettle light", "texts": TEXTS, "truncate": True}


def test_cohere_s_shape_is_sent_with_the_model_and_every_text_asked_for() -> None:
    with rerank_service() as service:
        found = scores(cohere(service.url), "kettle light", TEXTS)
    assert found == [0.0, 1.0, 0.0]
    [(path, body)] = service.requests
    assert path == "/v1/rerank"
    assert body == {
        "model": "bge-reranker",
        "query": "kettle light",
        "documents": TEXTS,
        "top_n": 3,
    }


def test_the_endpoint_s_scores_order_the_candidates_ties_in_the_search_s_order() -> None:
    with rerank_service() as service:
        order = reranked(tei(service.url), "kettle light", TEXTS)
    assert order == [(1, 1.0), (0, 0.0), (2, 0.0)]


def test_the_same_question_over_the_same_candidates_is_scored_once() -> None:
    with rerank_service() as service:
        first = reranked(tei(service.url), "kettle once", TEXTS)
        again = reranked(tei(service.url), "kettle once", TEXTS)
        reranked(tei(service.url), "kettle twice", TEXTS)
    assert first == again and len(service.requests) == 2


def test_a_reply_of_the_other_shape_asks_whether_provider_is_right() -> None:
    with rerank_service() as service, pytest.raises(RerankServiceError) as raised:
        scores(RerankSpec("cohere_like", service.url, "m"), "kettle", TEXTS)  # TEI's /rerank
    assert "is `provider` its shape?" in str(raised.value) or "HTTP 422" in str(raised.value)


def test_a_reply_that_leaves_a_text_unscored_is_refused() -> None:
    with rerank_service() as service, pytest.raises(RerankServiceError, match="scored 2 of the 3"):
        service.drop = True
        scores(tei(service.url), "kettle", TEXTS)


def test_a_503_is_tried_again_then_the_endpoint_is_named() -> None:
    with rerank_service(failures=1) as service:
        assert scores(tei(service.url), "kettle", TEXTS)[1] == 1.0
    with rerank_service(failures=None) as service, pytest.raises(RerankServiceError) as raised:
        scores(tei(service.url), "kettle", TEXTS)
    assert len(service.requests) == endpoint.ATTEMPTS
    assert f"{service.url}/rerank" in str(raised.value) and "HTTP 503" in str(raised.value)


def test_a_text_longer_than_max_chars_is_sent_cut() -> None:
    with rerank_service() as service:
        scores(tei(service.url, max_chars=100), "kettle", ["kettle " * 50])
    assert service.requests[0][1]["texts"] == [("kettle " * 50)[:100]]


def test_the_key_is_read_from_the_named_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RERANK_KEY", "secret-3")
    with rerank_service() as service:
        scores(cohere(service.url, api_key_env="RERANK_KEY"), "kettle", TEXTS)
    assert service.keys == ["Bearer secret-3"]


# configuration


def test_a_rerank_mapping_names_the_endpoint_and_candidates_default_to_twenty(
    tmp_path: Path,
) -> None:
    embedding = {
        "provider": "openai_like",
        "api_base": "http://h/v1",
        "model": "m",
        "rerank": {"provider": "tei", "api_base": "http://h:8081"},
    }
    report = validate_file(write_pipeline(tmp_path, embedding))
    assert report.pipeline is not None, report.diagnostics  # a service's vectors may rerank so
    read = report.pipeline.corpora["manuals"].embedding
    assert read is not None and read.rerank == 20
    assert RerankSpec.of(read.reranker or {}) == RerankSpec("tei", "http://h:8081")


def test_candidates_say_how_many_are_reranked(tmp_path: Path) -> None:
    rerank = {"provider": "tei", "api_base": "http://h:8081", "candidates": 7}
    report = validate_file(
        write_pipeline(tmp_path, {"model": "all-MiniLM-L6-v2", "rerank": rerank})
    )
    assert report.pipeline is not None, report.diagnostics
    read = report.pipeline.corpora["manuals"].embedding
    assert read is not None and read.rerank == 7 and read.reranker is not None


def test_a_rerank_endpoint_of_an_unknown_shape_is_refused(tmp_path: Path) -> None:
    rerank = {"provider": "voyage", "api_base": "http://h:8081"}
    report = validate_file(
        write_pipeline(tmp_path, {"model": "all-MiniLM-L6-v2", "rerank": rerank})
    )
    assert report.pipeline is None and report.diagnostics[0].code.startswith("S")


# end to end


def test_the_endpoint_s_order_decides_what_a_search_returns(tmp_path: Path) -> None:
    with embedding_service() as embedder, rerank_service(favour="toaster") as reranker:
        embedding = {
            "provider": "openai_like",
            "api_base": embedder.url,
            "model": "tiny",
            "rerank": {"provider": "tei", "api_base": reranker.url},
        }
        path = write_pipeline(tmp_path, embedding)
        assert invoke("index", str(path)).exit_code == 0
        ran = invoke("run", str(path), QUESTION)
    assert ran.exit_code == 0, ran.output
    assert "toaster.md" in ran.output and "kettle.md" not in ran.output  # the endpoint's choice
    [(_, body)] = reranker.requests
    assert body["query"] == QUESTION and len(body["texts"]) == 3  # type: ignore[arg-type]


def test_validate_online_scores_with_the_rerank_endpoint(tmp_path: Path) -> None:
    with rerank_service() as reranker:
        rerank = {"provider": "cohere_like", "api_base": f"{reranker.url}/v1", "model": "m"}
        path = write_pipeline(tmp_path, {"model": "all-MiniLM-L6-v2", "rerank": rerank})
        result = invoke("validate", str(path), "--online")
    assert result.exit_code == 0, result.output
    assert [path for path, _ in reranker.requests] == ["/v1/rerank"]


def test_validate_online_says_where_a_failing_rerank_endpoint_is_named(tmp_path: Path) -> None:
    with rerank_service(failures=None) as reranker:
        rerank = {"provider": "tei", "api_base": reranker.url}
        path = write_pipeline(tmp_path, {"model": "all-MiniLM-L6-v2", "rerank": rerank})
        result = invoke("validate", str(path), "--online")
    assert result.exit_code == 1
    assert "M107" in result.output and "HTTP 503" in result.output
    assert "tei or cohere_like" in result.output
