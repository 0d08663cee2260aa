"""What bounds a service's embedding, as a corpus's `embedding:` writes it: `batch_size` texts a
request, `timeout_s` a request, `max_chars` characters a text (the rest cut, and the bound part
of the vectors' identity); and the index, which records who made its vectors and refuses a
question vector of other dimensions than its pages'."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from runner.config import validate_file
from runner.embedding import endpoint, services
from runner.embedding.remote import (
    BATCH,
    MAX_CHARS,
    TIMEOUT_S,
    EmbeddingServiceError,
    RemoteSpec,
    spec_from,
)
from runner.embedding.services import embedder_for
from runner.retrieval.readers import CorpusError
from runner.retrieval.vectors import VectorIndex

from .embedding_service import embedding_service
from .provider_kit import QUESTION, invoke, write_pipeline


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(endpoint, "BACKOFF_S", 0.0)


def spec(url: str, **changes: object) -> RemoteSpec:
    return RemoteSpec("openai_like", url, "tiny-embed", **changes)  # type: ignore[arg-type]


def test_batch_size_is_the_texts_a_request() -> None:
    with embedding_service() as service:
        embedder_for(spec(service.url, batch_size=4)).embed([f"text {i}" for i in range(10)])
    assert [len(body["input"]) for body in service.requests] == [4, 4, 2]  # type: ignore[arg-type]


def test_a_text_longer_than_max_chars_is_sent_cut_to_it() -> None:
    with embedding_service() as service:
        embedder_for(spec(service.url, max_chars=120)).embed(["kettle " * 100, "short"])
    [sent] = service.requests
    assert sent["input"] == [("kettle " * 100)[:120], "short"]


def test_a_changed_max_chars_names_other_vectors() -> None:
    assert spec("http://h/v1").identity == "openai_like:tiny-embed@http://h/v1"
    assert spec("http://h/v1", max_chars=1000).identity.startswith(
        "openai_like:tiny-embed@http://h/v1#"
    )


def test_timeout_s_bounds_each_request() -> None:
    with embedding_service() as service, pytest.raises(EmbeddingServiceError, match="timed out"):
        service.delay_s = 0.5
        embedder_for(spec(service.url, timeout_s=0.1)).embed(["kettle"])
    assert len(service.requests) == endpoint.ATTEMPTS


def validated_embedding(tmp_path: Path, embedding: Mapping[str, object]) -> Any:
    report = validate_file(write_pipeline(tmp_path, embedding))
    assert report.pipeline is not None, report.diagnostics
    found = report.pipeline.corpora["manuals"].embedding
    assert found is not None
    return found


def test_the_bounds_written_are_the_service_s(tmp_path: Path) -> None:
    embedding = {
        "provider": "openai_like",
        "api_base": "http://h/v1",
        "model": "m",
        "timeout_s": 5,
        "batch_size": 8,
        "max_chars": 900,
    }
    read = spec_from(validated_embedding(tmp_path, embedding))
    assert (read.timeout_s, read.batch_size, read.max_chars) == (5.0, 8, 900)


def test_bounds_left_out_take_their_defaults(tmp_path: Path) -> None:
    embedding = {"provider": "openai_like", "api_base": "http://h/v1", "model": "m"}
    read = spec_from(validated_embedding(tmp_path, embedding))
    assert (read.timeout_s, read.batch_size, read.max_chars) == (TIMEOUT_S, BATCH, MAX_CHARS)


def test_a_bound_without_a_provider_is_refused(tmp_path: Path) -> None:
    report = validate_file(write_pipeline(tmp_path, {"model": "all-MiniLM-L6-v2", "batch_size": 8}))
    [diagnostic] = report.diagnostics
    assert diagnostic.code == "R133" and "batch_size" in diagnostic.message


def test_the_index_records_who_made_its_vectors(tmp_path: Path) -> None:
    with embedding_service() as service:
        path = write_pipeline(
            tmp_path, {"provider": "openai_like", "api_base": service.url, "model": "tiny"}
        )
        assert invoke("index", str(path)).exit_code == 0
    vectors = VectorIndex.load(
        tmp_path / ".runner" / "indexes" / "manuals", f"openai_like:tiny@{service.url}"
    )
    assert vectors is not None and vectors.precision == "openai_like"


def test_a_question_of_other_dimensions_than_the_pages_is_refused() -> None:
    vectors = np.eye(3, 4, dtype=np.float32)
    index = VectorIndex("openai_like:m@http://h/v1", vectors, np.zeros(3, dtype="S16"))
    with pytest.raises(CorpusError, match=r"have 4: .*runner index --force") as raised:
        index.scores(np.ones(8, dtype=np.float32))
    assert "8 dimensions" in str(raised.value)


def test_a_service_that_changed_its_model_is_said_at_the_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from . import embedding_service as served

    with embedding_service() as service:
        path = write_pipeline(
            tmp_path, {"provider": "openai_like", "api_base": service.url, "model": "tiny"}
        )
        assert invoke("index", str(path)).exit_code == 0
        monkeypatch.setattr(served, "DIMENSIONS", 16)  # the same name now serves another model
        monkeypatch.setattr(services, "_LOADED", {})  # as a new process: nothing learnt yet
        ran = invoke("run", "--no-build", str(path), QUESTION)
    assert "manual_rag' failed" in ran.output and "degraded round" in ran.output
    assert "16 dimensions" in ran.output and "runner index --force" in ran.output
