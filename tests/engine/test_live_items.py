"""`ItemIndex.items` is a view of the columns' id -> slot map (`LiveItems`), which a sweep leaves stale
entries in and purges in bulk: after any sequence of writes, forgets by id, sweeps (forgets by slot) and
re-indexing, it must answer every question exactly as a plain dict of the live items in write order would."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from amnesia import Config
from amnesia.index import ForgetFilter, ItemIndex
from amnesia.item import MemoryItem

IDS = [f"m-{number}" for number in range(12)]  # few ids: forgotten ones come back

step = st.one_of(
    st.tuples(st.just("write"), st.lists(st.sampled_from(IDS), max_size=8), st.sampled_from([None, "k"])),
    st.tuples(st.just("forget"), st.lists(st.integers(0, 20), max_size=4)),  # by id (their entries go)
    st.tuples(st.just("sweep"), st.lists(st.integers(0, 20), max_size=8)),  # by slot (entries left stale)
    st.tuples(st.just("update"), st.integers(0, 20)),
)


def _agrees(index: ItemIndex, model: dict[str, MemoryItem]) -> None:
    live = index.items
    assert list(live) == list(model)
    assert list(live.values()) == list(model.values())
    assert list(reversed(live.values())) == list(reversed(model.values()))
    assert len(live) == len(model) == len(index) == len(index.columns)
    for item_id in IDS:
        assert (item_id in live) == (item_id in model)
        assert live.get(item_id) is model.get(item_id)
        if item_id in model:
            assert live[item_id] is model[item_id]
            assert index.at(index.columns.slot_of[item_id]) is model[item_id]
    assert sorted(item.id for item in index.matching(ForgetFilter())) == sorted(model)
    assert index.bytes == sum(item.size_bytes for item in model.values())


@settings(max_examples=300, deadline=None)
@given(st.lists(step, max_size=40), st.sampled_from([0, 1, 1024]))
def test_the_live_items_view_answers_as_a_dict_of_the_live_items(steps, slack):
    with mock.patch("amnesia.columns.PURGE_SLACK", slack):  # 0 and 1: purged often; 1024: never here
        index = ItemIndex([], Config())
        model: dict[str, MemoryItem] = {}
        for action, *arguments in steps:
            live = list(model)
            picks = arguments[0] if action in ("forget", "sweep") and live else []
            picked = list(dict.fromkeys(live[n % len(live)] for n in picks))
            if action == "write":
                written, key = arguments
                for item_id in [item_id for item_id in dict.fromkeys(written) if item_id not in model]:
                    item = MemoryItem(id=item_id, content=f"about {item_id}", ttl=60.0, key=key, size_bytes=3)
                    index.add(item, "hash")
                    model[item_id] = item
            elif action == "forget" and picked:
                index.remove(picked)
                for item_id in picked:
                    del model[item_id]
            elif action == "sweep" and picked:
                slots = np.array([index.columns.slot_of[item_id] for item_id in picked], dtype=np.intp)
                index.remove(picked, slots)
                for item_id in picked:
                    del model[item_id]
            elif action == "update" and live:
                item = model[live[arguments[0] % len(live)]]
                item.scope, item.owner_id = "session", "agent"
                index.update(item)
            _agrees(index, model)
