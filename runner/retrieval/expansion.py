"""Query expansion with a corpus's `synonyms:`: a question that uses a user's word is searched
with the documents' word(s) added (`wipe: clear` turns "wipe the cache" into "wipe the cache
clear"). The user's words stay in the query: the documents may use them too.

A key matches whole words, case-insensitively, anywhere in the question (a phrase key matches
its words in a row, whatever the spaces between them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping


class Synonyms:
    def __init__(self, mapping: Mapping[str, tuple[str, ...]]) -> None:
        self.mapping = dict(mapping)
        self._patterns = [
            (
                re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, key.split())) + r"(?!\w)", re.I),
                key,
            )
            for key in self.mapping
        ]

    def __bool__(self) -> bool:
        return bool(self.mapping)

    def added(self, query: str) -> list[str]:
        """The documents' words the query's user words stand for, in the mapping's order."""
        words: dict[str, None] = {}
        for pattern, key in self._patterns:
            if pattern.search(query):
                words.update(dict.fromkeys(self.mapping[key]))
        return list(words)

    def expand(self, query: str) -> str:
        added = self.added(query)
        return f"{query} {' '.join(added)}" if added else query
