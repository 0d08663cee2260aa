"""Each page's place vector: the model's vector of the page's title and heading alone, kept beside
its page vector so that reranking (rerank.py) can ask how near the question is to what the
page's section is called, as well as to its text.

A page vector is of the place and the first prose together (vectors.py), and the word-by-word
match compares pieces read in the page's context: neither says whether the section's own name
is about the question. A question in users' words is often nearest to a heading that names
its task ("How do I keep persistent data across program calls?", "Domain Types") while the
pages around it share more of its words. Measured over the first 20 candidates of the
project's question sets (docs/retrieval.md), the place's cosine joined at a quarter of the
word match's weight put the gold section first for more questions on every users'-words set
(the held-out one included), in the top 5 for more on three of the four (one fewer on the
PostgreSQL manual), and lost none on the heading-worded sets.

One file in the model's vectors folder, `places.npy` (float32, one unit-length row per page,
in page order), memory-mapped when opened. Pages of one section share their place, so a build
embeds each distinct place once (a few tokens each: a second or so per thousand places on a
CPU), and a rebuild copies the rows of the pages it keeps.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from runner.retrieval.mapped import mapped
from runner.retrieval.pages import Page

PLACES_FILE = "places.npy"


def place_text(page: Page) -> str:
    """Where a page stands: its title and heading (`Guide › Installing`), each once."""
    return " › ".join(dict.fromkeys(part for part in (page.title, page.heading) if part))


def load_places(folder: Path, pages: int) -> np.ndarray | None:
    """The stored place vectors of `pages` pages, memory-mapped; None when missing or of
    another number of pages."""
    try:
        places = mapped(folder / PLACES_FILE)
    except (OSError, ValueError):
        return None
    return places if places.ndim == 2 and len(places) == pages else None


def build_places(
    pages: Sequence[Page],
    embed: Callable[[Sequence[str]], np.ndarray],
    folder: Path,
    dimensions: int,
    kept: Mapping[int, np.ndarray] | None = None,
) -> np.ndarray:
    """The pages' place vectors written into `folder`: `kept` gives the rows already known (a
    rebuild's unchanged pages, by their new row); every other distinct place embedded once."""
    kept = kept or {}
    texts = [place_text(page) for page in pages]
    known = {texts[row]: np.asarray(vector) for row, vector in kept.items()}
    fresh = list(dict.fromkeys(text for text in texts if text not in known))
    if fresh:
        known.update(zip(fresh, np.asarray(embed(fresh), dtype=np.float32), strict=True))
    places = np.zeros((len(texts), dimensions), dtype=np.float32)
    for row, text in enumerate(texts):
        places[row] = known[text]
    temporary = folder / f".{PLACES_FILE}.tmp"
    with temporary.open("wb") as file:
        np.save(file, places)
    os.replace(temporary, folder / PLACES_FILE)  # a search that has the old file mapped keeps it
    return mapped(folder / PLACES_FILE)


def remove_places(folder: Path) -> None:
    """No place vectors in `folder` (a corpus that does not rerank): any from before removed."""
    (folder / PLACES_FILE).unlink(missing_ok=True)
