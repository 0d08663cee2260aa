from __future__ import annotations

import pytest

from runner.llm.structured import InvalidReply, find_json, parse

SCHEMA = {
    "type": "object",
    "properties": {"enough": {"type": "boolean"}},
    "required": ["enough"],
}


def test_json_in_a_fence_is_found() -> None:
    assert find_json('Sure:\n```json\n{"enough": true}\n```\nDone.') == {"enough": True}


def test_json_in_prose_is_found_by_balanced_braces() -> None:
    reply = 'I think {not json} but here: {"a": {"b": "}"}, "c": [1, 2]} hope it helps'
    assert find_json(reply) == {"a": {"b": "}"}, "c": [1, 2]}


def test_a_bare_array_is_found() -> None:
    assert find_json('["x", "y"]') == ["x", "y"]


def test_a_reply_without_json_is_invalid() -> None:
    with pytest.raises(InvalidReply, match="no JSON found"):
        find_json("I cannot answer that.")


def test_validation_names_the_place_and_the_problem() -> None:
    with pytest.raises(InvalidReply, match=r"at enough: 'yes' is not of type 'boolean'"):
        parse('{"enough": "yes"}', SCHEMA)


def test_a_reply_is_never_evaluated_as_code() -> None:
    with pytest.raises(InvalidReply):
        find_json('__import__("os").system("echo pwned")')
