"""The bombs benchmark: its cases are what they say (each refused with its own code, every
template bomb stopped by the budget), and `runner validate` as a whole process reports them all
at once, located, with exit 1 and no traceback (the one subprocess of the hostile-input tests)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench import bombs
from runner.templating import environment as templates

EXPECTED = {
    "nesting 500 deep": "Y010",
    "a 50 MB list": "Y009",  # at a tenth of its size it is under the size limit (Y011)
    "a 9 MB list (under the size limit)": "Y009",
    "750,000 keys": "Y009",
    "a billion laughs": "Y003",
    "a 9 MB line": "S107",
    "a NUL byte": "Y012",
    "9,500 tools, 1,500 of them naming unknown tools": "R102",
}


def test_every_yaml_bomb_is_refused_by_runner_validate_in_one_process(tmp_path: Path) -> None:
    assert set(EXPECTED) == set(bombs.YAML_BOMBS)
    paths = []
    for number, make in enumerate(bombs.YAML_BOMBS.values()):
        path = tmp_path / f"bomb{number}.yaml"
        path.write_text(make(0.1), encoding="utf-8")
        paths.append(str(path))
    done = subprocess.run(
        [sys.executable, "-c", "from runner.cli import main; main()", "validate", "--format",
         "json", *paths],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    files = json.loads(done.stdout)["files"]
    for expected, report in zip(EXPECTED.values(), files, strict=True):
        codes = {diagnostic["code"] for diagnostic in report["diagnostics"]}
        assert expected in codes, report
        assert all(diagnostic["line"] >= 1 for diagnostic in report["diagnostics"]), report


@pytest.mark.parametrize(("how", "source"), bombs.TEMPLATE_BOMBS.values(), ids=bombs.TEMPLATE_BOMBS)
def test_every_template_bomb_is_stopped_by_the_render_budget(how: str, source: str) -> None:
    with pytest.raises(templates.RenderBudgetError):
        getattr(templates, how)(source, {})


def test_the_lookup_figures_come_from_the_index_and_the_scan_alike() -> None:
    indexed, scanned = bombs.child_lookup(2_000), bombs.child_scan(2_000)
    assert sorted(indexed["found"]) == sorted(scanned["found"]) == ["Release 1999", "code1000"]
    assert indexed["listed"] == 2
