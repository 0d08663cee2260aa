"""One async method per LLM purpose: render the purpose's template, ask the client with the
reply schema, return parsed data.

Template order: the `template` argument (a tool's or the answer's own), then the pipeline's
`llm.templates.<purpose>`, then runner's default `templates/<purpose>.j2`. A request's `facts`
are exactly the variables the template was rendered with (runner/llm/purposes.py lists them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from jinja2 import TemplateError

from runner import templates
from runner.config.model import Pipeline, PromptType, TemplateRef, ToolConfig
from runner.llm.errors import LLMConfigError
from runner.llm.known_values import known_values
from runner.llm.providers.extractive import source_labels
from runner.llm.providers.offline_units import (
    CITATION,
    PAGE_LABEL,
    citation_labels,
    citation_text,
)
from runner.llm.purposes import PURPOSE_VARIABLES
from runner.llm.types import LLMClient, LLMRequest, Purpose
from runner.resources import templates_dir
from runner.sources import Source


@dataclass(frozen=True)
class Passage:
    """A piece of context handed to a prompt: its text, where it came from, the completion key
    of the tool result it belongs to, and whether it is guaranteed context (C23)."""

    text: str
    sources: tuple[Source, ...] = ()
    key: str = ""
    guaranteed: bool = False

    def to_json(self) -> dict[str, Any]:
        """What templates see: every source with all four keys (None when unknown), so that a
        template can write `source.page` without a definedness test."""
        return {
            "text": self.text,
            "sources": [_source_facts(source) for source in self.sources],
            "key": self.key,
            "guaranteed": self.guaranteed,
        }


class BufferEntry(Protocol):
    """What a context-buffer result offers (runner.engine.results.PromptAndContext; the LLM layer
    does not import the engine)."""

    @property
    def context(self) -> str: ...

    @property
    def sources(self) -> tuple[Source, ...]: ...

    @property
    def guaranteed(self) -> bool: ...


class BufferEntries(Protocol):
    """A context buffer or a snapshot of one: completion key → that tool's results, in order."""

    def items(self) -> Iterable[tuple[str, Iterable[BufferEntry]]]: ...


def passages_from_buffer(
    entries: BufferEntries | None, *, guaranteed: bool | None = None
) -> list[Passage]:
    """The buffer's non-empty results as passages, in buffer order. Empty contexts are left
    out: they say only that a tool found nothing. `guaranteed` selects one kind (None: both)."""
    return [
        Passage(result.context, tuple(result.sources), key, result.guaranteed)
        for key, results in (entries.items() if entries is not None else ())
        for result in results
        if result.context.strip() and (guaranteed is None or result.guaranteed is guaranteed)
    ]


def passages_json(passages: Iterable[Passage]) -> list[dict[str, Any]]:
    """Passages as templates see them (`{text, sources, key, guaranteed}`)."""
    return [passage.to_json() for passage in passages]


def _source_facts(source: Source) -> dict[str, Any]:
    return {
        "document": source.document,
        "page": source.page,
        "title": source.title,
        "heading": source.heading,
    }


# --- the final answer and its citations (C33) ------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """The final answer's (or a compose's) text, its citations in runner's format, and the
    passages it drew on, in the order it first cites them (all it was given when it cites
    none)."""

    text: str
    used: tuple[Passage, ...] = ()


def pages_of(passage: Passage) -> list[Passage]:
    """A passage of several labelled pages (each page under `[doc, page N]`, as the retrieval
    tools write them, and each one of the passage's sources) as one passage per page with that
    page's source, so that a citation names the page it drew on. Any other passage stays
    whole."""
    if len(passage.sources) < 2:
        return [passage]
    by_label = {(source.document, source.page): source for source in passage.sources}
    pages: list[tuple[Source, list[str]]] = []
    for line in passage.text.splitlines():
        label = PAGE_LABEL.match(line.strip())
        source = by_label.get((label["document"], int(label["page"]))) if label else None
        if source is not None:
            pages.append((source, [line]))
        elif pages:
            pages[-1][1].append(line)
        elif line.strip():
            return [passage]  # text before the first label: not a list of pages
    if {source for source, _ in pages} != set(passage.sources):
        return [passage]
    return [
        replace(passage, text="\n".join(lines).strip(), sources=(source,))
        for source, lines in pages
    ]


def numbered_json(passages: Sequence[Passage], *, first: int) -> list[dict[str, Any]]:
    """Passages as the answer and compose templates see them: `{text, sources, key, guaranteed,
    number}`; the reply cites a passage by its number, `[n]`."""
    return [
        {**passage.to_json(), "number": number}
        for number, passage in enumerate(passages, start=first)
    ]


# "[2]", "[1, 3]", "[1; 3]" and runs of them ("[1][3]"), with the blanks before them. Not right
# after a word, a bracket or a backtick, nor before a word or "(": "a[1]", "`x[0]`", "[1](url)"
# are code and links, not citations.
_MARKERS = re.compile(r"[ \t]*(?<![\w\])`])((?:\[\s*\d+(?:\s*[,;]\s*\d+)*\s*\])+)(?![\w(])")
_NUMBER = re.compile(r"\d+")


def cited_answer(reply: str, passages: Sequence[Passage]) -> Answer:
    """The reply (the final answer's or a compose's) with each `[n]` marker (n: a passage's
    number, from 1) rewritten as runner's citation of that passage's sources (`[manual.md p. 3]`:
    the offline provider's format, the same for every provider); a marker naming no passage is
    dropped. A citation already written in runner's format counts for the passages whose
    sources it names. The passages used are the cited ones in the order of their first
    citation; a reply citing none drew on them all."""
    cited = _written_citations(reply, passages)

    def rewrite(match: re.Match[str]) -> str:
        numbers = (int(number) for number in _NUMBER.findall(match[1]))
        chosen = [passages[n - 1] for n in numbers if 1 <= n <= len(passages)]
        cited.extend((match.start(1), passage) for passage in chosen)
        citation = citation_text(label for passage in chosen for label in _labels(passage))
        blanks = match[0][: match.start(1) - match.start()]
        return f"{blanks}{citation}" if citation else ""

    text = _MARKERS.sub(rewrite, reply)
    used = [passage for _, passage in sorted(cited, key=lambda found: found[0])]
    return Answer(text, tuple(dict.fromkeys(used)) if used else tuple(passages))


def _written_citations(reply: str, passages: Sequence[Passage]) -> list[tuple[int, Passage]]:
    """Where the reply cites passages in runner's own format (`[manual.md p. 3]`)."""
    found: list[tuple[int, Passage]] = []
    for match in CITATION.finditer(reply):
        labels = set(citation_labels(match["labels"]))
        found.extend((match.start(), p) for p in passages if labels & set(_labels(p)))
    return found


def _labels(passage: Passage) -> tuple[str, ...]:
    return source_labels([_source_facts(source) for source in passage.sources])


class PromptTemplateError(LLMConfigError):
    """A purpose's template failed to render."""


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


class Prompts:
    def __init__(self, client: LLMClient, pipeline: Pipeline | None = None) -> None:
        self.client = client
        self.pipeline = pipeline
        self._sources: dict[Path, str] = {}

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
    ) -> dict[str, Any]:
        """Parameters from the text. A parameter the text does not give is left out (never
        invented): the reply is checked against the schema with `null` allowed for every field
        and the top-level `required` dropped — missing values are what clarification (C24) and
        `relevant_if` are for."""
        if purpose not in (Purpose.DECOMPOSE, Purpose.EXTRACT):
            raise ValueError(f"extract() serves decompose and extract, not {purpose.value}")
        facts = {
            "text": text,
            "schema": dict(schema),
            "tool": tool,
            "instruction": instruction,
            "known_values": self.known_values(text),
        }
        data = await self._ask(
            purpose, facts, subject=text, schema=_lenient(schema), tool=tool, template=template
        )
        return {key: value for key, value in data.items() if value is not None}

    def known_values(self, text: str = "") -> dict[str, list[str]]:
        """The tables' values to list for this text (all of a short table's; see known_values)."""
        return known_values(self.pipeline, text)

    # --- tools ----------------------------------------------------------------------------------

    async def tool(self, prompt: str, *, tool: str, subject: str, facts: Mapping[str, Any]) -> str:
        """A prompt tool's own rendered template; `facts` are the variables it was rendered
        with (what the offline provider reads)."""
        request = LLMRequest(Purpose.TOOL, prompt, subject=subject, tool=tool, facts=dict(facts))
        reply = await self.client.complete(request)
        return reply.text.strip()

    # --- deep search ----------------------------------------------------------------------------

    async def gatekeeper(
        self, question: str, passages: Sequence[Passage], template: TemplateRef | None = None
    ) -> tuple[bool, str]:
        facts = {"question": question, "passages": passages_json(passages)}
        data = await self._ask(
            Purpose.GATEKEEPER,
            facts,
            subject=question,
            schema=_GATEKEEPER_SCHEMA,
            template=template,
        )
        return bool(data["enough"]), str(data.get("reason", ""))

    async def missing_info(
        self,
        question: str,
        passages: Sequence[Passage],
        max_missing: int,
        template: TemplateRef | None = None,
    ) -> list[str]:
        facts = {
            "question": question,
            "passages": passages_json(passages),
            "max_missing": max_missing,
        }
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
            Purpose.MISSING_INFO, facts, subject=question, schema=schema, template=template
        )
        return [str(item).strip() for item in data["missing"] if str(item).strip()]

    async def read_page(
        self, question: str, page: Passage, *, tool: str, template: TemplateRef | None = None
    ) -> str | None:
        """The page's answer to the question, or None when the page does not answer it."""
        facts = {"question": question, "page": page.to_json()}
        data = await self._ask(
            Purpose.READ_PAGE,
            facts,
            subject=question,
            schema=_READ_PAGE_SCHEMA,
            tool=tool,
            template=template,
        )
        answer = str(data.get("answer") or "").strip()
        return answer if data["found"] and answer else None

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
        shown = [page for passage in answers for page in pages_of(passage)]
        facts = {"question": question, "answers": numbered_json(shown, first=1)}
        reply = await self._ask(
            Purpose.COMPOSE, facts, subject=question, tool=tool, template=template
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
        shown_guaranteed = [page for passage in guaranteed for page in pages_of(passage)]
        shown_context = [page for passage in context for page in pages_of(passage)]
        facts = {
            "question": question,
            "guaranteed": numbered_json(shown_guaranteed, first=1),
            "context": numbered_json(shown_context, first=len(shown_guaranteed) + 1),
        }
        reply = await self._ask(Purpose.ANSWER, facts, subject=question, template=template)
        return cited_answer(reply, [*shown_guaranteed, *shown_context])

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
    ) -> Any:
        assert set(facts) == PURPOSE_VARIABLES[purpose], "facts must be the template variables"
        prompt = self.render(purpose, facts, template)
        request = LLMRequest(
            purpose, prompt, subject=subject, tool=tool, schema=schema, facts=facts
        )
        reply = await self.client.complete(request)
        return reply.data if schema is not None else reply.text.strip()

    def render(
        self, purpose: Purpose, variables: Mapping[str, Any], template: TemplateRef | None = None
    ) -> str:
        source, name = self._template(purpose, template)
        try:
            return templates.render(source, variables)
        except TemplateError as error:
            expected = ", ".join(sorted(PURPOSE_VARIABLES[purpose]))
            raise PromptTemplateError(
                f"{name}: the {purpose.value} template failed to render: {error}. "
                f"It receives: {expected}"
            ) from None

    def _template(self, purpose: Purpose, template: TemplateRef | None) -> tuple[str, str]:
        configured = self.pipeline.llm.templates.get(purpose.value) if self.pipeline else None
        chosen = template or configured
        if chosen is not None:
            if chosen.inline is not None:
                return chosen.inline, f"{chosen.where or 'inline template'}"
            assert chosen.path is not None
            return self._read(chosen.path), str(chosen.path)
        path = default_template(purpose)
        return self._read(path), str(path)

    def _read(self, path: Path) -> str:
        if path not in self._sources:
            try:
                self._sources[path] = path.read_text(encoding="utf-8")
            except OSError as error:
                raise PromptTemplateError(f"{path}: cannot read template ({error})") from None
        return self._sources[path]


def default_template(purpose: Purpose) -> Path:
    """runner's own template for a purpose (every purpose but `tool`, which has none)."""
    return templates_dir() / f"{purpose.value}.j2"


def _tool_facts(tool: ToolConfig) -> dict[str, Any]:
    return {
        "name": tool.name,
        "instruction": tool.instruction or tool.description,
        "description": tool.description,
        "examples": list(tool.examples),
        "keywords": list(tool.activation.keywords),
    }


def _lenient(schema: Mapping[str, Any]) -> dict[str, Any]:
    lenient = {key: value for key, value in schema.items() if key != "required"}
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        lenient["properties"] = {
            name: {"anyOf": [field, {"type": "null"}]} for name, field in properties.items()
        }
    return lenient
