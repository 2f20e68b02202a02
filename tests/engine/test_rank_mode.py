"""decay_mode="rank" (mem0 platform's decay): strength orders the injection; time alone never hides or
forgets."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amnesia import Amnesia, Config, SimulatedClock
from amnesia.errors import InvalidInput
from amnesia.tokens import count_tokens

RANK = Config(decay_mode="rank", max_store_bytes=10**7, max_injected_tokens=100_000)

memory = st.fixed_dictionaries(
    {
        "curve": st.sampled_from(["flat", "linear", "ebbinghaus"]),
        "ttl": st.floats(min_value=1.0, max_value=1e6),
        "pin": st.booleans(),
        "advance": st.floats(min_value=0.0, max_value=1e6),
    }
)


def engine_with(memories, config: Config = RANK) -> tuple[Amnesia, SimulatedClock]:
    clock = SimulatedClock(0.0)
    counter = itertools.count()
    engine = Amnesia(config=config, clock=clock, id_factory=lambda: f"m-{next(counter):04d}")
    for index, spec in enumerate(memories):
        engine.remember(
            f"Fact number {index} about the kettle.", ttl=spec["ttl"], pin=spec["pin"], curve=spec["curve"]
        )
        clock.advance(spec["advance"])
    return engine, clock


@settings(max_examples=80, deadline=None)
@given(
    st.lists(memory, min_size=1, max_size=12), st.lists(st.floats(min_value=0.0, max_value=1e8), max_size=4)
)
def test_time_alone_never_forgets_or_hides(memories, waits):
    engine, clock = engine_with(
        memories, Config(decay_mode="rank", renew_on_inject="none", max_store_bytes=10**7)
    )
    for wait in waits:
        clock.advance(wait)
        assert engine.sweep().forgotten == 0
        assert len(engine.plugs()) == len(memories)
        assert all(plug.status == "active" for plug in engine.plugs())
        assert engine.preview(100_000).excluded["stale"] == 0
        assert engine.status().counts["stale"] == 0
    assert len(engine.preview(100_000).items) == len(memories)  # a big enough budget takes every one
    assert engine.audit() == []


@settings(max_examples=80, deadline=None)
@given(st.lists(memory, min_size=1, max_size=12), st.floats(min_value=0.0, max_value=1e7))
def test_injection_order_follows_decayed_strength(memories, wait):
    engine, clock = engine_with(memories)
    clock.advance(wait)
    plan = engine.preview()
    strengths = [engine.inspect(ref["id"]).strength for ref in plan.items]
    pinned = [engine.inspect(ref["id"]).pinned for ref in plan.items]
    assert pinned == sorted(pinned, reverse=True)  # pinned first
    unpinned = [s for s, pin in zip(strengths, pinned, strict=True) if not pin]
    assert unpinned == sorted(unpinned, reverse=True)
    lines = plan.block.splitlines()[1:]
    for line, decision in zip(lines, [d for d in plan.decisions if d.decision == "injected"], strict=True):
        assert "expires in" not in line  # no line carries an expiry hint (like for like with full memory)
        assert count_tokens(line) == decision.tokens  # the planned cost is the rendered line's


def test_decay_outlives_the_ttl_and_reranks():
    engine, clock = engine_with([])
    old = engine.remember("The old office is on floor three.", ttl=100)
    clock.advance(250)  # 2.5 ttl idle: forget mode would have deleted it
    new = engine.remember("The new office is on floor five.", ttl=100)
    detail = engine.inspect(old.id)
    assert detail.strength == pytest.approx(math.exp(-7.5)) and detail.status == "active"
    assert detail.expires_at is None and detail.stale_at is None
    assert [ref["id"] for ref in engine.select_for_injection().items] == [new.id, old.id]


def test_hard_deadline_still_forgets_in_rank_mode():
    engine, clock = engine_with([])
    kept = engine.remember("Lunch is at noon.", ttl=10)
    frozen = engine.remember("The release is frozen.", ttl=10, expires_at=50.0)
    assert engine.inspect(frozen.id).expires_at == 50.0
    clock.advance(50)
    assert engine.inspect(frozen.id) is None
    assert [entry.reason for entry in engine.audit()] == ["expired"]
    assert engine.inspect(kept.id) is not None


def test_rank_mode_with_auto_expire_off_does_not_decay():
    engine, clock = engine_with([], Config(decay_mode="rank", auto_expire=False))
    view = engine.remember("Answer in French.", ttl=10)
    clock.advance(1e6)
    assert engine.inspect(view.id).strength == 1.0


def test_decay_mode_is_validated(tmp_path):
    with pytest.raises(InvalidInput, match=r"decay_mode: expected forget\|rank, got 'rerank'"):
        Config(decay_mode="rerank")
    path = tmp_path / "amnesia.yaml"
    path.write_text("default_ttl: 1d\ndecay_mode: never\n")
    with pytest.raises(InvalidInput, match=r"amnesia\.yaml:2: decay_mode"):
        Config.from_file(path)
    assert Config.from_env({"AMNESIA_DECAY_MODE": "rank"}).decay_mode == "rank"
