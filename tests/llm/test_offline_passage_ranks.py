"""The offline provider ranks each passage among the passages of its tool result (its key): a
search's pages come in the search's order, and an answer weighs that order (docs/offline.md)."""

from __future__ import annotations

from runner.llm.providers.offline_passages import passages_from_facts


def fact(key: str, *, guaranteed: bool = False) -> dict[str, object]:
    return {"text": "Some text.", "sources": [], "key": key, "guaranteed": guaranteed}


def test_passages_are_ranked_within_their_tool_result_in_the_order_given() -> None:
    passages = passages_from_facts([fact("a"), fact("a"), fact("b"), fact("a")])
    assert [passage.rank for passage in passages] == [0, 1, 0, 2]


def test_a_passage_without_a_key_is_not_ranked() -> None:
    passages = passages_from_facts([fact(""), fact(""), "plain text"])
    assert [passage.rank for passage in passages] == [0, 0, 0]


def test_a_guaranteed_passage_has_no_search_rank() -> None:
    passages = passages_from_facts([fact("a"), fact("a", guaranteed=True)])
    assert passages[1].rank == 1 and passages[1].search_rank == 0
