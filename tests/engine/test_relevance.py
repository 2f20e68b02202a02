"""injection_order "relevance": BM25 to the query combined with strength, over the live, non-stale items only;
pinned first, the budget exact, every rank explained, the index kept equal to the live items, renewal per
renew_on_inject, and the default strength order untouched by a query."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from amnesia import Amnesia, Config, InMemoryStore, SimulatedClock
from amnesia.errors import InvalidInput
from amnesia.relevance import K1, B, RelevanceIndex, terms
from amnesia.tokens import count_tokens

DAY = 86_400.0


def make(**config: object) -> tuple[Amnesia, SimulatedClock]:
    clock = SimulatedClock(1_000.0)
    engine = Amnesia(store=InMemoryStore(), config=Config(**config), clock=clock)  # type: ignore[arg-type]
    return engine, clock


def block_ids(block: str) -> list[str]:
    return [line.split("]")[0][3:] for line in block.splitlines()[1:]]


def rebuilt(engine: Amnesia) -> RelevanceIndex:
    """A fresh index of exactly the engine's live items, in their column slots."""
    fresh = RelevanceIndex()
    for item in engine._items.values():
        fresh.add(engine._index.columns.slot_of[item.id], item.content)
    return fresh


def assert_index_is_the_live_items(engine: Amnesia) -> None:
    index, fresh = engine._index.relevance, rebuilt(engine)
    assert index is not None
    assert index.frequencies() == fresh.frequencies()
    assert index.documents == fresh.documents == len(engine._items)
    assert math.isclose(index.total_length, fresh.total_length, abs_tol=1e-9)
    size = max(len(index.lengths), len(fresh.lengths))  # free slots have length 0 in both
    padded = [np.pad(lengths, (0, size - len(lengths))) for lengths in (index.lengths, fresh.lengths)]
    assert np.array_equal(*padded)


def test_a_relevant_memory_outranks_stronger_unrelated_ones_and_pinned_stay_first() -> None:
    engine, clock = make(injection_order="relevance")
    drink = engine.remember("The verification drink is oolong.", ttl="30d").id
    clock.advance(5 * DAY)  # the drink memory has decayed; the later ones are at full strength
    pinned = engine.remember("Answer in French.", kind="preference", pin=True).id
    fresh = [engine.remember(f"Fresh note {n} about the deploy rota.", ttl="30d").id for n in range(5)]
    plan = engine.preview(query="Which drink should I order?")
    assert [d.id for d in plan.decisions][:2] == [pinned, drink]
    assert plan.order == "relevance" and plan.query == "Which drink should I order?"
    assert engine.preview().decisions[1].id == fresh[0]  # without a query: the strength order
    strength_engine, _ = make()
    for item in engine.plugs():
        strength_engine.remember(item.content, ttl="30d")
    assert strength_engine.preview(query="drink").order == "strength"


def test_every_rank_is_explained_with_the_documented_score() -> None:
    engine, clock = make(injection_order="relevance", relevance_weight=0.6)
    engine.remember("The staging database is db-stage-3.", ttl="30d")
    engine.remember("Staging deploys happen on Fridays, staging first.", ttl="30d")
    engine.remember("Lunch is at noon.", ttl="30d")
    clock.advance(DAY)
    plan = engine.preview(query="staging database")
    first, second, third = plan.decisions
    assert [d.rank for d in plan.decisions] == [1, 2, 3]
    assert "(matched: staging, database)" in first.why
    assert "matched: staging" in second.why and "no query term matched" in third.why
    # score = w * bm25 / best + (1 - w) * strength, as the explanation states it
    score = float(first.why.rsplit("= ", 1)[1])
    assert math.isclose(score, 0.6 * 1.0 + 0.4 * first.strength, abs_tol=2e-3)
    assert float(third.why.rsplit("= ", 1)[1]) == pytest.approx(0.4 * third.strength, abs=2e-3)


def test_bm25_matches_the_textbook_formula() -> None:
    index = RelevanceIndex()
    texts = ["oolong tea oolong", "green tea", "coffee beans and more coffee"]
    for slot, text in enumerate(texts):
        index.add(slot, text)
    scores = index.bm25(terms("oolong tea"), 3)
    docs = [terms(text) for text in texts]
    average = sum(map(len, docs)) / 3

    def expected(doc: list[str]) -> float:
        total = 0.0
        for term in ("oolong", "tea"):
            df = sum(term in d for d in docs)
            tf = doc.count(term)
            idf = math.log(1 + (3 - df + 0.5) / (df + 0.5))
            total += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * len(doc) / average))
        return total

    assert scores.tolist() == pytest.approx([expected(doc) for doc in docs])
    assert scores[2] == 0.0


def test_an_unkeyed_restatement_outranks_the_version_it_replaces_in_a_one_line_block() -> None:
    """A -> B -> A without keys: the three lines match the question on the same terms, so the strength order
    decides between them (BM25 alone prefers the two terser, older lines)."""
    engine, clock = make(injection_order="relevance")
    falcon = engine.remember("Q3 release codename: Falcon.", ttl="60d").id
    clock.advance(2 * DAY)
    heron = engine.remember("Q3 release codename: Heron.", ttl="60d").id
    clock.advance(3 * DAY)
    final = engine.remember("Q3 release codename: Falcon (final, cleared by legal).", ttl="60d").id
    clock.advance(3 * DAY)
    question = "What codename goes on the Q3 release banner?"
    assert (
        block_ids(engine.preview(50, query=question).block) == [final] == block_ids(engine.preview(50).block)
    )
    decisions = engine.preview(query=question).decisions
    assert [d.id for d in decisions] == [final, heron, falcon]
    assert decisions[0].why.startswith("bm25 0.34, 0.44 for the same matched terms of best 0.44 (matched: ")
    assert decisions[1].why.startswith("bm25 0.44 of best 0.44 (matched: codename, q3, release)")
    scores = [float(d.why.rsplit("= ", 1)[1]) for d in decisions]
    assert scores == pytest.approx([0.8 + 0.2 * d.strength for d in decisions], abs=2e-3)


def test_cjk_queries_rank_by_bigrams() -> None:
    engine, _ = make(injection_order="relevance")
    engine.remember("部署脚本在这里。", ttl="30d")
    tea = engine.remember("我最喜欢的茶是乌龙茶。", ttl="30d").id
    engine.remember("会议改到周五。", ttl="30d")
    assert engine.preview(query="乌龙茶").decisions[0].id == tea
    assert "乌龙" in engine.preview(query="乌龙茶").decisions[0].why


def test_stale_memories_never_reach_the_block_however_relevant() -> None:
    engine, clock = make(injection_order="relevance")
    old = engine.remember("The verification drink is lapsang.", ttl="10d").id
    clock.advance(5 * DAY)  # ebbinghaus: stale at about 0.4 ttl
    new = engine.remember("Remember the weekly rota.", ttl="30d").id
    assert engine.status().counts["stale"] == 1
    injection = engine.select_for_injection(query="What is the verification drink, lapsang?")
    assert block_ids(injection.block) == [new]
    assert engine.preview(query="lapsang").excluded["stale"] == 1
    assert old not in block_ids(engine.preview(query="lapsang").block)


@pytest.mark.parametrize("mode", ["full", "none", "used"])
def test_renewal_on_injection_follows_renew_on_inject(mode: str) -> None:
    engine, clock = make(injection_order="relevance", renew_on_inject=mode)
    drink = engine.remember("The verification drink is oolong.", ttl="30d").id
    rota = engine.remember("The deploy rota changes weekly.", ttl="30d").id
    clock.advance(DAY)
    injection = engine.select_for_injection(query="drink?")
    touched = {i: engine.inspect(i).last_accessed_at == clock.now() for i in (drink, rota)}  # type: ignore[union-attr]
    assert touched == {drink: mode == "full", rota: mode == "full"}
    renewed = engine.report_answer(injection, "It is oolong.", question="drink?")
    assert renewed == ([drink] if mode == "used" else [])


def test_the_query_is_checked_and_blank_queries_use_the_strength_order() -> None:
    engine, _ = make(injection_order="relevance")
    engine.remember("The verification drink is oolong.", ttl="30d")
    with pytest.raises(InvalidInput, match=r"^query: expected a string or None, got int$"):
        engine.select_for_injection(query=3)  # type: ignore[arg-type]
    assert engine.preview(query="   ").order == "strength"
    assert engine.select_for_injection(query="drink").details["order"] == "relevance"
    assert "order" not in engine.select_for_injection().details


texts = st.lists(
    st.sampled_from(["tea", "oolong", "deploy", "friday", "staging", "北京", "会议", "rota", "alpha", "the"]),
    min_size=1,
    max_size=8,
).map(" ".join)
operation = st.one_of(
    st.tuples(st.just("remember"), texts, st.sampled_from([600.0, 3_600.0, DAY]), st.booleans()),
    st.tuples(st.just("forget"), st.integers(0, 30)),
    st.tuples(st.just("advance"), st.sampled_from([10.0, 300.0, 3_000.0, 40_000.0])),
    st.tuples(st.just("select"), texts, st.integers(0, 120)),
)


def play(
    engine: Amnesia,
    clock: SimulatedClock,
    operations: list[tuple],
    on_select: Callable[[str, int], object],
    after_each: Callable[[], object] = lambda: None,
) -> None:
    """Apply `operations` (the `operation` strategy's tuples) in order: a "select" calls
    `on_select(query, budget)`; `after_each` runs after every operation."""
    written: list[str] = []
    for op in operations:
        if op[0] == "remember":
            written.append(engine.remember(op[1], ttl=None if op[3] else op[2], pin=op[3]).id)
        elif op[0] == "forget" and written:
            engine.forget(written[op[1] % len(written)])
        elif op[0] == "advance":
            clock.advance(op[1])
        elif op[0] == "select":
            on_select(op[1], op[2])
        after_each()


@settings(max_examples=60, deadline=None)
@given(st.lists(operation, max_size=40), st.sampled_from(["full", "none"]))
def test_relevance_invariants_under_any_history(operations: list[tuple], renew: str) -> None:
    """Whatever is written, forgotten, decays or is injected: the index equals an index of the live items
    (nothing forgotten in it), the block holds only live, non-stale items, pinned ones first, within the
    budget, with the header's count exact."""
    engine, clock = make(injection_order="relevance", renew_on_inject=renew, max_store_bytes=2_048)

    def check_selection(query: str, budget: int) -> None:
        plan = engine.preview(budget, query=query)
        injection = engine.select_for_injection(budget, query=query)
        assert injection.block == plan.block
        ids = block_ids(injection.block)
        assert injection.tokens <= budget and injection.tokens == count_tokens(injection.block)
        pinned = [engine.inspect(i).pinned for i in ids]  # type: ignore[union-attr]
        assert pinned == sorted(pinned, reverse=True)
        for item_id in ids:
            assert engine.inspect(item_id) is not None
        # stale means below the threshold before this injection renewed it: the plan saw it live
        assert all(d.strength >= 0.3 or d.pinned for d in plan.decisions if d.decision == "injected")

    play(engine, clock, operations, check_selection, lambda: assert_index_is_the_live_items(engine))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(texts, st.sampled_from([600.0, DAY]), st.booleans()), max_size=15), texts)
def test_the_strength_order_ignores_the_query(memories: list[tuple], query: str) -> None:
    engine, clock = make()
    for content, ttl, pin in memories:
        engine.remember(content, ttl=None if pin else ttl, pin=pin)
        clock.advance(100)
    assert engine._index.relevance is None  # nothing is indexed for the default order
    with_query, without = engine.preview(80, query=query), engine.preview(80)
    assert with_query == without and with_query.order == "strength" and with_query.query is None


@settings(max_examples=60, deadline=None)
@given(st.lists(operation, max_size=40), texts)
def test_memories_that_match_the_same_query_terms_keep_the_strength_order(
    operations: list[tuple], query: str
) -> None:
    """The same-terms rule, after any history: two candidates containing exactly the same query terms are in
    the same order in the relevance order as in the strength order — so of two versions of a line that the
    question matches alike, relevance never puts the one that the strength order ranks lower first."""
    engine, clock = make(injection_order="relevance", renew_on_inject="full")
    # selections renew what they inject: strengths diverge
    play(engine, clock, operations, lambda query, budget: engine.select_for_injection(budget, query=query))
    by_relevance = [d.id for d in engine.preview(10**6, query=query).decisions]
    by_strength = [d.id for d in engine.preview(10**6).decisions]
    assert sorted(by_relevance) == sorted(by_strength)
    asked = set(terms(query))
    contents = {item.id: item.content for item in engine._items.values()}
    matched = {item_id: frozenset(asked & set(terms(contents[item_id]))) for item_id in by_relevance}
    strength_rank = {item_id: rank for rank, item_id in enumerate(by_strength)}
    for position, first in enumerate(by_relevance):
        for later in by_relevance[position + 1 :]:
            if matched[first] and matched[first] == matched[later]:
                assert strength_rank[first] < strength_rank[later]


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 149), min_size=1, max_size=12), min_size=1, max_size=30),
    st.lists(st.integers(0, 149), min_size=1, max_size=150),
)
def test_same_terms_best_groups_exactly_by_the_matched_query_terms(
    documents: list[list[int]], query: list[int]
) -> None:
    """Queries of more than 64 distinct terms included (the bit sets then span several words)."""
    word = [f"w{n}x" for n in range(150)]  # stemming leaves these alone
    index = RelevanceIndex()
    for slot, document in enumerate(documents):
        index.add(slot, " ".join(word[n] for n in document))
    query_terms = terms(" ".join(word[n] for n in query))
    scores = index.bm25(query_terms, len(documents))
    slots = np.flatnonzero(scores > 0)
    best = index.same_terms_best(query_terms, slots, scores)
    sets = {
        slot: frozenset(query_terms) & set(terms(" ".join(word[n] for n in documents[slot])))
        for slot in slots
    }
    expected = [max(scores[other] for other in slots if sets[other] == sets[slot]) for slot in slots]
    assert best.tolist() == expected


@settings(max_examples=80, deadline=None)
@given(
    subject=st.lists(
        st.sampled_from(["release", "codename", "standup", "room", "deploy", "region"]),
        min_size=1,
        max_size=4,
        unique=True,
    ),
    values=st.lists(
        st.sampled_from(["falcon", "heron", "oslo", "lisbon", "北京", "上海"]),
        min_size=2,
        max_size=2,
        unique=True,
    ),
    qualifiers=st.lists(
        st.sampled_from(["final", "cleared", "by", "legal", "confirmed", "（已确认）"]), max_size=4
    ),
    asked=st.data(),
    ttls=st.tuples(
        st.sampled_from([3 * DAY, 7 * DAY, 30 * DAY]), st.sampled_from([3 * DAY, 7 * DAY, 30 * DAY])
    ),
    gaps=st.tuples(st.sampled_from([3_600.0, DAY, 3 * DAY]), st.sampled_from([60.0, DAY, 2 * DAY])),
)
def test_an_update_that_restates_the_subject_never_ranks_below_the_old_version_unless_strength_does(
    subject: list[str],
    values: list[str],
    qualifiers: list[str],
    asked: st.DataObject,
    ttls: tuple[float, float],
    gaps: tuple[float, float],
) -> None:
    """Two live versions of a fact, the newer written without a key ("<subject> <old value>", later
    "<subject> <new value> <qualifiers>"), and a question that names (part of) the subject: whichever
    version the strength order ranks first, the relevance order ranks first too."""
    engine, clock = make(injection_order="relevance")
    engine.remember("Lunch is at noon in the canteen.", ttl="30d")
    old = engine.remember(" ".join([*subject, values[0]]) + ".", ttl=ttls[0]).id
    clock.advance(gaps[0])
    new = engine.remember(" ".join([*subject, values[1], *qualifiers]) + ".", ttl=ttls[1]).id
    clock.advance(gaps[1])
    words = asked.draw(st.lists(st.sampled_from(subject), min_size=1, unique=True))
    question = "Which " + " ".join(words) + " is it now?"
    live = {d.id for d in engine.preview(10**6).decisions}
    assume({old, new} <= live)  # otherwise one version is stale or forgotten: nothing for the order to decide
    by_strength = [d.id for d in engine.preview(10**6).decisions if d.id in (old, new)]
    by_relevance = [d.id for d in engine.preview(10**6, query=question).decisions if d.id in (old, new)]
    assert by_relevance == by_strength


def test_demote_keeps_one_version_of_a_line_and_lets_an_unrelated_memory_in() -> None:
    """Two unkeyed versions of one line, matched by the question on the same words: by default both rank
    above an unrelated memory; with relevance_duplicates "demote" the older one ranks by strength alone."""
    orders = {}
    for duplicates in ("keep", "demote"):
        engine, clock = make(injection_order="relevance", relevance_duplicates=duplicates)
        old = engine.remember("The on-call lead is tomasz.", ttl="10d").id
        clock.advance(DAY)
        other = engine.remember("The standup room is aurora.", ttl="10d").id
        clock.advance(DAY)
        new = engine.remember("The on-call lead is kwame.", ttl="10d").id
        clock.advance(3_600)
        plan = engine.preview(query="Who is the on-call lead?")
        names = {old: "old", other: "other", new: "new"}
        orders[duplicates] = [names[d.id] for d in plan.decisions]
        if duplicates == "demote":
            assert "0: a line the strength order ranks first matches the same terms" in plan.decisions[2].why
    assert orders == {"keep": ["new", "old", "other"], "demote": ["new", "other", "old"]}


def test_the_gate_and_fusion_rules_explain_their_ranks() -> None:
    for rule, expected in (
        ("gate", "relevance 1.000 vs gate 0.50: relevant tier"),
        ("fusion", "1/(60+1) + 1/(60+"),
    ):
        engine, clock = make(injection_order="relevance", relevance_rule=rule)
        engine.remember("The verification drink is oolong.", ttl="30d")
        clock.advance(5 * DAY)
        engine.remember("Lunch is at noon.", ttl="30d")
        first, second = engine.preview(query="Which drink?").decisions
        assert expected in first.why
        assert "no query term matched" in second.why
    with pytest.raises(InvalidInput, match=r"^relevance_rule: expected score\|gate\|fusion, got 'bm25'$"):
        Config(relevance_rule="bm25")
    with pytest.raises(InvalidInput, match=r"^relevance_gate: must be in \(0,1\], got 0.0$"):
        Config(relevance_gate=0)


def relevance_levels(engine: Amnesia, query: str, ids: list[str]) -> dict[str, tuple[frozenset, float]]:
    """Per candidate id: the query terms it contains and its level (the largest bm25, from the engine's own
    index, among the candidates that contain exactly the same query terms)."""
    index = engine._index.relevance
    assert index is not None
    slot_of, asked = engine._index.columns.slot_of, terms(query)
    bm25 = index.bm25(asked, max(slot_of.values(), default=0) + 1)
    matched = {i: frozenset(set(asked) & set(terms(engine._items[i].content))) for i in ids}
    best = {}
    for i in ids:
        best[matched[i]] = max(best.get(matched[i], 0.0), float(bm25[slot_of[i]]))
    return {i: (matched[i], best[matched[i]] if matched[i] else 0.0) for i in ids}


# few words, so that candidates often contain the same query terms, and varied ages, so their strengths differ
few_words = st.lists(
    st.sampled_from(["tea", "oolong", "deploy", "rota", "lunch"]), min_size=1, max_size=3
).map(" ".join)
write = st.tuples(st.just("remember"), few_words, st.sampled_from([3_600.0, DAY, 10 * DAY]), st.just(False))
history = st.lists(
    st.one_of(
        write,
        write,  # twice: half the operations are writes
        st.tuples(st.just("advance"), st.sampled_from([300.0, 3_000.0, 40_000.0])),
        st.tuples(st.just("select"), few_words, st.integers(20, 120)),
    ),
    min_size=10,
    max_size=30,
)


def after_history(operations: list[tuple], **config: object) -> Amnesia:
    engine, clock = make(injection_order="relevance", renew_on_inject="full", **config)
    play(engine, clock, operations, lambda query, budget: engine.select_for_injection(budget, query=query))
    return engine


@settings(max_examples=100, deadline=None)
@given(history, few_words, st.sampled_from([0.25, 0.5, 1.0]))
def test_the_gate_puts_the_relevant_tier_first_and_keeps_the_strength_order_inside_each_tier(
    operations: list[tuple], query: str, gate: float
) -> None:
    engine = after_history(operations, relevance_rule="gate", relevance_gate=gate)
    decisions = [d for d in engine.preview(10**6, query=query).decisions if not d.pinned]
    strength_rank = {d.id: rank for rank, d in enumerate(engine.preview(10**6).decisions)}
    ids = [d.id for d in decisions]
    levels = relevance_levels(engine, query, ids)
    best = max((level for _, level in levels.values()), default=0.0)
    tiers = [bool(levels[i][0]) and best > 0 and levels[i][1] / best >= gate for i in ids]
    assert tiers == sorted(tiers, reverse=True)  # the relevant tier first
    for position, first in enumerate(ids):
        for later, tier in zip(ids[position + 1 :], tiers[position + 1 :], strict=True):
            if tier == tiers[position]:
                assert strength_rank[first] < strength_rank[later]


@settings(max_examples=200, deadline=None)
@given(history, few_words)
def test_fusion_orders_by_the_reciprocal_ranks_of_relevance_and_strength(
    operations: list[tuple], query: str
) -> None:
    engine = after_history(operations, relevance_rule="fusion")
    decisions = [d for d in engine.preview(10**6, query=query).decisions if not d.pinned]
    levels = relevance_levels(engine, query, [d.id for d in decisions])
    strengths = [d.strength for d in decisions]
    hits = [level for matched, level in levels.values() if matched]

    def fused(decision: object) -> float:
        matched, level = levels[decision.id]  # type: ignore[attr-defined]
        by_strength = 1 + sum(s > decision.strength for s in strengths)  # type: ignore[attr-defined]
        score = 1 / (60 + by_strength)
        return score + (1 / (60 + 1 + sum(h > level for h in hits)) if matched else 0.0)

    scores = [fused(d) for d in decisions]
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(scores))


@settings(max_examples=100, deadline=None)
@given(history, few_words)
def test_demoted_duplicates_rank_by_strength_alone_against_unmatched_memories(
    operations: list[tuple], query: str
) -> None:
    """relevance_duplicates "demote": of the candidates that contain exactly the same query terms, all but the
    strength order's first are ordered against every unmatched candidate as the strength order orders them."""
    engine = after_history(operations, relevance_duplicates="demote")
    ids = [d.id for d in engine.preview(10**6, query=query).decisions if not d.pinned]
    strength_rank = {d.id: rank for rank, d in enumerate(engine.preview(10**6).decisions)}
    matched = {i: matched for i, (matched, _) in relevance_levels(engine, query, ids).items()}
    firsts = {}
    for i in sorted(ids, key=strength_rank.__getitem__):
        firsts.setdefault(matched[i], i)
    position = {i: n for n, i in enumerate(ids)}
    for demoted in (i for i in ids if matched[i] and firsts[matched[i]] != i):
        for unmatched in (i for i in ids if not matched[i]):
            by_strength = strength_rank[demoted] < strength_rank[unmatched]
            assert (position[demoted] < position[unmatched]) == by_strength
