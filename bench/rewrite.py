"""Query rewriting (purpose `rewrite`) with SmolLM2-135M on the pydocs questions in users' words:
BM25 and hybrid search, each with the question as asked and with the model's restatement
beside it. On request (`python -m bench rewrite`): it needs make test-llm's `.venv-llm` and the
page vectors bench.users keeps.

    python -m bench.rewrite          # writes bench/results/rewrite.json and its README section
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
import time
from typing import Any

from bench import llama_server, users
from bench.readme import table, write_results, write_section
from bench.retrieval import ROOT, machine
from bench.wording import Recall, gold_rows, read_set

SET = "pydocs-users"
TITLE = "Query rewriting with SmolLM2-135M"


def measure() -> dict[str, Any]:
    from runner.config import load_pipeline
    from runner.config.model import LLMConfig
    from runner.llm import build_client
    from runner.llm.prompts import Prompts

    source = users.corpus_source("pydocs")
    if isinstance(source, str):
        return {"skipped": source}
    why = llama_server.available()
    if why is not None:
        return {"skipped": why}
    path = users.pipeline_file("pydocs", *source, "hybrid")
    index, _ = users.open_index(path, "pydocs")
    pages = index.pages()
    questions = read_set(SET)
    recalls = {name: Recall() for name in ("BM25", "BM25 + rewrite", "hybrid", "hybrid + rewrite")}
    log = ROOT / ".runner" / "bench-rewrite-server.log"
    log.parent.mkdir(exist_ok=True)
    with llama_server.running(log) as server:
        llm = LLMConfig(
            provider="openai_like",
            model=llama_server.MODEL_ALIAS,
            api_base=server.url,
            timeout_s=600.0,
            max_tokens=64,
            context_window=llama_server.CONTEXT_WINDOW,
        )
        pipeline = dataclasses.replace(load_pipeline(path), llm=llm)
        prompts = Prompts(build_client(llm, pipeline=pipeline), pipeline)
        started = time.perf_counter()
        for question in questions:
            restated = asyncio.run(prompts.rewrite(question.text, corpus="pydocs", tool="rag"))
            searched = f"{question.text} {restated}" if restated else question.text
            golds = gold_rows(pages, question)
            for name, text in (("", question.text), (" + rewrite", searched)):
                recalls[f"BM25{name}"].add([row for row, _ in index.keyword.top(text, 5)], golds)
                hybrid = [hit.page.node_id for hit in index.search(text, 5, mode="hybrid")]
                rows = {page.node_id: row for row, page in enumerate(pages)}
                recalls[f"hybrid{name}"].add([rows[node] for node in hybrid], golds)
        seconds = time.perf_counter() - started
    return {
        "questions": len(questions),
        "seconds_per_question": round(seconds / len(questions), 2),
        "recall": {name: recall.figures() for name, recall in recalls.items()},
    }


def main() -> None:
    results = {
        "date": time.strftime("%Y-%m-%d"),
        "command": "python -m bench.rewrite",
        "machine": machine(),
        "set": SET,
        **measure(),
    }
    write_results("rewrite", results)
    write_section(TITLE, readme_section(results))
    print(json.dumps(results, indent=2))


def readme_section(results: dict[str, Any]) -> str:
    machine_line = ", ".join(f"{key} {value}" for key, value in results["machine"].items())
    if "skipped" in results:
        return f"`python -m bench.rewrite` ({results['date']}): skipped ({results['skipped']})."
    rows = [
        [name, f"{figures['at1']:.3f}", f"{figures['at5']:.3f}"]
        for name, figures in results["recall"].items()
    ]
    return f"""`python -m bench.rewrite` ({results["date"]}; {machine_line}). The
{results["questions"]} questions of `{results["set"]}` over all of pydocs, each restated by
SmolLM2-135M (purpose `rewrite`, runner's default template, llama.cpp's server, one thread;
{results["seconds_per_question"]} s a question) and searched with the restatement beside it.

{table(["search", "gold @1", "gold @5"], rows)}
"""


if __name__ == "__main__":
    main() if len(sys.argv) == 1 else sys.exit("usage: python -m bench.rewrite")
