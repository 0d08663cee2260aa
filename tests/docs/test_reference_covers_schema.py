"""docs/reference.md names every key of schemas/pipeline.schema.json, and the README's docs map
lists every page of docs/: an author writes a pipeline from the docs alone."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "schemas" / "pipeline.schema.json"
REFERENCE = ROOT / "docs" / "reference.md"


def schema_keys(node: object) -> Iterator[str]:
    if isinstance(node, dict):
        properties = node.get("properties")
        if isinstance(properties, dict):
            yield from properties
        for value in node.values():
            yield from schema_keys(value)
    elif isinstance(node, list):
        for item in node:
            yield from schema_keys(item)


def mentioned(key: str, text: str) -> bool:
    """As code (`key`, `parent.key`, `{key: ...}`) or as a key of a YAML example."""
    name = re.escape(key)
    as_code = rf"`[^`\n]*(?<![\w-]){name}(?![\w-])[^`\n]*`"
    as_yaml_key = rf"^\s*(?:- )?{name}:"
    return bool(re.search(as_code, text) or re.search(as_yaml_key, text, re.MULTILINE))


def test_every_schema_key_is_named_in_docs_reference_md() -> None:
    reference = REFERENCE.read_text(encoding="utf-8")
    keys = set(schema_keys(json.loads(SCHEMA.read_text(encoding="utf-8"))))
    assert sorted(key for key in keys if not mentioned(key, reference)) == []


def test_the_readme_docs_map_lists_every_docs_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"\]\((docs/[\w-]+\.md)\)", readme))
    pages = {f"docs/{page.name}" for page in (ROOT / "docs").glob("*.md")}
    assert sorted(pages - listed) == []
