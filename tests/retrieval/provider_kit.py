"""A small pipeline whose one corpus names an embedding provider (or a rerank endpoint), for
the tests of embedding and rerank services: a hybrid retrieve tool over three short manuals and
a scripted answer, so that `runner run` shows which page the search put first."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from runner.cli import main

PAGES = {
    "kettle.md": "# Kettle\n\n## Light\n\nThe kettle light glows while the water heats.\n",
    "toaster.md": "# Toaster\n\n## Warranty\n\nThe toaster's warranty lasts three years.\n",
    "dryer.md": "# Dryer\n\n## Filter\n\nClean the dryer's lint filter after every load.\n",
}
QUESTION = "Why does the kettle light glow?"


def write_pipeline(tmp_path: Path, embedding: Mapping[str, Any]) -> Path:
    (tmp_path / "docs").mkdir(exist_ok=True)
    for name, text in PAGES.items():
        (tmp_path / "docs" / name).write_text(text, encoding="utf-8")
    pipeline = {
        "version": 1,
        "domain": "home",
        "llm": {
            "provider": "scripted",
            "script": [{"purpose": "answer", "reply": "From the manual."}],
        },
        "corpora": {"manuals": {"path": "docs", "embedding": dict(embedding)}},
        "retrieval_tool": "manual_rag",
        "tools": [
            {"name": "manual_rag", "kind": "retrieve", "corpus": "manuals", "top_k": 1}
            | {"mode": "hybrid"}
        ],
    }
    path = tmp_path / "pipeline.yaml"
    path.write_text(yaml.safe_dump(pipeline, sort_keys=False), encoding="utf-8")
    return path


def invoke(*arguments: str) -> Any:
    return CliRunner().invoke(main, list(arguments))


def vectors_record(tmp_path: Path) -> str:
    """The index's model.json: what its vectors were made by."""
    [folder] = (tmp_path / ".runner" / "indexes" / "manuals" / "vectors").iterdir()
    return (folder / "model.json").read_text(encoding="utf-8")
