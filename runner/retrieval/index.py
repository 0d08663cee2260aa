"""Per-corpus indexes: build, persist, check for staleness, open.

An index lives in `<state folder>/indexes/<corpus>/` (the state folder defaults to `.runner/`
beside the pipeline): the BM25 matrices (`bm25/`, memory-mapped when opened: keyword.py), the
pages (`pages.sqlite`, read lazily: store.py), the page vectors of the corpus's embedding model
when it has one (`vectors/<model>/`, memory-mapped: vectors.py), plus `manifest.json` with what
the index was built from. Opening an up-to-date index reads the manifest, stats the corpus
files and maps the matrices: no page is read until a search returns it. `open_corpus` loads
an index that is up to date and rebuilds one that is missing or stale:

- no walk at all: every folder the manifest lists (mtime, inode: a file added, removed or renamed
  changes its folder's mtime) and every file (size, mtime, inode) has the stat data recorded,
  and `include`, `exclude` and `follow_symlinks` are as they were (`manifests.unchanged_by_stat`);
- fast check: the manifest's file list (relative path, size, mtime, inode) equals the folder's;
- when it differs: the sha256 of the files' contents decides (a `touch` or a fresh checkout
  rebuilds nothing), and the manifest is refreshed;
- the page settings (`max_words`, `html.drop`) and the manifest format are part of the key;
  `include` and `exclude` are not: the files they select are (a changed glob that selects the
  same files, or a manifest written before the default `include` read every format, rebuilds
  nothing).

A rebuild writes into a temporary folder and swaps it in, so an interrupted build never leaves
a half-written index behind. Vectors are embedded only for pages whose text changed (the
previous index's vectors are reused by key), and an up-to-date index that lacks its model's
vectors gains them without a BM25 rebuild.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.config.model import DEFAULT_RERANK
from runner.config.paths import contained_documents
from runner.retrieval import manifests
from runner.retrieval.corpus import (  # re-exported: where callers have found them
    SEARCH_MODES,
    CorpusIndex,
    IndexStatus,
    ScoredPage,
)
from runner.retrieval.keyword import KeywordIndex
from runner.retrieval.pages import (
    CorpusError,
    Page,
    check_corpus_folder,
    corpus_folder,
    document_root,
    read_document,
)
from runner.retrieval.store import PAGES_FILE, PageStore, write_pages
from runner.retrieval.words_alone import runnable_model

if TYPE_CHECKING:
    from runner.config.model import Corpus, Pipeline
    from runner.retrieval.vectors import VectorIndex

# progress(stage, done, total): stage is "read" (files; ("read", 0, n) announces a build), then
# "index" and "save" (0 of 1, then 1 of 1), and "embed" (pages embedded anew, when the corpus has
# an embedding model). Only a build reports; loading is silent.
ProgressCallback = Callable[[str, int, int], None]


class IndexMissingError(RuntimeError):
    """An index is missing or stale and building was not allowed (`--no-build`)."""


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
    target = index_folder(pipeline, name)
    manifest = None if force else manifests.unchanged_by_stat(target, corpus, source)
    snapshot: manifests.Snapshot | None = None
    if manifest is not None:
        reason = None  # the folder is not even listed: nothing in it changed
    else:
        snapshot = manifests.snapshot(corpus, source)
        contained_documents(
            name,
            (source / relative for relative in snapshot.relatives),
            document_root(corpus, pipeline.folder),
            follow_symlinks=corpus.follow_symlinks,
        )
        reason = "forced" if force else manifests.stale_reason(target, snapshot, source, corpus)
    model, words_alone = runnable_model(name, vector_model(pipeline, corpus))
    index = _open(
        pipeline, corpus, model, source, target, snapshot, manifest, reason, build, progress
    )
    index.words_alone = words_alone
    return index


def _open(
    pipeline: Pipeline,
    corpus: Corpus,
    model: str | None,
    source: Path,
    target: Path,
    snapshot: manifests.Snapshot | None,
    manifest: dict[str, Any] | None,
    reason: str | None,
    build: bool,
    progress: ProgressCallback | None,
) -> CorpusIndex:
    """The index loaded when up to date (its vectors embedded when missing), else built
    (`snapshot`: the corpus as listed, None when its manifest proved it unchanged by stat)."""
    name = corpus.name
    if reason is None:
        started = time.perf_counter()
        pages = int((manifest or manifests.read_manifest(target) or {}).get("pages", 0))
        vectors = _stored_vectors(target, model, pages, _reranks(corpus))
        stale = vectors is not None and not vectors.current
        if model is not None and (vectors is None or stale):
            if not build:
                raise IndexMissingError(
                    f"{pipeline.path}: the index of corpus {name!r} has no "
                    f"{'up-to-date ' if stale else ''}vectors of {model} ({target}); build "
                    f"them with `runner index {pipeline.path}`, or run without --no-build"
                )
            # vectors of another embedded text: its pages whose text is the same keep theirs
            previous = vectors if stale else None
            vectors, embedded = _embed(
                corpus, model, target, PageStore(target / PAGES_FILE).all(), previous, progress
            )
            return _load(corpus, target, vectors, started=started, pages=pages, embedded=embedded)
        return _load(corpus, target, vectors, started=started, pages=pages)
    if not build:
        raise IndexMissingError(
            f"{pipeline.path}: the index of corpus {name!r} is {reason} ({target}); build it "
            f"with `runner index {pipeline.path}`, or run without --no-build"
        )
    assert snapshot is not None  # an index not up to date was listed to say so
    return _build(pipeline.path, corpus, model, source, target, snapshot, reason, progress)


def vector_model(pipeline: Pipeline, corpus: Corpus) -> str | None:
    """The embedding model whose vectors the corpus's index keeps: its `embedding.model`, else
    runner's default when a tool searches it by `mode: vector` or `hybrid`; None: BM25 alone."""
    if corpus.embedding is not None and corpus.embedding.provider is not None:
        from runner.embedding.remote import declare, spec_from

        return declare(spec_from(corpus.embedding))
    if corpus.embedding is not None:
        return corpus.embedding.model
    for tool in pipeline.tools:
        options = tool.options
        if (
            getattr(options, "corpus", None) == corpus.name
            and getattr(options, "mode", "keyword") != "keyword"
        ):
            from runner.embedding import DEFAULT_MODEL

            return DEFAULT_MODEL
    return None


def _stored_vectors(
    target: Path, model: str | None, pages: int | None, pieces: bool = True
) -> VectorIndex | None:
    """The vectors of `model` stored in the index folder (of `pages` pages, when given), with
    the pages' word pieces when the corpus reranks (`pieces`)."""
    if model is None:
        return None
    from runner.retrieval.vectors import VectorIndex  # numpy: only for a corpus with vectors

    vectors = VectorIndex.load(target, model)
    if vectors is None or (pages is not None and len(vectors) != pages):
        return None
    if pieces and vectors.tokens is None:  # built before the pieces were kept, or with rerank 0
        return None
    return vectors


def _reranks(corpus: Corpus) -> bool:
    """Whether the corpus's searches rerank, and so its index keeps the pages' word pieces."""
    if corpus.embedding is not None and corpus.embedding.reranker is not None:
        return False  # a rerank endpoint reads the pages' text, not their word pieces
    rerank = corpus.embedding.rerank if corpus.embedding is not None else DEFAULT_RERANK
    return rerank > 0


def _embed(
    corpus: Corpus,
    model: str,
    folder: Path,
    pages: list[Page],
    previous: VectorIndex | None,
    progress: ProgressCallback | None,
) -> tuple[VectorIndex, int]:
    """The pages' vectors written into `folder`, reusing `previous`'s unchanged ones; and how
    many pages were embedded anew."""
    from runner.embedding import ModelUnavailable
    from runner.embedding.models import load_embedder
    from runner.retrieval.vectors import build_vectors

    try:
        embedder = load_embedder(model)
    except ModelUnavailable as error:
        raise CorpusError(f"corpus {corpus.name!r}: {error}") from None
    report = progress or (lambda stage, done, total: None)
    report("embed", 0, len(pages))
    return build_vectors(
        pages,
        embedder,
        folder,
        previous,
        lambda done, total: report("embed", done, total),
        pieces=_reranks(corpus),
    )


def _corpus(pipeline: Pipeline, name: str) -> Corpus:
    corpus = pipeline.corpora.get(name)
    if corpus is None:
        known = ", ".join(sorted(pipeline.corpora)) or "none"
        raise CorpusError(
            f"{pipeline.path}: no corpus named {name!r} (corpora defined: {known}); add it under "
            "`corpora:` or fix the tool's `corpus:`"
        )
    return corpus


def _build(
    pipeline_path: Path,
    corpus: Corpus,
    model: str | None,
    source: Path,
    target: Path,
    snapshot: manifests.Snapshot,
    reason: str,
    progress: ProgressCallback | None,
) -> CorpusIndex:
    # imported by a build only (its patterns compiled at import): opening an index never pages
    from runner.retrieval.navigation import paginate_all

    started = time.perf_counter()
    report = progress or (lambda stage, done, total: None)
    documents = []
    paths = snapshot.paths(source)
    report("read", 0, len(paths))  # a build starts: callers may say so
    for done, path in enumerate(paths, 1):
        try:
            documents.append(read_document(source, path, corpus.html_drop))
        except CorpusError as error:  # the file is named relative to the corpus: say which
            raise type(error)(f"corpus {corpus.name!r} ({corpus.path}): {error}") from None
        report("read", done, len(paths))
    pages = paginate_all(documents, corpus.max_words)  # navigation pages marked
    if not pages:
        patterns = ", ".join(corpus.include)
        raise CorpusError(
            f"{pipeline_path}: corpus {corpus.name!r}: no text in {source} (include: {patterns}); "
            "add .md, .txt, .rst, .html or .pdf files, or fix corpora."
            f"{corpus.name}.include"
        )
    report("index", 0, 1)
    building = target.parent / f".{target.name}.building-{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    # a page is indexed with its section's heading once more: the heading says what the section
    # is about (a title field, weighted double), and the parts of a long section share it; a
    # page of several sections with each of theirs
    keyword = KeywordIndex.build(
        ["\n".join([*page.section_headings, page.text]) for page in pages], building
    )
    write_pages(building / PAGES_FILE, pages)
    report("index", 1, 1)
    vectors, embedded = None, 0
    if model is not None:  # the previous index's vectors are reused for unchanged pages
        previous = _stored_vectors(target, model, None, pieces=False)
        vectors, embedded = _embed(corpus, model, building, pages, previous, progress)
    report("save", 0, 1)
    content = snapshot.content_sha256(source)
    seconds = time.perf_counter() - started
    manifest = {
        "corpus": corpus.name,
        "source": str(source),
        "settings": snapshot.settings,
        "files": snapshot.files,
        **manifests.listing_record(corpus, source, snapshot),
        "content_sha256": content,
        "pages": len(pages),
        "build_seconds": round(seconds, 3),
    }
    manifests.write_manifest(building, manifest)
    _swap_in(building, target)
    report("save", 1, 1)
    status = IndexStatus(corpus.name, True, reason, len(pages), seconds, embedded)
    if vectors is not None:  # mapped again from where the swap put them
        vectors = _stored_vectors(target, vectors.model, None, _reranks(corpus))
    return _index(corpus, target, keyword, vectors, status)


def _index(
    corpus: Corpus,
    target: Path,
    keyword: Any,
    vectors: VectorIndex | None,
    status: IndexStatus,
) -> CorpusIndex:
    return CorpusIndex(
        corpus.name,
        target,
        keyword,
        PageStore(target / PAGES_FILE),
        status,
        vectors,
        keep_navigation=corpus.navigation == "keep",
        synonyms=corpus.synonyms,
        rerank=corpus.embedding.rerank if corpus.embedding is not None else DEFAULT_RERANK,
        reranker=corpus.embedding.reranker if corpus.embedding is not None else None,
    )


def _swap_in(building: Path, target: Path) -> None:
    """Replace `target` by the finished `building` folder (a rename, so readers never see a
    half-written index)."""
    old = target.parent / f".{target.name}.old-{os.getpid()}"
    if target.exists():
        os.replace(target, old)
    os.replace(building, target)
    shutil.rmtree(old, ignore_errors=True)


def _load(
    corpus: Corpus,
    target: Path,
    vectors: VectorIndex | None,
    *,
    started: float,
    pages: int,
    embedded: int = 0,
) -> CorpusIndex:
    keyword = KeywordIndex.load(target)  # memory-mapped: nothing read but the vocabulary
    seconds = time.perf_counter() - started
    status = IndexStatus(corpus.name, False, "up to date", pages, seconds, embedded)
    return _index(corpus, target, keyword, vectors, status)


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


__all__ = [
    "SEARCH_MODES",
    "CorpusIndex",
    "IndexMissingError",
    "IndexStatus",
    "ScoredPage",
    "corpus_loader",
    "index_folder",
    "open_corpus",
    "vector_model",
]
