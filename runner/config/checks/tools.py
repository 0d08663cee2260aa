"""Each tool's own settings, by kind: its templates and their variables, its extraction schema,
its clarification, its table, and for `python` tools the `module:Class` reference (R115), which
is checked on the text: validation never imports pipeline code."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from runner.config.checks.context import Checks
from runner.config.checks.extraction import clarify_parameters, extraction
from runner.config.checks.paths import existing_path
from runner.config.checks.tables import lookup_table
from runner.config.checks.templates import file_template, inline_template, template_pair
from runner.documents.diagnostics import KeyPath
from runner.purposes import CLARIFY_VARIABLES, PROMPT_TOOL_VARIABLES, PURPOSE_VARIABLES, Purpose

_PYTHON_REFERENCE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_DEEP_SEARCH_TEMPLATES = (
    ("missing_template", Purpose.MISSING_INFO),
    ("compose_template", Purpose.COMPOSE),
)


def tool_settings(checks: Checks) -> None:
    for path, tool in checks.tool_items():
        kind = tool["kind"]
        if kind == "prompt":
            template_pair(checks, path, PROMPT_TOOL_VARIABLES)
            if "offline" in tool:  # the reply without a model: the prompt's variables
                inline_template(checks, (*path, "offline"), PROMPT_TOOL_VARIABLES)
            if "offline_template" in tool:
                file_template(checks, (*path, "offline_template"), PROMPT_TOOL_VARIABLES)
            if "parameters" in tool:
                extraction(checks, (*path, "parameters"), PURPOSE_VARIABLES[Purpose.EXTRACT])
        if "clarify" in tool:
            inline_template(checks, (*path, "clarify", "question"), CLARIFY_VARIABLES)
            clarify_parameters(checks, path, tool)
        if kind == "lookup":
            lookup_table(checks, path, tool)
        if kind == "search" and "read_template" in tool:
            file_template(checks, (*path, "read_template"), PURPOSE_VARIABLES[Purpose.READ_PAGE])
        if kind == "deep_search":
            for key, purpose in _DEEP_SEARCH_TEMPLATES:
                if key in tool:
                    file_template(checks, (*path, key), PURPOSE_VARIABLES[purpose])
        if kind == "python":
            python_tool(checks, path, tool)


def python_tool(checks: Checks, path: KeyPath, tool: Mapping[str, Any]) -> None:
    if not _PYTHON_REFERENCE.match(tool["class"]):
        checks.emit(
            "R115",
            f"`{tool['class']}` is not a python reference `module:Class`",
            (*path, "class"),
            hint="write the importable module, a colon and the class, "
            "e.g. `my_tools.pricing:PriceTool` (validate never imports it)",
        )
    if "path" in tool:
        existing_path(checks, tool["path"], (*path, "path"), folder=True)
