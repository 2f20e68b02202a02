"""`amnesia-bench run --arms agent-managed --model openai:...` end to end against a loopback OpenAI-compatible
server that answers with tool calls: the model writes and forgets memory itself through the seven tools, every
round and every tool call is logged, a re-run is served from the response cache, and a failed model call is a
clear error (exit 1), never a scored answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai_stub import Reply, StubServer, text_reply, tool_reply
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


@pytest.fixture
def env(monkeypatch, tmp_path):
    """The run command exports model flags to the environment (for workers); undo that after each test."""
    exported = (envopts.BASE_URL, envopts.API_KEY, envopts.MODEL, envopts.MAX_CONNECTIONS, envopts.TIMEOUT)
    for name in (*exported, envopts.NO_CACHE, envopts.CACHE_EPOCH):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(envopts.CACHE_PATH, str(tmp_path / "responses.sqlite3"))


@pytest.fixture
def server():
    stub = StubServer().start()
    yield stub
    stub.stop()


def run(server: StubServer, tmp_path: Path, out: str, *extra: str):
    tasks = tmp_path / "tasks"
    tasks.mkdir(exist_ok=True)
    (tasks / "drink.yaml").write_text(TASK, encoding="utf-8")
    args = ["run", "--no-progress", "--no-report", "--tasks", str(tasks), "--arms", "agent-managed"]
    args += ["--model", "openai:stub", "--base-url", server.base_url, "--api-key", "sk-secret", "--out"]
    return CliRunner().invoke(app, [*args, str(tmp_path / out), *extra])


def records(run_dir: Path) -> list[dict]:
    log = run_dir / "logs" / "agent-managed" / "harmful__drink.jsonl"
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def test_the_model_manages_memory_through_tools(env, server, tmp_path):
    server.script(
        tool_reply(("amnesia_remember", {"content": "The verification drink is lapsang.", "ttl": "1d"})),
        text_reply("Noted."),
        tool_reply(
            ("amnesia_forget", {"query": "verification drink"}),
            ("amnesia_remember", {"content": "The verification drink is oolong.", "ttl": "30d"}),
        ),
        text_reply("Updated."),
        text_reply("It is no longer lapsang, it is oolong."),
    )
    result = run(server, tmp_path, "run1")
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
    assert all(len(body["tools"]) == 7 for body in server.requests)
    assert [c["messages"] for c in calls] == [body["messages"] for body in server.requests]
    manifest = (tmp_path / "run1" / "manifest.json").read_text(encoding="utf-8")
    assert "sk-secret" not in manifest

    # A re-run is answered entirely by the response cache: no new request reaches the server.
    sent = len(server.requests)
    assert run(server, tmp_path, "run2").exit_code == 0
    assert len(server.requests) == sent
    rerun_calls = [r for r in records(tmp_path / "run2") if r["type"] == "model_call"]
    assert all(c["cached"] for c in rerun_calls)
    assert [c["response"] for c in rerun_calls] == [c["response"] for c in calls]


def test_no_cache_calls_the_model_again(env, server, tmp_path):
    assert run(server, tmp_path, "run1").exit_code == 0
    sent = len(server.requests)
    assert run(server, tmp_path, "run2", "--no-cache").exit_code == 0
    assert len(server.requests) == 2 * sent


def test_a_failed_model_call_is_a_clear_error_not_an_answer(env, server, tmp_path):
    server.script(Reply(401, {"error": "invalid api key"}))
    result = run(server, tmp_path, "run1")
    assert result.exit_code == 1
    assert "error: openai: POST" in result.output and "HTTP 401" in result.output
    assert "Traceback" not in result.output
    assert not [r for r in records(tmp_path / "run1") if r["type"] == "probe"]
