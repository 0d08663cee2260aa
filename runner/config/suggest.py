"""Suggestions for misspelt names: the closest known name, as "did you mean …?"."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """The closest choice to a misspelt word, if one is close enough to be a typo.

    One slip of the fingers (a letter dropped, added, changed, or two swapped) always counts,
    however short the word: difflib's ratio alone misses `kye` for `key`."""
    candidates = sorted(set(choices))
    slips = [choice for choice in candidates if _one_slip_apart(word, choice)]
    if slips:
        return slips[0]
    matches = difflib.get_close_matches(word, candidates, n=1, cutoff=0.7)
    return matches[0] if matches else None


def _one_slip_apart(word: str, choice: str) -> bool:
    if word == choice or abs(len(word) - len(choice)) > 1 or min(len(word), len(choice)) < 2:
        return False
    if len(word) == len(choice):
        differ = [i for i, (a, b) in enumerate(zip(word, choice, strict=True)) if a != b]
        if len(differ) == 1:
            return True
        first, second = differ[0], differ[-1]
        return (
            len(differ) == 2
            and second == first + 1
            and word[first] == choice[second]
            and word[second] == choice[first]
        )
    shorter, longer = sorted((word, choice), key=len)
    return any(longer[:i] + longer[i + 1 :] == shorter for i in range(len(longer)))


def suggestion_suffix(word: str, choices: Iterable[str]) -> str:
    match = did_you_mean(word, choices)
    return f"; did you mean `{match}`?" if match else ""
