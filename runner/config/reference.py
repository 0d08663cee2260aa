"""docs/reference.md's key tables, made from the pipeline schema (schemas/pipeline.schema.json).

The schema states each key once: its type and limits (which jsonschema checks), its `default`
(which the model builder fills in), its `description` (which error hints quote) and, where the
reference says more than a hint should, its `markdownDescription` (which editors show on hover
too). A default that is no fixed value ("the first type") is worded in `defaultDescription`.
This module writes those into the reference's tables, between the markers

    <!-- BEGIN keys: NAME -->  …  <!-- END keys: NAME -->

    python -m runner.config.reference           # rewrite the tables of docs/reference.md
    python -m runner.config.reference --check   # exit 1 when they differ from the schema
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.config.keys import definition, pipeline_schema, resolved

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference.md"
COMMAND = "python -m runner.config.reference"
NO_DEFAULT = "—"
CLARIFY_LINK = {"clarify": "#clarifying-questions-clarify"}


@dataclass(frozen=True)
class Table:
    """One key table: the keys of the schema object `definition` (a `$defs` name, or
    `pipeline` for the top level), with those of the objects named in `flatten` written as
    `parent.key`, and the keys of `links` linked to the section that explains them."""

    definition: str
    flatten: tuple[str, ...] = ()
    links: Mapping[str, str] = field(default_factory=dict)


TABLES = (
    Table(
        "pipeline",
        links={
            key: f"#{key}"
            for key in (
                "llm",
                "prompt_types",
                "corpora",
                "mcp_servers",
                "retrieval_tool",
                "deep_fallback",
                "answer",
                "limits",
                "tools",
            )
        },
    ),
    Table("llm"),
    Table("script_rule"),
    Table("prompt_types"),
    Table("corpus", flatten=("pages", "html", "embedding")),
    Table("rerank_endpoint"),
    Table("mcp_server"),
    Table("deep_fallback", flatten=("gatekeeper",)),
    Table("answer"),
    Table("limits"),
    Table("tool", links={"activation": "#activation", "output": "#output"}),
    Table("prompt_tool", links=CLARIFY_LINK),
    Table("lookup_tool", links=CLARIFY_LINK),
    Table("retrieve_tool"),
    Table("search_tool"),
    Table("neighbor_search_tool"),
    Table("deep_search_tool"),
    Table("python_tool"),
    Table("mcp_tool", links=CLARIFY_LINK),
    Table("decompose"),
    Table("subtask"),
    Table("clarify"),
)


def code(value: Any) -> str:
    """A default as YAML shows it: `keyword`, `false`, `["**/*"]`; an empty one as none."""
    if isinstance(value, str):
        return f"`{value}`" if value else '`""`'
    if value in ([], {}):  # absent means empty: an author reads "none"
        return "none"
    if isinstance(value, bool) or value is None:
        return f"`{json.dumps(value)}`"
    return f"`{json.dumps(value, ensure_ascii=False)}`"


def exclusive_pairs(node: Mapping[str, Any]) -> dict[str, str]:
    """`{first: second}` for the keys an object takes at most one of (`not: {required: …}`)."""
    denials = [node.get("not"), *(each.get("not") for each in node.get("allOf", ()))]
    pairs: dict[str, str] = {}
    for denial in denials:
        keys = denial.get("required", []) if isinstance(denial, Mapping) else []
        if len(keys) == 2 and set(denial) <= {"required", "description"}:
            pairs[keys[0]] = keys[1]
    return pairs


def one_of_required(node: Mapping[str, Any]) -> set[str]:
    """The keys of `anyOf: [{required: [a]}, {required: [b]}]`: one of them is required."""
    branches = node.get("anyOf", [])
    if all(set(branch) == {"required"} for branch in branches):
        return {key for branch in branches for key in branch["required"]}
    return set()


def rows(node: Mapping[str, Any], table: Table, prefix: str = "") -> Iterator[str]:
    pairs = exclusive_pairs(node)
    seconds = set(pairs.values())
    required = set(node.get("required", ()))
    one_of = one_of_required(node)
    for key, spec in node.get("properties", {}).items():
        prop = resolved(spec)
        if key in table.flatten and not prefix:
            yield from rows(prop, table, f"{key}.")
            continue
        if key in seconds:
            continue
        name = f"`{prefix}{key}`"
        if key in table.links:
            name = f"[{name}]({table.links[key]})"
        if key in pairs:
            name += f" / `{prefix}{pairs[key]}`"
        if key in required:
            default = "required"
        elif key in pairs and {key, pairs[key]} <= one_of:
            default = "required: one of the two"
        elif "defaultDescription" in prop:
            default = str(prop["defaultDescription"])
        elif "default" in prop:
            default = code(prop["default"])
        else:
            default = NO_DEFAULT
        text = prop.get("markdownDescription") or prop.get("description", "")
        yield f"| {name} | {default} | {text} |"


def table_text(table: Table) -> str:
    node = pipeline_schema() if table.definition == "pipeline" else definition(table.definition)
    lines = ["| key | default | what it is |", "|---|---|---|", *rows(node, table)]
    return "\n".join(lines)


def marker(name: str, end: bool = False) -> str:
    return f"<!-- {'END' if end else 'BEGIN'} keys: {name} -->"


def rewritten(text: str, tables: Sequence[Table] = TABLES) -> str:
    """The reference's text with every marked table made from the schema again."""
    for table in tables:
        begin, end = marker(table.definition), marker(table.definition, end=True)
        found = re.search(re.escape(begin) + r"\n.*?" + re.escape(end), text, re.DOTALL)
        if found is None:
            raise ValueError(f"docs/reference.md has no `{begin}` … `{end}`")
        made = f"{begin}\n{table_text(table)}\n{end}"
        text = text[: found.start()] + made + text[found.end() :]
    return text


def main(arguments: Sequence[str]) -> int:
    check = "--check" in arguments
    path = Path(next((a for a in arguments if not a.startswith("--")), REFERENCE))
    text = path.read_text(encoding="utf-8")
    new = rewritten(text)
    if check:
        if new != text:
            print(f"{path}: its key tables differ from the schema; run `{COMMAND}`")
            return 1
        return 0
    if new != text:
        path.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
