"""A synchronous client for one MCP server over stdio, for arms (whose protocol is synchronous): the official
`mcp` SDK's async client run in an anyio blocking portal (a thread with its own event loop).

Every step is bounded: starting the server and `initialize`, each call, and closing (the SDK closes the
server's stdin, then terminates and kills it). Any failure — the command cannot start, the server exits, a
tool is missing, a call times out — raises `ArmFailed` with one line, after which the connection is closed
and never waited on again. Each call is reported to `on_call` (what crossed the wire, for the session log)."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal

from arms.base import ArmFailed

RESULT_SUMMARY_CHARS = 300  # how much of a result the session log keeps


@dataclass(frozen=True)
class WireCall:
    """One request that crossed the wire, as the session log records it (`tasks.logschema.ArmCall`)."""

    server: str  # which connection (e.g. "server-memory", "amnesia s2 sub-agent")
    method: str  # tools/call | resources/read | initialize
    name: str  # the tool, the resource URI or the server command
    arguments: dict[str, Any]
    result: str  # the result's text, cut to RESULT_SUMMARY_CHARS
    error: bool
    wall_ms: float


def summary(text: str) -> str:
    """`text` on one line, cut to RESULT_SUMMARY_CHARS."""
    flat = " ".join(text.split())
    return flat if len(flat) <= RESULT_SUMMARY_CHARS else flat[: RESULT_SUMMARY_CHARS - 1] + "…"


class McpConnection:
    """One running server and its initialized client session."""

    def __init__(
        self,
        label: str,
        command: list[str],
        *,
        env: Mapping[str, str],
        cwd: Path,
        timeout: float,
        on_call: Callable[[WireCall], None],
    ) -> None:
        self.label = label
        self.command = command
        self.env = dict(env)
        self.cwd = cwd
        self.timeout = timeout
        self.on_call = on_call
        self.tools: dict[str, Any] = {}  # name -> the listed Tool
        self._stack = contextlib.ExitStack()
        self._portal: BlockingPortal | None = None
        self._session: Any = None
        self._started = 0.0  # perf_counter() when the request in hand was sent

    def open(self) -> McpConnection:
        """Start the server, initialize the session and list its tools; ArmFailed if any step fails."""
        started = time.perf_counter()
        try:
            self._portal = self._stack.enter_context(start_blocking_portal())
            self._session = self._stack.enter_context(
                self._portal.wrap_async_context_manager(self._connect())
            )
            listed = self._portal.call(self._bounded, self._session.list_tools)
        except BaseException as error:
            self.close()
            self._report("initialize", " ".join(self.command), {}, _one_line(error), True, started)
            raise ArmFailed(
                f"{self.label}: server did not start ({' '.join(self.command)}): {_one_line(error)}"
            ) from None
        self.tools = {tool.name: tool for tool in listed.tools}
        names = ", ".join(sorted(self.tools))
        self._report("initialize", " ".join(self.command), {}, f"tools: {names}", False, started)
        return self

    @contextlib.asynccontextmanager
    async def _connect(self) -> AsyncIterator[Any]:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=self.command[0], args=self.command[1:], env=self.env, cwd=self.cwd
        )
        with (self.cwd / "server-stderr.log").open("a", encoding="utf-8") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                with anyio.fail_after(self.timeout):
                    await session.initialize()
                yield session

    async def _bounded(self, call: Callable[..., Any], *args: Any) -> Any:
        with anyio.fail_after(self.timeout):
            return await call(*args)

    def require(self, *names: str) -> None:
        """ArmFailed naming the first of `names` the server does not list as a tool."""
        for name in names:
            if name not in self.tools:
                listed = ", ".join(sorted(self.tools)) or "none"
                self.close()
                raise ArmFailed(f"{self.label}: the server has no tool {name!r} (it lists: {listed})")

    def call_tool(self, name: str, arguments: dict[str, Any]) -> tuple[Any, bool]:
        """(the tool's JSON result — structured content, else its text parsed as JSON, else the text —,
        whether the server marked it an error)."""
        result = self._request("tools/call", name, arguments, lambda s: s.call_tool(name, arguments))
        text = "\n".join(getattr(part, "text", "") for part in result.content)
        value: Any = result.structured_content
        if value is None:
            try:
                value = json.loads(text)
            except ValueError:
                value = text
        self._report("tools/call", name, arguments, text, bool(result.is_error), self._started)
        return value, bool(result.is_error)

    def call_checked(self, name: str, arguments: dict[str, Any]) -> Any:
        """`call_tool` for a call that must succeed (a recall, a forget): an error answer is ArmFailed."""
        value, failed = self.call_tool(name, arguments)
        if failed:
            self.close()
            raise ArmFailed(f"{self.label}: tool {name} answered an error: {summary(str(value))}")
        return value

    def read_resource(self, uri: str) -> str:
        """The text of a resource."""
        result = self._request("resources/read", uri, {}, lambda s: s.read_resource(uri))
        text = "".join(getattr(part, "text", "") for part in result.contents)
        self._report("resources/read", uri, {}, text, False, self._started)
        return text

    def _request(self, method: str, name: str, arguments: dict[str, Any], send: Callable[[Any], Any]) -> Any:
        if self._portal is None or self._session is None:
            raise ArmFailed(f"{self.label}: the server is closed")
        self._started = time.perf_counter()
        session = self._session

        async def request() -> Any:
            return await send(session)

        try:
            return self._portal.call(self._bounded, request)
        except BaseException as error:
            reason = f"no answer within {self.timeout:g}s" if isinstance(error, TimeoutError) else None
            message = reason or _one_line(error)
            self._report(method, name, arguments, message, True, self._started)
            self.close()
            raise ArmFailed(f"{self.label}: {method} {name}: {message}") from None

    def _report(
        self, method: str, name: str, arguments: dict[str, Any], text: str, error: bool, started: float
    ) -> None:
        wall_ms = (time.perf_counter() - started) * 1000.0
        self.on_call(WireCall(self.label, method, name, dict(arguments), summary(text), error, wall_ms))

    def close(self) -> None:
        """Stop the server (bounded by the SDK's own termination) and the portal; safe to call twice."""
        stack, self._stack = self._stack, contextlib.ExitStack()
        self._session = None
        self._portal = None
        with contextlib.suppress(BaseException):
            stack.close()


def _one_line(error: BaseException) -> str:
    """An exception as one line (the innermost of an exception group)."""
    while getattr(error, "exceptions", None):  # an exception group (anyio task groups raise them)
        error = error.exceptions[0]  # type: ignore[attr-defined]
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__


def server_env(extra: Mapping[str, str]) -> dict[str, str]:
    """The environment a server starts with: this process's (PATH, PYTHONPATH...) plus the profile's."""
    return {**os.environ, **extra}
