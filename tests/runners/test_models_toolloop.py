"""The agent-managed tool loop: the model's tool calls run against a real engine through the dispatcher,
every round and every call is reported, bad arguments come back to the model as error objects, and rounds
are bounded."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from amnesia import Amnesia
from amnesia.clock import SimulatedClock
from amnesia.tools import TOOLS, dispatch
from runners.toolloop import ToolInvocation, ToolRound, run_tool_loop
from tasks.modelapi import ModelRequest, ModelResponse


def tool_call(name: str, arguments: object, call_id: str = "") -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


@dataclass
class ScriptedToolModel:
    """Replies from a script (the last reply repeats); records every request it gets."""

    replies: list[ModelResponse]
    name: str = "tool-script"
    requests: list[ModelRequest] = field(default_factory=list)

    def describe(self) -> dict:
        return {"adapter": "test"}

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return self.replies[min(len(self.requests), len(self.replies)) - 1]


def reply(text: str = "", *calls: dict) -> ModelResponse:
    return ModelResponse(text=text, prompt_tokens=10, completion_tokens=2, tool_calls=calls)


def drive(model: ScriptedToolModel, engine: Amnesia, max_rounds: int = 4):
    rounds: list[ToolRound] = []
    invocations: list[ToolInvocation] = []
    request = ModelRequest(messages=[{"role": "user", "content": "Remember: the drink is oolong."}], seed=5)
    final = run_tool_loop(
        model,
        request,
        TOOLS,
        lambda name, arguments: dispatch(engine, name, arguments),
        on_call=rounds.append,
        on_tool=invocations.append,
        seed_for_round=lambda index: 100 + index,
        max_rounds=max_rounds,
    )
    return final, rounds, invocations


@pytest.fixture
def engine() -> Amnesia:
    return Amnesia(clock=SimulatedClock(0.0))


def test_the_model_writes_memory_through_tools_then_answers(engine):
    remember = tool_call(
        "amnesia_remember", json.dumps({"content": "The drink is oolong.", "ttl": "30d"}), "c1"
    )
    model = ScriptedToolModel([reply("", remember), reply("Noted.")])
    final, rounds, invocations = drive(model, engine)
    assert final.text == "Noted."
    assert [item.content for item in engine.plugs()] == ["The drink is oolong."]
    (invocation,) = invocations
    assert (invocation.name, invocation.tool_call_id, invocation.round_index) == ("amnesia_remember", "c1", 0)
    assert json.loads(invocation.result)["id"] == engine.plugs()[0].id
    # Every round sends the tools, gets its own seed, and the second round sees the call and its result.
    assert [r.tools for r in model.requests] == [TOOLS, TOOLS]
    assert [r.seed for r in model.requests] == [100, 101]
    second = rounds[1].messages
    assert second[-2] == {"role": "assistant", "content": "", "tool_calls": [remember]}
    assert second[-1] == {"role": "tool", "tool_call_id": "c1", "content": invocation.result}
    assert [r.messages for r in rounds] == [r.messages for r in model.requests]


def test_bad_arguments_go_back_to_the_model_as_an_error_object(engine):
    bad = tool_call("amnesia_remember", {"contents": "typo"})  # an object, not JSON text; no id
    model = ScriptedToolModel([reply("", bad), reply("Sorry.")])
    final, _rounds, invocations = drive(model, engine)
    assert final.text == "Sorry."
    error = json.loads(invocations[0].result)
    assert error["field"] == "contents"
    assert invocations[0].arguments == '{"contents": "typo"}'
    assert invocations[0].tool_call_id == "call-0-0"
    assert engine.plugs() == []


def test_rounds_are_bounded_and_the_last_tools_still_run(engine):
    status = tool_call("amnesia_status", "{}", "s")
    model = ScriptedToolModel([reply("thinking", status)])
    final, rounds, invocations = drive(model, engine, max_rounds=3)
    assert final.text == "thinking"
    assert len(rounds) == 3 and len(invocations) == 3
    with pytest.raises(ValueError, match="max_rounds: must be >= 1"):
        drive(model, engine, max_rounds=0)


def test_several_calls_in_one_round_run_in_order(engine):
    calls = (
        tool_call("amnesia_remember", '{"content": "Lunch is at noon."}', "a"),
        tool_call("amnesia_remember", '{"content": "Standup is in room 4."}', "b"),
        tool_call("amnesia_forget", '{"query": "Lunch"}', "c"),
    )
    model = ScriptedToolModel([reply("", *calls), reply("Done.")])
    _final, rounds, invocations = drive(model, engine)
    assert [i.tool_call_id for i in invocations] == ["a", "b", "c"]
    assert [item.content for item in engine.plugs()] == ["Standup is in room 4."]
    assert [m["role"] for m in rounds[1].messages] == ["user", "assistant", "tool", "tool", "tool"]
