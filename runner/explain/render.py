"""`runner explain PIPELINE` as rich text, or as one JSON object.

The text has five parts: what each tool is, how each tool comes to run (two tables, with the
prompt types, the retrieval tool and the limits under them), the coordinators and the deep
fallback as trees, and the worst-case LLM calls per question: one row per path, then the calls
of each path by purpose, then what those numbers assume. Table cells are `Text`, never markup,
so that a regular expression's `[…]` shows as it is; trees are plain lines, so that a long line
is never cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from runner.explain.calls import ASSUMPTIONS, PURPOSES, PathBound, worst_cases
from runner.explain.overview import (
    CoordinatorPlan,
    DeepSearchPlan,
    FallbackPlan,
    SubtaskPlan,
    coordinator_plans,
    fallback_plan,
    settings_lines,
    tool_rows,
)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from runner.config.model import Pipeline


def explanation(pipeline: Pipeline) -> dict[str, Any]:
    """Everything `runner explain --format json` prints."""
    fallback = fallback_plan(pipeline)
    paths = worst_cases(pipeline)
    return {
        "pipeline": str(pipeline.path),
        "domain": pipeline.domain,
        "description": pipeline.description,
        "settings": settings_lines(pipeline),
        "tools": [row.to_json() for row in tool_rows(pipeline)],
        "coordinators": [plan.to_json() for plan in coordinator_plans(pipeline)],
        "deep_fallback": fallback.to_json() if fallback is not None else None,
        "llm_calls": {
            "worst_case": max((path.total for path in paths), default=0),
            "paths": [path.to_json() for path in paths],
            "assumptions": list(ASSUMPTIONS),
        },
    }


def print_explanation(console: Console, pipeline: Pipeline) -> None:
    from rich.text import Text

    def heading(text: str) -> None:
        console.print()
        console.print(Text(text, style="bold"))

    console.print(Text(pipeline.domain, style="bold") + Text(f" — {pipeline.description}"))
    console.print()
    console.print(tools_table(pipeline))
    heading("How each tool comes to run")
    console.print(activation_table(pipeline))
    console.print()
    for line in settings_lines(pipeline):
        console.print(Text(line))
    plans = coordinator_plans(pipeline)
    fallback = fallback_plan(pipeline)
    own = [plan for plan in plans if fallback is None or plan.name != fallback.coordinator]
    if own:
        heading("Coordinators")
        for plan in own:
            for line in coordinator_tree(plan).lines():
                console.print(Text(line))
    if fallback is not None:
        heading("Deep fallback (C27–C32)")
        coordinator = next((plan for plan in plans if plan.name == fallback.coordinator), None)
        for line in fallback_tree(fallback, coordinator).lines():
            console.print(Text(line))
    paths = worst_cases(pipeline)
    heading("Worst-case LLM calls per question, along each path")
    console.print(paths_table(paths))
    console.print()
    console.print(purposes_table(paths))
    for line in summary_lines(paths):
        console.print(Text(line))


# --- the tools ---------------------------------------------------------------------------------


def tools_table(pipeline: Pipeline) -> Table:
    """What each tool is: kind, priority, prompt types, consumer, output (C20c, C23, C25)."""
    columns = ("tool", "kind", "priority", "types", "consumer", "output")
    rows = [
        (
            row.name,
            row.kind,
            str(row.priority),
            ", ".join(row.prompt_types) or "all",
            row.consumer,
            row.output,
        )
        for row in tool_rows(pipeline)
    ]
    return text_table(columns, rows, wrap=("output",))


def activation_table(pipeline: Pipeline) -> Table:
    """How each tool comes to run: its activation, its coordinator role, who forces it (C13)."""
    columns = ("tool", "activation", "coordinator", "forced by")
    rows = [
        (row.name, row.activation, row.coordinator, ", ".join(row.forced_by) or "-")
        for row in tool_rows(pipeline)
    ]
    return text_table(columns, rows, wrap=("activation", "forced by"))


def text_table(
    columns: Sequence[str], rows: Sequence[Sequence[str]], *, wrap: Sequence[str] = ()
) -> Table:
    """A borderless table of plain text; only the `wrap` columns wrap, and only between
    words."""
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, pad_edge=False, show_lines=False)
    for index, column in enumerate(columns):
        longest_word = max((len(w) for row in rows for w in row[index].split()), default=0)
        table.add_column(
            column,
            no_wrap=column not in wrap,
            min_width=max(longest_word, len(column)),
            overflow="fold",
        )
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


# --- the coordinators and the deep fallback -----------------------------------------------------


@dataclass
class Node:
    """A tree printed as plain lines with box-drawing branches."""

    text: str
    children: list[Node] = field(default_factory=list)

    def add(self, text: str) -> Node:
        child = Node(text)
        self.children.append(child)
        return child

    def lines(self) -> list[str]:
        lines = [self.text]
        for index, child in enumerate(self.children):
            last = index == len(self.children) - 1
            first, rest = ("└── ", "    ") if last else ("├── ", "│   ")
            below = child.lines()
            lines.append(first + below[0])
            lines.extend(rest + line for line in below[1:])
        return lines


def coordinator_tree(plan: CoordinatorPlan) -> Node:
    types = f"; {', '.join(plan.prompt_types)} only" if plan.prompt_types else ""
    return Node(f"{plan.name} ({plan.kind}, priority {plan.priority}{types})", plan_nodes(plan))


def plan_nodes(plan: CoordinatorPlan) -> list[Node]:
    """A coordinator's plan, one node a step."""
    if plan.unknown:
        return [Node("a python class: whether and how it decomposes is the class's own (C1–C3)")]
    if plan.deep_search is not None:
        return deep_search_nodes(plan.name, plan.deep_search)
    nodes = []
    if plan.extracts:
        nodes.append(Node("extracts (LLM, purpose decompose): " + ", ".join(plan.extracts)))
    relevant = plan.relevant_if or "some extracted parameter has a value"
    nodes.append(Node(f"relevant if: {relevant}"))
    if plan.append_prompt:
        nodes.append(Node("appends append_prompt to the task prompt (C2)"))
    nodes.extend(subtask_node(subtask) for subtask in plan.subtasks)
    if plan.activate_after_subtasks:
        nodes.append(Node(f"then {plan.name} runs on the task with its subtasks' results (C20e)"))
    return nodes


def subtask_node(subtask: SubtaskPlan) -> Node:
    name = "" if subtask.key.startswith("#") else f" {subtask.key}"
    node = Node(f"subtask{name}: {subtask.prompt!r}")
    if subtask.for_each:
        node.add(f"for each {subtask.loop_var} in {subtask.for_each}")
    if subtask.id:
        node.add(f"id {subtask.id!r}")
    if subtask.required_tools:
        node.add(f"requires {', '.join(subtask.required_tools)} (C13)")
    if subtask.condition:
        node.add(f"{subtask.condition} (C16)")
    return node


def deep_search_nodes(name: str, plan: DeepSearchPlan) -> list[Node]:
    pieces = Node(f"missing_info (LLM): at most {plan.max_missing} missing pieces; for each one:")
    search = f"subtask <n>.<i>.s requires {plan.search_tool}"
    if plan.neighbor_tool is not None:
        pieces.add(f"subtask <n>.<i>.n requires {plan.neighbor_tool}").add(plan.neighbors or "")
        search += ", skipped if its .n found something (C29)"
    pieces.add(search).add(plan.search)
    composes = Node(f"then {name} composes their answers into guaranteed context (C20e, C28)")
    return [pieces, composes]


def fallback_tree(fallback: FallbackPlan, coordinator: CoordinatorPlan | None) -> Node:
    without = f"; none for {', '.join(fallback.without)}" if fallback.without else ""
    node = Node(f"for {', '.join(fallback.prompt_types)}{without}")
    node.add(f"gatekeeper {fallback.gatekeeper}")
    runs = node.add(f"not enough: {fallback.coordinator} runs on the question")
    runs.children.extend(plan_nodes(coordinator) if coordinator is not None else ())
    return node


# --- the worst-case LLM calls ---------------------------------------------------------------


def paths_table(paths: Sequence[PathBound]) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, pad_edge=False, show_lines=False)
    table.add_column("path", no_wrap=True)
    table.add_column("type", no_wrap=True)
    table.add_column("decomposes")
    table.add_column("deep fallback", no_wrap=True)
    table.add_column("calls", justify="right", no_wrap=True)
    table.add_column("ends early (calls by then, at most)")
    for number, path in enumerate(paths, start=1):
        exits = "\n".join(f"{e.tool} {verb(e.outcome)}: {e.calls}" for e in path.count.exits)
        cells = (
            str(number),
            path.spec.prompt_type,
            decomposes_label(path),
            deep_label(path),
            total_label(path),
            exits or "-",
        )
        table.add_row(*(Text(cell) for cell in cells))
    return table


def purposes_table(paths: Sequence[PathBound]) -> Table:
    """The calls of each path (a column each) by purpose (a row each)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, pad_edge=False, show_lines=False)
    table.add_column("calls by purpose", no_wrap=True)
    for number in range(1, len(paths) + 1):
        table.add_column(f"path {number}", justify="right", no_wrap=True)
    used = [p for p in PURPOSES if any(path.count.calls.get(p, 0) for path in paths)]
    for purpose in used:
        counts = (str(path.count.calls.get(purpose, 0)) for path in paths)
        table.add_row(Text(purpose), *(Text(count) for count in counts))
    table.add_row(Text("total", style="bold"), *(Text(total_label(path)) for path in paths))
    return table


def total_label(path: PathBound) -> str:
    return f"{path.total}{'+?' if path.count.uncounted else ''}"


def decomposes_label(path: PathBound) -> str:
    made = path.count.subtasks
    return ", ".join(f"{name} ({made.get(name, 0)} subtasks)" for name in path.decomposes) or "-"


def deep_label(path: PathBound) -> str:
    if not path.has_fallback:
        return "-"
    if not path.spec.deep_fallback:
        return "no"
    by_fallback = sum(path.count.subtasks.values()) - sum(
        path.count.subtasks.get(name, 0) for name in path.decomposes
    )
    return f"yes ({by_fallback} subtasks)"


def path_label(path: PathBound) -> str:
    parts = [path.spec.prompt_type]
    parts.extend(f"{name} decomposes" for name in path.decomposes)
    if path.spec.deep_fallback:
        parts.append("deep fallback")
    return " + ".join(parts)


def verb(outcome: str) -> str:
    return "answers" if outcome == "answer" else "asks"


def summary_lines(paths: Sequence[PathBound]) -> list[str]:
    if not paths:
        return []
    number, worst = max(enumerate(paths, start=1), key=lambda item: item[1].total)
    lines = [
        "",
        f"At most {total_label(worst)} LLM calls per question (path {number}: "
        f"{path_label(worst)}). These are upper bounds; they assume:",
        *(f"  - {assumption}" for assumption in ASSUMPTIONS),
    ]
    return lines + path_notes(paths)


def path_notes(paths: Sequence[PathBound]) -> list[str]:
    """What the numbers leave out, and where a full scan makes them large, once each."""
    notes: dict[str, None] = {}
    for number, path in enumerate(paths, start=1):
        count = path.count
        if count.scan_reads:
            tools = ", ".join(count.full_scans)
            notes[
                f"Path {number}: {count.scan_reads} of its read_page calls are {tools} reading "
                "every page of its corpus when no page matches; set max_brute_force_page_count "
                "to stop that (C31)."
            ] = None
        for item in count.uncounted:
            notes[f"Not counted: {item}."] = None
    return list(notes)
