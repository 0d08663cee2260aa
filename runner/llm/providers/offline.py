"""The offline provider: no model, no network, deterministic, well under a millisecond a call.

It answers from `request.facts` (the variables the prompt was rendered from) with lexical
heuristics; docs/offline.md describes each one and its thresholds. It never reads our own
prompt text for meaning, and it has no special cases for any question or corpus.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from runner.config.model import ModelSettings
from runner.llm.providers.base import ProviderReply
from runner.llm.providers.extractive import Passage, passages_from_facts, select
from runner.llm.providers.offline_extract import extract
from runner.llm.types import LLMRequest, Purpose
from runner.text import content_words, coverage, stem, stems, token_stems, tokenize

# Words that say how a question is asked rather than what it is about; activation questions
# ("Does the user ask about …?") are full of them.
_META_WORDS_TEXT = (
    "user users ask asks asking asked question questions request requests "
    "want wants wanted need needs information info help"
)
META_WORDS = frozenset(stem(word) for word in _META_WORDS_TEXT.split())
SUITABLE_MIN_SHARED = 2  # shared content words that make a tool suitable on their own…
SUITABLE_MIN_SHARE = 0.25  # …or this share of the task's content words
GATEKEEPER_MIN_COVERAGE = 0.6  # the same default as deep_fallback.gatekeeper.min_coverage
READ_PAGE_MIN_COVERAGE = 0.5  # share of the question's words a page must contain
ANSWER_SENTENCES = 4  # context sentences an answer may quote
GUARANTEED_SENTENCES = 3  # sentences quoted from each guaranteed passage
PAGE_SENTENCES = 3
WORDS_PER_QUERY = 3  # missing-information queries are at most this many words
NOT_FOUND = "The available context does not answer this question."


class OfflineProvider:
    name = "offline"
    cacheable = False

    def prepare(self, settings: ModelSettings) -> None:
        """Nothing to get ready."""

    async def generate(self, request: LLMRequest, settings: ModelSettings) -> ProviderReply:
        return ProviderReply(respond(request))


def respond(request: LLMRequest) -> str:
    result = _HANDLERS[request.purpose](request)
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def _task_stems(text: str) -> set[str]:
    return stems(text) - META_WORDS


# --- classification ----------------------------------------------------------------------


def prompt_type(request: LLMRequest) -> dict[str, str]:
    """The type whose description and keywords share most words with the text; the first type
    when none shares any (Prompts lists the pipeline's default type first)."""
    facts = request.facts
    types: Sequence[Mapping[str, Any]] = facts["types"]
    task = _task_stems(facts["text"])
    best_name, best_score = types[0]["name"], 0
    for entry in types:
        vocabulary = stems(" ".join([entry.get("description") or "", *_keywords(entry)]))
        shared = len(task & vocabulary)
        if shared > best_score:
            best_name, best_score = entry["name"], shared
    return {"type": best_name}


def suitability(request: LLMRequest) -> dict[str, bool]:
    facts = request.facts
    task = _task_stems(facts["text"])
    return {tool["name"]: _suitable(task, tool) for tool in facts["tools"]}


def _suitable(task: set[str], tool: Mapping[str, Any]) -> bool:
    if not task:
        return False
    shared = len(task & _tool_vocabulary(tool))
    return shared >= SUITABLE_MIN_SHARED or shared / len(task) >= SUITABLE_MIN_SHARE


def _tool_vocabulary(tool: Mapping[str, Any]) -> set[str]:
    """Words of the instruction, description, keywords and examples. Example questions name
    particular things ("the XR-200"), so their tokens with digits are left out."""
    text = " ".join([tool.get("instruction") or "", tool.get("description") or ""])
    vocabulary = stems(text) | {stem(k) for k in _keywords(tool) for k in tokenize(k)}
    for example in tool.get("examples") or ():
        vocabulary |= {stem(w) for w in content_words(example) if not any(c.isdigit() for c in w)}
    return vocabulary - META_WORDS


def _keywords(entry: Mapping[str, Any]) -> list[str]:
    return [str(k) for k in entry.get("keywords") or ()]


# --- extraction ----------------------------------------------------------------------------


def extraction(request: LLMRequest) -> dict[str, Any]:
    facts = request.facts
    return extract(facts["text"], facts["schema"], facts.get("known_values") or {})


# --- deep search -----------------------------------------------------------------------------


def gatekeeper(request: LLMRequest) -> dict[str, Any]:
    important = content_words(request.facts["question"])
    missing = _uncovered(important, passages_from_facts(request.facts["passages"]))
    covered = len(important) - len(missing)
    reason = f"the context covers {covered} of {len(important)} important words of the question"
    if missing:
        reason += f"; not covered: {', '.join(missing)}"
    enough = bool(important) and covered / len(important) >= GATEKEEPER_MIN_COVERAGE
    return {"enough": enough, "reason": reason}


def missing_info(request: LLMRequest) -> dict[str, list[str]]:
    """Search queries made of the question's words that the context does not cover, in
    question order, up to three words each; when every word is covered, one query of the
    question's first six content words."""
    facts = request.facts
    limit = max(1, int(facts.get("max_missing") or 1))
    important = content_words(facts["question"])
    uncovered = _uncovered(important, passages_from_facts(facts["passages"]))
    if not uncovered:
        return {"missing": [" ".join(important[: WORDS_PER_QUERY * 2])] if important else []}
    # as few queries as possible of up to WORDS_PER_QUERY words, never more than `limit`
    size = max(-(-len(uncovered) // limit), min(WORDS_PER_QUERY, len(uncovered)))
    groups = [" ".join(uncovered[i : i + size]) for i in range(0, len(uncovered), size)]
    return {"missing": groups[:limit]}


def _uncovered(important: list[str], passages: Sequence[Passage]) -> list[str]:
    present = token_stems(_joined(passages))
    return [word for word in important if stem(word) not in present]


def _joined(passages: Sequence[Passage]) -> str:
    return "\n".join(passage.text for passage in passages)


def read_page(request: LLMRequest) -> dict[str, Any]:
    question = request.facts["question"]
    page = passages_from_facts([request.facts["page"]])
    important = content_words(question)
    if not important or coverage(important, page[0].text) < READ_PAGE_MIN_COVERAGE:
        return {"found": False, "answer": ""}
    chosen = select(question, page, per_guaranteed=0, limit=PAGE_SENTENCES)
    if chosen.empty:
        return {"found": False, "answer": ""}
    return {"found": True, "answer": chosen.text(cite=False)}


# --- writing answers ---------------------------------------------------------------------------


def compose(request: LLMRequest) -> str:
    """Every page answer found is kept (best two sentences each), with its sources."""
    answers = [_as_guaranteed(p) for p in passages_from_facts(request.facts["answers"])]
    chosen = select(request.facts["question"], answers, per_guaranteed=2, limit=0)
    return NOT_FOUND if chosen.empty else chosen.text(cite=True)


def answer(request: LLMRequest) -> str:
    facts = request.facts
    guaranteed = [_as_guaranteed(p) for p in passages_from_facts(facts["guaranteed"])]
    context = passages_from_facts(facts["context"])
    chosen = select(
        facts["question"],
        [*guaranteed, *context],
        per_guaranteed=GUARANTEED_SENTENCES,
        limit=ANSWER_SENTENCES,
    )
    return NOT_FOUND if chosen.empty else chosen.text(cite=True)


def tool(request: LLMRequest) -> str:
    """A prompt tool: the best sentences of its context for the task; without context, of its
    own rendered prompt (minus the task's own words), since that is all it was given."""
    facts = request.facts
    question = str(facts.get("task") or request.subject or facts.get("text") or "")
    context = passages_from_facts(facts.get("context") or ())
    if context:
        chosen = select(
            question, context, per_guaranteed=GUARANTEED_SENTENCES, limit=ANSWER_SENTENCES
        )
    else:
        prompt = [Passage(request.prompt)]
        chosen = select(
            question, prompt, per_guaranteed=0, limit=ANSWER_SENTENCES, exclude=question
        )
    return NOT_FOUND if chosen.empty else chosen.text(cite=True)


def _as_guaranteed(passage: Passage) -> Passage:
    return Passage(passage.text, passage.sources, guaranteed=True)


_HANDLERS: dict[Purpose, Callable[[LLMRequest], Any]] = {
    Purpose.PROMPT_TYPE: prompt_type,
    Purpose.SUITABILITY: suitability,
    Purpose.DECOMPOSE: extraction,
    Purpose.EXTRACT: extraction,
    Purpose.TOOL: tool,
    Purpose.GATEKEEPER: gatekeeper,
    Purpose.MISSING_INFO: missing_info,
    Purpose.READ_PAGE: read_page,
    Purpose.COMPOSE: compose,
    Purpose.ANSWER: answer,
}
