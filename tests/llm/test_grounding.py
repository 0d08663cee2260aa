"""`runner.llm.grounding`: an extracted value the conversation does not give is dropped, so
that the tool asks (issue 22, item 8)."""

from __future__ import annotations

from runner.llm.grounding import Dropped, grounded, unmarked

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


# --- issue 29, point 5: lists and objects alike; a coordinator's plan is its own -------------

PARTS = {
    "type": "object",
    "properties": {
        "parts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"model": {"type": "string"}, "question": {"type": "string"}},
            },
        },
        "questions": {"type": "array", "items": {"type": "string"}},
    },
}
PLAN = {
    "parts": [{"model": "KW-999", "question": "Which is quieter?"}],
    "questions": ["Which is quieter?"],
}


def test_a_tools_strings_inside_objects_of_a_list_are_checked_like_a_lists_strings() -> None:
    kept, dropped = grounded(PLAN, "Compare the two washers", PARTS, table_key)
    assert kept == {"parts": [{}]}
    assert dropped == [
        Dropped("parts.model", "KW-999"),
        Dropped("parts.question", "Which is quieter?"),
        Dropped("questions", "Which is quieter?"),
    ]


def test_a_plans_values_are_kept_as_the_coordinator_wrote_them() -> None:
    assert grounded(PLAN, "Compare the two washers", PARTS, table_key, plan=True) == (PLAN, [])


def test_a_plans_field_marked_user_given_is_checked_with_everything_inside_it() -> None:
    marked = {"type": "object", "properties": {**PARTS["properties"]}}
    marked["properties"]["parts"] = {**PARTS["properties"]["parts"], "user_given": True}
    kept, dropped = grounded(PLAN, "Compare the two washers", marked, table_key, plan=True)
    assert kept == {"parts": [{}], "questions": ["Which is quieter?"]}
    assert [d.parameter for d in dropped] == ["parts.model", "parts.question"]


def test_the_model_is_shown_the_schema_without_the_marks() -> None:
    schema = {
        "type": "object",
        "properties": {
            "model": {"type": "string", "user_given": True},
            "user_given": {"type": "boolean"},  # a parameter of that name stays
        },
    }
    assert unmarked(schema) == {
        "type": "object",
        "properties": {"model": {"type": "string"}, "user_given": {"type": "boolean"}},
    }
