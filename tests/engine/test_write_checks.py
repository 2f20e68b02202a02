"""`new_item`'s shortcuts give what the plain way gives: the field checks it settles from its own arguments
never let through an item that `validate_item` refuses, and the item it builds by calling the dataclass's
`__init__` directly equals the one the class call builds. The credential scan's literal gate finds a literal
exactly when one is in the text. A write whose commit meets a changed store is planned again."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amnesia import Amnesia, Config, InMemoryStore, SimulatedClock, safety
from amnesia.engine import WRITE_ATTEMPTS
from amnesia.errors import InvalidInput, StoreBusy, StoreConflict
from amnesia.item import UNSET, MemoryItem, new_item, validate_item
from amnesia.tokens import count_tokens

CONFIG = Config(max_item_bytes=24, max_store_bytes=10**6)
NUMBERS = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-5, 10**6)

arguments = st.fixed_dictionaries(
    {
        "content": st.sampled_from(["", " ", "\t\n", "a note", "x" * 24, "y" * 25, "café au lait ×3"]),
        "kind": st.sampled_from(["fact", "episode"]),
        "ttl": st.just(UNSET) | st.none() | NUMBERS | st.sampled_from(["7d", "0s", "soon"]),
        "pin": st.booleans(),
        "curve": st.none() | st.sampled_from(["", "flat", "ebbinghaus", "spiral"]),
        "tags": st.sampled_from([(), None, ["A b", "a-b"], "one"]),
        "source": st.sampled_from(["user", "tool", "auto"]),
        "scope": st.sampled_from(["workspace", "session", "team"]),
        "owner_id": st.none() | st.sampled_from(["", "agent-1"]),
        "key": st.none() | st.sampled_from(["", "  ", " k ", "k" * 201]),
        "supersedes": st.none() | st.just("m-0"),
        "expires_at": st.none() | NUMBERS,
        "source_ref": st.none() | st.just({"url": "u"}),
        "now": st.sampled_from([0.0, 50.0]),
    }
)


def _make(args: dict) -> MemoryItem:
    ids = itertools.count()
    return new_item(
        CONFIG,
        lambda: f"m-{next(ids)}",
        args["content"],
        args["kind"],
        args["ttl"],
        args["pin"],
        args["curve"],
        args["tags"],
        args["source"],
        args["scope"],
        args["owner_id"],
        args["key"],
        args["supersedes"],
        args["expires_at"],
        args["source_ref"],
        "default",
        args["now"],
    )


@settings(max_examples=1500, deadline=None)
@given(arguments)
def test_an_item_new_item_returns_passes_every_field_check(args):
    try:
        item = _make(args)
    except InvalidInput:  # refused: the checks that refused it ran as they always do
        return
    validate_item(item, max_item_bytes=CONFIG.max_item_bytes)
    # Built by the class call, with keywords: the same item.
    assert item == MemoryItem(
        id="m-0",
        content=args["content"],
        kind=args["kind"],
        scope=args["scope"],
        workspace_id="default",
        owner_id=args["owner_id"],
        source=args["source"],
        created_at=args["now"],
        last_accessed_at=args["now"],
        access_count=0,
        ttl=item.ttl,
        pinned=args["pin"],
        curve=args["curve"] or CONFIG.default_curve,
        strength=1.0,
        status="active",
        tags=item.tags,
        source_ref=args["source_ref"],
        key=args["key"] if args["key"] is None else args["key"].strip(),
        supersedes=args["supersedes"],
        expires_at=None if args["expires_at"] is None else float(args["expires_at"]),
        tokens=count_tokens(args["content"]),
        size_bytes=len(args["content"].encode()),
    )
    assert type(item) is MemoryItem


def test_the_checks_new_item_settles_itself_still_refuse_what_they_refused():
    """One write that each check refuses, with everything else as the common write has it."""
    plain = {
        "content": "a note",
        "kind": "fact",
        "ttl": 60.0,
        "pin": False,
        "curve": None,
        "tags": (),
        "source": "user",
        "scope": "workspace",
        "owner_id": None,
        "key": None,
        "supersedes": None,
        "expires_at": None,
        "source_ref": None,
        "now": 0.0,
    }
    assert _make(plain).ttl == 60.0
    refused = [
        ({"content": ""}, "content: must be a non-empty string"),
        ({"content": " \t"}, "content: must be a non-empty string"),
        ({"content": "y" * 25}, "content: 25 bytes exceeds max_item_bytes (24)"),
        ({"owner_id": "agent-1"}, "owner_id: workspace memories have no owner"),
        ({"owner_id": ""}, "owner_id: expected a non-empty string"),
        ({"scope": "session"}, "owner_id: required for scope session"),
        ({"ttl": None}, "ttl: may be null only for pinned memories"),
        ({"expires_at": 0.0}, "expires_at: 0.0 is not after the write time 0.0"),
        ({"expires_at": math.inf}, "expires_at: must be a finite time"),
        ({"key": "  "}, "key: must be a non-empty string"),
        ({"key": "k" * 201}, "key: longer than 200 characters"),
        ({"curve": "spiral"}, "curve: expected one of"),
    ]
    for change, message in refused:
        try:
            _make(plain | change)
        except InvalidInput as error:
            assert str(error).startswith(message), (change, str(error))
        else:
            raise AssertionError(f"{change} was not refused")


_ASCII_NEEDLES = [needle.encode() for needle in safety._NEEDLES if needle.isascii()]
_PIECES = st.sampled_from(
    [needle[:cut] for needle in _ASCII_NEEDLES for cut in range(1, len(needle) + 1)] + [b" ", b"x", b"-"]
)


@settings(max_examples=1500, deadline=None)
@given(st.lists(_PIECES | st.binary(max_size=6), max_size=12).map(b"".join))
def test_the_literal_gate_finds_a_literal_exactly_when_one_is_in_the_text(folded):
    """Texts made of the literals' pieces (each literal cut anywhere, so most drawn texts hold parts of one
    around its rarest byte): the gate's grouped search says what a test of each literal says."""
    found = safety._NEEDLE_GATE.search(folded) is not None
    assert found == any(needle in folded for needle in _ASCII_NEEDLES)


class _ConflictingStore(InMemoryStore):
    """Refuses the first `conflicts` planned commits, as a store another process changed would."""

    def __init__(self, conflicts: int) -> None:
        super().__init__(secret=b"k" * 32)
        self.conflicts = conflicts
        self.loads = 0

    def load_items(self, workspace_id):
        self.loads += 1
        return super().load_items(workspace_id)

    def commit(self, workspace_id, *, forget=(), save=(), audit=(), if_unchanged=False):
        if if_unchanged and self.conflicts:
            self.conflicts -= 1
            raise StoreConflict("changed")
        return super().commit(workspace_id, forget=forget, save=save, audit=audit, if_unchanged=if_unchanged)


def _engine(store):
    ids = itertools.count()
    engine = Amnesia(store=store, clock=SimulatedClock(0.0), id_factory=lambda: f"m-{next(ids)}")
    heard = []
    engine.on("written", heard.append)
    return engine, heard


@pytest.mark.parametrize("key", [None, "k"])
def test_a_write_that_meets_a_changed_store_is_planned_again_and_written_once(key):
    plain, plain_heard = _engine(_ConflictingStore(0))
    retried, retried_heard = _engine(_ConflictingStore(3))
    for engine in (plain, retried):
        engine.remember("first", ttl=60.0, key=key)
        engine.remember("second", ttl=60.0, key=key)
    assert retried.store.loads == 1 + 3  # one load to start, one after each refused commit
    assert [vars(item) for item in plain.plugs()] == [vars(item) for item in retried.plugs()]
    assert plain_heard == retried_heard
    assert plain.store.audit_entries("default") == retried.store.audit_entries("default")


def test_a_write_refused_at_every_attempt_gives_up():
    engine, heard = _engine(_ConflictingStore(WRITE_ATTEMPTS))
    with pytest.raises(StoreBusy):
        engine.remember("note", ttl=60.0)
    assert heard == [] and engine.plugs() == []
