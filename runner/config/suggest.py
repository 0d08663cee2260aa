"""Suggestions for misspelt names: the closest known name, as "did you mean …?"."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

# Beyond this many choices, "did you mean" looks up a word's one-slip variants instead of
# comparing it with every choice, and hands difflib only the likeliest choices: a file naming
# 1,500 unknown tools among 9,500 took 27 s to validate.
_FEW_CHOICES = 200
_DIFFLIB_AT_MOST = 1000


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """The closest choice to a misspelt word, if one is close enough to be a typo.

    One slip of the fingers (a letter dropped, added, changed, or two swapped) always counts,
    however short the word: difflib's ratio alone misses `kye` for `key`."""
    known = _Choices.of(tuple(choices))
    if len(known.sorted) <= _FEW_CHOICES:
        slips = [choice for choice in known.sorted if _one_slip_apart(word, choice)]
    else:
        slips = sorted(v for v in _slips(word, known.alphabet) if v in known.members)
    if slips:
        return slips[0]
    matches = difflib.get_close_matches(word, known.comparable(word), n=1, cutoff=0.7)
    return matches[0] if matches else None


@dataclass(frozen=True)
class _Choices:
    sorted: tuple[str, ...]
    members: frozenset[str]
    alphabet: str

    @staticmethod
    @lru_cache(maxsize=16)
    def of(choices: tuple[str, ...]) -> _Choices:
        """Prepared once per list of choices (a file asks about the same tools many times)."""
        members = frozenset(choices)
        return _Choices(tuple(sorted(members)), members, "".join(sorted(set("".join(members)))))

    def comparable(self, word: str) -> Sequence[str]:
        """The choices difflib could match at its 0.7 cutoff (a ratio of 2·matches / total
        length bounds the length), at most _DIFFLIB_AT_MOST of them, same first letter first."""
        if len(self.sorted) <= _FEW_CHOICES:
            return self.sorted
        low, high = len(word) * 0.53, len(word) * 1.9
        fitting = [choice for choice in self.sorted if low <= len(choice) <= high]
        if len(fitting) > _DIFFLIB_AT_MOST:
            fitting.sort(key=lambda choice: choice[:1] != word[:1])  # stable: then sorted
            fitting = sorted(fitting[:_DIFFLIB_AT_MOST])
        return fitting


def _slips(word: str, alphabet: str) -> set[str]:
    """Every word one slip away (a letter dropped, added, changed, or two swapped), kept to
    what _one_slip_apart accepts."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    variants = {a + b[1:] for a, b in splits if b}
    variants |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    variants |= {a + c + b[1:] for a, b in splits if b for c in alphabet}
    variants |= {a + c + b for a, b in splits for c in alphabet}
    return {v for v in variants if v != word and min(len(v), len(word)) >= 2}


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
