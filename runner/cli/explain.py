"""`runner explain`: a pipeline as a table, or why a session did what it did.

    runner explain PIPELINE                   the tools: kind, priority, activation, coordinator,
                                              consumer, forced by; and each coordinator's plan
    runner explain --session ID [PIPELINE]    round by round: which coordinator ran or was
                                              skipped and why, how tools were activated, each
                                              conditional decision, what each tool left
    runner explain --sessions [PIPELINE]      the stored sessions

The session store is `--state PATH`, else the pipeline's (`.runner/state.sqlite` beside it), else
`.runner/state.sqlite` in the current folder. Never imports pipeline code or llama-index.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from runner.cli.run import friendly_errors, make_console, shorten

if TYPE_CHECKING:
    from runner.config.model import Pipeline, ToolConfig
    from runner.sessions import RoundRecord, SessionStore

Event = Mapping[str, Any]


@click.command("explain")
@click.argument(
    "pipeline", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option("--session", "session_id", metavar="ID", help="Explain this session's rounds.")
@click.option("--sessions", "list_sessions", is_flag=True, help="List the stored sessions.")
@click.option(
    "--state",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The session store (default: the pipeline's, or ./.runner/state.sqlite).",
)
@click.option("--llm-calls", is_flag=True, help="With --session: list every LLM call too.")
@click.option("--debug", is_flag=True, help="Show tracebacks of errors.")
def command(
    pipeline: Path | None,
    session_id: str | None,
    list_sessions: bool,
    state: Path | None,
    llm_calls: bool,
    debug: bool,
) -> None:
    """Explain PIPELINE (its tools and coordinators), or a stored session (--session ID).

    With --session, says round by round why each coordinator ran or was skipped, how the tools
    of each task were chosen, each conditional decision and who made it, and what every tool
    left in the context buffer.
    """
    if pipeline is None and session_id is None and not list_sessions:
        raise click.UsageError("give a PIPELINE to explain, or --session ID, or --sessions")
    with friendly_errors(debug):
        loaded = _load(pipeline) if pipeline is not None else None
        if session_id is None and not list_sessions:
            assert loaded is not None
            explain_pipeline(loaded)
            return
        with open_store(loaded, state) as store:
            if list_sessions:
                show_sessions(store)
            if session_id is not None:
                for line in explain_session(store, session_id, llm_calls=llm_calls):
                    click.echo(line)


def _load(path: Path) -> Pipeline:
    from runner.config import load_pipeline

    return load_pipeline(path)


def open_store(pipeline: Pipeline | None, state: Path | None) -> SessionStore:
    from runner.sessions import DEFAULT_FILE, SessionStore

    if state is not None:
        return SessionStore(_existing(state))
    if pipeline is not None:
        return SessionStore(_existing(pipeline.state_folder / DEFAULT_FILE))
    return SessionStore(_existing(Path(".runner") / DEFAULT_FILE))


def _existing(path: Path) -> Path:
    if not path.is_file():
        raise click.UsageError(
            f"no session store at {path}; name it with --state PATH, or give the PIPELINE "
            "whose sessions to explain"
        )
    return path


# --- the pipeline ----------------------------------------------------------------------------


def explain_pipeline(pipeline: Pipeline) -> None:
    from rich.table import Table
    from rich.text import Text

    console = make_console()
    console.print(Text(f"{pipeline.domain}", style="bold") + Text(f" — {pipeline.description}"))
    table = Table(show_lines=False, box=None, pad_edge=False)
    for column in ("tool", "kind", "priority", "activation", "coordinator", "consumer"):
        table.add_column(column, overflow="fold")
    table.add_column("forced by", overflow="fold")
    forced = forced_by(pipeline)
    for tool in sorted(pipeline.tools, key=lambda t: t.priority):
        table.add_row(
            tool.name,
            tool.kind.value,
            str(tool.priority),
            activation_label(tool),
            coordinator_label(tool),
            consumer_label(tool),
            ", ".join(forced.get(tool.name, [])) or "-",
        )
    console.print(table)
    for line in settings_lines(pipeline):
        console.print(Text(line))
    plans = [tool for tool in pipeline.tools if tool.decompose is not None]
    if plans:
        console.print()
        console.print(Text("Coordinators", style="bold"))
        for tool in plans:
            for line in coordinator_lines(tool):
                console.print(Text(line))


def activation_label(tool: ToolConfig) -> str:
    activation = tool.activation
    label = activation.mode.value
    if activation.mode.value == "rule":
        rules = []
        if activation.keywords:
            rules.append("keywords " + ", ".join(activation.keywords))
        if activation.pattern:
            rules.append(f"pattern {activation.pattern}")
        label += ": " + "; ".join(rules)
    if tool.prompt_types:
        label += f" (types {', '.join(tool.prompt_types)})"
    return label


def coordinator_label(tool: ToolConfig) -> str:
    if tool.decompose is not None:
        count = len(tool.decompose.subtasks)
        label = f"yes: {count} subtask template{'s' if count != 1 else ''}"
        return label + (", then itself" if tool.decompose.activate_after_subtasks else "")
    if tool.kind.value == "deep_search":
        return "deep search"
    if tool.kind.value == "python":
        return "if the class has decompose()"
    return "-"


def consumer_label(tool: ToolConfig) -> str:
    from runner.tools.base import consumes_context

    if tool.kind.value == "python" and not tool.consumes_context:
        return "if the class is one"
    return "yes" if consumes_context(tool) else "-"


def forced_by(pipeline: Pipeline) -> dict[str, list[str]]:
    """Which coordinators force each tool (C13): subtask templates' `required_tools`, and a deep
    search coordinator's search and neighbour search tools (C29)."""
    from runner.config.model import DeepSearchOptions

    forced: dict[str, list[str]] = {}

    def add(name: str, by: str) -> None:
        config = pipeline.find_tool(name)
        if config is not None and by not in forced.setdefault(config.name, []):
            forced[config.name].append(by)

    for tool in pipeline.tools:
        for template in tool.decompose.subtasks if tool.decompose else ():
            for name in template.required_tools:
                add(name, tool.name)
        if isinstance(tool.options, DeepSearchOptions):
            add(tool.options.search_tool, tool.name)
            if tool.options.neighbor_search_tool:
                add(tool.options.neighbor_search_tool, tool.name)
    return forced


def settings_lines(pipeline: Pipeline) -> list[str]:
    lines = [""]
    lines.append(f"retrieval tool: {pipeline.retrieval_tool or 'none'} (C27)")
    fallback = pipeline.deep_fallback
    if fallback is not None:
        types = ", ".join(fallback.prompt_types) or "every type"
        lines.append(
            f"deep fallback: {fallback.coordinator} for {types}; gatekeeper "
            f"{fallback.gatekeeper.mode} (C27–C28)"
        )
    limits = pipeline.limits
    lines.append(
        f"limits: depth {limits.max_depth}, {limits.max_subtasks} subtasks, "
        f"{limits.max_clarification_rounds} clarification rounds"
    )
    return lines


def coordinator_lines(tool: ToolConfig) -> list[str]:
    """A coordinator's plan, one line a step."""
    assert tool.decompose is not None
    plan = tool.decompose
    lines = [tool.name]
    if plan.extract is not None:
        lines.append("  extracts: " + (", ".join(plan.extract.schema.get("properties", {})) or "-"))
    lines.append(f"  relevant if: {plan.relevant_if or 'some parameter has a value'}")
    if plan.append_prompt is not None:
        lines.append("  appends to the task prompt")
    lines.extend(f"  {subtask_label(template)}" for template in plan.subtasks)
    if plan.activate_after_subtasks:
        lines.append(f"  then {tool.name} runs on the task with its subtasks' results (C20e)")
    return lines


def subtask_label(template: Any) -> str:
    prompt = template.prompt.inline if template.prompt.inline is not None else template.prompt.name
    label = f"subtask {template.name or ''}".rstrip() + f": {prompt.strip()!r}"
    if template.for_each:
        label += f" for each {template.loop_var} in {template.for_each}"
    if template.id:
        label += f", id {template.id!r}"
    if template.required_tools:
        label += f", requires {', '.join(template.required_tools)}"
    condition = template.condition
    if condition is not None:
        if condition.kind.value == "skip_if_found":
            label += f", skipped if {condition.sibling!r} found something"
        else:
            label += f", runs if {condition.expression}"
    return label


# --- sessions --------------------------------------------------------------------------------


def show_sessions(store: SessionStore) -> None:
    sessions = store.sessions()
    if not sessions:
        click.echo(f"no sessions in {store.path}")
        return
    for info in sessions:
        when = datetime.datetime.fromtimestamp(info.updated).strftime("%Y-%m-%d %H:%M")
        click.echo(
            f"{info.id}  {info.status:<11}  {info.rounds} round{'s' if info.rounds != 1 else ''}"
            f"  {when}  {info.pipeline_path}"
        )


def explain_session(store: SessionStore, session_id: str, *, llm_calls: bool) -> Iterator[str]:
    state, _version = store.load(session_id)
    rounds = store.rounds(session_id)
    yield f"session {session_id} · pipeline {state.pipeline_path} · {len(rounds)} round(s)"
    for record in rounds:
        yield ""
        yield from explain_round(record, llm_calls=llm_calls)
    if state.interrupted:
        yield ""
        yield (
            f"an interrupted round on {state.active_message!r} is stored: the next "
            "`runner run`/`runner chat` with this session finishes it first"
        )
    elif state.waiting and state.pending is not None:
        yield ""
        yield (
            f"waiting for the answer to {state.pending.question!r} (asked by "
            f"{state.pending.tool} on task {state.pending.task_no})"
        )


def explain_round(record: RoundRecord, *, llm_calls: bool) -> Iterator[str]:
    depth: dict[str, int] = {}
    for event in record.trace:
        if event.get("event") == "llm.call" and not llm_calls:
            continue
        if event.get("event") == "task.start" and event.get("task") is not None:
            depth[event["task"]] = int(event.get("depth", 0))
        text = describe_event(event)
        task = event.get("task")
        indent = "" if task is None else "  " * (depth.get(task, 0) + 1)
        if event.get("event") != "task.start" and task is not None:
            indent += "  "
        yield indent + text
    summary = record.result
    outcome = record.outcome
    if outcome == "answer":
        yield f"answer: {shorten(summary.get('answer') or '')}"
    elif outcome == "clarification":
        yield f"question: {summary.get('question')}"
    else:
        yield f"error: {summary.get('error')}"


ROUND_KINDS = {
    "fresh": "a new message",
    "answer": "the answer to the pending question (C24)",
    "resume": "resuming the interrupted round",
}
SKIP_REASONS = {
    "applied": "it already had its chance on this task or an ancestor (C11–C12)",
    "depth": "the task is at the depth limit (C4)",
    "prompt_type": "the task's prompt type is not one of its prompt_types",
}


def describe_event(event: Event) -> str:
    """One event as a sentence that says what happened and why."""
    describe = _DESCRIBERS.get(str(event.get("event")))
    if describe is None:
        fields = {k: v for k, v in event.items() if k not in ("seq", "ms", "event", "task")}
        return f"{event.get('event')}: {fields}"
    return describe(event)


def _round_start(e: Event) -> str:
    kind = ROUND_KINDS.get(e.get("kind", ""), e.get("kind", ""))
    return f"Round {e.get('round')}: {kind}: {e.get('message', '')!r}"


def _task_start(e: Event) -> str:
    details = []
    if e.get("owner"):
        details.append(f"made by {e['owner']}")
    if e.get("required_tools"):
        details.append("required tools " + ", ".join(e["required_tools"]))
    if e.get("conditional"):
        details.append("conditional")
    if e.get("prompt_type"):
        details.append(f"type {e['prompt_type']}")
    if e.get("resumed"):
        details.append("resumed: finished tools are not run again")
    suffix = f" ({'; '.join(details)})" if details else ""
    return f"task {e.get('task')}: {shorten(e.get('prompt', ''))!r}{suffix}"


def _task_end(e: Event) -> str:
    stopped = f", stopped by the {e['stopped_by']}" if e.get("stopped_by") else ""
    return f"task {e.get('task')} {e.get('status')}{stopped}"


def _coordinator_run(e: Event) -> str:
    name = e.get("coordinator")
    if not e.get("changed"):
        return f"coordinator {name} ran: not relevant, the task is unchanged (C1)"
    changes = []
    if e.get("appended"):
        changes.append("appended to the task prompt")
    if e.get("subtasks"):
        changes.append("made subtasks " + ", ".join(e["subtasks"]))
    return f"coordinator {name} decomposed the task (C2): {'; '.join(changes) or 'changed it'}"


def _coordinator_skip(e: Event) -> str:
    reason = SKIP_REASONS.get(e.get("reason", ""), e.get("reason", ""))
    return f"coordinator {e.get('coordinator')} skipped: {reason}"


def _coordinator_error(e: Event) -> str:
    return (
        f"coordinator {e.get('coordinator')} failed: {e.get('error')}; the task was restored "
        "and the other coordinators still ran (C10)"
    )


def _subtask_decision(e: Event) -> str:
    who = e.get("decided_by") or "nobody (default RUN)"
    return (
        f"conditional subtask {e.get('task')}: {str(e.get('decision')).upper()}, decided by "
        f"{who}: {e.get('reason')} (C16)"
    )


def _activation(e: Event) -> str:
    activated = ", ".join(
        f"{item['tool']} ({item['reason'].replace('_', ' ')})" for item in e.get("activated", [])
    )
    if e.get("mode") == "forced":
        text = "activation forced by required_tool_names, no suitability test (C13–C14): "
        text += activated or "nothing"
    else:
        candidates = ", ".join(e.get("candidates", [])) or "none"
        text = f"activation: candidates {candidates}"
        answers = e.get("suitability")
        if answers:
            text += "; suitability " + ", ".join(
                f"{tool} {'yes' if yes else 'no'}" for tool, yes in answers.items()
            )
        text += f"; activated {activated or 'nothing'}"
    if e.get("ignored"):
        text += f"; ignored {', '.join(e['ignored'])}"
    return text


def _tool_run(e: Event) -> str:
    if e.get("empty"):
        what = "found nothing"
    else:
        what = f"{e.get('result')}, {e.get('chars', 0)} chars, {e.get('sources', 0)} source(s)"
    consumer = ", with the context buffer" if e.get("consumer") else ""
    return f"{e.get('tool')} ran ({e.get('reason', '?')}{consumer}): {what} → {e.get('key')}"


def _tool_error(e: Event) -> str:
    return f"{e.get('tool')} failed: {e.get('error')} ({e.get('key')})"


def _clarification_ask(e: Event) -> str:
    return f"{e.get('tool')} asked {e.get('question')!r}; the round ends here (C24)"


def _clarification_resume(e: Event) -> str:
    return f"{e.get('tool')} runs again with the answer {e.get('answer')!r} (C24)"


def _terminal(e: Event) -> str:
    return f"{e.get('tool')} gave the terminal answer; the round ends with it (C25)"


def _gatekeeper(e: Event) -> str:
    verdict = "enough" if e.get("enough") else "not enough"
    return (
        f"gatekeeper ({e.get('mode')}): {verdict} context in {e.get('passages', 0)} passage(s)"
        f"{': ' + str(e['reason']) if e.get('reason') else ''} (C27)"
    )


def _deep_fallback(e: Event) -> str:
    runs = "runs" if e.get("run") else "does not run"
    return f"deep fallback {e.get('coordinator')} {runs}: {e.get('reason')} (C28)"


def _llm_call(e: Event) -> str:
    tool = f" for {e['tool']}" if e.get("tool") else ""
    extra = ", cached" if e.get("cached") else ""
    if e.get("outcome") not in (None, "ok"):
        extra += f", {e['outcome']}: {e.get('error', '')}"
    return f"LLM {e.get('purpose')}{tool} ({e.get('provider')}, {e.get('latency_ms')} ms{extra})"


def _warning(e: Event) -> str:
    return f"warning: {e.get('message')}"


def _round_end(e: Event) -> str:
    error = f": {e['error']}" if e.get("error") else ""
    return f"round ended: {e.get('outcome')}{error}"


_DESCRIBERS: dict[str, Callable[[Event], str]] = {
    "round.start": _round_start,
    "task.start": _task_start,
    "task.end": _task_end,
    "coordinator.run": _coordinator_run,
    "coordinator.skip": _coordinator_skip,
    "coordinator.error": _coordinator_error,
    "subtask.decision": _subtask_decision,
    "activation": _activation,
    "tool.run": _tool_run,
    "tool.error": _tool_error,
    "clarification.ask": _clarification_ask,
    "clarification.resume": _clarification_resume,
    "terminal": _terminal,
    "gatekeeper": _gatekeeper,
    "deep_fallback": _deep_fallback,
    "llm.call": _llm_call,
    "warning": _warning,
    "round.end": _round_end,
}
