"""`langgraph-store`: LangGraph's own long-term store (`langgraph.store.sqlite.SqliteStore`, extra
`[langgraph]`) as an arm, with its real TTL (docs/peers.md, "LangGraph's store as an arm").

Each (arm, task) pair starts one worker process (arms/langgraph_worker.py) that holds the store on a SQLite
file in the pair's folder. A write is `store.put` (namespace `("workspace",)` or `("session", <id>)`, the text
as the value), the block is `store.search` over the namespaces the caller sees (newest first, as the store
returns them without an embedding index: the query text does not rank), a forget is `store.delete`.

Time is LangGraph's own. The store's TTL (`default_ttl`, `refresh_on_read`: a `TTLConfig`) decides what
expires, and its `sweep_ttl()` removes it; the arm calls the sweep before every recall (a sweeper that has run
since the clock last moved) and logs a forget with reason `expired` for each memory the store no longer
holds. The store reads two clocks: Python's (`expires_at` on a put) and SQLite's `CURRENT_TIMESTAMP`
(refreshes and the sweep). Both are moved by running the worker under libfaketime (Debian's `faketime`)
with a timestamp file the arm rewrites whenever the simulated clock moves; the arm checks at the start of
every pair that both clocks read the simulated time.

A missing extra, a missing libfaketime, a worker that dies or does not answer within `timeout` stop the pair
with a `pair_error` record (`ArmFailed`, one line) and the run goes on."""

from __future__ import annotations

import datetime
import glob
import importlib.util
import json
import math
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from amnesia.tokens import count_tokens
from arms.arm_kit import OwnStoreArm, fit_block, forget_selects, memory_line, scope_for, visible_to
from arms.arm_options import check_bool, check_duration, check_int, check_number, options_from
from arms.base import ArmContext, ArmFailed, MemoryContext, SessionInfo
from tasks.errors import ArmConfigError
from tasks.logschema import ArmCall
from tasks.modelapi import Message
from tasks.spec import NEVER, ForgetSpec, RememberSpec

ARM = "langgraph-store"
INSTALL_HINT = "pip install 'dsh-memory-forget[langgraph]'"
WORKER = Path(__file__).with_name("langgraph_worker.py")
# The simulated clock's zero, as the worker's wall time: libfaketime takes whole seconds in this form.
EPOCH = datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc)
FAKETIME_LIBRARIES = (  # Debian/Ubuntu's package `faketime` (libfaketime), then a source install
    "/usr/lib/*/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
    "/usr/local/lib/faketime/libfaketime.so.1",
)
RESULT_CHARS = 300  # an arm_call record keeps this much of each answer


def faketime_library() -> str | None:
    """The path of libfaketime's shared library, or None when it is not installed."""
    for pattern in FAKETIME_LIBRARIES:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return None


def langgraph_installed() -> bool:
    """Whether the `[langgraph]` extra (LangGraph's store) is importable here."""
    return importlib.util.find_spec("langgraph") is not None


def faketime_stamp(now: float) -> str:
    """The timestamp-file line for simulated time `now` (seconds from the task start; whole seconds)."""
    moment = EPOCH + datetime.timedelta(seconds=math.floor(now))
    return moment.strftime("%Y-%m-%d %H:%M:%S")


@dataclass(frozen=True)
class LangGraphStoreOptions:
    """Options of `langgraph-store` (`--set langgraph-store.NAME=VALUE`)."""

    default_ttl: Any = None  # the store's TTLConfig default_ttl (`7d`, seconds); None = no TTL at all
    refresh_on_read: bool = True  # TTLConfig refresh_on_read (LangGraph's default): a search renews the ttl
    recall_limit: int = 10  # `store.search(limit=...)` per namespace (LangGraph's default limit)
    timeout: float = 20.0  # seconds allowed for the worker to start, and for each request

    def __post_init__(self) -> None:
        try:
            ttl = check_duration(ARM, "default_ttl", self.default_ttl)
        except ValueError as error:
            raise ArmConfigError(str(error)) from None
        if ttl is not None and ttl <= 0:
            raise ArmConfigError(f"{ARM}: option default_ttl must be > 0 (or none), got {self.default_ttl!r}")
        object.__setattr__(self, "default_ttl", ttl)
        check_bool(ARM, "refresh_on_read", self.refresh_on_read)
        check_int(ARM, "recall_limit", self.recall_limit, minimum=1)
        if check_number(ARM, "timeout", self.timeout) <= 0:
            raise ArmConfigError(f"{ARM}: option timeout must be > 0, got {self.timeout!r}")

    def ttl_config(self) -> dict[str, Any] | None:
        """The store's `TTLConfig` (minutes, as LangGraph counts them), or None: no TTL."""
        if self.default_ttl is None:
            return None
        return {"default_ttl": self.default_ttl / 60.0, "refresh_on_read": self.refresh_on_read}


class StoreWorker:
    """The worker process: JSON lines over pipes, a deadline on every answer, never hung on."""

    def __init__(self, workdir: Path, ttl_config: dict[str, Any] | None, timeout: float, log: Any) -> None:
        self.workdir = workdir
        self.ttl_config = ttl_config
        self.timeout = timeout
        self.log = log  # log(op, request, answer, error): one arm_call record
        self.process: subprocess.Popen[bytes] | None = None
        self.buffer = b""

    @property
    def stamp_file(self) -> Path:
        return self.workdir / "faketime"

    def set_time(self, now: float) -> None:
        """The simulated time into libfaketime's timestamp file, atomically (temp file, rename)."""
        temporary = self.stamp_file.with_name("faketime.tmp")
        temporary.write_text(faketime_stamp(now) + "\n", encoding="utf-8")
        temporary.replace(self.stamp_file)

    def open(self, now: float) -> None:
        if not langgraph_installed():
            raise ArmFailed(f"{ARM}: LangGraph's store is not installed: {INSTALL_HINT}")
        library = faketime_library()
        if library is None:
            raise ArmFailed(f"{ARM}: libfaketime is not installed (Debian: apt-get install faketime)")
        self.set_time(now)
        env = {
            **os.environ,
            "LD_PRELOAD": library,
            "FAKETIME_TIMESTAMP_FILE": str(self.stamp_file),
            "FAKETIME_NO_CACHE": "1",  # read the file on every clock call: the arm moves it between requests
            "FAKETIME_DONT_FAKE_MONOTONIC": "1",  # only wall time is simulated; timeouts stay real
            "TZ": "UTC",  # the stamp is UTC
        }
        command = [sys.executable, str(WORKER), str(self.workdir / "store.db"), json.dumps(self.ttl_config)]
        stderr = (self.workdir / "worker.stderr").open("wb")
        try:
            self.process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env
            )
        except OSError as error:
            raise ArmFailed(f"{ARM}: the worker did not start: {error}") from None
        finally:
            stderr.close()
        ready = self._read("start")
        if "error" in ready:
            self.close()
            if str(ready["error"]).startswith("missing-extra"):
                raise ArmFailed(f"{ARM}: LangGraph's store is not installed: {INSTALL_HINT}")
            raise ArmFailed(f"{ARM}: the worker did not start: {ready['error']}")

    def call(self, op: str, **request: Any) -> Any:
        """The worker's answer to one request; ArmFailed when it errs, dies or does not answer in time."""
        process = self.process
        if process is None or process.stdin is None:
            raise ArmFailed(f"{ARM}: the worker is not running")
        try:
            process.stdin.write((json.dumps({"op": op, **request}, ensure_ascii=False) + "\n").encode())
            process.stdin.flush()
        except OSError:
            raise ArmFailed(f"{ARM}: the worker died ({self._last_stderr()})") from None
        answer = self._read(op)
        self.log(op, request, answer)
        if "error" in answer:
            self.close()
            raise ArmFailed(f"{ARM}: {answer['error']}")
        return answer["ok"]

    def _read(self, op: str) -> dict[str, Any]:
        process = self.process
        assert process is not None and process.stdout is not None
        descriptor = process.stdout.fileno()
        deadline = time.monotonic() + self.timeout  # a real-time bound on a real process, not logic
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            readable = select.select([descriptor], [], [], max(remaining, 0.0))[0] if remaining > 0 else []
            if not readable:
                self.close()
                raise ArmFailed(f"{ARM}: the worker did not answer {op} within {self.timeout:g} s")
            chunk = os.read(descriptor, 1 << 16)
            if not chunk:
                self.close()
                raise ArmFailed(f"{ARM}: the worker died during {op} ({self._last_stderr()})")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def _last_stderr(self) -> str:
        path = self.workdir / "worker.stderr"
        lines = (
            path.read_text(encoding="utf-8", errors="replace").strip().splitlines() if path.exists() else []
        )
        return lines[-1][:200] if lines else "no message"

    def close(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


@dataclass
class _Entry:
    """What the arm knows of one memory it put in the store (for scopes, selectors and the block's ages)."""

    spec: RememberSpec  # the write as the task gave it (content, kind, tags, key, source)
    scope: str
    owner_id: str | None
    written_at: float

    @property
    def never_expires(self) -> bool:
        """A pinned or `ttl: never` write: put without a ttl, so the store never expires nor refreshes it."""
        return self.spec.pin or self.spec.ttl == NEVER

    @property
    def namespace(self) -> tuple[str, ...]:
        """The store's namespace of the memory: one per workspace, one per session."""
        return ("session", self.owner_id) if self.owner_id is not None else ("workspace",)


class LangGraphStoreArm(OwnStoreArm):
    name = ARM
    OPTIONS = LangGraphStoreOptions
    EXTERNAL = True  # needs the [langgraph] extra and libfaketime: not part of `--arms all`

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.config = options_from(LangGraphStoreOptions, ARM, options)
        self.session: SessionInfo | None = None
        self.entries: dict[str, _Entry] = {}
        self.worker: StoreWorker | None = None
        self._next_id = 1

    def describe(self) -> dict[str, Any]:
        return {
            "arm": self.name,
            "base": ARM,
            "default_ttl": self.config.default_ttl,
            "refresh_on_read": self.config.refresh_on_read,
            "recall_limit": self.config.recall_limit,
            "timeout": self.config.timeout,
        }

    # --- lifecycle -------------------------------------------------------------------------------------

    def start_task(self, ctx: ArmContext) -> None:
        super().start_task(ctx)
        ctx.workdir.mkdir(parents=True, exist_ok=True)
        self.entries, self._next_id = {}, 1
        self.worker = StoreWorker(ctx.workdir, self.config.ttl_config(), self.config.timeout, self._log_call)
        self.worker.open(self.now())
        self.check_clock()

    def check_clock(self) -> dict[str, float]:
        """Both clocks the store reads, as seconds of simulated time; ArmFailed unless both are the arm's
        (whole seconds: libfaketime's stamp has no fraction)."""
        seen = self._worker().call("now")
        simulated = {name: value - EPOCH.timestamp() for name, value in seen.items()}
        expected = math.floor(self.now())
        if any(abs(value - expected) >= 1.0 for value in simulated.values()):
            self.close()
            raise ArmFailed(f"{ARM}: libfaketime did not set the store's clock: {simulated} vs {expected}")
        return simulated

    def advance_clock(self, now: float) -> None:
        self._worker().set_time(now)

    def start_session(self, session: SessionInfo) -> None:
        self.session = session

    def end_session(self, session: SessionInfo) -> None:
        for item_id, entry in list(self.entries.items()):
            if entry.scope == "session" and entry.owner_id == session.session_id:
                self._delete(item_id, "agent-disposed")
        self.session = None

    def end_task(self) -> None:
        self.close()

    def close(self) -> None:
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.close()

    # --- memory ----------------------------------------------------------------------------------------

    def remember(self, spec: RememberSpec) -> None:
        session = self._session()
        scope, owner = scope_for(spec, session)
        item_id = f"lg-{self._next_id:04d}"
        self._next_id += 1
        entry = _Entry(spec, scope, owner, self.now())
        # The store's default_ttl applies to every write; a pinned or `never` write is put without a ttl.
        self._worker().call(
            "put",
            namespace=list(entry.namespace),
            key=item_id,
            text=spec.content,
            ttl=None if entry.never_expires else "default",
        )
        self.entries[item_id] = entry
        ttl = None if entry.never_expires else self.config.default_ttl
        expires_at = None if ttl is None else self.now() + ttl
        self.memlog.write_spec(item_id, spec, scope=scope, owner_id=owner, ttl=ttl, expires_at=expires_at)

    def forget(self, spec: ForgetSpec) -> None:
        session = self._session()
        for item_id, entry in list(self.entries.items()):
            if visible_to(entry.scope, entry.owner_id, session) and forget_selects(
                spec, content=entry.spec.content, tags=entry.spec.tags, key=entry.spec.key
            ):
                self._delete(item_id, "manual")

    def memory_context(self, user_text: str, history: list[Message]) -> MemoryContext:
        session = self._session()
        self.sweep()
        namespaces = [("session", session.session_id)]
        if session.agent != "sub":
            namespaces.insert(0, ("workspace",))
        recalled: list[dict[str, Any]] = []
        for namespace in namespaces:
            recalled += self._worker().call(
                "search", namespace=list(namespace), query=user_text, limit=self.config.recall_limit
            )
        known = [item["key"] for item in recalled if item["key"] in self.entries]
        if self.config.default_ttl is not None and self.config.refresh_on_read:
            for item_id in known:  # the search renewed their ttl (the store's refresh_on_read); none: no ttl
                if not self.entries[item_id].never_expires:
                    self.memlog.touch(item_id, reason="refresh_on_read")
        known.sort(key=lambda item_id: (-self.entries[item_id].written_at, item_id))  # newest first
        now = self.now()

        def line(item_id: str) -> str:
            entry = self.entries[item_id]
            return memory_line(
                item_id,
                entry.spec.kind,
                now - entry.written_at,
                entry.spec.content,
                untrusted=entry.spec.source == "auto",
            )

        def render(kept: list[str]) -> str:
            return "\n".join([f"MEMORY ({len(kept)} from LangGraph's store)", *map(line, kept)])

        block, kept = fit_block(render, known, self.context().budget_tokens)
        items = [{"id": item_id, "tokens": count_tokens(line(item_id))} for item_id in kept]
        details = {"recalled": len(recalled)}
        return MemoryContext(block=block, tokens=count_tokens(block), items=items, details=details)

    def sweep(self) -> int:
        """LangGraph's `sweep_ttl()`; each memory the store no longer holds afterwards is logged as a forget
        with reason `expired` (the store decided, the arm only reads what is left). Returns the count."""
        swept = self._worker().call("sweep")
        if swept:
            left = self._worker().call("search", namespace=[], limit=len(self.entries) + 1, refresh_ttl=False)
            held = {item["key"] for item in left}
            for item_id in [item_id for item_id in self.entries if item_id not in held]:
                entry = self.entries.pop(item_id)
                self.memlog.forget(item_id, entry.spec.content, reason="expired")
        return int(swept)

    # --- helpers ---------------------------------------------------------------------------------------

    def _delete(self, item_id: str, reason: str) -> None:
        entry = self.entries.pop(item_id)
        self._worker().call("delete", namespace=list(entry.namespace), key=item_id)
        self.memlog.forget(item_id, entry.spec.content, reason=reason)

    def _log_call(self, op: str, request: dict[str, Any], answer: dict[str, Any]) -> None:
        text = json.dumps(answer.get("ok", answer.get("error")), ensure_ascii=False)
        self.context().log(
            ArmCall(
                server=ARM,
                method="store",
                name=op,
                arguments=request,
                result=text[:RESULT_CHARS],
                error="error" in answer,
            )
        )

    def _worker(self) -> StoreWorker:
        if self.worker is None:
            raise ArmFailed(f"{ARM}: the worker is not running")
        return self.worker

    def _session(self) -> SessionInfo:
        if self.session is None:
            raise RuntimeError(f"{ARM}: called outside a session")
        return self.session
