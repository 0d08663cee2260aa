"""Execution texts held as links (runner.engine.text): C21's string, made in O(1), joined when
read, a chain's strings shared instead of kept one a level."""

from __future__ import annotations

import copy
import pickle

from runner.engine.marker import AGENT_COORDINATOR_MARKER as MARKER
from runner.engine.results import PromptAndContext, result_entry
from runner.engine.task import Task
from runner.engine.text import LINK_FROM_CHARS, LinkedText, linked


def chain(depth: int) -> list[LinkedText]:
    """The links of a chain under "top": level d is top, marker, p1 … marker, pd."""
    links, above = [], "top"
    for level in range(1, depth + 1):
        link = LinkedText(above, f"p{level}")
        links.append(link)
        above = link
    return links


def expected(level: int) -> str:
    return MARKER.join(["top", *(f"p{d}" for d in range(1, level + 1))])


def test_c21_a_link_reads_as_the_text_above_the_marker_and_its_prompt():
    [one, two] = chain(2)
    assert str(one) == f"top{MARKER}p1"
    assert str(two) == f"top{MARKER}p1{MARKER}p2"
    assert len(two) == len(str(two))


def test_c21_without_prompt_context_the_text_is_the_prompt_alone():
    assert linked("do it", None) == "do it"
    assert linked("do it", "") == "do it"
    assert str(linked("do it", "user said")) == f"user said{MARKER}do it"


def test_a_short_text_above_is_copied_into_a_string_a_long_one_linked():
    short, long = "a" * (LINK_FROM_CHARS - 1), "a" * LINK_FROM_CHARS
    assert linked("next", short) == f"{short}{MARKER}next"
    assert type(linked("next", short)) is str
    link = linked("next", long)
    assert isinstance(link, LinkedText) and str(link) == f"{long}{MARKER}next"
    assert isinstance(linked("after", link), LinkedText)  # below a link, links


def test_a_chain_read_deepest_first_slices_one_string_that_its_levels_share():
    links = chain(50)
    texts = [str(link) for link in reversed(links)]  # the order tools run in (C5)
    assert texts == [expected(level) for level in range(50, 0, -1)]
    assert len({id(link.cell) for link in links}) == 1  # one string held, not one a level


def test_a_chain_read_top_first_grows_one_string_instead_of_keeping_one_a_level():
    links = chain(50)
    assert [str(link) for link in links] == [expected(level) for level in range(1, 51)]
    assert len({id(link.cell) for link in links}) == 1
    assert links[0].cell is not None and links[0].cell[0] == expected(50)


def test_siblings_under_one_link_read_their_own_texts():
    [parent] = chain(1)
    first, second = LinkedText(parent, "a"), LinkedText(parent, "b")
    assert str(first) == f"{expected(1)}{MARKER}a"
    assert str(second) == f"{expected(1)}{MARKER}b"
    assert str(parent) == expected(1)


def test_a_chain_of_ten_thousand_levels_joins_copies_and_pickles_without_recursion():
    deepest = chain(10_000)[-1]
    assert str(deepest).count(MARKER) == 10_000
    assert copy.deepcopy(deepest) is deepest  # immutable: a deep copy is itself
    assert pickle.loads(pickle.dumps(deepest)) == str(deepest)  # it pickles as its string


def test_a_link_equals_its_string():
    [one] = chain(1)
    assert one == expected(1) and one != "top"
    assert hash(one) == hash(expected(1))


def test_a_buffer_entry_given_a_link_reads_serialises_and_compares_as_its_string():
    [one] = chain(1)
    entry = result_entry(one, "found")
    assert type(entry.prompt) is str and entry.prompt == expected(1)
    assert entry == PromptAndContext(expected(1), "found") == entry
    assert entry != PromptAndContext(expected(1), "other")
    assert hash(entry) == hash(PromptAndContext(expected(1), "found"))
    assert entry.to_json()["prompt"] == expected(1)
    assert copy.deepcopy(entry) == entry
    assert PromptAndContext.from_json(entry.to_json()) == entry


def test_a_buffer_entry_of_a_string_is_a_plain_result():
    assert type(result_entry("asked", "found")) is PromptAndContext


def test_a_task_given_a_link_as_prompt_context_reads_and_serialises_its_string():
    [one] = chain(1)
    task = Task("1.1", "next")
    task.hold_prompt_context(one)
    assert task.held_prompt_context() is one
    assert task.prompt_context == expected(1)
    assert task.to_json()["prompt_context"] == expected(1)
    assert task.execution_text() == f"{expected(1)}{MARKER}next"
    assert Task.from_json(task.to_json()) == task
    assert copy.deepcopy(task) == task and task.snapshot().values["prompt_context"] == str(one)


def test_a_task_given_a_string_after_a_link_holds_the_string():
    [one] = chain(1)
    task = Task("1.1", "next")
    task.hold_prompt_context(one)
    task.prompt_context = "plain"
    assert task.held_prompt_context() == task.prompt_context == "plain"
    task.hold_prompt_context(None)
    assert task.prompt_context is None and task.execution_text() == "next"
