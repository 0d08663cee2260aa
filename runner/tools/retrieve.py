"""The `retrieve` kind: the domain's RAG tool. The top-k pages of a corpus for the task's text,
as context, each page cited with its source (C27, C33).

The result's `data` carries the page ids (`pages`) so that a neighbour search can look around
them later in the round, and, when the corpus has page vectors, the retrieval's `evidence`
(runner.tools.evidence) that the gatekeeper reads. No LLM call.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING

from runner.config.model import RetrieveOptions, SearchOptions, ToolConfig
from runner.engine.results import ToolResult
from runner.llm.passages import EVIDENCE, MEANING
from runner.llm.units.meaning import cosines
from runner.retrieval.excerpts import Cosines, excerpts_context
from runner.retrieval.index import SEARCH_MODES
from runner.retrieval.pages import CorpusError, Page
from runner.retrieval.reading import pages_context
from runner.retrieval.seen import EVENT, ranked
from runner.text.questions import asked_parts
from runner.text.words import stems, token_stems
from runner.tools.base import BuiltinTool, Call, ToolBuildError, finish, instantiate, place
from runner.tools.evidence import retrieval_evidence
from runner.tools.meaning import retrieval_meaning

if TYPE_CHECKING:
    from runner.engine.protocols import ToolEnv
    from runner.retrieval.index import CorpusIndex, ScoredPage
    from runner.tools.services import ToolServices


def corpus_for(config: ToolConfig, services: ToolServices, corpus: str) -> CorpusIndex:
    """The loaded index of the tool's corpus (built first when missing or stale)."""
    if corpus not in services.pipeline.corpora:
        known = ", ".join(sorted(services.pipeline.corpora)) or "none"
        raise ToolBuildError(
            f"{place(config)}: corpus {corpus!r} is not defined (corpora: {known}); add it "
            "under `corpora:` or fix `corpus:`"
        )
    if services.corpus is None:
        raise ToolBuildError(
            f"{place(config)}: this runtime gives tools no corpora (ToolServices.corpus is "
            "unset); use runner.retrieval.corpus_loader(pipeline)"
        )
    try:
        return services.corpus(corpus)
    except CorpusError as error:
        raise ToolBuildError(f"{place(config)}: {error}") from None


def check_mode(config: ToolConfig, mode: str) -> None:
    if mode not in SEARCH_MODES:
        raise ToolBuildError(
            f"{place(config)}: unknown mode {mode!r}; use one of {', '.join(SEARCH_MODES)}"
        )


def record_retrieval(
    env: ToolEnv,
    tool: str,
    corpus: str,
    query: str,
    hits: Sequence[ScoredPage | Page],
    searched: Query | None = None,
    parts: Sequence[str] = (),
    evidence: Mapping[str, object] | None = None,
) -> list[dict[str, object]]:
    """The ranked pages a retrieval returned, added to the trace (`retrieval`); also kept in
    the result's data under `retrieved` (runner.retrieval.seen). With `searched`, the event
    also says what was searched when it differs from the query: the LLM's restatement
    (`rewritten`) and the words the corpus's synonyms added (`searched`); with `parts`, the
    parts of the question searched on their own (`by_parts`); with `evidence`, what the
    gatekeeper will weigh (runner.tools.evidence)."""
    pages = ranked(hits)
    extra: dict[str, object] = {EVIDENCE: dict(evidence)} if evidence is not None else {}
    if searched is not None:
        if searched.rewritten:
            extra["rewritten"] = searched.rewritten
        if searched.expanded != query:
            extra["searched"] = searched.expanded
    if parts:
        extra["parts"] = list(parts)
    env.trace(EVENT, tool=tool, corpus=corpus, query=query, pages=pages, **extra)
    return pages


@dataclass(frozen=True)
class Query:
    """What a retrieval searches for a question: the question, the LLM's restatement when the
    tool rewrites (`rewrite: true`), and both with the corpus's synonyms added (`expanded`)."""

    question: str
    rewritten: str | None
    expanded: str

    @property
    def text(self) -> str:
        """The question with its restatement: what the search is given."""
        return f"{self.question} {self.rewritten}" if self.rewritten else self.question


async def search_query(
    call: Call, index: CorpusIndex, options: RetrieveOptions | SearchOptions, tool: str
) -> Query:
    """The query a retrieval tool searches (purpose `rewrite` first, when the tool asks)."""
    question = call.directive
    rewritten = None
    if options.rewrite:
        rewritten = await call.env.prompts.rewrite(question, corpus=options.corpus, tool=tool)
    text = f"{question} {rewritten}" if rewritten else question
    return Query(question, rewritten, index.expanded(text))


def with_pages(result: ToolResult, pages: list[Page], **data: object) -> ToolResult:
    """The result with the page ids it drew on in `data["pages"]` (read by neighbour search)."""
    return replace(result, data={**result.data, "pages": [p.node_id for p in pages], **data})


async def searched(
    index: CorpusIndex, query: str, top_k: int, mode: str, *, sections: bool = True
) -> list[ScoredPage]:
    """The search, in a worker thread, its pages' table pieces with them: a vector or hybrid
    search embeds the question and reranks its candidates with the model (hundreds of
    milliseconds of CPU), which on the event loop would stall every other round a service runs.
    `sections` False: pages in score order."""

    def search() -> list[ScoredPage]:
        return index.with_table_pieces(index.search(query, top_k, mode=mode, sections=sections))

    return await asyncio.to_thread(search)


# a part searched on its own says enough to be searched: "how do I install Apache" does
PART_WORDS = 2
# a part that points back at another ("why does it differ on Windows") does not say on its own
# what it asks about
_POINTS_BACK = re.compile(r"\b(?:it|its|they|them|their|this|that|these|those)\b", re.IGNORECASE)
# a part is served by the whole question's pages when one of them holds this share of its
# content words (the gatekeeper's bar for a part the words answer)
SERVED_SHARE = 0.6


def searched_parts(question: str) -> list[str]:
    """The parts of a question that may be searched on their own: each that asks something of
    its own (`asked_parts`) in at least PART_WORDS content words, pointing back at no other;
    none when fewer than two do."""
    found = [
        part.text
        for part in asked_parts(question)
        if len(part.words) >= PART_WORDS and not _POINTS_BACK.search(part.text)
    ]
    return found if len(found) > 1 else []


def by_parts(
    index: CorpusIndex, query: str, top_k: int, mode: str, sections: bool, parts: Sequence[str]
) -> tuple[list[ScoredPage], list[str]]:
    """The best pages for the query. Of a question of several parts, a part that none of those
    pages serves (none holds SERVED_SHARE of its content words) is searched on its own, and its
    best pages take the places of the whole question's last ones: a fair share of `top_k` each.
    Searched as one text, a question of parts ranks pages for the part whose words weigh most
    ("Is the KW-620 quiet? And what is the descaling interval?" found four descaling pages and
    nothing on the washing machine), and the part left out falls to a deep search; a part the
    pages serve keeps them as they are. The chosen pages come with their table pieces
    (`CorpusIndex.with_table_pieces`). Also returns the parts searched on their own."""
    whole = index.search(query, top_k, mode=mode, sections=sections)
    page_stems = [token_stems(hit.page.text) for hit in whole]
    unserved = [part for part in parts if not _served(stems(part), page_stems)]
    if not unserved or not whole:
        return index.with_table_pieces(whole), []
    share = max(1, top_k // (len(unserved) + 1))
    taken = {hit.page.node_id for hit in whole}
    added: list[ScoredPage] = []
    for part in unserved:
        own = index.search(index.expanded(part), top_k, mode=mode, sections=sections)
        fresh = [hit for hit in own if hit.page.node_id not in taken][:share]
        taken.update(hit.page.node_id for hit in fresh)
        added += fresh
    kept = max(top_k - len(added), 1)
    return index.with_table_pieces((whole[:kept] + added)[:top_k]), unserved


def _served(wanted: set[str], pages: Sequence[set[str]]) -> bool:
    return not wanted or any(len(wanted & held) / len(wanted) >= SERVED_SHARE for held in pages)


class RetrieveTool(BuiltinTool):
    """Top-k pages as context."""

    def __init__(self, config: ToolConfig, services: ToolServices) -> None:
        super().__init__(config, services)
        assert isinstance(config.options, RetrieveOptions)
        self.options = config.options
        check_mode(config, self.options.mode)
        self.index = corpus_for(config, services, self.options.corpus)
        # only a gatekeeper reads the evidence, and only a pipeline with a deep fallback has one
        self.gives_evidence = services.pipeline.deep_fallback is not None

    async def run(self, call: Call) -> ToolResult:
        query = await search_query(call, self.index, self.options, self.name)
        # in a worker thread, as `searched`, and the evidence in the same one (a hop costs
        # the thread's wake and the loop's)
        hits, parts, evidence = await asyncio.to_thread(
            self._search, query.text, searched_parts(call.directive)
        )
        extra = {EVIDENCE: evidence} if evidence is not None else {}
        meaning = retrieval_meaning(self.index, hits, self.options.mode, evidence is not None)
        retrieved = record_retrieval(
            call.env, self.name, self.options.corpus, call.directive, hits, query, parts, **extra
        )
        pages = [hit.page for hit in hits]
        text = await self.context_text(pages, query, meaning)
        result = finish(self.config, call.env, text, [p.source for p in pages])
        return with_pages(
            result,
            pages,
            scores=[round(hit.score, 4) for hit in hits],
            retrieved=retrieved,
            **extra,
            **({MEANING: meaning} if meaning is not None else {}),
        )

    def _search(
        self, query: str, parts: Sequence[str]
    ) -> tuple[list[ScoredPage], list[str], dict[str, object] | None]:
        """The pages (a part they leave out searched too: `by_parts`), the parts searched on
        their own, and the gatekeeper's evidence of those pages, in their order (None without
        a gatekeeper)."""
        # excerpts keep only what of each page bears, so a long section's further pages need
        # not make room for other sections (the whole-page default)
        options = self.options
        hits, unserved = by_parts(
            self.index, query, options.top_k, options.mode, not options.excerpts, parts
        )
        evidence = None
        if self.gives_evidence:
            evidence = retrieval_evidence(self.index, query, options.top_k, hits, options.mode)
        return hits, unserved, evidence

    async def context_text(
        self, pages: list[Page], query: Query, meaning: Mapping[str, object] | None
    ) -> str:
        """The pages as context: whole, or with `excerpts: true` cut to the units that bear on
        the task's text (the subtask's own part), read by meaning too when the search was (in a
        worker thread: embedding the units takes the model's CPU time)."""
        if not self.options.excerpts or not pages:
            return pages_context(pages)
        cosines = meaning_cosines(meaning)
        task = query.expanded  # the task's text, its restatement, the corpus's synonyms
        if cosines is None:
            return excerpts_context(pages, task, page_block)
        return await asyncio.to_thread(excerpts_context, pages, task, page_block, cosines=cosines)


def page_block(page: Page) -> str:
    return pages_context([page])


def meaning_cosines(meaning: Mapping[str, object] | None) -> Cosines | None:
    """How excerpts score units by meaning: by the model that embedded the pages, when the
    search was by meaning (`first` names the page it ranked first; a keyword search's meaning,
    given for the gatekeeper, has none)."""
    if meaning is None or meaning.get("first") is None:
        return None
    model = (str(meaning["model"]), str(meaning.get("precision") or "float32"))
    return partial(cosines, model)


def build(config: ToolConfig, services: ToolServices) -> RetrieveTool:
    return instantiate(RetrieveTool, config, services)
