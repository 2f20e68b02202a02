"""restore() brings a forgotten memory back as it was: every field of the item is either kept or renewed on
purpose; an untrusted memory stays untrusted — marked on its block line, under the untrusted ttl cap."""

from __future__ import annotations

import itertools
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from amnesia import (
    Amnesia,
    AuditEntry,
    Config,
    InvalidInput,
    MemoryItem,
    NotRestorable,
    SimulatedClock,
    SQLiteStore,
)
from amnesia.audit import content_hash

SECRET = b"r" * 32
# Fields restore renews on purpose: a new id, and a fresh clock (written now, never used, full strength).
RENEWED = {"id", "created_at", "last_accessed_at", "access_count", "strength", "status"}


def open_engine(path: Path, clock: SimulatedClock, **config: Any) -> Amnesia:
    counter = itertools.count()
    store = SQLiteStore(path, secret=SECRET)
    return Amnesia(
        store=store,
        config=Config(restorable=True, **config),
        clock=clock,
        id_factory=lambda: f"m-{clock.now():.0f}-{next(counter)}",
    )


def stored(engine: Amnesia, item_id: str) -> MemoryItem:
    (item,) = [item for item in engine.store.load_items(engine.workspace_id) if item.id == item_id]
    return item


def assert_restored_as_it_was(before: MemoryItem, after: MemoryItem, now: float) -> None:
    kept = {spec.name for spec in fields(MemoryItem)} - RENEWED
    assert {name: getattr(after, name) for name in kept} == {name: getattr(before, name) for name in kept}
    assert after.id != before.id
    assert (after.created_at, after.last_accessed_at, after.access_count) == (now, now, 0)
    assert (after.strength, after.status) == (1.0, "active")


@pytest.mark.parametrize(
    "write",
    [
        pytest.param(
            {
                "content": "The flaky test is test_login_retry.",
                "source": "auto",
                "ttl": "6h",
                "curve": "linear",
                "tags": ["ci", "Flaky Tests"],
                "key": "flaky-test",
                "expires_at": 5 * 86_400.0,
                "source_ref": {"url": "https://ci.example/run/7", "lines": [3, 4]},
                "scope": "session",
                "owner_id": "task-7",
                "kind": "episode",
            },
            id="untrusted-session-memory",
        ),
        pytest.param(
            {
                "content": "Answer in French.",
                "pin": True,
                "ttl": None,
                "tags": ["style"],
                "kind": "preference",
            },
            id="pinned-user-memory",
        ),
        pytest.param(
            {"content": "The staging host is db-stage-2.", "source": "tool", "curve": "flat", "ttl": "2d"},
            id="tool-memory",
        ),
    ],
)
def test_restore_keeps_every_field_across_a_reopen(tmp_path: Path, write: dict[str, Any]) -> None:
    clock = SimulatedClock(1_000.0)
    db = tmp_path / "memory.db"
    engine = open_engine(db, clock)
    written = engine.remember(**write)
    before = stored(engine, written.id)
    clock.advance(60)
    engine.forget(written.id)
    engine.close()

    clock.advance(60)
    reopened = open_engine(db, clock)
    restored = reopened.restore(written.id)
    assert_restored_as_it_was(before, stored(reopened, restored.id), clock.now())
    assert (restored.untrusted, restored.source) == (before.untrusted, before.source)


def test_restore_keeps_the_supersedes_record_but_retires_nothing() -> None:
    clock = SimulatedClock(0.0)
    engine = Amnesia(config=Config(restorable=True), clock=clock)
    first = engine.remember("The meeting room is 4B.", ttl="7d")
    second = engine.remember("The meeting room is 5A.", ttl="7d", supersedes=first.id)
    other = engine.remember("Lunch is at noon.", ttl="7d")
    engine.forget(second.id)
    restored = engine.restore(second.id)
    assert restored.superseded == () and engine.inspect(restored.id).supersedes == first.id  # type: ignore[union-attr]
    assert {plug.id for plug in engine.plugs()} == {restored.id, other.id}


def test_restored_untrusted_text_is_still_marked_and_still_capped(tmp_path: Path) -> None:
    clock = SimulatedClock(0.0)
    db = tmp_path / "memory.db"
    engine = open_engine(db, clock)
    written = engine.remember("The build cache lives in /var/cache/ci.", source="auto", ttl="7d")
    assert written.ttl == 86_400  # capped at the default untrusted_max_ttl
    engine.forget(written.id)
    engine.close()

    # The cap is applied again on restore: under a tighter cap the memory comes back with the tighter ttl.
    reopened = open_engine(db, clock, untrusted_max_ttl="1h")
    restored = reopened.restore(written.id)
    assert (restored.source, restored.untrusted, restored.ttl) == ("auto", True, 3_600)
    (line,) = reopened.select_for_injection(500).block.splitlines()[1:]
    assert line.startswith(f"- [{restored.id}] fact · ") and " · untrusted · " in line
    with pytest.raises(InvalidInput, match="untrusted"):
        reopened.remember("The build cache lives in /tmp.", source="auto", pin=True)


def test_a_restored_untrusted_memory_cannot_supersede_what_the_user_wrote_since() -> None:
    engine = Amnesia(config=Config(restorable=True), clock=SimulatedClock(0.0))
    untrusted = engine.remember("The deploy window is 14:00.", source="auto", key="deploy-window")
    engine.forget(untrusted.id)
    users = engine.remember("The deploy window is 16:00.", key="deploy-window")
    with pytest.raises(InvalidInput, match="cannot supersede the user's memory"):
        engine.restore(untrusted.id)
    assert [plug.id for plug in engine.plugs()] == [users.id]


def test_an_entry_without_recorded_fields_comes_back_untrusted() -> None:
    """Audit entries written before restore_fields existed carry no trust information."""
    clock = SimulatedClock(100.0)
    engine = Amnesia(config=Config(restorable=True), clock=clock)
    legacy = AuditEntry(
        item_id="m-legacy",
        kind="fact",
        reason="manual",
        at=50.0,
        content_hash=content_hash(engine.store.secret, "The printer is on floor 3."),
        ttl=None,
        content="The printer is on floor 3.",
    )
    engine.store.commit(engine.workspace_id, audit=[legacy])
    restored = engine.restore("m-legacy")
    assert (restored.source, restored.untrusted, restored.pinned) == ("auto", True, False)
    assert restored.ttl == engine.config.untrusted_max_ttl


def test_a_memory_whose_hard_deadline_passed_is_not_restored() -> None:
    clock = SimulatedClock(0.0)
    engine = Amnesia(config=Config(restorable=True), clock=clock)
    frozen = engine.remember("Staging is frozen.", ttl="30d", expires_at=3_600.0)
    clock.advance(7_200)
    assert engine.plugs() == []  # expired at its deadline
    with pytest.raises(NotRestorable, match="deadline") as refused:
        engine.restore(frozen.id)
    assert "\n" not in str(refused.value)
