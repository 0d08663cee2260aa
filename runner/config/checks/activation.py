"""Activation that cannot work as written: a `coordinator_only` tool that nothing requires
(R104, C15a), a deep-search tool written to activate on the normal branch (R118, C30), and a
`deep_search` tool that no `deep_fallback` names and whose activation is left to the default
(R137: it then runs wherever the suitability test picks it, not as the fallback)."""

from __future__ import annotations

from runner.config.checks.context import KINDS_FOR, Checks
from runner.config.defaults import SEARCH_TOOL_KEYS


def requirable_tools(checks: Checks) -> set[str]:
    """Tools something can force onto a subtask or run without the suitability test."""
    names: set[str] = set()
    for path, tool in checks.tool_items():
        for _, subtask in checks.subtask_items(path, tool):
            names |= {checks.simple_name(name) for name in subtask.get("required_tools", ())}
        if tool["kind"] == "deep_search":
            names |= {
                checks.simple_name(tool[key])
                for key in ("search_tool", "neighbor_search_tool")
                if key in tool
            }
    for key in ("retrieval_tool",):
        if key in checks.data:
            names.add(checks.simple_name(checks.data[key]))
    if "deep_fallback" in checks.data:
        names.add(checks.simple_name(checks.data["deep_fallback"]["coordinator"]))
    return names


def coordinator_only_tools(checks: Checks) -> None:
    # A python tool may require any tool at run time, so nothing can be concluded then.
    if any(tool["kind"] == "python" for tool in checks.data["tools"]):
        return
    requirable = requirable_tools(checks)
    for path, tool in checks.tool_items():
        # a coordinator still decomposes in every coordinator step (C8), and one that is
        # activated after its subtasks runs then too (C20e)
        if "decompose" in tool:
            continue
        if tool.get("activation") == "coordinator_only" and tool["name"] not in requirable:
            checks.emit(
                "R104",
                f"tool `{tool['name']}` is coordinator_only, but no subtask requires it: "
                "it can never run",
                (*path, "activation"),
                hint="name it in a subtask's required_tools (or a deep_search tool), "
                "or change its activation",
                warning=True,
            )


def search_tools_hidden(checks: Checks) -> None:
    """C30: the tools of deep search never activate on the normal branch. Left without
    `activation` they are coordinator_only (runner.config.defaults); any other activation
    written for them is an error."""
    for tool in checks.data["tools"]:
        if tool["kind"] != "deep_search":
            continue
        for key in SEARCH_TOOL_KEYS:
            target = checks.tools.get(checks.simple_name(tool.get(key, "")))
            if target is None or target["kind"] not in KINDS_FOR[key]:
                continue  # unknown or of a wrong kind: R102's / R103's error, not this one
            activation = target.get("activation", "coordinator_only")
            if activation == "coordinator_only":
                continue
            where = ("tools", checks.tool_index(target["name"]), "activation")
            written = (
                f"`activation: {activation}`"
                if isinstance(activation, str)
                else "an activation rule (keywords / pattern)"
            )
            checks.emit(
                "R118",
                f"`{target['name']}` is the {key} of `{tool['name']}`, so it runs only on "
                f"deep-search subtasks (C30); {written} would let it run on the normal branch",
                where,
                hint=f"remove `activation` from `{target['name']}` (a deep-search tool is "
                "coordinator_only by default) or write `activation: coordinator_only`",
            )


def deep_search_unnamed(checks: Checks) -> None:
    """A deep_search tool is the fallback only when `deep_fallback.coordinator` names it;
    otherwise it is an ordinary tool, a candidate of the suitability test on every task. Left
    without an `activation`, that is surely not what was meant."""
    fallback = checks.data.get("deep_fallback", {}).get("coordinator")
    named = checks.simple_name(fallback) if isinstance(fallback, str) else None
    for path, tool in checks.tool_items():
        if tool["kind"] != "deep_search" or tool["name"] == named or "activation" in tool:
            continue
        checks.emit(
            "R137",
            f"no `deep_fallback` names the deep_search tool `{tool['name']}`: it is not the "
            "fallback of short context but an ordinary tool that the suitability test may "
            "pick on every task (and each time it asks what is missing and searches)",
            (*path, "name"),
            hint=f"add `deep_fallback: {{coordinator: {tool['name']}}}`, or write its "
            "`activation` (and `instruction`) if it is meant to run as a tool, or remove it",
            warning=True,
        )
