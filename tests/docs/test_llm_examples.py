"""Every `llm:` block that docs/llm.md and docs/reference.md show is a valid `llm` block of the
pipeline schema: an author who pastes one gets no unknown key and no wrong value."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ("llm.md", "reference.md", "serve.md")
YAML_BLOCK = re.compile(r"^```yaml\n(?P<body>.*?)^```", re.MULTILINE | re.DOTALL)


def llm_blocks() -> list[tuple[str, str]]:
    blocks = []
    for name in DOCS:
        text = (ROOT / "docs" / name).read_text(encoding="utf-8")
        for match in YAML_BLOCK.finditer(text):
            if match["body"].startswith("llm:"):
                line = text[: match.start()].count("\n") + 1
                blocks.append((f"docs/{name}:{line}", match["body"]))
    return blocks


def llm_schema() -> dict:
    schema = json.loads((ROOT / "schemas" / "pipeline.schema.json").read_text(encoding="utf-8"))
    return {"$defs": schema["$defs"], "$ref": "#/$defs/llm"}


def test_the_docs_show_llm_blocks() -> None:
    assert len(llm_blocks()) >= 5


@pytest.mark.parametrize(("where", "body"), llm_blocks(), ids=[w for w, _ in llm_blocks()])
def test_an_llm_block_of_the_docs_meets_the_schema(where: str, body: str) -> None:
    block = yaml.safe_load(body)["llm"]
    errors = [e.message for e in jsonschema.Draft202012Validator(llm_schema()).iter_errors(block)]
    assert errors == [], where
