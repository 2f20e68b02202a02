"""The dispatcher never raises: every value a model controls is bounded, and anything out of range — a
400-digit ttl, 5,000-deep tags, a 100,000-deep JSON text, huge strings and arrays, lone surrogates, NaN, a
wrong type — comes back as a one-line `{"error": ...}` through `AgentSession.call_tool`, with nothing
written."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amnesia import Amnesia, Config, InMemoryStore, SimulatedClock
from amnesia.host import AgentSession
from amnesia.tools import (
    MAX_ARGUMENTS_CHARS,
    MAX_CONTENT_CHARS,
    MAX_DEPTH,
    MAX_VALUES,
    TOOLS,
    call_tool,
)


def deep(levels: int) -> Any:
    """`levels` nested arrays around a string, built without recursion."""
    value: Any = "x"
    for _ in range(levels):
        value = [value]
    return value


HOSTILE: dict[str, Any] = {
    "a 400-digit integer": int("9" * 400),
    "a negative 400-digit integer": -int("9" * 400),
    "NaN": float("nan"),
    "infinity": float("inf"),
    "5,000-deep arrays": deep(5_000),
    "a huge string": "y" * (MAX_CONTENT_CHARS + 1),
    "a lone surrogate": "ok \ud800 ok",
    "a huge array": ["t"] * (MAX_VALUES + 5),
    "an object": {"nested": {"deeper": [1]}},
}
FIELDS = sorted(
    (tool["function"]["name"], field)
    for tool in TOOLS
    for field in tool["function"]["parameters"]["properties"]
)
REQUIRED = {"amnesia_remember": {"content": "The dock opens at six."}, "amnesia_recall": {"query": "dock"}}
REQUIRED["amnesia_restore"] = {"id": "m-000000000001"}


def sessions() -> list[AgentSession]:
    engine = Amnesia(
        store=InMemoryStore(secret=b"b" * 32), config=Config(restorable=True), clock=SimulatedClock(1_000.0)
    )
    engine.remember("The dock opens at six.", ttl="7d", tags=["dock"])
    main = AgentSession(engine, "s1")
    return [AgentSession(engine), main, main.subagent("s2")]


def refused(agent: AgentSession, name: str, arguments: Any) -> dict[str, Any]:
    """The call's result, checked to be a one-line error that changed nothing in the store."""
    before = [item.to_dict() for item in agent.engine.store.load_items("default")]
    result = json.loads(agent.call_tool(name, arguments))
    assert set(result) <= {"error", "field"} and "error" in result, (name, result)
    assert "\n" not in result["error"] and len(result["error"]) < 400, result
    assert [item.to_dict() for item in agent.engine.store.load_items("default")] == before
    return result


@pytest.mark.parametrize(("tool", "field"), FIELDS)
def test_every_field_of_every_tool_refuses_every_hostile_value(tool: str, field: str) -> None:
    for agent in sessions():
        for what, value in HOSTILE.items():
            result = refused(agent, tool, REQUIRED.get(tool, {}) | {field: value})
            assert result.get("field", field) == field, (tool, field, what)  # blamed: this field or none


def test_the_reviewers_two_crashes_are_tool_errors() -> None:
    agent = sessions()[2]
    huge_ttl = '{"content": "The dock opens at six.", "ttl": ' + "9" * 400 + "}"
    assert refused(agent, "amnesia_remember", huge_ttl) == {
        "error": "ttl: must be at most 3153600000, got " + "9" * 40 + "...",
        "field": "ttl",
    }
    nested = '{"content": "x", "tags": ' + "[" * 5_000 + "]" * 5_000 + "}"
    assert (
        refused(agent, "amnesia_remember", nested)["error"]
        == f"arguments: nested deeper than {MAX_DEPTH} levels"
    )
    assert refused(agent, "amnesia_remember", {"content": "x", "tags": deep(5_000)})["error"] == (
        f"arguments: nested deeper than {MAX_DEPTH} levels"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 100_000, "arguments: nested deeper than 3 levels"),
        ('{"ttl": ' + "9" * 5_000 + "}", "arguments: not valid JSON ("),
        ('{"content": "x", "ttl": NaN}', "ttl: must be a finite number, got nan"),
        ('{"content": "x", "ttl": 1e400}', "ttl: must be a finite number, got inf"),
        ('{"content": "x\\ud800"}', "content: holds a lone surrogate"),
        ('{"content": "' + "x" * MAX_ARGUMENTS_CHARS + '"}', "arguments: 262159 characters, over the 262144"),
        ('{"content": "x", "tags": [' + ",".join(['"t"'] * 33) + "]}", "tags: at most 32 items, got 33"),
        ('{"content": "x", "key": "' + "k" * 201 + '"}', "key: at most 200 characters, got 201"),
        ('{"content": "x", "tags": ["' + "t" * 65 + '"]}', "tags[0]: at most 64 characters, got 65"),
        ('{"content": "x", "ttl": "' + "1" * 65 + '"}', "ttl: at most 64 characters, got 65"),
    ],
)
def test_json_text_out_of_bounds(text: str, message: str) -> None:
    for agent in sessions():
        assert refused(agent, "amnesia_remember", text)["error"].startswith(message)


def test_bounds_on_the_other_tools() -> None:
    agent = sessions()[0]
    assert refused(agent, "amnesia_preview", {"budget_tokens": 10_000_001})["field"] == "budget_tokens"
    assert refused(agent, "amnesia_recall", {"query": "q" * 4_097})["field"] == "query"
    assert refused(agent, "amnesia_forget", {"id": "m-" + "0" * 63})["field"] == "id"
    assert refused(agent, "amnesia_audit", {"limit": int("9" * 400)})["field"] == "limit"
    assert refused(agent, "amnesia_status", {"x" * 100_000: 1})["error"].endswith("(allowed: none)")


def test_the_largest_values_in_bounds_are_accepted() -> None:
    """The bounds refuse only what is out of range: values at the limits still work."""
    engine = Amnesia(
        store=InMemoryStore(secret=b"b" * 32),
        config=Config(max_item_bytes=MAX_CONTENT_CHARS, max_store_bytes=1 << 20),
        clock=SimulatedClock(1_000.0),
    )
    written = call_tool(
        engine,
        "amnesia_remember",
        {
            "content": "z" * MAX_CONTENT_CHARS,
            "ttl": 3_153_600_000,
            "tags": [f"{n:064d}" for n in range(32)],
            "key": "k" * 200,
        },
    )
    assert "error" not in written and written["ttl"] == 3_153_600_000
    assert "error" not in call_tool(
        engine, "amnesia_preview", {"budget_tokens": 10_000_000, "query": "q" * 4_096}
    )


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=150, deadline=None)
@given(
    name=st.sampled_from([tool["function"]["name"] for tool in TOOLS]),
    arguments=st.dictionaries(st.sampled_from([field for _, field in FIELDS]), JSON_VALUES, max_size=4),
)
def test_any_json_arguments_give_a_result_or_a_one_line_error(name: str, arguments: dict[str, Any]) -> None:
    for agent in sessions():
        result = json.loads(agent.call_tool(name, arguments))
        if "error" in result:
            assert "\n" not in result["error"]
