"""A zero-dependency, incremental Okapi BM25 index (seed 002: no vector store, no embedding model)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterable

from arms.textnorm import tokenize


class BM25Index:
    def __init__(self, *, k1: float = 1.2, b: float = 0.75, tokenizer: Callable[[str], list[str]] = tokenize):
        self.k1 = k1
        self.b = b
        self.tokenizer = tokenizer
        self._docs: dict[Hashable, Counter[str]] = {}
        self._lengths: dict[Hashable, int] = {}
        self._df: Counter[str] = Counter()
        self._total_length = 0

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, doc_id: Hashable) -> bool:
        return doc_id in self._docs

    def add(self, doc_id: Hashable, text: str) -> None:
        if doc_id in self._docs:
            self.remove(doc_id)
        counts = Counter(self.tokenizer(text))
        self._docs[doc_id] = counts
        self._lengths[doc_id] = sum(counts.values())
        self._total_length += self._lengths[doc_id]
        self._df.update(counts.keys())

    def remove(self, doc_id: Hashable) -> None:
        counts = self._docs.pop(doc_id, None)
        if counts is None:
            return
        self._total_length -= self._lengths.pop(doc_id)
        self._df.subtract(counts.keys())
        for term in counts:
            if self._df[term] <= 0:
                del self._df[term]

    def scores(self, query: str, candidates: Iterable[Hashable] | None = None) -> dict[Hashable, float]:
        """BM25 score of every candidate (default: all documents) that shares at least one term with
        the query."""
        if not self._docs:
            return {}
        terms = set(self.tokenizer(query))
        count = len(self._docs)
        average_length = self._total_length / count or 1.0
        idf = {
            t: math.log(1 + (count - self._df[t] + 0.5) / (self._df[t] + 0.5)) for t in terms if t in self._df
        }
        results: dict[Hashable, float] = {}
        for doc_id in self._docs if candidates is None else candidates:
            counts = self._docs.get(doc_id)
            if counts is None:
                continue
            norm = self.k1 * (1 - self.b + self.b * self._lengths[doc_id] / average_length)
            score = sum(
                weight * counts[t] * (self.k1 + 1) / (counts[t] + norm)
                for t, weight in idf.items()
                if t in counts
            )
            if score > 0:
                results[doc_id] = score
        return results
