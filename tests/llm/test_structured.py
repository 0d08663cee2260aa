from __future__ import annotations

import pytest

from runner.llm.structured import InvalidReply, parse

SCHEMA = {
    "type": "object",
    "properties": {"enough": {"type": "boolean"}},
    "required": ["enough"],
}
ANYTHING: dict[str, object] = {}  # a schema every JSON value meets: parse finds the first one


def test_json_in_a_fence_is_found() -> None:
    assert parse('Sure:\n```json\n{"enough": true}\n```\nDone.', ANYTHING) == {"enough": True}


def test_json_in_prose_is_found_by_balanced_braces() -> None:
    reply = 'I think {not json} but here: {"a": {"b": "}"}, "c": [1, 2]} hope it helps'
    assert parse(reply, ANYTHING) == {"a": {"b": "}"}, "c": [1, 2]}


def test_a_bare_array_is_found() -> None:
    assert parse('["x", "y"]', ANYTHING) == ["x", "y"]


def test_a_reply_without_json_is_invalid() -> None:
    with pytest.raises(InvalidReply, match="no JSON found"):
        parse("I cannot answer that.", ANYTHING)


def test_validation_names_the_place_and_the_problem() -> None:
    with pytest.raises(InvalidReply, match=r"at enough: 'yes' is not of type 'boolean'"):
        parse('{"enough": "yes"}', SCHEMA)


def test_a_reply_is_never_evaluated_as_code() -> None:
    with pytest.raises(InvalidReply):
        parse('__import__("os").system("echo pwned")', ANYTHING)


GATE = {
    "type": "object",
    "properties": {"enough": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["enough"],
}
TWO_TOOLS = {
    "type": "object",
    "properties": {"a": {"type": "boolean"}, "b": {"type": "boolean"}},
    "required": ["a", "b"],
}


@pytest.mark.parametrize(
    ("reply", "enough"), [("False", False), ("yes", True), ("NO.", False), (" true ", True)]
)
def test_a_bare_word_answers_a_single_boolean(reply: str, enough: bool) -> None:
    assert parse(reply, GATE)["enough"] is enough


def test_a_bare_word_is_no_answer_when_the_schema_asks_for_two_booleans() -> None:
    with pytest.raises(InvalidReply):
        parse("yes", TWO_TOOLS)


def test_a_word_that_only_starts_like_yes_is_not_one() -> None:
    with pytest.raises(InvalidReply):
        parse("yesterday it worked", GATE)


def test_the_first_value_that_meets_the_schema_wins() -> None:
    assert parse('Given {"x": 1}, my answer: {"enough": true}', GATE) == {"enough": True}


def test_a_schema_echo_is_named_as_such() -> None:
    from runner.llm.structured import EchoedSchema

    with pytest.raises(EchoedSchema, match="JSON Schema itself"):
        parse('{"type": "object", "properties": {"enough": {"type": "boolean"}}}', GATE)


def test_an_echo_of_the_properties_alone_is_an_echo_too() -> None:
    from runner.llm.structured import EchoedSchema

    with pytest.raises(EchoedSchema):
        parse('{"a": {"type": "boolean"}, "b": {"type": "boolean"}}', TWO_TOOLS)
