"""Hybrid search (seed 004 §3.4: the memory corpus is indexed both sparsely and as vectors): BM25 plus a
vector similarity, fused into one score.

The vector side needs an embedding model. The default, `HashedNgramEmbedder`, is a STAND-IN shipped with
this package: it hashes character n-grams into a fixed-size vector. It runs offline, needs no download and
gives the same vector for the same text on every machine and Python version (blake2b, not `hash()`). It is
not a semantic model: it sees shared spellings ("oolong" / "oolongs", 乌龙 / 乌龙茶), never synonyms ("tea" /
"oolong").

Fusion (`hybrid_scores`): BM25 scores are divided by the best BM25 score over all the queries and documents
(so the best lexical hit is 1); cosine similarities below `vector_floor` count as 0; a document's score for
one query is `(1 - vector_weight) * bm25_scaled + vector_weight * cosine`, and it keeps its best score over
the queries. A document that neither shares a term with a query nor reaches the floor is not a hit. With
`vector_weight` 0 the scores are BM25 alone.
"""

from __future__ import annotations

import hashlib
import math
import unicodedata
from collections.abc import Hashable, Mapping, Sequence
from functools import lru_cache
from typing import Protocol

from arms.bm25 import BM25Index

Vector = tuple[float, ...]


class Embedder(Protocol):
    """What the hybrid search needs from an embedding model."""

    name: str

    def embed(self, text: str) -> Vector:
        """The text's vector, L2-normalised (all zeros for a text with nothing to embed)."""
        ...


class HashedNgramEmbedder:
    """Character n-grams (n = 2..4 by default) of the NFKC-casefolded text, whitespace collapsed and the
    text padded with one space each side, each hashed (blake2b) to one of `dims` signed buckets; then
    L2-normalised. A deterministic stand-in for an embedding model (see the module docstring)."""

    def __init__(self, dims: int = 512, ngram_sizes: Sequence[int] = (2, 3, 4)) -> None:
        self.dims = dims
        self.ngram_sizes = tuple(ngram_sizes)
        self.name = f"hashed-char-ngrams-{'-'.join(map(str, self.ngram_sizes))}x{dims}"

    def embed(self, text: str) -> Vector:
        return _hashed_ngrams(text, self.dims, self.ngram_sizes)


@lru_cache(maxsize=4096)  # a search embeds every claim again: the texts seldom change between searches
def _hashed_ngrams(text: str, dims: int, ngram_sizes: tuple[int, ...]) -> Vector:
    normal = " " + " ".join(unicodedata.normalize("NFKC", text).casefold().split()) + " "
    buckets = [0.0] * dims
    for size in ngram_sizes:
        for start in range(max(0, len(normal) - size + 1)):
            digest = hashlib.blake2b(normal[start : start + size].encode("utf-8"), digest_size=8).digest()
            value = int.from_bytes(digest, "big")
            # the top bit picks the sign, so that unrelated n-grams sharing a bucket tend to cancel out
            buckets[value % dims] += -1.0 if value >> 63 else 1.0
    norm = math.sqrt(sum(v * v for v in buckets))
    return tuple(v / norm for v in buckets) if norm else tuple(buckets)


def cosine(left: Vector, right: Vector) -> float:
    """Cosine similarity of two L2-normalised vectors."""
    return sum(a * b for a, b in zip(left, right, strict=True))


def hybrid_scores(
    queries: Sequence[str],
    documents: Mapping[Hashable, str],
    embedder: Embedder,
    *,
    vector_weight: float,
    vector_floor: float,
) -> dict[Hashable, float]:
    """Every document that is a hit for some query, with its fused score in [0, 1] (best over the queries)."""
    index = BM25Index()
    for doc_id, text in documents.items():
        index.add(doc_id, text)
    vectors = {doc_id: embedder.embed(text) for doc_id, text in documents.items()} if vector_weight else {}
    lexical = [index.scores(query) for query in queries]
    top = max((score for scores in lexical for score in scores.values()), default=0.0)
    best: dict[Hashable, float] = {}
    for query, scores in zip(queries, lexical, strict=True):
        query_vector = embedder.embed(query) if vector_weight else ()
        for doc_id in documents:
            bm25 = scores.get(doc_id, 0.0) / top if top > 0 else 0.0
            similarity = cosine(query_vector, vectors[doc_id]) if vector_weight else 0.0
            similarity = similarity if similarity >= vector_floor else 0.0
            if bm25 <= 0 and similarity <= 0:
                continue
            score = (1.0 - vector_weight) * bm25 + vector_weight * similarity
            best[doc_id] = max(best.get(doc_id, 0.0), score)
    return best
