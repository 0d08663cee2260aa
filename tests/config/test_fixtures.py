"""Every invalid fixture gives exactly the diagnostics its `# expect:` lines name (code,
severity, place, message); every valid fixture and example pipeline gives none."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from runner.cli import main
from runner.config import find_pipeline_files, validate_file

from .helpers import FIXTURES, ROOT

INVALID = sorted((FIXTURES / "invalid").glob("*.yaml"))
VALID = sorted((FIXTURES / "valid").glob("*.yaml"))
EXPECT = re.compile(
    r"^# expect: (?P<severity>error|warning) (?P<code>[A-Z]\d{3}) "
    r"(?:(?P<file>[^:\s]+):)?(?P<line>\d+):(?P<col>\d+) (?P<message>.+)$"
)


def expectations(path: Path) -> list[tuple[str, str, Path, int, int, str]]:
    found = []
    for line in path.read_bytes().decode("utf-8", errors="replace").splitlines():
        match = EXPECT.match(line)
        if match is None:
            break
        file = path.parent / match["file"] if match["file"] else path
        found.append(
            (
                match["severity"],
                match["code"],
                file.resolve(),
                int(match["line"]),
                int(match["col"]),
                match["message"],
            )
        )
    return found


def test_there_is_an_invalid_fixture_for_at_least_30_mistakes() -> None:
    assert len(INVALID) >= 30


@pytest.mark.parametrize("path", INVALID, ids=lambda path: path.stem)
def test_invalid_fixture_gives_exactly_its_expected_diagnostics(path: Path) -> None:
    expected = expectations(path)
    assert expected, f"{path.name} has no `# expect:` line"
    report = validate_file(path)
    actual = [
        (d.severity.value, d.code, d.file.resolve(), d.line, d.col, d.message)
        for d in report.diagnostics
    ]
    assert actual == expected
    assert not report.passed(strict=True)


@pytest.mark.parametrize("path", VALID, ids=lambda path: path.stem)
def test_valid_fixture_has_no_diagnostic_and_builds(path: Path) -> None:
    report = validate_file(path)
    assert report.diagnostics == ()
    assert report.pipeline is not None


def test_example_pipelines_are_valid() -> None:
    result = CliRunner().invoke(main, ["validate", "--strict", str(ROOT / "pipelines")])
    assert result.exit_code == 0, result.output


def test_every_example_pipeline_starts_with_the_schema_modeline() -> None:
    for path in find_pipeline_files([ROOT / "pipelines"]):
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert re.fullmatch(
            r"# yaml-language-server: \$schema=(\.\./)+schemas/pipeline\.schema\.json", first
        ), path


def test_every_documented_code_has_a_fixture() -> None:
    documented = set(re.findall(r"^\| `([YSR]\d{3})` \|", _docs(), re.MULTILINE))
    covered = {expectation[1] for path in INVALID for expectation in expectations(path)}
    # Codes no fixture can reach: an unreadable file, and the fallback for a schema keyword
    # the humanizer does not know (the schema uses none).
    unreachable = {"Y006", "Y009", "Y011", "S199"}  # Y009, Y011: files too big to keep here
    assert documented - unreachable == covered


def _docs() -> str:
    return (ROOT / "docs" / "validate.md").read_text(encoding="utf-8")
