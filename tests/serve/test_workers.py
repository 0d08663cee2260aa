"""Scale out: two `runner serve` processes sharing one PostgreSQL. Any round of a conversation
may land on any worker; one session's rounds never interleave across workers; a worker killed
mid-round leaves a round that the other worker finishes."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

import httpx
import pytest

from .conftest import ASK, COMPARE, QUESTION, Held, copy_pipelines
from .server import ServeProcess


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return copy_pipelines(tmp_path_factory.mktemp("scaled"))


@pytest.fixture(scope="module")
def database(postgres_server) -> str:
    return postgres_server.fresh_database("workers")


def start_worker(folder: Path, database: str) -> ServeProcess:
    """A worker starting (wait for it with `wait_ready`)."""
    return ServeProcess([folder], "--allow-python", "--state", database, "--lock-wait", "20")


@pytest.fixture(scope="module")
def workers(folder, database):
    pair = [start_worker(folder, database), start_worker(folder, database)]
    for worker in pair:  # they start side by side
        worker.wait_ready()
    yield pair
    for worker in pair:
        worker.stop()


def say(worker: ServeProcess, domain: str, message: str, **fields: str) -> dict:
    response = httpx.post(
        f"{worker.url}/v1/pipelines/{domain}/rounds",
        json={"message": message, **fields},
        timeout=60,
    )
    assert response.status_code == 200, response.text
    return response.json()


def test_c24_a_conversation_alternating_between_workers_keeps_its_question(workers):
    a, b = workers
    asked = say(a, "shop", ASK)
    assert (asked["outcome"], asked["question"]) == ("clarification", QUESTION)
    session = asked["session"]
    answered = say(b, "shop", "the kw-620", session_id=session)
    assert (answered["round"], answered["answer"]) == (2, "The KW-620 costs 449 EUR.")
    compared = say(a, "shop", COMPARE, session_id=session)
    assert compared["round"] == 3
    summary = httpx.get(f"{b.url}/v1/sessions/{session}").json()
    assert [r["outcome"] for r in summary["rounds"]] == ["clarification", "answer", "answer"]


def test_a_request_re_sent_to_the_other_worker_is_not_run_again(workers):
    a, b = workers
    first = say(a, "shop", ASK, request_id="across")
    again = say(b, "shop", ASK, request_id="across")
    assert again == first
    assert len(httpx.get(f"{a.url}/v1/sessions/{first['session']}").json()["rounds"]) == 1


def test_a_round_on_a_session_busy_on_the_other_worker_waits_for_it(workers, folder):
    a, b = workers
    session = say(a, "desk", "warm up")["session"]
    results: dict[str, dict] = {}
    with Held(folder) as held:
        slow = threading.Thread(
            target=lambda: results.update(slow=say(a, "desk", "slow", session_id=session))
        )
        slow.start()
        held.wait_until_held()
        waiting = threading.Thread(
            target=lambda: results.update(next=say(b, "desk", "next", session_id=session))
        )
        waiting.start()
        waiting.join(0.5)
        assert waiting.is_alive()  # it waits for the session rather than interleave
    slow.join(30)
    waiting.join(30)
    assert (results["slow"]["round"], results["next"]["round"]) == (2, 3)


def test_a_worker_killed_mid_round_leaves_a_round_the_other_worker_resumes(
    workers, folder, database
):
    _, survivor = workers
    victim = start_worker(folder, database).wait_ready()
    session = say(survivor, "desk", "warm up")["session"]
    with Held(folder) as held:
        doomed = threading.Thread(
            target=lambda: _ignore_errors(
                lambda: say(victim, "desk", "cut off", session_id=session, request_id="k1")
            )
        )
        doomed.start()
        held.wait_until_held()
        # the service saves a long round's newest checkpoint a second after it, while the round
        # goes on: kill only once the first step's checkpoint is stored, so what is tested is
        # resuming from it
        wait_for_checkpoint(database, session, prompt="cut off", done="first")
        before = held.runs()
        victim.kill()
    doomed.join(30)
    resumed = say(survivor, "desk", "cut off", session_id=session, request_id="k1")
    assert (resumed["round"], resumed["outcome"], resumed["warnings"]) == (2, "answer", [])
    runs = held.runs()
    # the killed round's first step had run and was checkpointed: only `second` runs again
    assert before[-2:] == ["first cut off", "second cut off"]
    assert runs[len(before) :] == ["second cut off"]
    summary = httpx.get(f"{survivor.url}/v1/sessions/{session}").json()
    assert [(r["round"], r["request_id"]) for r in summary["rounds"]] == [(1, None), (2, "k1")]


def wait_for_checkpoint(database: str, session: str, *, prompt: str, done: str) -> None:
    import json
    import time

    import psycopg

    deadline = time.monotonic() + 20
    with psycopg.connect(database, autocommit=True) as connection:
        while time.monotonic() < deadline:
            row = connection.execute(
                "SELECT state FROM runner_sessions WHERE id = %s", (session,)
            ).fetchone()
            root = json.loads(row[0])["root"] if row else {}
            if root.get("task_prompt") == prompt and root["tool_status"].get(done) == "done":
                return
            time.sleep(0.02)
    raise AssertionError(f"the checkpoint after `{done}` was never stored")


def _ignore_errors(call) -> None:
    with contextlib.suppress(httpx.HTTPError, AssertionError):  # the worker died under it
        call()
