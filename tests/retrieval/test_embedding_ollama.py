"""`embedding: {provider: ollama, api_base, model}`: Ollama's own `POST /api/embed`
({model, input} -> {embeddings}), against a tiny server that answers as Ollama does
(embedding_service.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from runner.embedding import endpoint
from runner.embedding.remote import RemoteSpec
from runner.embedding.services import embedder_for

from .embedding_service import DIMENSIONS, embedding_service, vector_of
from .provider_kit import QUESTION, invoke, vectors_record, write_pipeline


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(endpoint, "BACKOFF_S", 0.0)


def ollama(url: str, **changes: object) -> RemoteSpec:
    """Ollama is named by its server's address: the tiny server's, without /v1."""
    return RemoteSpec("ollama", url.removesuffix("/v1"), "nomic-embed-text", **changes)  # type: ignore[arg-type]


def test_ollama_s_vectors_come_from_api_embed_made_unit_length() -> None:
    with embedding_service() as service:
        vectors = embedder_for(ollama(service.url)).embed(["kettle light glows", "toaster"])
    expected = np.array(vector_of("kettle light glows"), dtype=np.float32)
    assert vectors.shape == (2, DIMENSIONS)
    assert np.allclose(vectors[0], expected / np.linalg.norm(expected), atol=1e-6)
    [body] = service.requests
    assert body == {
        "model": "nomic-embed-text",
        "input": ["kettle light glows", "toaster"],
        "truncate": True,
    }


def test_ollama_s_options_ride_in_the_request() -> None:
    with embedding_service() as service:
        embedder_for(ollama(service.url, options={"num_ctx": 8192})).embed(["kettle"])
    assert service.requests[0]["options"] == {"num_ctx": 8192}


def test_options_are_part_of_the_identity_the_vectors_are_stored_under() -> None:
    plain = ollama("http://127.0.0.1:11434")
    assert plain.identity == "ollama:nomic-embed-text@http://127.0.0.1:11434"
    tuned = ollama("http://127.0.0.1:11434", options={"num_ctx": 8192})
    assert tuned.identity.startswith(plain.identity + "#") and tuned.identity != plain.identity


def test_ollama_failing_is_retried_then_named() -> None:
    with embedding_service(failures=2) as service:
        vectors = embedder_for(ollama(service.url)).embed(["kettle"])
    assert len(service.requests) == 3 and vectors.shape == (1, DIMENSIONS)


def test_index_then_run_search_by_ollama_s_vectors(tmp_path: Path) -> None:
    with embedding_service() as service:
        base = service.url.removesuffix("/v1")
        path = write_pipeline(
            tmp_path, {"provider": "ollama", "api_base": base, "model": "nomic-embed-text"}
        )
        indexed = invoke("index", str(path))
        assert indexed.exit_code == 0 and "no vectors" not in indexed.output, indexed.output
        ran = invoke("run", str(path), QUESTION)
        assert ran.exit_code == 0, ran.output
        assert "kettle.md" in ran.output
    stored = json.loads(vectors_record(tmp_path))
    assert stored["model"] == f"ollama:nomic-embed-text@{base}"
    assert (stored["provider"], stored["dimensions"]) == ("ollama", DIMENSIONS)


def test_validate_online_embeds_with_ollama(tmp_path: Path) -> None:
    with embedding_service() as service:
        base = service.url.removesuffix("/v1")
        path = write_pipeline(tmp_path, {"provider": "ollama", "api_base": base, "model": "m"})
        result = invoke("validate", str(path), "--online")
    assert result.exit_code == 0, result.output
    assert [body["input"] for body in service.requests] == [["runner validate --online"]]


def test_validate_online_names_ollama_s_fix_when_it_cannot_embed(tmp_path: Path) -> None:
    with embedding_service() as service:  # at /v1: Ollama's own API is not there
        path = write_pipeline(
            tmp_path, {"provider": "ollama", "api_base": service.url, "model": "m"}
        )
        result = invoke("validate", str(path), "--online")
    assert result.exit_code == 1
    assert "M106" in result.output and "HTTP 404" in result.output
    assert "ollama pull" in result.output and "without /api or /v1" in result.output
