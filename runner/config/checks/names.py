"""Names that must refer to something: unique tool names (R101), tool references that name a
tool of this pipeline (R102, simple or `<domain>.` name, C15) of the right kind (R103), and
prompt types that are declared (R105)."""

from __future__ import annotations

from runner.config.checks.context import KINDS_FOR, Checks
from runner.config.humanize import suggestion_suffix
from runner.documents.diagnostics import KeyPath


def duplicate_tools(checks: Checks) -> None:
    seen: dict[str, int] = {}
    for path, tool in checks.tool_items():
        name = tool["name"]
        if name in seen:
            first = checks.document.position(("tools", seen[name], "name")).line
            checks.emit(
                "R101",
                f"duplicate tool name `{name}` (first used at line {first})",
                (*path, "name"),
                hint="tool names must be unique within a pipeline: rename one",
            )
        else:
            seen[name] = int(path[1])


def tool_references(checks: Checks) -> None:
    data = checks.data
    if "retrieval_tool" in data:
        checks.resolve_tool(
            data["retrieval_tool"],
            ("retrieval_tool",),
            "retrieval_tool",
            KINDS_FOR["retrieval_tool"],
        )
    if "deep_fallback" in data:
        checks.resolve_tool(
            data["deep_fallback"]["coordinator"],
            ("deep_fallback", "coordinator"),
            "deep_fallback.coordinator",
            KINDS_FOR["coordinator"],
        )
    for path, tool in checks.tool_items():
        for key in ("search_tool", "neighbor_search_tool"):
            if key in tool and tool["kind"] == "deep_search":
                checks.resolve_tool(tool[key], (*path, key), key, KINDS_FOR[key])
        if tool["kind"] == "neighbor_search" and "source_tool" in tool:
            checks.resolve_tool(tool["source_tool"], (*path, "source_tool"), "source_tool")
        for sub_path, subtask in checks.subtask_items(path, tool):
            for index, name in enumerate(subtask.get("required_tools", ())):
                checks.resolve_tool(name, (*sub_path, "required_tools", index), "required_tools")
    for index, rule in enumerate(data.get("llm", {}).get("script", ())):
        if "tool" in rule:
            checks.resolve_tool(rule["tool"], ("llm", "script", index, "tool"), "llm.script")


def declared_prompt_types(checks: Checks) -> list[str]:
    prompt_types = checks.data.get("prompt_types")
    return list(prompt_types["types"]) if prompt_types else ["question"]


def prompt_type_names(checks: Checks) -> None:
    data = checks.data
    declared = declared_prompt_types(checks)
    places: list[tuple[KeyPath, str]] = []
    if "default" in data.get("prompt_types", {}):
        places.append((("prompt_types", "default"), data["prompt_types"]["default"]))
    for index, name in enumerate(data.get("deep_fallback", {}).get("prompt_types", ())):
        places.append((("deep_fallback", "prompt_types", index), name))
    for path, tool in checks.tool_items():
        for index, name in enumerate(tool.get("prompt_types", ())):
            places.append(((*path, "prompt_types", index), name))
    for path, name in places:
        if name not in declared:
            checks.emit(
                "R105",
                f"undeclared prompt type `{name}`" + suggestion_suffix(name, declared),
                path,
                hint=f"declared types: {', '.join(declared)} (under prompt_types.types)",
            )
