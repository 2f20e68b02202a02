"""Query-aware injection order (`injection_order: relevance`): an incremental Okapi BM25 index over the live
items, and the ranking that combines it with strength.

The index holds, per term, the column slots of the live items that contain it and the term's frequency in
each (two flat arrays, read by numpy without a copy, and a slot -> position map for O(1) removal), and each
slot's length, for the live items only: `ItemIndex` adds an item when it is written and removes it when the
store has deleted it, so a forgotten item's terms leave the index in the same step as its row leaves the
store (a term no live item has any more is dropped with its postings list). Nothing is persisted: the index
is rebuilt from the store when the engine loads, so there is no index file that could keep forgotten text.

Terms are `amnesia.text.tokenize`'s — stemmed lowercase Latin words and CJK unigrams + bigrams — minus
English stopwords (`amnesia.text.STOPWORDS`), in documents and queries alike. The rule-based arms' BM25
(`arms/bm25.py`) is this index with `amnesia.text.tokenize` as is: stopwords kept, so their results stay as
they were measured.

Ranking, for one query q over the candidates C (visible, live, not stale):

    bm25(d)  = sum over terms t of q: idf(t) * tf(t,d) * (k1 + 1) / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)   = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))        N, df, avgdl over every live item
    M(d)     = the set of query terms that occur in d
    level(d) = max of bm25(e) over the candidates e with M(e) = M(d)   (the same-terms rule)
    rel(d)   = level(d) / max over C of bm25                     in [0, 1]; 0 when no query term is in d
    score(d) = w * rel(d) + (1 - w) * strength(d)                w = relevance_weight (default 0.8)

and the block takes pinned items first, then score descending, then the strength order's tie-breaks (last
access, newest, write order). A query with no indexed term gives rel = 0 everywhere: the strength order.
That is `relevance_rule: score`, the default. The other rules replace the score:

    gate:    ((1 if rel(d) >= tau and some query term is in d, else 0) + strength(d)) / 2
             tau = relevance_gate: the relevant tier first, each tier in the strength order
    fusion:  1 / (60 + rank_strength(d)) + 1 / (60 + rank_rel(d))      (reciprocal rank fusion; the second
             term only when some query term is in d; ranks are competition ranks: equal values share one)

and `relevance_duplicates: demote` sets level(d) = 0 for every candidate that is not the first, in the
strength order, of the candidates containing exactly its query terms. What each rule costs and gains on
generated tasks and LoCoMo: docs/engine.md, "Choosing the ranking rule".

The same-terms rule: candidates that contain exactly the same query terms are equally relevant, so the
strength order decides between them. For one-line memories BM25 then differs only by term frequency and
length, which say little about which line answers the question — and when one line is a restatement of
another (an update without a key: "codename: Heron" then "codename: Falcon (final, cleared by legal)"),
length normalisation favours the older, terser version. With the rule, relevance never orders two such
lines differently from the strength order, so it cannot bring back an older version that the strength
order keeps below the newer one. Candidates whose matched terms differ are still ordered by BM25: when a
question's words occur only in the older line, the older line ranks first (no lexical rule can tell an
update from a different fact there; keys, `supersedes` and ttls decide which version is alive).
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from amnesia.text import STOPWORDS, tokenize

K1 = 1.2  # BM25 term-frequency saturation
B = 0.75  # BM25 length normalisation
MATCHED_SHOWN = 6  # matched terms named in one explanation
FUSION_K = 60  # reciprocal rank fusion's constant (Cormack, Clarke and Buettcher, SIGIR 2009)


def terms(text: str) -> list[str]:
    """The index terms of a text (documents and queries alike)."""
    return tokenize(text, STOPWORDS)


class Postings:
    """The live items that contain one term: their slots and the term's frequency in each, in no order."""

    __slots__ = ("counts", "slots", "where")

    def __init__(self) -> None:
        self.slots = array("q")  # int64, as numpy reads it
        self.counts = array("d")  # float64: the term's frequency in the item at the same position
        self.where: dict[int, int] = {}  # slot -> its position in both arrays

    def __len__(self) -> int:
        return len(self.slots)

    def remove(self, slot: int) -> None:
        """Drop `slot`: the last entry moves into its place."""
        position = self.where.pop(slot)
        last_slot, last_count = self.slots.pop(), self.counts.pop()
        if position < len(self.slots):
            self.slots[position], self.counts[position] = last_slot, last_count
            self.where[last_slot] = position

    def frequencies(self) -> dict[int, int]:
        """{slot: frequency}: the postings as a plain mapping (order-free, for comparisons)."""
        return {slot: int(count) for slot, count in zip(self.slots, self.counts, strict=True)}


class RelevanceIndex:
    """BM25 postings over the live items, keyed by their column slot. The one BM25 of the project: the
    rule-based arms' `arms.bm25.BM25Index` keys documents by id over this index, with its own `tokenizer`."""

    def __init__(self, capacity: int = 1024, tokenizer: Callable[[str], list[str]] = terms) -> None:
        self.tokenizer = tokenizer  # text -> index terms, for documents and queries alike
        self.postings: dict[str, Postings] = {}  # term -> the live items that contain it
        self.lengths = np.zeros(capacity, dtype=np.float64)  # terms per slot (0: free slot)
        self.documents = 0  # live items indexed
        self.total_length = 0.0  # sum of their lengths

    def add(self, slot: int, text: str) -> None:
        """Index a newly written item in `slot` (a slot is added once per item: contents never change)."""
        counts = Counter(self.tokenizer(text))
        postings = self.postings
        for term, frequency in counts.items():
            holders = postings.get(term)
            if holders is None:
                holders = postings[term] = Postings()
            # appended in place (no method call): this loop runs for every term of every write
            holders.where[slot] = len(holders.slots)
            holders.slots.append(slot)
            holders.counts.append(frequency)
        if slot >= len(self.lengths):
            grown = np.zeros(max(2 * len(self.lengths), slot + 1), dtype=np.float64)
            grown[: len(self.lengths)] = self.lengths
            self.lengths = grown
        length = float(sum(counts.values()))
        self.lengths[slot] = length
        self.documents += 1
        self.total_length += length

    def remove(self, slot: int, text: str) -> None:
        """Drop the item in `slot` (its text re-tokenised: the index keeps no per-item term list)."""
        postings = self.postings
        for term in set(self.tokenizer(text)):
            holders = postings[term]
            holders.remove(slot)
            if not holders:  # the last live item with this term is gone: so is the term
                del postings[term]
        self.documents -= 1
        self.total_length -= self.lengths[slot]
        self.lengths[slot] = 0.0

    def bm25(self, query_terms: Iterable[str], size: int) -> np.ndarray:
        """BM25 of every slot below `size` for the query terms (0 where none occurs)."""
        scores = np.zeros(size, dtype=np.float64)
        if not self.documents:
            return scores
        average = self.total_length / self.documents or 1.0
        for term in dict.fromkeys(query_terms):  # a repeated query term counts once, in query order
            holders = self.postings.get(term)
            if not holders:
                continue
            slots = np.frombuffer(holders.slots, dtype=np.int64)  # views: released when the loop moves on
            frequency = np.frombuffer(holders.counts, dtype=np.float64)
            idf = np.log(1.0 + (self.documents - len(holders) + 0.5) / (len(holders) + 0.5))
            norm = K1 * (1.0 - B + B * self.lengths[slots] / average)
            scores[slots] += idf * frequency * (K1 + 1.0) / (frequency + norm)
        return scores

    def same_terms_best(
        self, query_terms: Iterable[str], slots: np.ndarray, scores: np.ndarray
    ) -> np.ndarray:
        """For each of `slots`, the largest of `scores` over the `slots` that contain exactly the same query
        terms. Sets are compared exactly: one bit per distinct query term, 64 to a word."""
        if not len(slots):
            return np.zeros(0)
        order, starts = self._same_terms_groups(query_terms, slots, len(scores))
        best = np.maximum.reduceat(scores[slots[order]], starts)
        result = np.empty(len(slots), dtype=np.float64)
        result[order] = np.repeat(best, np.diff(np.r_[starts, len(slots)]))
        return result

    def same_terms_firsts(self, query_terms: Iterable[str], slots: np.ndarray, size: int) -> np.ndarray:
        """Of `slots` (in a priority order; every slot below `size`), a mask of the first of each set of slots
        that contain exactly the same query terms."""
        first = np.zeros(len(slots), dtype=bool)
        if len(slots):
            order, starts = self._same_terms_groups(query_terms, slots, size, stable=True)
            first[order[starts]] = True  # a stable sort keeps each group's slots in their given order
        return first

    def _same_terms_groups(
        self, query_terms: Iterable[str], slots: np.ndarray, size: int, stable: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """`slots` (every indexed slot below `size`) grouped by the set of query terms each contains: an order
        that puts equal sets side by side, and where each group starts in it."""
        unique = list(dict.fromkeys(query_terms))
        words = max(1, -(-len(unique) // 64))
        bits = np.zeros((words, size), dtype=np.uint64)
        for position, term in enumerate(unique):
            holders = self.postings.get(term)
            if holders:
                held = np.frombuffer(holders.slots, dtype=np.int64)
                bits[position // 64, held] |= np.uint64(1 << (position % 64))
        rows = bits[:, slots]
        kind = "stable" if stable else None
        order = np.argsort(rows[0], kind=kind) if words == 1 else np.lexsort(rows)  # lexsort is stable
        ordered = rows[:, order]
        starts = np.flatnonzero(np.r_[True, (ordered[:, 1:] != ordered[:, :-1]).any(axis=0)])
        return order, starts

    def matched(self, query_terms: Iterable[str], slot: int) -> list[str]:
        """The query terms that occur in the item in `slot`."""
        postings = self.postings
        return [
            term for term in dict.fromkeys(query_terms) if term in postings and slot in postings[term].where
        ]

    def frequencies(self) -> dict[str, dict[int, int]]:
        """{term: {slot: frequency}} of the whole index (for comparisons and audits; not on a hot path)."""
        return {term: holders.frequencies() for term, holders in self.postings.items()}


@dataclass(frozen=True)
class Ranking:
    """The relevance order of one selection: `keys` sort the candidates (larger first, pinned aside)."""

    query_terms: tuple[str, ...]
    bm25: np.ndarray  # per slot
    level: np.ndarray  # per slot: the largest bm25 among the candidates that match the same query terms
    best: float  # the largest bm25 among the candidates (0: nothing matched)
    keys: np.ndarray  # per slot: what orders the candidates under `rule`
    rule: str  # score | gate | fusion
    weight: float  # rule "score": w
    gate: float  # rule "gate": tau
    ranks: tuple[np.ndarray, np.ndarray] | None = None  # rule "fusion": relevance and strength rank per slot

    def explain(self, index: RelevanceIndex, slot: int, strength: float, pinned: bool) -> str:
        """Why this candidate ranks where it does, in one line."""
        first = "pinned first; " if pinned else ""
        raw, key = float(self.bm25[slot]), float(self.keys[slot])
        if raw <= 0.0:
            matched = "no query term matched"
        else:
            words = index.matched(self.query_terms, slot)
            shown = ", ".join(words[:MATCHED_SHOWN]) + (", …" if len(words) > MATCHED_SHOWN else "")
            level = float(self.level[slot])
            lifted = f", {level:.2f} for the same matched terms" if level > raw else ""
            if level == 0.0:
                lifted = ", 0: a line the strength order ranks first matches the same terms"
            matched = f"bm25 {raw:.2f}{lifted} of best {self.best:.2f} (matched: {shown})"
        rel = float(self.level[slot]) / self.best if raw > 0.0 else 0.0
        if self.rule == "gate":
            tier = "relevant tier" if raw > 0.0 and rel >= self.gate else "lower tier"
            gate = f"relevance {rel:.3f} vs gate {self.gate:.2f}"
            return f"{first}{matched}: {gate}: {tier}, strength {strength:.3f}"
        if self.rule == "fusion" and self.ranks is not None:
            by_relevance, by_strength = (int(ranks[slot]) for ranks in self.ranks)
            relevance_part = f"1/({FUSION_K}+{by_relevance}) + " if by_relevance else ""
            return (
                f"{first}{matched}: score {relevance_part}1/({FUSION_K}+{by_strength}) (strength "
                f"{strength:.3f}, rank {by_strength}) = {key:.4f}"
            )
        share = 1.0 - self.weight
        if raw <= 0.0:
            return f"{first}{matched}: score {share:.2f}·strength {strength:.3f} = {key:.3f}"
        score = f"{self.weight:.2f}·{rel:.3f} + {share:.2f}·strength {strength:.3f}"
        return f"{first}{matched}: score {score} = {key:.3f}"


def competition_ranks(values: np.ndarray) -> np.ndarray:
    """1 + how many of `values` are strictly larger than each one (equal values share a rank)."""
    ordered = np.sort(values)
    return len(values) - np.searchsorted(ordered, values, side="right") + 1.0


def rank(
    index: RelevanceIndex,
    query: str,
    strengths: np.ndarray,
    candidates: np.ndarray,
    rule: str = "score",
    weight: float = 0.8,
    gate: float = 0.5,
    strength_order: Callable[[np.ndarray], np.ndarray] | None = None,
) -> Ranking:
    """The relevance ranking of `candidates` (slots) for `query` under `rule`; `strengths` cover every
    slot. A query that matches no candidate gives the strength order under every rule. With `strength_order`
    (slots -> the same slots in the strength order; relevance_duplicates "demote"), of the candidates that
    match exactly the same query terms only the first in the strength order keeps its relevance."""
    query_terms = tuple(index.tokenizer(query))
    bm25 = index.bm25(query_terms, len(strengths))
    best = float(bm25[candidates].max()) if len(candidates) else 0.0
    hit = candidates[bm25[candidates] > 0.0]  # empty when nothing matched: rel = 0 everywhere
    level = np.zeros_like(bm25)
    level[hit] = index.same_terms_best(query_terms, hit, bm25)
    if strength_order is not None and len(hit):
        ordered = strength_order(hit)
        level[ordered[~index.same_terms_firsts(query_terms, ordered, len(bm25))]] = 0.0
        hit = hit[level[hit] > 0.0]
    rel = level / best if best > 0.0 else level
    ranks = None
    if rule == "gate":
        # halved so that keys stay in [0, 1] (pinned add 2): the relevant tier in [1/2, 1], the rest in
        # [0, 1/2]; dividing by 2 is exact, so equal strengths stay equal inside a tier
        keys = ((rel >= gate) & (level > 0.0)) * 0.5 + strengths * 0.5
    elif rule == "fusion":
        by_relevance, by_strength = np.zeros_like(bm25), np.zeros_like(bm25)
        by_relevance[hit] = competition_ranks(level[hit])
        by_strength[candidates] = competition_ranks(strengths[candidates])
        keys = np.zeros_like(bm25)
        keys[candidates] = 1.0 / (FUSION_K + by_strength[candidates])
        keys[hit] += 1.0 / (FUSION_K + by_relevance[hit])
        ranks = (by_relevance, by_strength)
    else:
        keys = (1.0 - weight) * strengths + weight * rel
    return Ranking(query_terms, bm25, level, best, keys, rule, weight, gate, ranks)
