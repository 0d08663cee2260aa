"""A corpus names its embedding model in the pipeline (`corpora.<name>.embedding.model`);
$RUNNER_EMBED_MODEL overrides it; runner's default applies when neither says one."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.config import validate_file
from runner.config.model import Corpus, Embedding
from runner.retrieval import backend, open_corpus

from .conftest import corpus_pipeline

PIPELINE = """\
domain: shop
corpora:
  docs:
    path: docs
    embedding: {model: MODEL}
tools:
  - name: docs_search
    kind: search
    corpus: docs
    mode: hybrid
"""


@pytest.fixture
def loaded_models(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The model names vector search asks for; each gets llama-index's MockEmbedding."""
    from llama_index.core.embeddings import MockEmbedding

    names: list[str] = []

    def load(name: str) -> MockEmbedding:
        names.append(name)
        return MockEmbedding(embed_dim=8)

    monkeypatch.setattr(backend, "load_embed_model", load)
    monkeypatch.delenv(backend.EMBED_MODEL_ENV, raising=False)
    return names


def pipeline_with(tmp_path: Path, embedding: Embedding | None):
    corpus = Corpus("manuals", Path("corpus/appliances"), max_words=60, embedding=embedding)
    return corpus_pipeline(tmp_path, corpora={"manuals": corpus})


def test_vector_search_uses_the_corpus_s_embedding_model(
    tmp_path: Path, loaded_models: list[str]
) -> None:
    pipeline = pipeline_with(tmp_path, Embedding("acme/tiny-embed"))
    assert len(open_corpus(pipeline, "manuals").search("kettle", 2, mode="vector")) == 2
    assert loaded_models == ["acme/tiny-embed"]


def test_the_corpus_s_model_survives_loading_a_persisted_index(
    tmp_path: Path, loaded_models: list[str]
) -> None:
    pipeline = pipeline_with(tmp_path, Embedding("acme/tiny-embed"))
    open_corpus(pipeline, "manuals")
    reloaded = open_corpus(pipeline, "manuals")
    assert not reloaded.status.rebuilt
    reloaded.search("kettle", 2, mode="hybrid")
    assert loaded_models == ["acme/tiny-embed"]


def test_runner_embed_model_overrides_the_corpus_s_model(
    tmp_path: Path, loaded_models: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(backend.EMBED_MODEL_ENV, "override/model")
    pipeline = pipeline_with(tmp_path, Embedding("acme/tiny-embed"))
    open_corpus(pipeline, "manuals").search("kettle", 2, mode="vector")
    assert loaded_models == ["override/model"]


def test_without_a_model_the_default_is_used(tmp_path: Path, loaded_models: list[str]) -> None:
    open_corpus(pipeline_with(tmp_path, None), "manuals").search("kettle", 2, mode="vector")
    assert loaded_models == [backend.DEFAULT_EMBED_MODEL]


def write(tmp_path: Path, model: str) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nText.\n", encoding="utf-8")
    path = tmp_path / "pipeline.yaml"
    path.write_text(PIPELINE.replace("MODEL", model), encoding="utf-8")
    return path


def test_a_model_name_is_kept_as_written(tmp_path: Path) -> None:
    report = validate_file(write(tmp_path, "BAAI/bge-small-en-v1.5"))
    assert report.pipeline is not None, report.diagnostics
    assert report.pipeline.corpora["docs"].embedding == Embedding("BAAI/bge-small-en-v1.5")


def test_a_model_folder_is_resolved_against_the_pipeline(tmp_path: Path) -> None:
    (tmp_path / "models" / "mini").mkdir(parents=True)
    report = validate_file(write(tmp_path, "models/mini"))
    assert report.pipeline is not None, report.diagnostics
    embedding = report.pipeline.corpora["docs"].embedding
    assert embedding == Embedding(str(tmp_path / "models" / "mini"))


def test_a_model_folder_may_not_leave_the_pipeline_s_folder(tmp_path: Path) -> None:
    assert [d.code for d in validate_file(write(tmp_path, "../models/mini")).diagnostics] == [
        "R108"
    ]


def test_the_embedding_block_takes_only_model(tmp_path: Path) -> None:
    path = write(tmp_path, "m")
    path.write_text(path.read_text().replace("{model: m}", "{model: m, dim: 8}"))
    [diagnostic] = validate_file(path).diagnostics
    assert diagnostic.code.startswith("S") and "dim" in diagnostic.message
