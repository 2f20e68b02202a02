"""A credential in `--base-url` (`http://user:KEY@host/v1`, `?api-key=KEY`) is used to call the endpoint and
written nowhere: not in manifest.json, report.md, the session logs, the response cache or `cache stats`; the
cache file is its owner's only (0600) and a new run folder 0700."""

from __future__ import annotations

import base64
import socket
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amnesia_bench.cli import app
from amnesia_bench.cli_run import _without_secrets
from runners.models import envopts
from runners.models.envopts import public_url
from runners.models.openai_compat import OpenAICompatModel, OpenAISettings
from tasks.errors import ModelCallError
from tasks.modelapi import ModelRequest

PLANTED = "PLANTEDkey7Qx2Vb9Lm4"  # synthetic
USER = "deploybot"


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A private cache file in a folder that does not exist yet; the flags `run` exports are undone after."""
    for name in (envopts.BASE_URL, envopts.API_KEY, envopts.MODEL, envopts.NO_CACHE, envopts.CACHE_EPOCH):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "cache-home" / "responses.sqlite3"
    monkeypatch.setenv(envopts.CACHE_PATH, str(path))
    return path


def _with_key(base_url: str) -> str:
    return base_url.replace("http://", f"http://{USER}:{PLANTED}@", 1)


def test_a_key_in_the_base_url_reaches_the_server_and_no_file_of_the_run_or_cache(
    drink_task, preference_task, write_tasks, openai_stub, cache, tmp_path
):
    tasks = write_tasks(tmp_path / "tasks", [drink_task, preference_task])
    out = tmp_path / "run"
    url = _with_key(openai_stub.base_url)
    args = ["run", "--no-progress", "--tasks", str(tasks), "--arms", "no-memory,amnesia"]
    args += ["--model", "openai/stub-model", "--base-url", url, "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    basic = "Basic " + base64.b64encode(f"{USER}:{PLANTED}".encode()).decode()
    assert openai_stub.requests and all(
        headers.get("authorization") == basic for headers in openai_stub.headers
    )  # the key was used
    stats = CliRunner().invoke(app, ["cache", "stats"])
    assert stats.exit_code == 0 and openai_stub.base_url in stats.output

    files = [path for path in out.rglob("*") if path.is_file()]
    files += [path for path in cache.parent.iterdir() if path.is_file()]
    assert (out / "manifest.json") in files and (out / "report" / "report.md") in files
    assert any(path.suffix == ".jsonl" for path in files) and cache in files
    for text in (result.output, stats.output, *(path.read_bytes().decode("latin-1") for path in files)):
        assert PLANTED not in text and USER not in text
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600
    assert stat.S_IMODE(cache.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(out.stat().st_mode) == 0o700


def test_a_failed_call_names_the_endpoint_without_its_key():
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = OpenAISettings(
        model="m", base_url=f"http://{USER}:{PLANTED}@127.0.0.1:{port}/v1", max_retries=0
    )
    model = OpenAICompatModel(settings)
    request = ModelRequest(messages=[{"role": "user", "content": "hi"}], max_tokens=8, seed=0)
    with pytest.raises(ModelCallError) as error:
        model.complete(request)
    assert f"127.0.0.1:{port}/v1" in str(error.value) and PLANTED not in str(error.value)
    assert PLANTED not in repr(model.describe()) and USER not in repr(model.describe())


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:KEY@host:8080/v1", "http://host:8080/v1"),
        ("https://:KEY@[::1]/v1", "https://[::1]/v1"),
        (
            "https://res.openai.azure.com/openai?api-version=2024-06-01&api-key=KEY",
            "https://res.openai.azure.com/openai?api-version=2024-06-01&api-key=REDACTED",
        ),
        ("https://host/v1?key=KEY&access_token=KEY", "https://host/v1?key=REDACTED&access_token=REDACTED"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("not a url", "not a url"),
    ],
)
def test_public_url_drops_userinfo_and_credential_parameters(url, shown):
    assert public_url(url) == shown


def test_the_manifest_argv_keeps_no_key_from_a_url():
    argv = ["run", "--base-url", "http://u:KEY@h/v1", "--base-url=http://u:KEY@h/v1", "--api-key", "KEY"]
    assert "KEY" not in " ".join(_without_secrets(argv))
