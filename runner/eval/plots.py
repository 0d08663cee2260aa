"""The report's plots, drawn by matplotlib (the `report` extra) as SVG text to inline in the
page: no image file, no network. Drawn with the Agg-free SVG backend and a fixed hash salt,
so the same run gives the same SVG."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any


class PlotsUnavailable(ImportError):
    """matplotlib is not installed: the report is written without its plots."""


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as error:
        raise PlotsUnavailable(
            "the report's plots need matplotlib: pip install 'runner[report]' "
            "(the report was written without them)"
        ) from error
    matplotlib.use("svg", force=True)
    matplotlib.rcParams.update(
        {"svg.hashsalt": "runner-eval", "svg.fonttype": "none", "font.size": 9}
    )
    import matplotlib.pyplot as plt

    return plt


def _svg(figure: Any) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    _pyplot().close(figure)
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def by_tag(tags: Mapping[str, Mapping[str, Any]]) -> str | None:
    """hit@1, hit@k and MRR of each tag, as grouped horizontal bars."""
    names = [tag for tag, values in tags.items() if values.get("hit@k") is not None]
    if not names:
        return None
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(7, 0.45 * len(names) + 1.2))
    height = 0.26
    for offset, metric in enumerate(("hit@1", "hit@k", "mrr")):
        values = [tags[name].get(metric) or 0 for name in names]
        positions = [i + (offset - 1) * height for i in range(len(names))]
        axes.barh(positions, values, height, label=metric)
    axes.set_yticks(range(len(names)), names)
    axes.invert_yaxis()
    axes.set_xlim(0, 1)
    axes.legend(loc="lower right", fontsize=8)
    axes.set_title("Retrieval by tag")
    return _svg(figure)


def histogram(values: Sequence[float], title: str, unit: str) -> str | None:
    if not values:
        return None
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(4.6, 2.6))
    axes.hist(values, bins=min(30, max(5, len(values) // 3)))
    axes.set_title(title)
    axes.set_xlabel(unit)
    axes.set_ylabel("questions")
    return _svg(figure)


def available() -> bool:
    try:
        _pyplot()
    except PlotsUnavailable:
        return False
    return True
