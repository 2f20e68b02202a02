"""An on-disk response cache for real models, keyed by the exact request.

The key is a SHA-256 of the canonical JSON of what the adapter actually sends (model id, messages, tools,
sampling params, seed) plus an `epoch`, so re-running or resuming a finished run makes no new calls, and a
new epoch asks for fresh samples. SQLite in WAL mode with a busy timeout, so worker processes can share one
file; the connection is opened lazily per process (the wrapper pickles without it).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from runners.models import envopts
from tasks.modelapi import Model, ModelRequest, ModelResponse


def default_cache_path() -> Path:
    """`$AMNESIA_CACHE`, else `$XDG_CACHE_HOME/amnesia-bench/responses.sqlite3` (~/.cache by default)."""
    if os.environ.get(envopts.CACHE_PATH):
        return Path(os.environ[envopts.CACHE_PATH])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "amnesia-bench" / "responses.sqlite3"


@runtime_checkable
class CacheableModel(Protocol):
    """A model that can say exactly what it would send for a request (its cache identity)."""

    name: str

    def describe(self) -> dict: ...

    def complete(self, request: ModelRequest) -> ModelResponse: ...

    def request_payload(self, request: ModelRequest) -> dict[str, Any]: ...


def request_key(payload: dict[str, Any], epoch: int) -> str:
    canonical = json.dumps({"payload": payload, "epoch": epoch}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """key -> ModelResponse, persisted in one SQLite file."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = -1

    def _connection(self) -> sqlite3.Connection:
        # A connection must not cross a fork: reopen in each process.
        if self._conn is None or self._pid != os.getpid():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=60, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, "
                "response TEXT NOT NULL)"
            )
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def get(self, key: str) -> ModelResponse | None:
        with self._lock:
            query = "SELECT response FROM responses WHERE key = ?"
            row = self._connection().execute(query, (key,)).fetchone()
        if row is None:
            return None
        stored = json.loads(row[0])
        return ModelResponse(
            text=stored["text"],
            prompt_tokens=stored["prompt_tokens"],
            completion_tokens=stored["completion_tokens"],
            tool_calls=tuple(stored["tool_calls"]),
            cached=True,
            raw=stored["raw"],
        )

    def put(self, key: str, model: str, response: ModelResponse) -> None:
        stored = {
            "text": response.text,
            "prompt_tokens": response.prompt_tokens,
            "completion_tokens": response.completion_tokens,
            "tool_calls": list(response.tool_calls),
            "raw": response.raw,
        }
        with self._lock:
            self._connection().execute(
                "INSERT OR REPLACE INTO responses (key, model, response) VALUES (?, ?, ?)",
                (key, model, json.dumps(stored, ensure_ascii=False)),
            )

    def __len__(self) -> int:
        with self._lock:
            return self._connection().execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"])  # type: ignore[misc]


@dataclass
class CachedModel:
    """Wraps a real model: answers from the cache when the exact request was seen before (`cached=True`)."""

    inner: CacheableModel
    cache: ResponseCache
    epoch: int = 0
    hits: int = field(default=0, compare=False)
    misses: int = field(default=0, compare=False)

    @property
    def name(self) -> str:
        return self.inner.name

    def describe(self) -> dict:
        # The cache is transparent (same request, same answer), so a run may resume with or without it;
        # only a non-default epoch, which asks for other samples, is part of the model's identity.
        described = self.inner.describe()
        return {**described, "cache_epoch": self.epoch} if self.epoch else described

    def complete(self, request: ModelRequest) -> ModelResponse:
        key = request_key(self.inner.request_payload(request), self.epoch)
        hit = self.cache.get(key)
        if hit is not None:
            self.hits += 1
            return hit
        self.misses += 1
        response = self.inner.complete(request)
        self.cache.put(key, self.inner.name, response)
        return response


def with_cache(model: CacheableModel) -> Model:
    """The model behind the on-disk cache, unless `AMNESIA_NO_CACHE` (`--no-cache`) is set."""
    if envopts.env_flag(envopts.NO_CACHE):
        return model
    epoch = envopts.env_number(envopts.CACHE_EPOCH, int) or 0
    return CachedModel(model, ResponseCache(default_cache_path()), epoch=epoch)
