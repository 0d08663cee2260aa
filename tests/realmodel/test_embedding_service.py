"""A corpus embedded by llama.cpp's server (`embedding: {provider: openai_like}`), started with
`--embedding` on the SmolLM2 GGUF: its `/v1/embeddings` sends a vector a token, which runner
averages; `runner validate --online`, `runner index` and a hybrid `runner run` go through it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from runner.cli import main
from runner.embedding.remote import RemoteEmbedder, RemoteSpec

PIPELINE = """\
version: 1
domain: home
llm:
  provider: scripted
  script:
    - {purpose: answer, reply: The light shows the kettle is heating.}
corpora:
  manuals:
    path: docs
    embedding: {provider: openai_like, api_base: "URL", model: smollm2}
retrieval_tool: manual_rag
tools:
  - {name: manual_rag, kind: retrieve, corpus: manuals, top_k: 1, mode: hybrid}
"""
PAGES = {
    "kettle.md": "# Kettle\n\n## Light\n\nThe kettle light glows while the water heats.\n",
    "toaster.md": "# Toaster\n\n## Warranty\n\nThe toaster's warranty lasts three years.\n",
}


@pytest.fixture(scope="module")
def embedding_server() -> Iterator[str]:
    from bench import llama_server

    why = llama_server.available()
    if why is not None:
        pytest.fail(why)
    log = Path(__file__).resolve().parents[2] / ".runner" / "test-llm-embedding-server.log"
    with llama_server.running(log, embedding=True) as server:
        yield server.url


def test_the_server_s_vectors_are_one_a_text_of_unit_length(embedding_server: str) -> None:
    embedder = RemoteEmbedder(RemoteSpec("openai_like", embedding_server, "smollm2"))
    vectors = embedder.embed(["The kettle light glows.", "Toaster warranty"])
    assert vectors.shape == (2, embedder.dimensions) and embedder.dimensions > 100
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_validate_index_and_a_hybrid_run_go_through_the_server(
    embedding_server: str, tmp_path: Path
) -> None:
    (tmp_path / "docs").mkdir()
    for name, text in PAGES.items():
        (tmp_path / "docs" / name).write_text(text, encoding="utf-8")
    path = tmp_path / "pipeline.yaml"
    path.write_text(PIPELINE.replace("URL", embedding_server), encoding="utf-8")
    online = CliRunner().invoke(main, ["validate", str(path), "--online"])
    assert online.exit_code == 0, online.output
    indexed = CliRunner().invoke(main, ["index", str(path)])
    assert indexed.exit_code == 0 and "no vectors" not in indexed.output, indexed.output
    ran = CliRunner().invoke(main, ["run", str(path), "Why does the kettle light glow?"])
    assert ran.exit_code == 0, ran.output
    assert "kettle.md" in ran.output
