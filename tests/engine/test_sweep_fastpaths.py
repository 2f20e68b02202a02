"""More shortcuts for speed, each checked against the plain way: the id token count cached by the id's
shape, the in-memory store's prune that looks only at entries appended since the last one, the write
path's inline "fits and supersedes nothing" test, decay's small-store and in-place paths, and the cache of
duration strings."""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amnesia import Amnesia, Config, InMemoryStore, SimulatedClock
from amnesia.audit import AuditEntry
from amnesia.decay import EBBINGHAUS, FLAT, LINEAR, SMALL_STORE, _decayed_numpy, decayed
from amnesia.durations import MAX_DURATION_SECONDS, UNIT_SECONDS, parse_duration
from amnesia.errors import CapacityExceeded
from amnesia.tokens import count_id_tokens, count_tokens


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=40) | st.from_regex(r"[a-z]{1,3}[-_.:][0-9a-f]{1,16}", fullmatch=True))
def test_the_id_token_count_cached_by_shape_equals_a_fresh_count(text):
    assert count_id_tokens(text) == count_tokens(text)
    assert count_id_tokens(text) == count_tokens(text)  # the second time from the cache


prune_step = st.one_of(
    st.tuples(st.just("commit"), st.lists(st.floats(min_value=0.0, max_value=100.0), max_size=5)),
    st.tuples(st.just("prune"), st.floats(min_value=-1.0, max_value=101.0)),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(prune_step, max_size=30))
def test_pruning_with_the_oldest_entry_tracked_equals_filtering_the_whole_log(steps):
    """Entries may arrive in any time order (clocks of several engines, restores): whatever the order, a prune
    drops exactly the entries older than its cut-off and keeps the rest in order."""
    store = InMemoryStore(secret=b"k" * 32)
    expected: list[AuditEntry] = []
    number = itertools.count()
    for action, value in steps:
        if action == "commit":
            entries = [AuditEntry(f"m-{next(number)}", "fact", "manual", at, "h", "w") for at in value]
            store.commit("w", audit=entries)
            expected += entries
        else:
            kept = [entry for entry in expected if entry.at >= value]
            assert store.prune_audit("w", value) == len(expected) - len(kept)
            expected = kept
        assert store.audit_entries("w") == expected[::-1]


@pytest.mark.parametrize("room", [0, 10, 11])
def test_a_write_that_just_fits_or_just_does_not_evicts_as_the_byte_count_says(room):
    """The write path's inline capacity test (nothing superseded: bytes + size <= max_store_bytes) agrees
    with `overflow` at the boundary: a write that fits exactly evicts nothing, one byte more evicts."""
    clock = SimulatedClock(0.0)
    counter = itertools.count()
    engine = Amnesia(
        config=Config(max_store_bytes=20 + room, max_item_bytes=20),
        clock=clock,
        id_factory=lambda: f"m-{next(counter)}",
    )
    engine.remember("0123456789", ttl=60.0)  # 10 bytes
    engine.remember("abcdefghij", ttl=60.0)  # 10 bytes: 20 in all
    if room == 0:
        written = engine.remember("x", ttl=60.0)
        assert written.evicted == ("m-0",)
    else:
        written = engine.remember("k" * room, ttl=60.0)
        assert written.evicted == ()
    assert engine.status().bytes <= 20 + room
    engine.remember("pinned: its bytes", pin=True, ttl=None)
    with pytest.raises(CapacityExceeded):  # nothing unpinned could make room: nothing dropped
        engine.remember("z" * 20, ttl=60.0)


def _plain_decayed(base, age, ttl, curve, pinned, k, *, zero_at_ttl=True):
    """`decay.decayed` as it was written before its small-store and in-place paths (kept as the reference)."""
    age = np.maximum(age, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(np.isfinite(ttl), age / ttl, 0.0)
    shaped = np.where(
        curve == EBBINGHAUS, base * np.exp(-ratio * k), np.where(curve == LINEAR, base * (1.0 - ratio), base)
    )
    if zero_at_ttl:
        shaped = np.where(ratio >= 1.0, 0.0, shaped)
    return np.clip(np.where(pinned, base, shaped), 0.0, 1.0)


_SLOT = st.tuples(
    # No NaN base: a strength is never NaN (written as 1.0, renewed to 1.0), and when two NaNs meet, which
    # payload an operation keeps depends on operand order, which the two paths need not share.
    st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([0.0, -0.0, 1.0, 0.5]),  # base
    st.floats(min_value=-1e12, max_value=1e12) | st.sampled_from([0.0, -0.0, 3600.0, 7200.0]),  # age
    st.floats(min_value=0.0, exclude_min=False) | st.sampled_from([math.inf, 3600.0, 0.0, 5e-324]),  # ttl
    st.sampled_from([FLAT, LINEAR, EBBINGHAUS]),
    st.booleans(),  # pinned (or no ttl)
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(_SLOT, max_size=2 * SMALL_STORE + 8),
    st.floats(min_value=0.01, max_value=20.0),
    st.booleans(),
    st.booleans(),
)
def test_decayed_strengths_are_bit_for_bit_those_of_the_plain_formula(slots, k, zero_at_ttl, one_curve):
    """Both of `decayed`'s paths — Python floats for a small store, numpy in place for a large one — give the
    plain formula's bits, signed zeros included: strengths decide stale and due, and are logged."""
    columns = [list(column) for column in zip(*slots, strict=True)] if slots else [[]] * 5
    if one_curve:  # the in-place path's shortcut for a store of one curve (the default: ebbinghaus)
        columns[3] = [EBBINGHAUS] * len(slots)
    base, age, ttl = (np.array(column, dtype=np.float64) for column in columns[:3])
    curve, pinned = np.array(columns[3], dtype=np.int8), np.array(columns[4], dtype=bool)
    with np.errstate(over="ignore", invalid="ignore"):
        expected = _plain_decayed(base, age, ttl, curve, pinned, k, zero_at_ttl=zero_at_ttl)
        for got in (
            decayed(base, age, ttl, curve, pinned, k, zero_at_ttl=zero_at_ttl),
            _decayed_numpy(base, age, ttl, curve, pinned, k, zero_at_ttl),
        ):
            assert got.dtype == np.float64
            assert got.tobytes() == expected.tobytes()


@settings(max_examples=200, deadline=None)
@given(st.lists(_SLOT, min_size=1, max_size=2 * SMALL_STORE + 8), _SLOT, st.booleans())
def test_decayed_broadcasts_scalars_as_the_plain_formula_does(slots, one, zero_at_ttl):
    """A report's figure passes arrays of bases and ages with one ttl, curve and pin as Python scalars."""
    base = np.array([slot[0] for slot in slots], dtype=np.float64)
    age = np.array([slot[1] for slot in slots], dtype=np.float64)
    _, _, ttl, curve, pinned = one
    with np.errstate(over="ignore", invalid="ignore"):
        expected = _plain_decayed(base, age, ttl, curve, pinned, 3.0, zero_at_ttl=zero_at_ttl)
        got = decayed(base, age, ttl, curve, pinned, 3.0, zero_at_ttl=zero_at_ttl)
    assert got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()


def _plain_duration(value: str) -> float | None:
    """A duration string's seconds as `parse_duration` read it before its cache (None: not a duration)."""
    text = value.strip().lower()
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text)
    if re.match(r"^\s*(?:\d+(?:\.\d+)?\s*[wdhms]\s*)+$", text):
        parts = re.findall(r"(\d+(?:\.\d+)?)\s*([wdhms])", text)
        return sum(float(number) * UNIT_SECONDS[unit] for number, unit in parts)
    return None


@settings(max_examples=300, deadline=None)
@given(
    st.from_regex(r"\s*(\d{1,4}(\.\d{1,2})?\s*[wdhmsWDHMS]\s*){0,3}\d{0,3}\s*", fullmatch=True) | st.text()
)
def test_a_duration_string_read_through_the_cache_is_read_as_without_it(text):
    """`parse_duration` keeps what each duration string means (every write's ttl asks): the same seconds,
    or the same refusal, the first time and from the cache."""
    expected = _plain_duration(text)
    for _ in range(2):
        try:
            seconds = parse_duration(text, field="ttl")
        except ValueError:
            seconds = None
        if expected is not None and math.isfinite(expected) and expected <= MAX_DURATION_SECONDS:
            assert seconds == expected
        else:
            assert seconds is None
