"""Prompts that fit the model: retrieved pages and buffer items are cut until the rendered
prompt, plus the reply's tokens, fits the model's context window.

The order of cutting is relevance: a passage's share of the question's content words (guaranteed
context, C23, ranks above everything else), the least relevant dropped first (later passages
first among equals), the passages kept in their own order. When one passage is left and the
prompt still does not fit, that passage is shortened at a line or word boundary. A prompt that
cannot fit even without passages is an error that says what to change. The cut is recorded
(`Cut`, in the `llm.call` event's `prompt_cut`).

Tokens are estimated without a tokenizer (runner.text.words.estimate_tokens) and scaled by
TOKENS_PER_ESTIMATE, since subword tokenizers split model numbers, codes and rare words
further than the estimate counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from runner.llm.errors import LLMConfigError
from runner.text.words import content_words, coverage, estimate_tokens

TOKENS_PER_ESTIMATE = 1.3  # measured: SmolLM2's tokenizer on the support handbook, ~1.2
_SHORTENED = " […]"

Groups = Mapping[str, Sequence[Any]]  # facts variable -> its passages (runner.llm.prompts)


def prompt_tokens(prompt: str) -> int:
    """The tokens a prompt is taken to cost when fitting it."""
    return math.ceil(estimate_tokens(prompt) * TOKENS_PER_ESTIMATE)


@dataclass(frozen=True)
class Cut:
    """How a prompt was cut to fit the model's window: the budget and the passages cut."""

    window: int
    budget: int
    tokens_before: int
    tokens_after: int
    passages_dropped: int
    passages_shortened: int
    passages_kept: int

    def to_json(self) -> dict[str, int]:
        return dict(self.__dict__)


def fit(
    render: Callable[[Groups], str],
    groups: Groups,
    *,
    question: str,
    window: int | None,
    reply_tokens: int,
    what: str,
) -> tuple[dict[str, list[Any]], Cut | None]:
    """The groups cut so that `render(groups)` fits `window` with `reply_tokens` to spare, and
    the cut (None when nothing was cut). `what` names the prompt in an error."""
    kept = {name: list(items) for name, items in groups.items()}
    if window is None:
        return kept, None
    budget = window - min(reply_tokens, window // 2)
    before = prompt_tokens(render(kept))
    if before <= budget:
        return kept, None
    total = sum(len(items) for items in kept.values())
    for name, index in _least_relevant_first(kept, question)[:-1]:
        kept[name][index] = None
        if prompt_tokens(render(_present(kept))) <= budget:
            break
    kept = _present(kept)
    shortened = 0
    if prompt_tokens(render(kept)) > budget:
        kept, shortened = _shorten_last(render, kept, budget, what, window)
    after = prompt_tokens(render(kept))
    remaining = sum(len(items) for items in kept.values())
    return kept, Cut(window, budget, before, after, total - remaining, shortened, remaining)


def _least_relevant_first(groups: Mapping[str, list[Any]], question: str) -> list[tuple[str, int]]:
    wanted = content_words(question)
    ranked = [
        (_rank(item, wanted, index), name, index)
        for name, items in groups.items()
        for index, item in enumerate(items)
    ]
    return [(name, index) for _rank, name, index in sorted(ranked)]


def _present(groups: Mapping[str, list[Any]]) -> dict[str, list[Any]]:
    return {name: [item for item in items if item is not None] for name, items in groups.items()}


def _shorten_last(
    render: Callable[[Groups], str],
    groups: dict[str, list[Any]],
    budget: int,
    what: str,
    window: int,
) -> tuple[dict[str, list[Any]], int]:
    """The one passage left, shortened until the prompt fits; an error when even an empty
    prompt does not."""
    name = next(key for key, items in groups.items() if items)
    passage = groups[name][0]
    bare = prompt_tokens(render({**groups, name: [replace(passage, text="")]}))
    if bare >= budget:
        raise LLMConfigError(
            f"the {what} prompt needs about {bare} tokens before any passage, but the model's "
            f"context window of {window} tokens leaves {budget} for the prompt once the reply's "
            "tokens (max_tokens) are set aside: raise `llm.context_window` (if the server's "
            "window is larger), lower `max_tokens`, or shorten the template"
        )
    text = passage.text
    for _ in range(8):  # each step aims at the budget; rounding may need another one
        over = prompt_tokens(render({**groups, name: [replace(passage, text=text)]})) - budget
        if over <= 0:
            break
        keep = max(0, len(text) - math.ceil(len(text) * over / max(1, prompt_tokens(text))) - 8)
        text = _cut_at_boundary(text, keep)
    return {**groups, name: [replace(passage, text=text)]}, 1


def _cut_at_boundary(text: str, keep: int) -> str:
    """The first `keep` characters of `text`, ended at a line break or a space, marked."""
    head = text[: max(0, keep)]
    boundary = max(head.rfind("\n"), head.rfind(" "))
    if boundary > len(head) // 2:
        head = head[:boundary]
    return head.rstrip() + _SHORTENED


def _rank(item: Any, wanted: list[str], index: int) -> tuple[bool, float, int]:
    return (bool(getattr(item, "guaranteed", False)), coverage(wanted, item.text), -index)
