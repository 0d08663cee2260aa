"""A pipeline as a Mermaid `flowchart`, for a README or a wiki.

The question goes to each coordinator (labelled with the prompt types it decomposes), each
coordinator to its subtask templates, each template to the tools it forces (C13); a conditional
template hangs on a dashed edge (C16). The deep fallback is a branch of its own: the gatekeeper,
its coordinator, the neighbour (`.n`) and full search (`.s`) subtasks and their tools (C27–C32).

Every label is quoted, and the characters Mermaid would read as syntax, markdown or HTML inside
a quoted label (`"`, `#`, `<`, `>`, `|`, a backtick) are written as Mermaid entity codes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from runner.config.model import Pipeline
from runner.explain.overview import (
    CoordinatorPlan,
    DeepSearchPlan,
    FallbackPlan,
    SubtaskPlan,
    coordinator_plans,
    fallback_plan,
)
from runner.render import shorten

LABEL_LIMIT = 60  # characters of a subtask prompt shown in its box

# Mermaid entity codes (`#<decimal>;`); `#` itself first, so the others are not escaped twice
_ENTITIES = tuple((char, f"#{ord(char)};") for char in '#"<>|`')


def label(text: str) -> str:
    """A quoted Mermaid label: one line, every special character as an entity code."""
    one_line = " ".join(str(text).split())
    for char, code in _ENTITIES:
        one_line = one_line.replace(char, code)
    return f'"{one_line}"'


def node_id(*parts: str) -> str:
    """An id Mermaid accepts: letters, digits and underscores, never a keyword such as `end`."""
    return "n_" + "_".join(re.sub(r"\W", "_", part, flags=re.ASCII) for part in parts)


class _Chart:
    """Lines of a flowchart; each node is declared once, with its shape and label."""

    def __init__(self) -> None:
        self.lines = ["flowchart TD"]
        self.declared: set[str] = set()

    def node(self, ident: str, text: str, shape: str = "box") -> str:
        if ident not in self.declared:
            self.declared.add(ident)
            opening, closing = SHAPES[shape]
            self.lines.append(f"    {ident}{opening}{label(text)}{closing}")
        return ident

    def edge(self, source: str, target: str, text: str = "", *, dashed: bool = False) -> None:
        arrow = "-.->" if dashed else "-->"
        middle = f"|{label(text)}|" if text else ""
        self.lines.append(f"    {source} {arrow}{middle} {target}")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


SHAPES = {
    "box": ("[", "]"),
    "round": ("(", ")"),
    "stadium": ("([", "])"),
    "subroutine": ("[[", "]]"),
    "decision": ("{", "}"),
}


def flowchart(pipeline: Pipeline) -> str:
    chart = _Chart()
    question = chart.node("question", "question", "stadium")
    answer_id = "answer"
    fallback = fallback_plan(pipeline)
    plans = coordinator_plans(pipeline)
    for plan in plans:
        if fallback is None or plan.name != fallback.coordinator:
            _coordinator(chart, question, plan, answer_id)
    if fallback is not None:
        coordinator = next((p for p in plans if p.name == fallback.coordinator), None)
        _fallback(chart, question, fallback, coordinator, answer_id)
    else:
        chart.edge(question, _answer(chart, answer_id), "activation")
    return chart.text()


def _answer(chart: _Chart, ident: str) -> str:
    return chart.node(ident, "answer (C33)", "stadium")


def _coordinator(chart: _Chart, question: str, plan: CoordinatorPlan, answer_id: str) -> str:
    ident = chart.node(
        node_id("coordinator", plan.name), f"{plan.name} (coordinator)", "subroutine"
    )
    types = ", ".join(plan.prompt_types) or "every prompt type"
    chart.edge(question, ident, f"{types}")
    if plan.deep_search is not None:
        _deep_search(chart, ident, plan.name, plan.deep_search)
    _templates(chart, ident, plan.name, plan.subtasks)
    if plan.activate_after_subtasks:
        chart.edge(ident, _answer(chart, answer_id), "then itself (C20e)")
    return ident


def _templates(
    chart: _Chart, coordinator: str, owner: str, subtasks: Sequence[SubtaskPlan]
) -> None:
    for number, subtask in enumerate(subtasks, start=1):
        name = f"subtask {number}" if subtask.key.startswith("#") else subtask.key
        text = f"{name}: {shorten(subtask.prompt, LABEL_LIMIT)}"
        ident = chart.node(node_id("subtask", owner, str(number)), text)
        loop = f"for each {subtask.loop_var} in {subtask.for_each}" if subtask.for_each else ""
        if subtask.condition:
            chart.edge(
                coordinator, ident, "; ".join(filter(None, (loop, subtask.condition))), dashed=True
            )
        else:
            chart.edge(coordinator, ident, loop)
        for tool in subtask.required_tools:
            chart.edge(ident, _tool(chart, tool), "requires")


def _tool(chart: _Chart, name: str) -> str:
    return chart.node(node_id("tool", name), name, "round")


def _deep_search(chart: _Chart, coordinator: str, owner: str, plan: DeepSearchPlan) -> None:
    pieces = f"per missing piece (at most {plan.max_missing})"
    search = chart.node(node_id("subtask", owner, "s"), "<n>.<i>.s full search")
    if plan.neighbor_tool is not None:
        neighbor = chart.node(node_id("subtask", owner, "n"), "<n>.<i>.n neighbour search")
        chart.edge(coordinator, neighbor, pieces)
        chart.edge(neighbor, _tool(chart, plan.neighbor_tool), "requires")
        chart.edge(coordinator, search, "if its .n found nothing (C29)", dashed=True)
    else:
        chart.edge(coordinator, search, pieces)
    chart.edge(search, _tool(chart, plan.search_tool), "requires")


def _fallback(
    chart: _Chart,
    question: str,
    fallback: FallbackPlan,
    coordinator: CoordinatorPlan | None,
    answer_id: str,
) -> None:
    gatekeeper = chart.node(
        "gatekeeper", f"gatekeeper ({fallback.gatekeeper.split(':')[0]})", "decision"
    )
    chart.edge(question, gatekeeper, f"after activation: {', '.join(fallback.prompt_types)}")
    answer = _answer(chart, answer_id)
    chart.edge(gatekeeper, answer, "enough")
    if fallback.without:
        chart.edge(question, answer, f"no fallback: {', '.join(fallback.without)}")
    ident = chart.node(
        node_id("coordinator", fallback.coordinator),
        f"{fallback.coordinator} (deep fallback)",
        "subroutine",
    )
    chart.edge(gatekeeper, ident, "not enough (C28)", dashed=True)
    if coordinator is not None and coordinator.deep_search is not None:
        _deep_search(chart, ident, coordinator.name, coordinator.deep_search)
    chart.edge(ident, answer, "guaranteed context (C23)")
