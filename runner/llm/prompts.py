"""One async method per LLM purpose: render the purpose's template, ask the client with the
reply schema, return parsed data.

Template order: the `template` argument (a tool's or the answer's own), then the pipeline's
`llm.templates.<purpose>`, then runner's default `templates/<purpose>.j2`. A request's `facts`
are exactly the variables the template was rendered with (runner/llm/purposes.py lists them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from runner.config.model import Pipeline, PromptType, TemplateRef, ToolConfig
from runner.llm import fitting
from runner.llm.bound import answer_written
from runner.llm.passages import (
    Answer,
    BufferEntries,
    BufferEntry,
    Passage,
    cited_answer,
    drawn_on,
    numbered_json,
    pages_of,
    passages_from_buffer,
    passages_json,
)
from runner.llm.prompt_templates import PromptTemplateError, PromptTemplates, default_template
from runner.llm.purposes import PURPOSE_VARIABLES
from runner.llm.settings import model_settings
from runner.llm.structured import lenient_schema
from runner.llm.types import LLMClient, LLMRequest, Purpose

__all__ = [
    "Answer",
    "BufferEntries",
    "BufferEntry",
    "Passage",
    "PromptTemplateError",
    "Prompts",
    "cited_answer",
    "default_template",
    "numbered_json",
    "pages_of",
    "passages_from_buffer",
    "passages_json",
]


_GATEKEEPER_SCHEMA = {
    "type": "object",
    "properties": {"enough": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["enough"],
}
_READ_PAGE_SCHEMA = {
    "type": "object",
    "properties": {"found": {"type": "boolean"}, "answer": {"type": "string"}},
    "required": ["found"],
}


_REWRITE_WORDS = 40  # a restatement longer than this is a model rambling: cut
_REWRITES_KEPT = 512


class Prompts:
    def __init__(self, client: LLMClient, pipeline: Pipeline | None = None) -> None:
        self.client = client
        self.pipeline = pipeline
        self.templates = PromptTemplates(pipeline)
        self._rewrites: dict[tuple[str, str], str] = {}

    def bound_to(self, client: LLMClient) -> Prompts:
        """These prompts asking `client` (a round's `TaskClient`: runner.llm.bound); the
        templates and the rewrites already made are shared."""
        view = Prompts.__new__(Prompts)
        view.__dict__.update(self.__dict__)
        view.client = client
        return view

    # --- classification ---------------------------------------------------------------------

    async def prompt_type(self, text: str, types: Sequence[PromptType]) -> str:
        """The pipeline's default type is listed first: it is the answer when nothing fits."""
        ordered = self._default_first(types)
        names = [entry.name for entry in ordered]
        facts = {
            "text": text,
            "types": [
                {"name": t.name, "description": t.description, "keywords": list(t.keywords)}
                for t in ordered
            ],
        }
        schema = {
            "type": "object",
            "properties": {"type": {"enum": names}},
            "required": ["type"],
        }
        data = await self._ask(Purpose.PROMPT_TYPE, facts, subject=text, schema=schema)
        return str(data["type"])

    def _default_first(self, types: Sequence[PromptType]) -> list[PromptType]:
        default = self.pipeline.prompt_types.default if self.pipeline else None
        return sorted(types, key=lambda entry: entry.name != default)

    async def suitability(self, text: str, tools: Sequence[ToolConfig]) -> dict[str, bool]:
        """One call for every candidate tool of a task; no call when there is none."""
        if not tools:
            return {}
        facts = {"text": text, "tools": [_tool_facts(tool) for tool in tools]}
        names = [tool.name for tool in tools]
        schema = {
            "type": "object",
            "properties": {name: {"type": "boolean"} for name in names},
            "required": names,
        }
        data = await self._ask(Purpose.SUITABILITY, facts, subject=text, schema=schema)
        return {name: bool(data[name]) for name in names}

    # --- extraction ---------------------------------------------------------------------------

    async def extract(
        self,
        purpose: Purpose,
        text: str,
        schema: Mapping[str, Any],
        *,
        tool: str,
        instruction: str = "",
        template: TemplateRef | None = None,
        on_dropped: Callable[[str], None] | None = None,
    ) -> dict[str, Any]:
        """Parameters from the text. A parameter the text does not give is left out (never
        invented): the reply is checked against the schema with `null` allowed for every field
        and the top-level `required` dropped — missing values are what clarification (C24) and
        `relevant_if` are for. A value the model gave that the text does not (runner.llm.
        grounding) is left out too, and `on_dropped` told why, for the round's trace — in a
        decomposition (purpose `decompose`, a coordinator's plan) only in the fields its schema
        marks `user_given: true`."""
        if purpose not in (Purpose.DECOMPOSE, Purpose.EXTRACT):
            raise ValueError(f"extract() serves decompose and extract, not {purpose.value}")
        # the tables' values (runner.tables, about 3 ms to import) and the checks of a reply
        # only for an extraction: a round that extracts nothing, as a retrieval round, never
        # loads them
        from runner.llm.grounding import grounded, unmarked
        from runner.llm.known_values import known_and_named, table_key

        shown = unmarked(schema)  # runner's `user_given` marks are not the model's business
        known, named = known_and_named(self.pipeline, text)
        facts = {
            "text": text,
            "schema": shown,
            "tool": tool,
            "instruction": instruction,
            "known_values": known,
            "named_values": named,
        }
        data = await self._ask(
            purpose,
            facts,
            subject=text,
            schema=lenient_schema(shown),
            tool=tool,
            template=template,
        )
        given = {key: value for key, value in data.items() if value is not None}
        # a decomposition is the coordinator's own plan: only its `user_given` fields are checked
        kept, dropped = grounded(
            given,
            text,
            schema,
            lambda v: table_key(self.pipeline, v),
            plan=purpose is Purpose.DECOMPOSE,
        )
        if on_dropped is not None:
            for value in dropped:
                on_dropped(value.message(tool))
        return kept

    def known_values(self, text: str = "") -> dict[str, list[str]]:
        """The tables' values to list for this text (all of a short table's; see known_values)."""
        from runner.llm.known_values import known_values  # as extract's

        return known_values(self.pipeline, text)

    # --- tools ----------------------------------------------------------------------------------

    async def tool(
        self,
        render: Callable[[Mapping[str, Any]], str],
        facts: Mapping[str, Any],
        context: Sequence[Passage] = (),
        *,
        tool: str,
        subject: str,
        final: bool = False,
    ) -> Answer:
        """A prompt tool's call: its own template (`render`, given the template's variables),
        the variables but `context` (`facts`), and the buffer's passages, of which those that
        fit the context window become the template's `context` — cut by relevance to `subject`,
        as every purpose's passages are. `render` may be called several times; its last call
        renders the prompt sent. The reply's `used` are the pages it cites, or all the passages
        the prompt was given when it cites none (`drawn_on`).
        `final`: the reply is the round's terminal answer, streamed to a watching face."""
        kept, cut = await self._fit(
            Purpose.TOOL,
            {"context": context},
            lambda groups: render({**facts, "context": passages_json(groups["context"])}),
            question=subject,
        )
        sent = {**facts, "context": passages_json(kept["context"])}
        request = LLMRequest(
            Purpose.TOOL,
            render(sent),
            subject=subject,
            tool=tool,
            facts=sent,
            cut=cut,
            streams=final,
        )
        with answer_written(self.client) as client:
            reply = await client.complete(request)
        text = reply.text.strip()
        return Answer(text, drawn_on(text, kept["context"]))

    # --- deep search ----------------------------------------------------------------------------

    async def gatekeeper(
        self, question: str, passages: Sequence[Passage], template: TemplateRef | None = None
    ) -> tuple[bool, str]:
        kept, cut = await self._fit(
            Purpose.GATEKEEPER,
            {"passages": passages},
            self._renderer(
                Purpose.GATEKEEPER,
                lambda g: {"question": question, "passages": passages_json(g["passages"])},
                template,
            ),
            question=question,
        )
        facts = {"question": question, "passages": passages_json(kept["passages"])}
        data = await self._ask(
            Purpose.GATEKEEPER,
            facts,
            subject=question,
            schema=_GATEKEEPER_SCHEMA,
            template=template,
            cut=cut,
        )
        return bool(data["enough"]), str(data.get("reason", ""))

    async def missing_info(
        self,
        question: str,
        passages: Sequence[Passage],
        max_missing: int,
        template: TemplateRef | None = None,
    ) -> list[str]:

        def facts_of(groups: Mapping[str, Sequence[Passage]]) -> dict[str, Any]:
            return {
                "question": question,
                "passages": passages_json(groups["passages"]),
                "max_missing": max_missing,
            }

        kept, cut = await self._fit(
            Purpose.MISSING_INFO,
            {"passages": passages},
            self._renderer(Purpose.MISSING_INFO, facts_of, template),
            question=question,
        )
        facts = facts_of(kept)
        schema = {
            "type": "object",
            "properties": {
                "missing": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1},
                    "maxItems": max_missing,
                }
            },
            "required": ["missing"],
        }
        data = await self._ask(
            Purpose.MISSING_INFO, facts, subject=question, schema=schema, template=template, cut=cut
        )
        return [str(item).strip() for item in data["missing"] if str(item).strip()]

    async def read_page(
        self, question: str, page: Passage, *, tool: str, template: TemplateRef | None = None
    ) -> str | None:
        """The page's answer to the question, or None when the page does not answer it."""
        kept, cut = await self._fit(
            Purpose.READ_PAGE,
            {"page": [page]},
            self._renderer(
                Purpose.READ_PAGE,
                lambda g: {"question": question, "page": g["page"][0].to_json()},
                template,
            ),
            question=question,
        )
        facts = {"question": question, "page": kept["page"][0].to_json()}
        data = await self._ask(
            Purpose.READ_PAGE,
            facts,
            subject=question,
            schema=_READ_PAGE_SCHEMA,
            tool=tool,
            template=template,
            cut=cut,
        )
        answer = str(data.get("answer") or "").strip()
        return answer if data["found"] and answer else None

    async def rewrite(self, question: str, *, corpus: str, tool: str) -> str | None:
        """The question restated in the documents' words (purpose `rewrite`), asked once per
        question and corpus while runner runs; None without a real model (the offline provider
        has no words of its own to offer) or when the reply is empty."""
        if self.pipeline is not None and self.pipeline.llm.provider == "offline":
            return None
        key = (question, corpus)
        if key not in self._rewrites:
            facts = {"question": question, "corpus": corpus}
            reply = await self._ask(Purpose.REWRITE, facts, subject=question, tool=tool)
            if len(self._rewrites) >= _REWRITES_KEPT:
                self._rewrites.pop(next(iter(self._rewrites)))
            self._rewrites[key] = _restatement(str(reply))
        return self._rewrites[key] or None

    async def compose(
        self,
        question: str,
        answers: Sequence[Passage],
        *,
        tool: str,
        template: TemplateRef | None = None,
    ) -> Answer:
        """One answer from the answers a deep search's subtasks found (C32) and the answers it
        drew on (C33). As in `answer`, the template sees them numbered — a result of several
        pages as one passage per page — and the reply's `[n]` markers become runner's
        citations; see `cited_answer`."""
        pages = [page for passage in answers for page in pages_of(passage)]
        kept, cut = await self._fit(
            Purpose.COMPOSE,
            {"answers": pages},
            self._renderer(
                Purpose.COMPOSE,
                lambda g: {"question": question, "answers": numbered_json(g["answers"], first=1)},
                template,
            ),
            question=question,
        )
        shown = kept["answers"]
        facts = {"question": question, "answers": numbered_json(shown, first=1)}
        reply = await self._ask(
            Purpose.COMPOSE, facts, subject=question, tool=tool, template=template, cut=cut
        )
        return cited_answer(reply, shown)

    async def answer(
        self,
        question: str,
        guaranteed: Sequence[Passage],
        context: Sequence[Passage],
        template: TemplateRef | None = None,
    ) -> Answer:
        """The final answer (C33) and the passages it drew on. The template sees the passages
        numbered — guaranteed first, then context, a result of several retrieved pages as one
        passage per page — and the reply's `[n]` markers become runner's citations; see
        `cited_answer`."""

        def facts_of(groups: Mapping[str, Sequence[Passage]]) -> dict[str, Any]:
            first = groups["guaranteed"]
            return {
                "question": question,
                "guaranteed": numbered_json(first, first=1),
                "context": numbered_json(groups["context"], first=len(first) + 1),
            }

        kept, cut = await self._fit(
            Purpose.ANSWER,
            {
                "guaranteed": [page for passage in guaranteed for page in pages_of(passage)],
                "context": [page for passage in context for page in pages_of(passage)],
            },
            self._renderer(Purpose.ANSWER, facts_of, template),
            question=question,
        )
        numbered = [*kept["guaranteed"], *kept["context"]]
        with answer_written(self.client, lambda text: cited_answer(text, numbered).text) as client:
            reply = await self._ask(
                Purpose.ANSWER,
                facts_of(kept),
                subject=question,
                template=template,
                cut=cut,
                streams=True,
                client=client,
            )
        return cited_answer(reply, numbered)

    # --- the common path ------------------------------------------------------------------------

    async def _ask(
        self,
        purpose: Purpose,
        facts: dict[str, Any],
        *,
        subject: str,
        schema: Mapping[str, Any] | None = None,
        tool: str | None = None,
        template: TemplateRef | None = None,
        cut: Mapping[str, Any] | None = None,
        streams: bool = False,
        client: LLMClient | None = None,
    ) -> Any:
        """The purpose's reply (its data, with a schema), asked of `client` (else of these
        prompts' client)."""
        assert set(facts) == PURPOSE_VARIABLES[purpose], "facts must be the template variables"
        prompt = self.templates.render(purpose, facts, template)
        request = LLMRequest(
            purpose,
            prompt,
            subject=subject,
            tool=tool,
            schema=schema,
            facts=facts,
            cut=cut,
            streams=streams,
        )
        reply = await (client or self.client).complete(request)
        return reply.data if schema is not None else reply.text.strip()

    async def _fit(
        self,
        purpose: Purpose,
        groups: Mapping[str, Sequence[Passage]],
        render: Callable[[Mapping[str, Sequence[Passage]]], str],
        *,
        question: str,
    ) -> tuple[dict[str, list[Passage]], dict[str, int] | None]:
        """The passages that fit the purpose's context window (runner.llm.fitting), and the
        cut when there was one. `render` makes the prompt of a choice of the passages."""
        window_of = getattr(self.client, "context_window", None)
        window = await window_of(purpose) if window_of is not None else None
        config = getattr(self.client, "config", None) or (self.pipeline and self.pipeline.llm)
        reply_tokens = (model_settings(config, purpose).max_tokens or 0) if config else 0
        kept, cut = fitting.fit(
            render,
            groups,
            question=question,
            window=window,
            reply_tokens=reply_tokens,
            what=purpose.value,
        )
        return kept, cut.to_json() if cut is not None else None

    def _renderer(
        self,
        purpose: Purpose,
        facts_of: Callable[[Mapping[str, Sequence[Passage]]], dict[str, Any]],
        template: TemplateRef | None,
    ) -> Callable[[Mapping[str, Sequence[Passage]]], str]:
        """The purpose's prompt of a choice of passages (`facts_of` makes the variables)."""
        return lambda groups: self.templates.render(purpose, facts_of(groups), template)


def _restatement(reply: str) -> str:
    """A rewrite's reply as search words: its first non-empty line, unquoted, not too long."""
    line = next((line.strip() for line in reply.splitlines() if line.strip()), "")
    line = line.strip("\"'` ")
    return " ".join(line.split()[:_REWRITE_WORDS])


def _tool_facts(tool: ToolConfig) -> dict[str, Any]:
    return {
        "name": tool.name,
        "instruction": tool.instruction or tool.description,
        "description": tool.description,
        "examples": list(tool.examples),
        "keywords": list(tool.activation.keywords),
    }
