"""`runner test` on broken test-case files: each gets located diagnostics and exit 1, the same
standard as `runner validate` (no traceback, no internal error)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from runner.cli import main

ROOT = Path(__file__).resolve().parents[2]
PIPELINE = ROOT / "pipelines" / "hr" / "hr.yaml"

CASE = """pipeline: {pipeline}
llm: {{provider: offline}}
cases:
  - name: a question
    turns:
      - message: {message}
        expect: {{outcome: answer}}
"""

# the message as written, and the column and code of its error (all on line 6)
BROKEN = {
    "a bool tag on a value it cannot hold": ("!!bool maybe", 18, "Y008"),
    "an int tag on an empty value": ('!!int ""', 18, "Y008"),
    "a timestamp tag on a word": ("!!timestamp x", 18, "Y008"),
    "nesting past the depth limit": ("[" * 200 + "]" * 200, 113, "Y010"),
    "a NUL byte": ("hello\x00", 23, "Y012"),
}


def run_case_file(tmp_path: Path, text: str) -> tuple[int, str]:
    path = tmp_path / "cases.yaml"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["test", str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


@pytest.mark.parametrize(("message", "col", "error_code"), BROKEN.values(), ids=BROKEN.keys())
def test_a_broken_value_in_a_case_file_is_a_located_error(
    tmp_path: Path, message: str, col: int, error_code: str
) -> None:
    code, output = run_case_file(tmp_path, CASE.format(pipeline=PIPELINE, message=message))
    assert code == 1
    assert f"cases.yaml:6:{col}: error:" in output and f"[{error_code}]" in output, output
    assert "internal error" not in output and "Traceback" not in output


@pytest.mark.parametrize(
    "pipeline", ["x" * 300 + ".yaml", '"a\\0b.yaml"', "pipelines/"], ids=["too long", "NUL", "dir"]
)
def test_a_pipeline_path_that_cannot_be_opened_is_a_located_t104(
    tmp_path: Path, pipeline: str
) -> None:
    code, output = run_case_file(tmp_path, CASE.format(pipeline=pipeline, message="hi"))
    assert code == 1
    assert "cases.yaml:1:11: error: pipeline file" in output and "[T104]" in output, output


def test_a_crash_while_loading_one_case_file_is_reported_against_it_and_the_others_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import runner.testing.execute as execute

    real = execute.load_case_file

    def load(path, pipelines):  # type: ignore[no-untyped-def]
        if path.name == "broken.yaml":
            raise KeyError("boom")
        return real(path, pipelines)

    monkeypatch.setattr(execute, "load_case_file", load)
    good = ROOT / "pipelines" / "hr" / "tests" / "leave.yaml"
    broken = tmp_path / "broken.yaml"
    broken.write_text(CASE.format(pipeline=PIPELINE, message="hi"), encoding="utf-8")
    result = CliRunner().invoke(main, ["test", str(broken), str(good)])
    assert result.exit_code == 1
    assert "internal error while checking this file: KeyError: 'boom'" in result.output
    assert "4 passed" in result.output
