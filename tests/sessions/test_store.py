"""The SQLite session store (C24): lossless, atomic, optimistic locking, pipeline changes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from runner.config.model import Pipeline, PromptOptions, TemplateRef, ToolConfig, ToolKind
from runner.engine.results import Clarification, PromptAndContext
from runner.engine.state import SessionState
from runner.engine.task import Task, TaskStatus, ToolStatus
from runner.sessions import (
    RoundRecord,
    SessionConflictError,
    SessionError,
    SessionNotFoundError,
    SessionStore,
    SessionWriter,
)
from runner.sources import Source


@pytest.fixture
def pipeline(tmp_path: Path) -> Pipeline:
    tool = ToolConfig(
        "writer", ToolKind.PROMPT, options=PromptOptions(template=TemplateRef(inline="x"))
    )
    return Pipeline(
        path=tmp_path / "pipeline.yaml", domain="demo", tools=(tool,), content_hash="hash-1"
    )


@pytest.fixture
def store(tmp_path: Path):
    with SessionStore(tmp_path / "state.sqlite") as opened:
        yield opened


def busy_state(pipeline: Pipeline, session_id: str = "s1") -> SessionState:
    """A state with every part filled in: a task tree, a buffer, a pending question."""
    state = SessionState.new(session_id, pipeline)
    root = Task("1", "compare A and B", important_words=["compare"], prompt_type="question")
    sub = Task("1.1", "specs of A", required_tool_names={"lookup"}, conditional=True)
    sub.applied_coordinator_names = {"compare"}
    sub.prompt_context = "compare A and B"
    sub.tool_status = {"lookup": ToolStatus.ASKED}
    sub.status = TaskStatus.WAITING
    sub.loop_vars = {"item": {"name": "A"}}
    root.sub_tasks.append(sub)
    state.root = root
    state.buffer.add(
        "1.1", "lookup", PromptAndContext("p", "row", sources=(Source("t.csv", heading="A"),))
    )
    state.pending = Clarification("1.1", "lookup", "Which A?")
    state.rounds = 2
    state.history = [{"round": 1, "message": "hi", "outcome": "answer", "answer": "hello"}]
    return state


def test_a_saved_state_loads_back_without_loss(store, pipeline):
    state = busy_state(pipeline)
    assert store.save(state, 0) == 1
    loaded, version = store.load("s1")
    assert version == 1
    assert loaded.to_json() == state.to_json()


def test_the_default_store_is_beside_the_pipeline_or_in_its_state_dir(pipeline, tmp_path):
    with SessionStore.for_pipeline(pipeline) as default:
        assert default.path == tmp_path / ".runner" / "state.sqlite"
    moved = replace(pipeline, state_dir=tmp_path / "elsewhere")
    with SessionStore.for_pipeline(moved) as elsewhere:
        assert elsewhere.path == tmp_path / "elsewhere" / "state.sqlite"
    with SessionStore.for_pipeline(pipeline, tmp_path / "x.sqlite") as chosen:
        assert chosen.path == tmp_path / "x.sqlite"


def test_c24_a_second_writer_of_a_session_gets_a_conflict_not_a_lost_update(tmp_path, pipeline):
    first = SessionStore(tmp_path / "state.sqlite")
    second = SessionStore(tmp_path / "state.sqlite")
    first.save(busy_state(pipeline), 0)
    mine, my_version = first.load("s1")
    theirs, their_version = second.load("s1")

    mine.rounds = 10
    first.save(mine, my_version)
    theirs.rounds = 20
    with pytest.raises(SessionConflictError, match="changed by another writer"):
        second.save(theirs, their_version)

    assert first.load("s1")[0].rounds == 10
    first.close()
    second.close()


def test_two_writers_creating_the_same_session_conflict(store, pipeline):
    store.save(busy_state(pipeline), 0)
    with pytest.raises(SessionConflictError, match="now at version 1"):
        store.save(busy_state(pipeline), 0)


def test_opening_without_an_id_makes_a_new_session(store, pipeline):
    opened = store.open(None, pipeline)
    assert opened.created and opened.version == 0
    assert len(opened.state.session_id) == 12
    assert store.open("chosen-id", pipeline).state.session_id == "chosen-id"


def test_a_changed_pipeline_file_is_reported_once(store, pipeline):
    store.save(busy_state(pipeline), 0)
    assert store.open("s1", pipeline).warnings == []

    changed = replace(pipeline, content_hash="hash-2")
    opened = store.open("s1", changed)
    assert "changed since session 's1' was stored" in opened.warnings[0]
    store.save(opened.state, opened.version)
    assert store.open("s1", changed).warnings == []


def test_a_session_of_another_pipeline_is_refused(store, pipeline, tmp_path):
    store.save(busy_state(pipeline), 0)
    other = replace(pipeline, path=tmp_path / "other.yaml")
    with pytest.raises(SessionError, match="belongs to pipeline"):
        store.open("s1", other)


def test_an_unknown_session_says_how_to_find_one(store):
    with pytest.raises(SessionNotFoundError, match="no session 'nope'"):
        store.load("nope")


def test_rounds_keep_their_result_and_trace_in_order(store, pipeline):
    state = busy_state(pipeline)
    writer = SessionWriter(store, 0)
    writer(state)  # a checkpoint mid-round
    for number in (1, 2):
        record = RoundRecord(
            number, f"m{number}", "answer", {"round": number}, [{"seq": 1, "event": "round.end"}]
        )
        writer.finish(state, record)
    assert writer.version == 3
    rounds = store.rounds("s1")
    assert [(r.round, r.message, r.result["round"]) for r in rounds] == [
        (1, "m1", 1),
        (2, "m2", 2),
    ]
    assert rounds[0].trace == [{"seq": 1, "event": "round.end"}]


def test_sessions_lists_each_with_its_status(store, pipeline):
    waiting = busy_state(pipeline, "waiting")
    interrupted = busy_state(pipeline, "interrupted")
    interrupted.pending = None
    interrupted.active_message = "in flight"
    idle = busy_state(pipeline, "idle")
    idle.pending = None
    for state in (waiting, interrupted, idle):
        store.save(state, 0)
    statuses = {info.id: info.status for info in store.sessions()}
    assert statuses == {"waiting": "waiting", "interrupted": "interrupted", "idle": "idle"}


def test_a_state_written_mid_round_is_read_back_as_interrupted(store, pipeline):
    state = busy_state(pipeline)
    state.pending = None
    state.active_message = "compare A and B"
    store.save(state, 0)
    opened = store.open("s1", pipeline)
    assert opened.state.interrupted
    assert opened.state.active_message == "compare A and B"


def test_a_process_killed_inside_a_save_leaves_the_previous_state(store, pipeline, tmp_path):
    state = busy_state(pipeline)
    store.save(state, 0)
    # A child writes a new state inside a transaction and dies before committing.
    child = textwrap.dedent(
        f"""
        import os, sqlite3
        db = sqlite3.connect({str(store.path)!r}, isolation_level=None)
        db.execute("BEGIN IMMEDIATE")
        db.execute("UPDATE sessions SET state = 'half-written', version = 99")
        os._exit(9)
        """
    )
    assert subprocess.run([sys.executable, "-c", child], check=False).returncode == 9
    loaded, version = store.load("s1")
    assert version == 1
    assert loaded.to_json() == state.to_json()
    assert store.save(loaded, version) == 2  # and the store is usable afterwards


def test_a_file_that_is_no_session_store_is_reported(tmp_path):
    path = tmp_path / "state.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(SessionError, match="cannot open the session store"):
        SessionStore(path)
