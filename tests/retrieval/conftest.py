"""Helpers for the retrieval tests: a pipeline over a copy of a small test corpus, the tools
built with a real corpus loader, and a recording stand-in for the LLM layer's `Prompts`."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from envkit import task_env

from runner.config.model import (
    Activation,
    ActivationMode,
    Corpus,
    DeepSearchOptions,
    NeighborSearchOptions,
    Pipeline,
    RetrieveOptions,
    SearchOptions,
    ToolConfig,
    ToolKind,
)
from runner.engine.protocols import PriorContext
from runner.engine.task import Task
from runner.llm.prompts import Answer, Passage
from runner.llm.types import Purpose
from runner.retrieval import corpus_loader
from runner.tools import ToolServices, build_tools

CORPORA = Path(__file__).parent / "corpora"


def folder_pipeline(tmp_path: Path, folder: Path, **options: Any) -> Pipeline:
    """A pipeline with one corpus `docs` over `folder` (Corpus options as keywords), its state
    in tmp_path/state."""
    corpus = Corpus("docs", folder, **options)
    return Pipeline(
        path=tmp_path / "p.yaml",
        domain="d",
        tools=(),
        corpora={"docs": corpus},
        state_dir=tmp_path / "state",
    )


ReadReply = Callable[[str, Passage], "str | None"]


@dataclass
class FakePrompts:
    """Answers the deep-search purposes from plain Python and records every call."""

    read: ReadReply = lambda question, page: None
    missing: list[str] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)

    async def read_page(
        self, question: str, page: Passage, *, tool: str, template: Any = None
    ) -> str | None:
        self.calls.append(
            {"purpose": Purpose.READ_PAGE, "question": question, "page": page.key, "tool": tool}
        )
        return self.read(question, page)

    async def missing_info(
        self, question: str, passages: Sequence[Passage], max_missing: int, template: Any = None
    ) -> list[str]:
        self.calls.append(
            {"purpose": Purpose.MISSING_INFO, "question": question, "passages": list(passages)}
        )
        return self.missing[:max_missing]

    async def compose(
        self, question: str, answers: Sequence[Passage], *, tool: str, template: Any = None
    ) -> Answer:
        """The answers joined, drawing on all of them (a reply that cites none)."""
        self.calls.append({"purpose": Purpose.COMPOSE, "question": question, "answers": answers})
        return Answer(" + ".join(answer.text for answer in answers), tuple(answers))

    def of(self, purpose: Purpose) -> list[dict[str, Any]]:
        return [call for call in self.calls if call["purpose"] is purpose]


def copy_corpus(tmp_path: Path, name: str = "appliances") -> Path:
    target = tmp_path / "corpus" / name
    shutil.copytree(CORPORA / name, target)
    return target


def corpus_pipeline(tmp_path: Path, *tools: ToolConfig, max_words: int = 60, **settings: Any):
    copy_corpus(tmp_path)
    settings.setdefault(
        "corpora", {"manuals": Corpus("manuals", Path("corpus/appliances"), max_words=max_words)}
    )
    return Pipeline(path=tmp_path / "pipeline.yaml", domain="demo", tools=tools, **settings)


def coordinator_only() -> Activation:
    return Activation(ActivationMode.COORDINATOR_ONLY)


def rag(top_k: int = 2, **fields: Any) -> ToolConfig:
    return ToolConfig(
        "manual_rag", ToolKind.RETRIEVE, options=RetrieveOptions("manuals", top_k), **fields
    )


def search(top_k: int = 3, limit: int | None = None, **fields: Any) -> ToolConfig:
    options = SearchOptions("manuals", top_k=top_k, max_brute_force_page_count=limit)
    return ToolConfig(
        "manual_search", ToolKind.SEARCH, activation=coordinator_only(), options=options, **fields
    )


def neighbors(window: int = 1, source_tool: str | None = None) -> ToolConfig:
    options = NeighborSearchOptions("manuals", window=window, source_tool=source_tool)
    return ToolConfig(
        "manual_neighbors", ToolKind.NEIGHBOR_SEARCH, activation=coordinator_only(), options=options
    )


def deep(neighbor_tool: str | None = "manual_neighbors", max_missing: int = 3) -> ToolConfig:
    options = DeepSearchOptions("manual_search", neighbor_tool, max_missing=max_missing)
    return ToolConfig(
        "deep_search", ToolKind.DEEP_SEARCH, activation=coordinator_only(), options=options
    )


@dataclass
class Harness:
    pipeline: Pipeline
    tools: dict[str, Any]
    prompts: FakePrompts
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def env(self, task: Task, *, text: str | None = None, buffer: PriorContext | None = None):
        return task_env(
            self.pipeline,
            self.prompts,
            self.tools,
            task,
            text=text,
            buffer=buffer,
            emit=lambda event, task, **fields: self.events.append((event, fields)),
        )


@pytest.fixture
def harness(tmp_path: Path) -> Callable[..., Harness]:
    def make(*configs: ToolConfig, max_words: int = 60, **settings: Any) -> Harness:
        pipeline = corpus_pipeline(tmp_path, *configs, max_words=max_words, **settings)
        services = ToolServices(pipeline, corpus=corpus_loader(pipeline))
        return Harness(pipeline, build_tools(pipeline, services), FakePrompts())

    return make


def subtask(prompt: str, task_no: str, parent_text: str = "the user's question") -> Task:
    """A coordinator-made subtask: its execution text carries the marker (C21, C22)."""
    return Task(task_no=task_no, task_prompt=prompt, prompt_context=parent_text)


def run(awaitable: Any) -> Any:
    async def wait() -> Any:
        return await awaitable

    return asyncio.run(wait())


def answer_when(word: str, reply: str = "found it") -> ReadReply:
    """A read_page reply: the page answers when it contains `word`."""
    return lambda question, page: reply if word.lower() in page.text.lower() else None
