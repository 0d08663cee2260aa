"""Deterministic pieces of activation: prompt-type filters, keyword/pattern rules and the
rule-based prompt-type classification. No LLM here; the orchestrator makes the one suitability
call per task for the candidates these rules leave to the LLM."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from runner.config.model import PromptTypes, ToolConfig
from runner.patterns import compile_pattern


@cache
def _keyword_pattern(keyword: str) -> re.Pattern[str]:
    # Whole word, case-insensitive; lookarounds instead of \b so that keywords that begin or end
    # with punctuation ("c++", "v2.") still match as whole words.
    return re.compile(rf"(?<!\w){re.escape(keyword)}(?!\w)", re.IGNORECASE)


def rule_matches(keywords: Sequence[str], pattern: str | None, text: str) -> bool:
    """A deterministic rule: any keyword as a whole word, or the pattern (case-insensitive,
    runner/patterns.py), in `text`."""
    if any(_keyword_pattern(word).search(text) for word in keywords):
        return True
    return pattern is not None and compile_pattern(pattern).search(text) is not None


def admits(config: ToolConfig, prompt_type: str | None) -> bool:
    """A tool with `prompt_types` is active only for those types; without, for every type."""
    return not config.prompt_types or prompt_type is None or prompt_type in config.prompt_types


def classify_by_rule(prompt_types: PromptTypes, text: str) -> str:
    """`classify: rule`: the first type whose keywords or pattern match, else the default."""
    for kind in prompt_types.types:
        if (kind.keywords or kind.pattern) and rule_matches(kind.keywords, kind.pattern, text):
            return kind.name
    return prompt_types.default
