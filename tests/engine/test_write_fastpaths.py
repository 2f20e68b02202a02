"""The shortcuts `remember` and `sweep` take for speed give exactly what the plain way gives: the ASCII token
count, the HMAC with its key schedule done once, the
line-head token count cached per kind/pin/trust, the numpy columns written through memoryviews, the
audit hashes computed on write rather than on forget, and the audit kept as plain tuples by the in-memory
store. (The grouped search for the secret rules' literals is checked in test_fastpaths.py.)"""

from __future__ import annotations

import hmac
import itertools
import math
import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amnesia import Amnesia, Config, InMemoryStore, SimulatedClock, SQLiteStore
from amnesia.audit import FORGET_REASONS, AuditEntry, key_hash, keyed_hasher
from amnesia.columns import SCOPE_CODES, ItemColumns
from amnesia.decay import CURVE_CODES
from amnesia.item import MemoryItem
from amnesia.selection import Candidate, render_line, static_line_tokens
from amnesia.tokens import _CJK, _TOKEN, count_tokens

ASCII = st.text(alphabet=st.characters(max_codepoint=127), max_size=60)


@settings(max_examples=500, deadline=None)
@given(
    ASCII | st.lists(st.sampled_from(["abcd", "abcde", "x", "_9", " ", "\x1c", "-", "::", "\t"])).map("".join)
)
def test_the_ascii_token_count_equals_the_regex_count(text):
    assert text.isascii()
    assert count_tokens(text) == len(_TOKEN.findall(text))
    runs = re.findall(rf"[{_CJK}]|[^\W{_CJK}]+|[^\s\w]", text)
    assert count_tokens(text) == sum(-(-len(run) // 4) for run in runs)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127) | st.just("·"), max_size=60))
def test_text_whose_only_non_ascii_is_the_block_separator_counts_as_the_regex_counts(text):
    assert count_tokens(text) == len(_TOKEN.findall(text))
    assert count_tokens(text + " 是") == len(_TOKEN.findall(text + " 是"))  # not ASCII even dotted: the regex


@settings(max_examples=200, deadline=None)
@given(
    st.binary(min_size=0, max_size=150),
    st.text(max_size=80).filter(lambda t: not re.search("[\ud800-\udfff]", t)),
)
def test_the_keyed_hash_is_hmac_sha256(secret, text):
    expected = hmac.new(secret, text.encode("utf-8"), "sha256").hexdigest()
    assert keyed_hasher(secret)(text) == expected


@settings(max_examples=300, deadline=None)
@given(
    st.text(min_size=1, max_size=30),
    st.sampled_from(["fact", "preference", "episode", "task-context"]),
    st.booleans(),
    st.sampled_from(["user", "tool", "auto"]),
    st.text(min_size=1, max_size=40),
)
def test_the_static_line_count_equals_counting_the_rendered_line(item_id, kind, pinned, source, content):
    item = MemoryItem(
        id=item_id,
        content=content,
        kind=kind,  # type: ignore[arg-type]
        pinned=pinned,
        source=source,  # type: ignore[arg-type]
        created_at=5.0,
        tokens=count_tokens(content),
    )
    line = render_line(Candidate(item, 1.0), now=item.created_at)  # age 0: "0s", one token
    assert static_line_tokens(item) == count_tokens(line) - 1


def _expected_values(item: MemoryItem) -> tuple:
    """What the columns must hold for `item`, from its fields (the order of `_column_values`)."""
    return (
        True,
        item.strength,
        item.last_accessed_at,
        math.inf if item.ttl is None else item.ttl,
        math.inf if item.expires_at is None else item.expires_at,
        item.created_at,
        CURVE_CODES[item.curve],
        item.pinned,
        item.pinned or item.ttl is None,
        item.tokens,
        item.size_bytes,
        SCOPE_CODES[item.scope],
        item.status == "stale",
        static_line_tokens(item),
        item.owner_id,
        item.id,
        item.id,
    )


def _column_values(columns: ItemColumns, item_id: str) -> tuple:
    slot = columns.slot_of[item_id]
    names = ("alive", "base", "anchor", "ttl", "expires", "created", "curve", "pinned", "no_decay", "tokens")
    names += ("size", "scope", "marked_stale", "line_tokens")
    values = tuple(getattr(columns, name)[slot].item() for name in names)
    owner = int(columns.owner[slot])
    owner_id = None if owner == -1 else next(k for k, v in columns._owner_codes.items() if v == owner)
    return (*values, owner_id, columns.item_at[slot].id, columns.live_slot(item_id) == slot and item_id)


step = st.fixed_dictionaries(
    {
        "action": st.sampled_from(
            ["write", "write", "write", "forget", "touch", "advance", "sweep", "promote"]
        ),
        "ttl": st.floats(min_value=60.0, max_value=1e5),
        "key": st.none() | st.sampled_from(["a", "b"]),
        "scope": st.sampled_from(["workspace", "session"]),
        "pin": st.booleans(),
        "deadline": st.none() | st.floats(min_value=1.0, max_value=1e5),
        "pick": st.integers(0, 50),
        "advance": st.floats(min_value=0.0, max_value=5e4),
    }
)


@settings(max_examples=60, deadline=None)
@given(st.lists(step, min_size=1, max_size=25), st.booleans())
def test_columns_and_audit_hashes_after_any_history_equal_a_fresh_build(apply_step, steps, restorable):
    """Slots are reused, columns written through memoryviews, hashes kept from the write: after any history
    the columns of every live item equal those of an index built afresh from the store, and every forget
    entry's hash is the HMAC of the forgotten content."""
    clock = SimulatedClock(0.0)
    counter = itertools.count()
    store = InMemoryStore()
    config = Config(max_store_bytes=10**6, restorable=restorable)
    engine = Amnesia(store=store, config=config, clock=clock, id_factory=lambda: f"m-{next(counter):04d}")
    written: dict[str, str] = {}
    for spec in steps:
        live = list(engine._index.items)
        target = live[spec["pick"] % len(live)] if live else None
        view = apply_step(engine, clock, spec, target, len(written))
        if view is not None:
            written[view.id] = view.content
    fresh = Amnesia(store=store, config=config, clock=clock)
    assert list(fresh._index.items) == list(engine._index.items)  # the same items, in write order
    assert len(engine._index.columns) == len(engine._index.items)  # the stale slot_of entries counted right
    for item_id, item in engine._index.items.items():
        assert _column_values(engine._index.columns, item_id) == _expected_values(item)
        assert _column_values(fresh._index.columns, item_id) == _expected_values(item)
    assert engine._index.bytes == fresh._index.bytes
    digest = keyed_hasher(store.secret)
    forgets = [entry for entry in store.audit_entries("default") if entry.reason in FORGET_REASONS]
    for entry in forgets:
        assert entry.content_hash == digest(written[entry.item_id])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(step, min_size=1, max_size=25), st.booleans(), st.floats(min_value=0.0, max_value=2e5))
def test_the_in_memory_audit_rows_read_back_as_the_entries_a_durable_store_keeps(
    apply_step, tmp_path: Path, steps, restorable, since
):
    """The engine hands stores plain tuples (`AuditRow`) and the in-memory store keeps them as they are: after
    any history, every way of reading its audit gives AuditEntry objects equal to those the SQLite store
    rebuilds from its JSON, and the `forgotten` events say the same."""
    path = tmp_path / f"rows-{len(list(tmp_path.iterdir()))}.db"
    config = Config(max_store_bytes=10**6, restorable=restorable)
    clocks, engines, events = [], [], []
    for store in (InMemoryStore(secret=b"k" * 32), SQLiteStore(path, secret=b"k" * 32)):
        clock = SimulatedClock(0.0)
        counter = itertools.count()
        engine = Amnesia(
            store=store, config=config, clock=clock, id_factory=lambda c=counter: f"m-{next(c):04d}"
        )
        heard: list[dict] = []
        engine.on("forgotten", heard.append)
        clocks.append(clock)
        engines.append(engine)
        events.append(heard)
    written = {}
    for number, spec in enumerate(steps):
        live = list(engines[0]._index.items)
        target = live[spec["pick"] % len(live)] if live else None
        for engine, clock in zip(engines, clocks, strict=True):
            view = apply_step(engine, clock, spec, target, number)
        if view is not None:
            written[view.id] = view
    memory, sqlite = (engine.store for engine in engines)
    entries = memory.audit_entries("default")
    assert all(type(entry) is AuditEntry for entry in entries)
    digest = keyed_hasher(b"k" * 32)
    for entry in entries:  # each field where AuditEntry has it
        view = written[entry.item_id]
        # The subject key as restore needs it in restorable mode, else its keyed hash.
        key = view.key if restorable or view.key is None else key_hash(digest, view.key)
        assert (entry.kind, entry.key, entry.workspace_id) == (view.kind, key, "default")
        assert entry.reason in FORGET_REASONS and entry.restored_from is None
        assert entry.content_hash == digest(view.content)
        assert entry.content == (view.content if restorable else None)
        assert (entry.restore_fields is not None) == restorable
    assert entries == sqlite.audit_entries("default")
    assert memory.audit_entries("default", limit=3, since=since) == sqlite.audit_entries(
        "default", limit=3, since=since
    )
    assert memory.count_forgets("default") == sqlite.count_forgets("default")
    for entry in entries:
        for read in ("audit_for_item", "audit_by_hash"):
            key = entry.item_id if read == "audit_for_item" else entry.content_hash
            found = getattr(memory, read)("default", key)
            assert all(type(each) is AuditEntry for each in found)
            assert found == getattr(sqlite, read)("default", key)
    assert events[0] == events[1]
    sqlite.close()


class _OneCommitStore(InMemoryStore):
    forget_chunk = None  # every sweep in one commit, like a durable store


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.floats(min_value=60.0, max_value=1e4), st.booleans()), min_size=1, max_size=40),
    st.floats(min_value=0.0, max_value=2e4),
    st.integers(1, 7),
)
def test_a_sweep_in_chunks_equals_a_sweep_in_one_commit(writes, advance, chunk):
    """The in-memory store's chunked forgetting (`forget_chunk`) writes the same audit, in the same order,
    and leaves the same items, as one commit for the whole sweep."""

    class ChunkStore(InMemoryStore):
        forget_chunk = chunk

    results = []
    for store in (ChunkStore(secret=b"k" * 32), _OneCommitStore(secret=b"k" * 32)):
        clock = SimulatedClock(0.0)
        counter = itertools.count()
        engine = Amnesia(store=store, clock=clock, id_factory=lambda c=counter: f"m-{next(c):04d}")
        events: list[dict] = []
        engine.on("forgotten", events.append)
        for number, (ttl, keyed) in enumerate(writes):
            engine.remember(f"note {number}", ttl=ttl, key="k" if keyed and number % 3 == 0 else None)
        clock.advance(advance)
        swept = engine.sweep()
        results.append((swept, store.audit_entries("default"), sorted(engine._index.items), events))
    assert results[0] == results[1]
