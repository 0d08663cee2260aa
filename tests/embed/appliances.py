"""The appliance manuals of tests/retrieval/corpora as a pipeline the embedding tests open:
one corpus, `manuals`, searched by a `retrieve` tool."""

from __future__ import annotations

import shutil
from pathlib import Path

CORPUS = Path(__file__).parents[1] / "retrieval" / "corpora" / "appliances"
PIPELINE = """\
domain: appliances
corpora:
  manuals:
    path: manuals
    pages: {max_words: 60}
EMBEDDING
tools:
  - name: manuals_search
    kind: retrieve
    corpus: manuals
    mode: MODE
    top_k: 3
"""
MODEL = "{model: all-MiniLM-L6-v2}"


def write(folder: Path, *, mode: str = "hybrid", embedding: str | None = MODEL) -> Path:
    """The manuals copied into `folder` and a pipeline over them; `embedding` is the corpus's
    `embedding:` mapping as YAML (None: the corpus names no model)."""
    shutil.copytree(CORPUS, folder / "manuals")
    path = folder / "pipeline.yaml"
    block = f"    embedding: {embedding}" if embedding else ""
    path.write_text(PIPELINE.replace("EMBEDDING", block).replace("MODE", mode), encoding="utf-8")
    return path
