"""How runner shows a round's result and its errors to people: the answer, the sources, the
task tree. Shared by `runner run`, `runner chat`, `runner test` and `runner explain`, so it lives
outside the command modules (imports flow from the commands to here, never back).

At runner's top as the one showing layer the CLI, the service, explain and test share. What
it says of a trace (the reasons tools ran, what failed) is runner.trace.why's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from runner.trace.events import Terminal, TraceEvent, of_kind, read_trace
from runner.trace.why import shorten, task_status, tool_reason_label, traceback_of, what_failed

if TYPE_CHECKING:
    from rich.console import Console

    from runner.engine.outcome import RoundResult


def describe_error(exc: BaseException) -> str:
    """Our own errors already name the file, the place and the fix; anything else is a bug."""
    if is_expected(exc):
        return str(exc)
    return (
        f"internal error: {type(exc).__name__}: {exc} (run again with --debug for the "
        "traceback, and please report it)"
    )


def is_expected(exc: BaseException) -> bool:
    from runner.config import PipelineError
    from runner.config.paths import PathRefused
    from runner.documents.table_files import TableError
    from runner.llm.errors import LLMError
    from runner.sessions import SessionError
    from runner.tools.base import ToolBuildError, ToolRunError

    expected: tuple[type[BaseException], ...] = (
        PipelineError,
        PathRefused,
        LLMError,
        SessionError,
        TableError,
        ToolBuildError,
        ToolRunError,
        OSError,
    )
    if isinstance(exc, expected):
        return True
    # the retrieval layer's errors, named so that their module (and llama-index) stay unloaded
    return type(exc).__name__ in {"CorpusError", "IndexMissingError"}


def tracebacks(events: Iterable[Mapping[str, Any] | TraceEvent]) -> list[tuple[str, str]]:
    """(what failed, its traceback) of every exception a round's trace recorded: a tool's, a
    coordinator's, a conditional decision's (the round went on without it), and the one that
    ended the round with an error, in the order they happened."""
    found = []
    for event in read_trace(events):
        text = traceback_of(event)
        if text is not None:
            found.append((what_failed(event), text))
    return found


def show_result(
    console: Console, result: RoundResult, *, tree: bool, stats: bool = True, shown: str = ""
) -> None:
    """The answer (or question, or error), its sources and, with `tree`, the task tree.
    `shown`: the answer's pieces printed already, as the model wrote them."""
    from rich.text import Text

    if shown and result.outcome != "answer":  # pieces of an answer the round did not give
        console.print()
    if result.outcome == "answer":
        console.print(Text(rest_of(shown, result.answer or "")))
    elif result.outcome == "clarification":
        console.print(Text("? ", style="bold yellow") + Text(result.question or ""))
    else:
        console.print(Text("error: ", style="bold red") + Text(result.error or ""))
    if result.sources:
        console.print()
        console.print(Text("Sources", style="bold"))
        for source in result.sources:
            console.print(Text(f"  - {source_label(source.to_json())}"))
    if tree and result.tasks is not None:
        console.print()
        console.print(Text("Tasks", style="bold"))
        console.print(task_tree(result.tasks, answered_by(result)))
    if stats and result.stats:
        numbers = result.stats
        console.print(
            Text(
                f"{numbers.get('llm_calls', 0)} LLM calls · {numbers.get('tokens', 0)} tokens · "
                f"{round(numbers.get('wall_ms', 0))} ms",
                style="dim",
            )
        )


def rest_of(streamed: str, final: str) -> str:
    """What a face still has to show of `final` after showing the answer's `streamed`
    pieces: the rest when they were its beginning; all of it, after a line break, when they
    were not (an attempt that failed half-way and was asked again)."""
    if final.startswith(streamed):
        return final[len(streamed) :]
    return "\n" + final if streamed else final


def source_label(source: Mapping[str, Any]) -> str:
    parts = [str(source.get("title") or source["document"])]
    if source.get("title"):
        parts[0] += f" ({source['document']})"
    if source.get("page") is not None:
        parts.append(f"page {source['page']}")
    if source.get("heading"):
        parts.append(str(source["heading"]))
    return ", ".join(parts)


def answered_by(result: RoundResult) -> frozenset[str]:
    """The completion keys of the tools whose result was the round's terminal answer (C25)."""
    if result.trace is None:
        return frozenset()
    return frozenset(event.key for event in of_kind(read_trace(result.trace.events), Terminal))


def task_tree(task: Mapping[str, Any], terminal: frozenset[str] = frozenset()) -> Any:
    """The result's task tree as a rich Tree: each task with its status, each tool with the
    reason it ran and what it left in the buffer; skipped conditionals marked as skipped."""
    from rich.tree import Tree

    node = Tree(task_label(task))
    _fill(node, task, terminal)
    return node


def _fill(node: Any, task: Mapping[str, Any], terminal: frozenset[str]) -> None:
    for tool in task.get("tools", []):
        node.add(tool_label(tool, tool.get("key") in terminal))
    for child in task.get("children", []):
        _fill(node.add(task_label(child)), child, terminal)


def task_label(task: Mapping[str, Any]) -> Any:
    from rich.text import Text

    status = task_status(task)
    style = {"done": "green", "skipped": "dim", "failed": "red", "waiting": "yellow"}.get(
        status, ""
    )
    label = Text(f"{task['task_no']} ", style="bold") + Text(shorten(task.get("prompt", "")))
    label += Text(f"  [{status}]", style=style)
    details = []
    if task.get("owner"):
        details.append(f"by {task['owner']}")
    if task.get("conditional"):
        details.append("conditional")
    if task.get("required_tools"):
        details.append("requires " + ", ".join(task["required_tools"]))
    if details:
        label += Text("  " + "; ".join(details), style="dim")
    return label


def tool_label(tool: Mapping[str, Any], terminal: bool = False) -> Any:
    from rich.text import Text

    reason = tool_reason_label(tool.get("reason"))
    label = Text(str(tool["name"]), style="cyan") + Text(f" — {reason}")
    status = tool.get("status")
    if status == "asked":
        label += Text(", asked a question", style="yellow")
    elif status == "failed":
        label += Text(", failed", style="red")
    elif terminal:
        label += Text(", gave the answer", style="green")
    else:
        items, cited = tool.get("items", 0), tool.get("sources", 0)
        label += Text(f", {items} item{'s' if items != 1 else ''}")
        if cited > items:  # a retrieval's one item quotes several pages: say how many
            label += Text(f" citing {cited} sources")
        if tool.get("guaranteed"):
            label += Text(", guaranteed")
    return label + Text(f"  ({tool['key']})", style="dim")
