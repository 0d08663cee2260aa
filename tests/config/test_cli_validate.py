"""`runner validate`: exit codes, output formats, colour, folder search, and what it imports."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from xml.etree import ElementTree

import pytest
from click.testing import CliRunner

from runner.cli import main
from runner.cli.validate import _use_color
from runner.config import find_pipeline_files, validate_paths
from runner.config.schema import pipeline_schema, pipeline_validator

from .helpers import BASE, FIXTURES, ROOT

MINIMAL = str(ROOT / "pipelines" / "minimal.yaml")
INVALID = str(FIXTURES / "invalid" / "r102_unknown_required_tool.yaml")
WARNING_ONLY = str(FIXTURES / "invalid" / "r104_coordinator_only_never_required.yaml")


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["validate", *args])
    return result.exit_code, result.output


def test_exit_0_for_a_valid_file() -> None:
    code, output = run(MINIMAL)
    assert code == 0
    assert output.splitlines()[-1].startswith("1 file checked: 1 valid, 0 invalid")


def test_exit_1_for_an_invalid_file_with_a_compiler_style_line_and_a_caret() -> None:
    code, output = run(INVALID)
    assert code == 1
    lines = output.splitlines()
    assert lines[0].endswith(
        "r102_unknown_required_tool.yaml:15:28: error: unknown tool `prodcut_lookup` in "
        "required_tools; did you mean `product_lookup`? [R102]"
    )
    assert lines[1] == "  15 |           required_tools: [prodcut_lookup]"
    assert lines[2] == "     |                            ^"


def test_exit_2_for_a_path_that_does_not_exist(tmp_path: Path) -> None:
    code, _ = run(str(tmp_path / "missing.yaml"))
    assert code == 2


def test_exit_2_for_a_folder_without_pipelines(tmp_path: Path) -> None:
    (tmp_path / "cases.yaml").write_text("cases: []\n")
    code, output = run(str(tmp_path))
    assert code == 2
    assert "no pipeline files found" in output


def test_strict_makes_warnings_fail() -> None:
    assert run(WARNING_ONLY)[0] == 0
    assert run("--strict", WARNING_ONLY)[0] == 1


def test_json_format() -> None:
    code, output = run("--format", "json", MINIMAL, INVALID)
    document = json.loads(output)
    assert code == 1
    assert document["valid"] is False
    assert [f["valid"] for f in document["files"]] == [True, False]
    [diagnostic] = document["files"][1]["diagnostics"]
    assert (diagnostic["code"], diagnostic["line"], diagnostic["col"]) == ("R102", 15, 28)
    assert diagnostic["path"] == "tools[1].decompose.subtasks[0].required_tools[0]"


def test_github_format_writes_workflow_commands() -> None:
    code, output = run("--format", "github", INVALID)
    first = output.splitlines()[0]
    assert code == 1
    assert first.startswith("::error file=")
    assert ",line=15,col=28,title=runner R102::unknown tool `prodcut_lookup`" in first
    assert "%0Ahint: " in first


def test_github_format_reports_warnings_as_errors_when_strict() -> None:
    assert run("--format", "github", WARNING_ONLY)[1].startswith("::warning ")
    assert run("--format", "github", "--strict", WARNING_ONLY)[1].startswith("::error ")


def test_junit_format_has_one_case_per_file() -> None:
    code, output = run("--format", "junit", MINIMAL, INVALID)
    suite = ElementTree.fromstring(output).find("testsuite")
    assert code == 1
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    failure = suite.findall("testcase")[1].find("failure")
    assert failure is not None and "[R102]" in (failure.text or "")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_and_never_with_no_color(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert _use_color() is False
    monkeypatch.setattr(sys, "stdout", _Terminal())
    assert _use_color() is True
    monkeypatch.setenv("NO_COLOR", "1")
    assert _use_color() is False


def test_text_output_has_no_escape_codes_off_a_terminal() -> None:
    assert "\x1b[" not in run(INVALID)[1]


def test_folders_are_searched_for_pipeline_files_only(
    write_pipeline: Callable[..., Path], tmp_path: Path
) -> None:
    write_pipeline(BASE, name="shop.yaml")
    write_pipeline("domain: broken\ntools: [\n", name="nested/broken.yml")
    files = {
        "cases/support.yaml": "cases:\n  - message: hi\n",
        "data/rows.yaml": "- {model: K1}\n",
        ".runner/cache.yaml": BASE,
        "notes.txt": BASE,
    }
    for relative, content in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(content)
    found = [path.relative_to(tmp_path).as_posix() for path in find_pipeline_files([tmp_path])]
    assert found == ["nested/broken.yml", "shop.yaml"]


def test_a_file_given_by_name_is_always_checked(write_pipeline: Callable[..., Path]) -> None:
    path = write_pipeline("cases: []\n", name="cases.yaml")
    code, output = run(str(path))
    assert code == 1
    assert "[S102]" in output


def test_the_schema_validator_is_built_once_for_many_files(
    write_pipeline: Callable[..., Path], tmp_path: Path
) -> None:
    for index in range(40):
        write_pipeline(BASE.replace("shop", f"shop{index}"), name=f"p{index}.yaml")
    pipeline_validator()  # built (or already built) before the run
    before = (pipeline_validator.cache_info().misses, pipeline_schema.cache_info().misses)
    reports = validate_paths([tmp_path])
    assert len(reports) == 40 and all(report.passed() for report in reports)
    after = (pipeline_validator.cache_info().misses, pipeline_schema.cache_info().misses)
    assert after == before


def test_validate_never_imports_llama_index() -> None:
    # -X importtime lists every module imported, even ones a test run already loaded.
    result = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-c",
            "from runner.cli import main; main()",
            "validate",
            MINIMAL,
            str(FIXTURES / "valid"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()}
    assert not any(name.startswith("llama_index") for name in imported)
    assert not any(name.startswith("everything_plugins") for name in imported)
