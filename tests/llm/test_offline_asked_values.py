"""What an offline answer quotes for a question that asks for a value, and how it quotes a list
item (docs/offline.md, "Writing answers": values asked, list items). Texts written here; the
passages go through the real Prompts and client, as a pipeline's do."""

from __future__ import annotations

from runner.text.questions import (
    DURATION,
    MONEY,
    NUMBER,
    PERCENT,
    parts,
    unit_values,
)

from .test_offline_answers import answer, page


def asked(question: str) -> list[frozenset[str]]:
    return [part.values for part in parts(question)]


# --- the kind of value a question asks for ------------------------------------------------


def test_a_question_about_a_fee_asks_an_amount_of_money() -> None:
    assert asked("What is the no-fault-found fee?") == [frozenset({MONEY})]


def test_how_much_something_costs_asks_an_amount_of_money() -> None:
    assert asked("How much does a repair cost?") == [frozenset({MONEY})]


def test_how_many_years_asks_a_duration() -> None:
    assert asked("How many years are spare parts kept?") == [frozenset({DURATION})]


def test_how_long_asks_a_duration() -> None:
    assert asked("How long does delivery take?") == [frozenset({DURATION})]


def test_a_question_naming_a_period_asks_a_duration() -> None:
    assert asked("What is the warranty period?") == [frozenset({DURATION})]


def test_a_duration_named_as_a_topic_asks_no_duration() -> None:
    assert DURATION not in asked("syntax for a duration like '1 day 2 hours'")[0]


def test_a_percentage_of_a_price_asks_a_percentage_not_money() -> None:
    assert asked("What percentage of the price is refunded?") == [frozenset({PERCENT})]


def test_another_quantity_asks_a_number() -> None:
    assert asked("How many arguments can a function take?") == [frozenset({NUMBER})]


def test_a_word_naming_an_amount_asks_no_number_without_how_many() -> None:
    assert asked("convert hex string to decimal number") == [frozenset()]


def test_each_part_of_a_question_asks_its_own_value() -> None:
    question = "How many years are oven parts stocked, and what is the call-out fee?"
    assert asked(question) == [frozenset({DURATION}), frozenset({MONEY})]


def test_a_question_without_a_quantity_asks_no_value() -> None:
    assert asked("What warranty do I get on my washing machine?") == [frozenset()]


def test_paying_without_asking_how_much_asks_no_value() -> None:
    assert asked("Can I pay by card?") == [frozenset()]


# --- the values a unit states ---------------------------------------------------------------


def test_an_amount_with_a_currency_is_money() -> None:
    assert MONEY in unit_values("The fee of €65 is charged.")
    assert MONEY in unit_values("It costs 15 EUR.")


def test_free_of_charge_is_money() -> None:
    assert MONEY in unit_values("The visit is free of charge.")


def test_a_number_of_a_time_unit_is_a_duration() -> None:
    assert DURATION in unit_values("Parts are kept for 10 years.")
    assert DURATION in unit_values("Delivery takes three working days.")


def test_a_bare_mention_states_no_value() -> None:
    assert unit_values("The fee is waived once per plan year.") == frozenset()


# --- answers --------------------------------------------------------------------------------


def test_a_unit_stating_the_amount_asked_is_quoted_over_one_that_only_names_the_fee() -> None:
    fees = page(
        "## Fees\n\nWith Care+, the no-fault-found fee is waived.\n\n"
        "The no-fault-found fee of €65 is charged during the warranty when the engineer finds "
        "that the appliance is not defective, or that the problem is caused by something the "
        "warranty excludes.\n",
        "fees.md",
        5,
    )
    assert answer("What is the no-fault-found fee?", fees) == (
        "The no-fault-found fee of €65 is charged during the warranty when the engineer finds "
        "that the appliance is not defective, or that the problem is caused by something the "
        "warranty excludes. [fees.md p. 5]"
    )


CARE = page(
    "## What Care+ covers\n\n"
    "During the Care+ period, Kestrel repairs breakdowns with no charge for:\n\n"
    "- parts;\n- labour;\n- the no-fault-found fee, once per plan year.\n\n"
    "Care+ also includes a priority booking line.\n",
    "care.md",
    2,
)


def test_a_list_item_is_quoted_with_the_sentence_that_introduces_its_list() -> None:
    assert answer("Do I pay the no-fault-found fee with Care+?", CARE) == (
        "During the Care+ period, Kestrel repairs breakdowns with no charge for: "
        "- the no-fault-found fee, once per plan year. [care.md p. 2]"
    )


def test_a_list_item_no_sentence_introduces_is_quoted_alone() -> None:
    steps = page(
        "## Delivery\n\nOrders are packed by hand.\n\n"
        "- Parts in stock are dispatched within one day.\n- Returns are free.\n",
        "parts.md",
        8,
    )
    assert answer("When are parts in stock dispatched?", steps) == (
        "- Parts in stock are dispatched within one day. [parts.md p. 8]"
    )


def test_a_value_asked_is_a_preference_not_a_bar() -> None:
    # the only unit stating a number holds too little of the question to answer it alone
    matching = page(
        "## Matching\n\nThe matcher counts how many times each single item appears in the "
        "sequence. If the copies of an item after the first pass 1% of a sequence of 200 items, "
        "that item is ignored while matching.\n",
        "m.md",
        1,
    )
    timing = page(
        "## Timing\n\nThe run time is cubic in the worst case. The time is linear at best. Each "
        "time is kept. The time grows with the input.\n",
        "t.md",
        2,
    )
    reply = answer(
        "count how many times an item appears in a tuple and find where it first occurs",
        matching,
        timing,
    )
    assert reply.startswith(
        "The matcher counts how many times each single item appears in the sequence."
    )


BATTERY = page(
    "## Battery\n\nThe XR-200 is our lightest vacuum. Its battery lasts 10 hours.\n\n"
    "Charging takes three hours.\n",
    "vacuum.md",
    3,
)


def test_a_sentence_pointing_back_is_quoted_with_the_sentence_it_points_at() -> None:
    # "Its battery lasts 10 hours" states the duration asked; what "its" is, the one before says
    assert answer("How many hours does the XR-200 battery last?", BATTERY) == (
        "The XR-200 is our lightest vacuum. Its battery lasts 10 hours. [vacuum.md p. 3]"
    )
