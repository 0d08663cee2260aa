"""A pipeline file over the size limit is still found in its folder (by its first 10 MiB) and
reported as too large, without being read whole."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from runner.cli import main
from runner.config import find_pipeline_files
from runner.documents.composing import DEFAULT_LIMITS


def test_a_pipeline_over_the_size_limit_in_a_folder_is_found_and_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    filler = "# " + "x" * 98 + "\n"
    with big.open("w", encoding="utf-8") as handle:
        handle.write("domain: shop\ntools: []\n")
        handle.writelines(filler for _ in range(DEFAULT_LIMITS.max_bytes // len(filler) + 10))
    assert find_pipeline_files([tmp_path]) == [big]
    result = CliRunner().invoke(main, ["validate", str(tmp_path)])
    assert result.exit_code == 1
    assert "big.yaml:1:1: error: the file is larger than 10,485,760 bytes" in result.output
    assert len(result.output) < 2_000


PIPELINE = "domain: shop\ntools:\n  - {name: faq, kind: prompt, prompt: Answer}\n"


def test_a_pipeline_that_is_not_utf8_in_a_folder_is_found_and_refused(tmp_path: Path) -> None:
    # a stray byte, or the whole file saved as UTF-16: skipped unreported before
    (tmp_path / "stray.yaml").write_bytes(PIPELINE.encode().replace(b"Answer", b"Ans\xffwer"))
    (tmp_path / "wide.yaml").write_bytes(PIPELINE.encode("utf-16"))
    (tmp_path / "table.yaml").write_bytes("- {a: \xff}\n".encode("latin-1"))  # not a pipeline
    result = CliRunner().invoke(main, ["validate", str(tmp_path)])
    assert result.exit_code == 1
    assert "stray.yaml:3:42: error: the file is not UTF-8 text (byte 0xff) [Y005]" in result.output
    assert "wide.yaml:1:1: error: the file is not UTF-8 text" in result.output
    assert "2 files checked" in result.output
