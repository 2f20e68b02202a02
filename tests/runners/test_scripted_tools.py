"""`scripted:tools`, the deterministic tool-using model (issue 17): when a probe's answer is not in its prompt
it calls the arm's recall/search tool with the question, then answers from the result by the usual strategy;
a run with it exercises every seed arm's tool path, and the logs show each tool call, its result and the
task's scripted tool events."""

from __future__ import annotations

import json

import pytest

from arms.claims import CLAIM_TOOLS
from arms.clue_folding import RECALL_TOOL
from runners.models import resolve_model
from runners.models.scripted import ABSTAIN_TEXT, ScriptedModel, from_spec
from tasks.errors import ModelSpecError
from tasks.modelapi import ModelRequest

QUESTION = "What is the verification drink?"
ASKED = [{"role": "system", "content": "sys"}, {"role": "user", "content": QUESTION}]


def probe(messages, tools=None) -> ModelRequest:
    return ModelRequest(messages, candidates=("oolong", "lapsang"), is_probe=True, seed=3, tools=tools)


def answered(request: ModelRequest, call: dict, result: str) -> ModelRequest:
    """The next round of the loop: the model's call and the tool's result appended."""
    messages = [
        *request.messages,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": result},
    ]
    return ModelRequest(messages, request.candidates, True, request.seed, request.tools)


def test_calls_the_recall_tool_with_the_question_then_answers_from_its_result():
    model = from_spec("tools")
    first = probe(ASKED, [RECALL_TOOL])
    (call,) = model.complete(first).tool_calls
    assert call["function"]["name"] == "recall_from_clues"
    assert json.loads(call["function"]["arguments"]) == {"query": QUESTION}
    assert model.complete(answered(first, call, '{"prompt":"- [k-1] clue · oolong"}')).text == "oolong"
    assert model.complete(answered(first, call, '{"prompt":""}')).text == ABSTAIN_TEXT  # one call per turn


def test_fills_a_list_parameter_and_prefers_the_recall_tool_order():
    (call,) = from_spec("tools").complete(probe(ASKED, CLAIM_TOOLS)).tool_calls
    assert call["function"]["name"] == "memory_search"
    assert json.loads(call["function"]["arguments"]) == {"queries": [QUESTION]}


def test_no_tool_call_when_the_answer_is_in_the_prompt_or_no_tool_is_offered_or_not_a_probe():
    model = from_spec("tools")
    shown = [{"role": "system", "content": "sys\n- [m-1] fact · written 1d ago · oolong"}, ASKED[1]]
    assert model.complete(probe(shown, [RECALL_TOOL])).text == "oolong"
    assert model.complete(probe(ASKED)).text == ABSTAIN_TEXT
    chat = ModelRequest(ASKED, tools=[RECALL_TOOL])
    assert model.complete(chat).tool_calls == () and model.complete(chat).text == "OK, noted."


def test_spec_names_and_the_plain_model_never_calls_tools():
    assert (
        resolve_model("scripted:tools").calls_tools
        and resolve_model("scripted/tools-newest").strategy == "newest"
    )
    assert resolve_model("scripted:tools-newest").name == "scripted:tools-newest"
    plain = ScriptedModel()
    assert not plain.calls_tools and plain.complete(probe(ASKED, [RECALL_TOOL])).tool_calls == ()
    with pytest.raises(ModelSpecError, match="tools-first"):
        resolve_model("scripted:tools-sometimes")


TASK = """\
id: helpful/tooly
group: helpful
category: tool-workaround
description: A workaround seen in tool calls, a written fact, both probed later.
sessions:
  - at: 0s
    turns:
      - user: "Install the dependencies. Remember: the canary cluster is Juniper."
        remember: {content: "The canary cluster is Juniper.", ttl: 30d}
        tool_events:
          - {name: shell, arguments: "pnpm install", status: error, output: "ETIMEDOUT"}
          - {name: shell, arguments: "pnpm install", status: error, output: "ETIMEDOUT"}
          - {name: shell, arguments: "pnpm i --registry=registry.npmmirror.com", status: ok, output: "Done"}
      - user: "Thanks."
  - at: 1d
    turns:
      - user: "Which registry worked last time?"
        probe: {expect: [npmmirror]}
      - user: "Which cluster takes canary releases?"
        probe: {expect: [Juniper]}
      - user: "Which host is staging on?"
        probe: {abstain: true}
"""
ARMS = "retrieval,clue-folding,claims,amnesia"


def test_a_tools_run_logs_every_arms_tool_calls_and_the_tasks_tool_events(tmp_path, run_ok, run_logs):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "t.yaml").write_text(TASK, encoding="utf-8")
    run_ok(tasks, tmp_path / "a", "--model", "scripted:tools", arms=ARMS)
    logs = run_logs(tmp_path / "a")
    for arm in ARMS.split(","):
        records = logs[f"{arm}/helpful__tooly.jsonl"]
        events = [r for r in records if r["type"] == "tool_event"]
        assert [e["status"] for e in events] == ["error", "error", "ok"]
        calls = [r for r in records if r["type"] == "tool_call"]
        assert calls, arm
        assert all(json.loads(c["arguments"]) and json.loads(c["result"]) for c in calls)
        prompt = next(r for r in records if r["type"] == "model_call")["messages"]
        assert [m["role"] for m in prompt[2:]] == ["assistant", "tool"] * 3  # the events follow the user text
        probes = {(p["expect"] or ["-"])[0]: p["classification"] for p in records if p["type"] == "probe"}
        assert probes["-"] == "correct"  # nothing anywhere: recalled in vain, then "I don't know."
        # retrieval captured the workaround (failure-then-success) and finds it in its snapshot; the others
        # never stored it, and their recall tools answer nothing for it
        assert probes["npmmirror"] == ("correct" if arm == "retrieval" else "abstained"), arm
        if arm != "clue-folding":  # the seed's clue folding never folds a session this short
            assert probes["Juniper"] == "correct", arm
    run_ok(tasks, tmp_path / "b", "--model", "scripted:tools", arms=ARMS)
    assert run_logs(tmp_path / "b") == logs  # deterministic


def test_tool_events_change_nothing_for_a_task_without_them(
    tmp_path, run_ok, run_logs, write_tasks, drink_task
):
    """The prompt of a task without tool events is what it always was (no empty tool messages)."""
    run_ok(write_tasks(tmp_path / "tasks", [drink_task]), tmp_path / "run", arms="amnesia")
    (records,) = run_logs(tmp_path / "run").values()
    calls = [r for r in records if r["type"] == "model_call"]
    assert all([m["role"] for m in c["messages"]][-1] == "user" for c in calls)
    assert not any(r["type"] in ("tool_call", "tool_event") for r in records)
