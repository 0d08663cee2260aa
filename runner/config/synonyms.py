"""A corpus's `synonyms:`: users' words for the documents' words, as the model keeps them.

Inline in the pipeline or in a YAML file of the same shape (`wipe: clear`, `quicker: [faster,
speed]`); keys and values are lower-cased and their spaces collapsed, so that a look-up is one
comparison. Validation (R132) has checked the file's shape before this runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def phrase(text: str) -> str:
    return " ".join(text.lower().split())


def synonym_map(data: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """{user's phrase: (documents' phrases, …)}."""
    found: dict[str, tuple[str, ...]] = {}
    for key, value in data.items():
        values = [value] if isinstance(value, str) else list(value)
        found[phrase(str(key))] = tuple(dict.fromkeys(phrase(str(v)) for v in values))
    return found
