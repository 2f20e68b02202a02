"""Tool use in the report: the tool calls each arm's model made, per arm and group in summary.csv and per
probe in report.md, so an agent-managed model that never called a tool is visible as such."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amnesia_bench.cli import app
from runners.models import envopts
from runners.models.stub_server import StubServer, text_reply, tool_reply


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    for name in (envopts.BASE_URL, envopts.API_KEY, envopts.MODEL, envopts.NO_CACHE, envopts.CACHE_EPOCH):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(envopts.CACHE_PATH, str(tmp_path / "responses.sqlite3"))
    stub = StubServer().start()
    yield stub
    stub.stop()


def test_tool_calls_are_counted_per_arm_group_and_probe(
    drink_task, preference_task, write_tasks, server: StubServer, tmp_path: Path
) -> None:
    # agent-managed runs first (--arms order, one worker, one call in flight): drink_task (3 turns), then
    # preference_task.
    server.script(
        tool_reply(("amnesia_remember", {"content": "The verification drink is lapsang.", "ttl": "1d"})),
        text_reply("Noted."),
        text_reply("Updated."),  # the update turn: no tool call
        tool_reply(("amnesia_recall", {"query": "verification drink"})),  # the probe turn recalls first
        text_reply("It is lapsang."),
    )  # every later call (preference_task, and the amnesia arm) gets the stub's echo: no tool calls
    tasks = write_tasks(tmp_path / "tasks", [drink_task, preference_task])
    out = tmp_path / "run"
    args = ["run", "--no-progress", "--tasks", str(tasks), "--arms", "agent-managed,amnesia"]
    args += ["--model", "openai/stub-model", "--base-url", server.base_url, "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--max-connections", "1"])  # the script is consumed in order
    assert result.exit_code == 0, result.output

    with (out / "report" / "summary.csv").open(encoding="utf-8") as handle:
        tool_calls = {(row["arm"], row["group"]): int(row["tool_calls"]) for row in csv.DictReader(handle)}
    assert tool_calls == {
        ("agent-managed", "harmful"): 2,
        ("agent-managed", "helpful"): 0,
        ("agent-managed", "all"): 2,
        ("amnesia", "harmful"): 0,
        ("amnesia", "helpful"): 0,
        ("amnesia", "all"): 0,
    }
    report = (out / "report" / "report.md").read_text(encoding="utf-8")
    assert (
        "Tool calls (the model called the arm's memory tools): "
        "`agent-managed` 2 (1.00 per probe; 1/2 probes after a tool call); "
        "`amnesia` 0 (0.00 per probe; 0/2 probes after a tool call)."
    ) in report
