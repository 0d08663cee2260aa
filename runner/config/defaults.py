"""Defaults that depend on another part of the pipeline file, shared by the semantic checks and
the model builder so that what `runner validate` reports is what runs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runner.config.keys import default

# The keys of a `deep_search` tool that name its search tools (C29).
SEARCH_TOOL_KEYS = ("search_tool", "neighbor_search_tool")


def simple_name(reference: str, domain: str) -> str:
    """A tool's simple name, from its simple or `<domain>.`-prefixed name (C15)."""
    prefix = f"{domain}."
    return reference[len(prefix) :] if reference.startswith(prefix) else reference


def deep_search_tool_names(data: Mapping[str, Any]) -> set[str]:
    """The simple names of the tools that some `deep_search` coordinator names as its search or
    neighbour search tool. They are `coordinator_only` unless written otherwise (C30), and
    writing otherwise is a validation error (R118)."""
    domain = data["domain"]
    return {
        simple_name(tool[key], domain)
        for tool in data["tools"]
        if tool["kind"] == "deep_search"
        for key in SEARCH_TOOL_KEYS
        if isinstance(tool.get(key), str)
    }


def default_activation(tool: Mapping[str, Any], deep_search_tools: set[str]) -> str:
    """The activation of a tool that does not write one."""
    if tool["name"] in deep_search_tools:
        return "coordinator_only"
    return str(default("tool", "activation"))
