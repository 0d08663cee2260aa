"""The `neighbor_search` kind: the cheap half of a deep-search pair (C29).

A context consumer (C20c). It looks at the pages the source tool (`source_tool`, default the
domain's `retrieval_tool`) put into this round's context buffer — their ids are in the results'
`data["pages"]` — and takes the pages up to `window` before and after each of them, inside the
same document (neighbours stop at a document's edge), leaving out pages already in the context.
No search runs.

When a coordinator asked (C22), the neighbour pages are read with the LLM (purpose
`read_page`, concurrently) and the pages' answers come back as guaranteed context (C23), or an
empty context when none answers — which makes the paired `.s` full search run (C29). We read
with the LLM rather than check words, because "this page answers the question" is a judgment a
word overlap cannot make; the cost stays small: at most 2 × window calls per page in context.
On the normal branch the neighbour pages come back as plain context, with no LLM call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from runner.config.model import (
    NeighborSearchOptions,
    RetrieveOptions,
    SearchOptions,
    ToolConfig,
)
from runner.engine.protocols import PriorContext
from runner.engine.results import ToolResult
from runner.retrieval.reading import answers_context, pages_context, read_pages, unique_pages
from runner.tools.base import (
    BuiltinTool,
    Call,
    ConsumingTool,
    ToolBuildError,
    consumer_variant,
    finish,
    place,
)
from runner.tools.meaning import page_meaning
from runner.tools.retrieve import corpus_for, record_retrieval, with_pages
from runner.tools.search import answering_config

if TYPE_CHECKING:
    from runner.retrieval.pages import Page
    from runner.tools.services import ToolServices


def source_page_ids(prior: PriorContext, source_tool: str) -> list[str]:
    """The page ids the source tool's results carry, in buffer order, without repeats."""
    ids: list[str] = []
    for key, results in prior.items():
        if key.rpartition(":")[2] != source_tool:  # completion key "<task_no>:<tool>"
            continue
        for result in results:
            ids.extend(str(page) for page in result.data.get("pages", ()))
    return list(dict.fromkeys(ids))


class NeighborSearchTool(BuiltinTool):
    def __init__(self, config: ToolConfig, services: ToolServices) -> None:
        super().__init__(config, services)
        assert isinstance(config.options, NeighborSearchOptions)
        self.options = config.options
        self.source_tool = self._source_tool(services)
        self.index = corpus_for(config, services, self.options.corpus)
        self.answering = answering_config(config)

    def _source_tool(self, services: ToolServices) -> str:
        name = self.options.source_tool or services.pipeline.retrieval_tool
        source = services.pipeline.find_tool(name) if name else None
        if source is None:
            raise ToolBuildError(
                f"{place(self.config)}: it needs the tool whose pages it looks around: set "
                "`source_tool:` or the pipeline's `retrieval_tool:`"
                + (f" (no tool is named {name!r})" if name else "")
            )
        options = source.options
        if isinstance(options, (RetrieveOptions, SearchOptions)) and (
            options.corpus != self.options.corpus
        ):
            raise ToolBuildError(
                f"{place(self.config)}: its corpus {self.options.corpus!r} is not the corpus "
                f"of its source tool {source.name!r} ({options.corpus!r}); neighbours are "
                "pages of the same corpus: fix `corpus:` or `source_tool:`"
            )
        return source.name

    def neighbor_pages(self, prior: PriorContext) -> list[Page]:
        """The pages around the source tool's pages, in the order those were found."""
        seen = source_page_ids(prior, self.source_tool)
        around = [
            page for node_id in seen for page in self.index.neighbors(node_id, self.options.window)
        ]
        already = set(seen)
        return [page for page in unique_pages(around) if page.node_id not in already]

    async def run(self, call: Call) -> ToolResult:
        pages = self.neighbor_pages(call.prior or {})
        record_retrieval(call.env, self.name, self.options.corpus, call.directive, pages)
        if not call.env.coordinator_requested:
            result = finish(self.config, call.env, pages_context(pages), [p.source for p in pages])
            return with_pages(result, pages)
        answers = await read_pages(
            call.env.prompts,
            call.directive,
            pages,
            tool=self.name,
            meaning=page_meaning(self.index, call.directive),  # C29: what bears on the question
        )
        found = [answer.page for answer in answers]
        if not answers:
            return with_pages(ToolResult.context(""), [], read=len(pages))
        result = finish(
            self.answering, call.env, answers_context(answers), [p.source for p in found]
        )
        return with_pages(result, found, read=len(pages))


def build(config: ToolConfig, services: ToolServices) -> ConsumingTool:
    # always a consumer: it reads the buffer whatever `consumes_context` says (C20c)
    return consumer_variant(NeighborSearchTool)(config, services)
