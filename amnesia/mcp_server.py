"""`dsh-memory-forget mcp`: one store served over the Model Context Protocol (the official `mcp` SDK, 2.x).

Imported only by the `mcp` subcommand: the core install does not need the SDK (`pip install
'dsh-memory-forget[mcp]'`). One process serves one store to whoever connects, as one caller fixed when it
starts (`amnesia.caller.Caller`): the main agent (workspace memories; `--owner ID` adds session ID's) or, with
`--sub-agent`, a sub-agent that sees only session ID's memories, or, with `--team T`, a team agent (teammate)
that sees session ID's memories and those team T's members share (seed §6.10). Every tool, resource and the
prompt keep to what that caller could recall. How far the caller is trusted is fixed at the start too:
`--max-source` (default `tool`) is the most trusted `source` its `amnesia_remember` may declare. It offers:

- tools: the seven `amnesia_*` tools of `amnesia.tools`, same names, descriptions and JSON schemas; a refused
  call (an out-of-range value included) comes back as a tool error (`isError`) whose text is the dispatcher's
  one-line message; the resources and the prompt check their arguments through the same validation;
- resources: `amnesia://memory/block` (the injection block; template `amnesia://memory/block{?budget_tokens,
  query}`), `amnesia://status` and `amnesia://audit` (template `amnesia://audit{?limit}`), as JSON;
- a prompt `amnesia_memory` (arguments `budget_tokens`, `query`) whose one user message is the block.

Reading the block (resource or prompt) is an injection: the host puts it in the model's context, so what it
holds is renewed per `renew_on_inject`; the `amnesia_preview` tool is the dry run. With `sweep_interval` > 0
in the config, a task in the server's event loop sweeps the store every `sweep_interval` seconds of wall time
(the sweep itself reads the server's clock); with 0 there is no timer and expiry happens on reads. On stdio,
a line the SDK cannot parse is answered with a JSON-RPC error whose id is null (-32700 for text that is not
JSON, -32600 for JSON that is not a JSON-RPC message) instead of being dropped.
"""

from __future__ import annotations

import re
import socket
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
from mcp import types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from amnesia.caller import Caller
from amnesia.clock import Clock, SystemClock
from amnesia.config import Config
from amnesia.engine import Amnesia
from amnesia.errors import AmnesiaError, InvalidInput, one_line
from amnesia.host import inject
from amnesia.stores import InMemoryStore, SQLiteStore
from amnesia.tools import (
    AUDIT_LIMIT_MAX,
    DEFAULT_SOURCE,
    SOURCES_BY_TRUST,
    TOOLS,
    ToolError,
    call_tool,
    to_json,
    validate_arguments,
)
from amnesia.views import Injection

SERVER_NAME = "dsh-memory-forget"
LOOPBACK = "127.0.0.1"
HTTP_PATH = "/mcp"
DEFAULT_HTTP_PORT = 8765
BLOCK_URI = "amnesia://memory/block"
STATUS_URI = "amnesia://status"
AUDIT_URI = "amnesia://audit"
PROMPT_NAME = "amnesia_memory"
AUDIT_DEFAULT_LIMIT = 10
INSTRUCTIONS = (
    "Memory with a shelf life. Remember only what the user asks you to, always with a ttl that matches how "
    "long it stays true; when a remembered fact changes, forget the old one (or reuse its key). Unused "
    "memories fade and are deleted; recall renews what it finds. Never store secrets."
)
_RESOURCES = (  # uri, name, title, description, MIME type
    (
        BLOCK_URI,
        "memory-block",
        "Amnesia memory block",
        "The memories to inject into the prompt now, within the token budget. Reading it is an injection: "
        "what it holds is renewed per renew_on_inject.",
        "text/plain",
    ),
    (
        STATUS_URI,
        "memory-status",
        "Amnesia status",
        "Counts per status, tokens, next expiry, the last forgets and injection.",
        "application/json",
    ),
    (
        AUDIT_URI,
        "memory-audit",
        "Amnesia audit trail",
        "The most recent forgets of memories this client could recall: id, kind, reason, time, keyed "
        "content hash (the content only in restorable mode).",
        "application/json",
    ),
)
_INJECTION_ARGUMENTS = (
    types.PromptArgument(
        name="budget_tokens", description="Token budget of the block (default: the configured one)."
    ),
    types.PromptArgument(
        name="query",
        description="The user's current text: ranks the block when injection_order is relevance.",
    ),
)

Log = Callable[[str], None]
Context = ServerRequestContext[Any]  # the SDK's per-request context (unused: one store, no per-client state)


def _stderr(line: str) -> None:
    print(f"{SERVER_NAME} mcp: {line}", file=sys.stderr, flush=True)


def _package_version() -> str:
    try:
        return version(SERVER_NAME)
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


def _invalid(message: str) -> MCPError:
    return MCPError(code=types.INVALID_PARAMS, message=message)


def _single_values(values: Mapping[str, list[str]], allowed: tuple[str, ...], origin: str) -> dict[str, str]:
    """Query or prompt arguments as one string each; unknown or repeated names are refused."""
    single: dict[str, str] = {}
    for name, given in values.items():
        if name not in allowed:
            raise _invalid(f"{origin}: unknown argument {name!r} (allowed: {', '.join(allowed) or 'none'})")
        if len(given) != 1:
            raise _invalid(f"{origin}: argument {name!r} given {len(given)} times")
        single[name] = given[0]
    return single


def _whole_number(text: str, field: str, *, minimum: int, maximum: int | None = None) -> int:
    digits = text.strip()
    number = int(digits) if re.fullmatch(r"[0-9]{1,9}", digits) else None
    if number is None or number < minimum or (maximum is not None and number > maximum):
        bounds = f"{minimum}..{maximum}" if maximum is not None else f">= {minimum}"
        raise _invalid(f"{field}: expected a whole number {bounds}, got {text[:40]!r}")
    return number


class MemoryServer:
    """The MCP face of one engine: tools, resources and a prompt over the SDK's low-level `Server`, all for
    one `caller` (default: the main agent outside any session), whose writes may declare at most the trust
    `max_source` (`amnesia.tools.SOURCES_BY_TRUST`)."""

    def __init__(
        self,
        engine: Amnesia,
        *,
        caller: Caller | None = None,
        max_source: str = DEFAULT_SOURCE,
        log: Log = _stderr,
    ) -> None:
        self.engine = engine
        self.caller = caller if caller is not None else Caller()
        self.max_source = max_source
        self.log = log
        self.server: Server[Any] = Server(
            SERVER_NAME,
            version=_package_version(),
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_resource_templates,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
        )

    # ------------------------------------------------------------------ tools
    async def _list_tools(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=tool["function"]["name"],
                    description=tool["function"]["description"],
                    input_schema=tool["function"]["parameters"],
                )
                for tool in TOOLS
            ]
        )

    def _tool(self, name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """One tool call as this server's caller: its result or the dispatcher's error object."""
        return call_tool(
            self.engine,
            name,
            arguments,
            owner_id=self.caller.owner_id,
            include_workspace=self.caller.include_workspace,
            max_source=self.max_source,
            team_id=self.caller.team_id,
        )

    def _tool_for_resource(self, name: str, arguments: Mapping[str, Any]) -> str:
        """A tool's result as a resource's JSON text; a refusal is the resource's one-line MCP error."""
        result = self._tool(name, arguments)
        if "error" in result:
            raise _invalid(result["error"])
        return to_json(result)

    async def _call_tool(self, ctx: Context, params: types.CallToolRequestParams) -> types.CallToolResult:
        result = self._tool(params.name, params.arguments)
        if "error" in result:  # the dispatcher's refusal: a one-line message, often naming the field
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=result["error"])],
                structured_content=result,
                is_error=True,
            )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=to_json(result))], structured_content=result
        )

    # ------------------------------------------------------------------ resources
    async def _list_resources(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(uri=uri, name=name, title=title, description=description, mime_type=mime_type)
                for uri, name, title, description, mime_type in _RESOURCES
            ]
        )

    async def _list_resource_templates(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=BLOCK_URI + "{?budget_tokens,query}",
                    name="memory-block-with-budget",
                    description="The memory block under a given token budget.",
                    mime_type="text/plain",
                ),
                types.ResourceTemplate(
                    uri_template=AUDIT_URI + "{?limit}",
                    name="memory-audit-limit",
                    description=f"The newest `limit` forget records (1..{AUDIT_LIMIT_MAX}).",
                    mime_type="application/json",
                ),
            ]
        )

    async def _read_resource(
        self, ctx: Context, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        parts = urlsplit(uri)
        base = f"{parts.scheme}://{parts.netloc}{parts.path}"
        query = parse_qs(parts.query, keep_blank_values=True)
        with _engine_errors():
            if base == BLOCK_URI:
                budget, text = self._injection_arguments(
                    _single_values(query, ("budget_tokens", "query"), uri)
                )
                return self._contents(uri, self._inject(budget, text).block, "text/plain")
            if base == STATUS_URI:
                _single_values(query, (), uri)
                return self._contents(uri, self._tool_for_resource("amnesia_status", {}), "application/json")
            if base == AUDIT_URI:
                arguments = _single_values(query, ("limit",), uri)
                limit = AUDIT_DEFAULT_LIMIT
                if "limit" in arguments:
                    limit = _whole_number(arguments["limit"], "limit", minimum=1, maximum=AUDIT_LIMIT_MAX)
                audit = self._tool_for_resource("amnesia_audit", {"limit": limit})
                return self._contents(uri, audit, "application/json")
        raise _invalid(f"unknown resource {uri!r}; resources: {BLOCK_URI}, {STATUS_URI}, {AUDIT_URI}")

    @staticmethod
    def _contents(uri: str, text: str, mime_type: str) -> types.ReadResourceResult:
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, text=text, mime_type=mime_type)]
        )

    # ------------------------------------------------------------------ prompt
    async def _list_prompts(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=PROMPT_NAME,
                    title="Amnesia memory",
                    description="Inject the current memory block (no message when nothing is live).",
                    arguments=list(_INJECTION_ARGUMENTS),
                )
            ]
        )

    async def _get_prompt(self, ctx: Context, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != PROMPT_NAME:
            raise _invalid(f"unknown prompt {params.name!r}; prompts: {PROMPT_NAME}")
        given = {name: [value] for name, value in (params.arguments or {}).items()}
        with _engine_errors():
            budget, query = self._injection_arguments(
                _single_values(given, ("budget_tokens", "query"), PROMPT_NAME)
            )
            injection = self._inject(budget, query)
        messages = (
            [types.PromptMessage(role="user", content=types.TextContent(type="text", text=injection.block))]
            if injection.block
            else []
        )
        used = f"{injection.tokens}/{injection.budget_tokens} tokens"
        return types.GetPromptResult(
            description=f"{len(injection.items)} memory item(s), {used}",
            messages=messages,
        )

    @staticmethod
    def _injection_arguments(arguments: Mapping[str, str]) -> tuple[int | None, str | None]:
        """The block's budget and query, checked with amnesia_preview's bounds (the same arguments)."""
        budget = arguments.get("budget_tokens")
        given = {
            "budget_tokens": None if budget is None else _whole_number(budget, "budget_tokens", minimum=0),
            "query": arguments.get("query"),
        }
        try:
            validate_arguments("amnesia_preview", {k: v for k, v in given.items() if v is not None})
        except ToolError as refused:
            raise _invalid(refused.message) from None
        return given["budget_tokens"], given["query"]

    def _inject(self, budget: int | None, query: str | None) -> Injection:
        """The block this server's caller gets (an injection: it renews what it holds)."""
        return inject(
            self.engine,
            budget,
            query=query,
            owner_id=self.caller.owner_id,
            include_workspace=self.caller.include_workspace,
            team_id=self.caller.team_id,
        )

    # ------------------------------------------------------------------ sweep timer
    async def sweep_every(self, interval: float) -> None:
        """Sweep the store every `interval` seconds (wall time) until cancelled; a failed sweep (e.g. the
        store is busy, or the clock file is unreadable) is logged and retried at the next tick."""
        while True:
            await anyio.sleep(interval)
            try:
                result = self.engine.sweep()
            except (AmnesiaError, ValueError, OSError) as error:
                self.log(f"sweep failed: {one_line(error)}")
                continue
            if result.forgotten:
                reasons = ", ".join(f"{reason} {count}" for reason, count in result.by_reason.items())
                self.log(f"sweep forgot {result.forgotten} item(s) ({reasons})")

    # ------------------------------------------------------------------ transports
    async def serve_stdio(self, sweep_interval: float) -> None:
        """Serve one client on stdin/stdout until it closes the stream."""
        async with stdio_server() as (read_stream, write_stream), anyio.create_task_group() as tasks:
            if sweep_interval > 0:
                tasks.start_soon(self.sweep_every, sweep_interval)
            requests = AnsweringMalformed(read_stream, write_stream)
            await self.server.run(requests, write_stream, self.server.create_initialization_options())
            tasks.cancel_scope.cancel()

    async def serve_http(self, sweep_interval: float, port: int, stateless: bool = False) -> None:
        """Serve streamable HTTP on the loopback interface only, at http://127.0.0.1:PORT/mcp (port 0: any
        free port); the address is logged once the socket listens. Stops on SIGINT/SIGTERM. `stateless`: every
        POST is a request of its own answered with one JSON body (the SDK's stateless JSON mode), for clients
        that send plain JSON-RPC without initializing a session or reading an event stream."""
        import uvicorn  # a dependency of the mcp SDK; only the HTTP transport needs it

        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind((LOOPBACK, port))
            listener.listen()
        except OSError as error:
            listener.close()
            raise InvalidInput(f"--port: cannot listen on {LOOPBACK}:{port} ({error.strerror})") from None
        app = self.server.streamable_http_app(
            streamable_http_path=HTTP_PATH, host=LOOPBACK, stateless_http=stateless, json_response=stateless
        )
        web = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        self.log(f"serving streamable HTTP at http://{LOOPBACK}:{listener.getsockname()[1]}{HTTP_PATH}")
        async with anyio.create_task_group() as tasks:
            if sweep_interval > 0:
                tasks.start_soon(self.sweep_every, sweep_interval)
            await web.serve(sockets=[listener])
            tasks.cancel_scope.cancel()


class AnsweringMalformed:
    """The stdio read stream, minus the lines the SDK could not parse, each answered on `replies`.

    The SDK's stdio reader turns such a line into an exception on the read stream, and its server only logs
    that at debug level: the client would wait for a reply until its own timeout. This wrapper answers it with
    a JSON-RPC error whose id is null (the id could not be read): -32700 Parse error for text that is not
    JSON (also a lone surrogate escape and nesting past the parser's limit), -32600 Invalid Request for JSON
    that is not a JSON-RPC message. Everything else is passed through unchanged."""

    def __init__(self, inner: Any, replies: Any) -> None:
        self._inner = inner
        self._replies = replies

    @property
    def last_context(self) -> Any:
        """The sender context of the last message (the SDK's context-carrying streams have one)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            await self._replies.send(SessionMessage(malformed_reply(item)))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> AnsweringMalformed:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> AnsweringMalformed:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def malformed_reply(error: Exception) -> types.JSONRPCError:
    """The JSON-RPC error answering a line that did not parse as a message (`error`: why, from the SDK)."""
    problems = error.errors() if isinstance(error, ValidationError) else []
    not_json = not problems or problems[0]["type"] == "json_invalid"
    why = problems[0]["msg"] if problems else one_line(error)
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=None,
        error=types.ErrorData(
            code=types.PARSE_ERROR if not_json else types.INVALID_REQUEST,
            message=("Parse error: " if not_json else "Invalid Request: ") + one_line(why)[:200],
        ),
    )


@contextmanager
def _engine_errors() -> Iterator[None]:
    """An engine refusal inside a resource or prompt read becomes a one-line MCP error."""
    try:
        yield
    except (AmnesiaError, ValueError) as error:
        code = types.INVALID_PARAMS if isinstance(error, ValueError) else types.INTERNAL_ERROR
        raise MCPError(code=code, message=one_line(error)) from None


def open_engine(
    db: Path | None, config_file: Path | None, *, in_memory: bool, clock: Clock, workspace: str = "default"
) -> Amnesia:
    """The engine the server runs on, in `workspace`: config from the file/env (`Config.load`), the SQLite
    store at `db` (default: the config's db_path), or a store in memory that ends with the process."""
    if in_memory and db is not None:
        raise InvalidInput("--in-memory: the store is either in memory or at --db PATH, not both")
    config = Config.load(config_file)
    if in_memory:
        store: InMemoryStore | SQLiteStore = InMemoryStore()
    else:
        store = SQLiteStore(
            Path(db if db is not None else config.db_path).expanduser(), lock_timeout=config.lock_timeout
        )
    return Amnesia(store=store, config=config, clock=clock, workspace_id=workspace)


def serve(
    *,
    db: Path | None,
    config_file: Path | None,
    in_memory: bool = False,
    http: bool = False,
    port: int | None = None,
    stateless: bool = False,
    clock: Clock | None = None,
    owner: str | None = None,
    sub_agent: bool = False,
    workspace: str = "default",
    max_source: str = DEFAULT_SOURCE,
    team: str | None = None,
) -> None:
    """Run the server until the client disconnects (stdio) or the process is stopped (HTTP); `clock`: the
    wall clock unless given (the CLI's `--clock-file`). The client is the main agent, in session `owner` if
    given; with `sub_agent`, the sub-agent whose session is `owner`; with `team`, the team agent whose session
    is `owner` in that team. `max_source`: the most trusted source the client's writes may declare (`user`
    for a host that writes the user's own words)."""
    if port is not None and not http:
        raise InvalidInput("--port: only with --http (stdio has no port)")
    if stateless and not http:
        raise InvalidInput("--stateless: only with --http (stdio is one session)")
    if owner is not None and not owner.strip():
        raise InvalidInput("--owner: expected a session id, got an empty string")
    if sub_agent and owner is None:
        raise InvalidInput("--sub-agent: needs --owner ID (the sub-agent's own session)")
    if max_source not in SOURCES_BY_TRUST:
        raise InvalidInput(f"--max-source: expected one of {', '.join(SOURCES_BY_TRUST)}, got {max_source!r}")
    if team is not None and (sub_agent or owner is None):
        raise InvalidInput("--team: needs --owner ID (the team agent's own session) and no --sub-agent")
    caller = Caller(owner, include_workspace=not sub_agent and team is None, team_id=team)
    clock = clock if clock is not None else SystemClock()
    engine = open_engine(db, config_file, in_memory=in_memory, clock=clock, workspace=workspace)
    memory = MemoryServer(engine, caller=caller, max_source=max_source)
    interval = engine.config.sweep_interval
    try:
        if http:
            anyio.run(memory.serve_http, interval, DEFAULT_HTTP_PORT if port is None else port, stateless)
        else:
            anyio.run(memory.serve_stdio, interval)
    except KeyboardInterrupt:  # Ctrl-C is how a person stops a server they started by hand
        pass
    finally:
        engine.close()
