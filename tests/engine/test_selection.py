"""Selection for injection: hypothesis properties over the real engine, plus the block format."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from amnesia import Amnesia, Config, MemoryItem, SimulatedClock
from amnesia.columns import ItemColumns
from amnesia.durations import format_duration
from amnesia.selection import SCALAR_DURATIONS, duration_tokens, header_reserve
from amnesia.tokens import count_tokens

WORDS = [
    "tea",
    "oolong",
    "deploy",
    "friday",
    "staging",
    "北京",
    "会议",
    "budget",
    "alpha",
    "release",
    "x" * 30,
]

memory = st.fixed_dictionaries(
    {
        "words": st.lists(st.sampled_from(WORDS), min_size=1, max_size=12),
        "ttl": st.sampled_from([60, 600, 3600, 86_400]),
        "pin": st.booleans(),
        "curve": st.sampled_from(["flat", "linear", "ebbinghaus"]),
        "advance": st.sampled_from([0, 0, 5, 30, 200]),
    }
)


def build(memories, seed_ids=True, **options):
    clock = SimulatedClock(1_000)
    counter = itertools.count()
    engine = Amnesia(
        clock=clock,
        config=Config(max_store_bytes=10**7, renew_on_inject="none", **options),
        id_factory=(lambda: f"m-{next(counter):04d}") if seed_ids else None,
    )
    for spec in memories:
        engine.remember(" ".join(spec["words"]), ttl=spec["ttl"], pin=spec["pin"], curve=spec["curve"])
        clock.advance(spec["advance"])
    return engine, clock


@settings(max_examples=120, deadline=None)
@given(st.lists(memory, min_size=0, max_size=25), st.integers(min_value=0, max_value=400))
def test_selection_invariants(memories, budget):
    engine, _ = build(memories)
    plan = engine.preview(budget)
    assert plan.tokens == count_tokens(plan.block) <= budget  # never over budget (header included)
    if plan.block:  # the header states the block's own exact size
        assert plan.block.splitlines()[0].endswith(f", {plan.tokens}/{budget} tokens)")
    lines = plan.block.splitlines()[1:]
    assert len(lines) == len(plan.items)
    details = {d.id: engine.inspect(d.id) for d in plan.decisions}
    chosen = [details[ref["id"]] for ref in plan.items]
    for line, item in zip(lines, chosen, strict=True):
        assert line.endswith(" · " + item.content)  # never truncated
        assert item.status == "active"  # never stale
    pinned_flags = [item.pinned for item in chosen]
    assert pinned_flags == sorted(pinned_flags, reverse=True)  # pinned first
    unpinned = [item.strength for item in chosen if not item.pinned]
    assert unpinned == sorted(unpinned, reverse=True)
    # Stable: the same state gives the same block, and select matches the preview.
    assert engine.preview(budget).block == plan.block
    assert engine.select_for_injection(budget).block == plan.block


@settings(max_examples=60, deadline=None)
@given(st.lists(memory, min_size=1, max_size=15), st.integers(min_value=20, max_value=300))
def test_skipped_items_really_did_not_fit(memories, budget):
    engine, _ = build(memories)
    plan = engine.preview(budget)
    left = budget - header_reserve(budget)
    for decision in plan.decisions:  # in candidate order
        if decision.decision == "injected":
            left -= decision.tokens
        else:
            assert decision.tokens > left  # skipped only when it did not fit what was left
    assert left >= 0


@settings(max_examples=100, deadline=None)
@given(st.floats(min_value=0, max_value=3e9))
def test_duration_tokens_matches_the_renderer(seconds):
    assert int(duration_tokens(seconds)) == count_tokens(format_duration(seconds))
    # past SCALAR_DURATIONS values the count is vectorised: the same answer for every one of them
    many = duration_tokens(np.full(SCALAR_DURATIONS + 1, seconds))
    assert many.tolist() == [count_tokens(format_duration(seconds))] * (SCALAR_DURATIONS + 1)


def test_block_format_and_skip_then_try_next():
    clock = SimulatedClock(0)
    counter = itertools.count()
    engine = Amnesia(clock=clock, id_factory=lambda: f"m-{next(counter):04d}")
    engine.remember("Answer in French.", kind="preference", pin=True)
    clock.advance(3600)
    engine.remember("word " * 200, ttl="7d")  # too big for the budget below: skipped, not truncated
    engine.remember("The verification drink is oolong.", ttl="30d")
    clock.advance(2 * 86_400)
    plan = engine.preview(120)
    assert plan.block.splitlines() == [
        f"AMNESIA MEMORY (2 items, {plan.tokens}/120 tokens)",
        "- [m-0000] preference · pinned · written 2d1h ago · Answer in French.",
        "- [m-0002] fact · written 2d ago · The verification drink is oolong.",
    ]
    assert [d.decision for d in plan.decisions] == ["injected", "injected", "skipped"]
    assert plan.decisions[2].id == "m-0001"


def test_pinned_overflow_is_reported_and_empty_memory_injects_nothing():
    engine = Amnesia(clock=SimulatedClock(0))
    assert engine.select_for_injection().block == ""
    pinned = engine.remember("Always answer in formal Portuguese, with citations.", pin=True)
    plan = engine.preview(15)
    assert plan.block == "" and plan.pinned_overflow == (pinned.id,)


def test_select_touches_per_renew_mode():
    for mode, expect_touched in (("full", True), ("none", False), ("used", False)):
        clock = SimulatedClock(0)
        engine = Amnesia(clock=clock, config=Config(renew_on_inject=mode))
        view = engine.remember("The staging DB is frozen.", ttl=100)
        clock.advance(10)
        engine.preview()
        assert engine.inspect(view.id).access_count == 0  # a dry run touches nothing
        engine.select_for_injection()
        assert (engine.inspect(view.id).last_accessed_at == 10) is expect_touched


def test_used_mode_renews_only_what_the_answer_drew_on():
    clock = SimulatedClock(0)
    engine = Amnesia(clock=clock, config=Config(renew_on_inject="used"))
    lapsang = engine.remember("The verification drink is lapsang.", ttl=100)
    oolong = engine.remember("The verification drink is oolong.", ttl=100)
    chinese = engine.remember("周会改到星期三下午。", ttl=100)
    clock.advance(20)
    injection = engine.select_for_injection()
    renewed = engine.report_answer(
        injection, "It is oolong; the meeting is on 星期三.", question="What drink?"
    )
    assert set(renewed) == {oolong.id, chinese.id}  # "drink" is shared by both drinks: not distinctive
    assert engine.inspect(lapsang.id).last_accessed_at == 0
    assert engine.inspect(oolong.id).last_accessed_at == 20


def test_scope_visibility():
    engine = Amnesia(clock=SimulatedClock(0))
    main = engine.remember("Workspace fact.")
    sub = engine.remember("Scratch note of the sub-agent.", scope="session", owner_id="s1")
    other = engine.remember("Another session's note.", scope="session", owner_id="s2")

    def ids(**kwargs):
        return {ref["id"] for ref in engine.preview(**kwargs).items}

    assert ids() == {main.id}
    assert ids(owner_id="s1") == {main.id, sub.id}
    assert ids(owner_id="s1", include_workspace=False) == {sub.id}
    assert other.id not in ids(owner_id="s1")


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([0.2, 0.5, 1.0]), st.sampled_from([0.0, 5.0]), st.booleans()),
        min_size=1,
        max_size=40,
    ),
    st.integers(min_value=1, max_value=10),
)
def test_partial_ordering_agrees_with_a_full_sort(rows, count):
    """The fast path (partition, then sort the head) must give exactly the full sort's first items."""
    columns = ItemColumns()
    strengths = []
    for index, (strength, at, pinned) in enumerate(rows):
        item = MemoryItem(id=f"m-{index}", content="x", ttl=None if pinned else 10.0, pinned=pinned)
        item.last_accessed_at = item.created_at = at
        columns.upsert(item)
        strengths.append(strength)
    strengths_array = np.array(strengths)
    slots = np.arange(len(rows))
    head, rest = columns.strongest(slots, strengths_array, count)
    full = columns.injection_order(slots, strengths_array)
    combined = np.concatenate([columns.injection_order(head, strengths_array), rest])
    assert list(combined[: len(head)]) == list(full[: len(head)])
    assert sorted(combined) == sorted(full)


def test_partial_ordering_when_every_candidate_ties_on_strength():
    """Every candidate ties on strength (a store written in one instant, never decayed): the keys they all tie
    on are skipped and the next one decides (here the last access), as a full sort would. Slots that are not
    candidates stay out of both parts."""
    columns = ItemColumns()
    last_access = [float((index * 37) % 60) for index in range(60)]
    for index, at in enumerate(last_access):
        item = MemoryItem(id=f"m-{index:03d}", content="x", ttl=10.0)
        item.last_accessed_at = at
        columns.upsert(item)
    strengths = np.ones(60)
    slots = np.array([slot for slot in range(60) if slot % 7], dtype=np.intp)
    head, rest = columns.strongest(slots, strengths, 10)
    expected = sorted(slots.tolist(), key=lambda slot: -last_access[slot])[:10]
    assert columns.injection_order(head, strengths).tolist() == expected
    assert rest.tolist() == sorted(set(slots.tolist()) - set(expected))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(memory, min_size=0, max_size=40),
    st.integers(min_value=0, max_value=400),
    st.sampled_from([0, 40]),
)
def test_compact_lines_hold_the_text_alone_within_the_budget(memories, budget, filler):
    """`block_lines: compact`: each line is `- <text>`; the block never exceeds the budget and counts its own
    tokens; the candidates and their order are the full format's, so when the full block holds every
    candidate the compact one holds the same. `filler` unpinned memories push the store past the small-store
    path."""
    memories = memories + [{**memories[0], "pin": False} for _ in range(filler)] if memories else memories
    full, _ = build(memories)
    compact, _ = build(memories, block_lines="compact")
    shown = compact.select_for_injection(budget)
    assert shown.tokens <= budget and shown.tokens == count_tokens(shown.block)
    if shown.block:
        texts = {engine_item["id"]: compact.inspect(engine_item["id"]).content for engine_item in shown.items}
        assert shown.block.splitlines()[1:] == [f"- {texts[item['id']]}" for item in shown.items]
    plan = full.preview(budget)
    if all(d.decision == "injected" for d in plan.decisions) and not plan.excluded.get("not_reached"):
        assert [item["id"] for item in shown.items] == [item["id"] for item in plan.items]
