"""C33 for the deep search's supplement: `Prompts.compose` numbers the answers it shows the
compose template as `Prompts.answer` does, the reply cites them as `[n]`, and the markers become
runner's citations; the answers cited are the ones the supplement drew on (all of them when it
cites none) — for every provider alike."""

from __future__ import annotations

from runner.config.model import ScriptRule
from runner.llm.prompts import Answer, Passage, Prompts
from runner.sources import Source

from .helpers import Recorder, offline, run, scripted

KETTLE = Passage(
    "[kettle.md, page 3] Descale every four weeks.", (Source("kettle.md", 3),), "1.1.n:n", True
)
TOASTER = Passage(
    "[toaster.md, page 3] Three years from purchase.", (Source("toaster.md", 3),), "1.2.s:s", True
)
# a search that read two pages answers with both, each under its label
TWO_PAGES = Passage(
    "[oven.md, page 1] Ovens keep parts for ten years.\n\n[fees.md, page 5] Repairs cost 40 euros.",
    (Source("oven.md", 1), Source("fees.md", 5)),
    "1.3.s:s",
    True,
)


def compose_with(reply: str, answers=(KETTLE, TOASTER, TWO_PAGES)) -> Answer:
    """The supplement when the model replies `reply` (the scripted provider)."""
    client = scripted(ScriptRule(reply=reply, purpose="compose"))
    return run(Prompts(client).compose("Descaling and warranty?", list(answers), tool="deep"))


# --- a model's markers --------------------------------------------------------------------


def test_c33_compose_markers_become_runners_citations_of_the_answers_they_name() -> None:
    composed = compose_with("Descale monthly [1]; the warranty is three years [2].")
    assert composed.text == (
        "Descale monthly [kettle.md p. 3]; the warranty is three years [toaster.md p. 3]."
    )
    assert composed.used == (KETTLE, TOASTER)


def test_c33_compose_uses_only_the_answers_it_cites() -> None:
    composed = compose_with("The warranty is three years [2].")
    assert composed.text == "The warranty is three years [toaster.md p. 3]."
    assert composed.used == (TOASTER,)


def test_c33_compose_numbers_a_result_of_several_pages_one_page_at_a_time() -> None:
    recorder = Recorder(scripted(ScriptRule(reply="Repairs cost 40 euros [4].", purpose="compose")))
    composed = run(Prompts(recorder).compose("Repair fee?", [KETTLE, TOASTER, TWO_PAGES], tool="d"))
    assert composed.text == "Repairs cost 40 euros [fees.md p. 5]."
    assert [p.sources for p in composed.used] == [(Source("fees.md", 5),)]
    [(request, _)] = recorder.seen
    assert [(a["number"], a["sources"][0]["document"]) for a in request.facts["answers"]] == [
        (1, "kettle.md"),
        (2, "toaster.md"),
        (3, "oven.md"),
        (4, "fees.md"),
    ]
    assert "[3]\n[oven.md, page 1] Ovens keep parts for ten years." in request.prompt
    assert "[4]\n[fees.md, page 5] Repairs cost 40 euros." in request.prompt
    assert "[1] or [2, 3]" in request.prompt  # the default template asks for markers


def test_c33_compose_counts_a_citation_already_in_runners_format() -> None:
    composed = compose_with("Descale monthly [kettle.md p. 3].")
    assert composed.text == "Descale monthly [kettle.md p. 3]."
    assert composed.used == (KETTLE,)


# --- no markers ---------------------------------------------------------------------------


def test_c33_a_compose_reply_without_markers_drew_on_every_answer() -> None:
    composed = compose_with("Descale monthly; the warranty is three years.")
    assert composed.text == "Descale monthly; the warranty is three years."
    assert [p.sources for p in composed.used] == [
        (Source("kettle.md", 3),),
        (Source("toaster.md", 3),),
        (Source("oven.md", 1),),
        (Source("fees.md", 5),),
    ]


def test_c33_a_compose_reply_whose_markers_name_nothing_drew_on_every_answer() -> None:
    composed = compose_with("Three years [9].", answers=(KETTLE, TOASTER))
    assert composed.text == "Three years."
    assert composed.used == (KETTLE, TOASTER)


# --- the offline provider cites with markers like any model -------------------------------


def test_c33_offline_compose_cites_by_number_and_uses_only_the_pages_it_quotes() -> None:
    client, _ = offline()
    recorder = Recorder(client)
    composed = run(Prompts(recorder).compose("Repair fee?", [KETTLE, TWO_PAGES], tool="deep"))
    [(_, raw)] = recorder.seen
    # every page answer is guaranteed (the pages were read): each is quoted, by its number
    assert raw.splitlines() == [
        "Descale every four weeks. [1]",
        "Ovens keep parts for ten years. [2]",
        "Repairs cost 40 euros. [3]",
    ]
    assert composed.text.splitlines() == [
        "Descale every four weeks. [kettle.md p. 3]",
        "Ovens keep parts for ten years. [oven.md p. 1]",
        "Repairs cost 40 euros. [fees.md p. 5]",
    ]
    assert [p.sources for p in composed.used] == [
        (Source("kettle.md", 3),),
        (Source("oven.md", 1),),
        (Source("fees.md", 5),),
    ]


def test_c33_offline_compose_leaves_out_the_unread_pages_it_does_not_quote() -> None:
    # pages a search handed over unread (plain context) compete: only the relevant one is used
    battery = Passage("The XR-200 battery lasts 10 hours.", (Source("manual.md", 3),))
    policy = Passage("Every product has a two-year warranty.", (Source("policy.md", 1),))
    _, prompts = offline()
    composed = run(prompts.compose("battery hours", [battery, policy], tool="deep"))
    assert composed.text == "The XR-200 battery lasts 10 hours. [manual.md p. 3]"
    assert composed.used == (battery,)


def test_c33_offline_compose_keeps_an_answers_own_other_citation() -> None:
    # a page answer that already cites another page keeps that citation, not cited again
    cited = Passage(
        "Ovens keep parts for ten years. [parts.md p. 2]", (Source("oven.md", 1),), "1.1.n:n", True
    )
    _, prompts = offline()
    composed = run(prompts.compose("How long are oven parts kept?", [cited], tool="deep"))
    assert composed.text == "Ovens keep parts for ten years. [parts.md p. 2]"
    assert composed.used == (cited,)


def test_c33_offline_compose_that_finds_nothing_says_so_and_cites_nothing() -> None:
    unread = Passage("The case is blue.", (Source("manual.md", 3),))
    _, prompts = offline()
    composed = run(prompts.compose("Who painted the ceiling?", [unread], tool="deep"))
    assert composed.text == "The available context does not answer this question."
    assert composed.used == (unread,)  # no markers: it drew on all it was given
