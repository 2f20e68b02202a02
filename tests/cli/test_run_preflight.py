"""A run against a real model that cannot answer (no key, a server that is not there, a refused key) fails
before it starts: one line, the exit code of tasks.errors' tree (2 bad input, 1 a failed service), and no run
folder left behind to block the next run. Only loopback addresses are used."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amnesia_bench.cli import app
from runners.models import envopts
from runners.models.stub_server import StubServer

SMALL_SET = Path(__file__).resolve().parents[1] / "data" / "small_set.yaml"


@pytest.fixture(autouse=True)
def _model_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No key or endpoint from the environment; a private response cache; `run`'s exports undone after."""
    for name in (envopts.BASE_URL, envopts.API_KEY, envopts.MODEL, envopts.NO_CACHE, envopts.CACHE_EPOCH):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(envopts.CACHE_PATH, str(tmp_path / "responses.sqlite3"))


def _run(out: Path, *model_flags: str) -> tuple[int, list[str]]:
    args = ["run", "--no-progress", "--no-report", "--tasks", str(SMALL_SET), "--arms", "no-memory"]
    args += ["--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--model", "openai/gpt-test", *model_flags])
    return result.exit_code, result.output.splitlines()


def _unused_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_openai_without_a_key_is_bad_input_before_the_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code, lines = _run(out)
    assert code == 2
    assert lines == [
        "error: openai: no API key for https://api.openai.com/v1: set $OPENAI_API_KEY or pass --api-key "
        "(or --base-url for a server that needs none)"
    ]
    assert not out.exists()


def test_an_unreachable_endpoint_is_a_failed_service_before_the_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    base_url = f"http://127.0.0.1:{_unused_loopback_port()}/v1"
    code, lines = _run(out, "--base-url", base_url)
    assert code == 1
    assert len(lines) == 1 and lines[0].startswith(f"error: openai: {base_url} unreachable (ConnectError")
    assert not out.exists()
    # nothing blocks the next run into the same folder once the server is there
    with StubServer() as stub:
        code, lines = _run(out, "--base-url", stub.base_url)
    assert code == 0, lines


def test_a_refused_key_is_bad_input_before_the_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with StubServer() as stub:
        stub.api_key = "sk-right"
        code, lines = _run(out, "--base-url", stub.base_url, "--api-key", "sk-wrong")
        assert stub.requests == []  # not one completion was asked for
    assert code == 2
    assert lines == [
        f"error: openai: {stub.base_url} refused the API key (HTTP 401): check --api-key or $OPENAI_API_KEY"
    ]
    assert not out.exists()
