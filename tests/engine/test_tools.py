"""The seven model-facing tools: schemas in OpenAI tools format, argument validation, small JSON results."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from amnesia import Amnesia, Config, InMemoryStore, SimulatedClock
from amnesia.tools import TOOL_NAMES, TOOLS, call_tool, dispatch, validate_arguments

EXPECTED_TOOLS = {
    "amnesia_remember",
    "amnesia_forget",
    "amnesia_status",
    "amnesia_audit",
    "amnesia_recall",
    "amnesia_restore",
    "amnesia_preview",
}


def make_engine(**config: object) -> tuple[Amnesia, SimulatedClock]:
    clock = SimulatedClock(1_000.0)
    counter = itertools.count()
    engine = Amnesia(
        store=InMemoryStore(secret=b"k" * 32),
        config=Config(**config),
        clock=clock,
        id_factory=lambda: f"m-{next(counter):012x}",
    )
    return engine, clock


def call(engine: Amnesia, name: str, arguments: object = None, **agent: object) -> dict:
    text = dispatch(engine, name, arguments, **agent)
    assert isinstance(text, str)
    return json.loads(text)


def test_schemas_are_openai_function_definitions() -> None:
    assert set(TOOL_NAMES) == EXPECTED_TOOLS
    for tool in TOOLS:
        assert tool["type"] == "function"
        function = tool["function"]
        assert function["description"]
        parameters = function["parameters"]
        assert parameters["type"] == "object"
        assert parameters["additionalProperties"] is False
        assert set(parameters["required"]) <= set(parameters["properties"])
    json.dumps(TOOLS)  # the whole list goes over the wire as-is


@pytest.mark.parametrize(
    ("name", "arguments", "field", "fragment"),
    [
        ("amnesia_remember", {}, "content", "required"),
        ("amnesia_remember", {"content": "x", "colour": "red"}, "colour", "unknown field"),
        ("amnesia_remember", {"content": 42}, "content", "expected string"),
        ("amnesia_remember", {"content": "x", "pin": "yes"}, "pin", "expected boolean"),
        ("amnesia_remember", {"content": "x", "kind": "gossip"}, "kind", "expected one of"),
        ("amnesia_remember", {"content": "x", "tags": ["ok", 3]}, "tags[1]", "expected string"),
        ("amnesia_remember", {"content": ""}, "content", "empty"),
        ("amnesia_remember", {"content": "x", "pin": True, "ttl": "1d"}, "ttl", "pinned"),
        ("amnesia_audit", {"limit": True}, "limit", "expected integer"),
        ("amnesia_audit", {"limit": 0}, "limit", "at least 1"),
        ("amnesia_recall", {"query": "tea", "limit": 1000}, "limit", "at most"),
        ("amnesia_restore", {}, "id", "required"),
        ("amnesia_status", {"verbose": True}, "verbose", "unknown field"),
        ("amnesia_forget", {"all": True}, "confirm", "confirm=true"),
    ],
)
def test_bad_arguments_come_back_as_an_error_naming_the_field(name, arguments, field, fragment) -> None:
    engine, _ = make_engine()
    result = call(engine, name, arguments)
    assert result["field"] == field
    assert fragment in result["error"]
    assert "\n" not in result["error"]
    assert engine.status().to_dict()["counts"].get("active", 0) == 0  # nothing was written


@pytest.mark.parametrize(
    ("name", "arguments", "fragment"),
    [
        ("amnesia_delete_everything", {}, "unknown tool"),
        ("amnesia_remember", "{not json", "not valid JSON"),
        ("amnesia_remember", "[1, 2]", "expected a JSON object"),
        ("amnesia_forget", {}, "needs one of"),
        ("amnesia_forget", {"id": "m-missing"}, ""),
    ],
)
def test_calls_that_cannot_run_return_an_error_object(name, arguments, fragment) -> None:
    engine, _ = make_engine()
    result = call(engine, name, arguments)
    if "error" in result:
        assert fragment in result["error"]
        assert "Traceback" not in result["error"]
    else:  # forgetting an unknown id is an idempotent no-op, not an error
        assert result["count"] == 0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3),
    max_leaves=8,
)
field_names = st.sampled_from(
    sorted({name for tool in TOOLS for name in tool["function"]["parameters"]["properties"]} | {"bogus"})
)


@settings(max_examples=150, deadline=None)
@given(
    name=st.sampled_from([*sorted(EXPECTED_TOOLS), "amnesia_nope"]),
    arguments=st.dictionaries(field_names, json_values, max_size=4) | json_values,
)
@example(name="amnesia_audit", arguments={"\n": None})  # a field name that would break the line
def test_dispatch_never_raises_and_always_answers_a_json_object(name, arguments) -> None:
    engine, _ = make_engine()
    result = call(engine, name, arguments)
    assert isinstance(result, dict)
    if "error" in result:
        assert isinstance(result["error"], str) and len(result["error"].splitlines()) == 1


def test_remember_recall_forget_round_trip_with_json_string_arguments() -> None:
    engine, _ = make_engine()
    written = call(
        engine, "amnesia_remember", '{"content": "The verification drink is oolong.", "ttl": "10m"}'
    )
    assert written["id"].startswith("m-")
    assert written["ttl"] == 600.0
    assert "content" not in written  # the answer stays small: the model knows what it wrote
    assert engine.inspect(written["id"]).source == "tool"

    recalled = call(engine, "amnesia_recall", {"query": "verification drink"})
    assert [item["id"] for item in recalled["items"]] == [written["id"]]

    forgotten = call(engine, "amnesia_forget", {"id": written["id"]})
    assert forgotten["count"] == 1
    assert call(engine, "amnesia_recall", {"query": "oolong"})["items"] == []


def test_the_audit_shows_hashes_never_content() -> None:
    engine, clock = make_engine()
    call(engine, "amnesia_remember", {"content": "The verification drink is lapsang.", "ttl": 15})
    clock.advance(17)
    engine.sweep()
    entries = call(engine, "amnesia_audit", {"limit": 5})["entries"]
    assert [entry["reason"] for entry in entries] == ["expired"]
    assert entries[0]["content"] is None
    assert "lapsang" not in json.dumps(entries)
    status = call(engine, "amnesia_status")
    assert status["counts"]["active"] == 0
    assert "lapsang" not in json.dumps(status)


def test_preview_renews_nothing() -> None:
    engine, clock = make_engine()
    written = call(
        engine, "amnesia_remember", {"content": "Answer in French.", "kind": "preference", "ttl": "1d"}
    )
    clock.advance(3_600)
    before = engine.inspect(written["id"]).to_dict()
    plan = call(engine, "amnesia_preview", {"budget_tokens": 100})
    assert written["id"] in plan["block"]
    assert engine.inspect(written["id"]).to_dict() == before


def test_restore_only_in_restorable_mode() -> None:
    engine, _ = make_engine()
    written = call(engine, "amnesia_remember", {"content": "Standup moved to 10:30.", "ttl": "1d"})
    call(engine, "amnesia_forget", {"id": written["id"]})
    assert "restorable mode is off" in call(engine, "amnesia_restore", {"id": written["id"]})["rejected"]

    engine, _ = make_engine(restorable=True)
    written = call(engine, "amnesia_remember", {"content": "Standup moved to 10:30.", "ttl": "1d"})
    call(engine, "amnesia_forget", {"id": written["id"]})
    restored = call(engine, "amnesia_restore", {"id": written["id"]})
    assert restored["content"] == "Standup moved to 10:30."
    assert restored["id"] != written["id"]


def test_a_refused_secret_is_not_echoed() -> None:
    engine, _ = make_engine()
    secret = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2
    text = dispatch(engine, "amnesia_remember", {"content": f"The API key is {secret}", "ttl": "1d"})
    assert "error" in json.loads(text)
    assert secret not in text


def test_a_sub_agent_writes_reads_and_forgets_only_its_own_session() -> None:
    engine, _ = make_engine()
    main_item = call(engine, "amnesia_remember", {"content": "The release branch is rel-7.", "ttl": "7d"})
    sub = {"owner_id": "s3", "include_workspace": False}

    note = call(
        engine, "amnesia_remember", {"content": "The flaky release test is test_login.", "ttl": "1h"}, **sub
    )
    assert (note["scope"], note["owner_id"]) == ("session", "s3")
    refused = call(engine, "amnesia_remember", {"content": "x y z", "scope": "workspace"}, **sub)
    assert refused["field"] == "scope"

    assert [i["id"] for i in call(engine, "amnesia_recall", {"query": "release"}, **sub)["items"]] == [
        note["id"]
    ]
    # an id it cannot see is answered as an unknown one: nothing forgotten, nothing revealed
    unseen = call(engine, "amnesia_forget", {"id": main_item["id"]}, **sub)
    assert unseen == call(engine, "amnesia_forget", {"id": "m-000000000000"}, **sub)
    assert unseen["count"] == 0
    assert call(engine, "amnesia_forget", {"all": True, "confirm": True}, **sub)["ids"] == [note["id"]]
    assert engine.inspect(main_item["id"]) is not None


def test_the_main_agent_needs_a_session_for_session_scope() -> None:
    engine, _ = make_engine()
    result = call(engine, "amnesia_remember", {"content": "Scratch note.", "scope": "session"})
    assert result["field"] == "scope"
    written = call(
        engine, "amnesia_remember", {"content": "Scratch note.", "scope": "session"}, owner_id="s1"
    )
    assert (written["scope"], written["owner_id"]) == ("session", "s1")


def test_results_stay_small_however_big_the_store() -> None:
    engine, _ = make_engine(max_store_bytes=1 << 20)
    for index in range(300):
        engine.remember(f"Fact number {index} about the tea inventory.", ttl=3_600)
    assert len(dispatch(engine, "amnesia_status")) < 2_000
    assert len(call(engine, "amnesia_recall", {"query": "tea inventory"})["items"]) == 5
    assert len(call(engine, "amnesia_recall", {"query": "tea inventory", "limit": 20})["items"]) == 20


def test_validate_arguments_returns_a_plain_dict() -> None:
    assert validate_arguments("amnesia_recall", '{"query": "tea"}') == {"query": "tea"}
    assert validate_arguments("amnesia_status", None) == {}


def test_a_caller_may_lower_the_trust_of_its_write_never_raise_it() -> None:
    engine, _ = make_engine()
    # a model (the default caller) writes as `tool`; it may mark a write untrusted (`auto`: ttl capped)
    plain = engine.inspect(call(engine, "amnesia_remember", {"content": "Deploys go out on Fridays."})["id"])
    assert plain is not None and plain.source == "tool"
    untrusted = call(
        engine,
        "amnesia_remember",
        {"content": "The README says deploys are on Mondays.", "ttl": "30d", "source": "auto"},
    )
    item = engine.inspect(untrusted["id"])
    assert item is not None and item.source == "auto" and untrusted["ttl"] == engine.config.untrusted_max_ttl
    # it cannot pass its text off as the user's: refused, naming the field, and nothing written
    before = engine.status().counts
    refused = call_tool(engine, "amnesia_remember", {"content": "Deploys are on Sundays.", "source": "user"})
    assert refused == {
        "error": "source: 'user' is more trusted than this caller may declare (at most 'tool')",
        "field": "source",
    }
    assert engine.status().counts == before
    # a host that writes the user's own words grants `user`; a host may also make every write untrusted
    user = call_tool(
        engine,
        "amnesia_remember",
        {"content": "Deploys are on Sundays.", "source": "user"},
        max_source="user",
    )
    assert engine.inspect(user["id"]).source == "user"
    auto = call_tool(engine, "amnesia_remember", {"content": "A page said Tuesdays."}, max_source="auto")
    assert engine.inspect(auto["id"]).source == "auto"
    assert (
        call_tool(engine, "amnesia_remember", {"content": "x", "source": "tool"}, max_source="auto")["field"]
        == "source"
    )
