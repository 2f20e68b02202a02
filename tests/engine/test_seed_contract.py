"""Seed 000's engine contract where it once differed from ours (issue 32): revival of due-but-unswept memories
(§5.3), the seed-shaped `amnesia_remember` (`ttlMs`, `expiresAt`; §6.3), restore answering `{rejected}`
(§6.2) and a `default_ttl` of 0 meaning no expiry (§6.8)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from amnesia import Amnesia, Config, SimulatedClock, SQLiteStore
from amnesia.stores.forensics import content_keys, scan
from amnesia.tokens import count_tokens
from amnesia.tools import MAX_TTL_MS, call_tool


def engine_at(config: Config | None = None, store: SQLiteStore | None = None) -> Amnesia:
    counter = itertools.count()
    return Amnesia(
        store=store,
        config=config or Config(),
        clock=SimulatedClock(1_000.0),
        id_factory=lambda: f"m-{next(counter):04d}",
    )


# --- §5.3 revival ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("curve", "idle"), [("flat", 11.0), ("ebbinghaus", 10.0), ("linear", 9.6)])
def test_a_recall_revives_a_due_memory_that_was_not_yet_swept(curve: str, idle: float) -> None:
    """Flat: idle a whole ttl ("expired"); ebbinghaus and linear: decayed below forgotten_strength ("stale").
    Either way it is due, still stored, and a recall hit brings it back active."""
    engine = engine_at()
    view = engine.remember("The kettle descaler is under the sink.", ttl=10, curve=curve)
    engine.clock.advance(idle)
    (hit,) = engine.recall("descaler")
    assert (hit.id, hit.status) == (view.id, "active")
    assert engine.inspect(view.id).status == "active" and engine.audit() == []


def test_a_touch_revives_a_due_memory_and_a_revived_memory_lives_a_fresh_ttl() -> None:
    engine = engine_at()
    view = engine.remember("The boiler code is on the lid.", ttl=100, curve="flat")
    engine.clock.advance(150)
    assert engine.touch(view.id).status == "active"
    engine.clock.advance(99)
    assert engine.inspect(view.id) is not None
    engine.clock.advance(2)
    assert engine.inspect(view.id) is None and engine.audit()[0].reason == "expired"


def test_a_recall_forgets_the_due_memories_it_does_not_hit() -> None:
    engine = engine_at()
    hit = engine.remember("The kettle descaler is under the sink.", ttl=10, curve="flat")
    missed = engine.remember("The spare key is with the neighbour.", ttl=10, curve="flat")
    engine.clock.advance(11)
    assert [view.id for view in engine.recall("descaler")] == [hit.id]
    assert [(entry.item_id, entry.reason) for entry in engine.audit()] == [(missed.id, "expired")]
    assert engine.recall("neighbour") == []  # forgotten is forgotten: nothing brings it back


def test_once_swept_a_due_memory_is_gone_for_recall() -> None:
    engine = engine_at()
    view = engine.remember("The kettle descaler is under the sink.", ttl=10, curve="flat")
    engine.clock.advance(11)
    assert engine.sweep().ids == (view.id,)
    assert engine.recall("descaler") == [] and engine.touch(view.id) is None


def test_a_recall_revives_a_deeply_stale_memory_to_active() -> None:
    """The boost alone (s·1.5 + 0.1) would leave a strength of 0.06 stale; a hit makes it active."""
    engine = engine_at()
    view = engine.remember("The wifi hint is on the fridge.", ttl=100)
    engine.clock.advance(90)  # ebbinghaus: exp(-2.7) ≈ 0.067, stale but not due
    assert engine.inspect(view.id).status == "stale"
    (hit,) = engine.recall("fridge")
    assert hit.status == "active" and hit.strength == pytest.approx(0.3)
    assert engine.preview().items[0]["id"] == view.id


def test_the_limit_counts_only_what_a_recall_revives() -> None:
    engine = engine_at()
    deadline = engine.remember("Harbor sale ends at noon.", ttl=100, expires_at=1_005.0)
    kept = engine.remember("Harbor office opens at nine.", ttl=100)
    engine.clock.advance(10)
    assert [view.id for view in engine.recall("harbor", limit=1)] == [kept.id]
    assert [entry.item_id for entry in engine.audit()] == [deadline.id]


def test_revival_never_brings_back_bytes_of_a_forgotten_memory(tmp_path: Path) -> None:
    """Forensic guarantee: a revival keeps only what is still stored; what was forgotten before (by a sweep,
    or by the recall itself) leaves no byte in any file — neither its text nor the key its text was sealed
    under while it lived."""
    db = tmp_path / "memory.db"
    engine = engine_at(store=SQLiteStore(db))
    swept = engine.remember("Harbor marker swept-4d1c", ttl=10, curve="flat")
    keys = content_keys(db, [swept.id])
    engine.clock.advance(11)
    engine.sweep()
    revived = engine.remember("Harbor marker revived-9a7e", ttl=10, curve="flat")
    missed = engine.remember("Quay marker missed-2b5f", ttl=10, curve="flat")
    keys |= content_keys(db, [missed.id])
    engine.clock.advance(11)
    assert [view.id for view in engine.recall("harbor")] == [revived.id]
    assert {entry.item_id for entry in engine.audit()} == {swept.id, missed.id}
    engine.close()
    needles = {"swept": b"swept-4d1c", "missed": b"missed-2b5f"} | {f"key {i}": k for i, k in keys.items()}
    assert len(keys) == 2 and scan(db, needles).found == {}
    reopened = engine_at(store=SQLiteStore(db))
    assert [view.content for view in reopened.plugs()] == ["Harbor marker revived-9a7e"]


# --- §6.3 ttlMs and the seed's result fields ----------------------------------------------------------------


def test_remember_takes_ttl_ms_and_answers_with_ttl_ms_and_expires_at() -> None:
    engine = engine_at(Config(default_curve="flat"))
    result = call_tool(engine, "amnesia_remember", {"content": "Standup moved to 10:30.", "ttlMs": 90_000})
    assert result["ttl"] == 90.0 and result["ttlMs"] == 90_000
    assert result["expiresAt"] == round(result["expires_at"] * 1000) == 1_090_000
    pinned = call_tool(
        engine, "amnesia_remember", {"content": "Answer in French.", "pin": True, "ttlMs": None}
    )
    assert (pinned["ttlMs"], pinned["expiresAt"]) == (None, None)


def test_ttl_and_ttl_ms_together_must_agree() -> None:
    engine = engine_at()
    same = call_tool(engine, "amnesia_remember", {"content": "Tea is green.", "ttl": "2m", "ttlMs": 120_000})
    assert same["ttlMs"] == 120_000
    assert call_tool(
        engine, "amnesia_remember", {"content": "Tea is black.", "ttl": None, "ttlMs": None}
    ) == {"error": "ttl: may be null only for pinned memories"}


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"ttlMs": 0}, "ttlMs: must be at least 1, got 0"),
        ({"ttlMs": -5}, "ttlMs: must be at least 1, got -5"),
        ({"ttlMs": 1.5}, "ttlMs: expected integer or null, got 1.5"),
        ({"ttlMs": "1d"}, 'ttlMs: expected integer or null, got "1d"'),
        ({"ttlMs": MAX_TTL_MS + 1}, f"ttlMs: must be at most {MAX_TTL_MS}"),
        ({"ttlMs": 60_000, "ttl": "2m"}, 'ttlMs: 60000 disagrees with ttl "2m"; give one of them'),
        ({"ttlMs": 60_000, "ttl": None}, "ttlMs: 60000 disagrees with ttl null"),
        ({"ttlMs": 60_000, "ttl": "soon"}, "ttl: expected a duration like"),
        ({"ttlMs": 60_000, "pin": True}, "ttl: a pinned memory is kept until forgotten"),
    ],
)
def test_a_bad_ttl_ms_is_a_one_line_error_and_writes_nothing(arguments: dict, fragment: str) -> None:
    engine = engine_at()
    result = call_tool(engine, "amnesia_remember", {"content": "Tea is green."} | arguments)
    assert fragment in result["error"] and "\n" not in result["error"]
    assert engine.plugs() == []


# --- §6.2 restore rejection ---------------------------------------------------------------------------------


def test_restore_answers_rejected_with_the_reason() -> None:
    engine = engine_at(Config(restorable=True))
    view = engine.remember("Mum's birthday is 12 May.")
    engine.forget(view.id)
    restored = call_tool(engine, "amnesia_restore", {"id": view.id})
    assert restored["content"] == "Mum's birthday is 12 May."
    again = call_tool(engine, "amnesia_restore", {"id": view.id})
    assert again == {"rejected": f"restore: {view.id} was already restored as {restored['id']}"}
    assert call_tool(engine, "amnesia_restore", {"id": "m-none"}) == {
        "rejected": "id: no forgotten memory 'm-none' in the audit"
    }
    private = engine_at()
    assert "restorable mode is off" in call_tool(private, "amnesia_restore", {"id": "m-none"})["rejected"]


# --- §6.8 default_ttl 0 -------------------------------------------------------------------------------------


def test_a_default_ttl_of_zero_means_no_expiry_by_default() -> None:
    engine = engine_at(Config(default_ttl=0))
    lasting = engine.remember("The office is on the third floor.")
    brief = engine.remember("The lift is out today.", ttl="1d")
    assert (lasting.ttl, lasting.expires_at, brief.ttl) == (None, None, 86_400.0)
    engine.clock.advance(10 * 365 * 86_400)
    assert [view.id for view in engine.plugs()] == [lasting.id]
    assert engine.inspect(lasting.id).status == "active" and engine.status().next_expiry_at is None
    written = call_tool(engine, "amnesia_remember", {"content": "Parking is in bay 4."})
    assert (written["ttl"], written["ttlMs"], written["expiresAt"]) == (None, None, None)


def test_a_default_ttl_of_zero_still_refuses_an_explicit_null_without_pin_and_auto_expire_still_rules() -> (
    None
):
    engine = engine_at(Config(default_ttl="0"))
    with pytest.raises(ValueError, match="ttl: may be null only for pinned memories"):
        engine.remember("The lift is out today.", ttl=None)
    frozen = engine_at(Config(auto_expire=False))
    view = frozen.remember("The lift is out today.", ttl="1d")
    frozen.clock.advance(30 * 86_400)
    assert frozen.inspect(view.id) is not None
    with pytest.raises(ValueError, match=r"default_ttl: .*non-negative"):
        Config(default_ttl=-1)


# --- §6.4 the seed's line format ----------------------------------------------------------------------------


def test_seed_lines_show_the_remaining_life_and_end_with_the_budget_use() -> None:
    engine = engine_at(Config(block_lines="seed", default_curve="flat"))
    fact = engine.remember("The verification drink is oolong.", ttl="2d")
    pinned = engine.remember("Answer in French.", pin=True, kind="preference")
    engine.clock.advance(3600)
    injection = engine.select_for_injection()
    assert injection.block.splitlines() == [
        "AMNESIA MEMORY",
        f"- [{pinned.id}] preference · pinned · Answer in French.",
        f"- [{fact.id}] fact · 1d23h left · The verification drink is oolong.",
        f"(2 items, {injection.tokens}/2000 tokens)",
    ]
    assert injection.tokens == count_tokens(injection.block)
    assert engine_at(Config(default_ttl=0, block_lines="seed")).remember("x y").ttl is None


@pytest.mark.parametrize("count", [5, 200])  # the small-store path and the columns' path
def test_a_seed_block_keeps_to_its_budget_and_counts_its_own_tokens(count: int) -> None:
    engine = engine_at(Config(block_lines="seed", renew_on_inject="none"))  # the preview sees the same lines
    for index in range(count):
        engine.remember(f"Harbor note number {index} about the quay.", ttl=f"{index + 1}d")
    engine.clock.advance(1800)
    for budget in (40, 90, 400, 2000):
        injection = engine.select_for_injection(budget)
        assert injection.tokens == count_tokens(injection.block) <= budget
        assert injection.block.splitlines()[-1].endswith(f"/{budget} tokens)")
        assert engine.preview(budget).block == injection.block
