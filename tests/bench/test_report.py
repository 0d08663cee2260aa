"""bench/README.md: each benchmark replaces its own section; the summary reads every result."""

from __future__ import annotations

from pathlib import Path

from bench import readme, summary


def test_a_section_is_replaced_in_place_and_others_are_kept(readme_path: Path):
    readme.write_section("Retrieval", "retrieval figures")
    readme.write_section("Summary", "first summary")
    readme.write_section("Summary", "second summary")
    text = readme_path.read_text()
    assert text.startswith("# Benchmarks")
    assert "first summary" not in text
    assert text.index("## Summary") < text.index("## Retrieval")  # the fixed order
    assert "retrieval figures" in text


def test_the_summary_flags_a_missed_target_and_names_what_has_not_run(readme_path: Path):
    readme.write_results(
        "startup",
        {
            "startup": {"python -c pass": 0.02, "runner --help": 0.5},
            "validate_many": {"files": 1000, "seconds": 2.0},
            "targets": {"help_over_python_s": 0.15, "validate_files_s": 3.0},
        },
    )
    text = summary.section()
    assert "| `runner --help` over `python -c pass` | 480 ms |  | ≤ 150 ms | **missed**" in text
    assert "| `runner validate` of 1,000 files, one call | 2.00 s |  | < 3 s | met |" in text
    assert "Not run yet: multipart, overhead, retrieval" in text
