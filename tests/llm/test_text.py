from __future__ import annotations

from runner.text.words import (
    content_words,
    coverage,
    estimate_tokens,
    sentences,
    stem,
    tokenize,
)


def test_tokenize_keeps_model_numbers_whole_and_drops_possessives() -> None:
    assert tokenize("The XR-200's battery, v2.1!") == ["the", "xr-200", "battery", "v2.1"]


def test_related_forms_share_a_stem() -> None:
    assert stem("batteries") == stem("battery")
    assert stem("charging") == stem("charge") == stem("charged")
    assert stem("compatibility") == stem("compatible")
    assert stem("running") == stem("run")


def test_tokens_with_digits_are_not_stemmed() -> None:
    assert stem("A320s") == "a320s"


def test_content_words_drop_stop_words_and_repeats_in_order() -> None:
    words = content_words("How do I charge the XR-200 batteries? The battery is charging slowly.")
    assert words == ["charge", "xr-200", "batteries", "slowly"]


def test_coverage_counts_required_words_present_by_stem() -> None:
    assert coverage(["battery", "warranty"], "Batteries last ten hours.") == 0.5
    assert coverage([], "anything") == 1.0


def test_sentences_split_prose_and_list_items() -> None:
    text = "First one. Second one! Third?\n\n- item one\n- item two"
    assert sentences(text) == ["First one.", "Second one!", "Third?", "- item one", "- item two"]


def test_token_estimate_counts_words_and_punctuation() -> None:
    assert estimate_tokens("Hello, world!") == 4


def test_a_bare_list_marker_stays_with_its_sentence() -> None:
    assert sentences("Steps follow. 1. Fill it. 2. Boil it.") == [
        "Steps follow.",
        "1. Fill it.",
        "2. Boil it.",
    ]


def test_the_degree_word_of_a_how_question_is_not_a_content_word() -> None:
    # only after "how": "a long cable" keeps its "long"
    assert content_words("How long is the warranty on a long cable?") == [
        "warranty",
        "long",
        "cable",
    ]
