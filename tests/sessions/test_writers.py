"""How a service saves a round (runner.sessions.writers): once at its end, a long round's
newest checkpoint after a delay (C24: a killed worker's round resumes from it), and a round
cut off by an error from its newest checkpoint."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from runner.config.model import Pipeline, PromptOptions, TemplateRef, ToolConfig, ToolKind
from runner.engine.state import SessionState
from runner.sessions import (
    BackgroundWriter,
    RoundRecord,
    SessionConflictError,
    SQLiteStore,
    writers,
)


@pytest.fixture
def pipeline(tmp_path: Path) -> Pipeline:
    tool = ToolConfig(
        "writer", ToolKind.PROMPT, options=PromptOptions(template=TemplateRef(inline="x"))
    )
    return Pipeline(path=tmp_path / "p.yaml", domain="demo", tools=(tool,), content_hash="h")


@pytest.fixture
def store(tmp_path: Path):
    opened = SQLiteStore(tmp_path / "state.sqlite")
    yield opened
    opened.close()


class CountingStore(SQLiteStore):
    """A SQLite store that counts its writes."""

    writes = 0

    def save(self, state, expected_version, *, round_record=None):  # type: ignore[no-untyped-def]
        self.writes += 1
        return super().save(state, expected_version, round_record=round_record)


def record(number: int = 1) -> RoundRecord:
    return RoundRecord(number, "m", "answer", {"round": number}, [])


def step(state: SessionState, message: str) -> SessionState:
    state.active_message = message
    return state


def test_a_round_that_ends_within_the_delay_is_written_once(tmp_path, pipeline):
    store = CountingStore(tmp_path / "state.sqlite")
    state = SessionState.new("s1", pipeline)

    async def round_() -> BackgroundWriter:
        writer = BackgroundWriter(store, 0)
        for number in range(8):  # a round's eight checkpoints
            writer(step(state, f"step {number}"))
        state.active_message = None
        state.rounds = 1
        await writer.finish(state, record())
        writer.close()
        return writer

    writer = asyncio.run(round_())
    assert (store.writes, writer.saves, writer.version) == (1, 1, 1)
    stored, version = store.load("s1")
    assert (stored.rounds, stored.active_message, version) == (1, None, 1)
    assert [r.round for r in store.rounds("s1")] == [1]
    store.close()


def test_c24_a_long_rounds_newest_checkpoint_is_stored_while_it_runs(store, pipeline, monkeypatch):
    monkeypatch.setattr(writers, "CHECKPOINT_DELAY_S", 0.05)
    state = SessionState.new("s1", pipeline)

    async def round_() -> tuple[str | None, int]:
        writer = BackgroundWriter(store, 0)
        writer(step(state, "first done"))
        writer(step(state, "second done"))
        await asyncio.sleep(0.5)  # the round waits on a slow tool
        seen = store.load("s1")[0].active_message  # what a killed worker would leave
        await writer.finish(state, record())
        return seen, writer.saves

    seen, saves = asyncio.run(round_())
    assert seen == "second done"  # the newest checkpoint, not the first
    assert saves == 2  # the checkpoint once, then the round's end


def test_a_round_cut_off_by_an_error_is_stored_as_of_its_newest_checkpoint(store, pipeline):
    state = SessionState.new("s1", pipeline)

    async def round_() -> None:
        writer = BackgroundWriter(store, 0)
        writer(step(state, "in flight"))
        writer.close()  # what Conversation.say does when the round raised
        await asyncio.sleep(0.2)

    asyncio.run(round_())
    stored = store.load("s1")[0]
    assert stored.interrupted and stored.active_message == "in flight"


def test_a_checkpoint_that_failed_fails_the_rounds_end_with_its_error(store, pipeline, monkeypatch):
    monkeypatch.setattr(writers, "CHECKPOINT_DELAY_S", 0.01)
    state = SessionState.new("s1", pipeline)
    store.save(SessionState.new("s1", pipeline), 0)  # another writer was first

    async def round_() -> None:
        writer = BackgroundWriter(store, 0)
        writer(step(state, "first"))
        await asyncio.sleep(0.2)
        await writer.finish(state, record())

    with pytest.raises(SessionConflictError):
        asyncio.run(round_())


def test_the_rounds_last_save_runs_then_on_its_own_thread(store, pipeline):
    import threading

    state = SessionState.new("s1", pipeline)
    seen: list[tuple[str, int]] = []

    def then() -> None:  # what it sees: the round committed
        seen.append((threading.current_thread().name, store.load("s1")[1]))

    async def round_() -> None:
        writer = BackgroundWriter(store, 0)
        await writer.finish(state, record(), then=then)
        writer.close()

    asyncio.run(round_())
    [(thread, version)] = seen
    assert thread.startswith("runner-save") and version == 1


def test_the_rounds_last_save_runs_then_when_it_failed(store, pipeline):
    state = SessionState.new("s1", pipeline)
    store.save(SessionState.new("s1", pipeline), 0)  # another writer was first
    called: list[bool] = []

    async def round_() -> None:
        writer = BackgroundWriter(store, 0)
        await writer.finish(state, record(), then=lambda: called.append(True))

    with pytest.raises(SessionConflictError):
        asyncio.run(round_())
    assert called == [True]
