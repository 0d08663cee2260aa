"""`embedding: {provider: llama_index, class: ...}`: a llama-index embedding class embeds. The
class here is a real one, llama-index-embeddings-openai-like's OpenAILikeEmbedding (a dev
dependency), talking to the tiny OpenAI-compatible server of embedding_service.py."""

from __future__ import annotations

import json
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest
from llama_index.core.base.embeddings.base import BaseEmbedding

from runner.config import validate_file
from runner.embedding import endpoint
from runner.embedding.class_embedder import import_class
from runner.embedding.remote import EmbeddingServiceError, RemoteSpec
from runner.embedding.services import embedder_for

from .embedding_service import DIMENSIONS, embedding_service, vector_of
from .provider_kit import QUESTION, invoke, vectors_record, write_pipeline

OPENAI_LIKE = "llama_index.embeddings.openai_like.OpenAILikeEmbedding"


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(endpoint, "BACKOFF_S", 0.0)


def spec(url: str, **changes: object) -> RemoteSpec:
    fields: dict[str, object] = {"embed_class": OPENAI_LIKE, "api_base": url} | changes
    return RemoteSpec("llama_index", model="tiny-embed", **fields)  # type: ignore[arg-type]


def unit(text: str) -> np.ndarray:
    vector = np.array(vector_of(text), dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_the_class_s_vectors_are_made_unit_length_one_a_text() -> None:
    with embedding_service() as service:
        vectors = embedder_for(spec(service.url)).embed(["kettle light glows", "toaster"])
    assert vectors.shape == (2, DIMENSIONS)
    assert np.allclose(vectors[0], unit("kettle light glows"), atol=1e-6)
    assert {body["model"] for body in service.requests} == {"tiny-embed"}  # as model_name


def test_runner_s_batch_is_one_call_of_the_class() -> None:
    """The class's own batch (10 texts by default) is set to runner's."""
    with embedding_service() as service:
        embedder_for(spec(service.url, batch_size=20)).embed([f"text {i}" for i in range(25)])
    assert [len(body["input"]) for body in service.requests] == [20, 5]  # type: ignore[arg-type]


def test_a_question_is_embedded_by_the_class_s_query_embedding() -> None:
    with embedding_service() as service:
        vector, pieces = embedder_for(spec(service.url)).question("kettle light")
    assert pieces is None and np.allclose(vector, unit("kettle light"), atol=1e-6)


def test_options_are_the_class_s_keyword_arguments() -> None:
    with embedding_service() as service:
        embedded = embedder_for(spec(service.url, options={"dimensions": 32}))
        embedded.embed(["kettle"])
    assert service.requests[0]["dimensions"] == 32


def test_the_key_reaches_the_class_as_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TINY_KEY", "secret-2")
    with embedding_service() as service:
        embedder_for(spec(service.url, api_key_env="TINY_KEY")).embed(["kettle"])
    assert service.keys == ["Bearer secret-2"]


def test_a_failing_service_is_tried_again_until_it_answers() -> None:
    with embedding_service(failures=2) as service:
        vectors = embedder_for(spec(service.url)).embed(["kettle"])
    assert len(service.requests) == 3 and vectors.shape == (1, DIMENSIONS)


def test_runner_s_attempts_are_the_only_ones() -> None:
    """The class's own retries are turned off: they would multiply runner's."""
    with embedding_service(failures=None) as service, pytest.raises(EmbeddingServiceError):
        embedder_for(spec(service.url)).embed(["kettle"])
    assert len(service.requests) == endpoint.ATTEMPTS


def test_a_class_slower_than_timeout_s_is_said_after_the_attempts() -> None:
    with embedding_service() as service:
        service.delay_s = 0.5
        with pytest.raises(EmbeddingServiceError) as raised:
            embedder_for(spec(service.url, timeout_s=0.1)).embed(["kettle"])
        # an attempt given up on still reaches the server, later on a loaded machine
        deadline = time.monotonic() + 10
        while len(service.requests) < endpoint.ATTEMPTS and time.monotonic() < deadline:
            time.sleep(0.05)
    assert len(service.requests) == endpoint.ATTEMPTS
    assert OPENAI_LIKE in str(raised.value) and f"tried {endpoint.ATTEMPTS} times" in str(
        raised.value
    )


def test_only_llama_index_embedding_classes_are_imported() -> None:
    with pytest.raises(EmbeddingServiceError, match=r"llama_index\.embeddings\.<package>"):
        import_class("os.system")


def test_a_class_whose_package_is_missing_names_the_package() -> None:
    with pytest.raises(EmbeddingServiceError, match="pip install llama-index-embeddings-nowhere"):
        import_class("llama_index.embeddings.nowhere.NowhereEmbedding")


def test_a_class_that_cannot_be_built_from_its_options_is_said() -> None:
    wrong = spec("http://127.0.0.1:9/v1", options={"embed_batch_size": "many"})
    with pytest.raises(
        EmbeddingServiceError, match=r"could not be built from `embedding\.options`"
    ):
        embedder_for(wrong).embed(["kettle"])


def test_core_s_mock_embedding_can_be_named() -> None:
    mock = RemoteSpec(
        "llama_index",
        "",
        "mock",
        embed_class="llama_index.core.embeddings.MockEmbedding",
        options={"embed_dim": 8},
    )
    vectors = embedder_for(mock).embed(["a", "b", "c"])
    assert vectors.shape == (3, 8)


# validation and end to end


def test_a_llama_index_embedding_needs_its_class(tmp_path: Path) -> None:
    report = validate_file(write_pipeline(tmp_path, {"provider": "llama_index", "model": "m"}))
    [diagnostic] = report.diagnostics
    assert diagnostic.code.startswith("S") and "class" in diagnostic.message


def test_a_class_outside_llama_index_embeddings_is_refused(tmp_path: Path) -> None:
    embedding = {"provider": "llama_index", "model": "m", "class": "os.path.Thing"}
    [diagnostic] = validate_file(write_pipeline(tmp_path, embedding)).diagnostics
    assert diagnostic.code.startswith("S") and "llama-index embedding class" in diagnostic.message


def test_class_with_another_provider_is_refused(tmp_path: Path) -> None:
    embedding = {"provider": "openai_like", "api_base": "http://h/v1", "model": "m"}
    embedding["class"] = OPENAI_LIKE
    [diagnostic] = validate_file(write_pipeline(tmp_path, embedding)).diagnostics
    assert diagnostic.code == "R133" and "llama_index" in diagnostic.message


def test_options_with_a_provider_that_reads_none_are_refused(tmp_path: Path) -> None:
    embedding = {"provider": "openai_like", "api_base": "http://h/v1", "model": "m"}
    embedding["options"] = {"dimensions": 256}
    [diagnostic] = validate_file(write_pipeline(tmp_path, embedding)).diagnostics
    assert diagnostic.code == "R133" and "options" in diagnostic.message


def test_a_class_whose_package_is_not_installed_is_a_warning_naming_it(tmp_path: Path) -> None:
    embedding = {"provider": "llama_index", "model": "m"}
    embedding["class"] = "llama_index.embeddings.nowhere.NowhereEmbedding"
    report = validate_file(write_pipeline(tmp_path, embedding))
    [diagnostic] = report.diagnostics
    assert diagnostic.code == "R133" and diagnostic.severity.value == "warning"
    assert "pip install llama-index-embeddings-nowhere" in diagnostic.message


def test_a_llama_index_class_needs_no_api_base(tmp_path: Path) -> None:
    embedding = {"provider": "llama_index", "model": "m", "class": OPENAI_LIKE}
    report = validate_file(write_pipeline(tmp_path, embedding))
    assert report.pipeline is not None and not report.diagnostics, report.diagnostics


def test_index_then_run_search_by_the_class_s_vectors(tmp_path: Path) -> None:
    with embedding_service() as service:
        embedding = {
            "provider": "llama_index",
            "class": OPENAI_LIKE,
            "model": "tiny-embed",
            "api_base": service.url,
        }
        path = write_pipeline(tmp_path, embedding)
        assert invoke("validate", str(path), "--online").exit_code == 0
        indexed = invoke("index", str(path))
        assert indexed.exit_code == 0 and "no vectors" not in indexed.output, indexed.output
        ran = invoke("run", str(path), QUESTION)
        assert ran.exit_code == 0 and "kettle.md" in ran.output, ran.output
    stored = json.loads(vectors_record(tmp_path))
    assert stored["model"].startswith(f"llama_index:tiny-embed@{OPENAI_LIKE}#")
    assert (stored["provider"], stored["dimensions"]) == ("llama_index", DIMENSIONS)


def test_validate_online_says_a_class_that_cannot_embed(tmp_path: Path) -> None:
    with embedding_service(failures=None) as service:
        embedding = {"provider": "llama_index", "class": OPENAI_LIKE, "model": "m"}
        path = write_pipeline(tmp_path, embedding | {"api_base": service.url})
        result = invoke("validate", str(path), "--online")
    assert result.exit_code == 1
    assert "M106" in result.output and OPENAI_LIKE in result.output


# a class of the tests' own, under llama_index.embeddings. as a module of a package would be


class TwoWays(BaseEmbedding):
    """Questions one way, pages the other; `wait_s` before each page batch, with no timeout of
    its own."""

    wait_s: float = 0.0
    fails: int = 0  # pages' calls that raise a long error first

    def _get_query_embedding(self, query: str) -> list[float]:
        return [1.0, 0.0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return [1.0, 0.0]

    def _get_text_embedding(self, text: str) -> list[float]:
        time.sleep(self.wait_s)
        if self.fails:
            self.fails -= 1
            raise RuntimeError("service unavailable " + "and more detail " * 100)
        return [0.0, 1.0]


@pytest.fixture
def two_ways(monkeypatch: pytest.MonkeyPatch) -> str:
    module = types.ModuleType("llama_index.embeddings.runner_tests")
    module.TwoWays = TwoWays  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    return f"{module.__name__}.TwoWays"


def test_a_question_goes_through_the_query_embedding_and_pages_through_the_text_one(
    two_ways: str,
) -> None:
    embedder = embedder_for(RemoteSpec("llama_index", "", "two", embed_class=two_ways))
    assert embedder.question("kettle")[0].tolist() == [1.0, 0.0]
    assert embedder.embed(["kettle"]).tolist() == [[0.0, 1.0]]


def test_a_class_with_no_timeout_of_its_own_is_waited_for_timeout_s(two_ways: str) -> None:
    slow = RemoteSpec(
        "llama_index", "", "two", embed_class=two_ways, timeout_s=0.05, options={"wait_s": 0.3}
    )
    started = time.perf_counter()
    with pytest.raises(EmbeddingServiceError, match=r"no reply within 0\.05 s"):
        embedder_for(slow).embed(["kettle"])
    assert time.perf_counter() - started < 0.3 * endpoint.ATTEMPTS


def test_a_class_s_error_is_tried_again_and_said_in_a_line(two_ways: str) -> None:
    failing = RemoteSpec(
        "llama_index", "", "two", embed_class=two_ways, options={"fails": endpoint.ATTEMPTS}
    )
    with pytest.raises(EmbeddingServiceError) as raised:
        embedder_for(failing).embed(["kettle"])
    message = str(raised.value)
    assert "RuntimeError: service unavailable" in message and len(message) < 500
    assert f"tried {endpoint.ATTEMPTS} times" in message
    recovering = RemoteSpec("llama_index", "", "two", embed_class=two_ways, options={"fails": 1})
    assert embedder_for(recovering).embed(["kettle"]).tolist() == [[0.0, 1.0]]
