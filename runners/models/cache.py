"""An on-disk response cache for real models, keyed by the exact request and the endpoint that answers it.

The key is a SHA-256 of the canonical JSON of what the adapter actually sends (model id, messages, tools,
sampling params, seed), of the adapter's `cache_identity()` (for an HTTP endpoint: its base URL and the model
the server reports serving), and of an `epoch`. So re-running or resuming a finished run against the same
endpoint makes no new calls, a new epoch asks for fresh samples, and an answer is never served for another
endpoint (two servers with the same model id, or a dead port) or for another model behind the same URL.
SQLite in WAL mode with a busy timeout, so worker processes can share one file; the connection is opened
lazily per process (the wrapper pickles without it). `amnesia-bench cache stats|clear` shows and empties it.
"""

from __future__ import annotations

import contextlib
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


def _create_private(path: Path) -> None:
    """Make the cache file, if missing, readable by its owner only (0600, in a folder made 0700): it holds
    every prompt and answer of the runs that used it. SQLite gives its -wal and -shm files the same mode."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


@runtime_checkable
class CacheableModel(Protocol):
    """A model that can say exactly what it would send for a request (its cache identity)."""

    name: str

    def describe(self) -> dict: ...

    def complete(self, request: ModelRequest) -> ModelResponse: ...

    def request_payload(self, request: ModelRequest) -> dict[str, Any]:
        """The exact request the model would send or run (messages, sampling, seed...)."""
        ...

    def cache_identity(self) -> dict[str, Any]:
        """What else decides the answer: e.g. the endpoint's base URL and the model it reports serving."""
        ...


def request_key(payload: dict[str, Any], epoch: int, identity: dict[str, Any]) -> str:
    """The cache key: SHA-256 of the canonical JSON of the request, the model's identity and the epoch."""
    canonical = json.dumps(
        {"payload": payload, "identity": identity, "epoch": epoch}, sort_keys=True, ensure_ascii=False
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CacheEntries:
    """How many responses one (model, identity) pair has in the cache."""

    model: str  # the model's name, e.g. openai:gpt-4o-mini
    identity: str  # its cache identity as JSON, e.g. {"base_url": ..., "served_model": ...}
    responses: int


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
            _create_private(self.path)
            conn = sqlite3.connect(self.path, timeout=60, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, "
                "response TEXT NOT NULL, identity TEXT NOT NULL DEFAULT '')"
            )
            columns = {row[1] for row in conn.execute("PRAGMA table_info(responses)")}
            if "identity" not in columns:  # a cache file written before answers were keyed by endpoint
                conn.execute("ALTER TABLE responses ADD COLUMN identity TEXT NOT NULL DEFAULT ''")
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

    def put(self, key: str, model: str, response: ModelResponse, identity: dict[str, Any]) -> None:
        stored = {
            "text": response.text,
            "prompt_tokens": response.prompt_tokens,
            "completion_tokens": response.completion_tokens,
            "tool_calls": list(response.tool_calls),
            "raw": response.raw,
        }
        with self._lock:
            self._connection().execute(
                "INSERT OR REPLACE INTO responses (key, model, response, identity) VALUES (?, ?, ?, ?)",
                (
                    key,
                    model,
                    json.dumps(stored, ensure_ascii=False),
                    json.dumps(identity, sort_keys=True, ensure_ascii=False),
                ),
            )

    def __len__(self) -> int:
        with self._lock:
            return self._connection().execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def entries(self) -> list[CacheEntries]:
        """Response counts per model and identity (entries from before identities were kept: identity '')."""
        query = "SELECT model, identity, COUNT(*) FROM responses GROUP BY 1, 2 ORDER BY 1, 2"
        with self._lock:
            rows = self._connection().execute(query).fetchall()
        return [CacheEntries(model, identity, count) for model, identity, count in rows]

    def clear(self, model: str | None = None) -> int:
        """Delete every response (or only `model`'s) and give the space back; returns how many went."""
        with self._lock:
            conn = self._connection()
            if model is None:
                deleted = conn.execute("DELETE FROM responses").rowcount
            else:
                deleted = conn.execute("DELETE FROM responses WHERE model = ?", (model,)).rowcount
            conn.execute("VACUUM")
        return deleted

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
    # The runner calls from several threads at once (`max_in_flight`): the counts are kept exact.
    _counting: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.inner.name

    def __getstate__(self) -> dict[str, Any]:
        return {
            name: value for name, value in vars(self).items() if name != "_counting"
        }  # a lock won't pickle

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state, _counting=threading.Lock())

    @property
    def max_in_flight(self) -> int:
        """The wrapped model's (1 when it does not say)."""
        return getattr(self.inner, "max_in_flight", 1)

    def preflight(self) -> None:
        """The wrapped model's check before a run (runners.runner.preflight), if it has one."""
        check = getattr(self.inner, "preflight", None)
        if check is not None:
            check()

    def describe(self) -> dict:
        # The cache is transparent (same request, same answer), so a run may resume with or without it;
        # only a non-default epoch, which asks for other samples, is part of the model's identity.
        described = self.inner.describe()
        return {**described, "cache_epoch": self.epoch} if self.epoch else described

    def complete(self, request: ModelRequest) -> ModelResponse:
        identity = self.inner.cache_identity()
        key = request_key(self.inner.request_payload(request), self.epoch, identity)
        hit = self.cache.get(key)
        with self._counting:
            if hit is not None:
                self.hits += 1
            else:
                self.misses += 1
        if hit is not None:
            return hit
        response = self.inner.complete(request)
        self.cache.put(key, self.inner.name, response, identity)
        return response


def with_cache(model: CacheableModel) -> Model:
    """The model behind the on-disk cache, unless `AMNESIA_NO_CACHE` (`--no-cache`) is set."""
    if envopts.env_flag(envopts.NO_CACHE):
        return model
    epoch = envopts.env_number(envopts.CACHE_EPOCH, int) or 0
    return CachedModel(model, ResponseCache(default_cache_path()), epoch=epoch)
