"""Asking one question, as `runner run` would: a new session, one round through the
application layer (`Conversation.say`), and after a clarifying question the set's `follow_up`
as the second. Then scored: retrieval and answer metrics from the round's trace and result,
groundedness against the cited pages' text, and the judge's grades when there is a judge.

An `Asker` is what every runner (local or Ray) holds: one runtime (its LLM client, cache and
concurrency limit shared by every question), one session store, and the corpora's pages.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from runner.eval.groundedness import grounding
from runner.eval.metrics import failed_record, question_record
from runner.eval.model import Question

if TYPE_CHECKING:
    from runner.app import Runtime
    from runner.engine.outcome import RoundResult
    from runner.eval.judge import Judge
    from runner.sessions import Store


@dataclass
class Answered:
    """A question's record, and its rounds' trace events (written beside the results)."""

    record: dict[str, Any]
    events: list[dict[str, Any]]


class Asker:
    def __init__(self, runtime: Runtime, store: Store, judge: Judge | None = None) -> None:
        self.runtime = runtime
        self.store = store
        self.judge = judge

    async def ask(self, question: Question) -> Answered:
        started = time.perf_counter()
        try:
            rounds, events = await self._rounds(question)
        except Exception as error:  # the round itself failed: the run goes on, this one says so
            from runner.render import describe_error

            elapsed = (time.perf_counter() - started) * 1000
            return Answered(failed_record(question, describe_error(error), elapsed), [])
        latency_ms = (time.perf_counter() - started) * 1000
        final = rounds[-1]
        answer = str(final.get("answer") or "") if final.get("outcome") == "answer" else ""
        grounded = grounding(answer, self.page_text).to_json() if answer else None
        if grounded is not None:
            share = grounded["supported"] / grounded["sentences"] if grounded["sentences"] else None
            grounded["share"] = None if share is None else round(share, 4)
        judge = None
        if self.judge is not None and answer:
            try:
                judge = await self._grades(question, final, answer)
            except Exception as error:  # a judge that fails leaves the question ungraded
                from runner.render import describe_error

                judge = {"error": describe_error(error)}
        record = question_record(
            question,
            rounds,
            groundedness=grounded,
            judge=judge,
            latency_ms=latency_ms,
            trace=None,
        )
        return Answered(record, events)

    async def _rounds(self, question: Question) -> tuple[list[dict[str, Any]], list[dict]]:
        conversation = self.runtime.conversation(self.store)
        result = await conversation.say(question.question)
        results = [result]
        if result.outcome == "clarification" and question.follow_up:
            results.append(await conversation.say(question.follow_up))
        events = [event for each in results for event in _events(each)]
        return [_as_run_json(each) for each in results], events

    async def _grades(
        self, question: Question, final: Mapping[str, Any], answer: str
    ) -> dict[str, Any]:
        assert self.judge is not None
        grades: dict[str, Any] = {}
        if question.reference:
            grade = await self.judge.correctness(question.question, question.reference, answer)
            grades["correctness"] = grade.to_json()
        passages = [
            text
            for source in final.get("sources") or ()
            if source.get("page") is not None
            and (text := self.page_text(str(source["document"]), int(source["page"])))
        ]
        grade = await self.judge.faithfulness(question.question, passages, answer)
        grades["faithfulness"] = grade.to_json()
        return grades

    def page_text(self, document: str, page: int) -> str | None:
        """A page's text from whichever of the pipeline's corpora has it."""
        if self.runtime.corpus is None:
            return None
        for name in self.runtime.pipeline.corpora:
            found = self.runtime.corpus(name).page(f"{document}#{page}")
            if found is not None:
                return str(found.text)
        return None


def _events(result: RoundResult) -> list[dict[str, Any]]:
    return list(result.trace.events) if result.trace is not None else []


def _as_run_json(result: RoundResult) -> dict[str, Any]:
    """The round's `runner run --json` object: its result and its retrievals."""
    from runner.retrieval.seen import retrieval_events

    return {**result.to_json(), "retrieval": retrieval_events(_events(result))}
