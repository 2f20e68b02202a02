"""`amnesia-bench run --arms agent-managed --model openai:...` end to end against a loopback OpenAI-compatible
server that answers with tool calls: the model writes and forgets memory itself through the seven tools, every
round and every tool call is logged, a re-run is served from the response cache, and a failed model call is a
clear error (exit 1), never a scored answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amnesia_bench.cli import app
from runners.models import envopts

TASK = """\
id: harmful/drink
group: harmful
category: fact-change
description: The drink changes from lapsang to oolong.
sessions:
  - at: 0s
    turns:
      - user: "Remember: the verification drink is lapsang."
        remember: {content: "The verification drink is lapsang.", ttl: 1d}
  - at: 1h
    turns:
      - user: "Update: we switched the verification drink to oolong."
        remember: {content: "The verification drink is oolong.", ttl: 30d}
  - at: 3d
    turns:
      - user: "What is the verification drink?"
        probe: {expect: [oolong], stale: [lapsang]}
"""


def tool_reply(stub_reply, *calls: tuple[str, dict]):
    tool_calls = [
        {"id": f"t{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (name, args) in enumerate(calls)
    ]
    message = {"role": "assistant", "content": None, "tool_calls": tool_calls}
    return stub_reply(
        body={"choices": [{"message": message}], "usage": {"prompt_tokens": 50, "completion_tokens": 9}}
    )


def text_reply(stub_reply, text: str):
    message = {"role": "assistant", "content": text}
    return stub_reply(
        body={"choices": [{"message": message}], "usage": {"prompt_tokens": 60, "completion_tokens": 4}}
    )


@pytest.fixture
def env(monkeypatch, tmp_path):
    """The run command exports model flags to the environment (for workers); undo that after each test."""
    exported = (envopts.BASE_URL, envopts.API_KEY, envopts.MODEL, envopts.MAX_CONNECTIONS, envopts.TIMEOUT)
    for name in (*exported, envopts.NO_CACHE, envopts.CACHE_EPOCH):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(envopts.CACHE_PATH, str(tmp_path / "responses.sqlite3"))


def run(openai_stub, tmp_path: Path, out: str, *extra: str):
    tasks = tmp_path / "tasks"
    tasks.mkdir(exist_ok=True)
    (tasks / "drink.yaml").write_text(TASK, encoding="utf-8")
    args = ["run", "--no-progress", "--no-report", "--tasks", str(tasks), "--arms", "agent-managed"]
    args += ["--model", "openai:stub", "--base-url", openai_stub.base_url, "--api-key", "sk-secret", "--out"]
    return CliRunner().invoke(app, [*args, str(tmp_path / out), *extra])


def records(run_dir: Path) -> list[dict]:
    log = run_dir / "logs" / "agent-managed" / "harmful__drink.jsonl"
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def test_the_model_manages_memory_through_tools(stub_reply, env, openai_stub, tmp_path):
    openai_stub.script(
        tool_reply(
            stub_reply, ("amnesia_remember", {"content": "The verification drink is lapsang.", "ttl": "1d"})
        ),
        text_reply(stub_reply, "Noted."),
        tool_reply(
            stub_reply,
            ("amnesia_forget", {"query": "verification drink"}),
            ("amnesia_remember", {"content": "The verification drink is oolong.", "ttl": "30d"}),
        ),
        text_reply(stub_reply, "Updated."),
        text_reply(stub_reply, "It is no longer lapsang, it is oolong."),
    )
    result = run(openai_stub, tmp_path, "run1")
    assert result.exit_code == 0, result.output
    log = records(tmp_path / "run1")
    calls = [r for r in log if r["type"] == "model_call"]
    tool_calls = [r for r in log if r["type"] == "tool_call"]
    assert [c["call_index"] for c in calls] == [0, 1, 2, 3, 4]
    assert [(t["call_index"], t["name"]) for t in tool_calls] == [
        (0, "amnesia_remember"),
        (2, "amnesia_forget"),
        (2, "amnesia_remember"),
    ]
    assert json.loads(tool_calls[1]["result"])["count"] == 1  # the model's forget found lapsang
    # The model's own writes reach the engine (source "tool") and the probe's memory block.
    writes = [r for r in log if r["type"] == "memory_write"]
    assert [w["source"] for w in writes] == ["tool", "tool"]
    probe_block = [r for r in log if r["type"] == "injection"][-1]["block"]
    assert "oolong" in probe_block and "lapsang" not in probe_block
    (probe,) = [r for r in log if r["type"] == "probe"]
    assert probe["classification"] == "correct"  # negation-aware: "no longer lapsang"
    # Every request offered the seven tools; the logged prompt is what the server received.
    assert all(len(body["tools"]) == 7 for body in openai_stub.requests)
    assert [c["messages"] for c in calls] == [body["messages"] for body in openai_stub.requests]
    manifest = (tmp_path / "run1" / "manifest.json").read_text(encoding="utf-8")
    assert "sk-secret" not in manifest

    # A re-run is answered entirely by the response cache: no new request reaches the server.
    sent = len(openai_stub.requests)
    assert run(openai_stub, tmp_path, "run2").exit_code == 0
    assert len(openai_stub.requests) == sent
    rerun_calls = [r for r in records(tmp_path / "run2") if r["type"] == "model_call"]
    assert all(c["cached"] for c in rerun_calls)
    assert [c["response"] for c in rerun_calls] == [c["response"] for c in calls]


def test_no_cache_calls_the_model_again(env, openai_stub, tmp_path):
    assert run(openai_stub, tmp_path, "run1").exit_code == 0
    sent = len(openai_stub.requests)
    assert run(openai_stub, tmp_path, "run2", "--no-cache").exit_code == 0
    assert len(openai_stub.requests) == 2 * sent


def test_a_failed_model_call_is_a_clear_error_not_an_answer(stub_reply, env, openai_stub, tmp_path):
    openai_stub.script(stub_reply(401, {"error": "invalid api key"}))
    result = run(openai_stub, tmp_path, "run1")
    assert result.exit_code == 1
    assert (
        "error: 1 of 1 pairs failed on a model error (rerun with --resume to retry only those)"
        in result.output
    )
    assert "first: agent-managed " in result.output and ": openai: POST" in result.output
    assert "HTTP 401" in result.output
    assert "Traceback" not in result.output
    assert not [r for r in records(tmp_path / "run1") if r["type"] == "probe"]
