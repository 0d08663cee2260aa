"""bench.gatekeeper: the question sets it reads and how it scores the gatekeeper's verdicts."""

from __future__ import annotations

from types import SimpleNamespace

from bench.gatekeeper import SETS, Gold, Verdicts, auc, is_gold_page, read_set, rejected_at


def test_every_question_set_is_read_with_its_gold_sections() -> None:
    for name in SETS:
        golds = read_set(name)
        assert golds and all(gold.sections and gold.sections[0][1] for gold in golds)


def test_a_page_is_gold_when_a_gold_section_heads_it_or_it_holds_the_heading_line() -> None:
    gold = Gold("q", "?", (("faq/a.rst.txt", "Why?"),))
    headed = SimpleNamespace(document="faq/a.rst.txt", heading="Why?", text="Because.")
    holding = SimpleNamespace(document="faq/a.rst.txt", heading="How?", text="How?\nWhy?\nSo.")
    elsewhere = SimpleNamespace(document="faq/b.rst.txt", heading="Why?", text="Why?")
    assert is_gold_page(headed, gold) and is_gold_page(holding, gold)
    assert not is_gold_page(elsewhere, gold)


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


def test_the_separation_of_a_signal_is_its_auc_and_its_rejections_at_a_kept_share() -> None:
    assert auc([3.0, 4.0], [1.0, 2.0]) == 1.0
    assert auc([1.0], [1.0]) == 0.5
    assert rejected_at([2.0, 3.0, 4.0, 5.0, 6.0], [1.0, 2.5, 7.0], 0.8) == 2 / 3


def test_the_readme_section_shows_each_set_and_the_target() -> None:
    from bench.gatekeeper import readme_section

    figures = Verdicts()
    figures.add(Gold("q", "?", ()), gold_found=True, enough=True, reason="")
    figures.add(Gold("r", "?", ()), gold_found=False, enough=False, reason="")
    figures.margins += [(2.0, True), (1.0, False)]
    sets = {name: {"questions": 2} | figures.figures() for name in SETS}
    results = {"date": "2026-12-01", "machine": {"cpus": 2}, "top_k": 5, "target": 0.8}
    text = readme_section(results | {"sets": sets})
    assert "| `pydocs-users.csv` (2 q.) | 1.000 (1 q.) | 1.000 (1 q.) |" in text
    assert "| target | ≥ 0.80 | ≥ 0.80 |" in text
