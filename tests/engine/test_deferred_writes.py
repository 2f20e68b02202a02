"""Work a write defers, checked against doing it at once: the view `remember` returns, filled in when it is
first read, and the columns of new items, filled in one numpy assignment per column for a run of writes."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amnesia import Amnesia, Config, InMemoryStore, SimulatedClock
from amnesia.columns import _NUMERIC, _OBJECTS, FILL_EVERY, ONE_BY_ONE, ItemColumns
from amnesia.decay import forget_at
from amnesia.errors import CapacityExceeded
from amnesia.item import MemoryItem
from amnesia.selection import static_line_tokens, static_line_tokens_many
from amnesia.views import MemoryView


def _item(prefix, number, content, kind, source, pinned, ttl, curve, strength, stale, deadline, owner, times):
    return MemoryItem(
        id=f"{prefix}{number:x}",
        content=content,
        kind=kind,
        scope="workspace" if owner is None else owner[0],
        owner_id=None if owner is None else owner[1],
        source=source,
        created_at=times[0],
        last_accessed_at=times[0] + times[1],
        ttl=ttl,
        pinned=pinned,
        curve=curve,
        strength=strength,
        status="stale" if stale else "active",
        expires_at=deadline,
        tokens=len(content),
        size_bytes=len(content.encode("utf-8", "surrogatepass")),
    )


_items = st.builds(
    _item,
    st.sampled_from(["m-", "東-", "x_y.", ""]),
    st.integers(0, 10**6),
    st.text(max_size=12),
    st.sampled_from(["fact", "preference", "episode", "task-context"]),
    st.sampled_from(["user", "tool", "auto"]),
    st.booleans(),
    st.none() | st.floats(min_value=1.0, max_value=1e7),
    st.sampled_from(["flat", "linear", "ebbinghaus"]),
    st.floats(min_value=0.0, max_value=1.0),
    st.booleans(),
    st.none() | st.floats(min_value=-1e6, max_value=1e7),
    st.none() | st.tuples(st.sampled_from(["session", "team"]), st.sampled_from(["agent-1", "agent-2", "t"])),
    st.tuples(st.floats(min_value=0.0, max_value=1e6), st.floats(min_value=0.0, max_value=1e6)),
)


def _snapshot(columns: ItemColumns) -> dict[str, list]:
    n = columns.used
    snapshot = {name: getattr(columns, name)[:n].tolist() for name, _, _ in _NUMERIC}
    snapshot |= {name: getattr(columns, name)[:n].tolist() for name in _OBJECTS}
    snapshot["owner codes"] = sorted(columns._owner_codes.items())
    return snapshot


def _copies(pool: list[tuple[MemoryItem, str | None]], count: int) -> list[tuple[MemoryItem, str | None]]:
    """`count` (item, content hash) writes cycling through the drawn `pool`, each item with an id of its own.
    Over ONE_BY_ONE new items take the numpy fill; drawing every write whole took nearly all of the test's
    time, while up to twelve distinct writes already mix every kind of value in each column."""
    cycle = zip(range(count), itertools.cycle(pool), strict=False)
    return [
        (dataclasses.replace(item, id=f"{item.id}.{number}"), content_hash)
        for number, (item, content_hash) in cycle
    ]


@settings(max_examples=150, deadline=None)
@given(
    st.builds(
        _copies,
        st.lists(
            st.tuples(_items, st.none() | st.text(alphabet="0123456789abcdef", min_size=1, max_size=4)),
            min_size=1,
            max_size=12,
        ),
        st.integers(ONE_BY_ONE + 1, ONE_BY_ONE + 40),
    ),
    st.integers(0, ONE_BY_ONE + 40),
)
def test_new_items_filled_in_at_once_equal_items_written_one_by_one(writes, read_at):
    """However the new items are split into fills (one by one after every read, all at once in numpy, or a
    run, a read, then the rest), every column holds the same values."""
    one_by_one, at_once, split = ItemColumns(capacity=4), ItemColumns(capacity=4), ItemColumns(capacity=4)
    for number, (item, content_hash) in enumerate(writes):
        one_by_one.upsert(item, content_hash)
        assert one_by_one.alive[one_by_one.slot_of[item.id]]  # a read: fills this one item in
        at_once.upsert(item, content_hash)
        split.upsert(item, content_hash)
        if number == read_at:
            assert split.alive[split.slot_of[item.id]]
    expected = _snapshot(one_by_one)
    assert _snapshot(at_once) == expected
    assert _snapshot(split) == expected
    assert expected["line_tokens"] == [static_line_tokens(item) for item, _ in writes]


@settings(max_examples=200, deadline=None)
@given(st.lists(_items, max_size=20))
def test_line_tokens_counted_in_c_passes_equal_counting_each_item(items):
    assert static_line_tokens_many(items).tolist() == [static_line_tokens(item) for item in items]


def test_a_long_run_of_writes_fills_the_columns_as_it_goes():
    """Every FILL_EVERY new items are filled in without a read, so a bulk write leaves at most that many
    waiting (a first read after it fills no more than those)."""
    columns = ItemColumns()
    for number in range(FILL_EVERY * 2 + 5):
        columns.upsert(MemoryItem(id=f"m-{number}", content="x", ttl=60.0))
    assert len(columns._new_slots) == 5
    assert columns.seq[: columns.used].tolist() == list(range(FILL_EVERY * 2 + 5))


step = st.fixed_dictionaries(
    {
        "action": st.sampled_from(
            ["write"] * 3 + ["touch"] * 3 + ["promote", "advance", "advance", "sweep", "select"]
        ),
        "ttl": st.floats(min_value=60.0, max_value=1e4),
        "key": st.none() | st.sampled_from(["a", "b"]),
        "scope": st.sampled_from(["workspace", "session"]),
        "pin": st.booleans(),
        "deadline": st.none() | st.floats(min_value=1.0, max_value=1e5),
        "pick": st.integers(0, 50),
        "advance": st.floats(min_value=0.0, max_value=3e3),
        "read": st.sampled_from(
            ["field", "vars", "eq", "repr", "pickle", "copy", "to_dict", "asdict", *["later"] * 5]
        ),
    }
)


def _read(view: MemoryView, how: str) -> object:
    """Read a view the way a caller might; the first read fills it in."""
    if how == "field":
        return view.expires_at
    if how == "vars":
        return dict(vars(view))
    if how == "eq":
        return view == view
    if how == "repr":
        return repr(view)
    if how == "pickle":
        return pickle.loads(pickle.dumps(view))
    if how == "copy":
        return copy.copy(view)
    if how == "to_dict":
        return view.to_dict()
    return dataclasses.asdict(view)


@settings(max_examples=80, deadline=None)
@given(st.lists(step, min_size=1, max_size=25), st.booleans())
def test_a_write_s_view_read_late_shows_the_memory_as_it_was_written(apply_step, steps, small_store):
    """The view filled in on first read — right away, or after touches, promotes, sweeps and clock moves
    have changed the item — equals the view built from the item at the moment of the write, in every way
    it can be read."""
    clock = SimulatedClock(0.0)
    counter = itertools.count()
    store = InMemoryStore()
    config = Config(
        max_store_bytes=120 if small_store else 10**6,
        max_item_bytes=100,
        decay_k=2.0,
        promote_after_accesses=2,
    )
    engine = Amnesia(store=store, config=config, clock=clock, id_factory=lambda: f"m-{next(counter):04d}")
    written: list[tuple[MemoryView, MemoryView, str]] = []
    for spec in steps:
        live = list(engine._index.items)
        target = live[spec["pick"] % len(live)] if live else None
        before = len(store.audit_entries("default"))
        try:
            view = apply_step(engine, clock, spec, target, len(written))
        except CapacityExceeded:  # the small store is full of pinned memories
            continue
        if view is not None:
            item = dataclasses.replace(next(reversed(engine._index.items.values())))  # as written
            gone = store.audit_entries("default")[: len(store.audit_entries("default")) - before][::-1]
            expected = MemoryView(
                id=item.id,
                content=item.content,
                kind=item.kind,
                ttl=item.ttl,
                pinned=item.pinned,
                curve=item.curve,
                strength=item.strength,
                key=item.key,
                scope=item.scope,
                owner_id=item.owner_id,
                source=item.source,
                tokens=item.tokens,
                created_at=item.created_at,
                expires_at=forget_at(item, config),
                tags=item.tags,
                untrusted=item.untrusted,
                superseded=tuple(entry.item_id for entry in gone if entry.reason == "superseded"),
                evicted=tuple(entry.item_id for entry in gone if entry.reason == "evicted"),
                hard_expires_at=item.expires_at,
            )
            if spec["read"] != "later":
                _read(view, spec["read"])
            written.append((view, expected, spec["read"]))
    for view, expected, how in written:
        if how == "later":
            assert _read(view, "pickle") == expected
        assert view == expected
        assert vars(view) == vars(expected)
        assert repr(view) == repr(expected)
        assert hash(view) == hash(expected)
        assert view.to_dict() == expected.to_dict()
        assert copy.deepcopy(view) == expected
        assert pickle.loads(pickle.dumps(view)) == expected


def test_a_view_read_after_touches_and_a_promote_shows_the_write():
    """Touches change the item's strength, clock and (promote_after_accesses) ttl, promote its scope and
    owner: a view read only afterwards still shows them as written."""
    clock = SimulatedClock(0.0)
    engine = Amnesia(clock=clock, config=Config(promote_after_accesses=2))
    view = engine.remember("The build cache lives in /var/cache.", ttl=300.0, scope="session", owner_id="a")
    item = next(iter(engine._index.items.values()))  # not view.id: reading the view would fill it in
    as_written = dataclasses.replace(item)
    for _ in range(2):
        clock.advance(100.0)
        engine.touch(item.id)
    engine.promote(item.id)
    assert (item.strength, item.last_accessed_at, item.ttl, item.scope) != (1.0, 0.0, 300.0, "session")
    assert (view.strength, view.ttl, view.scope, view.owner_id) == (1.0, 300.0, "session", "a")
    assert view.expires_at == forget_at(as_written, engine.config)


def test_a_view_answers_a_wrong_name_with_attribute_error_and_stays_frozen():
    engine = Amnesia(clock=SimulatedClock(0.0))
    view = engine.remember("Deploys freeze on Friday.", ttl="1d")
    with pytest.raises(AttributeError, match="no_such_field"):
        view.no_such_field  # noqa: B018
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.ttl = 5.0  # type: ignore[misc]
    assert (view.ttl, view.content) == (86_400.0, "Deploys freeze on Friday.")
    assert view.expires_at == forget_at(engine._index.items[view.id], engine.config)


def test_the_id_shape_cache_stays_bounded_and_counts_every_shape_right():
    """Ids of ever new shapes empty the shape cache rather than grow it; each count is still the plain one."""
    from amnesia.tokens import _TOKENS_BY_SHAPE, SHAPES_KEPT, count_id_tokens, count_tokens

    for length in range(1, 3 * SHAPES_KEPT):
        text = "a-" * (length // 2) + "b" * (length % 7)
        assert count_id_tokens(text) == count_tokens(text)
        assert len(_TOKENS_BY_SHAPE) <= SHAPES_KEPT
