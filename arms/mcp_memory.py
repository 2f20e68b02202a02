"""`mcp-memory`: any MCP memory server as an arm, driven with the official `mcp` SDK client over stdio
(docs/peers.md).

Each (arm, task) pair starts its own server on fresh state in the pair's folder (`ctx.workdir`) and stops it
at the end of the task. The harness's events become the server's tools through a `profile`:

- `server-memory` (default): the official `@modelcontextprotocol/server-memory` (npm). A write is one entity
  named by the arm's id whose observation is the content; the block is `read_graph`'s entities, newest
  first within the budget. The server keeps no time: the ages in the block, and the order, come from the
  times the arm itself saw the writes (the simulated clock). Nothing is ever forgotten by time.
- a YAML file: the same mapping for another server, with no code (`arms.mcp_profiles`).
- `amnesia`: our own `dsh-memory-forget mcp` (started as `python -m amnesia.cli` unless `command` is given) on
  a SQLite file, following the simulated clock through `--clock-file`, and started with `--max-source user`
  so that each write carries the task's source (trust) as in process. Its caller is fixed when it starts, so
  the arm starts one server per caller on the same file: the main agent, each sub-agent session, each team
  agent (`--team`: this profile knows teams), and a main session that writes a session memory. Writes are
  `amnesia_remember`, the block is the `amnesia://memory/block` resource (reading it is an injection, as
  `select_for_injection` is in process), a sub-agent's or teammate's session memories go with `amnesia_forget
  all` (scope session) when its session ends, a team's (scope team) when the session that closes it ends.

Scopes and forget selectors of the profile servers (which have no notion of them) are resolved by the arm's
own index, as every own-store arm does (`arms.arm_kit`). Every request is logged as an `arm_call` record;
any failure (the server does not start, lacks a tool, does not answer within `timeout`) stops the pair with
a `pair_error` record (`ArmFailed`) and the run goes on."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from amnesia.durations import MAX_DURATION_SECONDS
from amnesia.tokens import count_tokens
from arms.arm_kit import OwnStoreArm, fit_block, forget_selects, memory_line, scope_for, visible_to
from arms.arm_options import check_number, options_from
from arms.base import ArmContext, ArmFailed, MemoryContext, SessionInfo
from arms.mcp_client import McpConnection, WireCall, server_env
from arms.mcp_profiles import Profile, load_profile
from tasks.errors import ArmConfigError
from tasks.logschema import ArmCall
from tasks.modelapi import Message
from tasks.spec import NEVER, ForgetSpec, RememberSpec

AMNESIA = "amnesia"
SERVER_MEMORY_INSTALL = "npm install --prefix DIR @modelcontextprotocol/server-memory"
_BLOCK_ID = re.compile(r"- \[([^\]]+)\]")  # the id at the start of a memory line of the engine's block


@dataclass(frozen=True)
class McpMemoryOptions:
    """Options of `mcp-memory` (`--set mcp-memory.NAME=VALUE`)."""

    profile: str = "server-memory"  # server-memory | amnesia | path/to/profile.yaml
    command: str = ""  # the server command line ("" = the profile's: mcp-server-memory on PATH, or ours)
    timeout: float = 10.0  # seconds allowed for the server to start, and for each request
    # profile amnesia: an engine config file (YAML/TOML) for the server (`--config`), e.g. a preset's switches
    amnesia_config: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.profile, str) or not self.profile:
            raise ArmConfigError(f"mcp-memory: option profile must be a name or a file, got {self.profile!r}")
        if not isinstance(self.command, str):
            raise ArmConfigError(f"mcp-memory: option command must be a command line, got {self.command!r}")
        if check_number("mcp-memory", "timeout", self.timeout) <= 0:
            raise ArmConfigError(f"mcp-memory: option timeout must be > 0, got {self.timeout!r}")
        if self.amnesia_config and (self.profile != AMNESIA or not Path(self.amnesia_config).is_file()):
            raise ArmConfigError(
                "mcp-memory: option amnesia_config must be an existing file, with profile amnesia, got "
                f"{self.amnesia_config!r}"
            )


@dataclass
class _Entry:
    """What the arm knows of one memory it wrote (the server may know none of it), by its id (for amnesia: the
    server's)."""

    content: str
    kind: str
    scope: str
    owner_id: str | None
    source: str
    tags: tuple[str, ...]
    key: str | None
    written_at: float


class McpMemoryArm(OwnStoreArm):
    name = "mcp-memory"
    OPTIONS = McpMemoryOptions
    EXTERNAL = True  # its server is a program of its own: not part of `--arms all`

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.config = options_from(McpMemoryOptions, "mcp-memory", options)
        self.profile: Profile | None = (
            None if self.config.profile == AMNESIA else load_profile(self.config.profile)
        )
        # Our server has team callers (`mcp --team`); the profile servers have no scopes, so with them the
        # harness shows a team agent as a sub-agent (arms.base.arm_session), as to every arm without teams.
        self.TEAMS = self.profile is None
        self.session: SessionInfo | None = None
        self.entries: dict[str, _Entry] = {}
        # (owner, sub-agent, team) -> the server of that caller
        self.connections: dict[tuple[str | None, bool, str | None], McpConnection] = {}
        self._next_id = 1

    def describe(self) -> dict[str, Any]:
        return {"arm": self.name, "base": "mcp-memory", **asdict(self.config)}

    # --- lifecycle -------------------------------------------------------------------------------------

    def start_task(self, ctx: ArmContext) -> None:
        super().start_task(ctx)
        ctx.workdir.mkdir(parents=True, exist_ok=True)
        self.entries, self._next_id = {}, 1
        if self.profile is None:
            self._write_clock()
        self._connection(None, sub=False)  # a server that cannot start fails the pair before its first turn

    def advance_clock(self, now: float) -> None:
        if self.profile is None:
            self._write_clock()

    def start_session(self, session: SessionInfo) -> None:
        self.session = session

    def end_session(self, session: SessionInfo) -> None:
        ends_team = session.team is not None and session.ends_team
        if self.profile is None:
            forget_all = {"all": True, "confirm": True}
            if session.agent != "main":  # a sub-agent's or teammate's session ends with it (end_agent)
                self._own_server(session).call_checked("amnesia_forget", {**forget_all, "scope": "session"})
            if ends_team:  # the team's shared memories end with the session that closes it (end_team)
                self._own_server(session).call_checked("amnesia_forget", {**forget_all, "scope": "team"})
            for caller in [caller for caller in self.connections if caller[0] == session.session_id]:
                self.connections.pop(caller).close()
        for item_id, entry in list(self.entries.items()):
            ended = entry.scope == "session" and entry.owner_id == session.session_id
            if ended or (ends_team and entry.scope == "team" and entry.owner_id == session.team):
                self._drop(item_id, "agent-disposed", call_server=self.profile is not None)
        self.session = None

    def end_task(self) -> None:
        self.close()

    def close(self) -> None:
        connections, self.connections = self.connections, {}
        for connection in connections.values():
            connection.close()

    # --- memory ----------------------------------------------------------------------------------------

    def remember(self, spec: RememberSpec) -> None:
        session = self._session()
        scope, owner = scope_for(spec, session)
        stored: dict[str, Any] = {}  # what the server says it stored (amnesia: its id, ttl, expiry)
        if self.profile is None:
            stored = self._remember_amnesia(spec, session, scope) or {}
            if not stored:
                return
            item_id = str(stored["id"])
        else:
            item_id = f"mcp-{self._next_id:04d}"
            self._next_id += 1
            values = {"id": item_id, "content": spec.content, "kind": spec.kind}
            answer, failed = self._connection(None, sub=False).call_tool(
                self.profile.write.tool, self.profile.write.render(values)
            )
            if failed:
                self.memlog.refused(reason=f"server: {str(answer)[:200]}", rule="server-error")
                return
        self.entries[item_id] = _Entry(
            spec.content, spec.kind, scope, owner, spec.source, spec.tags, spec.key, self.now()
        )
        self.memlog.write_spec(
            item_id,
            spec,
            scope=scope,
            owner_id=owner,
            ttl=stored.get("ttl"),
            expires_at=stored.get("expires_at"),
        )
        for reason in ("superseded", "evicted"):  # what the engine dropped to make room for this write
            for dropped in stored.get(reason, ()):
                if dropped in self.entries:
                    self._drop(dropped, reason, call_server=False)

    def _remember_amnesia(
        self, spec: RememberSpec, session: SessionInfo, scope: str
    ) -> dict[str, Any] | None:
        """`amnesia_remember`'s answer (id, ttl, expires_at, superseded, evicted); None: refused, logged."""
        # The task's source (trust) as in process: the arm writes what the task says the user, a tool or a
        # web page wrote, so it starts the server as a host that may write the user's words (`--max-source`).
        arguments: dict[str, Any] = {
            "content": spec.content,
            "kind": spec.kind,
            "scope": scope,
            "source": spec.source,
        }
        if spec.tags:
            arguments["tags"] = list(spec.tags)
        if spec.pin:
            arguments["pin"] = True
        elif spec.ttl is not None:  # a `never` ttl is the engine's longest (the in-process arm's rule)
            arguments["ttl"] = float(MAX_DURATION_SECONDS) if spec.ttl == NEVER else spec.ttl
        # A workspace write goes through the main agent's server, also when a sub-agent makes it (the task
        # says so: the in-process engine takes it; a sub-agent's own server would refuse it).
        server = self._connection(None, sub=False) if scope == "workspace" else self._own_server(session)
        answer, failed = server.call_tool("amnesia_remember", arguments)
        if failed or not isinstance(answer, dict) or "id" not in answer:
            reason = answer.get("error", answer) if isinstance(answer, dict) else answer
            self.memlog.refused(reason=str(reason)[:200], rule="server-refused")
            return None
        return answer

    def forget(self, spec: ForgetSpec) -> None:
        session = self._session()
        if self.profile is None:
            self._forget_amnesia(spec, session)
            return
        for item_id, entry in list(self.entries.items()):
            if visible_to(entry.scope, entry.owner_id, session) and forget_selects(
                spec, content=entry.content, tags=entry.tags, key=entry.key
            ):
                self._drop(item_id, "manual", call_server=True)

    def _forget_amnesia(self, spec: ForgetSpec, session: SessionInfo) -> None:
        server = self._current_server(session)
        if (
            spec.key is not None
        ):  # the engine never saw the key: the arm forgets the writes made under it by id
            for item_id, entry in list(self.entries.items()):
                if entry.key == spec.key:
                    server.call_checked("amnesia_forget", {"id": item_id})
                    self._drop(item_id, "manual", call_server=False)
        if spec.query is not None:
            server.call_checked("amnesia_forget", {"query": spec.query})
        if spec.tags:
            server.call_checked("amnesia_forget", {"tags": list(spec.tags)})

    def memory_context(self, user_text: str, history: list[Message]) -> MemoryContext:
        session = self._session()
        budget = self.context().budget_tokens
        if self.profile is None:
            block = self._current_server(session).read_resource(
                f"amnesia://memory/block?budget_tokens={budget}"
            )
            lines = [(_BLOCK_ID.match(line), line) for line in block.splitlines()]
            items = [{"id": found.group(1), "tokens": count_tokens(line)} for found, line in lines if found]
            return MemoryContext(
                block=block, tokens=count_tokens(block), items=items, details={"server": AMNESIA}
            )
        recall = self.profile.recall
        answer = self._connection(None, sub=False).call_checked(
            recall.tool, recall.render({"query": user_text})
        )
        try:
            recalled = recall.memories(answer)
        except ValueError as error:
            self.close()
            raise ArmFailed(f"{self.profile.name}: {error}") from None
        known = [
            (item_id, content)
            for item_id, content in recalled
            if item_id in self.entries
            and visible_to(self.entries[item_id].scope, self.entries[item_id].owner_id, session)
        ]
        known.sort(key=lambda pair: (-self.entries[pair[0]].written_at, pair[0]))  # newest first
        now = self.now()

        def line(pair: tuple[str, str]) -> str:
            entry = self.entries[pair[0]]
            return memory_line(
                pair[0], entry.kind, now - entry.written_at, pair[1], untrusted=entry.source == "auto"
            )

        server = self.profile.name

        def render(kept: list[tuple[str, str]]) -> str:
            return "\n".join([f"MEMORY ({len(kept)} from {server})", *map(line, kept)])

        block, kept = fit_block(render, known, budget)
        items = [{"id": pair[0], "tokens": count_tokens(line(pair))} for pair in kept]
        details = {"server": server, "recalled": len(recalled)}
        return MemoryContext(block=block, tokens=count_tokens(block), items=items, details=details)

    # --- helpers ---------------------------------------------------------------------------------------

    def _drop(self, item_id: str, reason: str, *, call_server: bool) -> None:
        entry = self.entries.pop(item_id)
        if call_server and self.profile is not None:
            self._connection(None, sub=False).call_checked(
                self.profile.forget.tool, self.profile.forget.render({"id": item_id})
            )
        self.memlog.forget(item_id, entry.content, reason=reason)

    def _current_server(self, session: SessionInfo) -> McpConnection:
        """The amnesia server of the current caller: a sub-agent's or teammate's own; for the main agent, its
        session's when the session wrote a session memory, else the plain main agent's (which sees the same
        then)."""
        if session.agent != "main":
            return self._own_server(session)
        return self.connections.get((session.session_id, False, None)) or self._connection(None, sub=False)

    def _own_server(self, session: SessionInfo) -> McpConnection:
        """The server whose caller is this session's agent: the main agent in the session, the sub-agent, or
        the teammate in its team."""
        team = session.team if session.agent == "team" else None
        return self._connection(session.session_id, sub=session.agent == "sub", team=team)

    def _connection(self, owner: str | None, *, sub: bool, team: str | None = None) -> McpConnection:
        found = self.connections.get((owner, sub, team))
        if found is not None:
            return found
        ctx = self.context()
        if self.profile is None:
            label = AMNESIA + (f" {owner}" if owner else "") + (" sub-agent" if sub else "")
            label += f" team {team}" if team else ""
            command = shlex.split(self.config.command) or [sys.executable, "-m", "amnesia.cli"]
            command += [
                "--db",
                str(ctx.workdir / "amnesia.db"),
                "--clock-file",
                str(self._clock_path()),
            ]
            if self.config.amnesia_config:
                command += ["--config", str(Path(self.config.amnesia_config).resolve())]
            command += ["mcp", "--max-source", "user"]
            command += ["--owner", owner] if owner else []
            command += ["--sub-agent"] if sub else []
            command += ["--team", team] if team else []
            env = {
                k: v for k, v in os.environ.items() if not k.startswith("AMNESIA_")
            }  # the defaults, as in process
            required: tuple[str, ...] = ("amnesia_remember", "amnesia_forget")
        else:
            label = self.profile.name
            command = shlex.split(self.config.command or self.profile.command)
            if not command:
                raise ArmFailed(f"{label}: no server command (set mcp-memory.command)")
            found = shutil.which(command[0])
            if found is None:
                hint = f"; install it: {SERVER_MEMORY_INSTALL}" if label == "server-memory" else ""
                raise ArmFailed(
                    f"{label}: server did not start: no program {command[0]!r} (set mcp-memory.command{hint})"
                )
            command[0] = found
            workdir = str(ctx.workdir.resolve())
            env = server_env(
                {name: value.replace("{workdir}", workdir) for name, value in self.profile.env.items()}
            )
            required = self.profile.tools()
        connection = McpConnection(
            label, command, env=env, cwd=ctx.workdir, timeout=self.config.timeout, on_call=self._log_call
        )
        self.connections[(owner, sub, team)] = connection.open()
        connection.require(*required)
        return connection

    def _log_call(self, call: WireCall) -> None:
        self.context().log(ArmCall(**asdict(call)))

    def _clock_path(self) -> Path:
        return self.context().workdir / "clock"

    def _write_clock(self) -> None:
        """The simulated time into the clock file the amnesia server reads, atomically (temp file, rename)."""
        path = self._clock_path()
        temporary = path.with_name("clock.tmp")
        temporary.write_text(repr(self.now()), encoding="utf-8")
        temporary.replace(path)

    def _session(self) -> SessionInfo:
        if self.session is None:
            raise RuntimeError("mcp-memory: called outside a session")
        return self.session
