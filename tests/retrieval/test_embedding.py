"""A corpus names its embedding model in the pipeline (`corpora.<name>.embedding.model`): a
model runner carries (`all-MiniLM-L6-v2`) or a folder beside the pipeline with a BERT model's
files. Any other name is refused by validation (R133): runner downloads nothing."""

from __future__ import annotations

from pathlib import Path

from runner.config import validate_file
from runner.config.model import Embedding

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


def write(tmp_path: Path, model: str) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nText.\n", encoding="utf-8")
    path = tmp_path / "pipeline.yaml"
    path.write_text(PIPELINE.replace("MODEL", model), encoding="utf-8")
    return path


def model_folder(tmp_path: Path, *files: str) -> None:
    folder = tmp_path / "models" / "mini"
    folder.mkdir(parents=True)
    for name in files:
        (folder / name).write_text("{}", encoding="utf-8")


def test_the_packaged_model_is_kept_by_name(tmp_path: Path) -> None:
    report = validate_file(write(tmp_path, "all-MiniLM-L6-v2"))
    assert report.pipeline is not None, report.diagnostics
    assert report.pipeline.corpora["docs"].embedding == Embedding("all-MiniLM-L6-v2")


def test_a_model_name_runner_does_not_carry_is_refused_with_the_one_it_does(
    tmp_path: Path,
) -> None:
    [diagnostic] = validate_file(write(tmp_path, "BAAI/bge-small-en-v1.5")).diagnostics
    assert diagnostic.code == "R133"
    assert (diagnostic.line, diagnostic.col) == (5, 24)  # where the name starts
    assert "all-MiniLM-L6-v2" in diagnostic.hint and "does not fetch" in diagnostic.hint


def test_a_model_folder_is_resolved_against_the_pipeline(tmp_path: Path) -> None:
    model_folder(tmp_path, "config.json", "tokenizer.json", "model.safetensors")
    report = validate_file(write(tmp_path, "models/mini"))
    assert report.pipeline is not None, report.diagnostics
    embedding = report.pipeline.corpora["docs"].embedding
    assert embedding == Embedding(str(tmp_path / "models" / "mini"))


def test_a_model_folder_without_the_model_s_files_names_the_missing_ones(tmp_path: Path) -> None:
    model_folder(tmp_path, "config.json")
    [diagnostic] = validate_file(write(tmp_path, "models/mini")).diagnostics
    assert diagnostic.code == "R133"
    assert "tokenizer.json, model.safetensors" in diagnostic.message


def test_a_model_folder_may_not_leave_the_pipeline_s_folder(tmp_path: Path) -> None:
    (tmp_path / "models" / "mini").mkdir(parents=True)
    (tmp_path / "inner").mkdir()
    path = write(tmp_path / "inner", "../models/mini")
    assert [d.code for d in validate_file(path).diagnostics] == ["R108"]


def test_the_embedding_block_takes_only_model_and_rerank(tmp_path: Path) -> None:
    path = write(tmp_path, "all-MiniLM-L6-v2")
    path.write_text(path.read_text().replace("all-MiniLM-L6-v2}", "all-MiniLM-L6-v2, dim: 8}"))
    [diagnostic] = validate_file(path).diagnostics
    assert diagnostic.code.startswith("S") and "dim" in diagnostic.message


def test_rerank_defaults_to_the_first_twenty_candidates(tmp_path: Path) -> None:
    report = validate_file(write(tmp_path, "all-MiniLM-L6-v2"))
    assert report.pipeline is not None, report.diagnostics
    assert report.pipeline.corpora["docs"].embedding.rerank == 20  # type: ignore[union-attr]


def test_rerank_zero_turns_it_off(tmp_path: Path) -> None:
    path = write(tmp_path, "all-MiniLM-L6-v2, rerank: 0")
    report = validate_file(path)
    assert report.pipeline is not None, report.diagnostics
    assert report.pipeline.corpora["docs"].embedding == Embedding("all-MiniLM-L6-v2", 0)


def test_a_negative_rerank_is_refused_where_it_is_written(tmp_path: Path) -> None:
    [diagnostic] = validate_file(write(tmp_path, "all-MiniLM-L6-v2, rerank: -1")).diagnostics
    assert diagnostic.code.startswith("S") and "rerank" in diagnostic.message
    assert diagnostic.line == 5
