"""Reading by meaning a question that names a model number (docs/offline.md, "Reading by
meaning", model numbers): the model reads `KW-620` and `KW-720X` alike, and a sentence sharing
the number seems to mean the question. One behaviour per test, the model's cosines given."""

from __future__ import annotations

import pytest

from runner.llm.providers import offline_meaning

from .test_offline_reading import answer, meant

TWO_PARTS = "Is the KW-620 quiet? And what is the warranty?"
WARRANTY = "The KW-620 has a standard warranty of 2 years."


def given_cosines(monkeypatch: pytest.MonkeyPatch, by_text: dict[tuple[str, str], float]) -> None:
    """Each (start of the question or part read, text of the unit) -> its cosine; 0 otherwise."""

    def cosines(_model: object, question: str, texts: list[str]) -> list[float]:
        def value(text: str) -> float:
            found = (v for (q, t), v in by_text.items() if question.startswith(q) and t in text)
            return next(found, 0.0)

        return [value(text) for text in texts]

    monkeypatch.setattr(offline_meaning, "cosines", cosines)


def test_a_sentence_holding_only_the_asked_model_number_is_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # its cosine with the whole question is raised by the number it shares, not by "quiet"
    brushes = "On the KW-620, worn carbon brushes are common after about 8 years."
    given_cosines(monkeypatch, {("Is the KW-620", brushes): 0.4, ("Is the KW-620", WARRANTY): 0.6})
    reply = answer(TWO_PARTS, meant(WARRANTY, "a.md", first=True), meant(brushes, "b.md"))
    assert reply == f"{WARRANTY} [a.md p. 1]"


def test_a_unit_holding_only_the_model_number_stays_when_it_means_the_part_read_as_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # "Is it quiet" means the noise row; its words are not the question's
    noise = "The KW-620 spins at 76 dB."
    given_cosines(
        monkeypatch,
        {
            ("Is the KW-620", noise): 0.4,
            ("Is it quiet", noise): 0.33,
            ("Is the KW-620", WARRANTY): 0.6,
        },
    )
    reply = answer(TWO_PARTS, meant(WARRANTY, "a.md", first=True), meant(noise, "b.md"))
    assert f"{noise} [b.md p. 1]" in reply


def test_a_sentence_about_other_models_of_the_family_is_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # on a page that names the KW-620, a sentence about the KW-720X and the KW-820X
    others = "The KW-720X and the KW-820X carry a 10-year warranty on the motor."
    page = meant(f"The KW-620 is made in Poland. {others}", "b.md")
    given_cosines(monkeypatch, {("Is the KW-620", WARRANTY): 0.6, ("Is the KW-620", others): 0.5})
    reply = answer(TWO_PARTS, meant(WARRANTY, "a.md", first=True), page)
    assert reply == f"{WARRANTY} [a.md p. 1]"


def test_a_page_naming_only_other_products_is_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    # a robot vacuum's page: its "quiet" sentence means the question, not the washing machine
    vacuum = "The KV-500X has a quiet mode for the evenings."
    given_cosines(monkeypatch, {("Is the KW-620", WARRANTY): 0.6, ("Is the KW-620", vacuum): 0.5})
    reply = answer(TWO_PARTS, meant(WARRANTY, "a.md", first=True), meant(vacuum, "b.md"))
    assert reply == f"{WARRANTY} [a.md p. 1]"


def test_a_page_naming_no_model_number_may_still_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    policy = "Every appliance carries a warranty of at least 2 years."
    given_cosines(monkeypatch, {("Is the KW-620", WARRANTY): 0.6, ("Is the KW-620", policy): 0.5})
    reply = answer(TWO_PARTS, meant(WARRANTY, "a.md", first=True), meant(policy, "b.md"))
    assert f"{policy} [b.md p. 1]" in reply


def test_reading_on_stops_at_a_unit_about_another_model(monkeypatch: pytest.MonkeyPatch) -> None:
    quiet = "The KW-620 is quiet."
    softly = "Its drum spins very softly."
    sibling = "The KW-720X spins more softly still."
    page = meant(f"The KW-620 is a washing machine. {softly} {sibling}", "b.md")
    given_cosines(
        monkeypatch,
        {
            ("Is the KW-620", quiet): 0.7,
            ("Is the KW-620", softly): 0.6,
            ("Is the KW", sibling): 0.5,
        },
    )
    reply = answer("Is the KW-620 quiet?", meant(quiet, "a.md", first=True), page)
    assert softly in reply and sibling not in reply


# --- bare codes: an error or alarm code (`E24`) is one of a series; another of its letters is
# another fault

E24 = "E24 means the software update was interrupted."
CODES = "What does error E24 mean?"


def test_a_section_on_another_code_of_the_series_is_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    other = "Call Kestrel Service."  # under the heading of another code, naming none itself
    given_cosines(monkeypatch, {("What does", E24): 0.6, ("What does", other): 0.5})
    reply = answer(
        CODES, meant(E24, "a.md", first=True), meant(f"# E20 — Display fault\n\n{other}", "b.md")
    )
    assert reply == f"{E24} [a.md p. 1]"


def test_a_sentence_naming_another_code_of_the_series_is_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    other = "If E20 returns, call Kestrel Service."
    given_cosines(monkeypatch, {("What does", E24): 0.6, ("What does", other): 0.5})
    reply = answer(CODES, meant(E24, "a.md", first=True), meant(other, "b.md"))
    assert reply == f"{E24} [a.md p. 1]"


def test_a_page_whose_title_names_every_code_is_not_about_the_asked_one_for_that(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the document's title above each section names the series; the section's heading says
    # which code it is about
    other = "If the display stays dark, call Kestrel Service."
    page = meant(f"# Error codes E1 to E24 › E20 — Display fault\n\n{other}", "b.md")
    given_cosines(monkeypatch, {("What does", E24): 0.6, ("What does", other): 0.5})
    reply = answer(CODES, meant(E24, "a.md", first=True), page)
    assert other not in reply


def test_a_name_in_lower_case_with_digits_is_not_a_code_of_a_series(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `utf8` beside `utf16`: names of encodings, each of which may answer
    encodings = "Both utf16 and latin1 decode it too."
    given_cosines(monkeypatch, {("What does", "utf8 codec"): 0.6, ("What does", encodings): 0.5})
    reply = answer(
        "What does utf8 decode?",
        meant("The utf8 codec decodes any byte string.", "a.md", first=True),
        meant(encodings, "b.md"),
    )
    assert encodings in reply


def test_a_sentence_on_the_asked_codes_page_naming_another_code_is_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    other = "If E20 returns, call Kestrel Service."
    page = meant(f"E24 is shown after a power cut. {other}", "b.md")
    given_cosines(monkeypatch, {("What does", E24): 0.6, ("What does", other): 0.5})
    reply = answer(CODES, meant(E24, "a.md", first=True), page)
    assert other not in reply
