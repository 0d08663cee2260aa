"""The passages the offline provider reads (from a request's facts) and how what it quotes from
them is cited."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from runner.llm.citations import source_labels


@dataclass(frozen=True)
class OfflinePassage:
    """The offline provider's view of a passage: its text, its sources as JSON objects, and in
    an answer its number (what the answer cites it by, `[n]`)."""

    text: str
    sources: tuple[Mapping[str, Any], ...] = ()
    guaranteed: bool = False
    number: int | None = None
    # its place among the passages of the same tool result (`key`), best first: a search's
    # pages come in its order, so 0 is the page the search ranked first
    rank: int = 0
    # how its pages can be read by meaning (runner.tools.meaning), when a retrieval gave it
    meaning: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)

    @property
    def search_rank(self) -> int:
        """Its search's rank, which weighs on what an answer quotes; none for a guaranteed
        passage (C23: quoted whatever its place)."""
        return 0 if self.guaranteed else self.rank


def passages_from_facts(items: Iterable[Any]) -> list[OfflinePassage]:
    """Passages given as mappings ({text, sources, guaranteed, key}) or as objects with
    attributes; each ranked among those of its key (a tool result's pages), in the order
    given."""
    seen: dict[str, int] = {}
    passages = []
    for item in items or ():
        key = None if isinstance(item, str) else _get(item)("key")
        rank = seen.get(key, 0) if key else 0  # no key: not a tool's result, not ranked
        if key:
            seen[key] = rank + 1
        passages.append(_passage(item, rank))
    return passages


def _get(item: Any) -> Any:
    return item.get if isinstance(item, Mapping) else lambda key, d=None: getattr(item, key, d)


def _passage(item: Any, rank: int) -> OfflinePassage:
    if isinstance(item, str):
        return OfflinePassage(item)
    get = _get(item)
    sources = tuple(_source(source) for source in get("sources", ()) or ())
    number = get("number")
    meaning = get("meaning")
    return OfflinePassage(
        str(get("text", "") or ""),
        sources,
        bool(get("guaranteed", False)),
        int(number) if number is not None else None,
        rank,
        meaning if isinstance(meaning, Mapping) else None,
    )


def _source(source: Any) -> Mapping[str, Any]:
    if isinstance(source, Mapping):
        return source
    return source.to_json() if hasattr(source, "to_json") else {"document": str(source)}


# --- citations ----------------------------------------------------------------------------------


def cited_by(
    passage: OfflinePassage, labels: tuple[str, ...], default: tuple[str, ...] | None = None
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
