"""Declarative coordinators (`decompose`, C1–C3, C16): the extraction, the relevance rule, the
appended prompt and the subtask templates with their loop variables; unique template names
(R117) and conditional rules that read an earlier sibling (R116)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runner.config.checks.context import Checks
from runner.config.checks.extraction import extraction
from runner.config.checks.templates import expression, inline_template
from runner.config.humanize import suggestion_suffix
from runner.config.keys import filled
from runner.documents.diagnostics import KeyPath, value_at
from runner.purposes import CONDITION_VARIABLES, DECOMPOSE_VARIABLES, PURPOSE_VARIABLES, Purpose


def decompositions(checks: Checks) -> None:
    for path, tool in checks.tool_items():
        if "decompose" not in tool:
            continue
        block = (*path, "decompose")
        decompose = tool["decompose"]
        if "extract" in decompose:
            extraction(checks, (*block, "extract"), PURPOSE_VARIABLES[Purpose.DECOMPOSE], plan=True)
        if "relevant_if" in decompose:
            expression(checks, (*block, "relevant_if"), DECOMPOSE_VARIABLES)
        if "append_prompt" in decompose:
            inline_template(checks, (*block, "append_prompt"), DECOMPOSE_VARIABLES)
        names: dict[str, int] = {}
        for sub_path, subtask in checks.subtask_items(path, tool):
            subtask_template(checks, sub_path, subtask, names)


def subtask_template(
    checks: Checks, path: KeyPath, subtask: Mapping[str, Any], earlier: dict[str, int]
) -> None:
    loop = {filled(subtask, "subtask")["as"]} if "for_each" in subtask else set()
    if "for_each" in subtask:
        expression(checks, (*path, "for_each"), DECOMPOSE_VARIABLES)
    inline_template(checks, (*path, "prompt"), DECOMPOSE_VARIABLES | loop)
    if "id" in subtask:
        inline_template(checks, (*path, "id"), DECOMPOSE_VARIABLES | loop)
    condition = subtask.get("conditional", {})
    if "run_if" in condition:
        expression(checks, (*path, "conditional", "run_if"), CONDITION_VARIABLES | loop)
    if "skip_if_found" in condition:
        sibling_reference(checks, (*path, "conditional", "skip_if_found"), subtask, earlier)
    name = subtask.get("name")
    if name is None:
        return
    if name in earlier:
        first = checks.document.position((*path[:-1], earlier[name], "name")).line
        checks.emit(
            "R117",
            f"duplicate subtask template name `{name}` (first used at line {first})",
            (*path, "name"),
        )
    else:
        earlier[name] = int(path[-1])


def sibling_reference(
    checks: Checks, path: KeyPath, subtask: Mapping[str, Any], earlier: Mapping[str, int]
) -> None:
    sibling = subtask["conditional"]["skip_if_found"]
    if sibling in earlier:
        return
    siblings = path[:-3]  # the `subtasks` list
    all_names = [spec.get("name") for spec in value_at(checks.data, siblings)]
    if sibling == subtask.get("name"):
        problem = "a subtask cannot depend on itself"
    elif sibling in all_names:
        problem = f"`{sibling}` comes later; a conditional rule can only read earlier siblings"
    else:
        problem = f"no earlier subtask template is named `{sibling}`" + suggestion_suffix(
            sibling, earlier
        )
    checks.emit(
        "R116",
        f"skip_if_found: {problem}",
        path,
        hint="name an earlier template of the same `subtasks` list with `name:`"
        if earlier
        else "give an earlier subtask template a `name:` and refer to it",
    )
