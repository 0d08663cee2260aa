"""`runner.llm.grounding`: an extracted value the conversation does not give is dropped, so
that the tool asks (issue 22, item 8)."""

from __future__ import annotations

from runner.llm.grounding import Dropped, grounded

SCHEMA = {
    "type": "object",
    "properties": {
        "model": {"type": "string"},
        "products": {"type": "array", "items": {"type": "string"}},
        "colour": {"enum": ["white", "black"]},
        "quantity": {"type": "integer"},
    },
}
TABLE = {"kw-620": "KW-620", "kw-720x": "KW-720X", "kd-450": "KD-450"}


def table_key(value: str) -> str | None:
    return TABLE.get(value.casefold())


def test_a_value_the_text_names_is_kept() -> None:
    assert grounded({"model": "KW-620"}, "Is my KW-620 quiet?", SCHEMA, table_key) == (
        {"model": "KW-620"},
        [],
    )


def test_a_value_spelt_another_way_in_the_text_is_kept() -> None:
    kept, dropped = grounded({"model": "KW-620"}, "is my kw 620 quiet", SCHEMA, table_key)
    assert kept == {"model": "KW-620"} and dropped == []


def test_a_value_inflecting_the_texts_words_is_kept() -> None:
    schema = {"type": "object", "properties": {"topic": {"type": "string"}}}
    kept, _dropped = grounded({"topic": "descaling"}, "How do I descale it?", schema, table_key)
    assert kept == {"topic": "descaling"}


def test_an_invented_value_is_dropped() -> None:
    kept, dropped = grounded(
        {"model": "KD-300i"}, "What warranty do I get on my washing machine?", SCHEMA, table_key
    )
    assert kept == {}
    assert dropped == [Dropped("model", "KD-300i")]


def test_a_known_value_the_text_does_not_point_at_is_dropped() -> None:
    kept, _dropped = grounded(
        {"model": "KW-620"}, "What warranty do I get on my washing machine?", SCHEMA, table_key
    )
    assert kept == {}


def test_a_known_value_the_text_points_at_by_its_number_is_kept() -> None:
    kept, _dropped = grounded(
        {"model": "KW-720X"}, "the Signature 720X, what warranty?", SCHEMA, table_key
    )
    assert kept == {"model": "KW-720X"}


def test_a_list_keeps_its_grounded_items() -> None:
    kept, dropped = grounded(
        {"products": ["KD-450", "KW-999"]},
        "Compare the KD-450 and the other one",
        SCHEMA,
        table_key,
    )
    assert kept == {"products": ["KD-450"]}
    assert dropped == [Dropped("products", "KW-999")]


def test_a_list_with_nothing_grounded_is_left_out() -> None:
    kept, _dropped = grounded({"products": ["KW-999"]}, "Compare them", SCHEMA, table_key)
    assert kept == {}


def test_values_the_schema_lists_and_numbers_are_not_checked() -> None:
    params = {"colour": "white", "quantity": 3}
    assert grounded(params, "three of the pale ones", SCHEMA, table_key) == (params, [])


def test_the_message_names_the_tool_the_parameter_and_the_value() -> None:
    message = Dropped("model", "KD-300i").message("warranty_check")
    assert message.startswith("warranty_check: the extracted model 'KD-300i' is dropped")
