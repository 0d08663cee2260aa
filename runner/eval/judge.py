"""The judge: a model that grades an answer, when `--judge` names one (any provider).

Two grades, each a score from 0 to 1 and a reason:
- correctness: does the answer say what the question's `reference` answer says (only for a
  question with a `reference`);
- faithfulness: is everything the answer says backed by the pages it was written from;
- relevance: does the answer address the question asked (not a neighbouring one).

Each is one LLM call whose reply must be `{"score": …, "reason": …}`. The calls go through
runner's LLM client, as the pipeline's own do (retries, the concurrency limit, the cache), on a
client of their own, so they are never counted among the pipeline's calls. Their `tool` is
`eval_judge_correctness`, `eval_judge_faithfulness` or `eval_judge_relevance`, so that a
test's scripted rules answer them (`--judge scripted --judge-script FILE`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from runner.llm.types import LLMRequest, Purpose

if TYPE_CHECKING:
    from runner.llm.client import ProviderClient

CORRECTNESS = "eval_judge_correctness"
FAITHFULNESS = "eval_judge_faithfulness"
RELEVANCE = "eval_judge_relevance"
MAX_PASSAGE_CHARS = 4000

GRADE_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "required": ["score", "reason"],
    "properties": {
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "reason": {"type": "string"},
    },
}

_CORRECTNESS_PROMPT = """\
You grade the answer of a support assistant against a reference answer.
Question: {question}
Reference answer: {reference}
Answer to grade: {answer}
Does the answer say what the reference says (its facts, not its wording)? Reply with JSON:
{{"score": a number from 0 (wrong or missing) to 1 (all of it), "reason": one sentence}}"""

_FAITHFULNESS_PROMPT = """\
You check that an answer says nothing its sources do not say.
Question: {question}
Sources:
{passages}
Answer to check: {answer}
Is every statement of the answer backed by the sources? Reply with JSON:
{{"score": a number from 0 (nothing is backed) to 1 (everything is), "reason": one sentence}}"""

_RELEVANCE_PROMPT = """\
You check that an answer addresses the question it was given, not a neighbouring one.
Question: {question}
Answer to check: {answer}
Does the answer address this question (its subject and what it asks), whether or not it is
right? Reply with JSON:
{{"score": a number from 0 (about something else) to 1 (this question), "reason": one sentence}}"""


@dataclass(frozen=True)
class Grade:
    score: float
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"score": self.score, "reason": self.reason}


class Judge:
    """Grades answers with its own LLM client (closed with the judge)."""

    def __init__(self, client: ProviderClient) -> None:
        self.client = client

    async def correctness(self, question: str, reference: str, answer: str) -> Grade:
        prompt = _CORRECTNESS_PROMPT.format(question=question, reference=reference, answer=answer)
        return await self._grade(CORRECTNESS, question, prompt)

    async def faithfulness(self, question: str, passages: Sequence[str], answer: str) -> Grade:
        shown = "\n---\n".join(passage[:MAX_PASSAGE_CHARS] for passage in passages) or "(none)"
        prompt = _FAITHFULNESS_PROMPT.format(question=question, passages=shown, answer=answer)
        return await self._grade(FAITHFULNESS, question, prompt)

    async def relevance(self, question: str, answer: str) -> Grade:
        prompt = _RELEVANCE_PROMPT.format(question=question, answer=answer)
        return await self._grade(RELEVANCE, question, prompt)

    async def _grade(self, tool: str, question: str, prompt: str) -> Grade:
        request = LLMRequest(
            purpose=Purpose.TOOL,
            prompt=prompt,
            subject=question,
            tool=tool,
            schema=GRADE_SCHEMA,
            facts={"text": prompt},
        )
        reply = await self.client.complete(request)
        data = reply.data or {}
        return Grade(float(data["score"]), str(data["reason"]))

    async def aclose(self) -> None:
        aclose = getattr(self.client, "aclose", None)
        if aclose is not None:
            await aclose()

    def close(self) -> None:
        self.client.close()
