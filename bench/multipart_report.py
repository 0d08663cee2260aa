"""The README section of `python -m bench.multipart`: its tables and the text around them,
from the results it wrote (bench/results/multipart.json)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bench.readme import table


def _calls(figures: Mapping[str, Any]) -> str:
    kinds = ", ".join(f"{k} {u['calls']}" for k, u in figures["by_kind"].items())
    return f"{figures['calls']} ({kinds})"


def section(results: Mapping[str, Any]) -> str:
    targets = results["targets"]
    rows = []
    for row in results["questions"]:
        runner, llama = row["runner"], row["llamaindex"]
        whole = row["runner_whole_pages"]
        share = runner["prompt_tokens"] / llama["prompt_tokens"]
        rows.append(
            [
                row["number"],
                row["parts"],
                _calls(runner),
                _calls(llama),
                f"{runner['prompt_tokens']:,} / {llama['prompt_tokens']:,} ({share:.0%})",
                f"{runner['checks_held']} / {llama['checks_held']} / {whole['checks_held']}"
                f" of {row['checks']}",
                f"{runner['wall_s'] * 1000:.0f} / {runner['critical_path_s'] * 1000:.0f}",
                f"{llama['wall_s'] * 1000:.0f} / {llama['critical_path_s'] * 1000:.0f}",
            ]
        )
    per_question = table(
        [
            "#",
            "parts",
            "runner calls",
            "LlamaIndex calls",
            "prompt tokens runner / LlamaIndex (share)",
            "answer checks held: runner / LlamaIndex / runner whole pages",
            "runner wall / critical ms",
            "LlamaIndex wall / critical ms",
        ],
        rows,
    )
    total = results["totals"]
    whole = total["runner_whole_pages"]
    checks_total = results["checks"]["checks"]
    summary = table(
        ["", "runner (excerpts)", "LlamaIndex", "runner, whole pages"],
        [
            ["LLM calls", total["runner"]["calls"], total["llamaindex"]["calls"], whole["calls"]],
            [
                "calls by purpose",
                _kinds(total["runner"]["calls_by_kind"]),
                _kinds(total["llamaindex"]["calls_by_kind"]),
                _kinds(whole["calls_by_kind"]),
            ],
            [
                "prompt tokens",
                f"{total['runner']['prompt_tokens']:,}",
                f"{total['llamaindex']['prompt_tokens']:,}",
                f"{whole['prompt_tokens']:,}",
            ],
            [
                "… of which the retrieved pages' text as sent",
                f"{total['runner']['page_tokens']:,}",
                f"{total['llamaindex']['page_tokens']:,}",
                f"{whole['page_tokens']:,}",
            ],
            [
                "… and everything else (prompts, questions, sub-answers, citations)",
                f"{total['runner']['other_prompt_tokens']:,}",
                f"{total['llamaindex']['other_prompt_tokens']:,}",
                f"{whole['other_prompt_tokens']:,}",
            ],
            [
                f"answer checks the answering LLM was sent (of {checks_total})",
                total["runner"]["checks_held"],
                total["llamaindex"]["checks_held"],
                whole["checks_held"],
            ],
            [
                "completion tokens",
                f"{total['runner']['completion_tokens']:,}",
                f"{total['llamaindex']['completion_tokens']:,}",
                f"{whole['completion_tokens']:,}",
            ],
            [
                "wall time",
                f"{total['runner']['wall_s']} s",
                f"{total['llamaindex']['wall_s']} s",
                f"{whole['wall_s']} s",
            ],
            [
                "critical path × latency",
                f"{total['runner']['critical_path_s']} s",
                f"{total['llamaindex']['critical_path_s']} s",
                f"{whole['critical_path_s']} s",
            ],
            [
                "own overhead per question (zero latency, median)",
                f"{results['zero_latency_overhead']['runner_ms']} ms",
                f"{results['zero_latency_overhead']['llamaindex_ms']} ms",
                "",
            ],
        ],
    )
    check = results["checks"]
    runner_total, llama_total = total["runner"], total["llamaindex"]
    token_share = runner_total["prompt_tokens"] / llama_total["prompt_tokens"]
    page_cut = runner_total["page_tokens"] / whole["page_tokens"]
    other_share = runner_total["other_prompt_tokens"] / llama_total["other_prompt_tokens"]
    held = check["checks_held"]
    questions = "\n".join(f"{row['number']}. {row['question']}" for row in results["questions"])
    return f"""`{results["command"]}` ({results["date"]}; {_machine(results["machine"])}).
Simulated LLM latency {results["latency_s"]} s a call (`bench/simllm.py`), median of
{results["repeats"]} runs a question after one warm-up question. Both systems search the same
pages (runner's pages of the four parts of the Python docs, ≤ 250 words) with top_k
{", ".join(map(str, results["top_k"]))}, each with its own BM25 (runner's index; LlamaIndex's
`BM25Retriever`), which do not always rank the same pages first. runner's pipeline
(`bench/pipelines/pydocs.yaml`) sets `excerpts: true` on its retrieval tools: each part's pages
are cut to the units that bear on that part, its search taking the pages in score order
(docs/retrieval.md, "Excerpts"); "runner, whole pages" is the same pipeline with
`excerpts: false`, whose search gives the best page of each section first. Both systems are given
the same text for each part (the simulated LLM's parts are runner's subtasks and LlamaIndex's
sub-questions) and tokenise it alike (bm25s, English stop words, the Snowball stemmer); runner
also counts a section's heading in its pages' scores. Tokens are counted the same way for all
(`runner.text.words.estimate_tokens`: words and punctuation). The critical
path is the longest chain of calls that each waited for the previous one, from the calls'
timestamps: runner's is `decompose` → the answer; LlamaIndex's is the sub-question generation →
the sub-answers (concurrently) → the synthesis. Raw figures: `bench/results/multipart.json`.

{summary}

Targets: at most {targets["max_calls"]} calls a question — runner makes
{_parts_calls(check["calls_by_parts"])}, whatever the question; wall time within
{targets["max_wall_over_critical"]}× the critical path — worst question
{check["max_wall_over_critical"]}×; at most {targets["max_token_share"]:.0%} of LlamaIndex's
prompt tokens — worst question {check["max_token_share"]:.0%}, mean
{check["mean_token_share"]:.0%}.

**Where the tokens go.** runner sends {token_share:.0%} of LlamaIndex's prompt tokens. Of what
it saves, the pages' text is most: the excerpts are {page_cut:.0%} of the same pages whole
({runner_total["page_tokens"]:,} against {whole["page_tokens"]:,} tokens, each page's citation and
place included). The rest is orchestration: everything besides the pages — the prompts, the
question, LlamaIndex's sub-answers and runner's page citations — where runner sends
{other_share:.0%} of LlamaIndex's ({runner_total["other_prompt_tokens"]:,} against
{llama_total["other_prompt_tokens"]:,} tokens): one `decompose` call with a short schema outline
instead of the JSON Schema (`schema_outline`), no sub-answer calls (the pages go straight to the
one answer), no suitability or prompt-type call.

**How answer quality is held equal (and where it is not).** The simulated LLM answers only from
what it is sent, so the measure is what the answering calls were sent: every part of the
{len(results["questions"])} questions has an answer check in `bench/questions.py` — a phrase of
the page of the docs that answers it, which a right answer must hold (`in absolute or relative
terms` for `importlib.import_module`), written from the docs, not from either system's
retrievals — and the benchmark counts the checks that the prompts of the answering calls hold
(runner: `tool`; LlamaIndex: the sub-answers and the synthesis; matched with reStructuredText
markup, case and blanks set aside). Of {check["checks"]} checks, runner with excerpts was sent
{held["runner"]}, LlamaIndex {held["llamaindex"]}, runner with whole pages
{held["runner_whole_pages"]}. {_quality(held)}

**When the subtasks call the LLM: `decompose.parallel`.** `bench/pipelines/pydocs_per_part.yaml`
answers each part on its own subtask first (a `prompt` tool reading that part's pages) and the
question from those answers: LlamaIndex's shape, 1 + one call per part + 1. Run with
`parallel: true` its parts' answers are asked at the same time; with `parallel: false`, one by one
(all {len(results["questions"])} questions, in total):

{_per_part_table(results)}

Per question (wall / critical path in ms):

{per_question}

<details><summary>The questions</summary>

{questions}

</details>
"""


def _quality(held: Mapping[str, int]) -> str:
    """What the checks say: quality held, or where the gap to LlamaIndex comes from."""
    runner, llama, whole = held["runner"], held["llamaindex"], held["runner_whole_pages"]
    if runner >= llama:
        return "runner with excerpts was sent at least as many as LlamaIndex: quality held."
    return f"""The target (at least as many as LlamaIndex) is missed, for two reasons:
LlamaIndex's BM25 brings the answering page into its top pages more often than runner's on these
parts (whole pages: {whole} against {llama}: a matter of runner's search, not of what it sends),
and the excerpts leave out {whole - runner} checks of runner's own pages, mostly what the units
reader does not read as text (a reStructuredText directive's signature such as
`.. data:: IGNORECASE`, code that names what the part asks about) and explanations that share
none of the part's words (docs/retrieval.md, "Excerpts")."""


def _per_part_table(results: Mapping[str, Any]) -> str:
    llama = results["totals"]["llamaindex"]
    llama_path = sum(row["llamaindex"]["critical_path_calls"] for row in results["questions"])
    rows = [
        [
            f"runner, an answer per part, {mode}",
            figures["calls"],
            figures["critical_path_calls"],
            f"{figures['wall_s']} s",
            f"{figures['critical_path_s']} s",
        ]
        for mode, figures in results["per_part"].items()
    ]
    rows.append(
        [
            "LlamaIndex",
            llama["calls"],
            llama_path,
            f"{llama['wall_s']} s",
            f"{llama['critical_path_s']} s",
        ]
    )
    return table(
        ["", "LLM calls", "calls on the critical path", "wall time", "critical path × latency"],
        rows,
    )


def _kinds(calls: Mapping[str, int]) -> str:
    return ", ".join(f"{kind} {count}" for kind, count in calls.items())


def _parts_calls(by_parts: Mapping[Any, Sequence[int]]) -> str:
    return "; ".join(
        f"{'/'.join(map(str, calls))} for {parts} parts" for parts, calls in by_parts.items()
    )


def _machine(machine: Mapping[str, Any]) -> str:
    return ", ".join(f"{key} {value}" for key, value in machine.items())
