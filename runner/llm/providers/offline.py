"""The offline provider: no model, no network, deterministic, well under a millisecond a call.

It answers from `request.facts` (the variables the prompt was rendered from) with lexical
heuristics; docs/offline.md describes each one and its thresholds. It never reads our own
prompt text for meaning, and it has no special cases for any question or corpus.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from runner.config.model import ModelSettings
from runner.llm.citations import source_labels
from runner.llm.errors import NoModelError
from runner.llm.evidence import evidence_of, weighed
from runner.llm.providers.base import ProviderReply
from runner.llm.providers.extractive import (
    OfflinePassage,
    cited_by,
    passages_from_facts,
    quoted_coverage,
    select,
)
from runner.llm.providers.offline_meaning import page_bears
from runner.llm.providers.offline_named import answering_units, described, uncovered_named_parts
from runner.llm.providers.offline_records import Record, comparison
from runner.llm.types import LLMRequest, Purpose
from runner.llm.units.reading import RECORD, parse
from runner.llm.units.rows import for_codes, is_code
from runner.text.questions import Part, defined_term, defines, names, parts
from runner.text.words import content_words, normalize, stem, stems, tokenize

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
ANSWER_UNITS = 4  # context units an answer may quote (list items they bring come on top)
GUARANTEED_UNITS = 6  # units quoted from each cited block of a guaranteed passage, at most
PAGE_SENTENCES = 3  # units a page answer quotes
PAGE_ANSWER_UNITS = 2  # units compose keeps of each page answer
COMPOSE_UNITS = 4  # units compose may quote from pages handed over unread
PART_QUERY_WORDS = 5  # a missing part of up to this many words is one query
WORDS_PER_QUERY = 3  # longer parts (lists) are queried this many uncovered words at a time
NOT_FOUND = "The available context does not answer this question."
CLOSEST_SECTIONS = 3  # sections a "does not answer" names


class OfflineProvider:
    name = "offline"
    cacheable = False

    def prepare(self, settings: ModelSettings) -> None:
        """Nothing to get ready."""

    async def generate(self, request: LLMRequest, settings: ModelSettings) -> ProviderReply:
        if _read_by_meaning(request.facts):  # the model's CPU time off the event loop
            return ProviderReply(await asyncio.to_thread(respond, request))
        return ProviderReply(respond(request))


def _read_by_meaning(facts: Mapping[str, Any]) -> bool:
    """Some passage of the request carries a retrieval's meaning (runner.tools.meaning)."""
    given = [facts.get("page"), *(p for key in _PASSAGE_FACTS for p in facts.get(key) or ())]
    return any(isinstance(passage, Mapping) and passage.get("meaning") for passage in given)


_PASSAGE_FACTS = ("passages", "context", "guaranteed", "answers")  # lists of passages; `page`: one


def respond(request: LLMRequest) -> str:
    request = replace(
        request,
        prompt=normalize(request.prompt),
        subject=normalize(request.subject),
        facts=_normal_facts(request.facts),
    )
    result = _HANDLERS[request.purpose](request)
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def _normal_facts(value: Any) -> Any:
    """The facts in runner's normal form (texts in mappings and lists; pages already are): a
    soft hyphen or a non-breaking space in a message matches the plain word on a page."""
    if isinstance(value, str):
        return normalize(value)
    if isinstance(value, Mapping):
        return {key: _normal_facts(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normal_facts(item) for item in value]
    return value


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
    # imported by the first extraction (its value patterns cost about 3 ms to compile): a round
    # that fills no tool's parameters, as a retrieval round, never loads it
    from runner.llm.providers.offline_extract import extract

    facts = request.facts
    return extract(facts["text"], facts["schema"], facts.get("known_values") or {})


# --- deep search -----------------------------------------------------------------------------


def gatekeeper(request: LLMRequest) -> dict[str, Any]:
    """Enough, on words alone, when the sentences an answer would quote cover the question
    (`_words_verdict`). When the passages carry a retrieval's evidence (its corpus has page
    vectors), that evidence decides, the words' verdict one of its three parts
    (runner.llm.evidence). The reason says how much is covered, names what is missing and, with
    evidence, what it weighed."""
    enough, reason = _words_verdict(request, _uncovered_named(request, unread_counts=False))
    evidence = evidence_of(request.facts["passages"])
    if evidence is None:
        return {"enough": enough, "reason": reason}
    # a part naming something that no unit answers stays not enough whatever the evidence: a
    # page's vector and the rankings cannot tell one model's code from another's
    named_missing = _uncovered_named(request, unread_counts=True)
    return {
        "enough": weighed(evidence, enough) and not named_missing,
        "reason": f"{reason}; {evidence.reason(enough)}",
    }


def _uncovered_named(request: LLMRequest, *, unread_counts: bool) -> str:
    """The parts naming something that no one quotable unit answers, described ("" if none)."""
    passages = passages_from_facts(request.facts["passages"])
    question = request.facts["question"]
    return described(uncovered_named_parts(question, passages, unread_counts=unread_counts))


def _words_verdict(request: LLMRequest, named_missing: str) -> tuple[bool, str]:
    """Enough when the sentences an answer would quote cover the question: they hold at least
    60 % of its weight (content words weighted by rarity over the context's units), every name
    it asks about (`names`), every part of the question has 60 % of its words on one page, and
    every part that names something is answered by one unit holding the name and what is asked
    of it (`offline_named`: a page that only mentions the name is not enough)."""
    question = request.facts["question"]
    passages = passages_from_facts(request.facts["passages"])
    important = content_words(question)
    missing = _uncovered(important, passages)
    share, held, quoted = quoted_coverage(
        question, passages, per_guaranteed=GUARANTEED_UNITS, limit=ANSWER_UNITS
    )
    absent = [name for name in names(question) if not {stem(t) for t in tokenize(name)} <= held]
    undefined = defined_term(question)
    if undefined is not None and defines(quoted, undefined):
        undefined = None
    covered = len(important) - len(missing)
    reason = (
        f"the context covers {covered} of {len(important)} important words of the question; "
        f"the sentences an answer would quote hold {share:.0%} of its weight"
    )
    if absent:
        reason += f"; names not in those sentences: {', '.join(absent)}"
    if undefined is not None:
        reason += f"; no sentence says what {undefined} is"
    if named_missing:
        reason += f"; no sentence, row or item says both a name and what is asked: {named_missing}"
    if missing:
        reason += f"; not covered: {', '.join(missing)}"
    unanswered = _unanswered_parts(question, passages)
    if unanswered and not missing:
        pieces = "; ".join(" ".join(part.words) for part in unanswered)
        reason += f"; no single page covers enough of: {pieces}"
    enough = (
        bool(important)
        and not unanswered
        and not named_missing
        and not absent
        and undefined is None
        and share >= GATEKEEPER_MIN_COVERAGE
    )
    return enough, reason


def missing_info(request: LLMRequest) -> dict[str, list[str]]:
    """One search query per part of the question that no page answers (fewer than 60 % of its
    words on any one page, or, for a part naming something, no one unit holding the name and
    what is asked of it): the part's content words, or — for a part of more than five words,
    a list — its uncovered words, three to a query. Never more than `max_missing` queries: the
    pieces past the limit join the last query. When every part is answered (a scripted or
    stricter gatekeeper disagreed), the uncovered words; when none, the first six content words
    of the question."""
    facts = request.facts
    limit = max(1, int(facts.get("max_missing") or 1))
    question = facts["question"]
    passages = passages_from_facts(facts["passages"])
    uncovered = _uncovered(content_words(question), passages)
    pieces = [
        piece
        for part in _missing_parts(question, passages)
        for piece in _part_queries(part, uncovered)
    ]
    if not pieces and uncovered:
        pieces = _groups(uncovered, WORDS_PER_QUERY)
    if not pieces:
        important = content_words(question)
        return {"missing": [" ".join(important[: WORDS_PER_QUERY * 2])] if important else []}
    return {"missing": _within(pieces, limit)}


def _missing_parts(question: str, passages: Sequence[OfflinePassage]) -> list[Part]:
    """The parts no page answers by their words, and those naming something that no one unit
    answers (`offline_named`); where the pages carry their meaning, also
    the parts the units an answer would quote (read by meaning, as the answer reads them) hold
    less than 60 % of: a page that shares a part's words and means something else leaves the
    part missing."""
    # a part naming something that no one unit answers is missing, whatever its page holds
    named = {found.part for found in uncovered_named_parts(question, passages)}
    unanswered = _unanswered_parts(question, passages)
    by_words = [part for part in parts(question) if part in unanswered or part in named]
    if not any(passage.meaning for passage in passages if not passage.guaranteed):
        return by_words
    _, quoted, _ = quoted_coverage(
        question, passages, per_guaranteed=GUARANTEED_UNITS, limit=ANSWER_UNITS
    )
    return [
        part
        for part in parts(question)
        if part in by_words or len(part.stems & quoted) / len(part.stems) < GATEKEEPER_MIN_COVERAGE
    ]


def _part_queries(part: Part, uncovered: list[str]) -> list[list[str]]:
    if len(part.words) <= PART_QUERY_WORDS:
        return [list(part.words)]
    own = [word for word in part.words if word in uncovered]
    return _groups(own or list(part.words), WORDS_PER_QUERY)


def _groups(words: list[str], size: int) -> list[list[str]]:
    return [words[i : i + size] for i in range(0, len(words), size)]


def _within(pieces: list[list[str]], limit: int) -> list[str]:
    """At most `limit` queries: the pieces past the limit join the last one."""
    kept = pieces[: limit - 1]
    rest = list(dict.fromkeys(word for piece in pieces[limit - 1 :] for word in piece))
    return [" ".join(piece) for piece in [*kept, rest] if piece]


def _unanswered_parts(question: str, passages: Sequence[OfflinePassage]) -> list[Part]:
    pages = _page_stems(passages)
    return [
        part
        for part in parts(question)
        if max((len(part.stems & page) for page in pages), default=0) / len(part.stems)
        < GATEKEEPER_MIN_COVERAGE
    ]


def _page_stems(passages: Sequence[OfflinePassage]) -> list[set[str]]:
    """The word stems of each page of the passages (a page label starts a page; a passage
    without labels is one page), headings included."""
    pages: dict[tuple[int, tuple[str, ...]], set[str]] = {}
    for index, passage in enumerate(passages):
        for unit in parse(passage.text):
            page = pages.setdefault((index, unit.labels), set())
            page |= unit.stems | unit.context_stems
    return list(pages.values())


def _uncovered(important: list[str], passages: Sequence[OfflinePassage]) -> list[str]:
    """The words no page holds (in its text or its headings; code is not read)."""
    present = set().union(*_page_stems(passages))
    return [word for word in important if stem(word) not in present]


def read_page(request: LLMRequest) -> dict[str, Any]:
    """The page answers when it holds at least half of the question's content words (and at
    least two of them), and the sentences chosen from it (at most 3, without citations) hold at
    least half of them too: the answer is on the page, not scattered over it. A page that
    carries its meaning (a corpus with page vectors) must also bear on the question by it
    (`page_bears`), and its sentences are chosen by meaning too."""
    question = request.facts["question"]
    page = passages_from_facts([request.facts["page"]])
    important = content_words(question)
    if not important:
        return {"found": False, "answer": ""}
    # what the question asks of each code it names, said in one unit of the page: the page's
    # vector cannot tell codes apart, so the unit's own words or meaning decide
    named = answering_units(question, page)
    if named:
        codes = {name for name in names(question) if is_code(name)}
        said = [for_codes(unit.fields, codes) or unit.text for unit in named]
        return {"found": True, "answer": " ".join(said)}
    if not page_bears(page[0]) or not _holds_enough(important, page[0]):
        return {"found": False, "answer": ""}
    chosen = select(question, page, per_guaranteed=0, limit=PAGE_SENTENCES)
    wanted = {stem(word) for word in important}
    if chosen.empty or len(chosen.covered & wanted) / len(wanted) < READ_PAGE_MIN_COVERAGE:
        return {"found": False, "answer": ""}
    return {"found": True, "answer": chosen.text(cite=False)}


def _holds_enough(important: list[str], page: OfflinePassage) -> bool:
    present = set().union(*_page_stems([page]))
    held = sum(1 for word in important if stem(word) in present)
    return held / len(important) >= READ_PAGE_MIN_COVERAGE and held >= min(2, len(important))


# --- writing answers ---------------------------------------------------------------------------


def compose(request: LLMRequest) -> str:
    """The page answers (guaranteed context: the pages were read) give their best two units
    each; pages handed over unread (plain context) compete like an answer's context. Each line
    is cited by the numbers of the answers it came from, `[n]`, as in `answer`: Prompts.compose
    turns them into runner's citations and keeps the answers cited as the supplement's
    sources."""
    answers = passages_from_facts(request.facts["answers"])
    question = request.facts["question"]
    chosen = select(
        question, answers, per_guaranteed=PAGE_ANSWER_UNITS, limit=COMPOSE_UNITS, exclude=question
    )
    return NOT_FOUND if chosen.empty else chosen.text(cite=True)


def answer(request: LLMRequest) -> str:
    """The guaranteed passages' units, then the context's best (a comparison when the context
    is two or more records and nothing is guaranteed). Each line is cited by the numbers of
    the passages it came from, `[n]`, which Prompts.answer turns into runner's citations."""
    facts = request.facts
    guaranteed = [
        _as_guaranteed(p)
        for p in passages_from_facts(facts["guaranteed"])
        if not _says_not_found(p)
    ]
    context = passages_from_facts(facts["context"])
    if not guaranteed and _records(context):
        return compare_records(facts["question"], context)
    chosen = select(
        facts["question"],
        [*guaranteed, *context],
        per_guaranteed=GUARANTEED_UNITS,
        limit=ANSWER_UNITS,
        exclude=facts["question"],  # never the question itself, quoted back from a page
    )
    return not_found(context) if chosen.empty else chosen.text(cite=True)


def not_found(context: Sequence[OfflinePassage]) -> str:
    """Our "does not answer", naming the closest sections (the context's, in its search's
    order) by document and heading, so that a reader knows where to look: never a quote from
    a page that does not answer."""
    sections: list[str] = []
    for passage in sorted(context, key=lambda passage: passage.search_rank):
        for source in passage.sources:
            document, heading = source.get("document"), source.get("title") or ""
            heading = source.get("heading") or heading
            named = f"“{heading}” in {document}" if heading else str(document or "")
            if named and named not in sections:
                sections.append(named)
    if not sections:
        return NOT_FOUND
    return f"{NOT_FOUND} The closest sections: {'; '.join(sections[:CLOSEST_SECTIONS])}."


def tool(request: LLMRequest) -> str:
    """A prompt tool: the best units of its context for the task (a comparison when the context
    is two or more records). Without context it has nothing to answer from but the tool's own
    prompt, which is instructions for a model, never an answer: NoModelError, and the tool
    answers with its `offline` reply or says it needs a model (runner.tools.prompt)."""
    facts = request.facts
    question = str(facts.get("task") or request.subject or facts.get("text") or "")
    context = passages_from_facts(facts.get("context") or ())
    if not context:
        raise NoModelError(f"tool {request.tool!r} has no context to answer from offline")
    if _records(context):
        return compare_records(question, context)
    chosen = select(question, context, per_guaranteed=GUARANTEED_UNITS, limit=ANSWER_UNITS)
    return not_found(context) if chosen.empty else chosen.text(cite=True)


def _records(context: Sequence[OfflinePassage]) -> bool:
    """Two or more records and nothing else: lookup rows to compare."""
    units = [unit for passage in context for unit in parse(passage.text)]
    return len(units) >= 2 and all(unit.kind == RECORD for unit in units)


def compare_records(question: str, context: Sequence[OfflinePassage]) -> str:
    records = [
        Record(
            unit.fields, cited_by(passage, unit.labels, source_labels(passage.sources[i : i + 1]))
        )
        for passage in context
        for i, unit in enumerate(parse(passage.text))
    ]
    return comparison(records, {stem(word) for word in content_words(question)})


def _says_not_found(passage: OfflinePassage) -> bool:
    """Our own "does not answer" (a compose that found nothing): not an answer to quote."""
    return passage.text.strip().startswith(NOT_FOUND)


def _as_guaranteed(passage: OfflinePassage) -> OfflinePassage:
    return replace(passage, guaranteed=True)


def rewrite(_request: LLMRequest) -> str:
    """No restatement: the offline provider has no words of its own to put in place of the
    user's, so a search asked to rewrite runs on the question as asked."""
    return ""


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
    Purpose.REWRITE: rewrite,
}
