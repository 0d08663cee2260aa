"""The service core: what the HTTP app and the playground call."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from runner.service.errors import BadRequest, Busy, NotFound, Unavailable
from runner.trace import schema_problems

from .conftest import ASK, COMPARE, QUESTION


def test_pipelines_lists_each_domain_with_its_tools(service):
    [shop] = service.pipelines()
    assert shop["domain"] == "shop"
    assert shop["description"].startswith("Compares Kestrel appliances")
    assert {"name": "price", "kind": "lookup", "description": "The price of a model."} in shop[
        "tools"
    ]


def test_a_round_is_the_run_json_result(service):
    result = asyncio.run(service.run_round("shop", COMPARE))
    assert schema_problems("result", result, "result") == []
    assert result["outcome"] == "answer"
    assert result["answer"] == "The KD-450 costs 100 EUR more than the KW-620."


def test_c24_a_question_and_its_answer_continue_one_session(service):
    asked = asyncio.run(service.run_round("shop", ASK))
    assert (asked["outcome"], asked["question"]) == ("clarification", QUESTION)
    answered = asyncio.run(service.run_round("shop", "the kw-620", session_id=asked["session"]))
    assert (answered["round"], answered["answer"]) == (2, "The KW-620 costs 449 EUR.")


def test_the_session_summary_lists_its_rounds_and_pending_question(service):
    asked = asyncio.run(service.run_round("shop", ASK, request_id="r-1"))
    summary = service.session(asked["session"])
    assert (summary["domain"], summary["status"], summary["question"]) == (
        "shop",
        "waiting",
        QUESTION,
    )
    assert [(r["round"], r["outcome"], r["request_id"]) for r in summary["rounds"]] == [
        (1, "clarification", "r-1")
    ]


def test_a_round_keeps_its_result_and_trace(service):
    result = asyncio.run(service.run_round("shop", COMPARE))
    stored = service.round(result["session"], 1)
    assert stored["result"] == result
    assert stored["trace"][0]["event"] == "round.start"
    with pytest.raises(NotFound, match="no finished round 2"):
        service.round(result["session"], 2)


def test_a_request_id_already_committed_returns_the_stored_result_without_running(service):
    first = asyncio.run(service.run_round("shop", ASK, request_id="once"))
    again = asyncio.run(service.run_round("shop", ASK, request_id="once"))
    assert again == first
    assert len(service.session(first["session"])["rounds"]) == 1


def test_a_request_id_reused_for_another_message_is_refused(service):
    asyncio.run(service.run_round("shop", ASK, request_id="once"))
    with pytest.raises(BadRequest, match="already used for another message"):
        asyncio.run(service.run_round("shop", COMPARE, request_id="once"))


def test_two_concurrent_sends_of_one_request_run_it_once(service):
    async def both():
        return await asyncio.gather(
            service.run_round("shop", ASK, request_id="twice"),
            service.run_round("shop", ASK, request_id="twice"),
        )

    first, second = asyncio.run(both())
    assert first == second
    assert len(service.session(first["session"])["rounds"]) == 1


def test_two_concurrent_rounds_on_one_session_run_one_after_the_other(service):
    asked = asyncio.run(service.run_round("shop", ASK, session_id="s1"))

    async def both():
        return await asyncio.gather(
            service.run_round("shop", "the kw-620", session_id="s1"),
            service.run_round("shop", COMPARE, session_id="s1"),
        )

    answered, compared = asyncio.run(both())
    assert asked["round"] == 1
    assert sorted([answered["round"], compared["round"]]) == [2, 3]
    assert [r["round"] for r in service.session("s1")["rounds"]] == [1, 2, 3]


def test_a_session_held_past_the_wait_gives_busy(service):
    store = service.stores["shop"]
    held = store.try_lock("s1")  # another worker holds the session
    assert held is not None
    try:
        with pytest.raises(Busy, match="session 's1' is busy"):
            asyncio.run(service.run_round("shop", COMPARE, session_id="s1"))
    finally:
        held.release()
    assert asyncio.run(service.run_round("shop", COMPARE, session_id="s1"))["round"] == 1


def test_limits_refuse_an_empty_or_too_long_message(service):
    with pytest.raises(BadRequest, match="non-empty"):
        asyncio.run(service.run_round("shop", "  "))
    with pytest.raises(BadRequest, match="more than this service's limit of 200"):
        asyncio.run(service.run_round("shop", "x" * 201))


def test_an_unknown_domain_or_session_is_not_found(service):
    with pytest.raises(NotFound, match=r"no pipeline 'nope' is served here \(domains: shop\)"):
        asyncio.run(service.run_round("nope", COMPARE))
    with pytest.raises(NotFound, match="no session 'nope'"):
        service.session("nope")


def test_readiness_reports_pipelines_and_store(service):
    assert service.readiness() == {
        "ready": True,
        "pipelines": ["shop"],
        "store": "ok",
        "closing": False,
        "rounds_in_flight": 0,
    }


def test_a_draining_service_refuses_new_rounds(service):
    assert asyncio.run(service.drain(1.0)) is True
    with pytest.raises(Unavailable, match="shutting down"):
        asyncio.run(service.run_round("shop", COMPARE))
    assert service.readiness()["ready"] is False


def test_rounds_running_at_once_count_only_their_own_llm_calls(tmp_path, monkeypatch):
    import threading

    from runner.service.pipelines import Service

    from .conftest import Held, copy_pipelines

    monkeypatch.delenv("RUNNER_STATE", raising=False)
    folder = copy_pipelines(tmp_path)
    service = Service.open([folder], allow_python=True)
    try:

        async def both(held: Held) -> tuple[dict, dict]:
            slow = asyncio.ensure_future(service.run_round("desk", "held"))
            await asyncio.to_thread(held.wait_until_held)
            quick = await service.run_round("desk", "quick one")  # one runtime, both rounds
            threading.Timer(0.05, held.__exit__).start()
            return await slow, quick

        with Held(folder) as held:
            slow, quick = asyncio.run(both(held))
        # each its own answer call, none of the other's (one LLM client serves both)
        assert (slow["stats"]["llm_calls"], quick["stats"]["llm_calls"]) == (1, 1)
    finally:
        service.close()


def counting(executor, counts: dict[str, int], name: str) -> None:
    """Counts the calls handed to a thread pool."""
    submit = executor.submit

    def counted(*args, **kwargs):
        counts[name] = counts.get(name, 0) + 1
        return submit(*args, **kwargs)

    executor.submit = counted


def test_issue_33_a_round_is_written_once_in_one_hop_and_read_in_one(service, monkeypatch):
    store = service.stores["shop"]
    asked = asyncio.run(service.run_round("shop", ASK))
    counts: dict[str, int] = {}
    save = type(store).save

    def counted_save(self, *args, **kwargs):
        counts["writes"] = counts.get("writes", 0) + 1
        return save(self, *args, **kwargs)

    monkeypatch.setattr(type(store), "save", counted_save)
    counting(service._store_calls, counts, "hops")
    counting(store.save_threads(), counts, "save hops")
    answered = asyncio.run(
        service.run_round("shop", "the kw-620", session_id=asked["session"], request_id="r-2")
    )
    assert answered["answer"] == "The KW-620 costs 449 EUR."
    # one write of the round's state and record, the session's lock let go in its hop; the
    # lock taken with what the round reads (its request id, its session) in one hop
    assert counts == {"writes": 1, "save hops": 1, "hops": 1}
    assert service.round(asked["session"], 2)["result"] == answered


def test_issue_33_the_sessions_lock_is_let_go_on_the_thread_of_the_rounds_last_save(
    service, monkeypatch
):
    import threading

    from runner.service.locks import HeldLock

    asked = asyncio.run(service.run_round("shop", ASK))
    threads: dict[str, str] = {}
    save, release = type(service.stores["shop"]).save, HeldLock.release

    def saving(self, *args, **kwargs):
        threads["save"] = threading.current_thread().name
        return save(self, *args, **kwargs)

    def releasing(self):
        threads.setdefault("release", threading.current_thread().name)
        release(self)

    monkeypatch.setattr(type(service.stores["shop"]), "save", saving)
    monkeypatch.setattr(HeldLock, "release", releasing)
    asyncio.run(service.run_round("shop", "the kw-620", session_id=asked["session"]))
    assert threads["release"] == threads["save"]
    assert threads["save"].startswith("runner-save")
    held = service.stores["shop"].try_lock(asked["session"])
    assert held is not None  # let go, not kept
    held.release()


def test_a_round_whose_last_save_failed_lets_the_sessions_lock_go(service):
    from runner.service.errors import ServiceError

    store = service.stores["shop"]
    asked = asyncio.run(service.run_round("shop", ASK))
    state, version = store.load(asked["session"])

    def another_writer_first() -> None:  # after the round read the session, before its save
        store.save(state, version)

    original = store.open

    def opened_then_overtaken(session_id, pipeline):
        found = original(session_id, pipeline)
        another_writer_first()
        return found

    store.open = opened_then_overtaken  # type: ignore[method-assign]
    with pytest.raises(ServiceError, match="changed by another writer"):
        asyncio.run(service.run_round("shop", "the kw-620", session_id=asked["session"]))
    held = store.try_lock(asked["session"])
    assert held is not None
    held.release()


def test_a_new_session_without_a_request_id_reads_nothing_before_its_round(service):
    counts: dict[str, int] = {}
    counting(service._store_calls, counts, "hops")
    result = asyncio.run(service.run_round("shop", COMPARE))
    assert result["outcome"] == "answer"
    assert counts == {}  # a fresh id: no lock to take, no stored session to read


def test_a_round_refused_under_the_lock_lets_the_lock_go(service):
    store = service.stores["shop"]
    for _ in range(2):  # the second would be Busy if the first kept the store's lock
        with pytest.raises(NotFound, match="no session 'gone'"):
            asyncio.run(service.run_round("shop", COMPARE, session_id="gone", create=False))
    held = store.try_lock("gone")
    assert held is not None  # nobody holds it
    held.release()


OLD_STORE = Path(__file__).parent / "fixtures" / "stores" / "service-35a7b03.sql"


def test_a_store_written_by_the_service_that_saved_every_step_opens_and_continues(
    shop, tmp_path, monkeypatch
):
    from runner.config import load_pipeline
    from runner.service.pipelines import Service

    monkeypatch.delenv("RUNNER_STATE", raising=False)
    state = tmp_path / "old.sqlite"
    with closing(sqlite3.connect(state)) as db:
        db.executescript(OLD_STORE.read_text(encoding="utf-8"))
        # the session names its pipeline by file name and content: this copy's content
        content_hash = load_pipeline(shop).content_hash
        stored = json.loads(db.execute("SELECT state FROM sessions").fetchone()[0])
        stored["pipeline_hash"] = content_hash
        db.execute(
            "UPDATE sessions SET state = ?, pipeline_hash = ?", (json.dumps(stored), content_hash)
        )
        db.commit()
    service = Service.open([shop.parent], state=str(state))
    try:
        replayed = asyncio.run(service.run_round("shop", ASK, request_id="old-1"))
        assert (replayed["round"], replayed["question"]) == (1, QUESTION)
        answered = asyncio.run(
            service.run_round("shop", "the kw-620", session_id=replayed["session"])
        )
        assert (answered["round"], answered["answer"]) == (2, "The KW-620 costs 449 EUR.")
        assert service.session(replayed["session"])["rounds_total"] == 2
    finally:
        service.close()
