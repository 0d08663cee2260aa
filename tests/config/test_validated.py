"""`load_pipeline` validates a pipeline once per change of its files (runner/config/validated.py):
a pipeline that passed with no diagnostic is built straight from its YAML while nothing it names
has changed; any change (the file, a template, a corpus folder's entries, the runner) checks it
in full again, and `validate_file` always checks."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import runner
import runner.config.checks
from runner.config import PipelineError, load_pipeline, validate_file

PIPELINE = """\
domain: shop
corpora:
  manual: {path: manual}
tools:
  - name: faq
    kind: prompt
    template: answer.j2
  - name: manual_rag
    kind: retrieve
    corpus: manual
"""
OLD = time.time() - 3600  # older than the timestamps validated.py refuses to trust


@pytest.fixture
def pipeline(tmp_path: Path) -> Path:
    (tmp_path / "manual").mkdir()
    (tmp_path / "manual" / "guide.md").write_text("# Guide\n\nDescale monthly.\n")
    (tmp_path / "answer.j2").write_text("Answer {{ task }}\n")
    path = tmp_path / "pipeline.yaml"
    path.write_text(PIPELINE)
    aged(tmp_path)
    return path


def aged(folder: Path) -> None:
    """Every file and folder below `folder` (itself included) dated an hour back."""
    for here, names, files in os.walk(folder):
        for name in [*names, *files]:
            os.utime(os.path.join(here, name), (OLD, OLD))
    os.utime(folder, (OLD, OLD))


@pytest.fixture
def checks_run(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files the semantic checks ran on, in order."""
    ran: list[Path] = []
    check = runner.config.checks.check

    def counted(document, named=None):  # type: ignore[no-untyped-def]
        ran.append(document.path)
        return check(document, named)

    monkeypatch.setattr(runner.config.checks, "check", counted)
    return ran


def test_a_valid_pipeline_is_checked_once_and_then_built_from_its_yaml(
    pipeline: Path, checks_run: list[Path]
) -> None:
    first, second = load_pipeline(pipeline), load_pipeline(pipeline)
    assert checks_run == [pipeline]
    assert second == first
    assert list((pipeline.parent / ".runner" / "validated").glob("pipeline-*.json"))


def test_validate_file_always_checks(pipeline: Path, checks_run: list[Path]) -> None:
    load_pipeline(pipeline)
    validate_file(pipeline), validate_file(pipeline)
    assert checks_run == [pipeline] * 3


def test_a_changed_template_is_checked_again_and_its_error_reported(
    pipeline: Path, checks_run: list[Path]
) -> None:
    load_pipeline(pipeline)
    (pipeline.parent / "answer.j2").write_text("Answer {{ task }\n")  # broken
    with pytest.raises(PipelineError, match=r"R109|R110|template"):
        load_pipeline(pipeline)


def test_a_changed_pipeline_file_is_checked_again(pipeline: Path, checks_run: list[Path]) -> None:
    load_pipeline(pipeline)
    pipeline.write_text(PIPELINE.replace("domain: shop", "domain: store"))
    assert load_pipeline(pipeline).domain == "store"
    assert len(checks_run) == 2


def test_a_document_added_to_a_corpus_folder_checks_the_pipeline_again(
    pipeline: Path, checks_run: list[Path]
) -> None:
    load_pipeline(pipeline)
    (pipeline.parent / "manual" / "more.md").write_text("# More\n")
    load_pipeline(pipeline)
    assert len(checks_run) == 2


def test_a_document_edited_in_a_corpus_folder_does_not(
    pipeline: Path, checks_run: list[Path]
) -> None:
    # validation lists a corpus's documents and never reads them: the index's manifest decides
    load_pipeline(pipeline)
    guide = pipeline.parent / "manual" / "guide.md"
    guide.write_text("# Guide\n\nDescale every week.\n")
    load_pipeline(pipeline)
    assert len(checks_run) == 1


def test_another_runner_version_checks_again(
    pipeline: Path, checks_run: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    load_pipeline(pipeline)
    monkeypatch.setattr(runner, "__version__", runner.__version__ + ".post1")
    load_pipeline(pipeline)
    assert len(checks_run) == 2


def test_nothing_is_remembered_while_a_named_folder_is_fresh(
    pipeline: Path, checks_run: list[Path]
) -> None:
    # a timestamp is coarser than two quick writes: a folder changed just now proves nothing
    os.utime(pipeline.parent / "manual")
    load_pipeline(pipeline), load_pipeline(pipeline)
    assert len(checks_run) == 2


def test_a_pipeline_with_a_warning_is_checked_every_time(
    tmp_path: Path, checks_run: list[Path]
) -> None:
    (tmp_path / "manual").mkdir()  # no documents: R122, a warning
    (tmp_path / "answer.j2").write_text("Answer {{ task }}\n")
    path = tmp_path / "pipeline.yaml"
    path.write_text(PIPELINE)
    aged(tmp_path)
    assert any(d.code == "R122" for d in validate_file(path).diagnostics)
    load_pipeline(path), load_pipeline(path)
    assert len(checks_run) == 3


def test_an_unreadable_record_only_costs_a_full_check(
    pipeline: Path, checks_run: list[Path]
) -> None:
    load_pipeline(pipeline)
    [record] = (pipeline.parent / ".runner" / "validated").glob("*.json")
    record.write_text("{not json")
    assert load_pipeline(pipeline).domain == "shop"
    assert len(checks_run) == 2
