"""A `retrieve` tool on a question of several parts (docs/retrieval.md, "Questions of several
parts"): a part that asks something of its own and that none of the whole question's pages
serves is searched on its own, and its best pages take the places of the last ones, so that no
part is left to the deep search because the words of another weigh more."""

from __future__ import annotations

from dataclasses import dataclass, field

from runner.retrieval.index import ScoredPage
from runner.retrieval.pages import Page
from runner.tools.retrieve import by_parts, searched_parts


def _hit(name: str) -> ScoredPage:
    page = Page(node_id=name, document=f"{name}.md", page=1, title=name, heading="", text=name)
    return ScoredPage(page, 1.0)


@dataclass
class Index:
    """A corpus whose searches return the pages given for each query (a page's text is its
    name's words)."""

    rankings: dict[str, list[str]]
    searched: list[str] = field(default_factory=list)

    def search(self, query: str, top_k: int, *, mode: str, sections: bool) -> list[ScoredPage]:
        self.searched.append(query)
        return [_hit(name) for name in self.rankings.get(query, [])][:top_k]

    def expanded(self, query: str) -> str:
        return query

    def with_table_pieces(self, found: list[ScoredPage]) -> list[ScoredPage]:
        return found  # no table here: tests/retrieval/test_table_pieces.py has them


WHOLE = "Is the KW-620 quiet? And what is the descaling interval?"
PARTS = ["Is the KW-620 quiet", "what is the descaling interval"]


def found(rankings: dict[str, list[str]], question: str = WHOLE, top_k: int = 4) -> list[str]:
    index = Index(rankings)
    hits, _ = by_parts(index, question, top_k, "hybrid", True, searched_parts(question))  # type: ignore[arg-type]
    return [hit.page.node_id for hit in hits]


def test_each_part_of_a_question_of_parts_may_be_searched_on_its_own() -> None:
    assert searched_parts(WHOLE) == PARTS


def test_a_part_no_page_serves_takes_the_last_places_with_its_own_best_pages() -> None:
    rankings = {
        WHOLE: ["descaling interval a", "descaling b", "descaling c", "descaling d"],
        PARTS[0]: ["KW-620 noise quiet", "descaling b", "KW-620 manual quiet"],
    }
    assert found(rankings) == [
        "descaling interval a",
        "descaling b",
        "KW-620 noise quiet",
        "KW-620 manual quiet",
    ]


def test_a_question_whose_pages_serve_every_part_keeps_them() -> None:
    index = Index({WHOLE: ["KW-620 quiet", "descaling interval"], PARTS[0]: ["other"]})
    by_parts(index, WHOLE, 4, "hybrid", True, PARTS)  # type: ignore[arg-type]
    assert index.searched == [WHOLE]


def test_a_question_of_one_part_is_searched_once() -> None:
    index = Index({})
    question = "Is the KW-620 quiet?"
    by_parts(index, question, 4, "hybrid", True, searched_parts(question))  # type: ignore[arg-type]
    assert index.searched == [question]


def test_a_statement_the_question_leans_on_is_not_searched_on_its_own() -> None:
    assert searched_parts("I run Debian, how do I install Apache?") == []


def test_a_clause_an_and_joins_is_not_a_part_of_its_own() -> None:
    assert (
        searched_parts("can I INSERT into a saved view and have the row go to the base table?")
        == []
    )


def test_a_part_pointing_back_at_another_is_not_searched_on_its_own() -> None:
    question = "which character set does open() assume, and why does it differ on Windows?"
    assert searched_parts(question) == []


def test_the_parts_searched_on_their_own_are_named() -> None:
    index = Index({WHOLE: ["descaling interval a"], PARTS[0]: ["KW-620 noise quiet"]})
    _, parts = by_parts(index, WHOLE, 4, "hybrid", True, PARTS)  # type: ignore[arg-type]
    assert parts == [PARTS[0]]
