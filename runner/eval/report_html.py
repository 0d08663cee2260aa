"""The run's report: one self-contained HTML file (styles inline, plots as inline SVG, no
script, nothing fetched), to open from the results folder or attach to CI.

It shows the summary (with the change against the baseline), the metrics by tag and their plot,
the latency and token distributions, the questions that got worse and better and why, and every
question: its answer, its sources, the gold, where retrieval ranked the gold, and a link to its
trace (`traces/ID.jsonl` beside the report).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, select_autoescape

from runner.eval import plots
from runner.eval.compare import Comparison
from runner.eval.definitions import defined
from runner.eval.formats import SHOWN, TAG_SHOWN, number, problems
from runner.eval.plots import PlotsUnavailable

__all__ = ["PlotsUnavailable", "render_report", "write_report"]

TEMPLATE = Path(__file__).with_name("report.html.j2")  # shipped inside the package
# a page of 100k questions opens in no browser: past this many, the rest are in the records
MAX_QUESTIONS_SHOWN = 2000


def render_report(
    summary: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    comparison: Comparison | None,
    *,
    plots_wanted: bool = True,
) -> str:
    svgs: list[str] = []
    note = ""
    if plots_wanted:
        drawn = [
            plots.by_tag(summary.get("by_tag") or {}),
            plots.histogram([float(r.get("latency_ms") or 0) for r in records], "Latency", "ms"),
            plots.histogram(
                [float((r.get("llm") or {}).get("tokens", 0)) for r in records], "Tokens", "tokens"
            ),
        ]
        svgs = [svg for svg in drawn if svg]
    else:
        note = "Plots need matplotlib: pip install 'runner[report]'."
    environment = Environment(autoescape=select_autoescape(default=True), trim_blocks=True)
    template = environment.from_string(TEMPLATE.read_text(encoding="utf-8"))
    return template.render(
        summary=summary,
        metrics=summary["metrics"],
        by_tag=summary.get("by_tag") or {},
        records=records[:MAX_QUESTIONS_SHOWN],
        hidden=max(0, len(records) - MAX_QUESTIONS_SHOWN),
        comparison=comparison,
        shown=SHOWN,
        tag_shown=TAG_SHOWN,
        svgs=svgs,
        note=note,
        fmt=number,
        problems=problems,
        definitions=defined(name for name in SHOWN if summary["metrics"].get(name) is not None),
    )


def write_report(
    path: Path,
    summary: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    comparison: Comparison | None,
    *,
    plots: bool = True,
) -> None:
    """Raises PlotsUnavailable when plots are wanted and matplotlib is missing."""
    path.write_text(render_report(summary, records, comparison, plots_wanted=plots), "utf-8")
