"""The `search` kind: the deep-search tool that answers a subtask's question from a corpus
(C30–C32).

On the normal branch (a search tool is usually `activation: coordinator_only`, C30, so this is
rare) it behaves like `retrieve`: the top pages as context.

When a coordinator asked (C22), it answers instead of handing over pages (C32):
1. candidates: the pages the search finds — in keyword mode every page that shares a term with
   the question (BM25 score above zero); in vector / hybrid mode the top_k the retriever returns;
2. `max_brute_force_page_count` set (C31) and more candidates than that: no page is read with
   the LLM; the top_k pages come back as plain context;
3. otherwise the top_k candidates are read with the LLM (purpose `read_page`), concurrently;
   with no candidate at all and `max_brute_force_page_count` unset, every page of the corpus is
   read (the full scan; never when the limit is set);
4. the pages' answers come back as guaranteed context (C23) with their sources, or an empty
   context when no page answers: "not found", which a conditional `.s` decision reads (C29).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from runner.config.model import Output, SearchOptions, ToolConfig
from runner.engine.results import ToolResult
from runner.llm.passages import MEANING
from runner.retrieval.reading import answers_context, pages_context, read_pages
from runner.tools.base import BuiltinTool, Call, finish, instantiate
from runner.tools.meaning import page_meaning, retrieval_meaning
from runner.tools.retrieve import (
    check_mode,
    corpus_for,
    record_retrieval,
    search_query,
    searched,
    with_pages,
)

if TYPE_CHECKING:
    from runner.retrieval.pages import Page
    from runner.tools.services import ToolServices


def answering_config(config: ToolConfig) -> ToolConfig:
    """C32: a coordinator-requested answer is guaranteed context unless the tool's
    `coordinator_output` says otherwise."""
    return replace(config, coordinator_output=config.coordinator_output or Output.GUARANTEED)


class SearchTool(BuiltinTool):
    def __init__(self, config: ToolConfig, services: ToolServices) -> None:
        super().__init__(config, services)
        assert isinstance(config.options, SearchOptions)
        self.options = config.options
        check_mode(config, self.options.mode)
        self.index = corpus_for(config, services, self.options.corpus)
        self.answering = answering_config(config)

    async def run(self, call: Call) -> ToolResult:
        question = call.directive
        query = await search_query(call, self.index, self.options, self.name)
        hits = await searched(self.index, query.text, self.options.top_k, self.options.mode)
        record_retrieval(call.env, self.name, self.options.corpus, question, hits, query)
        top = [hit.page for hit in hits]
        if not call.env.coordinator_requested:  # the normal branch: pages, like `retrieve`
            result = finish(self.config, call.env, pages_context(top), [p.source for p in top])
            return with_pages(result, top)
        # pages handed over unread are read by meaning as a deep search reads its pages
        # (page_meaning loads the corpus's model for them anyway)
        meaning = retrieval_meaning(self.index, hits, self.options.mode, model_loaded=True)
        return await self._answer(call, question, query.text, top, meaning)

    async def _answer(
        self,
        call: Call,
        question: str,
        searched: str,
        top: list[Page],
        meaning: dict[str, object] | None,
    ) -> ToolResult:
        """C31, C32: the pages' answers as guaranteed context, or empty for "not found"."""
        candidates = self._candidate_count(searched, len(top))
        limit = self.options.max_brute_force_page_count
        if limit is not None and candidates > limit:
            call.env.trace(
                "warning",
                tool=self.name,
                message=(
                    f"{candidates} candidate pages > max_brute_force_page_count {limit}: none "
                    f"read with the LLM; the top {len(top)} returned as plain context (C31)"
                ),
            )
            plain = ToolResult.context(pages_context(top), tuple(p.source for p in top))
            unread = {MEANING: meaning} if meaning is not None else {}
            return with_pages(plain, top, candidates=candidates, read=0, **unread)
        full_scan = not top and limit is None  # C31: only ever without a limit
        to_read = self.index.answer_pages() if full_scan else top
        answers = await read_pages(
            call.env.prompts,
            question,
            to_read,
            tool=self.name,
            template=self.options.read_template,
            meaning=page_meaning(self.index, question),  # C32: what bears on the question
        )
        pages = [found.page for found in answers]
        if answers:
            sources = [page.source for page in pages]
            result = finish(self.answering, call.env, answers_context(answers), sources)
        else:
            result = ToolResult.context("")  # C32: empty means "not found"
        return with_pages(
            result, pages, candidates=candidates, read=len(to_read), full_scan=full_scan
        )

    def _candidate_count(self, question: str, returned: int) -> int:
        if self.options.mode == "keyword":
            return self.index.match_count(question)
        return returned  # a vector search scores every page: its candidates are what it returns


def build(config: ToolConfig, services: ToolServices) -> SearchTool:
    return instantiate(SearchTool, config, services)
