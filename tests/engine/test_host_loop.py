"""amnesia.host: the seed 000 lifecycle as a context manager, and the example that drives a chat endpoint
with it (run as a script against the local stub server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amnesia import Amnesia, Config, InMemoryStore, SimulatedClock, SQLiteStore
from amnesia.errors import InvalidInput
from amnesia.host import AgentSession
from amnesia.tools import TOOLS
from runners.models.stub_server import Reply, StubServer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "host_loop_openai.py"


def make_engine(**config: Any) -> tuple[Amnesia, SimulatedClock]:
    clock = SimulatedClock(10_000.0)
    return Amnesia(store=InMemoryStore(), config=Config(**config), clock=clock), clock


def remember_tool(agent: AgentSession, **arguments: Any) -> str:
    result = json.loads(agent.call_tool("amnesia_remember", arguments))
    assert "error" not in result, result
    return result["id"]


def test_a_step_injects_the_block_and_the_turn_end_sweeps() -> None:
    engine, clock = make_engine()
    drink = engine.remember("The verification drink is oolong.", ttl="1h").id
    with AgentSession(engine) as agent:
        expected = engine.preview().block
        block = agent.before_step(query="What is the verification drink?")
        assert block == expected and "oolong" in block
        assert agent.after_step("Oolong.") == []  # renew_on_inject="full": the injection already renewed it
        clock.advance(2 * 3600)
        swept = agent.end_turn()
        assert swept.ids == (drink,)
        assert agent.before_step() == ""  # nothing live: an empty block, nothing to inject


def test_a_subagent_sees_only_its_session_and_is_disposed_even_on_error() -> None:
    engine, _ = make_engine()
    workspace = engine.remember("Deploys freeze on Friday.", ttl="7d").id
    with AgentSession(engine) as agent:
        with pytest.raises(RuntimeError, match="model crashed"), agent.subagent("s1") as sub:
            note = remember_tool(sub, content="Scratch: plan B is cheaper.", ttl="1h")
            assert engine.inspect(note).scope == "session"
            block = sub.before_step()
            assert "plan B" in block and "Deploys" not in block
            raise RuntimeError("model crashed")
        assert sub.ended
        assert [plug.id for plug in engine.plugs()] == [workspace]
        assert [(e.item_id, e.reason) for e in engine.audit()] == [(note, "agent-disposed")]
        with pytest.raises(InvalidInput, match=r"^before_step: agent 's1' has ended$"):
            sub.before_step()


def test_leaving_the_main_agent_disposes_open_subagents_and_its_session_but_not_the_workspace() -> None:
    engine, _ = make_engine()
    with AgentSession(engine, owner_id="task-7") as agent:
        kept = remember_tool(agent, content="The user prefers French.", ttl="30d")
        session_note = remember_tool(agent, content="This task edits the billing page.", scope="session")
        sub = agent.subagent("s2")  # never entered as a context manager: the parent still disposes it
        sub_note = remember_tool(sub, content="Checked the invoice totals.", ttl="1h")
        promoted = remember_tool(sub, content="The billing page uses the v2 API.", ttl="1h")
        engine.promote(promoted)
    assert sub.ended and agent.ended
    assert {plug.id for plug in engine.plugs()} == {kept, promoted}
    assert {e.item_id for e in engine.audit() if e.reason == "agent-disposed"} == {session_note, sub_note}
    assert agent.end() is None  # ending twice does nothing


def test_after_step_reports_the_answer_with_the_query_as_the_question() -> None:
    """With renew_on_inject="used", a memory counts as used only through terms the question did not bring."""
    engine, clock = make_engine(renew_on_inject="used")
    drink = engine.remember("The verification drink is oolong.", ttl="1h").id
    engine.remember("The staging database is db-stage-3.", ttl="1h")
    with AgentSession(engine) as agent:
        agent.before_step(query="Is the verification drink oolong?")
        clock.advance(60)
        assert agent.after_step("Yes, oolong.") == []  # "oolong" came from the question
        agent.before_step(query="What is the verification drink?")
        clock.advance(60)
        assert agent.after_step("It is oolong.") == [drink]
        assert engine.inspect(drink).last_accessed_at == clock.now()
        with pytest.raises(InvalidInput, match=r"^after_step: no before_step to report on"):
            agent.after_step("again")


@pytest.mark.parametrize("order", ["strength", "relevance"])
def test_the_query_ranks_the_block_in_the_relevance_order(order: str) -> None:
    engine, clock = make_engine(injection_order=order, renew_on_inject="none")
    drink = engine.remember("The verification drink is oolong.", ttl="30d").id
    clock.advance(86_400)  # the drink memory is now the weakest
    engine.remember("The deploy rota changes every Monday.", ttl="30d")
    engine.remember("Lunch with the design team is on Thursday.", ttl="30d")
    with AgentSession(engine, budget_tokens=60) as agent:  # room for one line
        block = agent.before_step(query="Which drink should I order?")
        assert (f"[{drink}]" in block) is (order == "relevance")
        assert f"[{drink}]" not in agent.before_step()  # no query: the strength order


def test_misuse_is_refused_in_one_line() -> None:
    engine, _ = make_engine()
    with AgentSession(engine) as agent:
        with pytest.raises(InvalidInput, match=r"^owner_id: a sub-agent needs its own session id$"):
            AgentSession(engine, include_workspace=False)
        first = agent.subagent("s1")
        with pytest.raises(InvalidInput, match=r"^owner_id: 's1' is already in use"):
            agent.subagent("s1")
        first.end()
        assert agent.subagent("s1") is not first  # an ended sub-agent's id may be used again
        refused = json.loads(agent.call_tool("amnesia_remember", {"content": ""}))
        assert refused == {"error": "content: must not be empty", "field": "content"}


sub_agent_actions = st.lists(
    st.one_of(
        st.tuples(
            st.just("remember"), st.sampled_from(["alpha", "beta", "gamma"]), st.sampled_from(["5m", "2h"])
        ),
        st.tuples(st.just("step"), st.sampled_from(["alpha", "nothing"])),
        st.tuples(st.just("advance"), st.sampled_from([60.0, 3600.0, 86_400.0])),
        st.tuples(st.just("forget_all")),
        st.tuples(st.just("workspace_write")),
    ),
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(sub_agent_actions)
def test_a_subagent_leaves_nothing_behind_and_never_touches_the_workspace(actions: list[tuple]) -> None:
    engine, clock = make_engine(renew_on_inject="used")
    pinned = {engine.remember(f"Pinned rule {n}.", pin=True).id for n in range(2)}
    with AgentSession(engine) as agent, agent.subagent("worker") as sub:
        for action in actions:
            if action[0] == "remember":
                sub.call_tool("amnesia_remember", {"content": f"Note {action[1]}.", "ttl": action[2]})
            elif action[0] == "step":
                sub.before_step(query="notes?")
                sub.after_step(f"Note {action[1]}.")
            elif action[0] == "advance":
                clock.advance(action[1])
            elif action[0] == "forget_all":
                sub.call_tool("amnesia_forget", {"all": True, "confirm": True})
            else:  # the model asks for a workspace write: a sub-agent is refused
                assert "error" in json.loads(
                    sub.call_tool("amnesia_remember", {"content": "x", "scope": "workspace"})
                )
            assert pinned <= {plug.id for plug in engine.plugs()}
    assert {plug.id for plug in engine.plugs()} == pinned
    assert all(entry.owner_id == "worker" for entry in engine.audit(limit=None))


def test_the_example_drives_a_chat_endpoint_with_memory_across_turns(tmp_path: Path) -> None:
    stub = StubServer().start()
    stub.script(
        tool_call_reply("amnesia_remember", {"content": "The staging database is db-stage-3.", "ttl": "7d"}),
        Reply(body=completion("Noted.")),
        Reply(),  # turn 2: the stub echoes the question
        tool_call_reply("amnesia_remember", {"content": "Scratch: compare plans A and B.", "ttl": "1h"}),
        Reply(),
    )
    db = tmp_path / "memory.db"
    turns = ["Remember for a week that the staging database is db-stage-3.", "Which staging database?"]
    done = run_example(stub, tmp_path, "--db", str(db), *turns, "--subtask", "Compare the plans.")
    assert done.returncode == 0, done.stderr
    assert (
        "assistant: Noted.\n" in done.stdout and "assistant: echo: Which staging database?\n" in done.stdout
    )
    first, tool_round, second, subtask, _ = stub.requests
    assert first["tools"] == TOOLS and "(No memories.)" in first["messages"][0]["content"]
    assert json.loads(tool_round["messages"][-1]["content"])["ttl"] == 7 * 86_400
    assert "AMNESIA MEMORY (1 item" in second["messages"][0]["content"]
    assert "db-stage-3" in second["messages"][0]["content"]  # carried over by the memory alone
    assert "(No memories.)" in subtask["messages"][0]["content"]  # a sub-agent does not see the workspace
    store = SQLiteStore(db)
    try:
        engine = Amnesia(store=store)
        assert [plug.content for plug in engine.plugs()] == ["The staging database is db-stage-3."]
        assert [entry.reason for entry in engine.audit()] == ["agent-disposed"]
    finally:
        store.close()


def test_the_example_reports_an_unreachable_endpoint_in_one_line(tmp_path: Path) -> None:
    stub = StubServer().start()
    stub.script(Reply(status=500, body={"error": "overloaded"}))
    done = run_example(stub, tmp_path, "Hello.")
    assert done.returncode == 1
    assert (
        done.stderr.startswith(f"error: {stub.base_url}: HTTPStatusError: ") and done.stderr.count("\n") == 1
    )


def run_example(stub: StubServer, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The example as a script against the stub (stopped afterwards), without the caller's AMNESIA_* vars."""
    kept = {name: value for name, value in os.environ.items() if not name.startswith("AMNESIA_")}
    try:
        return subprocess.run(
            [sys.executable, str(EXAMPLE), "--base-url", stub.base_url, "--model", "stub", *args],
            env=kept | {"PYTHONPATH": str(ROOT), "HOME": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        stub.stop()


def completion(content: str | None, tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "choices": [{"index": 0, "finish_reason": "tool_calls" if tool_calls else "stop", "message": message}]
    }


def tool_call_reply(name: str, arguments: dict[str, Any]) -> Reply:
    call = {
        "id": "call-1",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    return Reply(body=completion(None, [call]))
