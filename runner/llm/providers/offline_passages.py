"""The passages the offline provider reads (from a request's facts) and how what it quotes from
them is cited."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Passage:
    """The offline provider's view of a passage: its text, its sources as JSON objects, and in
    an answer its number (what the answer cites it by, `[n]`)."""

    text: str
    sources: tuple[Mapping[str, Any], ...] = ()
    guaranteed: bool = False
    number: int | None = None


def passages_from_facts(items: Iterable[Any]) -> list[Passage]:
    """Passages given as mappings ({text, sources, guaranteed}) or as objects with attributes."""
    return [_passage(item) for item in items or ()]


def _passage(item: Any) -> Passage:
    if isinstance(item, str):
        return Passage(item)
    get = item.get if isinstance(item, Mapping) else lambda key, d=None: getattr(item, key, d)
    sources = tuple(_source(source) for source in get("sources", ()) or ())
    number = get("number")
    return Passage(
        str(get("text", "") or ""),
        sources,
        bool(get("guaranteed", False)),
        int(number) if number is not None else None,
    )


def _source(source: Any) -> Mapping[str, Any]:
    if isinstance(source, Mapping):
        return source
    return source.to_json() if hasattr(source, "to_json") else {"document": str(source)}


# --- citations ----------------------------------------------------------------------------------


def source_labels(sources: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """`doc p. N` (or `doc` without a page) for each source, without repeats, in order."""
    labels: list[str] = []
    for source in sources:
        label = str(source.get("document") or "")
        if label and source.get("page") is not None:
            label += f" p. {source['page']}"
        if label and label not in labels:
            labels.append(label)
    return tuple(labels)


def cited_by(
    passage: Passage, labels: tuple[str, ...], default: tuple[str, ...] | None = None
) -> tuple[str, ...]:
    """What a quoted unit of `passage` is cited by, given the citation labels it carries itself
    (a page label or an earlier answer's citation; () for none). In an answer (the passage has
    a number) its passage's number, which Prompts turns into the passage's citation — the one
    place where answers are cited (C33) — unless the unit carries a citation other than its
    passage's: that one stays, a guaranteed answer's own citation is never replaced. Elsewhere
    its own labels, else `default` (its passage's sources)."""
    own = source_labels(passage.sources) if default is None else default
    if passage.number is not None and (not labels or set(labels) == set(own)):
        return (str(passage.number),)
    return labels or own
