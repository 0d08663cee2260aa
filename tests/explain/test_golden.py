"""What `runner explain --session` and the playground's Why page say of three scripted rounds
of the `lab` pipeline, held to a golden file written before the trace was typed (issue 30.2):
the words are runner.trace.why's now, and they must stay what they were unless meant to change.

A change that is meant: run with RUNNER_UPDATE_GOLDEN=1 to write the new text, and read the
file's diff before committing it."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

from runner.explain.session import explain_session
from runner.playground.why import TaskView, round_view

GOLDEN = Path(__file__).parent / "fixtures" / "golden" / "lab-why.txt"
MESSAGES = (
    "Tell me deeply about the valve and pump",  # decomposed, then the deep fallback
    "hello, tell me about the valve and pump",  # a prompt type without a fallback
    "What is the valve?",  # no decomposition, the context enough
)


def _why_page(task: TaskView, depth: int = 0) -> Iterator[str]:
    """The Why page's tree as lines: each task's status, decision, notes, problems, tools."""
    indent = "  " * depth
    yield f"{indent}{task.task_no} [{task.status}] decision={task.decision} pair={task.pair}"
    yield from (f"{indent}  note: {note}" for note in task.notes)
    yield from (f"{indent}  problem: {problem}" for problem in task.problems)
    for tool in task.tools:
        yield f"{indent}  tool {tool.name}: {tool.reason_text}; {len(tool.retrieved)} pages"
    for child in task.children:
        yield from _why_page(child, depth + 1)


def test_explain_and_the_why_page_say_the_lab_rounds_as_they_did(lab: Path) -> None:
    from runner.app import Runtime
    from runner.sessions import SessionStore

    with Runtime.open(lab) as runtime, SessionStore(lab.parent / "s.sqlite") as store:
        conversation = runtime.conversation(store)
        results = [asyncio.run(conversation.say(message)) for message in MESSAGES]
        session = results[0].session
        lines = list(explain_session(store, session, llm_calls=False))
    for result in results:
        assert result.trace is not None
        view = round_view(result.to_json(), result.trace.events)
        assert view.tree is not None
        lines += ["", f"why round {view.round}: {view.kind}", *_why_page(view.tree)]
    said = "\n".join(lines).replace(session, "SESSION").replace(str(lab), "PIPELINE") + "\n"
    if os.environ.get("RUNNER_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(said, encoding="utf-8")
    assert said == GOLDEN.read_text(encoding="utf-8")
