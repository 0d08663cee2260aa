"""`runner explain PIPELINE` on the command line: text, JSON and Mermaid."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner, Result

from runner.cli import main

from .conftest import PIPELINES, ROOT

SUPPORT = PIPELINES / "support" / "support.yaml"


def explain(*args: object) -> Result:
    return CliRunner().invoke(main, ["explain", *(str(arg) for arg in args)])


def test_the_text_shows_the_tables_the_trees_and_the_worst_case() -> None:
    result = explain(SUPPORT)
    assert result.exit_code == 0, result.output
    out = result.stdout
    for part in (
        "How each tool comes to run",
        "Coordinators",
        "Deep fallback (C27–C32)",
        "Worst-case LLM calls per question, along each path",
        "calls by purpose",
    ):
        assert part in out
    assert "At most 33 LLM calls per question (path 2: question + deep fallback)" in out
    assert "These are upper bounds; they assume:" in out


def test_the_text_shows_a_regular_expression_as_it_is_written(tmp_path: Path) -> None:
    # rich would read `[A-Z]` as markup and drop it: every cell is plain text
    pipeline = tmp_path / "p.yaml"
    pipeline.write_text(
        "version: 1\ndomain: t\ntools:\n"
        "  - {name: codes, kind: prompt, activation: {pattern: '[A-Z]-[0-9]+'}, prompt: x}\n"
    )
    out = explain(pipeline).stdout
    assert "rule: pattern [A-Z]-[0-9]+" in out
    assert "subtask <n>.<i>.n requires handbook_neighbors" in explain(SUPPORT).stdout


def test_json_is_one_object_with_every_part() -> None:
    result = explain(SUPPORT, "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["domain"] == "support"
    assert {row["name"] for row in data["tools"]} >= {"handbook_rag", "deep_search"}
    assert data["deep_fallback"]["coordinator"] == "deep_search"
    calls = data["llm_calls"]
    assert calls["worst_case"] == 33
    deep = calls["paths"][1]
    assert deep["deep_fallback"] is True and deep["total"] == sum(deep["calls"].values())
    assert calls["assumptions"]


def test_mermaid_prints_the_flowchart() -> None:
    result = explain(SUPPORT, "--format", "mermaid")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("flowchart TD\n")


def test_an_invalid_pipeline_is_an_error_that_names_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("version: 1\ndomain: x\ntools:\n  - {name: a, kind: nope}\n")
    result = explain(broken)
    assert result.exit_code == 1
    assert "broken.yaml:4" in result.stderr


def test_explaining_a_pipeline_imports_neither_llama_index_nor_pipeline_code() -> None:
    code = (
        "import sys; from click.testing import CliRunner; from runner.cli import main; "
        f"r = CliRunner().invoke(main, ['explain', {str(SUPPORT)!r}, '--format', 'json']); "
        "assert r.exit_code == 0, r.output; "
        "print(sorted(m for m in sys.modules if m.startswith('llama_index')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert done.stdout.strip() == "[]"
