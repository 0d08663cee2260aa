"""A `retrieve` tool's `excerpts: true` (runner.retrieval.excerpts): each page cut to the units
that bear on the task's text, under its citation and place, in page order, `…` where text was
left out; the page stays the cited source. Off (the default), pages go whole."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from runner.app import Runtime
from runner.config.keys import default
from runner.engine.state import SessionState
from runner.retrieval.excerpts import GAP, excerpts_context
from runner.retrieval.pages import Page
from runner.retrieval.reading import pages_context
from runner.sources import Source
from runner.tools.retrieve import meaning_cosines
from tests.retrieval.test_sections_first import MANUAL  # a long Descaling section, then two more

KETTLE = (
    "The kettle is made of brushed steel. It holds 1.7 litres of water. "
    "Descale the kettle every month with citric acid. Rinse it twice afterwards. "
    "The handle stays cool. "
    "The lid opens with a button."
)
TABLE = (
    "Spare parts are kept for years after a model ends:\n\n"
    "| Appliance | Functional parts | Cosmetic parts |\n"
    "|---|---|---|\n"
    "| Ovens | 10 years | 7 years |\n"
    "| Kettles | 5 years | 2 years |\n"
    "| Toasters | 4 years | 1 year |\n"
)


def _page(text: str, heading: str = "Care", number: int = 1) -> Page:
    return Page(
        node_id=f"kettle-{number}",
        document="kettle.md",
        page=number,
        title="Kettle manual",
        heading=heading,
        text=text,
    )


def _excerpt(pages: list[Page], task: str) -> str:
    return excerpts_context(pages, task, lambda page: pages_context([page]))


def test_a_page_is_cut_to_the_units_that_bear_on_the_task() -> None:
    text = _excerpt([_page(KETTLE)], "How often should I descale the kettle?")
    assert "Descale the kettle every month with citric acid." in text
    assert "The handle stays cool." not in text
    assert GAP in text


def test_the_excerpt_keeps_the_page_citation_and_place() -> None:
    text = _excerpt([_page(KETTLE)], "How often should I descale the kettle?")
    assert text.splitlines()[0] == "[kettle.md, page 1] Kettle manual › Care"


def test_a_table_row_keeps_its_table_header() -> None:
    text = _excerpt([_page(TABLE, heading="Spare parts")], "What about toasters?")
    assert "| Toasters | 4 years | 1 year |" in text
    assert "| Appliance | Functional parts | Cosmetic parts |" in text
    assert "| Ovens | 10 years | 7 years |" not in text


def test_a_page_none_of_whose_units_bears_is_kept_short() -> None:
    other = _page("Warranty lasts two years. Keep the receipt. Call the shop.", "Warranty", 2)
    text = _excerpt([_page(KETTLE), other], "How often should I descale the kettle?")
    warranty = text.split("\n\n")[1]
    assert warranty.startswith("[kettle.md, page 2] Kettle manual › Warranty")
    assert "Warranty lasts two years." in warranty
    assert "Call the shop." not in warranty


def test_by_meaning_a_unit_that_shares_no_word_with_the_task_bears() -> None:
    def cosines(task: str, texts: Sequence[str]) -> list[float]:
        return [0.9 if "handle" in text else 0.0 for text in texts]

    text = excerpts_context(
        [_page(KETTLE)], "Is it safe to hold?", lambda p: pages_context([p]), cosines=cosines
    )
    assert "The handle stays cool." in text


def test_only_a_search_by_meaning_reads_units_by_meaning() -> None:
    meaning = {"model": "all-MiniLM-L6-v2", "precision": "int8"}
    assert meaning_cosines({**meaning, "first": None}) is None  # a keyword search's
    assert meaning_cosines({**meaning, "first": {"document": "a.md", "page": 1}}) is not None


# --- through the tool --------------------------------------------------------------------------

PIPELINE = """\
version: 1
domain: kettles
llm: {provider: offline}
corpora:
  manuals: {path: manuals}
retrieval_tool: manuals_rag
tools:
  - {name: manuals_rag, kind: retrieve, corpus: manuals, top_k: 1EXCERPTS}
"""


def _retrieved(tmp_path: Path, excerpts: str) -> tuple[str, list[Source], list[str]]:
    """The retrieval's context, sources and page ids for a question about descaling."""
    (tmp_path / "manuals").mkdir()
    (tmp_path / "manuals" / "kettle.md").write_text(f"# Care\n\n{KETTLE}\n", encoding="utf-8")
    pipeline = PIPELINE.replace("EXCERPTS", excerpts)
    (tmp_path / "pipeline.yaml").write_text(pipeline, encoding="utf-8")
    runtime = Runtime.open(tmp_path / "pipeline.yaml", build_indexes=True)
    state = SessionState.new("excerpts", runtime.pipeline)
    with runtime:
        asyncio.run(runtime.orchestrator().run_round(state, "How often do I descale the kettle?"))
    entry = next(entry for _key, entries in state.buffer.items() for entry in entries)
    return entry.context, list(entry.sources), list(entry.data["pages"])


def test_with_excerpts_the_tool_hands_over_the_bearing_units(tmp_path: Path) -> None:
    context, _sources, _pages = _retrieved(tmp_path, ", excerpts: true")
    assert "Descale the kettle every month" in context
    assert "The handle stays cool." not in context


def test_with_excerpts_the_source_stays_the_whole_page(tmp_path: Path) -> None:
    _context, sources, pages = _retrieved(tmp_path, ", excerpts: true")
    assert [(source.document, source.page) for source in sources] == [("kettle.md", 1)]
    assert len(pages) == 1


def test_without_the_option_the_tool_hands_over_whole_pages(tmp_path: Path) -> None:
    context, _sources, _pages = _retrieved(tmp_path, "")
    assert "The handle stays cool." in context


def test_excerpts_are_off_unless_the_pipeline_asks() -> None:
    assert default("retrieve_tool", "excerpts") is False


# --- what comes with a bearing unit ------------------------------------------------------------

FLAGS = (
    "The kettle's modes are constants of the module.\n\n"
    "QUIET\n\n"
    "Heats the water slowly and without a sound. The lamp stays dim.\n\n"
    "BOIL_DRY\n\n"
    "Stops the heater when no water is left. The lamp blinks red.\n"
)


def test_a_description_comes_with_the_signature_line_it_describes() -> None:
    text = _excerpt([_page(FLAGS, heading="Modes")], "When does the lamp blink red?")
    assert "The lamp blinks red." in text
    assert "BOIL_DRY" in text
    assert "QUIET" not in text


FAQ = (
    "Most people notice it on the first morning. "
    "Steam rises through a narrow spout and makes the air vibrate. "
    "It is meant as a signal that tea can be made. "
    "The lid opens with a button."
)


def test_a_section_whose_heading_names_the_task_is_kept_though_its_text_shares_no_word() -> None:
    page = _page(FAQ, heading="Why does the kettle whistle?")
    text = _excerpt([page, _page(KETTLE, number=2)], "Why does my kettle whistle?")
    assert "It is meant as a signal that tea can be made." in text


def test_a_section_whose_heading_shares_one_word_with_the_task_is_not_kept_whole() -> None:
    page = _page(FAQ, heading="Why does the kettle whistle?")
    text = _excerpt([page], "How do I open the kettle lid?")
    assert "It is meant as a signal that tea can be made." not in text


def test_a_dotted_name_in_the_task_matches_its_last_part_on_the_page() -> None:
    manual = (
        "The module has many helpers. Some report the water level. Others set the lamp. "
        "Call descale_now to start descaling at once. The rest are for the service shop."
    )
    other = _page("The kettle module is documented here. It holds helpers.", "Module", 2)
    text = _excerpt([other, _page(manual, heading="Helpers")], "What does kettle.descale_now do?")
    assert "Call descale_now to start descaling at once." in text


# --- which pages a retrieval with excerpts takes ---------------------------------------------


def _headings(tmp_path: Path, excerpts: str) -> list[str]:
    """The headings of the two pages a retrieval of `descale` takes from a manual whose long
    Descaling section spans several pages."""
    (tmp_path / "manuals").mkdir()
    (tmp_path / "manuals" / "kettle.md").write_text(MANUAL, encoding="utf-8")
    pipeline = PIPELINE.replace("EXCERPTS", excerpts).replace("top_k: 1", "top_k: 2")
    pipeline = pipeline.replace("{path: manuals}", "{path: manuals, pages: {max_words: 40}}")
    (tmp_path / "pipeline.yaml").write_text(pipeline, encoding="utf-8")
    runtime = Runtime.open(tmp_path / "pipeline.yaml", build_indexes=True)
    state = SessionState.new("sections", runtime.pipeline)
    with runtime:
        asyncio.run(runtime.orchestrator().run_round(state, "descale residue"))
    entry = next(entry for _key, entries in state.buffer.items() for entry in entries)
    return [str(node_id) for node_id in entry.data["pages"]]


def test_with_excerpts_a_retrieval_takes_pages_in_score_order(tmp_path: Path) -> None:
    # whole pages: the best page of each section first (a long section does not fill the
    # context with itself); excerpts pay only for what bears, so the best pages come first
    assert _headings(tmp_path, ", excerpts: true") == ["kettle.md#2", "kettle.md#3"]


def test_whole_pages_take_the_best_page_of_each_section_first(tmp_path: Path) -> None:
    pages = _headings(tmp_path, "")
    assert pages[0] == "kettle.md#2" and pages[1] != "kettle.md#3"


def test_a_page_weaker_than_the_best_still_gives_its_bearing_units() -> None:
    best = _page("Descale the kettle with citric acid. Rinse it.", "Descaling", 1)
    weaker = _page(
        "The jug is blue. It is tall. It is light. Citric acid cleans the jug too.", "Jug", 2
    )
    text = _excerpt([best, weaker], "How do I descale the kettle with citric acid?")
    assert "Citric acid cleans the jug too." in text
