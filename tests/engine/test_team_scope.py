"""Seed §6.10 team scope: a team agent (teammate) sees its own session's memories and its team's, which every
member of that team shares; no other team, sub-agent or the main agent sees them; disposing the team unplugs
them (audited `agent-disposed`) and, in a SQLite store, leaves nothing of them in any file of the folder.

Every surface is checked through the model tools (`AgentSession.call_tool`) and the injected block, scanning
the raw JSON/text for markers of memories the caller must not reach."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amnesia import Amnesia, Config, InMemoryStore, SimulatedClock, SQLiteStore
from amnesia.caller import Caller
from amnesia.errors import InvalidInput
from amnesia.host import AgentSession
from amnesia.stores.forensics import content_keys, scan
from amnesia.tools import TOOLS


def make_engine(store: InMemoryStore | SQLiteStore | None = None) -> Amnesia:
    counter = itertools.count()
    return Amnesia(
        store=store if store is not None else InMemoryStore(secret=b"t" * 32),
        config=Config(restorable=True),
        clock=SimulatedClock(1_000.0),
        id_factory=lambda: f"m-{next(counter):012x}",
    )


def call(agent: AgentSession, name: str, **arguments: object) -> tuple[dict, str]:
    text = agent.call_tool(name, arguments)
    return json.loads(text), text


def test_the_tool_schema_takes_the_team_scope_on_remember_and_forget() -> None:
    schemas = {tool["function"]["name"]: tool["function"]["parameters"]["properties"] for tool in TOOLS}
    assert "team" in schemas["amnesia_remember"]["scope"]["enum"]
    assert "team" in schemas["amnesia_forget"]["scope"]["enum"]


def test_teammates_share_team_memories_that_no_one_else_reaches_until_the_team_is_disposed() -> None:
    engine = make_engine()
    with AgentSession(engine, "t1") as lead:  # the lead's session shares its name with the team: no matter
        red = lead.team("t1")
        with red.member("alice") as alice:
            written, _ = call(alice, "amnesia_remember", content="harbor code is RED-7731", ttl="7d")
            assert (written["scope"], written["owner_id"]) == ("team", "t1")  # the team agent's default
            scratch, _ = call(alice, "amnesia_remember", content="harbor scratch ALICE-1", scope="session")
            refused, _ = call(alice, "amnesia_remember", content="harbor x", scope="workspace")
            assert refused["field"] == "scope"
        bob = red.member("bob")
        assert "RED-7731" in bob.before_step(query="harbor code")  # alice has left; the team's note stays
        assert "ALICE-1" not in bob.before_step()  # alice's own session went with her
        blue = lead.team("t2").member("carol")
        outsiders = [lead, lead.subagent("alice"), blue, AgentSession(engine, "t1"), AgentSession(engine)]
        for outsider in outsiders:
            assert "RED-7731" not in outsider.before_step(query="harbor code")
            for name, arguments in [
                ("amnesia_recall", {"query": "harbor"}),
                ("amnesia_preview", {}),
                ("amnesia_forget", {"id": written["id"]}),
                ("amnesia_remember", {"content": "harbor code is BLUE-1", "scope": "team"}),
            ]:
                result, text = call(outsider, name, **arguments)
                assert "RED-7731" not in text and result.get("count", 0) == 0, (name, text)
        assert engine.inspect(written["id"]) is not None
        assert {e["item_id"] for e in call(bob, "amnesia_audit")[0]["entries"]} == set()
        disposed = red.end()
        assert disposed.ids == (written["id"],) and disposed.reason == "agent-disposed"
        assert bob.ended and red.end() is None
        assert engine.inspect(written["id"]) is None
        with lead.team("t1") as again, again.member("dave") as dave:  # a new team of the same name
            assert call(dave, "amnesia_recall", query="harbor")[0]["count"] == 0
            audit, text = call(dave, "amnesia_audit")  # the disposal is the team's: its members see it
            assert [entry["reason"] for entry in audit["entries"]] == ["agent-disposed"]
            assert scratch["id"] not in text


def test_team_memories_are_forgotten_by_scope_and_promoted_out_of_the_team() -> None:
    engine = make_engine()
    with AgentSession(engine) as lead, lead.team("t1") as team:
        member = team.member("m1")
        kept, _ = call(member, "amnesia_remember", content="harbor keeps KEEP-1", ttl="7d")
        call(member, "amnesia_remember", content="harbor scratch SCRATCH-2", ttl="7d", scope="session")
        gone, _ = call(member, "amnesia_forget", query="harbor", scope="session")
        assert gone["count"] == 1
        engine.promote(kept["id"])  # the lead's host promotes a finding: it outlives the team
    assert engine.inspect(kept["id"]).scope == "workspace"
    assert "KEEP-1" in AgentSession(engine).before_step()


def test_a_team_needs_a_name_and_a_member_a_free_session() -> None:
    engine = make_engine()
    with AgentSession(engine, "s1") as lead:
        with pytest.raises(InvalidInput, match=r"^team_id: expected a non-empty string"):
            lead.team(" ")
        team = lead.team("t1")
        with pytest.raises(InvalidInput, match=r"^team_id: team 't1' is already running$"):
            lead.team("t1")
        team.member("m1")
        for taken in ("s1", "m1"):
            with pytest.raises(InvalidInput, match=r"^owner_id: '.+' is already in use"):
                team.member(taken)
    assert team.ended
    with pytest.raises(InvalidInput, match=r"^member: team 't1' has been disposed$"):
        team.member("m2")


NAMES = ["a", "b"]
PLACE = st.one_of(
    st.just(("workspace", None)), st.tuples(st.sampled_from(["session", "team"]), st.sampled_from(NAMES))
)
CALLER = st.one_of(
    st.builds(Caller, st.none() | st.sampled_from(NAMES)),  # the main agent
    st.builds(Caller, st.sampled_from(NAMES), st.just(False)),  # a sub-agent
    st.builds(Caller, st.sampled_from(NAMES), st.just(False), st.sampled_from(NAMES)),  # a team agent
)


def reaches(caller: Caller, scope: str, owner: str | None) -> bool:
    """The seed's rule, written out apart from the engine's: the workspace for the main agent; a session
    for its own agent; a team for its members."""
    if scope == "workspace":
        return caller.include_workspace
    return owner == (caller.team_id if scope == "team" else caller.owner_id)


@settings(max_examples=40, deadline=None)
@given(places=st.lists(PLACE, min_size=1, max_size=8), caller=CALLER)
def test_no_caller_reaches_a_memory_of_another_team_or_session(
    places: list[tuple[str, str | None]], caller: Caller
) -> None:
    """For any store and any caller: recall, the injected block, the preview and forget-all through the tools
    reach exactly the memories the seed's rule gives that caller."""
    engine = make_engine()
    ids = {
        engine.remember(f"harbor item {n} M{n}M", ttl="7d", scope=scope, owner_id=owner).id: n
        for n, (scope, owner) in enumerate(places)
    }
    allowed = {item_id for item_id, n in ids.items() if reaches(caller, *places[n])}
    agent = AgentSession(
        engine, caller.owner_id, include_workspace=caller.include_workspace, team_id=caller.team_id
    )
    recalled, _ = call(agent, "amnesia_recall", query="harbor", limit=20)
    assert {item["id"] for item in recalled["items"]} == allowed
    block = agent.before_step()
    assert {item_id for item_id, n in ids.items() if f"M{n}M" in block} == allowed
    preview, _ = call(agent, "amnesia_preview")
    assert {entry["id"] for entry in preview["items"]} == allowed
    forgotten, _ = call(agent, "amnesia_forget", all=True, confirm=True)
    assert set(forgotten["ids"]) == allowed
    assert {view.id for view in engine.plugs()} == set(ids) - allowed


def test_a_disposed_team_leaves_nothing_in_any_file_of_the_store_folder(tmp_path: Path) -> None:
    """Raw bytes of every file in the folder: neither the team's texts nor the keys they were sealed under;
    the workspace memory and the other team's, still live, keep their keys there."""
    db = tmp_path / "memory.db"
    engine = make_engine(SQLiteStore(db, secret=b"k" * 32))
    markers: dict[str, str] = {}
    lead = AgentSession(engine)  # still running at the end: team t2 is not disposed
    markers[engine.remember("harbor workspace WSMARK01", ttl="7d").id] = "WSMARK01"
    other = lead.team("t2")
    with lead.team("t1") as team:
        for member, marker in [("m1", "TMMARK01"), ("m2", "TMMARK02"), ("m1b", "TMMARK03")]:
            with team.member(member) as agent:
                written, _ = call(agent, "amnesia_remember", content=f"harbor {marker}", ttl="7d")
                markers[written["id"]] = marker
        written, _ = call(other.member("m9"), "amnesia_remember", content="harbor OTMARK01")
        markers[written["id"]] = "OTMARK01"
        keys = content_keys(db)
    live = {view.id for view in engine.plugs()}
    engine.close()
    disposed = {item_id for item_id, marker in markers.items() if marker.startswith("TM")}
    assert live == set(markers) - disposed and len(disposed) == 3
    blobs = [(path.name, path.read_bytes()) for path in sorted(tmp_path.iterdir()) if path.is_file()]
    needles = {f"{i} text": markers[i].encode() for i in disposed} | {f"{i} key": keys[i] for i in disposed}
    assert scan(db, needles, blobs).found == {}
    assert len(scan(db, {i: keys[i] for i in live}, blobs).found) == len(live)  # the scan sees what is there
