"""Issue 29, point 4: offline extraction never gives one value to two parameters, places numbers
by the words around them, reads paths, file names, time zones, URLs and e-mail addresses whole,
and leaves out what it cannot place (so a tool with `clarify` asks, C24)."""

from __future__ import annotations

import string
import time
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from runner.llm.providers.offline_extract import extract, shape_of

NUMBER = {"type": "number"}
INTEGER = {"type": "integer"}
TEXT = {"type": "string"}


def schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def pair(text: str, first: str = "a", second: str = "b") -> dict[str, Any]:
    return extract(text, schema(**{first: NUMBER, second: NUMBER}), {})


# --- the examples -------------------------------------------------------------------


def test_the_sum_of_3_and_4_is_a_3_and_b_4() -> None:
    assert pair("What is the sum of 3 and 4?") == {"a": 3, "b": 4}


def test_add_12_plus_30_is_a_12_and_b_30() -> None:
    assert pair("Add 12 plus 30") == {"a": 12, "b": 30}


def test_between_5_and_9_is_the_low_then_the_high() -> None:
    assert pair("Any price between 5 and 9", "low", "high") == {"low": 5, "high": 9}


def test_from_5_to_9_is_the_start_then_the_end() -> None:
    assert pair("pages from 5 to 9", "start", "end") == {"start": 5, "end": 9}


def test_an_unquoted_area_city_time_zone_is_read_whole() -> None:
    found = extract("What time is it in Europe/Paris?", schema(timezone=TEXT), {})
    assert found == {"timezone": "Europe/Paris"}


def test_a_city_alone_is_no_time_zone_and_is_left_out() -> None:
    assert extract("What time is it in Tokyo?", schema(timezone=TEXT), {}) == {}


# --- numbers placed by the words around them --------------------------------------------------


def test_a_number_goes_to_the_field_its_neighbouring_word_names() -> None:
    found = extract("height 80 and width 60", schema(width=NUMBER, height=NUMBER), {})
    assert found == {"width": 60, "height": 80}


def test_a_word_after_the_number_names_its_field_too() -> None:
    found = extract("3 rooms for 2 nights", schema(nights=INTEGER, rooms=INTEGER), {})
    assert found == {"nights": 2, "rooms": 3}


def test_a_one_letter_name_places_a_number_only_as_an_assignment() -> None:
    assert pair("b = 4 and a = 9") == {"a": 9, "b": 4}


def test_subtract_3_from_10_puts_10_first() -> None:
    assert pair("Subtract 3 from 10") == {"a": 10, "b": 3}


def test_a_run_of_joined_numbers_is_placed_past_other_numbers() -> None:
    assert pair("My 2 kids ask: what is the sum of 3 and 4?") == {"a": 3, "b": 4}


def test_numbers_that_cannot_be_told_apart_are_left_out() -> None:
    assert pair("3 apples, 7 pears, 2 bags") == {}


def test_a_number_with_no_word_for_its_field_among_several_is_left_out() -> None:
    found = extract("Order 2 lamps under 49 euros", schema(quantity=INTEGER), {})
    assert found == {}


def test_an_integer_field_takes_no_fraction() -> None:
    found = extract("under 49.5 euros", schema(budget=NUMBER, quantity=INTEGER), {})
    assert found == {"budget": 49.5}


def test_thousands_separators_make_one_number() -> None:
    assert extract("a budget of 1,500", schema(budget=NUMBER), {}) == {"budget": 1500}


# --- values read whole by their shape -------------------------------------------------------


def test_an_unquoted_path_is_read_whole() -> None:
    found = extract("Show me /var/log/nginx/error.log please", schema(path=TEXT), {})
    assert found == {"path": "/var/log/nginx/error.log"}


def test_a_home_relative_and_a_relative_path_are_paths() -> None:
    found = extract("copy ~/notes/todo.txt to src/main.py", schema(source=TEXT, target=TEXT), {})
    assert found == {"source": "~/notes/todo.txt", "target": "src/main.py"}


def test_a_file_name_is_read_whole() -> None:
    found = extract("Open report-2024.v2.pdf now", schema(filename=TEXT), {})
    assert found == {"filename": "report-2024.v2.pdf"}


def test_a_url_is_read_whole_without_the_sentences_full_stop() -> None:
    found = extract("Fetch https://example.org/a/b?q=1&x=2.", schema(url=TEXT), {})
    assert found == {"url": "https://example.org/a/b?q=1&x=2"}


def test_an_email_address_is_read_whole() -> None:
    found = extract("Write to jane.doe+desk@mail.example.com.", schema(email=TEXT), {})
    assert found == {"email": "jane.doe+desk@mail.example.com"}


def test_two_time_zones_go_where_from_and_to_say() -> None:
    fields = schema(source_timezone=TEXT, target_timezone=TEXT)
    found = extract("Convert 9am to Asia/Tokyo from Europe/Paris", fields, {})
    assert found == {"source_timezone": "Europe/Paris", "target_timezone": "Asia/Tokyo"}


def test_a_shaped_value_is_not_split_into_names_for_a_plain_field() -> None:
    assert extract("the weather in America/New_York", schema(city=TEXT), {}) == {
        "city": "America/New_York"
    }


def test_the_shape_is_read_from_the_format_or_the_description() -> None:
    assert shape_of("target", {"format": "uri"}) == "url"
    assert shape_of("where", {"description": "The IANA time zone, e.g. Europe/Oslo"}) == "zone"
    assert shape_of("city", {"description": "A city name"}) is None


# --- never one value for two parameters -----------------------------------------------------


def test_one_name_is_not_given_to_two_string_fields() -> None:
    found = extract("Is the Aurora Lamp in stock?", schema(product=TEXT, other=TEXT), {})
    assert found == {"product": "Aurora Lamp"}


def test_a_value_given_to_a_field_is_not_in_an_array_too() -> None:
    fields = schema(first=TEXT, rest={"type": "array", "items": TEXT})
    found = extract('"Night Owl", "Aurora Lamp" and "Desk Fan"', fields, {})
    assert found == {"first": "Night Owl", "rest": ["Aurora Lamp", "Desk Fan"]}


numbers = st.integers(min_value=-999, max_value=99_999)


@settings(max_examples=200, deadline=None)
@given(st.lists(numbers, min_size=2, max_size=4, unique=True), st.sampled_from(["and", "plus"]))
def test_no_two_fields_share_a_number_the_text_gives_once(values: list[int], joiner: str) -> None:
    text = "Please add " + f" {joiner} ".join(str(v) for v in values)
    fields = schema(**{f"n{i}": NUMBER for i in range(len(values) + 1)})
    found = list(extract(text, fields, {}).values())
    assert sorted(found) == sorted(set(found))  # no value twice
    assert set(found) <= set(values)


@settings(max_examples=200, deadline=None)
@given(numbers, numbers, st.sampled_from(["the sum of {} and {}", "{} plus {}", "add {} to {}"]))
def test_a_symmetric_pair_is_placed_in_the_order_of_mention(x: int, y: int, form: str) -> None:
    assert pair("What is " + form.format(x, y) + "?") == {"a": x, "b": y}


@settings(max_examples=200, deadline=None)
@given(numbers, numbers)
def test_between_and_from_to_give_the_bounds_in_order(low: int, high: int) -> None:
    assert pair(f"between {low} and {high}", "low", "high") == {"low": low, "high": high}
    assert pair(f"from {low} to {high}", "start", "end") == {"start": low, "end": high}


segment = st.text(string.ascii_letters + string.digits + "_-", min_size=1, max_size=8)


@settings(max_examples=200, deadline=None)
@given(st.lists(segment, min_size=1, max_size=4), st.sampled_from(["", ".log", ".tar.gz"]))
def test_any_absolute_path_is_read_whole(parts: list[str], extension: str) -> None:
    path = "/" + "/".join(parts) + extension
    assert extract(f"Please read {path} for me.", schema(path=TEXT), {}) == {"path": path}


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["Europe", "America", "Asia", "Australia", "Africa", "Pacific"]),
    st.text(string.ascii_letters, min_size=2, max_size=10).map(str.capitalize),
)
def test_any_area_city_zone_is_read_whole(area: str, city: str) -> None:
    zone = f"{area}/{city}"
    assert extract(f"What time is it in {zone}?", schema(timezone=TEXT), {}) == {"timezone": zone}


@settings(max_examples=200, deadline=None)
@given(segment, segment, st.lists(segment, max_size=3))
def test_any_url_is_read_whole(host: str, tld: str, parts: list[str]) -> None:
    url = f"https://{host}.{tld.lower() or 'org'}/" + "/".join(parts)
    assert extract(f"open {url} now", schema(url=TEXT), {}) == {"url": url}


def test_a_plain_text_field_leaves_the_url_to_the_url_field() -> None:
    found = extract("Send Foo Bar to https://x.org/p", schema(name=TEXT, url=TEXT), {})
    assert found == {"name": "Foo Bar", "url": "https://x.org/p"}


def test_an_array_takes_at_most_100_values() -> None:
    text = " ".join(f"KD-{number}" for number in range(150))
    found = extract(text, schema(models={"type": "array", "items": TEXT}), {})
    assert found["models"] == [f"KD-{number}" for number in range(100)]


def test_a_long_message_is_read_in_linear_time() -> None:
    # each value's neighbourhood is found by bisection: a 100 kB message takes about a second
    # (read quadratically, a minute)
    text = " ".join(
        f"item {i} costs {i * 3} at https://x{i}.org/p and Foo Bar{i}" for i in range(1800)
    )
    started = time.perf_counter()
    extract(text, schema(a=NUMBER, width=NUMBER, name=TEXT, url=TEXT), {})
    assert time.perf_counter() - started < 15
