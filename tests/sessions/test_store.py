"""The session stores (C24): lossless, atomic, optimistic locking, pipeline changes, round
records, idempotency keys and session locks. Every test runs against both stores, SQLite and a
real PostgreSQL server (`store`/`another_store`); the last ones are one store's own."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import pytest

from runner.config.model import Pipeline, PromptOptions, TemplateRef, ToolConfig, ToolKind
from runner.engine.results import Clarification, PromptAndContext
from runner.engine.state import SessionState
from runner.engine.task import Task, TaskStatus, ToolStatus
from runner.sessions import (
    DuplicateRequestError,
    RoundRecord,
    SessionConflictError,
    SessionError,
    SessionNotFoundError,
    SessionStore,
    SessionWriter,
    StoreUnavailableError,
    open_store,
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


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path: Path) -> str:
    """Where the store lives: a SQLite file, or a fresh database on the test server."""
    if request.param == "sqlite":
        return str(tmp_path / "state.sqlite")
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def another_store(location: str):
    """Opens one more store on the same location (another writer, another process)."""
    opened = []

    def make():
        opened.append(open_store(location))
        return opened[-1]

    yield make
    for each in opened:
        each.close()


@pytest.fixture
def store(another_store):
    return another_store()


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


def test_the_default_store_is_beside_the_pipeline_or_in_its_state_dir(
    pipeline, tmp_path, monkeypatch
):
    monkeypatch.delenv("RUNNER_STATE", raising=False)
    with open_store(None, pipeline) as default:
        assert default.location == str(tmp_path / ".runner" / "state.sqlite")
    moved = replace(pipeline, state_dir=tmp_path / "elsewhere")
    with open_store(None, moved) as elsewhere:
        assert elsewhere.location == str(tmp_path / "elsewhere" / "state.sqlite")
    with open_store(str(tmp_path / "x.sqlite"), pipeline) as chosen:
        assert chosen.location == str(tmp_path / "x.sqlite")


def test_c24_a_second_writer_of_a_session_gets_a_conflict_not_a_lost_update(
    another_store, pipeline
):
    first = another_store()
    second = another_store()
    first.save(busy_state(pipeline), 0)
    mine, my_version = first.load("s1")
    theirs, their_version = second.load("s1")

    mine.rounds = 10
    first.save(mine, my_version)
    theirs.rounds = 20
    with pytest.raises(SessionConflictError, match="changed by another writer"):
        second.save(theirs, their_version)

    assert first.load("s1")[0].rounds == 10


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


def test_a_session_stored_under_another_spelling_of_its_file_is_of_that_file(
    store, pipeline, tmp_path
):
    """The same file through a link (or a relative path) is the same pipeline, its content
    changed or not: a changed file is said, not refused."""
    (tmp_path / "link").symlink_to(tmp_path)
    store.save(busy_state(replace(pipeline, path=tmp_path / "link" / pipeline.path.name)), 0)
    opened = store.open("s1", replace(pipeline, content_hash="hash-2"))
    assert "changed since session 's1' was stored" in opened.warnings[0]


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


def test_a_round_committed_with_a_request_id_is_found_by_it(store, pipeline):
    state = busy_state(pipeline)
    writer = SessionWriter(store, 0)
    writer.finish(state, RoundRecord(2, "hi", "answer", {"round": 2}, [], request_id="r-1"))
    committed = store.committed("r-1")
    assert committed is not None
    assert (committed.session_id, committed.record.round, committed.record.message) == (
        "s1",
        2,
        "hi",
    )
    assert committed.record.request_id == "r-1"
    assert store.committed("r-2") is None


def test_a_request_id_is_committed_once_across_sessions(store, pipeline):
    SessionWriter(store, 0).finish(
        busy_state(pipeline, "a"), RoundRecord(1, "hi", "answer", {}, [], request_id="r-1")
    )
    with pytest.raises(DuplicateRequestError, match="'r-1' was already committed"):
        SessionWriter(store, 0).finish(
            busy_state(pipeline, "b"), RoundRecord(1, "hi", "answer", {}, [], request_id="r-1")
        )
    assert store.find("b") is None  # the whole save was refused, the session row too


def test_a_session_lock_is_held_against_every_other_store_until_released(another_store):
    first, second = another_store(), another_store()
    held = first.try_lock("s1")
    assert held is not None
    assert second.try_lock("s1") is None
    other = second.try_lock("s2")  # other keys are free
    assert other is not None
    held.release()
    again = second.try_lock("s1")
    assert again is not None
    again.release()
    other.release()


def test_a_lock_dies_with_the_process_that_held_it(location, another_store):
    child = textwrap.dedent(
        f"""
        import os, sys
        from runner.sessions import open_store
        store = open_store({location!r})
        assert store.try_lock("s1") is not None
        print("held", flush=True)
        sys.stdin.readline()
        os._exit(9)
        """
    )
    process = subprocess.Popen(
        [sys.executable, "-c", child], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdin is not None
    assert process.stdout.readline() == "held\n"
    store = another_store()
    assert store.try_lock("s1") is None
    process.kill()
    process.wait()
    for _ in range(100):  # the server notices the closed connection within moments
        lock = store.try_lock("s1")
        if lock is not None:
            break
        import time

        time.sleep(0.05)
    assert lock is not None
    lock.release()


def test_a_message_with_a_nul_character_is_stored(store, pipeline):
    writer = SessionWriter(store, 0)
    state = busy_state(pipeline)
    state.history = [{"round": 1, "message": "a\x00b"}]
    writer.finish(state, RoundRecord(1, "a\x00b", "answer", {"answer": "x\x00y"}, []))
    [record] = store.rounds("s1")
    assert record.result == {"answer": "x\x00y"}
    assert store.load("s1")[0].history == [{"round": 1, "message": "a\x00b"}]


# --- the SQLite store's own -------------------------------------------------------------------


@pytest.fixture
def sqlite_store(tmp_path: Path):
    with SessionStore(tmp_path / "state.sqlite") as opened:
        yield opened


def test_a_process_killed_inside_a_save_leaves_the_previous_state(sqlite_store, pipeline):
    store = sqlite_store
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


def test_a_full_disk_names_the_store_says_nothing_was_lost_and_what_to_do(sqlite_store, pipeline):
    store = sqlite_store
    state = busy_state(pipeline)
    store.save(state, 0)
    # the file may not grow past its present size: SQLite reports it as a full disk
    pages = store._db.execute("PRAGMA page_count").fetchone()[0]
    store._db.execute(f"PRAGMA max_page_count = {pages}")
    state.active_message = "x" * 100_000
    with pytest.raises(StoreUnavailableError) as caught:
        store.save(state, 1)
    message = str(caught.value)
    assert str(store.path) in message
    assert "database or disk is full" in message
    assert "Nothing stored was lost" in message
    assert "Free space on the disk that holds" in message
    assert store.load("s1")[0].active_message == busy_state(pipeline).active_message


def test_a_read_only_store_says_how_to_make_it_writable(sqlite_store, pipeline):
    store = sqlite_store
    store.save(busy_state(pipeline), 0)
    store._db.execute("PRAGMA query_only = 1")  # as a read-only file or mount refuses writes
    with pytest.raises(StoreUnavailableError, match="Nothing stored was lost") as caught:
        store.save(busy_state(pipeline), 1)
    assert "writable" in str(caught.value)
    assert str(store.path) in str(caught.value)


def test_a_format_1_store_is_upgraded_in_place(tmp_path, pipeline):
    import sqlite3

    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(path)
    old.executescript(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('format', '1');
        CREATE TABLE sessions (id TEXT PRIMARY KEY, pipeline_path TEXT NOT NULL,
            pipeline_hash TEXT NOT NULL, version INTEGER NOT NULL, state TEXT NOT NULL,
            created REAL NOT NULL, updated REAL NOT NULL);
        CREATE TABLE rounds (session_id TEXT NOT NULL, round INTEGER NOT NULL,
            message TEXT NOT NULL, outcome TEXT NOT NULL, result TEXT NOT NULL,
            trace TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (session_id, round));
        INSERT INTO rounds VALUES ('s1', 1, 'hi', 'answer', '{}', '[]', 1.0);
        """
    )
    old.close()
    with SessionStore(path) as store:
        assert store._db.execute("SELECT value FROM meta").fetchone() == ("2",)
        assert store._round_rows("s1")[0].request_id is None
        SessionWriter(store, 0).finish(
            busy_state(pipeline), RoundRecord(2, "m", "answer", {}, [], request_id="r")
        )
        assert store.committed("r") is not None


def test_a_store_of_a_newer_runner_is_refused(tmp_path):
    import sqlite3

    path = tmp_path / "new.sqlite"
    SessionStore(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '99' WHERE key = 'format'")
    db.commit()
    db.close()
    with pytest.raises(SessionError, match="format 99 is newer than this runner's"):
        SessionStore(path)


# --- the PostgreSQL store's own -----------------------------------------------------------------


def test_the_postgresql_schema_carries_its_version_and_is_made_once(postgres_url):
    import psycopg

    from runner.sessions.postgres import SCHEMA_VERSION

    for _ in range(2):  # a second worker starting finds it made
        open_store(postgres_url).close()
    with psycopg.connect(postgres_url) as db:
        assert db.execute("SELECT version FROM runner_schema").fetchall() == [(SCHEMA_VERSION,)]


def test_an_unreachable_postgresql_names_it_without_its_password(pipeline):
    from runner.sessions.postgres import PostgresStore

    with pytest.raises(StoreUnavailableError) as caught:
        PostgresStore("postgresql://me:secret@127.0.0.1:9/db", timeout_s=0.5)
    message = str(caught.value)
    assert "postgresql://me:***@127.0.0.1:9/db" in message
    assert "secret" not in message
    assert "Nothing stored was lost" in message


def test_a_postgresql_writer_killed_inside_a_save_leaves_the_previous_state(postgres_url, pipeline):
    with open_store(postgres_url) as store:
        state = busy_state(pipeline)
        store.save(state, 0)
        child = textwrap.dedent(
            f"""
            import os, psycopg
            db = psycopg.connect({postgres_url!r})
            db.execute("UPDATE runner_sessions SET state = 'half-written', version = 99")
            os._exit(9)
            """
        )
        assert subprocess.run([sys.executable, "-c", child], check=False).returncode == 9
        loaded, version = store.load("s1")
        assert (version, loaded.to_json()) == (1, state.to_json())


def test_a_session_is_recognised_on_another_machine_by_name_and_content(store, pipeline, tmp_path):
    store.save(busy_state(pipeline), 0)  # stored by a worker that keeps the file elsewhere
    moved = replace(pipeline, path=tmp_path / "elsewhere" / "pipeline.yaml")
    assert store.open("s1", moved).warnings == []
    edited = replace(moved, content_hash="hash-2")
    with pytest.raises(SessionError, match="belongs to pipeline"):
        store.open("s1", edited)


def test_issue_19_m3_a_step_costs_the_same_however_many_rounds_the_session_had(
    sqlite_store, pipeline
):
    """600 rounds made the state row 198 KB, rewritten at every step: the row keeps only the
    newest history entry (the rounds table holds every round)."""
    store = sqlite_store
    state = busy_state(pipeline)
    store.save(state, 0)
    state.history = [{"round": n, "message": "x" * 300, "outcome": "answer"} for n in range(600)]
    store.save(state, 1)
    [(stored,)] = store._db.execute("SELECT state FROM sessions WHERE id = 's1'").fetchall()
    assert len(stored) < 10_000
    assert store.load("s1")[0].history == state.history[-1:]


def test_rounds_between_reads_a_window_of_a_long_session(store, pipeline):
    state = busy_state(pipeline)
    version = store.save(state, 0)
    for number in range(1, 8):
        record = RoundRecord(number, f"m{number}", "answer", {"answer": "a"}, [])
        version = store.save(state, version, round_record=record)
    assert [r.round for r in store.rounds_between("s1", 3, 5)] == [3, 4, 5]
    assert store.rounds_between("s1", 9, 12) == []


def test_prune_deletes_the_sessions_not_updated_since_a_time_and_their_rounds(store, pipeline):
    old, new = busy_state(pipeline, "old"), busy_state(pipeline, "new")
    record = RoundRecord(1, "m", "answer", {}, [], request_id="pruned-key")
    store.save(old, 0, round_record=record)
    cut = time.time()
    time.sleep(0.01)
    store.save(new, 0)
    assert store.prune(cut) == 1
    assert [info.id for info in store.sessions()] == ["new"]
    assert store.committed("pruned-key") is None


def test_runner_sessions_prune_deletes_old_sessions_from_the_named_store(tmp_path, pipeline):
    from click.testing import CliRunner

    from runner.cli import main

    location = tmp_path / "state.sqlite"
    with open_store(str(location)) as store:
        store.save(busy_state(pipeline, "old"), 0)
    kept = CliRunner().invoke(
        main, ["sessions", "prune", "--older-than", "1d", "--state", location]
    )
    assert kept.exit_code == 0 and "deleted 0 session(s)" in kept.output
    time.sleep(0.01)
    gone = CliRunner().invoke(
        main, ["sessions", "prune", "--older-than", "0.001s", "--state", str(location)]
    )
    assert gone.exit_code == 0 and "deleted 1 session(s)" in gone.output
    wrong = CliRunner().invoke(main, ["sessions", "prune", "--older-than", "soon", "--state", "x"])
    assert wrong.exit_code == 2 and "not a duration" in wrong.output


def test_a_stores_secret_is_random_made_once_and_the_same_for_every_opener(another_store):
    # issue 31, finding 9: the service keys its clients' scopes with it
    first, second = another_store(), another_store()
    key = first.secret("client-key")
    assert len(bytes.fromhex(key)) == 32
    assert second.secret("client-key") == key and first.secret("other") != key
