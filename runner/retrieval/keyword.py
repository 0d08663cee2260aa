"""Keyword search: BM25 (bm25s) over a corpus's pages, its matrices memory-mapped.

Built with the tokenisation llama-index's BM25Retriever uses (bm25s's tokenizer, English stop
words, the Snowball English stemmer), so results match what runner returned before it kept its
own index. Saved without the corpus (the pages are in the page store); loaded with `mmap=True`,
so opening an index maps its arrays instead of reading them: the cost of opening does not grow
with the corpus, only the vocabulary is read.

bm25s pads a result list with zero-score hits; `top` drops them (a page that shares no term
with the query is no hit).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np
import Stemmer

BM25_FOLDER = "bm25"
TOKEN_PATTERN = r"(?u)\b\w\w+\b"
_STEMMER = Stemmer.Stemmer("english")


class KeywordIndex:
    def __init__(self, bm25: bm25s.BM25) -> None:
        self.bm25 = bm25
        self._idf_cache: np.ndarray | None = None

    @classmethod
    def build(cls, texts: Sequence[str], folder: Path) -> KeywordIndex:
        tokens = bm25s.tokenize(
            list(texts),
            stopwords="en",
            stemmer=_STEMMER,
            token_pattern=TOKEN_PATTERN,
            show_progress=False,
        )
        bm25 = bm25s.BM25()
        bm25.index(tokens, show_progress=False)
        bm25.save(str(folder / BM25_FOLDER), show_progress=False)
        return cls(bm25)

    @classmethod
    def load(cls, folder: Path) -> KeywordIndex:
        bm25 = bm25s.BM25.load(str(folder / BM25_FOLDER), mmap=True, show_progress=False)
        return cls(bm25)

    @property
    def page_count(self) -> int:
        return int(self.bm25.scores["num_docs"])

    def query_tokens(self, query: str) -> list[str]:
        """The query's tokens as the index knows them (stop words out, stemmed, in the vocab)."""
        tokenized = bm25s.tokenize(
            query,
            stemmer=_STEMMER,
            token_pattern=TOKEN_PATTERN,
            return_ids=False,
            show_progress=False,
        )
        vocabulary = self.bm25.vocab_dict
        return [token for token in tokenized[0] if token in vocabulary]

    def top(self, query: str, k: int) -> list[tuple[int, float]]:
        """(page row, score) of the best k pages, best first, zero scores left out."""
        tokens = self.query_tokens(query)
        if not tokens or k < 1:
            return []
        k = min(k, self.page_count)
        found, scores = self.bm25.retrieve([tokens], k=k, show_progress=False, n_threads=1)
        return [
            (int(number), float(score))
            for number, score in zip(found[0], scores[0], strict=True)
            if score > 0.0
        ]

    def word_weights(self, words: Sequence[str]) -> np.ndarray:
        """Each word's weight as BM25 gives it: the inverse document frequency of its stem
        (the rarest, when it stems to several); 0 for a stop word and a word no page holds."""
        idf = self._idf()
        vocabulary = self.bm25.vocab_dict
        weights = np.zeros(len(words), dtype=np.float32)
        for row, word in enumerate(words):
            tokens = self.query_tokens(word)
            if tokens:
                weights[row] = max(idf[vocabulary[token]] for token in tokens)
        return weights

    def _idf(self) -> np.ndarray:
        """BM25's inverse document frequency per vocabulary id, from the score matrix's columns
        (bm25s keeps one column per term, holding a row per page that has it)."""
        if self._idf_cache is None:
            held = np.diff(np.asarray(self.bm25.scores["indptr"]))
            pages = self.page_count
            self._idf_cache = np.log(1.0 + (pages - held + 0.5) / (held + 0.5)).astype(np.float32)
        return self._idf_cache

    def match_count(self, query: str) -> int:
        """How many pages score above zero: every page that shares a term with the query."""
        tokens = self.query_tokens(query)
        if not tokens:
            return 0
        return int(np.count_nonzero(self.bm25.get_scores(tokens) > 0.0))


def is_complete(folder: Path) -> bool:
    return (folder / BM25_FOLDER / "params.index.json").is_file()
