"""Every `decompose` block the docs show follows the idiom for a parameter the extraction may
leave out (`| default([])`, `is defined`, or `required`): `runner validate` gives it no R126.

A reader copies these blocks; one that draws R126 would teach the very warning the docs tell
them how to avoid."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from runner.config import validate_file

DOCS = Path(__file__).resolve().parents[2] / "docs"
FENCE = re.compile(r"```ya?ml\n(.*?)```", re.S)


def decompose_blocks() -> list[tuple[str, dict[str, Any]]]:
    """(page: line, block) of each `decompose:` mapping in the docs' YAML snippets."""
    found: list[tuple[str, dict[str, Any]]] = []
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            try:
                data = yaml.safe_load(match.group(1))
            except yaml.YAMLError:
                continue  # a deliberately broken snippet (docs/validate.md shows some)
            line = text.count("\n", 0, match.start()) + 1
            found += [(f"{page.name}:{line}", block) for block in _decompose_in(data)]
    return found


def _decompose_in(data: Any) -> Iterator[dict[str, Any]]:
    if isinstance(data, list):
        for item in data:
            yield from _decompose_in(item)
    elif isinstance(data, dict):
        block = data.get("decompose")
        if isinstance(block, dict):
            yield block
        for value in data.values():
            yield from _decompose_in(value)


def _alone(block: dict[str, Any]) -> dict[str, Any]:
    """The block on a coordinator of its own; the tools its subtasks force are not shown."""
    subtasks = [
        {key: value for key, value in subtask.items() if key != "required_tools"}
        for subtask in block.get("subtasks", [])
    ]
    return {**block, "subtasks": subtasks} if subtasks else block


BLOCKS = decompose_blocks()


def test_the_docs_show_decompose_blocks_to_check() -> None:
    assert len(BLOCKS) >= 3  # orchestration.md, reference.md, tools.md


@pytest.mark.parametrize(("where", "block"), BLOCKS, ids=[where for where, _ in BLOCKS])
def test_r126_a_docs_decompose_block_reads_no_parameter_it_may_lack_unguarded(
    where: str, block: dict[str, Any], tmp_path: Path
) -> None:
    pipeline = {
        "version": 1,
        "domain": "docs",
        "tools": [
            {
                "name": "coordinator",
                "kind": "prompt",
                "prompt": "{{ task }}",
                "decompose": _alone(block),
            }
        ],
    }
    path = tmp_path / "pipeline.yaml"
    path.write_text(yaml.safe_dump(pipeline, sort_keys=False), encoding="utf-8")
    report = validate_file(path)
    assert [d.message for d in report.warnings if d.code == "R126"] == [], where
