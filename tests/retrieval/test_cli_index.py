"""`runner index` and the `--no-build` path of `runner run`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml
from click.testing import CliRunner

from runner.cli import main

from .test_deep_fallback import SCRIPT, write_pipeline


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def test_index_builds_then_reports_up_to_date(tmp_path: Path) -> None:
    path = write_pipeline(tmp_path, SCRIPT)
    first = invoke("index", str(path))
    assert first.exit_code == 0, first.output
    assert "manuals: rebuilt (missing), 11 pages" in first.output
    assert (tmp_path / ".runner" / "indexes" / "manuals" / "manifest.json").is_file()
    second = invoke("index", str(path))
    assert "manuals: up to date, 11 pages" in second.output


def test_index_says_a_corpus_without_a_model_has_no_vectors(tmp_path: Path) -> None:
    output = invoke("index", str(write_pipeline(tmp_path, SCRIPT))).output
    assert "11 pages, no vectors (BM25 only" in output


def test_index_force_rebuilds(tmp_path: Path) -> None:
    path = write_pipeline(tmp_path, SCRIPT)
    invoke("index", str(path))
    assert "manuals: rebuilt (forced)" in invoke("index", str(path), "--force").output


def test_index_of_an_unknown_corpus_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke("index", str(write_pipeline(tmp_path, SCRIPT)), "--corpus", "faq")
    assert result.exit_code == 2
    assert "no corpus named faq (corpora: manuals)" in result.output


def test_index_with_a_missing_corpus_folder_fails_with_the_fix(tmp_path: Path) -> None:
    corpora = {"manuals": {"path": "corpus/nowhere"}}
    result = invoke("index", str(write_pipeline(tmp_path, SCRIPT, corpora=corpora)))
    assert result.exit_code == 1
    assert "corpus/nowhere" in result.output  # validation names the path and its place


def test_index_of_a_broken_pipeline_fails(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "domain": "x", "tools": "none"}))
    assert invoke("index", str(path)).exit_code == 1


def test_run_with_no_build_on_a_missing_index_fails_clearly(tmp_path: Path) -> None:
    path = write_pipeline(tmp_path, SCRIPT)
    result = invoke("run", str(path), "Why does the kettle light glow?", "--no-build")
    assert result.exit_code == 1
    assert "index of corpus 'manuals' is missing" in result.output
    assert "runner index" in result.output


def test_retrieval_modules_import_no_llama_index() -> None:
    code = (
        "import sys, runner.retrieval, runner.cli.index, runner.tools.retrieve, "
        "runner.tools.search, runner.tools.neighbor_search, runner.tools.deep_search; "
        "print(any(name.startswith('llama_index') for name in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_run_builds_a_missing_index_and_says_so(tmp_path: Path) -> None:
    path = write_pipeline(tmp_path, SCRIPT)
    result = invoke("run", str(path), "Why does the kettle light glow?")
    assert result.exit_code == 0, result.output
    assert "building the index of corpus 'manuals'" in result.output
    assert (tmp_path / ".runner" / "indexes" / "manuals" / "manifest.json").is_file()
