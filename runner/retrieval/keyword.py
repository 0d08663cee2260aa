"""Keyword search: BM25 over a corpus's pages, its score matrix memory-mapped.

Built by bm25s with the tokenisation llama-index's BM25Retriever uses (bm25s's tokenizer,
English stop words, the Snowball English stemmer), so results match what runner returned before
it kept its own index. bm25s computes every page's score per term at build time (a sparse
matrix, one column per term); runner stores that matrix as three flat binary arrays and answers
a query itself: a query's score for a page is the sum of its terms' columns at that page, which
needs no numpy. Opening an index therefore imports neither bm25s nor numpy (together 150-250 ms
of a fresh process, more than the rest of `runner run`) and reads only the vocabulary; the
arrays are memory-mapped, so the cost of opening does not grow with the corpus.

A query is summed in Python while that is cheaper than importing numpy: always for the first
query of a process (a `runner run` asks one), and for a later one whose terms hold fewer than
NUMPY_FROM entries. A long-running process (`runner serve`, `chat`, `eval`) imports numpy at its
first large query and sums in C from then on (a common word holds an entry for most of the
pages: 100,000 at 100,000 pages). Both sum the same float32 weights in float64, term by term,
so they give the same scores and the same order.

Files in `bm25/`: `params.json` (page count, stop words, array lengths), `vocab.json` (stem ->
term id), `starts.u64` (where each term's column starts), `rows.u32` (the page rows of the
column's entries) and `weights.f32` (their scores), all in the machine's byte order.
"""

from __future__ import annotations

import heapq
import json
import mmap
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import Stemmer

if TYPE_CHECKING:
    import numpy as np

BM25_FOLDER = "bm25"
PARAMS_FILE = "params.json"
TOKEN_PATTERN = r"(?u)\b\w\w+\b"
ARRAY_FORMAT = 1  # bumped when the files' layout changes (the manifest's format rebuilds them)
# (file, memoryview format, numpy type): a term's column is rows[starts[t]:starts[t + 1]]
_Format = Literal["Q", "I", "f"]
_ARRAYS: dict[str, tuple[str, _Format, str]] = {
    "starts": ("starts.u64", "Q", "uint64"),
    "rows": ("rows.u32", "I", "uint32"),
    "weights": ("weights.f32", "f", "float32"),
}
_STEMMER = Stemmer.Stemmer("english")
NUMPY_FROM = 20_000  # entries of a query's terms from which a later query is summed by numpy
_queries_summed = 0  # in this process: the first one never imports numpy
_SPLIT = re.compile(TOKEN_PATTERN).findall
# stems looked up in vocab.json's text before it is parsed whole: a scan of the Python docs'
# 0.6 MB (30,000 stems) takes about 0.2 ms, parsing it 5-8 ms; a query asks a handful of stems,
# a rerank's word weights hundreds
SCANS_BEFORE_PARSE = 16
# how KeywordIndex.build writes the vocabulary (json.dumps' separators): a first entry so
_FIRST_ENTRY = re.compile(r'\{"(?:[^"\\]|\\.)*": \d+[,}]')
_TERM_ID = re.compile(r"\d+")


class Vocabulary(Mapping[str, int]):
    """vocab.json's stem -> term id, parsed only when needed: a stem is looked up in the file's
    text (`"stem": id`, as json.dumps wrote it) until SCANS_BEFORE_PARSE stems were, and the
    whole file parsed after that, or when iterated. A one-question `runner run` looks up a few
    stems: over the Python docs, opening the index and answering its query took 7 ms with the
    file parsed, 2 ms so."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._scanned: dict[str, int | None] = {}
        # parsed at once when the file is not laid out as build writes it (a scan needs that)
        self._parsed: dict[str, int] | None = None if _scannable(text) else json.loads(text)

    def __getitem__(self, stem: str) -> int:
        term = self._term(stem)
        if term is None:
            raise KeyError(stem)
        return term

    def __contains__(self, stem: object) -> bool:
        return isinstance(stem, str) and self._term(stem) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._whole())

    def __len__(self) -> int:
        return len(self._whole())

    def _term(self, stem: str) -> int | None:
        if self._parsed is not None:
            return self._parsed.get(stem)
        if stem not in self._scanned:
            if len(self._scanned) >= SCANS_BEFORE_PARSE:
                return self._whole().get(stem)
            self._scanned[stem] = _scan(self._text, stem)
        return self._scanned[stem]

    def _whole(self) -> dict[str, int]:
        if self._parsed is None:
            self._parsed = json.loads(self._text)
        return self._parsed


def _scannable(text: str) -> bool:
    return text == "{}" or _FIRST_ENTRY.match(text) is not None


def _scan(text: str, stem: str) -> int | None:
    """The term id of `stem` in the vocabulary's JSON text; None when it has none. A key is
    found where an entry starts (after `{` or `, `): inside a string every `"` is escaped, so
    `, "stem": ` cannot start within another key."""
    key = json.dumps(stem) + ": "
    if text.startswith(key, 1):
        start = 1 + len(key)
    else:
        found = text.find(", " + key)
        if found < 0:
            return None
        start = found + 2 + len(key)
    number = _TERM_ID.match(text, start)
    return int(number.group()) if number is not None else None


class KeywordIndex:
    def __init__(
        self,
        vocabulary: Mapping[str, int],
        stopwords: frozenset[str],
        page_count: int,
        arrays: dict[str, memoryview],
    ) -> None:
        self.vocabulary = vocabulary
        self.stopwords = stopwords
        self.page_count = page_count
        self._starts = arrays["starts"]
        self._rows = arrays["rows"]
        self._weights = arrays["weights"]
        self._idf_cache: np.ndarray | None = None

    @classmethod
    def build(cls, texts: Sequence[str], folder: Path) -> KeywordIndex:
        # bm25s and numpy only here: building needs them, opening and searching do not
        import bm25s
        import numpy as np
        from bm25s.stopwords import STOPWORDS_EN

        tokens = bm25s.tokenize(
            list(texts),
            stopwords="en",
            stemmer=_STEMMER,
            token_pattern=TOKEN_PATTERN,
            show_progress=False,
        )
        bm25 = bm25s.BM25()  # "lucene": no score for a term a page lacks (queries sum columns)
        bm25.index(tokens, show_progress=False)
        if bm25.nonoccurrence_array is not None:
            raise RuntimeError("a BM25 variant that scores missing terms cannot be stored")
        target = folder / BM25_FOLDER
        target.mkdir(parents=True, exist_ok=True)
        matrix = bm25.scores
        columns: dict[str, np.ndarray] = {
            "starts": np.asarray(matrix["indptr"], dtype=np.uint64),
            "rows": np.asarray(matrix["indices"], dtype=np.uint32),
            "weights": np.asarray(matrix["data"], dtype=np.float32),
        }
        for name, (file, _, _) in _ARRAYS.items():
            (target / file).write_bytes(columns[name].tobytes())
        vocabulary = {str(stem): int(term) for stem, term in bm25.vocab_dict.items()}
        params = {
            "format": ARRAY_FORMAT,
            "byteorder": sys.byteorder,
            "pages": int(matrix["num_docs"]),
            "lengths": {name: len(column) for name, column in columns.items()},
            "stopwords": sorted(STOPWORDS_EN),
        }
        (target / "vocab.json").write_text(json.dumps(vocabulary), encoding="utf-8")
        # written last: its presence says the index is complete (is_complete)
        (target / PARAMS_FILE).write_text(json.dumps(params), encoding="utf-8")
        return cls.load(folder)

    @classmethod
    def load(cls, folder: Path) -> KeywordIndex:
        source = folder / BM25_FOLDER
        params = json.loads((source / PARAMS_FILE).read_text(encoding="utf-8"))
        if params.get("byteorder") != sys.byteorder:
            raise RuntimeError(f"{source}: written on a machine of another byte order; rebuild")
        vocabulary = Vocabulary((source / "vocab.json").read_text(encoding="utf-8"))
        arrays = {
            name: _mapped(source / file, kind, params["lengths"][name])
            for name, (file, kind, _) in _ARRAYS.items()
        }
        return cls(vocabulary, frozenset(params["stopwords"]), int(params["pages"]), arrays)

    def query_tokens(self, query: str) -> list[str]:
        """The query's tokens as the index knows them (stop words out, stemmed, in the vocab):
        bm25s's tokenisation (lower case, the token pattern, stop words, then the stemmer)."""
        words = [word for word in _SPLIT(query.lower()) if word not in self.stopwords]
        return [stem for stem in _STEMMER.stemWords(words) if stem in self.vocabulary]

    def _summed(self, tokens: Sequence[str]) -> dict[int, float]:
        """Each page's BM25 score for the tokens (a repeated token counts again), pages that
        hold none of them left out."""
        scores: dict[int, float] = {}
        get = scores.get
        for token in tokens:
            term = self.vocabulary[token]
            start, end = self._starts[term], self._starts[term + 1]
            for row, weight in zip(self._rows[start:end], self._weights[start:end], strict=True):
                scores[row] = get(row, 0.0) + weight
        return scores

    def _entries(self, tokens: Sequence[str]) -> int:
        terms = [self.vocabulary[token] for token in tokens]
        return sum(self._starts[term + 1] - self._starts[term] for term in terms)

    def _with_numpy(self, tokens: Sequence[str]) -> bool:
        """Whether to sum these tokens with numpy (see the module's docstring)."""
        global _queries_summed
        _queries_summed += 1
        if "numpy" in sys.modules:
            return True
        return _queries_summed > 1 and self._entries(tokens) >= NUMPY_FROM

    def top(self, query: str, k: int) -> list[tuple[int, float]]:
        """(page row, score) of the best k pages, best first (ties: corpus order), zero scores
        left out (a page that shares no term with the query is no hit)."""
        tokens = self.query_tokens(query)
        if not tokens or k < 1:
            return []
        if self._with_numpy(tokens):
            return self._numpy_top(tokens, k)
        return self._python_top(tokens, k)

    def _python_top(self, tokens: Sequence[str], k: int) -> list[tuple[int, float]]:
        scores = self._summed(tokens)
        if not scores:
            return []
        # the k-th best score first (over the bare floats, in C), then only the pages at or
        # above it are ordered: a common word's tens of thousands of pages are never sorted
        cut = heapq.nlargest(k, scores.values())[-1]
        best = sorted(
            ((row, score) for row, score in scores.items() if score >= cut),
            key=lambda item: (-item[1], item[0]),
        )[:k]
        return [(row, score) for row, score in best if score > 0.0]

    def _dense(self, tokens: Sequence[str]) -> np.ndarray:
        """Every page's score (float64, by page row): the tokens' columns in token order,
        added up in that order, as `_summed` does."""
        import numpy as np  # a later, large query's, or numpy was loaded already

        rows = np.frombuffer(self._rows, dtype=np.uint32)
        weights = np.frombuffer(self._weights, dtype=np.float32)
        spans = [
            (self._starts[term], self._starts[term + 1])
            for term in (self.vocabulary[token] for token in tokens)
        ]
        if not spans:
            return np.zeros(self.page_count, dtype=np.float64)
        picked = np.concatenate([np.arange(start, end) for start, end in spans])
        return np.bincount(
            rows[picked], weights=weights[picked].astype(np.float64), minlength=self.page_count
        )

    def _numpy_top(self, tokens: Sequence[str], k: int) -> list[tuple[int, float]]:
        import numpy as np  # as _dense

        scores = self._dense(tokens)
        hits = np.flatnonzero(scores > 0.0)
        if len(hits) > k:
            cut = np.partition(scores[hits], len(hits) - k)[len(hits) - k]
            hits = hits[scores[hits] >= cut]
        order = np.lexsort((hits, -scores[hits]))[:k]
        return [(int(row), float(scores[row])) for row in hits[order]]

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """Every page's BM25 score for the tokens, as an array by page row (hybrid search)."""
        import numpy as np  # only the searches with vectors ask, and they have numpy loaded

        if not tokens:
            return np.zeros(self.page_count, dtype=np.float32)
        return self._dense(tokens).astype(np.float32)

    def word_weights(self, words: Sequence[str]) -> np.ndarray:
        """Each word's weight as BM25 gives it: the inverse document frequency of its stem
        (the rarest, when it stems to several); 0 for a stop word and a word no page holds."""
        import numpy as np  # the reranker's: it runs beside the page vectors, numpy loaded

        idf = self._idf()
        weights = np.zeros(len(words), dtype=np.float32)
        for row, word in enumerate(words):
            tokens = self.query_tokens(word)
            if tokens:
                weights[row] = max(idf[self.vocabulary[token]] for token in tokens)
        return weights

    def _idf(self) -> np.ndarray:
        """BM25's inverse document frequency per term id, from the score matrix's columns
        (one column per term, holding a row per page that has it)."""
        import numpy as np  # as word_weights

        if self._idf_cache is None:
            held = np.diff(np.frombuffer(self._starts, dtype=np.uint64).astype(np.float64))
            pages = self.page_count
            self._idf_cache = np.log(1.0 + (pages - held + 0.5) / (held + 0.5)).astype(np.float32)
        return self._idf_cache

    def match_count(self, query: str) -> int:
        """How many pages score above zero: every page that shares a term with the query."""
        tokens = self.query_tokens(query)
        if not tokens:
            return 0
        return sum(1 for score in self._summed(tokens).values() if score > 0.0)


def _mapped(path: Path, kind: _Format, length: int) -> memoryview[Any]:
    """The file's values as a read-only typed view, memory-mapped (an empty file: no view).
    Its items are ints or floats as `kind` says."""
    if length == 0:
        return memoryview(b"").cast(kind)
    with path.open("rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    view = memoryview(mapped).cast(kind)
    if len(view) != length:
        raise RuntimeError(f"{path}: {len(view)} values, the index says {length}; rebuild it")
    return view


def is_complete(folder: Path) -> bool:
    return (folder / BM25_FOLDER / PARAMS_FILE).is_file()


__all__ = ["BM25_FOLDER", "KeywordIndex", "is_complete"]
