"""The configurations the docs recommend, as a matrix of pipelines (issue 29: no documented
configuration crashes).

The axes are those of docs/retrieval.md and docs/reference.md:

- the first search (`retrieve`, the domain's `retrieval_tool`): `keyword` (BM25), `vector`,
  `hybrid` (the recommended mode) with the default rerank, and `hybrid` with
  `embedding.rerank: 0`;
- the deep fallback: off, or on (`deep_fallback` with a `deep_search` over a `search` and a
  `neighbor_search` tool, as retrieval.md's complete example) with its gatekeeper judging by
  `words` (`mode: rule` over a corpus without page vectors), by `vectors` (`mode: rule` over a
  corpus with page vectors: the words' verdict weighed with the retrieval's evidence) or by
  the `llm` (`mode: llm`);
- the provider: `offline` (the default) or `scripted` (what tests and CI use).

A corpus has page vectors when its search is by meaning or its gatekeeper weighs vectors; the
pipelines of one kind of corpus live in one folder and share its index (`.runner/indexes`).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).parents[1] / "retrieval" / "corpora" / "appliances"

SEARCHES = ("keyword", "vector", "hybrid", "hybrid-no-rerank")
GATEKEEPERS = (None, "words", "vectors", "llm")  # None: no deep fallback
PROVIDERS = ("offline", "scripted")

# Real questions on the appliance manuals: in the manuals' words and in a user's own; each is
# answered by one section, `document#heading`, which eval checks among the sources.
QUESTIONS = (
    ("How do I descale the kettle?", "kettle.md#Descaling"),
    ("how do I get rid of the chalky build-up inside my kettle?", "kettle.md#Descaling"),
    ("How long is the toaster's warranty?", "toaster.md#Warranty"),
    ("Which grinder setting should I use for espresso?", "guide.rst#Grinding"),
)


@dataclass(frozen=True)
class Shape:
    """One documented configuration."""

    search: str
    gatekeeper: str | None
    provider: str

    @property
    def vectors(self) -> bool:
        """Whether its corpus keeps page vectors (an `embedding:` model)."""
        return self.search != "keyword" or self.gatekeeper == "vectors"

    @property
    def folder(self) -> str:
        """The folder of its kind of corpus: pipelines of one kind share the index."""
        return "meaning" if self.vectors else "words"

    @property
    def domain(self) -> str:
        fallback = f"deep-{self.gatekeeper}" if self.gatekeeper else "no-fallback"
        return f"{self.search}-{fallback}-{self.provider}".replace("-", "_")

    @property
    def recommended(self) -> bool:
        """The shape retrieval.md recommends: hybrid search with a deep fallback."""
        return self.search == "hybrid" and self.gatekeeper is not None

    def __str__(self) -> str:
        return self.domain


def shapes() -> list[Shape]:
    """Every combination the docs allow: over a corpus with page vectors, a `words` gatekeeper
    is a `vectors` one (its verdict is weighed with the evidence), so it is not listed twice."""
    return [
        Shape(search, gatekeeper, provider)
        for search in SEARCHES
        for gatekeeper in GATEKEEPERS
        for provider in PROVIDERS
        if not (gatekeeper == "words" and search != "keyword")
    ]


RECOMMENDED = Shape("hybrid", "llm", "offline")


def pipeline_yaml(shape: Shape) -> str:
    """The pipeline of `shape`, written as an author following the docs would."""
    mode = "hybrid" if shape.search.startswith("hybrid") else shape.search
    embedding = ""
    if shape.vectors:
        rerank = ", rerank: 0" if shape.search == "hybrid-no-rerank" else ""
        embedding = f"\n    embedding: {{model: all-MiniLM-L6-v2{rerank}}}"
    lines = [
        "version: 1",
        f"domain: {shape.domain}",
        _llm(shape),
        "corpora:",
        "  manuals:",
        "    path: manuals",
        f"    pages: {{max_words: 60}}{embedding}",
        "retrieval_tool: manual_rag",
    ]
    if shape.gatekeeper is not None:
        mode_of = "llm" if shape.gatekeeper == "llm" else "rule"
        lines += [
            "deep_fallback:",
            "  coordinator: deep_search",
            f"  gatekeeper: {{mode: {mode_of}}}",
        ]
    lines += [
        "tools:",
        f"  - {{name: manual_rag, kind: retrieve, corpus: manuals, top_k: 3, mode: {mode}}}",
    ]
    if shape.gatekeeper is not None:
        lines += [
            f"  - {{name: manual_search, kind: search, corpus: manuals, top_k: 4, mode: {mode}}}",
            "  - {name: manual_neighbors, kind: neighbor_search, corpus: manuals, window: 1}",
            "  - name: deep_search",
            "    kind: deep_search",
            "    search_tool: manual_search",
            "    neighbor_search_tool: manual_neighbors",
            "    max_missing: 2",
        ]
    return "\n".join(lines) + "\n"


# The scripted model: a gatekeeper that finds the context short (so the deep search runs), a
# missing piece, pages read by their words, and answers that cite what they were given.
SCRIPT = """\
  script:
    - {purpose: gatekeeper, reply: {enough: false, reason: the steps are not all there}}
    - {purpose: missing_info, reply: {missing: [warranty from the date of purchase]}}
    - {purpose: read_page, prompt: "warranty|descal|citric|espresso|grind",
       reply: {found: true, answer: "The page says so."}}
    - {purpose: read_page, reply: {found: false}}
    - {purpose: compose, reply: "What the pages say [1]."}
    - {purpose: answer, reply: "Here is what the manual says [1], and more [2]."}
"""


def _llm(shape: Shape) -> str:
    if shape.provider == "offline":
        return "llm: {provider: offline}"
    return "llm:\n  provider: scripted\n" + SCRIPT.rstrip("\n")


def write_folder(root: Path, kind: str, chosen: list[Shape]) -> Path:
    """The folder of one kind of corpus (`words`, `meaning`): the manuals and the pipelines of
    `chosen` of that kind, one file each, named by their domain."""
    folder = root / kind
    shutil.copytree(CORPUS, folder / "manuals")
    for shape in chosen:
        if shape.folder == kind:
            (folder / f"{shape.domain}.yaml").write_text(pipeline_yaml(shape), encoding="utf-8")
    return folder


def questions_csv(path: Path) -> Path:
    """The matrix's questions as an eval question set (`question,sources`)."""
    rows = ["question,sources", *(f'"{q}",{source}' for q, source in QUESTIONS)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path
