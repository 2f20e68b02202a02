"""`dsh-memory-forget mcp`, driven by the MCP SDK's own client: over stdio (a real subprocess, as an MCP host
starts it) and over streamable HTTP on loopback. Time is the server's `--clock-file`; nothing here waits a
fixed time: every wait polls with a bounded deadline."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from amnesia import Amnesia, Config, InMemoryStore, SQLiteStore
from amnesia.caller import Caller
from amnesia.cli import run
from amnesia.mcp_server import MemoryServer
from amnesia.tools import TOOL_NAMES, TOOLS, call_tool, to_json

ROOT = Path(__file__).resolve().parents[2]
START = 1_000_000.0
DEADLINE = 60.0  # seconds any one scenario may take; a hang fails the test instead of blocking the suite


class ClockFile:
    """The server's clock: a file the test rewrites atomically."""

    def __init__(self, path: Path, start: float) -> None:
        self.path = path
        self.set(start)

    def set(self, when: float) -> None:
        scratch = self.path.with_suffix(".tmp")
        scratch.write_text(repr(when), encoding="utf-8")
        os.replace(scratch, self.path)


def server_env(tmp_path: Path, **amnesia: str) -> dict[str, str]:
    # the server keeps its store's audit key where this test process looks for it ($XDG_CONFIG_HOME)
    env = {"PYTHONPATH": str(ROOT), "HOME": str(tmp_path), "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"]}
    return env | {f"AMNESIA_{name.upper()}": value for name, value in amnesia.items()}


@asynccontextmanager
async def stdio_session(args: list[str], env: dict[str, str]) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "amnesia.cli", *args], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def run_scenario(scenario: Callable[[], Any]) -> None:
    async def bounded() -> None:
        with anyio.fail_after(DEADLINE):
            await scenario()

    anyio.run(bounded)


async def call(session: ClientSession, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await session.call_tool(name, arguments)
    assert not result.is_error, result.content
    payload = json.loads(result.content[0].text)
    assert payload == result.structured_content
    return payload


async def read_text(session: ClientSession, uri: str) -> str:
    result = await session.read_resource(uri)
    (contents,) = result.contents
    return contents.text


async def poll_until(check: Callable[[], bool], what: str) -> None:
    with anyio.fail_after(DEADLINE / 2):
        while not check():
            await anyio.sleep(0.02)
    assert check(), what


def test_tools_are_the_dispatchers_tools_with_the_same_schemas(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with stdio_session(["mcp", "--in-memory"], server_env(tmp_path)) as session:
            listed = (await session.list_tools()).tools
            assert [tool.name for tool in listed] == list(TOOL_NAMES)
            for tool, spec in zip(listed, TOOLS, strict=True):
                assert tool.input_schema == spec["function"]["parameters"]
                assert tool.description == spec["function"]["description"]
            prompts = (await session.list_prompts()).prompts
            assert [prompt.name for prompt in prompts] == ["amnesia_memory"]
            resources = {resource.uri for resource in (await session.list_resources()).resources}
            assert resources == {"amnesia://memory/block", "amnesia://status", "amnesia://audit"}
            templates = (await session.list_resource_templates()).resource_templates
            assert {t.uri_template for t in templates} == {
                "amnesia://memory/block{?budget_tokens,query}",
                "amnesia://audit{?limit}",
            }

    run_scenario(scenario)


def test_remember_recall_then_the_sweep_timer_forgets_on_the_injected_clock(tmp_path: Path) -> None:
    """A memory lapses when the server's clock passes its ttl, and the timer sweeps it away on its own: its
    audit line appears in the store while the client sends nothing."""
    db = tmp_path / "memory.db"
    clock = ClockFile(tmp_path / "clock", START)
    env = server_env(tmp_path, sweep_interval="0.05")
    args = ["--db", str(db), "--clock-file", str(clock.path), "mcp"]

    async def scenario() -> None:
        async with stdio_session(args, env) as session:
            staging = await call(
                session, "amnesia_remember", {"content": "The staging database is db-stage-2.", "ttl": "1h"}
            )
            french = await call(
                session,
                "amnesia_remember",
                {"content": "Answer in French.", "kind": "preference", "pin": True},
            )
            assert staging["expires_at"] > START and french["pinned"] is True
            found = await call(session, "amnesia_recall", {"query": "staging database"})
            assert [item["id"] for item in found["items"]] == [staging["id"]]

            block = await read_text(session, "amnesia://memory/block")
            assert block.startswith("AMNESIA MEMORY (2 items")
            assert "db-stage-2" in block and "Answer in French." in block
            prompt = await session.get_prompt("amnesia_memory", {"budget_tokens": "500"})
            assert [message.content.text for message in prompt.messages] == [block.replace("/2000", "/500")]

            store = SQLiteStore(db)
            try:
                assert store.audit_entries("default") == []
                clock.set(START + 2 * 3600)  # two idle hours: the 1h memory is past its ttl
                await poll_until(
                    lambda: any(entry.item_id == staging["id"] for entry in store.audit_entries("default")),
                    "the sweep timer never forgot the lapsed memory",
                )
            finally:
                store.close()

            assert (await call(session, "amnesia_recall", {"query": "staging database"}))["count"] == 0
            (entry,) = (await call(session, "amnesia_audit", {}))["entries"]
            assert entry["item_id"] == staging["id"] and entry["reason"] in {"stale", "expired"}
            assert "db-stage-2" not in json.dumps(entry)  # a keyed hash, never the content

            forgot = await call(session, "amnesia_forget", {"id": french["id"]})
            assert forgot["ids"] == [french["id"]]
            status = json.loads(await read_text(session, "amnesia://status"))
            assert status["counts"]["active"] == 0 and status["counts"]["forgotten"] == 2
            newest = json.loads(await read_text(session, "amnesia://audit?limit=1"))["entries"]
            assert [(e["item_id"], e["reason"]) for e in newest] == [(french["id"], "manual")]
            assert (await session.get_prompt("amnesia_memory")).messages == []  # nothing live: no message

    run_scenario(scenario)


BAD_CALLS = [
    ("amnesia_remember", {}),
    ("amnesia_remember", {"content": "The build is green.", "ttl": True}),
    ("amnesia_remember", {"content": "The build is green.", "colour": "blue"}),
    ("amnesia_remember", {"content": "The build is green.", "pin": True, "ttl": "1d"}),
    ("amnesia_remember", {"content": "my key is sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"}),
    ("amnesia_recall", {"query": "build", "limit": 99}),
    ("amnesia_forget", {"all": True}),
    ("amnesia_remember", {"content": "The build is green.", "ttl": "1d", "ttlMs": 5}),
    ("amnesia_teleport", {}),
]


def test_the_block_and_the_preview_take_the_query_in_the_relevance_order(tmp_path: Path) -> None:
    env = server_env(tmp_path, injection_order="relevance", renew_on_inject="none")

    async def scenario() -> None:
        async with stdio_session(["mcp", "--in-memory"], env) as session:
            ids = [
                (await call(session, "amnesia_remember", {"content": text, "ttl": "30d"}))["id"]
                for text in (
                    "The verification drink is oolong.",
                    "The deploy rota changes every Monday.",
                    "Lunch with the design team is on Thursday.",
                )
            ]
            # one line fits in 60 tokens: the newest memory without a query, the drink with one
            assert f"[{ids[2]}]" in await read_text(session, "amnesia://memory/block?budget_tokens=60")
            block = await read_text(session, "amnesia://memory/block?budget_tokens=60&query=which%20drink%3F")
            assert f"[{ids[0]}]" in block and f"[{ids[2]}]" not in block
            prompt = await session.get_prompt("amnesia_memory", {"budget_tokens": "60", "query": "drink"})
            assert f"[{ids[0]}]" in prompt.messages[0].content.text
            plan = await call(session, "amnesia_preview", {"budget_tokens": 60, "query": "drink"})
            assert plan["order"] == "relevance" and plan["decisions"][0]["id"] == ids[0]
            assert "matched: drink" in plan["decisions"][0]["why"]

    run_scenario(scenario)


def test_bad_arguments_are_tool_errors_with_the_dispatchers_one_line_message(tmp_path: Path) -> None:
    reference = Amnesia(store=InMemoryStore())

    async def scenario() -> None:
        async with stdio_session(["mcp", "--in-memory"], server_env(tmp_path)) as session:
            for name, arguments in BAD_CALLS:
                result = await session.call_tool(name, arguments)
                assert result.is_error, (name, arguments)
                (content,) = result.content
                assert content.text and "\n" not in content.text
                assert content.text == call_tool(reference, name, arguments)["error"]
            with pytest.raises(MCPError, match=r"^budget_tokens: expected a whole number >= 0, got '-1'$"):
                await session.read_resource("amnesia://memory/block?budget_tokens=-1")
            with pytest.raises(MCPError, match="budget_tokens: expected a whole number >= 0, got '²'"):
                await session.read_resource("amnesia://memory/block?budget_tokens=%C2%B2")
            with pytest.raises(MCPError, match="unknown argument 'colour'"):
                await session.read_resource("amnesia://memory/block?colour=blue")
            with pytest.raises(MCPError, match=r"unknown argument 'limit' \(allowed: none\)$"):
                await session.read_resource("amnesia://status?limit=3")
            with pytest.raises(MCPError, match=r"^unknown resource 'amnesia://elsewhere'"):
                await session.read_resource("amnesia://elsewhere")
            with pytest.raises(MCPError, match=r"^unknown prompt 'other'"):
                await session.get_prompt("other")
            # The server is still serving after every refusal.
            assert (await call(session, "amnesia_status", {}))["counts"]["active"] == 0

    run_scenario(scenario)


def test_streamable_http_on_loopback(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "amnesia.cli", "mcp", "--in-memory", "--http", "--port", "0"]
    server = subprocess.Popen(command, env=server_env(tmp_path), stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in server.stderr], daemon=True).start()
    try:
        announced = lines.get(timeout=DEADLINE)
        assert " serving streamable HTTP at http://127.0.0.1:" in announced
        url = announced.rsplit(" ", 1)[1].strip()

        async def scenario() -> None:
            async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                assert [tool.name for tool in (await session.list_tools()).tools] == list(TOOL_NAMES)
                wrote = await call(
                    session, "amnesia_remember", {"content": "Deploys freeze on Friday.", "ttl": "2d"}
                )
                found = await call(session, "amnesia_recall", {"query": "deploys"})
                assert [item["id"] for item in found["items"]] == [wrote["id"]]
                assert "Deploys freeze on Friday." in await read_text(session, "amnesia://memory/block")

        run_scenario(scenario)
    finally:
        server.terminate()
        server.wait(timeout=DEADLINE)


@pytest.fixture
def stateless_server(tmp_path: Path) -> Iterator[str]:
    """`mcp --in-memory --http --stateless` on a free loopback port: its URL."""
    serve = ["mcp", "--in-memory", "--http", "--stateless", "--port", "0"]
    server = subprocess.Popen(
        [sys.executable, "-m", "amnesia.cli", *serve],
        env=server_env(tmp_path),
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in server.stderr], daemon=True).start()
    try:
        announced = lines.get(timeout=DEADLINE)
        assert " serving streamable HTTP at http://127.0.0.1:" in announced
        yield announced.rsplit(" ", 1)[1].strip()
    finally:
        server.terminate()
        server.wait(timeout=DEADLINE)


def test_stateless_http_answers_plain_json_rpc_posts_without_a_session(stateless_server: str) -> None:
    """What benchd's generic MCP client sends: JSON-RPC POSTs with no initialize, no session id and no
    event-stream Accept header, each answered with one JSON body."""
    import httpx

    def post(method: str, params: dict[str, Any], number: int) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
        reply = httpx.post(stateless_server, json=body, headers={"Accept": "*/*"}, timeout=DEADLINE)
        assert reply.status_code == 200 and reply.headers["content-type"].startswith("application/json")
        assert reply.json()["id"] == number
        return reply.json()["result"]

    assert [tool["name"] for tool in post("tools/list", {}, 1)["tools"]] == list(TOOL_NAMES)
    remember = {"name": "amnesia_remember", "arguments": {"content": "Deploys freeze on Friday."}}
    wrote = json.loads(post("tools/call", remember, 2)["content"][0]["text"])
    recall = {"name": "amnesia_recall", "arguments": {"query": "deploys"}}
    found = json.loads(post("tools/call", recall, 3)["content"][0]["text"])
    assert [item["id"] for item in found["items"]] == [wrote["id"]]


def test_benchds_generic_mcp_adapter_completes_its_smoke_benchmark(
    stateless_server: str, tmp_path: Path
) -> None:
    """A peer harness's client, unchanged (benchd-harness, the dev extra): it completes smoke-memory-v0 and
    scores what it scores (the figures are benchmarks/benchd_interop.py's, in docs/mcp.md)."""
    import shutil

    benchd = shutil.which("benchd")
    assert benchd is not None, "benchd-harness is in the dev extra: pip install -e '.[dev]'"
    config = {"endpoint": stateless_server, "ingest_tool": "amnesia_remember", "query_tool": "amnesia_recall"}
    command = [benchd, "run", "-a", "mcp", "-b", "smoke-memory-v0", "-o", str(tmp_path / "out")]
    done = subprocess.run([*command, "--adapter-config", json.dumps(config)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Run complete" in done.stdout and "Verified Score:" in done.stdout
    assert "MCP query error" not in done.stdout and "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["mcp", "--port", "9000"], "--port: only with --http"),
        (["mcp", "--stateless"], "--stateless: only with --http"),
        (["--db", "x.db", "mcp", "--in-memory"], "--in-memory: the store is either in memory or at --db"),
        (["--clock-file", "missing", "mcp", "--in-memory"], "missing: cannot read the clock file"),
        (["mcp", "--http", "--port", "70000"], "--port"),
        (["mcp", "--in-memory", "--max-source", "admin"], "--max-source: expected one of auto, tool, user"),
    ],
)
def test_bad_server_options_are_one_line_errors(
    args: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err


def test_without_the_sdk_the_subcommand_names_the_extra(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # `import mcp` now fails as if it were not installed
    monkeypatch.delitem(sys.modules, "amnesia.mcp_server", raising=False)
    assert run(["mcp", "--in-memory"]) == 2
    assert capsys.readouterr().err == (
        "error: mcp: the MCP SDK is not installed; run: pip install 'dsh-memory-forget[mcp]'\n"
    )


def test_the_core_install_never_imports_the_sdk() -> None:
    probe = (
        "import sys, amnesia, amnesia.cli, amnesia.host, amnesia.tools\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'mcp', 'mcp_types', 'uvicorn'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# ---- scope walls: each scope config reaches only what it could recall --------------------------------------

PLACES = {
    "workspace": ("workspace", None),
    "s1": ("session", "s1"),
    "s2": ("session", "s2"),
    "s3": ("session", "s3"),
    "t1": ("team", "t1"),
    "tx": ("team", "s2"),  # a team named as a session: the session's agent does not see it
}
SCOPE_CONFIGS = {  # kind -> (mcp flags, the places its client could recall)
    "main": ([], {"workspace"}),
    "main-in-session": (["--owner", "s1"], {"workspace", "s1"}),
    "sub-agent": (["--owner", "s2", "--sub-agent"], {"s2"}),
}


def assert_only(text: str, seen: set[str]) -> None:
    leaked = [place for place in PLACES if place not in seen and f"{place}-marker" in text]
    assert not leaked, (leaked, text[:300])


@pytest.mark.parametrize("kind", sorted(SCOPE_CONFIGS))
def test_each_scope_config_audits_restores_and_forgets_only_what_it_could_recall(
    kind: str, tmp_path: Path
) -> None:
    """Four forgotten and four live memories, one of each in the workspace and sessions s1, s2, s3 (restorable
    mode): every tool, resource and the prompt answer the client with its own only, scanned as raw text."""
    db = tmp_path / "memory.db"
    flags, seen = SCOPE_CONFIGS[kind]
    engine = Amnesia(store=SQLiteStore(db), config=Config(restorable=True))
    gone = {
        place: engine.remember(f"gone {place}-marker", ttl="7d", scope=scope, owner_id=owner).id
        for place, (scope, owner) in PLACES.items()
    }
    engine.forget(all=True, confirm=True)
    live = {
        place: engine.remember(
            f"live {place}-marker", ttl="7d", tags=["mark"], scope=scope, owner_id=owner
        ).id
        for place, (scope, owner) in PLACES.items()
    }
    engine.close()

    async def scenario() -> None:
        async with stdio_session(
            ["--db", str(db), "mcp", *flags], server_env(tmp_path, restorable="true")
        ) as s:
            audit = await call(s, "amnesia_audit", {"limit": 50})
            assert {entry["item_id"]: entry["content"] for entry in audit["entries"]} == {
                gone[place]: f"gone {place}-marker" for place in seen
            }
            resource = await read_text(s, "amnesia://audit?limit=50")
            assert (
                json.loads(resource) == audit and json.loads(await read_text(s, "amnesia://audit")) == audit
            )
            status = await read_text(s, "amnesia://status")
            assert {forget["id"] for forget in json.loads(status)["recent_forgets"]} == {
                gone[p] for p in seen
            }
            block = await read_text(s, "amnesia://memory/block")
            prompt = await s.get_prompt("amnesia_memory")
            assert all(f"live {place}-marker" in block for place in seen)
            recalled = await call(s, "amnesia_recall", {"query": "marker", "limit": 20})
            assert {item["id"] for item in recalled["items"]} == {live[place] for place in seen}
            preview = await call(s, "amnesia_preview", {})
            answers = (json.dumps(audit), resource, status, block, prompt.model_dump_json())
            for text in (*answers, json.dumps(recalled), json.dumps(preview)):
                assert_only(text, seen)

            unknown = await s.call_tool("amnesia_restore", {"id": "m-ffffffffffff"})
            restored = set()
            for place, item_id in gone.items():
                result = await s.call_tool("amnesia_restore", {"id": item_id})
                if place in seen:
                    assert (
                        not result.is_error and result.structured_content["content"] == f"gone {place}-marker"
                    )
                    restored.add(result.structured_content["id"])
                else:  # rejected exactly as an unknown id is (seed §6.2: a result, not a tool error)
                    assert not result.is_error and set(result.structured_content) == {"rejected"}
                    assert result.content[0].text == unknown.content[0].text.replace(
                        "m-ffffffffffff", item_id
                    )
            for place, item_id in live.items():
                if place not in seen:
                    assert (await call(s, "amnesia_forget", {"id": item_id}))["count"] == 0
            assert (await call(s, "amnesia_forget", {"query": "nothing matches this"}))["count"] == 0
            by_tags = await call(s, "amnesia_forget", {"tags": ["mark"]})  # every live memory carries it
            assert set(by_tags["ids"]) == {live[place] for place in seen}
            by_query = await call(s, "amnesia_forget", {"query": "gone"})  # the restored ones
            assert set(by_query["ids"]) == restored
            assert (await call(s, "amnesia_forget", {"all": True, "confirm": True}))["count"] == 0

    run_scenario(scenario)
    after = Amnesia(store=SQLiteStore(db))
    try:
        assert {plug.content for plug in after.plugs()} == {
            f"live {p}-marker" for p in PLACES if p not in seen
        }
    finally:
        after.close()


def test_a_sub_agent_config_needs_an_owner(capsys: Any) -> None:
    assert run(["mcp", "--in-memory", "--sub-agent"]) == 2
    assert capsys.readouterr().err == "error: --sub-agent: needs --owner ID (the sub-agent's own session)\n"


def test_a_team_agent_server_reaches_its_session_and_its_team_only() -> None:
    """`--owner s2 --team t1` as the server's caller, in process (the stdio configs above cost a process
    each): tools and the block reach s2 and t1 and nothing else; a write goes to the team by default."""
    engine = Amnesia(store=InMemoryStore(), config=Config(restorable=True))
    for place, (scope, owner) in PLACES.items():
        engine.remember(f"live {place}-marker", ttl="7d", scope=scope, owner_id=owner)
    server = MemoryServer(engine, caller=Caller("s2", include_workspace=False, team_id="t1"))
    assert_only(to_json(server._tool("amnesia_recall", {"query": "live", "limit": 20})), {"s2", "t1"})
    block = server._inject(None, None).block
    assert_only(block, {"s2", "t1"})
    assert "s2-marker" in block and "t1-marker" in block
    written = server._tool("amnesia_remember", {"content": "a team note", "ttl": "1d"})
    assert (written["scope"], written["owner_id"]) == ("team", "t1")


@pytest.mark.parametrize("flags", [["--team", "t1"], ["--owner", "s1", "--team", "t1", "--sub-agent"]])
def test_a_team_agent_config_needs_an_owner_and_no_sub_agent(flags: list[str], capsys: Any) -> None:
    assert run(["mcp", "--in-memory", *flags]) == 2
    assert capsys.readouterr().err == (
        "error: --team: needs --owner ID (the team agent's own session) and no --sub-agent\n"
    )


# ---- the transport: malformed lines are answered, the server goes on ---------------------------------------

MALFORMED = [  # a line the SDK cannot read as a message, and the JSON-RPC error code it is answered with
    (b"not json", -32700),
    (b'{"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"x": "\\ud800"}}', -32700),  # lone surrogate
    (b"[" * 100_000 + b"]" * 100_000, -32700),
    (b'{"valid": "JSON", "but": "no JSON-RPC message"}', -32600),
]


def test_malformed_stdio_lines_are_answered_and_the_server_answers_the_next_request(tmp_path: Path) -> None:
    """Driven over raw stdio: every malformed line gets a JSON-RPC error with id null, a huge ttl and deeply
    nested tags are tool errors (isError), and the server still answers the next valid request."""
    server = subprocess.Popen(
        [sys.executable, "-m", "amnesia.cli", "mcp", "--in-memory"],
        env=server_env(tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    replies: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=lambda: [replies.put(line) for line in server.stdout], daemon=True).start()

    def send(line: bytes) -> None:
        server.stdin.write(line + b"\n")
        server.stdin.flush()

    def request(number: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        send(json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params}).encode())
        return answer()

    def answer() -> dict[str, Any]:
        return json.loads(replies.get(timeout=DEADLINE))

    try:
        hello = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        }
        assert request(1, "initialize", hello)["id"] == 1
        send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        for line, code in MALFORMED:
            send(line)
            reply = answer()
            assert reply["id"] is None and reply["error"]["code"] == code, (line[:60], reply)
            assert "\n" not in reply["error"]["message"] and len(reply["error"]["message"]) < 300
        huge_ttl = {
            "name": "amnesia_remember",
            "arguments": {"content": "Docks open at six.", "ttl": 10**400},
        }
        result = request(2, "tools/call", huge_ttl)["result"]
        assert result["isError"] is True and result["structuredContent"]["field"] == "ttl"
        for number, depth in ((3, 150), (4, 5_000)):
            nested = ("[" * depth + "]" * depth).encode()
            send(
                b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", '
                b'"params": {"name": "amnesia_remember", "arguments": {"content": "x", "tags": %s}}}'
                % (number, nested)
            )
            reply = answer()
            if depth == 150:  # within the SDK parser's depth (~200 levels): the dispatcher's bound refuses it
                assert reply["id"] == 3 and reply["result"]["isError"] is True, reply
                assert reply["result"]["content"][0]["text"] == "arguments: nested deeper than 3 levels"
            else:  # past it the line is no message at all: a parse error, id null (docs/mcp.md)
                assert reply["id"] is None and reply["error"]["code"] == -32700, reply
        assert len(request(5, "tools/list", {})["result"]["tools"]) == len(TOOL_NAMES)
    finally:
        server.stdin.close()
        server.wait(timeout=DEADLINE)
    assert server.returncode == 0
    assert b"Traceback" not in server.stderr.read()
