"""bench.gatekeeper: the question sets it reads and how it scores the gatekeeper's verdicts."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from bench.gatekeeper import SETS, Gold, Verdicts, auc, is_gold_page, note, read_set


def test_every_question_set_is_read_with_its_gold_sections() -> None:
    for name in (name for names in SETS.values() for name in names):
        golds = read_set(name)
        assert golds and all(gold.sections and gold.sections[0][1] for gold in golds)


def test_a_page_is_gold_when_a_gold_section_heads_it_or_it_holds_the_heading_line() -> None:
    gold = Gold("q", "?", (("faq/a.rst.txt", "Why?"),))
    headed = SimpleNamespace(document="faq/a.rst.txt", heading="Why?", text="Because.")
    holding = SimpleNamespace(document="faq/a.rst.txt", heading="How?", text="How?\nWhy?\nSo.")
    elsewhere = SimpleNamespace(document="faq/b.rst.txt", heading="Why?", text="Why?")
    assert is_gold_page(headed, gold) and is_gold_page(holding, gold)
    assert not is_gold_page(elsewhere, gold)


def test_an_html_heading_is_gold_with_its_section_number() -> None:
    gold = Gold("q", "?", (("indexes-partial.html", "Partial Indexes"),))
    page = SimpleNamespace(
        document="indexes-partial.html", heading="11.8. Partial Indexes", text="A partial index…"
    )
    assert is_gold_page(page, gold)


def test_the_verdicts_count_right_both_ways_and_keep_the_wrong_ones() -> None:
    verdicts = Verdicts()
    gold = Gold("q", "a question", ())
    verdicts.add(gold, gold_found=True, enough=True, reason="covered")
    verdicts.add(gold, gold_found=True, enough=False, reason="not covered")
    verdicts.add(gold, gold_found=False, enough=False, reason="not covered")
    figures = verdicts.figures()
    assert figures["enough_when_gold_found"] == 0.5
    assert figures["not_enough_when_gold_missing"] == 1.0
    assert [wrong["why"] for wrong in figures["wrong"]] == ["not covered"]


def test_the_separation_of_a_signal_is_its_auc() -> None:
    assert auc([3.0, 4.0], [1.0, 2.0]) == 1.0
    assert auc([1.0], [1.0]) == 0.5


def test_a_keyword_search_notes_its_margin_and_a_search_with_vectors_its_evidence() -> None:
    verdicts = Verdicts()
    pages = [{"score": 9.0}, {"score": 4.0}]
    note(verdicts, {"pages": pages}, True, keyword=True)
    evidence = {"first_page_cosine": 0.4, "agreement": 2, "top_k": 5}
    note(verdicts, {"pages": pages, "evidence": evidence}, False, keyword=False)
    assert verdicts.margins == [(5.0, True)]
    [(value, found)] = verdicts.evidence
    assert value == pytest.approx(0.6) and found is False


def test_the_readme_section_shows_each_set_and_pipeline_and_the_target() -> None:
    from bench.gatekeeper import readme_section

    figures = Verdicts()
    figures.add(Gold("q", "?", ()), gold_found=True, enough=True, reason="")
    figures.add(Gold("r", "?", ()), gold_found=False, enough=False, reason="")
    figures.margins += [(2.0, True), (1.0, False)]
    sets = {"pydocs-users": {"questions": 2} | figures.figures()}
    runs = [
        {"corpus": "pydocs", "pipeline": "keyword, words only", "sets": sets},
        {"corpus": "pgdocs", "pipeline": "hybrid + vectors", "skipped": "no page vectors"},
    ]
    results = {"date": "2026-12-01", "machine": {"cpus": 2}, "top_k": 5, "target": 0.8}
    text = readme_section(results | {"runs": runs})
    assert (
        "| `pydocs-users.csv` (2 q.) | keyword, words only | 1.00 (1 q.) | 1.00 (1 q.) | 1.00 |  |"
        in text
    )
    assert "| pgdocs | hybrid + vectors | skipped: no page vectors |" in text
    assert "| target |  | ≥ 0.80 | ≥ 0.80 |" in text


def test_the_readme_section_says_what_the_evidence_cost_with_vectors() -> None:
    from bench.gatekeeper import readme_section

    figures = Verdicts()
    figures.add(Gold("q", "?", ()), gold_found=True, enough=True, reason="")
    figures.evidence_ms += [10.0, 12.0, 30.0]
    runs = [
        {
            "corpus": "pgdocs",
            "pipeline": "keyword + vectors",
            "sets": {"pgdocs-users": {"questions": 1} | figures.figures()},
        }
    ]
    results = {"date": "2026-12-01", "machine": {"cpus": 2}, "top_k": 5, "target": 0.8}
    text = readme_section(results | {"runs": runs})
    assert (
        "pgdocs, keyword + vectors: 12.0 ms at the median, 30.0 ms at the 90th percentile" in text
    )


def test_the_benchmark_runs_on_a_tiny_docs_folder(
    docs: Path, readme_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole benchmark on the fixture's docs and a set of its own: a question its docs
    answer and one they do not; the pipelines with page vectors say why they were skipped
    (none were built here)."""
    import bench.gatekeeper as gatekeeper

    (tmp_path / "tiny.csv").write_text(
        "id,question,sources,tags\n"
        "q1,how do I sort with a key function,howto/sorting.rst.txt#Sorting HOWTO,\n"
        "q2,how tall is the eiffel tower,howto/towers.rst.txt#Towers,\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(gatekeeper, "QUESTIONS", tmp_path)
    monkeypatch.setattr(gatekeeper, "SETS", {"pydocs": ("tiny",)})
    monkeypatch.setattr(gatekeeper, "corpus_source", lambda _name: (docs, "**/*.rst.txt"))
    monkeypatch.setattr(gatekeeper, "state_base", lambda: tmp_path / "no-vectors")
    gatekeeper.main()
    runs = json.loads((readme_path.parent / "results" / "gatekeeper.json").read_text())["runs"]
    words, *with_vectors = runs
    figures = words["sets"]["tiny"]
    assert (figures["questions"], figures["gold_found"], figures["gold_missing"]) == (2, 1, 1)
    assert all("no page vectors" in run["skipped"] for run in with_vectors)
    assert f"## {gatekeeper.TITLE}" in readme_path.read_text()
