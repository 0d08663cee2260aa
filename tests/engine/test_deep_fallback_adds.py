"""The deep fallback adds to what the first search found (C27–C30): when it runs, the final
answer still quotes and cites a first-search page that answered the question, beside the
supplement the deep search composed (C28: its answers are added as guaranteed context)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from runner.app import Runtime
from runner.engine.outcome import RoundResult
from runner.engine.state import SessionState

from .kit import check_round

PIPELINE = """\
version: 1
domain: git
llm: {provider: offline}
corpora:  # the first search reads the hooks' page, the deep search the whole manual
  hooks: {path: manual, include: ["githooks.md"], pages: {max_words: 120}}
  manual: {path: manual, include: ["*.md"], pages: {max_words: 120}}
retrieval_tool: manual_rag
deep_fallback:
  coordinator: deep_search
  gatekeeper: {mode: llm}
tools:
  - {name: manual_rag, kind: retrieve, description: Pages of the manual., corpus: hooks, top_k: 1}
  - name: manual_search
    kind: search
    description: Answers a focused question from the manual.
    corpus: manual
    top_k: 3
  - name: deep_search
    kind: deep_search
    description: Finds what the first pages did not answer.
    search_tool: manual_search
    max_missing: 2
"""

HOOKS = """\
# githooks

## pre-push

The pre-push hook runs in git push, before anything is sent to the remote. If the hook exits
with a non-zero status, git push does not push anything.

## pre-commit

The pre-commit hook runs before git commit asks for a commit message.
"""

DAEMON = """\
# git daemon

## Stopping the daemon

To stop the daemon, send it a signal. A push to a stopped daemon fails.
"""

PUSH = """\
# git push

## Interrupting

Hooks that run on the server can stop a push, and Ctrl-C stops one too.
"""

QUESTION = "Which hook runs before a push, and can it stop the push?"


@pytest.fixture
def runtime(tmp_path: Path) -> Runtime:
    manual = tmp_path / "manual"
    manual.mkdir()
    (manual / "githooks.md").write_text(HOOKS, encoding="utf-8")
    (manual / "git-daemon.md").write_text(DAEMON, encoding="utf-8")
    (manual / "git-push.md").write_text(PUSH, encoding="utf-8")
    (tmp_path / "git.yaml").write_text(PIPELINE, encoding="utf-8")
    return Runtime.open(tmp_path / "git.yaml", build_indexes=True)


def ask(runtime: Runtime, message: str) -> RoundResult:
    state = SessionState.new("deep", runtime.pipeline)
    with runtime:
        result = asyncio.run(runtime.orchestrator().run_round(state, message))
        check_round(result, state)
    return result


def test_c28_the_deep_fallback_ran_on_the_question(runtime: Runtime) -> None:
    result = ask(runtime, QUESTION)
    events = result.trace.events if result.trace is not None else []
    [fallback] = [e for e in events if e["event"] == "deep_fallback"]
    assert fallback["run"] is True


def test_c28_a_first_search_page_that_answered_stays_in_the_answer(runtime: Runtime) -> None:
    result = ask(runtime, QUESTION)
    hooks = "The pre-push hook runs in git push, before anything is sent to the remote."
    assert hooks in result.answer
    assert "githooks.md" in {source.document for source in result.sources}
