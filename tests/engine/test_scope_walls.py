"""Scope walls on every in-process surface: an agent audits, restores and forgets only what it could recall.

Three kinds of caller reach the store through the model tools (`AgentSession.call_tool`): the main agent
outside any session (the workspace), the main agent in session s1 (the workspace and s1) and the sub-agent s2
(only s2). Four memories sit in the workspace and in sessions s1, s2 and s3, each with a unique marker; the
JSON a caller gets back is scanned as raw text for the markers of the memories it could not recall."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amnesia import Amnesia, Config, InMemoryStore, SimulatedClock
from amnesia.caller import Caller
from amnesia.errors import InvalidInput, NotFound
from amnesia.host import AgentSession

PLACES = {  # memory name -> (scope, owner)
    "workspace": ("workspace", None),
    "s1": ("session", "s1"),
    "s2": ("session", "s2"),
    "s3": ("session", "s3"),
}
CALLERS = {  # caller kind -> the memories it could recall
    "main": {"workspace"},
    "main-in-session": {"workspace", "s1"},
    "sub-agent": {"s2"},
}


def marker(name: str) -> str:
    return f"harbor note {name}-marker"


def make_engine(**config: object) -> Amnesia:
    counter = itertools.count()
    return Amnesia(
        store=InMemoryStore(secret=b"w" * 32),
        config=Config(**{"restorable": True} | config),
        clock=SimulatedClock(1_000.0),
        id_factory=lambda: f"m-{next(counter):012x}",
    )


def write_all(engine: Amnesia) -> dict[str, str]:
    """One memory per place, all matching the query "harbor" and the tag "mark"; returns name -> id."""
    return {
        name: engine.remember(
            marker(name), ttl="7d", tags=["mark"], key=f"k-{name}", scope=scope, owner_id=owner
        ).id
        for name, (scope, owner) in PLACES.items()
    }


def agent_for(engine: Amnesia, kind: str) -> AgentSession:
    main = AgentSession(engine, "s1" if kind == "main-in-session" else None)
    return main.subagent("s2") if kind == "sub-agent" else main


def tool(agent: AgentSession, name: str, arguments: dict[str, object]) -> tuple[dict, str]:
    text = agent.call_tool(name, arguments)
    return json.loads(text), text


def assert_only(text: str, allowed: set[str]) -> None:
    """No marker of a memory outside `allowed` anywhere in `text`."""
    leaked = [name for name in PLACES if name not in allowed and f"{name}-marker" in text]
    assert not leaked, (leaked, text[:300])


@pytest.mark.parametrize("kind", sorted(CALLERS))
def test_audit_and_status_show_only_what_the_caller_could_recall(kind: str) -> None:
    engine = make_engine()
    ids = write_all(engine)
    engine.forget(all=True, confirm=True)  # the operator forgets everything: four audit entries
    agent = agent_for(engine, kind)
    seen = CALLERS[kind]

    audit, text = tool(agent, "amnesia_audit", {"limit": 50})
    assert {entry["item_id"] for entry in audit["entries"]} == {ids[name] for name in seen}
    assert_only(text, seen)
    # restorable mode is on and the caller owns these: their content is there
    assert {entry["content"] for entry in audit["entries"]} == {marker(name) for name in seen}

    status, text = tool(agent, "amnesia_status", {})
    assert {forget["id"] for forget in status["recent_forgets"]} == {ids[name] for name in seen}
    assert_only(text, seen)


@pytest.mark.parametrize("kind", sorted(CALLERS))
def test_restore_reaches_only_what_the_caller_could_recall(kind: str) -> None:
    engine = make_engine()
    ids = write_all(engine)
    engine.forget(all=True, confirm=True)
    agent = agent_for(engine, kind)
    unknown, _ = tool(agent, "amnesia_restore", {"id": "m-ffffffffffff"})
    for name, item_id in ids.items():
        result, text = tool(agent, "amnesia_restore", {"id": item_id})
        if name in CALLERS[kind]:
            assert result["content"] == marker(name)
        else:  # answered as an unknown id would be: nothing restored, nothing revealed
            assert result == {"rejected": unknown["rejected"].replace("m-ffffffffffff", item_id)}
            assert_only(text, set())
    live = {view.content for view in engine.plugs()}
    assert live == {marker(name) for name in CALLERS[kind]}


FORGETS = {
    "id": None,  # one call per memory, by its id
    "query": {"query": "harbor"},
    "tags": {"tags": ["mark"]},
    "all": {"all": True, "confirm": True},
}


@pytest.mark.parametrize("how", sorted(FORGETS))
@pytest.mark.parametrize("kind", sorted(CALLERS))
def test_forget_removes_only_what_the_caller_could_recall(kind: str, how: str) -> None:
    engine = make_engine()
    ids = write_all(engine)
    agent = agent_for(engine, kind)
    calls = [{"id": item_id} for item_id in ids.values()] if FORGETS[how] is None else [FORGETS[how]]
    forgotten: list[str] = []
    for arguments in calls:
        result, text = tool(agent, "amnesia_forget", arguments)
        forgotten += result["ids"]
        assert_only(text, CALLERS[kind])
    assert sorted(forgotten) == sorted(ids[name] for name in CALLERS[kind])
    live = {view.content for view in engine.plugs()}
    assert live == {marker(name) for name in PLACES if name not in CALLERS[kind]}


@pytest.mark.parametrize("kind", sorted(CALLERS))
def test_forget_by_key_keeps_to_the_caller(kind: str) -> None:
    """The tools have no key filter; the engine's `forget(key=...)` takes the same Caller."""
    engine = make_engine()
    ids = write_all(engine)
    caller = {"main": Caller(), "main-in-session": Caller("s1"), "sub-agent": Caller("s2", False)}[kind]
    forgotten = [item_id for name in PLACES for item_id in engine.forget(key=f"k-{name}", caller=caller).ids]
    assert sorted(forgotten) == sorted(ids[name] for name in CALLERS[kind])


def test_without_restorable_mode_no_audit_shows_content_even_kept_from_before() -> None:
    """Content kept while restorable mode was on is not shown once it is off (the operator's own
    `engine.audit()` still returns what the store holds)."""
    store = InMemoryStore(secret=b"w" * 32)
    restorable = Amnesia(store=store, config=Config(restorable=True), clock=SimulatedClock(1_000.0))
    write_all(restorable)
    restorable.forget(all=True, confirm=True)
    engine = Amnesia(store=store, config=Config(restorable=False), clock=SimulatedClock(1_000.0))
    for kind in CALLERS:
        agent = agent_for(engine, kind)
        audit, text = tool(agent, "amnesia_audit", {"limit": 50})
        assert len(audit["entries"]) == len(CALLERS[kind])
        assert all(entry["content"] is None and entry["restore_fields"] is None for entry in audit["entries"])
        assert_only(text, set())
    assert {entry.content for entry in engine.audit()} == {marker(name) for name in PLACES}


def test_a_sub_agent_caller_needs_a_session() -> None:
    with pytest.raises(InvalidInput, match=r"^owner_id: a sub-agent needs its own session id$"):
        Caller(None, include_workspace=False)


OWNERS = ["a", "b", "c"]
PLACE = st.one_of(
    st.just(("workspace", None)), st.tuples(st.sampled_from(["session", "team"]), st.sampled_from(OWNERS))
)
CALLER = st.one_of(
    st.builds(Caller, st.none() | st.sampled_from(OWNERS)),
    st.builds(Caller, st.sampled_from(OWNERS), st.just(False)),
    st.builds(Caller, st.sampled_from(OWNERS), st.just(False), st.sampled_from(OWNERS)),  # a team agent
)


@settings(max_examples=40, deadline=None)
@given(places=st.lists(PLACE, min_size=1, max_size=8), caller=CALLER, page_filler=st.integers(0, 30))
def test_audit_restore_and_forget_reach_exactly_what_recall_reaches(
    places: list[tuple[str, str | None]], caller: Caller, page_filler: int
) -> None:
    """For any store and any caller: the ids recall finds are the ids audit lists after they are forgotten,
    the ids restore accepts, and (live again) the ids forget-all removes. `page_filler` forgets of another
    owner's memories come after, so the caller's entries sit beyond the first page the store returns."""
    engine = make_engine(max_store_bytes=1 << 20)
    ids = [
        engine.remember(f"harbor item {n}", ttl="7d", scope=scope, owner_id=owner).id
        for n, (scope, owner) in enumerate(places)
    ]
    recalled = {
        view.id
        for view in engine.recall(
            "harbor",
            owner_id=caller.owner_id,
            include_workspace=caller.include_workspace,
            team_id=caller.team_id,
            limit=None,
        )
    }
    engine.forget(all=True, confirm=True)
    for n in range(page_filler):
        engine.remember(f"filler {n}", ttl="7d", scope="session", owner_id="elsewhere")
    engine.forget(all=True, confirm=True)

    audited = {entry.item_id for entry in engine.audit(limit=len(ids), caller=caller)}
    assert audited == recalled
    restored = set()
    for item_id in ids:
        try:
            engine.restore(item_id, caller)
        except NotFound:
            continue
        restored.add(item_id)
    assert restored == recalled
    assert len(engine.forget(all=True, confirm=True, caller=caller).ids) == len(recalled)
    assert len(engine.plugs()) == 0


@pytest.mark.parametrize("kind", sorted(CALLERS))
def test_a_recall_revives_only_what_the_caller_could_recall(kind: str) -> None:
    """Seed §5.3 revival through the tool: every memory is due but unswept; the caller's recall brings back
    its own and reveals nothing else; what it could not see is forgotten by the same call."""
    engine = make_engine()
    ids = write_all(engine)
    engine.clock.advance(8 * 86_400)  # past every ttl: all due, none swept
    result, text = tool(agent_for(engine, kind), "amnesia_recall", {"query": "harbor", "limit": 20})
    assert {item["id"] for item in result["items"]} == {ids[name] for name in CALLERS[kind]}
    assert all(item["status"] == "active" for item in result["items"])
    assert_only(text, CALLERS[kind])
    assert {view.content for view in engine.plugs()} == {marker(name) for name in CALLERS[kind]}
