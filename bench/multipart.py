"""Multi-part questions: runner against LlamaIndex's SubQuestionQueryEngine, on the same docs,
the same BM25 pages, the same questions and the same simulated LLM.

    python -m bench.multipart [--latency 0.1] [--repeats 3]

- LlamaIndex: four `QueryEngineTool`s (a `RetrieverQueryEngine` over a `BM25Retriever` each:
  library, tutorial, reference, howto + faq) under `SubQuestionQueryEngine.from_defaults(...,
  question_gen=LLMQuestionGenerator.from_defaults(llm=sim), llm=sim, use_async=True)`.
- runner: `bench/pipelines/pydocs.yaml`, a coordinator that makes one subtask per part, each
  forced onto that part's `retrieve` tool, and answers from what they found.

Both retrieve from the same pages (runner's pages of at most 250 words, handed to LlamaIndex as
its TextNodes) with the same top_k, so what differs is the orchestration: how many LLM calls,
how many prompt tokens, and how long a question takes when each call takes `--latency` seconds.
Per question and in total: calls by purpose, prompt tokens, wall time, and the critical path
(the longest chain of calls that waited for one another, measured from the calls' timestamps)
times the latency. A second pass at zero latency measures each system's own overhead.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from functools import partial
from pathlib import Path
from typing import Any

from bench.multipart_report import section
from bench.questions import CHECKS, QUESTIONS, TOOLS
from bench.readme import write_results, write_section
from bench.simllm import DEFAULT_LATENCY_S, Part, SimulatedLLM
from runner.config.model import RetrieveOptions
from runner.text.words import estimate_tokens

BENCH = Path(__file__).resolve().parent
PYDOCS = BENCH.parent.parent / "shared" / "data" / "pydocs" / "docs"
PIPELINE_FOLDER = BENCH / "pipelines"
PIPELINE_FILE = "pydocs.yaml"
# the same decomposition with an answer per part, the shape of LlamaIndex's engine: it shows
# what `decompose.parallel` saves when the subtasks call the LLM
PER_PART_FILE = "pydocs_per_part.yaml"
TITLE = "Multi-part questions: runner and LlamaIndex"
# runner: decompose, then the answer; LlamaIndex: sub-question generation, the sub-answers
# (concurrently), then the synthesis.
TARGETS = {"max_calls": 3, "max_token_share": 0.5, "max_wall_over_critical": 1.1}


@dataclass(frozen=True)
class Reply:
    """A system's answer, and the text of the pages it handed the LLM (one per retrieval: the
    pages whole, or runner's excerpts of them)."""

    answer: str
    pages: tuple[str, ...]


@dataclass(frozen=True)
class Asked:
    """One question put to one system: what the simulated LLM saw, and how long it took."""

    reply: Reply
    wall_s: float
    usage: dict[str, Any]
    sent: str = ""  # the prompts of the answering calls, joined: what an answer can hold


# the calls that plan rather than answer: the question's parts, LlamaIndex's tool choice
PLANNING_KINDS = frozenset({"decompose", "sub_question", "selector"})


class RecordingLLM(SimulatedLLM):
    """The simulated LLM, keeping the prompt of every answering call: the text sent to the
    answering LLM, in which the answer checks are looked for."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.prompts: list[str] = []

    async def stream_call(
        self,
        kind: str,
        prompt: str,
        make_reply: Callable[[], str],
        on_delta: Callable[[str], None] | None,
    ) -> str:
        self._keep(kind, prompt)
        return await super().stream_call(kind, prompt, make_reply, on_delta)

    def call_blocking(self, kind: str, prompt: str, make_reply: Callable[[], str]) -> str:
        self._keep(kind, prompt)
        return super().call_blocking(kind, prompt, make_reply)

    def _keep(self, kind: str, prompt: str) -> None:
        if kind not in PLANNING_KINDS:
            self.prompts.append(prompt)


_MARKUP_ROLE = re.compile(r":[\w:.-]+:`")  # reStructuredText roles: :func:`open`
_MARKUP = re.compile(r"[`*\\]")


def plain(text: str) -> str:
    """Text as the checks are matched: reStructuredText roles and literal marks, emphasis and
    backslashes dropped, blanks collapsed, lower case (so that runner's excerpts, whose units
    are read clean of markup, and LlamaIndex's raw pages are matched alike)."""
    return " ".join(_MARKUP.sub("", _MARKUP_ROLE.sub("`", text)).split()).lower()


def checks_held(sent: str, checks: Sequence[str]) -> int:
    """How many of a question's answer checks the text sent to the answering LLM holds."""
    text = plain(sent)
    return sum(plain(check) in text for check in checks)


# --- staging the pipeline -----------------------------------------------------------------------


def stage(folder: Path, docs: Path = PYDOCS) -> Path:
    """The benchmark pipeline in `folder`, with `corpus/<corpus>/<docs folder>/<file>` symlinks
    to the docs (corpus paths must stay inside the pipeline's folder, its corpora set
    `follow_symlinks: true` to read the linked documents, and the corpus reader does
    not descend into symlinked folders, so files are linked one by one)."""
    for source in PIPELINE_FOLDER.iterdir():
        if source.is_file():
            shutil.copy(source, folder / source.name)
    for tool, (folders, _description) in TOOLS.items():
        corpus = folder / "corpus" / corpus_name(tool)
        for docs_folder in folders:
            for file in sorted((docs / docs_folder).rglob("*")):
                if file.is_file():
                    link = corpus / docs_folder / file.relative_to(docs / docs_folder)
                    link.parent.mkdir(parents=True, exist_ok=True)
                    link.symlink_to(file.resolve())
    return folder / PIPELINE_FILE


def corpus_name(tool: str) -> str:
    """The pipeline names each retrieval tool's corpus after it: `library_docs` -> `library`."""
    return tool.removesuffix("_docs")


# --- the two systems ----------------------------------------------------------------------------


def open_runner(
    pipeline_path: Path,
    sim: RecordingLLM,
    *,
    parallel: bool | None = None,
    excerpts: bool | None = None,
) -> Any:
    """runner's runtime for the pipeline (indexes built), talking to the simulated LLM;
    `parallel` overrides the coordinators' `decompose.parallel`, `excerpts` the retrieval
    tools' `excerpts`."""
    from runner.app import Runtime
    from runner.config import load_pipeline
    from runner.llm.prompts import Prompts

    pipeline = load_pipeline(pipeline_path)
    if parallel is not None:
        pipeline = with_parallel(pipeline, parallel)
    if excerpts is not None:
        pipeline = with_excerpts(pipeline, excerpts)
    runtime = Runtime.from_pipeline(pipeline, llm_override="offline")
    runtime.close()  # the offline client holds nothing; the simulated one replaces it
    client = sim.runner_client()
    return replace(runtime, client=client, prompts=Prompts(client, runtime.pipeline))


def with_parallel(pipeline: Any, parallel: bool) -> Any:
    tools = tuple(
        replace(tool, decompose=replace(tool.decompose, parallel=parallel))
        if tool.decompose is not None
        else tool
        for tool in pipeline.tools
    )
    return replace(pipeline, tools=tools)


def with_excerpts(pipeline: Any, excerpts: bool) -> Any:
    tools = tuple(
        replace(tool, options=replace(tool.options, excerpts=excerpts))
        if isinstance(tool.options, RetrieveOptions)
        else tool
        for tool in pipeline.tools
    )
    return replace(pipeline, tools=tools)


def open_llama(runtime: Any, sim: RecordingLLM) -> Any:
    """SubQuestionQueryEngine over four BM25 query engines, on the pages runner indexed."""
    from llama_index.core.query_engine import RetrieverQueryEngine, SubQuestionQueryEngine
    from llama_index.core.question_gen import LLMQuestionGenerator
    from llama_index.core.tools import QueryEngineTool, ToolMetadata
    from llama_index.retrievers.bm25 import BM25Retriever

    from runner.retrieval import open_corpus
    from runner.retrieval.pages import to_nodes

    llm = sim.llama_llm()
    tools = []
    for name, (_folders, description) in TOOLS.items():
        options = runtime.pipeline.find_tool(name).options
        pages = open_corpus(runtime.pipeline, options.corpus, build=False).pages()
        retriever = BM25Retriever.from_defaults(
            nodes=to_nodes(pages), similarity_top_k=options.top_k, language="en"
        )
        engine = RetrieverQueryEngine.from_args(retriever, llm=llm)
        tools.append(QueryEngineTool(engine, ToolMetadata(name=name, description=description)))
    return SubQuestionQueryEngine.from_defaults(
        query_engine_tools=tools,
        question_gen=LLMQuestionGenerator.from_defaults(llm=llm),
        llm=llm,
        use_async=True,
        verbose=False,
    )


async def ask_runner(runtime: Any, question: str, session: str) -> Reply:
    from runner.engine.state import SessionState

    state = SessionState.new(session, runtime.pipeline)
    result = await runtime.orchestrator().run_round(state, question)
    if result.outcome != "answer":
        raise RuntimeError(f"runner gave {result.outcome} for {question!r}: {result.error}")
    # what each retrieval handed the answer: its pages, whole or cut to excerpts
    pages = tuple(
        entry.context
        for _key, results in state.buffer.items()
        for entry in results
        if entry.data.get("pages")
    )
    return Reply(result.answer or "", pages)


async def ask_llama(engine: Any, question: str) -> Reply:
    response = await engine.aquery(question)
    # the response's sources: the sub-answers, and the pages every sub-question retrieved
    pages = tuple(
        hit.node.get_content() for hit in response.source_nodes if "document" in hit.node.metadata
    )
    return Reply(str(response), pages)


async def measure(sim: RecordingLLM, ask: Callable[[], Awaitable[Reply]], repeats: int) -> Asked:
    """`repeats` runs; the usage and prompts of the last (they are all alike), the median wall
    time."""
    walls = []
    reply = Reply("", ())
    for _ in range(repeats):
        sim.meter.reset()
        sim.prompts.clear()
        started = time.perf_counter()
        reply = await ask()
        walls.append(time.perf_counter() - started)
    return Asked(reply, statistics.median(walls), sim.meter.to_json(), "\n".join(sim.prompts))


# --- the benchmark ------------------------------------------------------------------------------


async def compare(
    systems: Systems,
    sim: RecordingLLM,
    questions: Mapping[str, Sequence[Part]],
    answer_checks: Mapping[str, Sequence[str]],
    repeats: int,
) -> list[dict[str, Any]]:
    """Each question put to runner (with excerpts, as its pipeline says), to LlamaIndex and to
    runner with whole pages: calls, tokens, times, and how many of the question's answer checks
    the text each sent to the answering LLM holds."""
    first = next(iter(questions))  # a warm-up for each: templates compiled, caches filled
    await ask_runner(systems.runner, first, "warm-up")
    await ask_runner(systems.whole_pages, first, "warm-up")
    await ask_llama(systems.llama, first)
    rows = []
    for number, (question, parts) in enumerate(questions.items(), 1):
        wanted = answer_checks.get(question, ())
        asked = {
            "runner": partial(ask_runner, systems.runner, question, f"q{number}"),
            "llamaindex": partial(ask_llama, systems.llama, question),
            "runner_whole_pages": partial(ask_runner, systems.whole_pages, question, f"w{number}"),
        }
        row: dict[str, Any] = {"number": number, "question": question, "parts": len(parts)}
        row["checks"] = len(wanted)
        for system, ask in asked.items():
            measured = await measure(sim, ask, repeats)
            row[system] = figures(measured, sim.latency_s) | {
                "checks_held": checks_held(measured.sent, wanted)
            }
        rows.append(row)
    return rows


@dataclass(frozen=True)
class Systems:
    """What the questions are put to: runner as its pipeline says (excerpts), LlamaIndex, and
    runner with the same pipeline handing over whole pages."""

    runner: Any
    llama: Any
    whole_pages: Any


async def overhead(
    runtime: Any, engine: Any, sim: RecordingLLM, questions: Sequence[str], repeats: int
) -> dict[str, float]:
    """Median ms per question at zero latency: each system's own work (retrieval included)."""
    latency, sim.latency_s = sim.latency_s, 0.0
    try:
        runner = [
            (await measure(sim, partial(ask_runner, runtime, q, "zero"), repeats)).wall_s
            for q in questions
        ]
        llama = [
            (await measure(sim, partial(ask_llama, engine, q), repeats)).wall_s for q in questions
        ]
    finally:
        sim.latency_s = latency
    return {
        "runner_ms": round(statistics.median(runner) * 1000, 2),
        "llamaindex_ms": round(statistics.median(llama) * 1000, 2),
    }


async def answer_per_part(
    runtime: Any, sim: RecordingLLM, questions: Mapping[str, Sequence[Part]], repeats: int
) -> dict[str, Any]:
    """The per-part pipeline over every question: calls, critical path and wall time."""
    rows = [
        figures(
            await measure(sim, partial(ask_runner, runtime, question, "per-part"), repeats),
            sim.latency_s,
        )
        for question in questions
    ]
    return {
        "calls": sum(row["calls"] for row in rows),
        "critical_path_calls": sum(row["critical_path_calls"] for row in rows),
        "wall_s": round(sum(row["wall_s"] for row in rows), 3),
        "critical_path_s": round(sum(row["critical_path_s"] for row in rows), 3),
    }


def figures(asked: Asked, latency_s: float) -> dict[str, Any]:
    usage = asked.usage
    critical_s = usage["critical_path_calls"] * latency_s
    page_tokens = sum(estimate_tokens(page) for page in asked.reply.pages)
    return {
        **usage,
        "pages": len(asked.reply.pages),
        "page_tokens": page_tokens,  # the retrieved pages' own text, sent once by both systems
        "other_prompt_tokens": usage["prompt_tokens"] - page_tokens,
        "wall_s": round(asked.wall_s, 4),
        "critical_path_s": round(critical_s, 4),
        "wall_over_critical": round(asked.wall_s / critical_s, 3) if critical_s else None,
        "answer_chars": len(asked.reply.answer),
    }


def totals(rows: Sequence[dict[str, Any]], system: str) -> dict[str, Any]:
    by_kind: dict[str, int] = {}
    for row in rows:
        for kind, usage in row[system]["by_kind"].items():
            by_kind[kind] = by_kind.get(kind, 0) + usage["calls"]
    return {
        "calls": sum(row[system]["calls"] for row in rows),
        "calls_by_kind": dict(sorted(by_kind.items())),
        "prompt_tokens": sum(row[system]["prompt_tokens"] for row in rows),
        "page_tokens": sum(row[system]["page_tokens"] for row in rows),
        "other_prompt_tokens": sum(row[system]["other_prompt_tokens"] for row in rows),
        "completion_tokens": sum(row[system]["completion_tokens"] for row in rows),
        "wall_s": round(sum(row[system]["wall_s"] for row in rows), 3),
        "critical_path_s": round(sum(row[system]["critical_path_s"] for row in rows), 3),
        "checks_held": sum(row[system]["checks_held"] for row in rows),
    }


def checks(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The targets, question by question."""
    runner = [row["runner"] for row in rows]
    shares = [row["runner"]["prompt_tokens"] / row["llamaindex"]["prompt_tokens"] for row in rows]
    ratios = [r["wall_over_critical"] for r in runner if r["wall_over_critical"] is not None]
    by_parts: dict[int, set[int]] = {}
    for row in rows:
        by_parts.setdefault(row["parts"], set()).add(row["runner"]["calls"])
    return {
        "max_calls": max(r["calls"] for r in runner),
        "calls_by_parts": {parts: sorted(calls) for parts, calls in sorted(by_parts.items())},
        "max_token_share": round(max(shares), 3),
        "mean_token_share": round(statistics.mean(shares), 3),
        "max_wall_over_critical": max(ratios) if ratios else None,
        "checks": sum(row["checks"] for row in rows),
        "checks_held": {
            system: sum(row[system]["checks_held"] for row in rows)
            for system in ("runner", "llamaindex", "runner_whole_pages")
        },
    }


async def run(
    docs: Path,
    questions: Mapping[str, Sequence[Part]],
    *,
    latency_s: float,
    repeats: int,
    folder: Path,
    answer_checks: Mapping[str, Sequence[str]] = CHECKS,
) -> dict[str, Any]:
    sim = RecordingLLM(questions, latency_s)
    started = time.perf_counter()
    runtime = open_runner(stage(folder, docs), sim)
    runner_setup = time.perf_counter() - started
    started = time.perf_counter()
    engine = open_llama(runtime, sim)
    llama_setup = time.perf_counter() - started
    systems = Systems(runtime, engine, open_runner(folder / PIPELINE_FILE, sim, excerpts=False))
    rows = await compare(systems, sim, questions, answer_checks, repeats)
    zero = await overhead(runtime, engine, sim, list(questions), repeats)
    per_part = {
        mode: await answer_per_part(
            open_runner(folder / PER_PART_FILE, sim, parallel=parallel), sim, questions, repeats
        )
        for mode, parallel in (("parallel", True), ("one by one", False))
    }
    top_k = {runtime.pipeline.find_tool(name).options.top_k for name in TOOLS}
    return {
        "latency_s": latency_s,
        "repeats": repeats,
        "top_k": sorted(top_k),
        "setup_s": {"runner": round(runner_setup, 2), "llamaindex": round(llama_setup, 2)},
        "questions": rows,
        "totals": {
            system: totals(rows, system)
            for system in ("runner", "llamaindex", "runner_whole_pages")
        },
        "zero_latency_overhead": zero,
        "per_part": per_part,
        "checks": checks(rows),
        "targets": TARGETS,
    }


# --- the report ---------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.multipart")
    parser.add_argument("--latency", type=float, default=DEFAULT_LATENCY_S)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv or [])
    if not PYDOCS.is_dir():
        print(f"skipped: the pydocs corpus is not at {PYDOCS}")
        return
    from bench.retrieval import machine

    host = machine()
    with tempfile.TemporaryDirectory(prefix="runner-bench-") as folder:
        results = asyncio.run(
            run(
                PYDOCS, QUESTIONS, latency_s=args.latency, repeats=args.repeats, folder=Path(folder)
            )
        )
    command = "python -m bench.multipart" + "".join(f" {arg}" for arg in (argv or []))
    results = {"date": date.today().isoformat(), "command": command, "machine": host} | results
    write_results("multipart", results)
    write_section(TITLE, section(results))
    print(section(results))


if __name__ == "__main__":
    main(sys.argv[1:])
