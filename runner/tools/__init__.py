"""Built-in tool kinds: one module per kind, each exposing `build(config, services) -> Tool`.

The engine never imports this package; the command line composes tools and engine. Modules are
imported lazily, so a pipeline without retrieval tools never imports llama-index. `KIND_MODULES`
is the registry; the schema's `kind` enum names the same set (tests/tools/test_kind_registry.py).
The LLM providers have one like it: a name to what builds it (runner.llm.providers.PROVIDERS).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from runner.config.model import Pipeline, ToolKind
from runner.tools.services import ToolServices

if TYPE_CHECKING:
    from runner.engine.protocols import Tool

__all__ = ["KIND_MODULES", "ToolServices", "build_tools"]

KIND_MODULES: dict[ToolKind, str] = {
    ToolKind.PROMPT: "runner.tools.prompt",
    ToolKind.LOOKUP: "runner.tools.lookup",
    ToolKind.PYTHON: "runner.tools.python_tool",
    ToolKind.RETRIEVE: "runner.tools.retrieve",
    ToolKind.SEARCH: "runner.tools.search",
    ToolKind.NEIGHBOR_SEARCH: "runner.tools.neighbor_search",
    ToolKind.DEEP_SEARCH: "runner.tools.deep_search",
    ToolKind.MCP: "runner.tools.mcp",
}


def build_tools(pipeline: Pipeline, services: ToolServices) -> dict[str, Tool]:
    """Every tool of the pipeline, by simple name, in file order.

    A tool with a `decompose` block is wrapped in the declarative coordinator
    (runner/tools/declarative.py), whatever its kind: the engine sees YAML and Python
    coordinators alike, through the protocols only.
    """
    from runner.tools.declarative import wrap

    tools: dict[str, Tool] = {}
    for config in pipeline.tools:
        module = importlib.import_module(KIND_MODULES[config.kind])
        tools[config.name] = wrap(module.build(config, services), config)
    return tools
