"""A block of a read document: a heading or a paragraph. Its own module because the parsers
(markup.py) and the documents they fill (runner.retrieval.readers) both speak of it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Block:
    """A block of a read document: a heading (its title and level) or a paragraph."""

    text: str
    heading: str | None = None  # set for a heading block: its title text
    level: int = 0  # a heading's level: 1 for the top (h1, `#`, the first reST adornment)
