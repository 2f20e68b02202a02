"""The response cache seen from the CLI: answers never cross endpoints, a run says how the cache served it,
and `amnesia-bench cache stats|clear` show and empty it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from amnesia_bench.cli import app
from runners.models import envopts
from runners.models.stub_server import StubServer


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A private cache file; the model flags `run` exports to the environment are undone after the test."""
    for name in (envopts.BASE_URL, envopts.API_KEY, envopts.MODEL, envopts.NO_CACHE, envopts.CACHE_EPOCH):
        monkeypatch.delenv(name, raising=False)
    cache = tmp_path / "responses.sqlite3"
    monkeypatch.setenv(envopts.CACHE_PATH, str(cache))
    return cache


@pytest.fixture
def servers():
    first, second = StubServer().start(), StubServer().start()
    yield first, second
    first.stop()
    second.stop()


def _run(tasks: Path, out: Path, server: StubServer) -> str:
    args = ["run", "--no-progress", "--no-report", "--tasks", str(tasks), "--arms", "no-memory,amnesia"]
    args += ["--model", "openai/stub-model", "--base-url", server.base_url, "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return result.output


def test_two_endpoints_never_share_answers_and_the_run_reports_hits_and_misses(
    drink_task, preference_task, write_tasks, env, servers, tmp_path
):
    first, second = servers
    tasks = write_tasks(tmp_path / "tasks", [drink_task, preference_task])
    output = _run(tasks, tmp_path / "a", first)
    calls = len(first.requests)
    assert calls > 0 and f"response cache: 0 hits, {calls} misses ({env})" in output

    # Same model id, same prompts, another server: every call goes to that server.
    output = _run(tasks, tmp_path / "b", second)
    assert len(second.requests) == calls and f"0 hits, {calls} misses" in output

    # The first endpoint again: served entirely from its own cached answers.
    output = _run(tasks, tmp_path / "c", first)
    assert len(first.requests) == calls and f"response cache: {calls} hits, 0 misses" in output

    stats = CliRunner().invoke(app, ["cache", "stats"])
    assert stats.exit_code == 0, stats.output
    assert f"{env}: {2 * calls} responses" in stats.output
    assert f"openai:stub-model  @ {first.base_url} (serves stub-model)" in stats.output
    assert f"openai:stub-model  @ {second.base_url} (serves stub-model)" in stats.output

    cleared = CliRunner().invoke(app, ["cache", "clear", "--yes"])
    assert cleared.exit_code == 0 and f"{2 * calls} responses deleted" in cleared.output
    assert f"{env}: 0 responses" in CliRunner().invoke(app, ["cache", "stats"]).output


def test_a_scripted_run_prints_no_cache_line(drink_task, write_tasks, env, tmp_path):
    tasks = write_tasks(tmp_path / "tasks", [drink_task])
    args = ["run", "--no-progress", "--no-report", "--tasks", str(tasks), "--out", str(tmp_path / "run")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0 and "response cache" not in result.output
    assert not env.exists()  # the scripted model never opens the cache
