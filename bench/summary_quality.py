"""The Summary's rows on what runner gets right: the pages it finds, the answers it gives and
the structured replies a small model makes, each beside its target."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.readme import Row, met


def faq_rows(results: Mapping[str, Any]) -> list[Row]:
    ours, sections = results["runner"], results["bm25s_per_section"]
    llama = results["llama_index_bm25"]
    return [
        [
            "pydocs FAQ: gold section @1",
            f"{ours['at1']:.3f}",
            f"bm25s per section {sections['at1']:.3f}; llama-index BM25 {llama['at1']:.3f}",
            "≥ bm25s per section",
            met(ours["at1"] >= sections["at1"]),
        ],
        [
            "pydocs FAQ: gold section @5",
            f"{ours['at5']:.3f}",
            f"bm25s per section {sections['at5']:.3f}",
            "≥ 0.95",
            met(ours["at5"] >= 0.95),
        ],
        [
            "pydocs FAQ: gold among the offline answer's sources",
            f"{ours['gold_among_sources']:.3f}",
            "",
            "≥ 0.85",
            met(ours["gold_among_sources"] >= 0.85),
        ],
        [
            "pydocs FAQ: content-word recall of the offline answer",
            f"{ours['answer_recall']:.3f}",
            f"first 80 words of the top page {ours['naive_recall']:.3f}",
            "above naive",
            met(ours["answer_recall"] > ours["naive_recall"]),
        ],
        [
            "pydocs FAQ: deep fallback, gold in the top k / missing",
            f"{ours['deep_when_gold_in_top_k']:.0%} / {ours['deep_when_gold_missing']:.0%}",
            "",
            "few / most",
            met(ours["deep_when_gold_in_top_k"] < 0.5 < ours["deep_when_gold_missing"]),
        ],
    ]


def gatekeeper_rows(results: Mapping[str, Any]) -> list[Row]:
    target = results["target"]
    return [
        [
            f"offline gatekeeper, `{name}`, {run['pipeline']}: “enough” with a gold page / "
            "“not enough” without",
            f"{figures['enough_when_gold_found']:.0%} / "
            f"{figures['not_enough_when_gold_missing']:.0%}",
            "",
            f"≥ {target:.0%} both",
            met(
                figures["enough_when_gold_found"] >= target
                and figures["not_enough_when_gold_missing"] >= target
            ),
        ]
        for run in results["runs"]
        for name, figures in run.get("sets", {}).items()
    ]


def realmodel_rows(results: Mapping[str, Any]) -> list[Row]:
    """SmolLM2-135M on the support pipeline: constrained decoding (the default `json_schema`
    mode, stepped down to what the server takes) beside the prompt alone."""
    modes = {mode["mode"]: mode for mode in results["modes"]}
    constrained, plain = modes.get("json_schema"), modes.get("prompt")
    if constrained is None:
        return []
    targets = results["targets"]

    def usable(mode: Mapping[str, Any]) -> str:
        good = sum(ok for ok, _ in mode["usable_by_purpose"].values())
        asked = sum(total for _, total in mode["usable_by_purpose"].values())
        return f"{mode['usable']:.0%} ({good} of {asked})"

    def answered(mode: Mapping[str, Any]) -> str:
        return f"{mode['rounds_answered']} of {mode['rounds']}"

    def re_asked(mode: Mapping[str, Any]) -> int:
        return int(mode["extra_calls"] - mode["refused_calls"])

    def unconstrained(figure: str) -> str:
        return f"without constraint {figure}" if plain is not None else ""

    per_ten = constrained["rounds_answered"] * 10 / max(1, constrained["rounds"])
    return [
        [
            "SmolLM2-135M: usable structured replies, constrained",
            usable(constrained),
            unconstrained(usable(plain) if plain else ""),
            f"{targets['usable_structured']:.0%}",
            met(constrained["usable"] >= targets["usable_structured"]),
        ],
        [
            "SmolLM2-135M: rounds that end in an answer or a clarification",
            answered(constrained),
            unconstrained(answered(plain) if plain else ""),
            f"≥ {targets['rounds_answered_of_10']} of 10",
            met(per_ten >= targets["rounds_answered_of_10"]),
        ],
        [
            "SmolLM2-135M: replies asked again (unusable ones), constrained",
            f"{re_asked(constrained)} ({constrained['refused_calls']} refused request)",
            unconstrained(str(re_asked(plain)) if plain else ""),
            "0: the constraint replaces retries",
            met(re_asked(constrained) == 0),
        ],
    ]


def answers_rows(results: Mapping[str, Any]) -> list[Row]:
    """Issue 29's targets on the answers themselves (bench/answers.py): the standard install
    (meaning), each set in users' words, before the new answerer beside it."""
    rows: list[Row] = []
    before = results.get("before", {}).get("sets", {})
    for name, shapes in results["sets"].items():
        figures = shapes.get("meaning")
        if figures is None:
            continue
        was = before.get(name, {}).get("meaning", {})
        for key, label, target in (
            ("sourced", "gold among sources", 0.70),
            ("checks", "answer checks", 0.60),
        ):
            old = was.get(key)
            rows.append(
                [
                    f"{name}: {label}, meaning (the standard install)",
                    f"{figures[key]:.3f}",
                    f"before {old:.3f}" if old is not None else "",
                    f"≥ {target:.2f}",
                    met(figures[key] >= target),
                ]
            )
    return rows


def users_rows(results: Mapping[str, Any]) -> list[Row]:
    """Issue 18's targets on the question sets (bench/users.py)."""
    rows: list[Row] = []
    for figures in results["corpora"].values():
        # a held-out corpus: documentation runner was not tuned on (bench/users.py, HELD_OUT)
        label = " (held-out corpus)" if figures.get("held_out") else ""
        for name, found in figures.get("sets", {}).items():
            recall = found["recall"]
            hybrid, bm25 = recall["hybrid (runner)"], recall["BM25"]
            anchor = recall["LlamaIndex VectorStoreIndex (anchor)"]
            if name.endswith("-users"):
                rows += [
                    [
                        f"{name}{label}: gold @5, hybrid",
                        f"{hybrid['at5']:.3f}",
                        f"anchor {anchor['at5']:.3f}",
                        "≥ 0.80",
                        met(hybrid["at5"] >= 0.80),
                    ],
                    [
                        f"{name}{label}: gold @5, BM25 alone (no extra)",
                        f"{bm25['at5']:.3f}",
                        "",
                        "≥ 0.50",
                        met(bm25["at5"] >= 0.50),
                    ],
                ]
            else:
                rows.append(
                    [
                        f"{name}{label}: gold first, hybrid",
                        f"{hybrid['at1']:.3f}",
                        f"BM25 {bm25['at1']:.3f}",
                        "≥ 0.93",
                        met(hybrid["at1"] >= 0.93),
                    ]
                )
    return rows
