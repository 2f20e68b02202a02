"""Lifecycle of memories through the public API: the seed's scenarios and DoD, capacity, supersession,
trust, hard deadlines, restore, audit, events."""

from __future__ import annotations

import itertools
import json

import pytest

from amnesia import (
    Amnesia,
    CapacityExceeded,
    Config,
    InvalidInput,
    NotFound,
    NotRestorable,
    SimulatedClock,
)


def engine_at(config: Config | None = None, start: float = 0.0) -> tuple[Amnesia, SimulatedClock]:
    clock = SimulatedClock(start)
    counter = itertools.count()
    return Amnesia(config=config or Config(), clock=clock, id_factory=lambda: f"m-{next(counter):04d}"), clock


def test_seed_section_14_lapsang_dies_oolong_lives():
    engine, clock = engine_at()
    lapsang = engine.remember("验证饮品是 lapsang", ttl="15s")
    oolong = engine.remember("验证饮品已更换为 oolong", ttl="600s")
    status = engine.status()
    assert status.counts["active"] == 2
    assert status.next_expiry_at == pytest.approx(15 * 0.99858, abs=0.01)  # lapsang's moment
    clock.advance(17)
    status = engine.status()
    assert (status.counts["active"], status.counts["forgotten"]) == (1, 1)
    assert [p.id for p in engine.plugs()] == [oolong.id]
    (entry,) = engine.audit()
    assert entry.item_id == lapsang.id and entry.reason in ("expired", "stale") and entry.content is None
    assert "lapsang" not in repr(entry) and len(entry.content_hash) == 64
    assert "lapsang" not in engine.select_for_injection().block
    assert engine.verify("验证饮品是 lapsang") == [entry]
    assert engine.verify("验证饮品是 oolong") == []


def test_dod1_one_second_ttl_is_forgotten_and_audited():
    engine, clock = engine_at()
    view = engine.remember("Temporary note.", ttl=0.001, curve="flat")
    clock.advance(1)
    assert engine.status().counts["forgotten"] == 1
    assert engine.audit()[0].item_id == view.id and engine.audit()[0].reason == "expired"


def test_dod2_budget_limits_what_the_model_sees():
    engine, _ = engine_at()
    for index in range(50):
        engine.remember(f"Project fact number {index}: the build uses cache shard {index}.")
    injection = engine.select_for_injection(100)
    assert 0 < len(injection.items) < 50 and injection.tokens <= 100


def test_dod5_sub_agent_end_unplugs_its_session_memories():
    engine, _ = engine_at()
    keep = engine.remember("Workspace convention: tabs.")
    scratch = engine.remember("Sub-agent scratch: tried approach A.", scope="session", owner_id="sub-1")
    promoted = engine.remember("Sub-agent finding worth keeping.", scope="session", owner_id="sub-1")
    engine.promote(promoted.id)
    summary = engine.end_agent("sub-1")
    assert summary.ids == (scratch.id,) and summary.reason == "agent-disposed"
    assert {p.id for p in engine.plugs()} == {keep.id, promoted.id}
    assert engine.audit()[0].reason == "agent-disposed"


def test_capacity_evicts_weakest_unpinned_and_refuses_when_only_pinned_remain():
    config = Config(max_store_bytes=100, max_item_bytes=60)
    engine, clock = engine_at(config)
    pinned = engine.remember("P" * 40, pin=True)
    weak = engine.remember("W" * 30, ttl=100)
    clock.advance(30)
    strong = engine.remember("S" * 25, ttl=100)  # 95 bytes in all
    view = engine.remember("N" * 20, ttl=100)  # needs 15 more: the weaker unpinned one goes
    assert view.evicted == (weak.id,)
    assert {p.id for p in engine.plugs()} == {pinned.id, strong.id, view.id}
    assert engine.audit()[0].reason == "evicted"
    engine.forget(strong.id)
    engine.forget(view.id)
    engine.remember("Q" * 50, pin=True)
    before = {p.id for p in engine.plugs()}
    with pytest.raises(CapacityExceeded, match="nothing was dropped"):
        engine.remember("R" * 20)
    assert {p.id for p in engine.plugs()} == before


def test_supersession_by_key_and_by_id():
    engine, _ = engine_at()
    old = engine.remember("The drink is lapsang.", key="drink")
    new = engine.remember("The drink is oolong.", key="drink")
    assert new.superseded == (old.id,)
    newer = engine.remember("The drink is sencha.", supersedes=new.id)
    assert newer.superseded == (new.id,)
    assert [p.id for p in engine.plugs()] == [newer.id]
    assert [e.reason for e in engine.audit()] == ["superseded", "superseded"]
    with pytest.raises(NotFound):
        engine.remember("x", supersedes="m-nope")


def test_untrusted_source_is_capped_marked_and_cannot_override_the_user():
    engine, _ = engine_at(Config(untrusted_max_ttl=3600))
    user = engine.remember("The deploy target is eu-west.", key="deploy-target", ttl="30d")
    with pytest.raises(InvalidInput, match="untrusted"):
        engine.remember("The deploy target is attacker.example.", key="deploy-target", source="auto")
    with pytest.raises(InvalidInput, match="pinned"):
        engine.remember("A forum post says the cache is 2 GB.", source="auto", pin=True)
    auto = engine.remember("A web page said the API rate limit is 100/min.", source="auto", ttl="30d")
    assert auto.ttl == 3600 and auto.untrusted
    block = engine.preview().block
    assert f"[{auto.id}] fact · written 0s ago · untrusted · A web page" in block
    assert engine.inspect(user.id) is not None


def test_hard_deadline_is_not_moved_by_access():
    engine, clock = engine_at()
    view = engine.remember("Staging DB frozen until Friday.", ttl="30d", expires_at=3 * 86_400)
    for _ in range(5):
        clock.advance(86_400 / 2)
        engine.select_for_injection()  # touches: sliding renewal, but the deadline stays
    clock.set(3 * 86_400)
    assert engine.inspect(view.id) is None
    assert engine.audit()[0].reason == "expired"
    with pytest.raises(InvalidInput, match="pinned"):
        engine.remember("x", pin=True, expires_at=10**6)


def test_auto_expire_off_forgets_only_when_told():
    engine, clock = engine_at(Config(auto_expire=False))
    view = engine.remember("Keep me.", ttl=10)
    clock.advance(10**6)
    assert engine.sweep().forgotten == 0
    assert engine.inspect(view.id).status == "active"
    assert "Keep me." in engine.select_for_injection().block
    assert engine.forget(query="keep").count == 1


READS = {
    "inspect": lambda engine, view: engine.inspect(view.id),
    "touch": lambda engine, view: engine.touch(view.id),
    "recall": lambda engine, view: engine.recall("kettles"),
    "preview": lambda engine, view: engine.preview().items,
    "select": lambda engine, view: engine.select_for_injection().items,
    "plugs": lambda engine, view: engine.plugs(),
    "status": lambda engine, view: engine.status().counts["active"],
}


REVIVING_READS = {"touch", "recall"}  # a hit revives what is due but not yet swept (seed §5.3)


@pytest.mark.parametrize("read", sorted(set(READS) - REVIVING_READS))
def test_expiry_is_enforced_on_every_read_path_without_a_sweep(read):
    engine, clock = engine_at()
    view = engine.remember("Short-lived fact about kettles.", ttl=10, curve="flat")
    clock.advance(11)
    assert not READS[read](engine, view)
    assert engine.audit()[0].item_id == view.id


@pytest.mark.parametrize("read", sorted(REVIVING_READS))
def test_a_hard_deadline_is_enforced_even_on_the_reads_that_revive(read):
    engine, clock = engine_at()
    view = engine.remember("Kettles are on sale until noon.", ttl=100, expires_at=10)
    clock.advance(11)
    assert not READS[read](engine, view)
    assert engine.audit()[0].item_id == view.id and engine.audit()[0].reason == "expired"


def test_recall_revives_stale_memories_and_stale_is_never_injected():
    engine, clock = engine_at()
    view = engine.remember("The wifi password hint is on the fridge.", ttl=100)
    clock.advance(50)  # ebbinghaus: exp(-1.5) ≈ 0.22 < 0.3
    assert engine.inspect(view.id).status == "stale"
    assert engine.preview().items == ()
    (hit,) = engine.recall("fridge")
    assert hit.id == view.id and hit.status == "active"
    assert engine.preview().items[0]["id"] == view.id


def test_forget_selectors_and_idempotence():
    engine, _ = engine_at()
    a = engine.remember("Alpha release notes.", tags=["Release", " Notes "])
    b = engine.remember("Beta plan.", tags=["plan"])
    pinned = engine.remember("Pinned rule.", pin=True)
    assert engine.inspect(a.id).tags == ("release", "notes")
    assert engine.forget(tags=["notes"]).ids == (a.id,)
    assert engine.forget(a.id).count == 0  # deleting twice is a no-op
    assert len(engine.audit()) == 1
    with pytest.raises(InvalidInput):
        engine.forget()
    with pytest.raises(InvalidInput, match="confirm"):
        engine.forget(all=True)
    assert set(engine.forget(all=True, confirm=True).ids) == {b.id, pinned.id}


def test_restorable_round_trip_and_privacy_default():
    engine, _ = engine_at(Config(restorable=True))
    view = engine.remember("Mum's birthday is 12 May.", ttl="7d", kind="fact", tags=["family"])
    engine.forget(view.id)
    assert engine.audit()[0].content == "Mum's birthday is 12 May."
    restored = engine.restore(view.id)
    assert restored.id != view.id and restored.content == view.content and restored.ttl == 7 * 86_400
    assert engine.audit()[0].reason == "restored" and engine.audit()[0].restored_from == view.id
    with pytest.raises(NotRestorable, match="already restored"):
        engine.restore(view.id)
    private, _ = engine_at()
    gone = private.remember("Secret-free but private note.")
    private.forget(gone.id)
    assert private.audit()[0].content is None
    with pytest.raises(NotRestorable):
        private.restore(gone.id)


def test_audit_retention_prunes_old_entries():
    engine, clock = engine_at(Config(audit_retention="1d"))
    engine.forget(engine.remember("old").id)
    clock.advance(2 * 86_400)
    engine.forget(engine.remember("new").id)
    result = engine.sweep()
    assert result.audit_pruned == 1 and len(engine.audit()) == 1


def test_events_carry_small_json_payloads():
    engine, _ = engine_at()
    seen: list[tuple[str, dict]] = []
    for name in ("written", "forgotten", "injected", "touched"):
        engine.on(name, lambda payload, name=name: seen.append((name, payload)))
    view = engine.remember("Lunch is at noon.", ttl=60, key="lunch")
    engine.select_for_injection()
    engine.forget(view.id)
    kinds = [name for name, _ in seen]
    assert kinds == ["written", "touched", "injected", "forgotten"]
    written = seen[0][1]
    assert {
        "id",
        "content",
        "ttl",
        "curve",
        "strength",
        "key",
        "scope",
        "owner_id",
        "source",
        "tokens",
    } <= set(written)
    assert set(seen[3][1]) >= {"id", "reason", "content_hash", "at"} and "content" not in seen[3][1]
    json.dumps(seen)
    unsubscribe = engine.on("written", lambda payload: seen.append(("again", payload)))
    unsubscribe()
    engine.remember("Another.")
    assert seen[-1][0] == "written"


def test_bad_input_is_one_line_and_names_the_field():
    engine, _ = engine_at()
    cases = [
        ({"content": ""}, "content"),
        ({"content": "x" * 3000}, "max_item_bytes"),
        ({"content": "x", "kind": "rumour"}, "kind"),
        ({"content": "x", "ttl": "soon"}, "ttl"),
        ({"content": "x", "ttl": None}, "ttl"),
        ({"content": "x", "scope": "session"}, "owner_id"),
        ({"content": "x", "tags": [1]}, "tags"),
    ]
    for kwargs, field in cases:
        with pytest.raises(InvalidInput) as error:
            engine.remember(**kwargs)
        message = str(error.value)
        assert field in message and "\n" not in message
    assert engine.plugs() == []


def test_audit_hash_is_standard_hmac_sha256_with_the_store_secret():
    import hmac

    from amnesia import InMemoryStore

    store = InMemoryStore(secret=b"s" * 32)
    engine = Amnesia(store=store, clock=SimulatedClock(0))
    engine.forget(engine.remember("Call Ana on +34 600 000 000.").id)
    expected = hmac.digest(b"s" * 32, b"Call Ana on +34 600 000 000.", "sha256").hex()
    assert engine.audit()[0].content_hash == expected


def test_seeded_ids_and_secret_make_event_streams_identical_across_runs():
    from amnesia import InMemoryStore

    def run() -> str:
        clock = SimulatedClock(0)
        counter = itertools.count()
        engine = Amnesia(
            store=InMemoryStore(secret=b"fixed" * 8),
            clock=clock,
            config=Config(renew_on_inject="used"),
            id_factory=lambda: f"m-{next(counter):04d}",
        )
        events: list = []
        for name in ("written", "forgotten", "injected", "touched"):
            engine.on(name, lambda payload, name=name: events.append((name, payload)))
        for day in range(6):
            engine.remember(
                f"Day {day}: the drink is {['oolong', 'sencha'][day % 2]}.", ttl="2d", key="drink"
            )
            injection = engine.select_for_injection(60)
            engine.report_answer(injection, "sencha", question="Which drink?")
            clock.advance(86_400 * 0.7)
            engine.sweep()
        return json.dumps(events, sort_keys=True)

    assert run() == run()


def test_audit_and_verify_see_an_item_that_expired_since_the_last_read():
    clock = SimulatedClock(0)
    engine = Amnesia(clock=clock)
    engine.remember("The door code is the blue one.", ttl=10, curve="flat")
    clock.advance(11)
    assert [entry.reason for entry in engine.audit()] == ["expired"]
    assert len(engine.verify("The door code is the blue one.")) == 1


def test_forget_all_with_a_scope_filter_forgets_only_that_scope():
    engine = Amnesia(clock=SimulatedClock(0))
    engine.remember("Workspace fact stays.", ttl="1d")
    engine.remember("Scratch note one.", ttl="1d", scope="session", owner_id="s1")
    engine.remember("Scratch note two.", ttl="1d", scope="session", owner_id="s2")
    summary = engine.forget(all=True, confirm=True, scope="session", owner_id="s1")
    assert summary.count == 1
    assert sorted(view.content for view in engine.plugs()) == ["Scratch note two.", "Workspace fact stays."]
