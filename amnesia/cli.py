"""`dsh-memory-forget`: the engine on the command line (seed §10.2), over a SQLite file, on the wall clock.

Global options come before the command: `--db PATH` (default `~/.amnesia/memory.db`, or env AMNESIA_DB),
`--create` (allow a --db folder that does not exist yet), `--config FILE` (YAML/TOML, or env
AMNESIA_CONFIG), `--json` (print the view as JSON instead of text), `--version`.
Every engine command takes `--workspace NAME` (seed §10.2; default `default`): the isolation domain its
memories and audit live in, within the one database. `audit` also spells it `--project` (the seed's
`audit --project X`).
Bad input of any kind prints one line `error: ...` on stderr and exits 2, with no traceback.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

import amnesia
from amnesia import Amnesia, Config, SQLiteStore, SystemClock
from amnesia.checks import shown
from amnesia.cli_runner import run_app
from amnesia.clock import Clock, FileClock
from amnesia.config import DEFAULT_DB_PATH
from amnesia.durations import format_duration, parse_duration
from amnesia.errors import AmnesiaError, InvalidInput, NotFound

KindChoice = Literal["fact", "preference", "episode", "task-context"]
ScopeChoice = Literal["workspace", "session", "team"]
CurveChoice = Literal["flat", "linear", "ebbinghaus"]
DISTRIBUTION = "dsh-memory-forget"
STDIN_LIMIT = 1024 * 1024  # bytes `remember -` reads at most; a memory is one short sentence
TIME_FIELDS = ("created_at", "last_accessed_at", "expires_at", "stale_at", "hard_expires_at")
DURATION_FIELDS = ("ttl", "remaining")
DEFAULT_WORKSPACE = "default"
MAX_WORKSPACE_CHARS = 128
_WORKSPACE_HELP = "The workspace (isolation domain) to act in."
Workspace = Annotated[str, typer.Option("--workspace", metavar="NAME", help=_WORKSPACE_HELP)]

app = typer.Typer(
    name="dsh-memory-forget",
    help="Amnesia: agent memory in which every item has a shelf life (TTL, decay, audit).",
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: no `<bool>` beside every flag, brackets shown as written
)


@dataclass
class CliState:
    db: Path | None
    config_file: Path | None
    as_json: bool
    clock: Clock
    create: bool = False  # --create: the database's folder may be created

    @contextmanager
    def engine(self, workspace: str = DEFAULT_WORKSPACE) -> Iterator[Amnesia]:
        """The engine over the --db store, in `workspace` (checked before the store is opened)."""
        check_workspace(workspace)
        config = Config.load(self.config_file)
        path = Path(self.db if self.db is not None else config.db_path).expanduser()
        # A typo in a path must not silently grow a folder tree; the documented default may be created.
        if not path.parent.exists() and not self.create and path != Path(DEFAULT_DB_PATH).expanduser():
            raise InvalidInput(f"db: folder {shown(path.parent)} does not exist; create it or pass --create")
        store = SQLiteStore(path, lock_timeout=config.lock_timeout)
        try:
            yield Amnesia(store=store, config=config, clock=self.clock, workspace_id=workspace)
        finally:
            store.close()

    def ago(self, when: float) -> str:
        return f"{format_duration(max(0.0, self.clock.now() - when))} ago"

    def until(self, when: float | None) -> str:
        if when is None:
            return "never expires"
        return f"expires in {format_duration(max(0.0, when - self.clock.now()))}"

    def moment(self, when: float) -> str:
        """ISO 8601 time in UTC and its distance from now: `2026-05-01T09:30:00Z (2h ago)`."""
        offset = round(when - self.clock.now())
        relative = "now" if offset == 0 else f"in {format_duration(offset)}" if offset > 0 else self.ago(when)
        return f"{iso_utc(when)} ({relative})"

    def emit(self, payload: Any, lines: Iterable[str]) -> None:
        """Print the JSON view with --json, else the human lines."""
        if self.as_json:
            typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        else:
            for line in lines:
                typer.echo(line)


def check_workspace(name: str) -> None:
    """A workspace name: 1 to MAX_WORKSPACE_CHARS printable characters, not only spaces."""
    if not name.strip():
        raise InvalidInput("--workspace: expected a name, got an empty string")
    if len(name) > MAX_WORKSPACE_CHARS:
        raise InvalidInput(f"--workspace: at most {MAX_WORKSPACE_CHARS} characters, got {len(name)}")
    if not name.isprintable():
        raise InvalidInput(f"--workspace: {shown(name)} holds a control character")


def _state(ctx: typer.Context) -> CliState:
    return ctx.obj  # set by global_options, which runs before every command


def iso_utc(when: float) -> str:
    """`when` (seconds since the epoch) as ISO 8601 UTC; the bare number if no calendar date has it."""
    try:
        return (
            datetime.fromtimestamp(when, tz=timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
        )
    except (OverflowError, OSError, ValueError):
        return f"{when:g}"


def package_version() -> str:
    """The installed distribution's version, else the package's own `__version__` (a source checkout)."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return amnesia.__version__


def _print_version(requested: bool) -> None:
    if requested:
        typer.echo(f"{DISTRIBUTION} {package_version()}")
        raise typer.Exit()


def _read_stdin() -> str:
    """The content of `remember -`: standard input, UTF-8, surrounding whitespace dropped."""
    if sys.stdin is None or sys.stdin.isatty():
        raise InvalidInput("content: '-' reads the memory from standard input; pipe the text in")
    data = sys.stdin.buffer.read(STDIN_LIMIT + 1)
    if len(data) > STDIN_LIMIT:
        raise InvalidInput(f"content: standard input is over {STDIN_LIMIT} bytes")
    try:
        return data.decode("utf-8").strip()
    except UnicodeDecodeError as error:
        raise InvalidInput(f"content: standard input is not UTF-8 text (byte {error.start})") from None


@app.callback()
def global_options(
    ctx: typer.Context,
    db: Annotated[
        Path | None, typer.Option("--db", help="SQLite file (default: ~/.amnesia/memory.db or $AMNESIA_DB)")
    ] = None,
    config_file: Annotated[
        Path | None, typer.Option("--config", help="YAML or TOML config file (or $AMNESIA_CONFIG)")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON views instead of text.")] = False,
    create: Annotated[
        bool, typer.Option("--create", help="Create the --db file's folder if it does not exist.")
    ] = False,
    clock_file: Annotated[
        Path | None,
        typer.Option(help="Read the time (Unix seconds) from this file at every use: for tests and replays."),
    ] = None,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    clock = FileClock(clock_file) if clock_file is not None else SystemClock()
    ctx.obj = CliState(db=db, config_file=config_file, as_json=as_json, clock=clock, create=create)


def _plug_line(state: CliState, plug: dict[str, Any]) -> str:
    life = "pinned" if plug["pinned"] else state.until(plug["expires_at"])
    owner = f":{plug['owner_id']}" if plug.get("owner_id") else ""
    marks = " · untrusted" if plug.get("untrusted") else ""
    return (
        f"[{plug['id']}] {plug['kind']} · {plug['scope']}{owner} · {plug['status']} · "
        f"strength {plug['strength']:.2f} · {life}{marks} · {plug['content']}"
    )


def _memory_lines(state: CliState, verb: str, view: dict[str, Any]) -> list[str]:
    if view["pinned"]:
        life = "pinned"
    elif view["ttl"] is None:  # default_ttl 0: no expiry by default (seed §6.8)
        life = "no ttl, never expires"
    else:
        life = f"ttl {format_duration(view['ttl'])}, {state.until(view['expires_at'])}"
    lines = [f"{verb} {view['id']} ({view['kind']}, {view['scope']}, {life})"]
    lines += [f"superseded {old}" for old in view.get("superseded", ())]
    lines += [f"evicted {old} to make room" for old in view.get("evicted", ())]
    return lines


@app.command()
def remember(
    ctx: typer.Context,
    content: Annotated[str, typer.Argument(help="One short sentence to remember; - reads it from stdin.")],
    ttl: Annotated[
        str | None, typer.Option(help="Shelf life, e.g. 15m, 2h30m, 7d, 1w (default: from config)")
    ] = None,
    kind: Annotated[KindChoice, typer.Option()] = "fact",
    scope: Annotated[ScopeChoice, typer.Option()] = "workspace",
    owner: Annotated[
        str | None, typer.Option(help="Session/team that owns a session or team memory.")
    ] = None,
    pin: Annotated[
        bool, typer.Option("--pin", help="Keep until explicitly forgotten (no ttl needed).")
    ] = False,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="A label; repeat for several.")] = None,
    key: Annotated[
        str | None, typer.Option(help="Subject; a new write with the same key retires the old.")
    ] = None,
    supersedes: Annotated[str | None, typer.Option(help="Id of the memory this one replaces.")] = None,
    curve: Annotated[CurveChoice | None, typer.Option()] = None,
    workspace: Workspace = DEFAULT_WORKSPACE,
) -> None:
    """Remember CONTENT for a limited time."""
    state = _state(ctx)
    # No --ttl: the configured default, except that a pin without a ttl is kept until forgotten.
    options: dict[str, Any] = {"ttl": None} if pin else {}
    if ttl is not None:
        if pin:  # seed §6.3: a pin is kept until forgotten, so a ttl with it is a contradiction
            raise InvalidInput("--ttl: a pinned memory is kept until forgotten; drop --ttl or --pin")
        options["ttl"] = parse_duration(ttl, field="--ttl")
    if content == "-":
        content = _read_stdin()
    with state.engine(workspace) as engine:
        view = engine.remember(
            content,
            kind=kind,
            pin=pin,
            curve=curve,
            tags=tuple(tag or ()),
            source="user",
            scope=scope,
            owner_id=owner,
            key=key,
            supersedes=supersedes,
            **options,
        ).to_dict()
    state.emit(view, _memory_lines(state, "remembered", view))


@app.command()
def forget(
    ctx: typer.Context,
    memory_id: Annotated[
        str | None, typer.Argument(metavar="[ID]", help="Id of the memory to forget.")
    ] = None,
    query: Annotated[str | None, typer.Option(help="Forget memories whose content matches.")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Forget memories with this tag.")] = None,
    scope: Annotated[ScopeChoice | None, typer.Option()] = None,
    owner: Annotated[str | None, typer.Option(help="Only memories owned by this session/team.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Forget everything (needs --yes).")] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Confirm --all.")] = False,
    workspace: Workspace = DEFAULT_WORKSPACE,
) -> None:
    """Forget memories now: by ID, --query, --tag, --scope/--owner, or --all --yes."""
    state = _state(ctx)
    if not (memory_id or query or tag or scope or owner or all_):
        raise InvalidInput("forget: give an ID, --query, --tag, --scope/--owner, or --all --yes")
    if all_ and not yes:
        raise InvalidInput("--all: forgetting everything needs --yes")
    with state.engine(workspace) as engine:
        summary = engine.forget(
            memory_id,
            query=query,
            tags=tuple(tag) if tag else None,
            scope=scope,
            owner_id=owner,
            all=all_,
            confirm=yes,
        ).to_dict()
    if memory_id is not None and summary["count"] == 0:
        raise NotFound(f"{shown(memory_id)}: no live memory with that id")
    ids = ", ".join(summary["ids"])
    state.emit(summary, [f"forgot {summary['count']} item(s)" + (f": {ids}" if ids else "")])


@app.command()
def status(ctx: typer.Context, workspace: Workspace = DEFAULT_WORKSPACE) -> None:
    """Counts per status, tokens, next expiry, the last forgets and the last injection."""
    state = _state(ctx)
    with state.engine(workspace) as engine:
        view = engine.status().to_dict()
    counts = " · ".join(f"{name} {count}" for name, count in view["counts"].items())
    lines = [counts, f"tokens {view['tokens']} · bytes {view['bytes']}"]
    if view["next_expiry_at"] is not None:
        lines.append(f"next expiry: {state.moment(view['next_expiry_at'])}")
    for entry in view["recent_forgets"]:
        lines.append(f"forgot {entry['id']} ({entry['reason']}) at {state.moment(entry['at'])}")
    if view["last_injection"]:
        shot = view["last_injection"]
        lines.append(
            f"last injection: {shot['count']} item(s), {shot['tokens']}/{shot['budget_tokens']} tokens, "
            f"at {state.moment(shot['at'])}"
        )
    state.emit(view, lines)


def _audit_line(state: CliState, entry: dict[str, Any]) -> str:
    origin = f" from {entry['restored_from']}" if entry.get("restored_from") else ""
    when = state.ago(entry["at"])
    return f"{entry['item_id']} {entry['kind']} {entry['reason']}{origin} {when} · {entry['content_hash']}"


@app.command()
def audit(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option(min=1, help="How many entries, newest first.")] = 20,
    since: Annotated[str | None, typer.Option(help="Only entries from the last DURATION, e.g. 1d.")] = None,
    verify: Annotated[
        str | None, typer.Option(metavar="TEXT", help="Which forgotten items had exactly this content.")
    ] = None,
    workspace: Annotated[
        str, typer.Option("--workspace", "--project", metavar="NAME", help=_WORKSPACE_HELP)
    ] = DEFAULT_WORKSPACE,
) -> None:
    """The forget trail: id, kind, reason, time and a keyed hash of the content (never the content)."""
    state = _state(ctx)
    with state.engine(workspace) as engine:
        if verify is not None:
            entries = [entry.to_dict() for entry in engine.verify(verify)]
            verdict = f"{len(entries)} forgotten item(s) had exactly this content"
            state.emit({"matches": entries}, [verdict, *(_audit_line(state, e) for e in entries)])
            return
        cutoff = state.clock.now() - parse_duration(since, field="--since") if since is not None else None
        entries = [entry.to_dict() for entry in engine.audit(limit=limit, since=cutoff)]
    state.emit({"entries": entries}, [_audit_line(state, e) for e in entries] or ["audit is empty"])


@app.command()
def recall(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="Words to look for.")],
    limit: Annotated[int | None, typer.Option(min=1, help="At most this many matches.")] = None,
    owner: Annotated[str | None, typer.Option(help="Also search this session's memories.")] = None,
    team: Annotated[str | None, typer.Option(help="Also search the memories this team shares.")] = None,
    workspace: Workspace = DEFAULT_WORKSPACE,
) -> None:
    """Find memories matching QUERY and renew each match."""
    state = _state(ctx)
    with state.engine(workspace) as engine:
        plugs = [plug.to_dict() for plug in engine.recall(query, owner_id=owner, limit=limit, team_id=team)]
    state.emit({"items": plugs}, [_plug_line(state, p) for p in plugs] or ["no memory matches"])


@app.command()
def restore(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(metavar="ID")],
    workspace: Workspace = DEFAULT_WORKSPACE,
) -> None:
    """Plug a forgotten memory back from the audit (restorable mode only); it gets a new id."""
    state = _state(ctx)
    with state.engine(workspace) as engine:
        view = engine.restore(memory_id).to_dict()
    state.emit(view, _memory_lines(state, f"restored {memory_id} as", view))


@app.command()
def preview(
    ctx: typer.Context,
    budget: Annotated[int | None, typer.Option(min=0, help="Token budget (default: from config).")] = None,
    owner: Annotated[str | None, typer.Option(help="Preview for the main agent in this session.")] = None,
    team: Annotated[str | None, typer.Option(help="Also the memories this team shares.")] = None,
    query: Annotated[
        str | None,
        typer.Option(help="The user's text: ranks the block when injection_order is relevance."),
    ] = None,
    workspace: Workspace = DEFAULT_WORKSPACE,
) -> None:
    """Dry run of injection: the block a prompt would get, why each item is in or out and why it ranks
    where it does (renews nothing)."""
    state = _state(ctx)
    with state.engine(workspace) as engine:
        plan = engine.preview(budget, owner_id=owner, query=query, team_id=team).to_dict()
        ignored = query is not None and plan["query"] is None and engine.config.injection_order == "strength"
    lines = [plan["block"] or f"(nothing to inject, 0/{plan['budget_tokens']} tokens)"]
    if ignored:
        lines.append("(--query not used: injection_order is strength; set injection_order: relevance)")
    lines += [
        f"{d['rank']}. {d['id']}: {d['decision']} ({d['reason']}, {d['tokens']} tokens) — {d['why']}"
        for d in plan["decisions"]
    ]
    lines += [f"pinned but over budget: {item}" for item in plan["pinned_overflow"]]
    state.emit(plan, lines)


@app.command()
def sweep(ctx: typer.Context, workspace: Workspace = DEFAULT_WORKSPACE) -> None:
    """Settle every memory now and forget what is due."""
    state = _state(ctx)
    with state.engine(workspace) as engine:
        result = engine.sweep().to_dict()
    reasons = ", ".join(f"{reason} {count}" for reason, count in result["by_reason"].items())
    state.emit(
        result,
        [
            f"swept {result['settled']} item(s): forgot {result['forgotten']}"
            + (f" ({reasons})" if reasons else "")
        ],
    )


@app.command()
def promote(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(metavar="ID")],
    workspace: Workspace = DEFAULT_WORKSPACE,
) -> None:
    """Move a session memory to the workspace so it outlives its task."""
    state = _state(ctx)
    with state.engine(workspace) as engine:
        plug = engine.promote(memory_id).to_dict()
    state.emit(plug, [f"promoted {plug['id']} to {plug['scope']}"])


@app.command()
def inspect(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(metavar="ID")],
    workspace: Workspace = DEFAULT_WORKSPACE,
) -> None:
    """Everything about one live memory: strength, remaining life, scope, trust."""
    state = _state(ctx)
    with state.engine(workspace) as engine:
        detail = engine.inspect(memory_id)
    if detail is None:
        raise NotFound(f"{shown(memory_id)}: no live memory with that id")
    view = detail.to_dict()
    state.emit(view, [f"{name}: {_detail_value(state, name, value)}" for name, value in view.items()])


def _detail_value(state: CliState, name: str, value: Any) -> Any:
    """A field of `inspect` for people: times as ISO 8601 UTC with their age, durations as 2h30m."""
    if value is None:
        return value
    if name in TIME_FIELDS:
        return state.moment(value)
    if name in DURATION_FIELDS:
        return format_duration(value)
    return value


@app.command()
def plugs(
    ctx: typer.Context,
    scope: Annotated[ScopeChoice | None, typer.Option()] = None,
    owner: Annotated[str | None, typer.Option(help="Only memories owned by this session/team.")] = None,
    workspace: Workspace = DEFAULT_WORKSPACE,
) -> None:
    """List the live memories (without renewing them)."""
    state = _state(ctx)
    with state.engine(workspace) as engine:
        views = [plug.to_dict() for plug in engine.plugs(scope)]
    views = [view for view in views if owner is None or view["owner_id"] == owner]
    state.emit({"items": views}, [_plug_line(state, v) for v in views] or ["no live memories"])


@app.command()
def mcp(
    ctx: typer.Context,
    http: Annotated[
        bool, typer.Option("--http", help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")
    ] = False,
    port: Annotated[
        int | None,
        typer.Option(min=0, max=65535, help="HTTP port (default 8765; 0: any free port, logged on stderr)."),
    ] = None,
    stateless: Annotated[
        bool,
        typer.Option(
            "--stateless",
            help="With --http: each POST is answered alone, as JSON (no session, no initialize, no SSE).",
        ),
    ] = False,
    in_memory: Annotated[
        bool, typer.Option("--in-memory", help="Keep the store in memory (gone when the server stops).")
    ] = False,
    owner: Annotated[
        str | None,
        typer.Option(help="The client is the main agent in this session: it also sees its session memories."),
    ] = None,
    sub_agent: Annotated[
        bool,
        typer.Option(
            "--sub-agent", help="With --owner: the client is that sub-agent; it sees only its session."
        ),
    ] = False,
    max_source: Annotated[
        str,
        typer.Option(
            "--max-source",
            help="The most trusted source the client's writes may declare: tool (default; a model may mark "
            "a write auto, untrusted), user (a host writing the user's own words), or auto.",
        ),
    ] = "tool",
    team: Annotated[
        str | None,
        typer.Option(
            help="With --owner: the client is a team agent of this team; it sees its session and the "
            "memories the team shares, not the workspace."
        ),
    ] = None,
    workspace: Workspace = DEFAULT_WORKSPACE,
) -> None:
    """Serve this store over MCP (tools, memory-block resource and prompt); needs the optional mcp extra."""
    state = _state(ctx)
    check_workspace(workspace)
    try:
        from amnesia.mcp_server import serve
    except ModuleNotFoundError as missing:
        if missing.name is None or missing.name.split(".")[0] not in {"mcp", "mcp_types"}:
            raise
        raise InvalidInput(
            "mcp: the MCP SDK is not installed; run: pip install 'dsh-memory-forget[mcp]'"
        ) from None
    serve(
        db=state.db,
        config_file=state.config_file,
        in_memory=in_memory,
        http=http,
        port=port,
        stateless=stateless,
        clock=state.clock,
        owner=owner,
        sub_agent=sub_agent,
        workspace=workspace,
        max_source=max_source,
        team=team,
    )


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code (errors become one stderr line and code 2)."""
    return run_app(app, argv, (AmnesiaError, ValueError, OSError, sqlite3.Error))


def main() -> None:
    sys.exit(run())


if __name__ == "__main__":
    main()
