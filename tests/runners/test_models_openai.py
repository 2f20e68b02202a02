"""The OpenAI-compatible adapter and the response cache against a real HTTP server on 127.0.0.1 (a tiny
`http.server` per test, the `openai_stub` fixture in conftest.py): retries, 429 handling, the final error,
bounded concurrency, settings from the environment, and cache hits."""

from __future__ import annotations

import json
import pickle
import socket
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runners.models.cache import CachedModel, ResponseCache, request_key
from runners.models.openai_compat import OpenAICompatModel, OpenAISettings
from runners.models.stub_server import StubServer
from tasks.errors import ModelCallError, ModelConfigError
from tasks.modelapi import ModelRequest


def make_model(openai_stub, sleeps: list[float] | None = None, **overrides: Any) -> OpenAICompatModel:
    options: dict[str, Any] = {"max_retries": 3, "backoff_base": 0.01, "timeout": 5.0, **overrides}
    settings_ = OpenAISettings(
        model="stub-model", base_url=openai_stub.base_url, api_key="sk-test", **options
    )
    recorder = sleeps.append if sleeps is not None else (lambda _seconds: None)
    return OpenAICompatModel(settings_, sleep=recorder, jitter=lambda delay: delay)  # exact waits to check


def ask(text: str, seed: int = 0, tools: list[dict] | None = None) -> ModelRequest:
    messages = [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": text}]
    return ModelRequest(messages=messages, seed=seed, tools=tools, max_tokens=32)


def test_success_sends_exact_request_and_takes_usage_from_response(openai_stub):
    response = make_model(openai_stub).complete(ask("What is the drink?", seed=7))
    assert response.text == "echo: What is the drink?"
    assert (response.prompt_tokens, response.completion_tokens, response.cached) == (11, 3, False)
    sent = openai_stub.requests[0]
    assert sent["model"] == "stub-model"
    assert sent["messages"][-1] == {"role": "user", "content": "What is the drink?"}
    assert (sent["temperature"], sent["seed"], sent["max_tokens"]) == (0.0, 7, 32)
    assert "tools" not in sent
    assert openai_stub.headers[0]["authorization"] == "Bearer sk-test"


def test_tool_calls_are_returned_and_tools_sent(stub_reply, openai_stub):
    call = {"id": "c1", "type": "function", "function": {"name": "amnesia_status", "arguments": "{}"}}
    openai_stub.script(
        stub_reply(
            body={"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]}}]}
        )
    )
    tools = [{"type": "function", "function": {"name": "amnesia_status", "parameters": {"type": "object"}}}]
    response = make_model(openai_stub).complete(ask("status?", tools=tools))
    assert response.tool_calls == (call,)
    assert response.text == ""
    assert openai_stub.requests[0]["tools"] == tools
    # No usage in the body: the documented local counter fills in rather than reporting zero.
    assert response.prompt_tokens > 0


def test_429_is_retried_honouring_retry_after(stub_reply, openai_stub):
    openai_stub.script(
        stub_reply(429, {"error": "slow down"}, {"retry-after": "0.2"}), stub_reply(503, {"error": "busy"})
    )
    sleeps: list[float] = []
    response = make_model(openai_stub, sleeps).complete(ask("hello"))
    assert response.text == "echo: hello"
    assert len(openai_stub.requests) == 3
    # First wait honours Retry-After (0.2 s > backoff 0.01 s); the second is plain exponential backoff.
    assert sleeps == [0.2, 0.02]


def test_backoff_is_exponential_and_capped(stub_reply, openai_stub):
    openai_stub.script(*[stub_reply(500, {"error": "boom"})] * 5)
    sleeps: list[float] = []
    make_model(openai_stub, sleeps, max_retries=5, backoff_base=1.0, backoff_max=5.0).complete(ask("x"))
    assert sleeps == [1.0, 2.0, 4.0, 5.0, 5.0]


def test_retries_exhausted_raise_a_clear_final_error(stub_reply, openai_stub):
    openai_stub.script(*[stub_reply(429, {"error": "rate limited"})] * 10)
    with pytest.raises(ModelCallError) as caught:
        make_model(openai_stub, max_retries=2).complete(ask("x"))
    message = str(caught.value)
    assert "after 3 attempts" in message and "HTTP 429" in message and "rate limited" in message
    assert "\n" not in message
    assert len(openai_stub.requests) == 3


def test_client_errors_are_not_retried(stub_reply, openai_stub):
    openai_stub.script(stub_reply(401, {"error": "bad key"}))
    with pytest.raises(ModelCallError, match=r"not retried.*HTTP 401"):
        make_model(openai_stub).complete(ask("x"))
    assert len(openai_stub.requests) == 1


def test_timeout_is_retried(stub_reply, openai_stub):
    openai_stub.script(stub_reply(delay=1.0))
    response = make_model(openai_stub, timeout=0.3).complete(ask("late"))
    assert response.text == "echo: late"
    assert len(openai_stub.requests) == 2


def test_connection_refused_ends_in_clear_error(openai_stub):
    base_url = openai_stub.base_url
    openai_stub.stop()  # nothing listens on that port any more
    settings_ = OpenAISettings(model="m", base_url=base_url, max_retries=1, backoff_base=0.0)
    with pytest.raises(ModelCallError, match="after 2 attempts; last: ConnectError"):
        OpenAICompatModel(settings_, sleep=lambda _s: None).complete(ask("x"))


def test_malformed_body_is_an_error_not_an_answer(stub_reply, openai_stub):
    openai_stub.script(stub_reply(body={"object": "nothing useful"}))
    with pytest.raises(ModelCallError, match="malformed response"):
        make_model(openai_stub).complete(ask("x"))
    openai_stub.script(stub_reply(body="<html>proxy error</html>"))
    with pytest.raises(ModelCallError, match="not JSON"):
        make_model(openai_stub).complete(ask("x"))


def test_concurrency_is_bounded_by_max_connections(stub_reply, openai_stub):
    openai_stub.script(*[stub_reply(delay=0.15)] * 8)
    model = make_model(openai_stub, max_connections=2)
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda i: model.complete(ask(f"q{i}")).text, range(8)))
    assert answers == [f"echo: q{i}" for i in range(8)]
    assert openai_stub.peak_in_flight == 2


def test_settings_from_environment(monkeypatch, openai_stub):
    monkeypatch.setenv("OPENAI_BASE_URL", openai_stub.base_url + "/")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("AMNESIA_MODEL", "env-model")
    settings_ = OpenAISettings.from_env(max_connections=3, timeout=None)
    assert (settings_.model, settings_.base_url, settings_.api_key) == (
        "env-model",
        openai_stub.base_url,
        "sk-env",
    )
    assert settings_.max_connections == 3 and settings_.timeout == 60.0
    # Explicit arguments win over the environment.
    assert OpenAISettings.from_env("flag-model", api_key="sk-flag").api_key == "sk-flag"
    OpenAICompatModel(settings_).complete(ask("env"))
    assert openai_stub.requests[0]["model"] == "env-model"
    assert openai_stub.headers[0]["authorization"] == "Bearer sk-env"


def test_bad_settings_are_one_line_config_errors(monkeypatch):
    monkeypatch.delenv("AMNESIA_MODEL", raising=False)
    with pytest.raises(ModelConfigError, match="model: missing"):
        OpenAISettings.from_env()
    with pytest.raises(ModelConfigError, match="max_connections: must be >= 1, got 0"):
        OpenAISettings.from_env("m", max_connections=0)


# --- the response cache -------------------------------------------------------------------------------------


def cached(openai_stub, path: Path, epoch: int = 0) -> CachedModel:
    return CachedModel(make_model(openai_stub), ResponseCache(path), epoch=epoch)


def test_cache_hit_makes_no_new_call_even_in_a_new_process_state(openai_stub, tmp_path):
    db = tmp_path / "responses.sqlite3"
    first = cached(openai_stub, db)
    miss = first.complete(ask("What is the drink?"))
    hit = first.complete(ask("What is the drink?"))
    assert len(openai_stub.requests) == 1
    assert (miss.cached, hit.cached) == (False, True)
    assert (hit.text, hit.prompt_tokens, hit.completion_tokens) == (miss.text, 11, 3)
    assert (first.hits, first.misses) == (1, 1)
    # A re-run (fresh adapter and cache objects over the same file) is served entirely from disk.
    rerun = cached(openai_stub, db)
    assert rerun.complete(ask("What is the drink?")).cached
    assert len(openai_stub.requests) == 1


def test_cache_key_covers_messages_seed_epoch_and_sampling(openai_stub, tmp_path):
    db = tmp_path / "responses.sqlite3"
    model = cached(openai_stub, db)
    model.complete(ask("a"))
    model.complete(ask("b"))
    model.complete(ask("a", seed=1))
    cached(openai_stub, db, epoch=1).complete(ask("a"))
    warmer = CachedModel(make_model(openai_stub, temperature=0.7), ResponseCache(db))
    warmer.complete(ask("a"))
    assert len(openai_stub.requests) == 5
    assert len(ResponseCache(db)) == 5


def test_failed_calls_are_not_cached(stub_reply, openai_stub, tmp_path):
    openai_stub.script(*[stub_reply(500, {"error": "down"})] * 4)
    model = cached(openai_stub, tmp_path / "c.sqlite3")
    with pytest.raises(ModelCallError):
        model.complete(ask("x"))
    assert model.complete(ask("x")).cached is False
    assert len(openai_stub.requests) == 5


def test_a_dead_port_is_never_served_from_another_endpoints_cache(openai_stub, tmp_path):
    db = tmp_path / "responses.sqlite3"
    cached(openai_stub, db).complete(ask("What is the drink?"))
    dead_settings = OpenAISettings(model="stub-model", base_url=_dead_base_url(), max_retries=0, timeout=5.0)
    dead = CachedModel(OpenAICompatModel(dead_settings), ResponseCache(db))
    with pytest.raises(ModelCallError, match="ConnectError"):
        dead.complete(ask("What is the drink?"))
    assert (dead.hits, dead.misses) == (0, 1)


def test_two_servers_with_the_same_model_id_do_not_share_answers(openai_stub, tmp_path):
    db = tmp_path / "responses.sqlite3"
    other = StubServer().start()
    try:
        cached(openai_stub, db).complete(ask("a"))
        answer = cached(other, db).complete(ask("a"))
        assert answer.cached is False and len(other.requests) == 1
        assert cached(other, db).complete(ask("a")).cached  # each endpoint keeps its own answers
    finally:
        other.stop()
    assert {json.loads(entry.identity)["base_url"] for entry in ResponseCache(db).entries()} == {
        openai_stub.base_url,
        other.base_url,
    }


def test_another_model_behind_the_same_url_is_a_cache_miss(openai_stub, tmp_path):
    """llama.cpp's server answers any model id with whatever it has loaded: what it lists decides."""
    db = tmp_path / "responses.sqlite3"
    openai_stub.served = ["/models/qwen-7b.gguf"]
    cached(openai_stub, db).complete(ask("a"))
    assert cached(openai_stub, db).complete(ask("a")).cached
    openai_stub.served = ["/models/llama-8b.gguf"]  # the same URL, restarted with another model
    assert cached(openai_stub, db).complete(ask("a")).cached is False
    assert len(openai_stub.requests) == 2


@pytest.mark.parametrize(
    ("served", "expected"),
    [(["other", "stub-model"], "stub-model"), (["/m/x.gguf"], ["/m/x.gguf"]), (None, None), ([], None)],
)
def test_the_served_model_is_asked_once_and_falls_back_to_none(openai_stub, served, expected):
    openai_stub.served = served
    model = make_model(openai_stub)
    assert model.cache_identity() == {"base_url": openai_stub.base_url, "served_model": expected}
    model.cache_identity()
    assert openai_stub.model_lists == 1


def test_cache_stats_and_clear(openai_stub, tmp_path):
    db = tmp_path / "responses.sqlite3"
    model = cached(openai_stub, db)
    model.complete(ask("a"))
    model.complete(ask("b"))
    (entry,) = ResponseCache(db).entries()
    assert (entry.model, entry.responses) == ("openai:stub-model", 2)
    assert ResponseCache(db).clear(model="openai:other") == 0
    assert ResponseCache(db).clear() == 2
    assert len(ResponseCache(db)) == 0 and model.complete(ask("a")).cached is False


def test_a_cache_file_from_before_endpoint_keys_opens_and_its_old_answers_are_never_served(
    openai_stub, tmp_path
):
    db = tmp_path / "old.sqlite3"
    with sqlite3.connect(db) as conn:
        conn.execute(
            "CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, response TEXT NOT NULL)"
        )
        conn.execute("INSERT INTO responses VALUES ('k', 'openai:stub-model', '{}')")
    assert cached(openai_stub, db).complete(ask("a")).cached is False
    assert [(e.identity == "", e.responses) for e in ResponseCache(db).entries()] == [(True, 1), (False, 1)]


def _dead_base_url() -> str:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_cached_model_pickles_without_its_connection(openai_stub, tmp_path):
    model = cached(openai_stub, tmp_path / "c.sqlite3")
    model.complete(ask("x"))
    clone = pickle.loads(pickle.dumps(model))
    assert clone.complete(ask("x")).cached
    assert clone.describe() == model.inner.describe()  # transparent: resume works with or without it
    assert cached(openai_stub, tmp_path / "c.sqlite3", epoch=2).describe()["cache_epoch"] == 2


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=100, deadline=None)
@given(payload=st.dictionaries(st.text(max_size=6), json_values, max_size=5), epoch=st.integers(0, 3))
def test_request_key_ignores_dict_order_and_separates_epochs_and_endpoints(payload, epoch):
    here = {"base_url": "http://a/v1", "served_model": "m"}
    reordered = dict(reversed(list(payload.items())))
    assert request_key(payload, epoch, here) == request_key(reordered, epoch, here)
    assert request_key(payload, epoch, here) != request_key(payload, epoch + 1, here)
    assert request_key(json.loads(json.dumps(payload)), epoch, here) == request_key(payload, epoch, here)
    assert request_key(payload, epoch, here) != request_key(
        payload, epoch, {**here, "base_url": "http://b/v1"}
    )
    assert request_key(payload, epoch, here) != request_key(payload, epoch, {**here, "served_model": None})


def test_retry_waits_are_jittered_below_the_backoff_but_never_below_retry_after(stub_reply, openai_stub):
    openai_stub.script(
        *[stub_reply(503, {"error": "busy"})] * 3, stub_reply(429, {"error": "slow"}, {"retry-after": "0.5"})
    )
    sleeps: list[float] = []
    settings_ = OpenAISettings(
        model="stub-model", base_url=openai_stub.base_url, max_retries=5, backoff_base=0.1, backoff_max=5.0
    )
    OpenAICompatModel(settings_, sleep=sleeps.append).complete(ask("x"))
    backoffs = [0.1, 0.2, 0.4]
    assert all(full / 2 <= wait <= full for wait, full in zip(sleeps[:3], backoffs, strict=True))
    assert sleeps[3] >= 0.5  # the server's Retry-After wins over a shorter jittered wait


def test_retry_after_reads_seconds_and_http_dates():
    from runners.models.openai_compat import _retry_after_seconds

    now = 1445412480.0  # Wed, 21 Oct 2015 07:28:00 GMT
    assert _retry_after_seconds("12", lambda: now) == 12.0
    assert _retry_after_seconds("Wed, 21 Oct 2015 07:28:30 GMT", lambda: now) == 30.0
    assert _retry_after_seconds("Wed, 21 Oct 2015 07:27:00 GMT", lambda: now) == 0.0  # already past
    assert _retry_after_seconds("soon", lambda: now) is None
    assert _retry_after_seconds(None, lambda: now) is None
