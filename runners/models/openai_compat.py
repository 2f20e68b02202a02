"""Chat completions against any OpenAI-compatible endpoint (OpenAI, vLLM, llama.cpp server, Ollama...).

Base URL, model and key come from arguments or the environment (`OPENAI_BASE_URL`, `OPENAI_API_KEY`,
`AMNESIA_MODEL`). Concurrency is bounded by a semaphore shared by every thread using the adapter, and the
runner keeps that many calls in flight (`max_in_flight`: one replaying pair per thread); 429, 5xx, timeouts
and connection errors are retried with jittered exponential backoff, never sooner than a `Retry-After`
(seconds or an HTTP date) asks, and when the retries run out the call raises `ModelCallError` with one clear
line: a failed call never becomes an answer.
"""

from __future__ import annotations

import email.utils
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from amnesia.tokens import count_tokens
from runners.models import envopts
from runners.models.cache import with_cache
from tasks.errors import ModelCallError, ModelConfigError
from tasks.modelapi import Model, ModelRequest, ModelResponse

DEFAULT_BASE_URL = "https://api.openai.com/v1"
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class OpenAISettings:
    model: str
    base_url: str = DEFAULT_BASE_URL
    api_key: str | None = None
    timeout: float = 60.0  # seconds per attempt
    max_retries: int = 5  # attempts after the first
    backoff_base: float = 0.5  # seconds; attempt n waits base * 2**n, capped
    backoff_max: float = 30.0
    max_connections: int = 4
    temperature: float = 0.0
    top_p: float = 1.0

    @property
    def public_base_url(self) -> str:
        """The base URL as stored and printed (manifest, logs, cache, errors): without credentials."""
        return envopts.public_url(self.base_url)

    @classmethod
    def from_env(
        cls,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        **overrides: Any,
    ) -> OpenAISettings:
        """Arguments win over the environment; the model id is required from one or the other."""
        model = model or os.environ.get(envopts.MODEL)
        if not model:
            raise ModelConfigError("openai: model: missing; use --model openai:<model> or set AMNESIA_MODEL")
        settings = cls(
            model=model,
            base_url=(base_url or os.environ.get(envopts.BASE_URL) or DEFAULT_BASE_URL).rstrip("/"),
            api_key=api_key or os.environ.get(envopts.API_KEY),
            **{key: value for key, value in overrides.items() if value is not None},
        )
        if settings.max_connections < 1:
            raise ModelConfigError(f"openai: max_connections: must be >= 1, got {settings.max_connections}")
        if settings.timeout <= 0:
            raise ModelConfigError(f"openai: timeout: must be > 0, got {settings.timeout}")
        return settings


class OpenAICompatModel:
    """One adapter instance per run; safe to call from several threads (at most `max_connections` at once).
    `jitter(delay)` spreads the retry waits of calls that failed together (default: uniform in
    [delay/2, delay]), so they do not all come back at the same moment."""

    def __init__(
        self,
        settings: OpenAISettings,
        *,
        sleep: Callable[[float], None] = time.sleep,
        jitter: Callable[[float], float] | None = None,
    ) -> None:
        self.settings = settings
        self.name = f"openai:{settings.model}"
        self._sleep = sleep
        self._jitter = jitter or _equal_jitter
        self._slots = threading.BoundedSemaphore(settings.max_connections)
        self._client: httpx.Client | None = None
        self._client_lock = threading.Lock()
        self._identity: dict[str, Any] | None = None  # asked of the server once per process
        self._identity_lock = threading.Lock()

    @property
    def max_in_flight(self) -> int:
        """How many calls the runner should keep in flight in this process."""
        return self.settings.max_connections

    def describe(self) -> dict:
        # Not `max_connections`: how many calls are in flight changes no answer, so it is no part of the
        # model's identity (a run may resume with another value, and its logs equal a sequential run's).
        s = self.settings
        return {
            "adapter": "openai-compatible",
            "model": s.model,
            "base_url": s.public_base_url,
            "temperature": s.temperature,
            "top_p": s.top_p,
            "timeout": s.timeout,
            "max_retries": s.max_retries,
        }

    def request_payload(self, request: ModelRequest) -> dict[str, Any]:
        """The exact JSON body sent; also the cache identity (candidates are never sent)."""
        payload: dict[str, Any] = {
            "model": self.settings.model,
            "messages": request.messages,
            "temperature": self.settings.temperature,
            "top_p": self.settings.top_p,
            "max_tokens": request.max_tokens,
            "seed": request.seed,
        }
        if request.tools:
            payload["tools"] = request.tools
        return payload

    def cache_identity(self) -> dict[str, Any]:
        """The endpoint (base URL) and the model the server reports serving under the requested id, so a
        cached answer is never served for another server, a dead port, or another model behind the same URL
        (llama.cpp's server answers any id with the model it has loaded). Asked once per process."""
        with self._identity_lock:
            if self._identity is None:
                try:
                    listed = self._http().get("/models")
                except httpx.HTTPError:
                    listed = None
                self._identity = self._identity_from(listed)
            return self._identity

    def _identity_from(self, listed: httpx.Response | None) -> dict[str, Any]:
        return {"base_url": self.settings.public_base_url, "served_model": self._served_model(listed)}

    def _served_model(self, listed: httpx.Response | None) -> str | list[str] | None:
        """From the answer to `GET /models`: the requested id when the server lists it, else every id it
        lists (a server that serves one model whatever is asked); None when the server does not say (no such
        route, down: `listed` None)."""
        if listed is None or not listed.is_success:
            return None
        try:
            ids = sorted(str(entry["id"]) for entry in listed.json()["data"])
        except (ValueError, KeyError, TypeError):
            return None
        if not ids:
            return None
        return self.settings.model if self.settings.model in ids else ids

    def preflight(self) -> None:
        """Fail before a run starts, in one line, where every call would fail: OpenAI's own endpoint without
        a key (ModelConfigError: bad input), a server that cannot be reached (ModelCallError: a failed
        service, no retries: a run would retry every call), or one that refuses the key (HTTP 401/403). The
        answer to its `GET /models` is this process's cache identity (no second request)."""
        settings = self.settings
        if not settings.api_key and settings.base_url == DEFAULT_BASE_URL:
            raise ModelConfigError(
                f"openai: no API key for {DEFAULT_BASE_URL}: set ${envopts.API_KEY} or pass --api-key "
                "(or --base-url for a server that needs none)"
            )
        try:
            listed = self._http().get("/models")
        except httpx.TransportError as exc:
            raise ModelCallError(
                f"openai: {settings.public_base_url} unreachable ({type(exc).__name__}: {exc}); "
                "is the server up and --base-url right?"
            ) from None
        if listed.status_code in (401, 403):
            raise ModelConfigError(
                f"openai: {settings.public_base_url} refused the API key (HTTP {listed.status_code}): "
                f"check --api-key or ${envopts.API_KEY}"
            )
        with self._identity_lock:
            if self._identity is None:
                self._identity = self._identity_from(listed)

    def complete(self, request: ModelRequest) -> ModelResponse:
        payload = self.request_payload(request)
        with self._slots:
            body = self._post_with_retries(payload)
        return parse_chat_completion(body, request)

    def _http(self) -> httpx.Client:
        with self._client_lock:
            if self._client is None:
                key = self.settings.api_key
                headers = {"Authorization": f"Bearer {key}"} if key else {}
                limits = httpx.Limits(max_connections=self.settings.max_connections)
                self._client = httpx.Client(
                    base_url=self.settings.base_url,
                    headers=headers,
                    timeout=self.settings.timeout,
                    limits=limits,
                )
            return self._client

    def _post_with_retries(self, payload: dict[str, Any]) -> dict[str, Any]:
        url = f"{self.settings.public_base_url}/chat/completions"
        attempts = self.settings.max_retries + 1
        last_problem = ""
        for attempt in range(attempts):
            retry_after: float | None = None
            try:
                response = self._http().post("/chat/completions", json=payload)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                last_problem = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code == 200:
                    try:
                        return response.json()
                    except ValueError as exc:
                        raise ModelCallError(f"openai: POST {url}: response is not JSON: {exc}") from exc
                last_problem = f"HTTP {response.status_code}: {_snippet(response.text)}"
                if response.status_code not in RETRYABLE_STATUS:
                    raise ModelCallError(f"openai: POST {url} failed (not retried): {last_problem}")
                retry_after = _retry_after_seconds(response.headers.get("retry-after"))
            if attempt + 1 < attempts:
                self._sleep(self._backoff(attempt, retry_after))
        raise ModelCallError(f"openai: POST {url} failed after {attempts} attempts; last: {last_problem}")

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        delay = self._jitter(min(self.settings.backoff_base * 2**attempt, self.settings.backoff_max))
        if retry_after is not None:  # the server said when: never sooner
            delay = max(delay, retry_after)
        return min(delay, self.settings.backoff_max)

    def __getstate__(self) -> dict[str, Any]:
        # Worker processes rebuild the client and the semaphore.
        return {"settings": self.settings}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["settings"])  # type: ignore[misc]


def parse_chat_completion(body: dict[str, Any], request: ModelRequest) -> ModelResponse:
    """Text, tool calls and token usage from a chat completion body; usage falls back to the local counter."""
    try:
        message = body["choices"][0]["message"]
    except (KeyError, IndexError, TypeError) as exc:
        problem = f"openai: malformed response, no choices[0].message: {_snippet(str(body))}"
        raise ModelCallError(problem) from exc
    text = message.get("content") or ""
    tool_calls = tuple(message.get("tool_calls") or ())
    usage = body.get("usage") or {}
    prompt_tokens = usage.get("prompt_tokens")
    completion_tokens = usage.get("completion_tokens")
    if prompt_tokens is None:
        prompt_tokens = sum(count_tokens(str(m.get("content") or "")) for m in request.messages)
    if completion_tokens is None:
        completion_tokens = count_tokens(text)
    return ModelResponse(
        text=text,
        prompt_tokens=int(prompt_tokens),
        completion_tokens=int(completion_tokens),
        tool_calls=tool_calls,
        raw={"id": body.get("id"), "finish_reason": body["choices"][0].get("finish_reason"), "usage": usage},
    )


_JITTER = random.Random()  # only spreads retry waits in time: nothing logged depends on it


def _equal_jitter(delay: float) -> float:
    return delay / 2 + _JITTER.uniform(0.0, delay / 2)


def _retry_after_seconds(value: str | None, now: Callable[[], float] = time.time) -> float | None:
    """Seconds to wait from a Retry-After header: a number of seconds, or an HTTP date (then measured from
    `now`, the wall clock); None when absent or unreadable."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT
        return None
    return max(0.0, when.timestamp() - now())


def _snippet(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "..."


def catalogue() -> list[tuple[str, str]]:
    """(spec, what it is) for `amnesia-bench list models`."""
    configured = os.environ.get(envopts.BASE_URL)
    endpoint = (
        envopts.public_url(configured)
        if configured
        else f"{DEFAULT_BASE_URL} (set --base-url or ${envopts.BASE_URL})"
    )
    return [("openai/<model id>", f"any OpenAI-compatible chat-completions endpoint, here {endpoint}")]


def from_spec(argument: str | None) -> Model:
    """`openai:<model>` (or `openai` with AMNESIA_MODEL); every other setting from the environment."""
    settings = OpenAISettings.from_env(
        argument,
        max_connections=envopts.env_number(envopts.MAX_CONNECTIONS, int),
        timeout=envopts.env_number(envopts.TIMEOUT, float),
    )
    return with_cache(OpenAICompatModel(settings))
