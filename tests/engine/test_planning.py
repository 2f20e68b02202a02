"""A small store's selection is planned in plain Python (amnesia.planning._plan_small): it must choose, order,
explain and count exactly what the numpy planning does on the same store."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from amnesia import Amnesia, Config, SimulatedClock, planning

write = st.fixed_dictionaries(
    {
        "words": st.integers(min_value=1, max_value=40),
        "ttl": st.sampled_from([None, 600.0, 3600.0, 86_400.0, 7 * 86_400.0]),
        "kind": st.sampled_from(["fact", "preference", "episode"]),
        "session": st.sampled_from([None, "s1", "s2"]),
        "source": st.sampled_from(["user", "auto"]),
        "wait": st.floats(min_value=0, max_value=3 * 86_400.0),
        "touch": st.booleans(),
    }
)


@settings(max_examples=120, deadline=None)
@given(
    writes=st.lists(write, min_size=0, max_size=planning.SMALL_STORE),
    budget=st.integers(min_value=0, max_value=600),
    owner=st.sampled_from([None, "s1", "s3"]),
    include_workspace=st.booleans(),
    curve=st.sampled_from(["ebbinghaus", "linear", "flat"]),
    auto_expire=st.booleans(),
)
def test_a_small_store_is_planned_as_the_numpy_planning_plans_it(
    writes, budget, owner, include_workspace, curve, auto_expire
):
    clock = SimulatedClock(0.0)
    counter = itertools.count()
    config = Config(default_curve=curve, auto_expire=auto_expire, max_injected_tokens=budget)
    engine = Amnesia(config=config, clock=clock, id_factory=lambda: f"m-{next(counter):04d}")
    for number, spec in enumerate(writes):
        engine.remember(
            f"fact {number} " + "word " * spec["words"],
            kind=spec["kind"],
            ttl=spec["ttl"],
            pin=spec["ttl"] is None,
            scope="workspace" if spec["session"] is None else "session",
            owner_id=spec["session"],
            source=spec["source"] if spec["ttl"] is not None else "user",  # auto cannot be pinned
        )
        clock.advance(spec["wait"])
        if spec["touch"]:
            engine.select_for_injection(budget)  # renews what it injects: anchors and strengths differ
    engine.sweep()
    index, now = engine._index, clock.now()
    strengths = index.strengths(now)
    small = planning.plan_injection(index, strengths, budget, owner, include_workspace, now)
    original = planning.SMALL_STORE
    planning.SMALL_STORE = -1  # every store takes the numpy planning
    try:
        vectorised = planning.plan_injection(index, strengths, budget, owner, include_workspace, now)
    finally:
        planning.SMALL_STORE = original
    assert small == vectorised
