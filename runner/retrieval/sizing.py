"""Sizing a search's `max_brute_force_page_count` from sample questions (`runner index --stats`).

A `search` tool asked by the deep search reads its `top_k` best pages with the LLM unless more
pages than the limit match the question (C31); in keyword mode a page matches when it shares one
term with the question. On a large corpus even a specific question shares a term with hundreds of
pages (354 to 1,758 of Git's 2,918), so a limit guessed from the corpus's size (60) turns reading
off for every question. This measures what the author's own questions match and proposes the
limit that lets most of them be read while the full scan (reading every page when nothing
matches) stays off.

The proposal: the match count that PROPOSED_SHARE of the sample questions stay at or under, rounded
up to two significant digits, at least `top_k`, and below the corpus's page count (a limit at or
above it would never stop anything but the full scan, which any limit stops). The questions come
from a file (one a line) or from the messages of the pipeline's test cases (`tests/*.yaml`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from runner.config.model import Pipeline, SearchOptions

PROPOSED_SHARE = 0.9  # the share of sample questions whose pages the proposed limit lets be read
MAX_SAMPLE_QUESTIONS = 200


@dataclass(frozen=True)
class Matched:
    question: str
    pages: int  # how many pages share a term with it


@dataclass(frozen=True)
class SearchSizing:
    """One keyword search tool's corpus measured against the sample questions."""

    tool: str
    corpus: str
    corpus_pages: int
    top_k: int
    limit: int | None  # the tool's max_brute_force_page_count now
    matched: tuple[Matched, ...]

    @property
    def proposal(self) -> int | None:
        """The proposed limit; None without a question that matches anything."""
        counts = sorted(m.pages for m in self.matched if m.pages)
        if not counts:
            return None
        at_share = counts[min(len(counts) - 1, math.ceil(PROPOSED_SHARE * len(counts)) - 1)]
        proposed = max(_round_up(at_share), self.top_k)
        return min(proposed, max(self.corpus_pages - 1, self.top_k))

    def read_under(self, limit: int | None) -> int:
        """How many of the questions would have their pages read under `limit`."""
        return sum(1 for m in self.matched if m.pages and (limit is None or m.pages <= limit))

    def lines(self) -> list[str]:
        limit = "unset" if self.limit is None else f"{self.limit:,}"
        head = (
            f"{self.tool} (corpus {self.corpus}: {self.corpus_pages:,} pages; top_k {self.top_k}; "
            f"max_brute_force_page_count {limit})"
        )
        if not self.matched:
            return [head, "  no sample questions: give some with --questions FILE (one a line)"]
        rows = [f"  {m.pages:>7,}  {_shown(m.question)}" for m in self.matched]
        return [head, "  matches  question", *rows, *self._verdict()]

    def _verdict(self) -> list[str]:
        counts = sorted(m.pages for m in self.matched)
        asked = len(self.matched)
        said = [
            f"  {asked} question(s) match {counts[0]:,} to {counts[-1]:,} pages "
            f"(median {counts[len(counts) // 2]:,})."
        ]
        if self.limit is not None:
            said.append(
                f"  With max_brute_force_page_count {self.limit:,}, {self.read_under(self.limit)} "
                f"of {asked} would have their top {self.top_k} pages read; the others get them "
                "as plain context, unread."
            )
        proposal = self.proposal
        if proposal is None:
            said.append("  No question matches a page: nothing to size the limit by.")
            return said
        said.append(
            f"  Proposed: max_brute_force_page_count: {proposal} — "
            f"{self.read_under(proposal)} of {asked} read, and no full scan of the "
            f"{self.corpus_pages:,} pages when a question matches none."
        )
        return said


def sizings(pipeline: Pipeline, questions: Sequence[str], open_index: Any) -> list[SearchSizing]:
    """Every keyword `search` tool of the pipeline measured against `questions`. `open_index`
    gives a corpus's index by name (runner.retrieval.open_corpus, bound to the pipeline)."""
    found = []
    for tool in pipeline.tools:
        options = tool.options
        if not isinstance(options, SearchOptions) or options.mode != "keyword":
            continue
        index = open_index(options.corpus)
        matched = tuple(Matched(q, index.match_count(q)) for q in questions)
        found.append(
            SearchSizing(
                tool.name,
                options.corpus,
                len(index),
                options.top_k,
                options.max_brute_force_page_count,
                matched,
            )
        )
    return found


def questions_from_file(path: Path) -> list[str]:
    """One question a line; blank lines and `#` comments skipped."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return _first([line.strip() for line in lines if line.strip() and not line.startswith("#")])


def questions_from_tests(pipeline: Pipeline) -> list[str]:
    """The messages of the test cases beside the pipeline (`tests/*.yaml`), each once; a file
    that is not a test-case file is passed over."""
    found: list[str] = []
    for path in sorted((pipeline.folder / "tests").glob("*.yaml")):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            continue
        found.extend(_messages(data.get("cases") if isinstance(data, dict) else None))
    return _first(list(dict.fromkeys(found)))


def _messages(cases: Any) -> Iterable[str]:
    for case in cases if isinstance(cases, list) else ():
        turns = case.get("turns") if isinstance(case, dict) else None
        for turn in turns if isinstance(turns, list) else ():
            if isinstance(turn, dict) and isinstance(turn.get("message"), str):
                yield turn["message"].strip()


def _first(questions: list[str]) -> list[str]:
    return questions[:MAX_SAMPLE_QUESTIONS]


def _round_up(number: int) -> int:
    """Up to two significant digits: 1,234 -> 1,300; 87 -> 87."""
    if number < 100:
        return number
    step = 10 ** (len(str(number)) - 2)
    return math.ceil(number / step) * step


def _shown(question: str, limit: int = 90) -> str:
    flat = " ".join(question.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
