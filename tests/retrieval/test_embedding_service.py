"""A corpus embedded by a service (`embedding: {provider: openai_like, api_base, model}`):
an OpenAI-compatible `/v1/embeddings` endpoint, asked in batches, retried on 503, bounded, its
vectors of unit length and stored under an identity naming provider, model and endpoint. The
server is a tiny one written here (embedding_service.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from runner.cli import main
from runner.config import validate_file
from runner.embedding import endpoint, remote
from runner.embedding.models import load_embedder
from runner.embedding.remote import EmbeddingServiceError, RemoteEmbedder, RemoteSpec

from .embedding_service import DIMENSIONS, embedding_service, vector_of
from .test_deep_fallback import SCRIPT, write_pipeline


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(endpoint, "BACKOFF_S", 0.0)


def embedder(url: str, **changes: object) -> RemoteEmbedder:
    return RemoteEmbedder(RemoteSpec("openai_like", url, "tiny-embed", **changes))  # type: ignore[arg-type]


def test_vectors_are_the_service_s_made_unit_length() -> None:
    with embedding_service() as service:
        vectors = embedder(service.url).embed(["kettle light glows", "toaster warranty"])
    expected = np.array(vector_of("kettle light glows"), dtype=np.float32)
    assert vectors.shape == (2, DIMENSIONS) and vectors.dtype == np.float32
    assert np.allclose(vectors[0], expected / np.linalg.norm(expected), atol=1e-6)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_a_vector_a_token_is_averaged_into_the_text_s() -> None:
    with embedding_service(per_token=True) as service:
        [vector] = embedder(service.url).embed(["kettle light"])
    mean = (np.array(vector_of("kettle")) + np.array(vector_of("light"))) / 2
    assert np.allclose(vector, mean / np.linalg.norm(mean), atol=1e-6)


def test_texts_are_sent_sixty_four_a_request_with_the_model_named() -> None:
    with embedding_service() as service:
        vectors = embedder(service.url).embed([f"text {i}" for i in range(130)])
    assert [len(body["input"]) for body in service.requests] == [64, 64, 2]  # type: ignore[arg-type]
    assert {body["model"] for body in service.requests} == {"tiny-embed"}
    assert len(vectors) == 130


def test_dimensions_are_learnt_from_the_first_reply() -> None:
    with embedding_service() as service:
        assert embedder(service.url).dimensions == DIMENSIONS


def test_a_503_is_tried_again_until_it_answers() -> None:
    with embedding_service(failures=2) as service:
        vectors = embedder(service.url).embed(["kettle"])
    assert len(service.requests) == 3 and vectors.shape == (1, DIMENSIONS)


def test_a_service_that_keeps_failing_is_named_with_its_status_and_the_attempts() -> None:
    with (
        embedding_service(failures=None) as service,
        pytest.raises(EmbeddingServiceError) as raised,
    ):
        embedder(service.url).embed(["kettle"])
    assert len(service.requests) == remote.ATTEMPTS
    message = str(raised.value)
    assert service.url in message and "tiny-embed" in message
    assert "HTTP 503" in message and f"tried {remote.ATTEMPTS} times" in message


def test_a_reply_slower_than_the_timeout_is_tried_again_then_said() -> None:
    with embedding_service() as service, pytest.raises(EmbeddingServiceError) as raised:
        service.delay_s = 0.5
        RemoteEmbedder(RemoteSpec("openai_like", service.url, "m"), timeout_s=0.1).embed(["k"])
    assert len(service.requests) == remote.ATTEMPTS
    assert "timed out" in str(raised.value)


def test_the_key_is_read_from_the_named_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TINY_KEY", "secret-1")
    with embedding_service() as service:
        embedder(service.url, api_key_env="TINY_KEY").embed(["kettle"])
    assert service.keys == ["Bearer secret-1"]


def test_a_named_key_variable_that_is_unset_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TINY_KEY", raising=False)
    with pytest.raises(EmbeddingServiceError, match="TINY_KEY is not set"):
        embedder("http://127.0.0.1:9/v1", api_key_env="TINY_KEY").embed(["kettle"])


def test_load_embedder_gives_the_service_s_embedder_for_its_identity() -> None:
    identity = remote.declare(RemoteSpec("openai_like", "http://127.0.0.1:9/v1", "tiny-embed"))
    assert identity == "openai_like:tiny-embed@http://127.0.0.1:9/v1"
    found = load_embedder(identity)
    assert isinstance(found, RemoteEmbedder) and found.precision == "openai_like"


# validation


PIPELINE = """\
domain: shop
corpora:
  docs:
    path: docs
    embedding: EMBEDDING
tools:
  - name: docs_search
    kind: search
    corpus: docs
    mode: hybrid
"""


def validated(tmp_path: Path, embedding: str):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nText.\n", encoding="utf-8")
    path = tmp_path / "pipeline.yaml"
    path.write_text(PIPELINE.replace("EMBEDDING", embedding), encoding="utf-8")
    return validate_file(path)


def test_a_provider_s_embedding_is_read_with_no_reranking(tmp_path: Path) -> None:
    report = validated(
        tmp_path, "{provider: openai_like, api_base: 'http://h:8080/v1', model: m, api_key_env: K}"
    )
    assert report.pipeline is not None, report.diagnostics
    embedding = report.pipeline.corpora["docs"].embedding
    assert embedding is not None
    assert (embedding.provider, embedding.api_base, embedding.model) == (
        "openai_like",
        "http://h:8080/v1",
        "m",
    )
    assert embedding.api_key_env == "K" and embedding.rerank == 0


def test_an_unknown_provider_is_refused_where_it_is_written(tmp_path: Path) -> None:
    [diagnostic] = validated(
        tmp_path, "{provider: cohere, api_base: 'http://h/v1', model: m}"
    ).diagnostics
    assert diagnostic.code.startswith("S") and diagnostic.line == 5


def test_a_provider_without_api_base_is_refused_with_the_fix(tmp_path: Path) -> None:
    [diagnostic] = validated(tmp_path, "{provider: openai_like, model: m}").diagnostics
    assert diagnostic.code == "R133" and "api_base" in diagnostic.message
    assert diagnostic.line == 5 and "api_base: http://" in diagnostic.hint


def test_a_provider_without_model_is_refused(tmp_path: Path) -> None:
    [diagnostic] = validated(
        tmp_path, "{provider: openai_like, api_base: 'http://h/v1'}"
    ).diagnostics
    assert diagnostic.code.startswith("S") and "model" in diagnostic.message


def test_reranking_a_service_s_vectors_is_refused_at_rerank(tmp_path: Path) -> None:
    embedding = "{provider: openai_like, api_base: 'http://h/v1', model: m, rerank: 20}"
    [diagnostic] = validated(tmp_path, embedding).diagnostics
    assert diagnostic.code == "R133" and "cannot rerank" in diagnostic.message
    assert diagnostic.line == 5 and "rerank: 0" in diagnostic.hint


def test_api_base_without_a_provider_is_refused(tmp_path: Path) -> None:
    embedding = "{model: all-MiniLM-L6-v2, api_base: 'http://h/v1'}"
    [diagnostic] = validated(tmp_path, embedding).diagnostics
    assert diagnostic.code == "R133" and "provider" in diagnostic.message


# end to end: runner index, then runner run


def service_pipeline(tmp_path: Path, url: str, model: str = "tiny-embed") -> Path:
    corpora = {
        "manuals": {
            "path": "corpus/appliances",
            "pages": {"max_words": 60},
            "embedding": {"provider": "openai_like", "api_base": url, "model": model},
        }
    }
    path = write_pipeline(tmp_path, SCRIPT, corpora=corpora)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("top_k: 1\n", "top_k: 1\n  mode: hybrid\n", 1), encoding="utf-8")
    return path


def test_index_then_run_search_by_the_service_s_vectors(tmp_path: Path) -> None:
    with embedding_service() as service:
        path = service_pipeline(tmp_path, service.url)
        assert "mode: hybrid" in path.read_text()
        indexed = CliRunner().invoke(main, ["index", str(path)])
        assert indexed.exit_code == 0, indexed.output
        assert "11 pages" in indexed.output and "no vectors" not in indexed.output
        embedded = len(service.requests)
        assert embedded >= 1
        ran = CliRunner().invoke(main, ["run", str(path), "Why does the kettle light glow?"])
        assert ran.exit_code == 0, ran.output
        assert "kettle.md" in ran.output  # the answer's source
        assert len(service.requests) > embedded  # the question was embedded by the service
    [folder] = (tmp_path / ".runner" / "indexes" / "manuals" / "vectors").iterdir()
    stored = (folder / "model.json").read_text()
    assert f'"openai_like:tiny-embed@{service.url}"' in stored and '"dimensions": 32' in stored


def test_a_change_of_model_re_embeds_every_page(tmp_path: Path) -> None:
    with embedding_service() as service:
        path = service_pipeline(tmp_path, service.url)
        assert CliRunner().invoke(main, ["index", str(path)]).exit_code == 0
        text = path.read_text().replace("model: tiny-embed", "model: other-embed")
        path.write_text(text)
        before = len(service.requests)
        second = CliRunner().invoke(main, ["index", str(path)])
        assert second.exit_code == 0, second.output
        texts = sum(len(body["input"]) for body in service.requests[before:])  # type: ignore[arg-type, misc]
    assert texts >= 11  # every page again, none of the other model's vectors kept


# runner validate --online


def test_validate_online_embeds_a_short_text_with_the_service(tmp_path: Path) -> None:
    with embedding_service() as service:
        path = service_pipeline(tmp_path, service.url)
        result = CliRunner().invoke(main, ["validate", str(path), "--online"])
    assert result.exit_code == 0, result.output
    assert [body["input"] for body in service.requests] == [["runner validate --online"]]


def test_validate_online_says_where_a_failing_service_is_named(tmp_path: Path) -> None:
    with embedding_service(failures=None) as service:
        path = service_pipeline(tmp_path, service.url)
        result = CliRunner().invoke(main, ["validate", str(path), "--online"])
    assert result.exit_code == 1
    assert "M106" in result.output and "HTTP 503" in result.output
    assert "--embedding" in result.output  # the hint
