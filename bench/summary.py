"""The Summary section of bench/README.md: every target beside its figure, runner beside the
system a user would pick instead, from the JSON results the benchmarks wrote.

    python -m bench.summary          # (python -m bench runs it last)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from bench import readme
from bench.readme import Row, read_results, table, write_section
from bench.staleness import staleness
from bench.summary_cost import (
    embed_runtime_rows,
    index_open_rows,
    multipart_rows,
    overhead_rows,
    retrieval_rows,
    serve_rows,
    startup_rows,
    streaming_rows,
    tables_rows,
    vector_rows,
)
from bench.summary_quality import (
    answers_rows,
    faq_rows,
    gatekeeper_rows,
    realmodel_rows,
    users_rows,
)

TITLE = "Summary"

SOURCES: dict[str, Callable[[Mapping[str, Any]], list[Row]]] = {
    "multipart": multipart_rows,
    "overhead": overhead_rows,
    "startup": startup_rows,
    "retrieval": retrieval_rows,
    "faq": faq_rows,
    "gatekeeper": gatekeeper_rows,
    "users": users_rows,
    "answers": answers_rows,
    "index_open": index_open_rows,
    "vector_search": vector_rows,
    "embed_runtimes": embed_runtime_rows,
    "serve": serve_rows,
    "realmodel": realmodel_rows,
    "tables": tables_rows,
    "streaming": streaming_rows,
}


def section() -> str:
    rows: list[Row] = []
    missing: list[str] = []
    stale: list[str] = []
    for name, make in SOURCES.items():
        results = read_results(name)
        if results is None:
            missing.append(name)
            continue
        made = make(results)
        why = staleness(name, results)
        if why is not None:
            stale.append(f"- `{name}`: {why}")
            made = [[*row[:-1], f"{row[-1]}, **stale**"] for row in made]
        rows.extend(made)
    # the figures of a benchmark without a summary row go stale too: its section says so
    for name in result_names():
        results = read_results(name)
        why = None if name in SOURCES or results is None else staleness(name, results)
        if why is not None:
            stale.append(f"- `{name}` (its section; no row here): {why}")
    text = table(["figure", "runner", "the alternative", "target", ""], rows)
    if stale:
        text += (
            "\n\nStale (the code measured changed since; run `python -m bench NAME` again):\n\n"
            + "\n".join(stale)
        )
    if missing:
        text += f"\n\nNot run yet: {', '.join(missing)} (`python -m bench {' '.join(missing)}`)."
    return (
        "Every target of issues 7, 11, 12, 13, 14, 18, 22 and 33, from the latest run of each "
        "benchmark (the sections below give the commands, the machine and what limits a figure "
        "that misses its target). A figure whose code changed after the commit it was measured "
        "at is marked stale.\n\n" + text
    )


def result_names() -> list[str]:
    """The benchmarks' results there are (bench/results/<name>.json), by name."""
    return sorted(path.stem for path in readme.RESULTS.glob("*.json"))


def main() -> None:
    text = section()
    write_section(TITLE, text)
    print(text)


if __name__ == "__main__":
    main()
