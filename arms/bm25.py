"""Okapi BM25 over documents keyed by any hashable id (seed 002: no vector store, no embedding model): the
engine's index (`amnesia.relevance.RelevanceIndex`: the same k1, b, idf, and query terms summed once each in
query order), with a slot handed to each document and the rule-based arms' tokenizer, which keeps
stopwords."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

from amnesia.relevance import RelevanceIndex
from arms.textnorm import tokenize

_FIRST_SLOTS = 64  # an arm's index starts small (claims builds one per search) and doubles as it grows


class BM25Index:
    """Incremental BM25 over documents keyed by id: add (or replace), remove, score a query."""

    def __init__(self, *, tokenizer: Callable[[str], list[str]] = tokenize) -> None:
        self._index = RelevanceIndex(_FIRST_SLOTS, tokenizer)
        self._slots: dict[Hashable, int] = {}  # document id -> its slot in the index
        self._texts: dict[Hashable, str] = {}  # document id -> its text (the index removes by re-tokenising)
        self._free: list[int] = []  # slots of removed documents, reused before new ones

    def __len__(self) -> int:
        return len(self._slots)

    def __contains__(self, doc_id: Hashable) -> bool:
        return doc_id in self._slots

    def add(self, doc_id: Hashable, text: str) -> None:
        """Index `text` as document `doc_id` (replacing the document's earlier text, if any)."""
        self.remove(doc_id)
        # with no free slot every slot below len(self._slots) is taken: the next one is new
        slot = self._free.pop() if self._free else len(self._slots)
        self._index.add(slot, text)
        self._slots[doc_id] = slot
        self._texts[doc_id] = text

    def remove(self, doc_id: Hashable) -> None:
        """Drop document `doc_id` (nothing happens if it is not indexed)."""
        slot = self._slots.pop(doc_id, None)
        if slot is None:
            return
        self._index.remove(slot, self._texts.pop(doc_id))
        self._free.append(slot)

    def scores(self, query: str, candidates: Iterable[Hashable] | None = None) -> dict[Hashable, float]:
        """BM25 score of every candidate (default: all documents) that shares at least one term with the
        query, in the candidates' order."""
        if not self._slots:
            return {}
        bm25 = self._index.bm25(self._index.tokenizer(query), len(self._slots) + len(self._free))
        results: dict[Hashable, float] = {}
        for doc_id in self._slots if candidates is None else candidates:
            slot = self._slots.get(doc_id)
            if slot is not None and bm25[slot] > 0.0:
                results[doc_id] = float(bm25[slot])
        return results
