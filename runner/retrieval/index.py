"""Per-corpus indexes: build, persist, check for staleness, load, search.

An index lives in `<state folder>/indexes/<corpus>/` (the state folder defaults to `.runner/`
beside the pipeline): the BM25 index and the docstore of llama-index, plus `manifest.json` with
what the index was built from. `open_corpus` loads an index that is up to date and rebuilds one
that is missing or stale:

- fast check: the manifest's file list (relative path, size, mtime) equals the folder's;
- when it differs: the sha256 of the files' contents decides (a `touch` or a fresh checkout
  rebuilds nothing), and the manifest is refreshed;
- the page settings (`max_words`, `include`, `exclude`) and the manifest format are part of the
  key.

A rebuild writes into a temporary folder and swaps it in, so an interrupted build never leaves
a half-written index behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.config.paths import contained_documents
from runner.retrieval.pages import (
    CorpusError,
    Page,
    check_corpus_folder,
    corpus_files,
    corpus_folder,
    from_node,
    paginate_all,
    read_document,
    to_nodes,
)
from runner.text import normalize

if TYPE_CHECKING:
    from runner.config.model import Corpus, Pipeline
    from runner.retrieval.backend import PositiveBM25Retriever

MANIFEST_FILE = "manifest.json"
MANIFEST_FORMAT = 2  # 2: readers by format, section paths, navigation pages
SEARCH_MODES = ("keyword", "vector", "hybrid")

# progress(stage, done, total): stage is "read" (files; ("read", 0, n) announces a build), then
# "index" and "save" (0 of 1, then 1 of 1). Only a build reports; loading is silent.
ProgressCallback = Callable[[str, int, int], None]


class IndexMissingError(RuntimeError):
    """An index is missing or stale and building was not allowed (`--no-build`)."""


@dataclass(frozen=True)
class ScoredPage:
    page: Page
    score: float


@dataclass(frozen=True)
class IndexStatus:
    corpus: str
    rebuilt: bool  # built by this call (missing, stale or forced)
    reason: str  # why it was rebuilt, or "up to date"
    pages: int
    seconds: float


@dataclass(frozen=True)
class _Snapshot:
    """What an index is built from: the corpus settings and its files."""

    settings: dict[str, Any]
    files: dict[str, list[int]]  # relative path -> [size, mtime_ns]
    paths: list[Path] = field(default_factory=list)

    def content_sha256(self, folder: Path) -> str:
        digest = hashlib.sha256()
        for path in self.paths:
            digest.update(path.relative_to(folder).as_posix().encode("utf-8") + b"\0")
            digest.update(path.read_bytes())
            digest.update(b"\0")
        return digest.hexdigest()


class CorpusIndex:
    """A loaded corpus: its pages in corpus order and the retrievers over them."""

    def __init__(
        self,
        name: str,
        folder: Path,
        retriever: PositiveBM25Retriever,
        nodes: Sequence[Any],
        status: IndexStatus,
        embedding: str | None = None,
        *,
        keep_navigation: bool = False,
    ) -> None:
        self.name = name
        self.keep_navigation = keep_navigation  # the corpus's `pages.navigation: keep`
        self.embedding = embedding  # the corpus's `embedding.model`, if it names one
        self.folder = folder  # the index folder
        self.status = status
        self._retriever = retriever
        self._nodes = {node.node_id: node for node in nodes}
        self._pages = [from_node(node) for node in nodes]
        self._by_id = {page.node_id: page for page in self._pages}
        self._navigation = 0 if keep_navigation else sum(p.navigation for p in self._pages)
        self._vectors: dict[str, Any] = {}

    def __len__(self) -> int:
        return len(self._pages)

    def pages(self) -> list[Page]:
        """Every page in corpus order (documents by path, pages by number): the full scan."""
        return list(self._pages)

    def page(self, node_id: str) -> Page | None:
        return self._by_id.get(node_id)

    def search(
        self, query: str, top_k: int, *, mode: str = "keyword", embed_model: Any = None
    ) -> list[ScoredPage]:
        """The best pages for a query, best first; never a page that scored zero.

        `mode` vector and hybrid need an embedding model: `embed_model` (any llama-index
        embedding), else the one `backend.embed_model_name` names: $RUNNER_EMBED_MODEL, the
        corpus's `embedding.model` or the default (the `vector` extra)."""
        if mode not in SEARCH_MODES:
            raise ValueError(f"unknown search mode {mode!r}; use one of {', '.join(SEARCH_MODES)}")
        query = normalize(query)
        if top_k < 1 or not query.strip():
            return []
        wanted = top_k + self._navigation  # room for the navigation pages left out below
        if mode == "keyword":
            hits = self._retriever.search(query, wanted)
        else:
            from runner.retrieval import backend

            vector = self._vector_retriever(embed_model)
            hits = backend.fused_search(
                self._retriever, vector, query, wanted, hybrid=mode == "hybrid"
            )
        found = [
            ScoredPage(self._by_id[hit.node.node_id], float(hit.score or 0.0))
            for hit in hits
            if hit.node.node_id in self._by_id
        ]
        if self._navigation:
            found = [hit for hit in found if not hit.page.navigation]
        return found[:top_k]

    def match_count(self, query: str) -> int:
        """How many pages a keyword search finds at all (score above zero), before top_k."""
        return self._retriever.match_count(normalize(query))

    def indexed_terms(self, query: str) -> list[str]:
        """The query's terms as BM25 sees them (stop words removed, stemmed, known to the index)."""
        return self._retriever.query_tokens(normalize(query))

    def neighbors(self, node_id: str, window: int = 1) -> list[Page]:
        """The pages up to `window` before and after a page, in page order, the page itself
        left out. Follows the nodes' PREVIOUS/NEXT relationships, which stop at the edges of a
        document: a neighbour is always in the same document."""
        node = self._nodes.get(node_id)
        if node is None:
            return []
        before = self._walk(node, window, lambda n: n.prev_node)
        after = self._walk(node, window, lambda n: n.next_node)
        around = [self._by_id[i] for i in reversed(before)] + [self._by_id[i] for i in after]
        # navigation pages stay in the chain (the window counts them) but are no context
        return [page for page in around if self.keep_navigation or not page.navigation]

    def _walk(self, node: Any, steps: int, link: Callable[[Any], Any]) -> list[str]:
        found: list[str] = []
        current = node
        for _ in range(steps):
            related = link(current)
            if related is None or related.node_id not in self._nodes:
                break
            found.append(related.node_id)
            current = self._nodes[related.node_id]
        return found

    def _vector_retriever(self, embed_model: Any) -> Any:
        from runner.retrieval import backend

        if embed_model is None:
            model_name = backend.embed_model_name(self.embedding)
        else:
            model_name = _model_name(embed_model)
        if model_name not in self._vectors:
            model = backend.load_embed_model(model_name) if embed_model is None else embed_model
            nodes = list(self._nodes.values())
            self._vectors[model_name] = backend.vector_retriever(
                nodes, self.folder, model, model_name
            )
        return self._vectors[model_name]


def _model_name(embed_model: Any) -> str:
    """Names the persisted vector index: a model's own name, else its class."""
    name = getattr(embed_model, "model_name", None)
    return str(name) if name and name != "unknown" else type(embed_model).__name__


# --- building and loading ------------------------------------------------------------------


def index_folder(pipeline: Pipeline, corpus_name: str) -> Path:
    return pipeline.state_folder / "indexes" / corpus_name


def open_corpus(
    pipeline: Pipeline,
    name: str,
    *,
    build: bool = True,
    force: bool = False,
    progress: ProgressCallback | None = None,
) -> CorpusIndex:
    """The corpus's index, loaded when up to date, else (re)built and persisted first.

    With `build=False` a missing or stale index raises IndexMissingError instead."""
    corpus = _corpus(pipeline, name)
    source = corpus_folder(corpus, pipeline.folder)
    check_corpus_folder(source, name, pipeline.path)
    contained_documents(
        name,
        corpus_files(source, corpus.include),
        pipeline.folder,
        follow_symlinks=corpus.follow_symlinks,
    )
    target = index_folder(pipeline, name)
    snapshot = _snapshot(corpus, source)
    reason = "forced" if force else _stale_reason(target, snapshot, source)
    if reason is None:
        return _load(corpus, target, started=time.perf_counter())
    if not build:
        raise IndexMissingError(
            f"{pipeline.path}: the index of corpus {name!r} is {reason} ({target}); build it "
            f"with `runner index {pipeline.path}`, or run without --no-build"
        )
    return _build(pipeline.path, corpus, source, target, snapshot, reason, progress)


def _corpus(pipeline: Pipeline, name: str) -> Corpus:
    corpus = pipeline.corpora.get(name)
    if corpus is None:
        known = ", ".join(sorted(pipeline.corpora)) or "none"
        raise CorpusError(
            f"{pipeline.path}: no corpus named {name!r} (corpora defined: {known}); add it under "
            "`corpora:` or fix the tool's `corpus:`"
        )
    return corpus


def _snapshot(corpus: Corpus, source: Path) -> _Snapshot:
    paths = corpus_files(source, corpus.include, corpus.exclude)
    files = {}
    for path in paths:
        stat = path.stat()
        files[path.relative_to(source).as_posix()] = [stat.st_size, stat.st_mtime_ns]
    settings = {
        "format": MANIFEST_FORMAT,
        "max_words": corpus.max_words,
        "include": list(corpus.include),
        "exclude": list(corpus.exclude),
    }
    return _Snapshot(settings, files, paths)


def _read_manifest(target: Path) -> dict[str, Any] | None:
    try:
        return json.loads((target / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _stale_reason(target: Path, snapshot: _Snapshot, source: Path) -> str | None:
    """None when the index is up to date; otherwise why it is not."""
    from runner.retrieval import backend

    manifest = _read_manifest(target)
    if manifest is None or not backend.is_complete(target):
        return "missing"
    if manifest.get("settings") != snapshot.settings:
        return "stale (page settings changed)"
    if manifest.get("files") == snapshot.files:
        return None
    if manifest.get("content_sha256") != snapshot.content_sha256(source):
        return "stale (corpus changed)"
    # same content, new sizes/mtimes (a touch, a checkout): remember them for the fast check
    _write_manifest(target, {**manifest, "files": snapshot.files})
    return None


def _write_manifest(target: Path, manifest: dict[str, Any]) -> None:
    temporary = target / f".{MANIFEST_FILE}.tmp"
    temporary.write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(temporary, target / MANIFEST_FILE)


def _build(
    pipeline_path: Path,
    corpus: Corpus,
    source: Path,
    target: Path,
    snapshot: _Snapshot,
    reason: str,
    progress: ProgressCallback | None,
) -> CorpusIndex:
    from runner.retrieval import backend

    started = time.perf_counter()
    report = progress or (lambda stage, done, total: None)
    documents = []
    report("read", 0, len(snapshot.paths))  # a build starts: callers may say so
    for done, path in enumerate(snapshot.paths, 1):
        documents.append(read_document(source, path))
        report("read", done, len(snapshot.paths))
    pages = paginate_all(documents, corpus.max_words)  # navigation pages marked
    if not pages:
        patterns = ", ".join(corpus.include)
        raise CorpusError(
            f"{pipeline_path}: corpus {corpus.name!r}: no text in {source} (include: {patterns}); "
            "add .md, .txt, .rst, .html or .pdf files, or fix corpora."
            f"{corpus.name}.include"
        )
    report("index", 0, 1)
    nodes = to_nodes(pages)
    building = target.parent / f".{target.name}.building-{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    retriever = backend.build(nodes, building)
    report("index", 1, 1)
    report("save", 0, 1)
    content = snapshot.content_sha256(source)
    seconds = time.perf_counter() - started
    manifest = {
        "corpus": corpus.name,
        "source": str(source),
        "settings": snapshot.settings,
        "files": snapshot.files,
        "content_sha256": content,
        "pages": len(pages),
        "build_seconds": round(seconds, 3),
    }
    _write_manifest(building, manifest)
    _swap_in(building, target)
    report("save", 1, 1)
    status = IndexStatus(corpus.name, True, reason, len(pages), seconds)
    return _index(corpus, target, retriever, nodes, status)


def _index(
    corpus: Corpus, target: Path, retriever: Any, nodes: Sequence[Any], status: IndexStatus
) -> CorpusIndex:
    return CorpusIndex(
        corpus.name,
        target,
        retriever,
        nodes,
        status,
        _embedding(corpus),
        keep_navigation=corpus.navigation == "keep",
    )


def _swap_in(building: Path, target: Path) -> None:
    """Replace `target` by the finished `building` folder (a rename, so readers never see a
    half-written index)."""
    old = target.parent / f".{target.name}.old-{os.getpid()}"
    if target.exists():
        os.replace(target, old)
    os.replace(building, target)
    shutil.rmtree(old, ignore_errors=True)


def _embedding(corpus: Corpus) -> str | None:
    return corpus.embedding.model if corpus.embedding is not None else None


def _load(corpus: Corpus, target: Path, *, started: float) -> CorpusIndex:
    from runner.retrieval import backend

    retriever, nodes = backend.load(target)
    seconds = time.perf_counter() - started
    status = IndexStatus(corpus.name, False, "up to date", len(nodes), seconds)
    return _index(corpus, target, retriever, nodes, status)


def corpus_loader(
    pipeline: Pipeline, *, build: bool = True, progress: ProgressCallback | None = None
) -> Callable[[str], CorpusIndex]:
    """`services.corpus` for the tools: opens each corpus once, on first use."""
    opened: dict[str, CorpusIndex] = {}

    def corpus(name: str) -> CorpusIndex:
        if name not in opened:
            opened[name] = open_corpus(pipeline, name, build=build, progress=progress)
        return opened[name]

    return corpus
