"""Asking one question, as `runner run` would: a new session, one round through the
application layer (`Conversation.say`), and after a clarifying question the set's `follow_up`
as the second. Then scored: retrieval and answer metrics from the round's trace and result,
groundedness against the cited pages' text, relevance (runner.eval.relevance), and the judge's
grades when there is a judge.

An `Asker` is what every runner (local or Ray) holds: one runtime (its LLM client, cache and
concurrency limit shared by every question), one session store, and the corpora's pages.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from runner.eval.groundedness import grounding
from runner.eval.metrics import failed_record, question_record
from runner.eval.model import Question
from runner.eval.relevance import on_topic_check, question_stems, relevance

if TYPE_CHECKING:
    from runner.app import Runtime
    from runner.engine.outcome import RoundResult
    from runner.eval.judge import Grade, Judge
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
        on_topic = on_topic_check(question_stems(self._asked(question)), self.page_heading)
        grounded: dict[str, float | None] | None = None
        if answer:
            counts = grounding(answer, self.page_text, on_topic).to_json()
            share = counts["supported"] / counts["sentences"] if counts["sentences"] else None
            grounded = {**counts, "share": None if share is None else round(share, 4)}
        addressing = relevance(answer, on_topic).to_json() if answer else None
        judge = None
        if self.judge is not None and answer:
            judge = await self._grades(question, final, answer)
        record = question_record(
            question,
            rounds,
            groundedness=grounded,
            relevance=addressing,
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
        """Each grade the judge gives; one that fails says why and leaves the others."""
        assert self.judge is not None
        judge = self.judge
        asked = (
            question.question
            if not question.follow_up
            else (f"{question.question} (then, asked to clarify: {question.follow_up})")
        )
        passages = [
            text
            for source in final.get("sources") or ()
            if source.get("page") is not None
            and (text := self.page_text(str(source["document"]), int(source["page"])))
        ]
        calls: dict[str, Callable[[], Awaitable[Grade]]] = {}
        if question.reference:
            reference = question.reference
            calls["correctness"] = lambda: judge.correctness(asked, reference, answer)
        calls["faithfulness"] = lambda: judge.faithfulness(asked, passages, answer)
        calls["relevance"] = lambda: judge.relevance(asked, answer)
        grades: dict[str, Any] = {}
        for name, call in calls.items():
            try:
                grades[name] = (await call()).to_json()
            except Exception as error:  # a grade that fails leaves that grade out, says why
                from runner.render import describe_error

                grades[name] = {"error": describe_error(error)}
        return grades

    def _asked(self, question: Question) -> list[str]:
        """The question and its follow-up, with the documents' words the corpora's `synonyms:`
        say their users' words stand for (as retrieval expands them)."""
        asked = [text for text in (question.question, question.follow_up) if text]
        if self.runtime.corpus is None:
            return asked
        expanded = []
        for name in self.runtime.pipeline.corpora:
            corpus = self.runtime.corpus(name)
            expanded += [corpus.expanded(text) for text in asked]
        return asked + expanded

    def page_text(self, document: str, page: int) -> str | None:
        """A page's text from whichever of the pipeline's corpora has it."""
        found = self._page(document, page)
        return None if found is None else str(found.text)

    def page_heading(self, document: str, page: int) -> str | None:
        """The heading of the section a page is in ("" for none), None for an unknown page."""
        found = self._page(document, page)
        return None if found is None else str(found.heading or "")

    def _page(self, document: str, page: int) -> Any:
        if self.runtime.corpus is None:
            return None
        for name in self.runtime.pipeline.corpora:
            found = self.runtime.corpus(name).page(f"{document}#{page}")
            if found is not None:
                return found
        return None


def _events(result: RoundResult) -> list[dict[str, Any]]:
    return list(result.trace.events) if result.trace is not None else []


def _as_run_json(result: RoundResult) -> dict[str, Any]:
    """The round's `runner run --json` object: its result and its retrievals."""
    from runner.retrieval.seen import retrieval_events

    return {**result.to_json(), "retrieval": retrieval_events(_events(result))}
