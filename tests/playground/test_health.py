"""`runner.playground.health`: `runner validate`'s diagnostics with their line, and `runner
explain`'s graph, of the served file."""

from __future__ import annotations

from pathlib import Path

from runner.playground.health import report


def test_a_valid_pipeline_has_no_findings_and_a_flowchart(support: Path) -> None:
    health = report(support)
    assert health.findings == []
    assert health.mermaid is not None and health.mermaid.startswith("flowchart")
    assert "compare_products" in health.mermaid


def test_an_invalid_pipeline_shows_each_error_with_its_offending_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        "version: 1\ndomain: demo\ndescription: d\ntools:\n"
        "  - name: a\n    kind: prompt\n    description: d\n    prompt: hi\n    priorty: 3\n",
        encoding="utf-8",
    )
    health = report(broken)
    assert health.errors >= 1 and health.mermaid is None
    finding = next(f for f in health.findings if f.severity == "error")
    assert finding.line == 9
    assert "priorty: 3" in finding.snippet and "^" in finding.snippet
    assert "broken.yaml:9:" in finding.headline
