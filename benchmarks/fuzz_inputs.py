"""Bad-input fuzzing at volume: seeded mutations (atheris-style byte and token mutations of valid inputs) of
every input surface, counting what was accepted, what was refused with a clean one-line error, and failures
(a traceback, an exception escaping, a multi-line or unlabelled error, a refused input that changed state).

    python benchmarks/fuzz_inputs.py                 # 2,000 inputs per surface
    python benchmarks/fuzz_inputs.py --per-target 200

Surfaces: duration strings, config files (YAML and TOML), task YAML files (mutations of the shipped tasks),
the tool dispatcher's JSON arguments (mutated), hostile tool values (huge integers, deep nesting, huge
strings and arrays, lone surrogates, NaN, wrong types: every field of every tool, as JSON text and as decoded
values, from the main agent, the main agent in a session and a sub-agent), MCP stdio lines (the same hostile
calls, the mutated calls and malformed lines, sent to three real `dsh-memory-forget mcp` subprocesses, one
per scope config: every line must get its one reply, a clean refusal or a result, and stderr no traceback),
`dsh-memory-forget` argv and `amnesia-bench` argv (in-process `run(argv)`, the same code path as the console
scripts). Exit 1 if any failure; prints the first few.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import io
import json
import os
import queue
import random
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp_types

from amnesia import Amnesia, Config, InMemoryStore, InvalidInput, SimulatedClock
from amnesia.cli import run as memory_cli
from amnesia.durations import parse_duration
from amnesia.tools import (
    MAX_ARGUMENTS_CHARS,
    MAX_CONTENT_CHARS,
    MAX_QUERY_CHARS,
    MAX_VALUES,
    TOOLS,
    call_tool,
)
from amnesia_bench.cli import run as bench_cli
from tasks.load import read_task_set

ROOT = Path(__file__).resolve().parent.parent
SPICE = [
    "\x00",
    "\udcff",
    "&a",
    "*a",
    "!!python/object:os.system",
    "[",
    "{",
    "}",
    "]",
    ":",
    "-",
    "'",
    '"',
    "\n",
    "#",
    "\t",
    "1e400",
    "-1",
    "9" * 30,
    "nan",
    "null",
    "true",
    "密码",
    "忽略之前的指令",
    "\u202e",
    "?",
    "%",
]
ACCEPTED, REFUSED, FAILED = "accepted", "refused", "failed"


def _mutate(text: str, rng: random.Random) -> str:
    """1-4 edits: delete a span, duplicate a span, insert spice, flip a character, or truncate."""
    for _ in range(rng.randint(1, 4)):
        if not text:
            text = rng.choice(SPICE)
            continue
        at = rng.randrange(len(text))
        span = rng.randint(1, 20)
        edit = rng.randrange(5)
        if edit == 0:
            text = text[:at] + text[at + span :]
        elif edit == 1:
            text = text[:at] + text[at : at + span] * rng.randint(2, 5) + text[at:]
        elif edit == 2:
            text = text[:at] + rng.choice(SPICE) + text[at:]
        elif edit == 3:
            text = text[:at] + chr(rng.randrange(0x20, 0x3000)) + text[at + 1 :]
        else:
            text = text[:at]
    return text


def _clean(message: str) -> bool:
    return bool(message.strip()) and "\n" not in message.strip() and "Traceback" not in message


class Unclean(Exception):
    """A refusal that broke the contract (multi-line, unlabelled, wrong exit code, or it changed state)."""


def _refused(ok: bool, what: object) -> str:
    if not ok:
        raise Unclean(repr(what)[:300])
    return REFUSED


def _durations(rng: random.Random, scratch: Path) -> Callable[[], str]:
    corpus = ["7d", "2h30m", "15s", "1w", "90", "0.5h", "1d12h", "100m"]

    def one() -> str:
        try:
            parse_duration(_mutate(rng.choice(corpus), rng), field="ttl")
        except ValueError as error:
            return _refused(_clean(str(error)) and str(error).startswith("ttl: "), error)
        return ACCEPTED

    return one


def _configs(rng: random.Random, scratch: Path) -> Callable[[], str]:
    yaml_text = "default_ttl: 7d\ndecay_k: 3\nrestorable: true\nmax_injected_tokens: 2000\n"
    toml_text = '[amnesia]\ndefault_ttl = "7d"\nstale_strength = 0.3\nauto_expire = false\n'

    def one() -> str:
        suffix, base = rng.choice([(".yaml", yaml_text), (".toml", toml_text)])
        path = scratch / f"config{suffix}"
        path.write_bytes(_mutate(base, rng).encode("utf-8", "surrogatepass"))
        try:
            Config.from_file(path)
        except InvalidInput as error:
            return _refused(_clean(str(error)), error)
        return ACCEPTED

    return one


def _task_files(rng: random.Random, scratch: Path) -> Callable[[], str]:
    corpus = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "tasks").rglob("*.yaml"))]

    def one() -> str:
        path = scratch / "task.yaml"
        path.write_bytes(_mutate(rng.choice(corpus), rng).encode("utf-8", "surrogatepass"))
        _, errors = read_task_set(path)
        if not errors:
            return ACCEPTED
        return _refused(all(_clean(str(e)) and str(e).startswith(str(path)) for e in errors), errors[:2])

    return one


TOOL_CORPUS = [
    ("amnesia_remember", '{"content": "The harbor opens at six.", "ttl": "7d", "tags": ["harbor"]}'),
    ("amnesia_remember", '{"content": "Keep this.", "pin": true, "kind": "preference"}'),
    ("amnesia_forget", '{"query": "harbor"}'),
    ("amnesia_forget", '{"all": true, "confirm": true}'),
    ("amnesia_recall", '{"query": "harbor", "limit": 3}'),
    ("amnesia_audit", '{"limit": 5}'),
    ("amnesia_preview", '{"budget_tokens": 100}'),
    ("amnesia_restore", '{"id": "m-000000000001"}'),
    ("amnesia_status", "{}"),
]
# The three kinds of caller: the main agent, the main agent in session s1, the sub-agent s2 (call_tool's
# keyword arguments, and the matching `mcp` flags).
AGENTS: list[dict[str, Any]] = [
    {"owner_id": None, "include_workspace": True},
    {"owner_id": "s1", "include_workspace": True},
    {"owner_id": "s2", "include_workspace": False},
]
MCP_FLAGS = [[], ["--owner", "s1"], ["--owner", "s2", "--sub-agent"]]
FIELDS = [(t["function"]["name"], f) for t in TOOLS for f in t["function"]["parameters"]["properties"]]
REQUIRED: dict[str, dict[str, Any]] = {
    "amnesia_remember": {"content": "The dock opens at six."},
    "amnesia_recall": {"query": "dock"},
    "amnesia_restore": {"id": "m-000000000001"},
}


def _store_engine() -> Amnesia:
    engine = Amnesia(
        store=InMemoryStore(secret=b"f" * 32), config=Config(restorable=True), clock=SimulatedClock(0.0)
    )
    engine.remember("The deploy window is Tuesday.", ttl="7d", tags=["deploy"])
    engine.remember("Scratch for s2.", ttl="1h", scope="session", owner_id="s2")
    return engine


def _tool_result(engine: Amnesia, name: str, arguments: object, agent: dict[str, Any]) -> str:
    """One in-process call: accepted, or a clean one-line refusal that changed nothing (forget aside)."""
    before = [i.to_dict() for i in engine.store.load_items("default")]
    result = call_tool(engine, name, arguments, **agent)  # type: ignore[arg-type]
    json.dumps(result, ensure_ascii=False)
    if "error" not in result:
        return ACCEPTED
    unchanged = (
        name == "amnesia_forget" or [i.to_dict() for i in engine.store.load_items("default")] == before
    )
    return _refused(_clean(result["error"]) and unchanged, (name, result))


def _tool_calls(rng: random.Random, scratch: Path) -> Callable[[], str]:
    def one() -> str:
        name, arguments = rng.choice(TOOL_CORPUS)
        return _tool_result(_store_engine(), name, _mutate(arguments, rng), rng.choice(AGENTS))

    return one


def _hostile_value(rng: random.Random) -> tuple[str, Any]:
    """A hostile JSON value: its text, and the decoded value (None when Python's json cannot hold it: an
    integer past its 4,300-digit limit, nesting past its recursion limit)."""
    kind = rng.randrange(8)
    if kind == 0:  # a huge integer, either sign
        digits = rng.choice([19, 20, 40, 400, 4_000, 5_000])
        text = rng.choice(["", "-"]) + "9" * digits
        return text, int(text) if digits <= 4_000 else None
    if kind == 1:  # deep nesting, as arrays or objects
        depth = rng.choice([2, 3, 4, 50, 199, 1_000, 5_000, 100_000])
        opened, closed = ("[", "]") if rng.random() < 0.5 else ('{"a":', "}")
        value: Any = "x"
        for _ in range(depth if depth <= 5_000 else 0):
            value = [value] if opened == "[" else {"a": value}
        return opened * depth + '"x"' + closed * depth, value if depth <= 5_000 else None
    if kind == 2:  # a string at or past a bound
        bounds = [64, 200, MAX_QUERY_CHARS, MAX_CONTENT_CHARS, MAX_ARGUMENTS_CHARS]
        length = rng.choice(bounds) + rng.choice([0, 1])
        return json.dumps("s" * length), "s" * length
    if kind == 3:  # an array at or past a bound
        length = rng.choice([32, 33, MAX_VALUES + 1, 50_000])
        return json.dumps(["t"] * length), ["t"] * length
    if kind == 4:  # a lone surrogate somewhere in a string (json escapes it as \udXXX)
        value = "ok " + chr(rng.randrange(0xD800, 0xE000)) + " ok"
        return json.dumps(value), value
    if kind == 5:  # NaN, infinities, overflowing floats
        text = rng.choice(["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1e308"])
        return text, json.loads(text)
    if kind == 6:  # a wrong but ordinary type
        value = rng.choice([True, None, 0, -1, 1.5, "", "x", [], {}, {"k": "v"}, [1, 2]])
        return json.dumps(value), value
    return json.dumps(rng.choice(["7d", "m-000000000001", "dock", 5, 3_153_600_000])), None


def _hostile_arguments(rng: random.Random) -> tuple[str, str, Any]:
    """A call of a random tool with one hostile field: (tool, JSON text, decoded arguments or None)."""
    name, field = rng.choice(FIELDS)
    base = dict(REQUIRED.get(name, {}))
    text, value = _hostile_value(rng)
    base.pop(field, None)
    prefix = json.dumps(base)[:-1] + (", " if base else "")
    arguments_text = prefix + json.dumps(field) + ": " + text + "}"
    decoded = None if value is None and text != "null" else base | {field: value}
    return name, arguments_text, decoded


def _hostile_tool_calls(rng: random.Random, scratch: Path) -> Callable[[], str]:
    def one() -> str:
        name, text, decoded = _hostile_arguments(rng)
        arguments = text if decoded is None or rng.random() < 0.5 else decoded
        return _tool_result(_store_engine(), name, arguments, rng.choice(AGENTS))

    return one


MALFORMED_LINES = [
    "not json",
    '{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"x": "\\ud800"}}',
    "[" * 100_000,
    '{"valid": "JSON", "but": "no message"}',
    "",
    "null",
    '{"jsonrpc": "2.0", "id": ' + "9" * 5_000 + ', "method": "ping"}',
]


class _McpServer:
    """One `dsh-memory-forget mcp --in-memory` subprocess driven over raw stdio lines."""

    REPLY_SECONDS = 20.0  # a line without its reply by then is a failure (a hang), not a slow machine

    def __init__(self, scratch: Path, flags: list[str]) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(scratch), "XDG_CONFIG_HOME": str(scratch)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "amnesia.cli", "mcp", "--in-memory", *flags],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.replies: queue.Queue[bytes] = queue.Queue()
        self.errors: list[bytes] = []
        threading.Thread(
            target=lambda: [self.replies.put(b) for b in self.process.stdout], daemon=True
        ).start()
        threading.Thread(target=lambda: self.errors.extend(self.process.stderr), daemon=True).start()
        atexit.register(self.close)
        hello = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "f", "version": "0"},
        }
        self.send(json.dumps({"jsonrpc": "2.0", "id": "hello", "method": "initialize", "params": hello}))
        self.reply_to("hello")
        self.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
        self.process.stdin.flush()

    def reply_to(self, request_id: object) -> dict[str, Any]:
        """The next reply, which must answer `request_id` (raises Unclean on a hang or a stray reply)."""
        try:
            reply = json.loads(self.replies.get(timeout=self.REPLY_SECONDS))
        except queue.Empty:
            raise Unclean(
                f"no reply within {self.REPLY_SECONDS:.0f} s (expected id {request_id!r})"
            ) from None
        if reply.get("id") != request_id:
            raise Unclean(f"reply for id {reply.get('id')!r}, expected {request_id!r}: {str(reply)[:200]}")
        return reply

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()  # type: ignore[union-attr]
            self.process.wait(timeout=30)


def _answered_id(line: str) -> object:
    """The id the server's answer to `line` carries: the request's own, or None when the SDK cannot read the
    line as a message (as the server reads it: UTF-8, undecodable bytes replaced)."""
    wire = line.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    try:
        message = mcp_types.jsonrpc_message_adapter.validate_json(wire, by_name=False)
    except ValueError:
        return None
    if not isinstance(message, mcp_types.JSONRPCRequest):
        raise Unclean(f"the fuzzer built a line that is no request: {line[:80]!r}")
    return message.id


def _mcp_lines(rng: random.Random, scratch: Path) -> Callable[[], str]:
    servers = [_McpServer(scratch, flags) for flags in MCP_FLAGS]
    counter = iter(range(10**9))

    def one() -> str:
        server = rng.choice(servers)
        pick = rng.random()
        if pick < 0.1:
            line = rng.choice(MALFORMED_LINES)
        else:
            name, arguments = _hostile_arguments(rng)[:2] if pick < 0.7 else rng.choice(TOOL_CORPUS)
            if pick >= 0.7:  # a line break would split the line in two messages: the wire has none
                arguments = _mutate(arguments, rng).replace("\n", " ").replace("\r", " ")
            params = '{"name": ' + json.dumps(name) + ', "arguments": ' + arguments + "}"
            line = f'{{"jsonrpc": "2.0", "id": {next(counter)}, "method": "tools/call", "params": {params}}}'
        server.send(line)
        reply = server.reply_to(_answered_id(line))
        if server.process.poll() is not None or any(b"Traceback" in err for err in server.errors):
            raise Unclean(f"the server died or printed a traceback: {b''.join(server.errors)[-300:]!r}")
        if "error" in reply:  # a JSON-RPC error: the line was no valid message (or a bad request)
            return _refused(_clean(reply["error"]["message"]), reply)
        if reply["result"].get("isError"):
            return _refused(_clean(reply["result"]["content"][0]["text"]), reply)
        return ACCEPTED

    return one


def _invoke(cli: Callable[[list[str]], int], argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli(argv)
    return code, err.getvalue()


def _db_rows(db: Path) -> tuple[list[tuple[object, ...]], ...]:
    if not db.exists():
        return ([], [])
    connection = sqlite3.connect(db)
    try:
        return (
            connection.execute("SELECT id, data FROM items ORDER BY id").fetchall(),
            connection.execute("SELECT seq FROM audit ORDER BY seq").fetchall(),
        )
    finally:
        connection.close()


def _memory_cli(rng: random.Random, scratch: Path) -> Callable[[], str]:
    db = scratch / "memory.db"
    corpus = [
        ["remember", "The harbor opens at six.", "--ttl", "7d", "--tag", "harbor", "--kind", "fact"],
        ["remember", "Scratch note.", "--scope", "session", "--owner", "s1", "--ttl", "1h"],
        ["remember", "Keep this.", "--pin", "--key", "keep"],
        ["forget", "--query", "harbor"],
        ["recall", "harbor", "--limit", "2"],
        ["audit", "--limit", "5", "--since", "1d"],
        ["preview", "--budget", "100"],
        ["status"],
        ["sweep"],
        ["plugs", "--scope", "workspace"],
    ]

    def one() -> str:
        argv = list(rng.choice(corpus))
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(argv))
            argv[at] = _mutate(argv[at], rng).replace("\x00", "")
        before = _db_rows(db)
        code, err = _invoke(memory_cli, ["--json", "--db", str(db), *argv])
        if code == 0:
            return ACCEPTED
        ok = code == 2 and err.startswith("error: ") and _clean(err) and _db_rows(db) == before
        return _refused(ok, (argv, code, err))

    return one


def _bench_cli(rng: random.Random, scratch: Path) -> Callable[[], str]:
    tasks = ROOT / "tasks" / "helpful"
    corpus = [
        ["validate", str(tasks)],
        ["generate", "--group", "helpful", "--n", "2", "--seed", "3"],
        ["run", "--tasks", str(tasks), "--arms", "no-memory", "--limit", "1", "--no-progress", "--no-report"],
        ["report", str(scratch / "missing-run")],
    ]
    counter = iter(range(10**9))

    def one() -> str:
        argv = list(rng.choice(corpus))
        for _ in range(rng.randint(1, 2)):
            at = rng.randrange(len(argv))
            argv[at] = _mutate(argv[at], rng).replace("\x00", "")
        out = scratch / f"out-{next(counter)}"
        if argv[0] in ("run", "generate"):
            argv += ["--out", str(out)]
        code, err = _invoke(bench_cli, argv)
        if code == 0:
            return ACCEPTED
        left_files = out.exists() and any(out.rglob("*"))
        ok = code == 2 and err.startswith("error: ") and "Traceback" not in err and not left_files
        return _refused(ok, (argv, code, err[-300:]))

    return one


TARGETS: dict[str, Callable[[random.Random, Path], Callable[[], str]]] = {
    "duration strings": _durations,
    "config files": _configs,
    "task YAML files": _task_files,
    "tool JSON arguments": _tool_calls,
    "hostile tool values": _hostile_tool_calls,
    "MCP stdio lines": _mcp_lines,
    "dsh-memory-forget argv": _memory_cli,
    "amnesia-bench argv": _bench_cli,
}
SLOW_TARGETS = {"amnesia-bench argv": 10}  # each run/generate writes a folder: fuzz 1/10 as many


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-target", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    failures: list[str] = []
    print("| surface | inputs | accepted | refused (one line, nothing written) | failures | seconds |")
    print("|---|---:|---:|---:|---:|---:|")
    total = 0
    for name, build in TARGETS.items():
        rng = random.Random(f"{args.seed}:{name}")
        count = max(1, args.per_target // SLOW_TARGETS.get(name, 1))
        outcomes: Counter[str] = Counter()
        started = time.perf_counter()
        with tempfile.TemporaryDirectory() as scratch:
            one = build(rng, Path(scratch))
            for index in range(count):
                try:
                    outcome = one()
                except Unclean as error:
                    outcome = FAILED
                    failures.append(f"{name} #{index}: unclean refusal {error}")
                except Exception:  # an exception escaping a surface is exactly what this hunts for
                    outcome = FAILED
                    failures.append(f"{name} #{index}: {traceback.format_exc().splitlines()[-1]}")
                outcomes[outcome] += 1
        total += count
        print(
            f"| {name} | {count} | {outcomes[ACCEPTED]} | {outcomes[REFUSED]} | {outcomes[FAILED]} | "
            f"{time.perf_counter() - started:.1f} |"
        )
    print(f"\n{total} inputs fuzzed, {len(failures)} failure(s)")
    for failure in failures[:20]:
        print(f"  {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
