"""A small store's due and stale items are found in plain Python (`ItemColumns.due_small`,
`ItemIndex._restale_small`): they must find exactly what the numpy masks find on the same store, with the
same reasons, and mark the same items stale."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from amnesia import Amnesia, Config, InMemoryStore, SimulatedClock, index

write = st.fixed_dictionaries(
    {
        "ttl": st.sampled_from([None, 600.0, 3600.0, 86_400.0, 7 * 86_400.0]),
        "pin": st.sampled_from([False, False, False, True]),
        "deadline": st.sampled_from([None, 100.0, 5_000.0, 200_000.0]),
        "curve": st.sampled_from(["ebbinghaus", "linear", "flat"]),
        # the ttls and deadlines themselves too: an item idle exactly its ttl is due (the boundaries)
        "wait": st.sampled_from([0.0, 100.0, 600.0, 3600.0, 86_400.0])
        | st.floats(min_value=0, max_value=3e5),
        "touch": st.booleans(),
        "forget": st.booleans(),
    }
)


def _numpy_paths(action):
    """`action()` with every store taking the numpy masks."""
    original = index.SMALL_STORE
    index.SMALL_STORE = -1
    try:
        return action()
    finally:
        index.SMALL_STORE = original


def _engine_after(writes, later, config):
    """An engine after `writes` (each followed by its wait, its injection and its forget) and `later` more
    seconds: the same engine every time it is built with the same arguments (ids from a counter)."""
    clock = SimulatedClock(0.0)
    counter = itertools.count()
    store = InMemoryStore(secret=b"k" * 32)  # the same audit hashes in both engines
    engine = Amnesia(store, config, clock, id_factory=lambda: f"m-{next(counter):04d}")
    for spec in writes:
        pinned = spec["pin"] or spec["ttl"] is None
        view = engine.remember(
            "a fact",
            ttl=None if pinned else spec["ttl"],
            pin=pinned,
            curve=spec["curve"],
            expires_at=None if pinned or spec["deadline"] is None else clock.now() + spec["deadline"],
        )
        clock.advance(spec["wait"])
        if spec["touch"]:
            engine.select_for_injection(2000)  # renews what it injects: anchors and strengths differ
        if spec["forget"]:
            engine.forget(view.id)  # a freed slot among the live ones
        engine.sweep()
    clock.advance(later)
    return engine


_IDLE_A_TTL = {  # idle exactly its ttl: expired, not stale
    "ttl": 600.0,
    "pin": False,
    "deadline": None,
    "curve": "ebbinghaus",
    "wait": 600.0,
    "touch": False,
    "forget": False,
}
_AT_DEADLINE = {**_IDLE_A_TTL, "deadline": 100.0, "wait": 100.0}


@settings(max_examples=150, deadline=None)
@example(writes=[_IDLE_A_TTL], later=0.0, decay_mode="forget", auto_expire=True)  # expired, not stale
@example(
    writes=[{**_IDLE_A_TTL, "deadline": 100.0, "wait": 100.0}], later=0.0, decay_mode="rank", auto_expire=True
)
@given(
    writes=st.lists(write, min_size=0, max_size=index.SMALL_STORE),
    later=st.sampled_from([0.0, 600.0, 3600.0, 86_400.0]) | st.floats(min_value=0, max_value=30 * 86_400.0),
    decay_mode=st.sampled_from(["forget", "rank"]),
    auto_expire=st.booleans(),
)
def test_a_small_store_finds_the_due_and_stale_items_the_numpy_masks_find(
    writes, later, decay_mode, auto_expire
):
    config = Config(decay_mode=decay_mode, auto_expire=auto_expire)
    small = _engine_after(writes, later, config)
    vectorised = _numpy_paths(lambda: _engine_after(writes, later, config))
    now = small.clock.now()
    assert [entry.brief() for entry in small.audit(limit=None)] == [
        entry.brief() for entry in vectorised.audit(limit=None)
    ]
    small_index, vectorised_index = small._index, vectorised._index
    strengths = small_index.strengths(now)
    due = small_index.due(now, strengths)
    expected = _numpy_paths(lambda: vectorised_index.due(now, strengths))
    assert due.slots.dtype == expected.slots.dtype
    assert due.slots.tolist() == expected.slots.tolist()
    assert due.reasons == expected.reasons
    count, updated = small_index.restale(strengths)
    expected_count, expected_updated = _numpy_paths(lambda: vectorised_index.restale(strengths))
    assert count == expected_count
    assert [(item.id, item.status) for item in updated] == [
        (item.id, item.status) for item in expected_updated
    ]
    used = small_index.columns.used
    assert np.array_equal(
        small_index.columns.marked_stale[:used], vectorised_index.columns.marked_stale[:used]
    )
